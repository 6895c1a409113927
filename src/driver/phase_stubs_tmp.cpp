// TEMPORARY weak stand-ins for phases still being written (sema, scheduler, codegen, IR printer), so that
// the driver links; the real definitions override them. DELETE THIS FILE once they have landed.
// It must sort before pipeline.cpp (the only user of these symbols): with GNU ld, an archive
// member is pulled in for the first undefined reference, and real phase objects precede driver/
// in tlc_lib, so they win over these only when pipeline.o is pulled in after this file's position.
#include "codegen/codegen.h"
#include "ir/ir.h"
#include "schedule/pipeline.h"
#include "sema/sema.h"

namespace tlc::sema {

__attribute__((weak)) std::optional<Arch> arch_from_name(const std::string& name) {
    if (name == "sm_80") return Arch::Sm80;
    if (name == "sm_86") return Arch::Sm86;
    if (name == "sm_89") return Arch::Sm89;
    if (name == "sm_90a") return Arch::Sm90a;
    return std::nullopt;
}

__attribute__((weak)) std::optional<ir::Module> check(const ast::Module&, const std::vector<const ast::Module*>&,
                                                      DiagnosticEngine&, const SemaOptions&) {
    return ir::Module{};
}

} // namespace tlc::sema

namespace tlc::ir {

__attribute__((weak)) std::string print_module(const Module& module) {
    return "// IR printer not linked yet (driver/phase_stubs_tmp.cpp): " + std::to_string(module.kernels.size()) +
           " kernels\n";
}

} // namespace tlc::ir

namespace tlc::schedule {

__attribute__((weak)) const std::vector<std::string>& pass_names() {
    static const std::vector<std::string> names = {"sema"};
    return names;
}

__attribute__((weak)) bool run_passes(ir::Module&, const ScheduleOptions&, DiagnosticEngine&) { return true; }

} // namespace tlc::schedule

namespace tlc::codegen {

__attribute__((weak)) std::optional<CodegenOutput> generate(const ir::Module&, const CodegenOptions& options,
                                                            const SourceManager&, DiagnosticEngine&) {
    CodegenOutput out;
    out.cuda = "// codegen not linked yet (driver/phase_stubs_tmp.cpp)\n// " + options.command_line + "\n";
    if (!options.header_name.empty()) out.cuda += "#include \"" + options.header_name + "\"\n";
    out.header = "// codegen not linked yet (driver/phase_stubs_tmp.cpp)\n#pragma once\n";
    return out;
}

} // namespace tlc::codegen
