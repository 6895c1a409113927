// `--emit=manifest`: the module's kernels and programs as JSON (format "tlc-manifest", version 1).
#include "codegen/manifest.h"

#include "ir/printer.h"

#include <nlohmann/json.hpp>

#include <cstdlib>

namespace tlc::codegen {

namespace {

using json = nlohmann::ordered_json;

// A compile-time value as JSON: integers and bools as such, dtypes (and anything else) as text.
json value_json(const std::string& text) {
    if (text == "true") return true;
    if (text == "false") return false;
    char* end = nullptr;
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (!text.empty() && end && *end == '\0') return v;
    return text;
}

// A tensor extent: a number when constant, else the dim's name (or the expression's text).
json extent_json(const ir::ExprPtr& e) {
    if (std::optional<int64_t> c = ir::const_int(e)) return *c;
    if (auto* v = e->as<ir::VarRef>()) return v->var->name;
    return ir::print_expr(e);
}

json param_json(const ir::Param& p) {
    if (p.scalar) return json{{"name", p.scalar->name}, {"role", "scalar"}, {"dtype", dtype_name(p.scalar->dtype)}};
    const ir::Buffer& t = *p.tensor;
    json shape = json::array();
    for (const ir::ExprPtr& e : t.shape) shape.push_back(extent_json(e));
    return json{{"name", t.name}, {"role", "tensor"}, {"dtype", dtype_name(t.dtype)}, {"scope", "global"},
                {"mutable", t.is_mutable}, {"shape", shape}};
}

json variant_json(const ir::Kernel& k) {
    json compile = json::object();
    for (const auto& [name, value] : k.compile_args) compile[name] = value_json(value);
    json values = json::object(); // the candidate values that make this variant
    for (const auto& [name, value] : k.variant.values) values[name] = value_json(value);
    json grid = json::array(), requires_ = json::array();
    for (const ir::ExprPtr& g : k.grid) grid.push_back(ir::print_expr(g));
    for (const auto& [cond, text] : k.requires_) requires_.push_back(text);
    json v{{"index", k.variant.index},
           {"values", values},
           {"when", k.variant.when ? json(k.variant.when_text) : json(nullptr)},
           {"compile_params", compile},
           {"grid", grid},
           {"threads", k.threads},
           {"requires", requires_},
           {"shared_memory_bytes", k.shared_memory.total_bytes},
           {"warp_specialized", k.warp_specialization.enabled}};
    if (!k.cluster.empty()) v["cluster"] = k.cluster;
    if (k.options.min_blocks > 0) v["min_blocks"] = k.options.min_blocks;
    if (k.options.fast_math) v["fast_math"] = true;
    return v;
}

} // namespace

std::string manifest_json(const ir::Module& module, const ManifestOptions& options) {
    json kernels = json::array();
    const std::string& ns = options.cpp_namespace;
    for (const ir::Kernel& k : module.kernels) {
        if (!k.launched_by.empty()) continue; // launched only by its program (internal to the .cu)
        if (k.variant.index > 0) { // a later variant of the kernel just written
            kernels.back()["variants"].push_back(variant_json(k));
            continue;
        }
        json params = json::array(), dims = json::array(), arguments = json::array();
        for (const ir::Param& p : k.params) {
            params.push_back(param_json(p));
            arguments.push_back(p.name());
        }
        for (const ir::VarPtr& d : k.dims) {
            dims.push_back(d->name);
            arguments.push_back(d->name);
        }
        arguments.push_back("stream");
        json tuning = json::object(); // the candidates `tlc tune` searches, by parameter
        for (const auto& [name, values] : k.tuning_candidates) {
            json list = json::array();
            for (const std::string& v : values) list.push_back(value_json(v));
            tuning[name] = list;
        }
        kernels.push_back(json{{"name", k.name},
                               {"launch", {{"cpp", ns + "::" + k.name}, {"c", ns + "_" + k.name}, {"arguments", arguments}}},
                               {"params", params},
                               {"dims", dims},
                               {"tuning", tuning},
                               {"variants", json::array({variant_json(k)})}});
    }
    // A program is listed like a kernel (its launch function takes the same kinds of arguments,
    // then a workspace pointer and its size), with no variants and a "program" entry.
    for (const ir::Program& p : module.programs) {
        json params = json::array(), dims = json::array(), arguments = json::array(), size_arguments = json::array();
        for (const ir::Param& param : p.params) {
            params.push_back(param_json(param));
            arguments.push_back(param.name());
            if (param.scalar) size_arguments.push_back(param.name());
        }
        for (const ir::VarPtr& d : p.dims) {
            dims.push_back(d->name);
            arguments.push_back(d->name);
            size_arguments.push_back(d->name);
        }
        arguments.push_back("stream");
        arguments.push_back("workspace");
        arguments.push_back("workspace_bytes");
        json launches = json::array(), workspaces = json::array();
        for (const ir::ProgramLaunch& l : p.launches)
            launches.push_back(json{{"kernel", l.kernel}, {"source", l.text}, {"guard", l.guard ? json(ir::print_expr(l.guard)) : json(nullptr)}});
        for (const ir::BufferPtr& w : p.workspaces) {
            json shape = json::array();
            for (const ir::ExprPtr& e : w->shape) shape.push_back(extent_json(e));
            workspaces.push_back(json{{"name", w->name}, {"dtype", dtype_name(w->dtype)}, {"shape", shape}});
        }
        json compile = json::object();
        for (const auto& [name, value] : p.compile_args) compile[name] = value_json(value);
        kernels.push_back(json{{"name", p.name},
                               {"launch", {{"cpp", ns + "::" + p.name}, {"c", ns + "_" + p.name}, {"arguments", arguments}}},
                               {"params", params},
                               {"dims", dims},
                               {"variants", json::array()},
                               {"program",
                                {{"compile_params", compile},
                                 {"launches", launches},
                                 {"workspaces", workspaces},
                                 {"workspace_size",
                                  {{"cpp", ns + "::" + p.name + "_workspace_size"},
                                   {"c", ns + "_" + p.name + "_workspace_size"},
                                   {"arguments", size_arguments}}}}}});
    }
    json manifest{{"format", "tlc-manifest"},
                  {"version", 1},
                  {"tlc_version", TLC_VERSION},
                  {"source", options.source},
                  {"arch", options.arch},
                  {"namespace", options.cpp_namespace},
                  {"kernels", kernels}};
    return manifest.dump(2) + "\n";
}

} // namespace tlc::codegen
