// Fragment layouts in the generated code: slot counts, padding and first-replica conditions, tile
// coordinates written out from a layout's digits, and the register map of a broadcast read.
#include "codegen/layout_expr.h"

#include "codegen/cuda_names.h"
#include "codegen/kernel_emitter.h"
#include "support/check.h"

#include <fmt/format.h>

#include <algorithm>

namespace tlc::codegen {

namespace {

// `index / stride % extent`, without the parts that change nothing.
std::string digit(const std::string& index, const ir::LayoutFactor& f, int64_t span) {
    std::string operand = parenthesized(index);
    std::string d = f.stride == 1 ? operand : fmt::format("{} / {}", operand, f.stride);
    if (f.stride * f.extent < span) d = fmt::format("{} % {}", d, f.extent);
    return "(" + d + ")";
}

// The digits of one mode as `d0 + e0 * (d1 + ...)`, written as a sum of place-valued terms.
std::string mode_coordinate(const ir::Layout::Mode& m, const std::string& slot, int64_t threads, int64_t registers) {
    std::string sum;
    int64_t place = 1;
    for (const ir::LayoutFactor& f : m.factors) {
        if (f.extent == 1) continue;
        bool thread = f.axis == ir::LayoutAxis::Thread;
        std::string d = digit(thread ? "tl_tid" : slot, f, thread ? threads : registers);
        sum += (sum.empty() ? "" : " + ") + (place == 1 ? d : fmt::format("{} * {}", d, place));
        place *= f.extent;
    }
    return sum.empty() ? "0" : sum;
}

int64_t mode_size(const ir::Layout& l, int first_axis, int axes) {
    int64_t size = 1;
    for (int a = first_axis; a < first_axis + axes; ++a) size *= l.shape[a];
    return size;
}

int64_t mode_span(const ir::Layout::Mode& m) {
    int64_t span = 1;
    for (const ir::LayoutFactor& f : m.factors) span *= f.extent;
    return span;
}

} // namespace

std::vector<std::string> unflatten_index(const std::string& flat, const std::vector<int64_t>& shape) {
    std::vector<std::string> out(shape.size());
    int64_t stride = 1;
    for (size_t d = shape.size(); d-- > 0;) {
        std::string q = stride == 1 ? flat : fmt::format("{} / {}", parenthesized(flat), stride);
        out[d] = d == 0 ? q : fmt::format("{} % {}", parenthesized(q), shape[d]);
        stride *= shape[d];
    }
    return out;
}

std::string layout_padding_condition(const ir::Layout& l, const std::string& slot) {
    // A mode whose digits span more than its size has padding: the coordinate must be in range.
    std::string cond;
    int axis = 0;
    for (const ir::Layout::Mode& m : l.modes) {
        int64_t size = mode_size(l, axis, m.axes);
        if (mode_span(m) > size)
            cond += fmt::format("{}{} < {}", cond.empty() ? "" : " && ", mode_coordinate(m, slot, l.threads, l.registers()), size);
        axis += m.axes;
    }
    return cond;
}

std::string first_replica_condition(const ir::Layout& l) {
    std::string cond;
    for (const ir::LayoutFactor& f : l.replication())
        cond += fmt::format("{}{} == 0", cond.empty() ? "" : " && ", digit("tl_tid", f, l.threads));
    return cond;
}

std::vector<std::string> layout_coordinates(const ir::Layout& l, const std::string& slot) {
    std::vector<std::string> coords;
    int axis = 0;
    for (const ir::Layout::Mode& m : l.modes) {
        // Parenthesized: callers splice coordinates into larger expressions.
        std::string c = mode_coordinate(m, slot, l.threads, l.registers());
        if (c.find(" + ") != std::string::npos || c.find(") * ") != std::string::npos) c = "(" + c + ")";
        if (m.axes == 1) {
            coords.push_back(c);
        } else {
            std::vector<int64_t> sub(l.shape.begin() + axis, l.shape.begin() + axis + m.axes);
            for (std::string& part : unflatten_index(c, sub)) coords.push_back(part);
        }
        axis += m.axes;
    }
    return coords;
}

std::string sliced_register_index(const ir::Layout& anchor, const std::vector<int>& kept, const std::string& slot) {
    std::vector<int> dropped;
    for (int a = 0; a < anchor.rank(); ++a)
        if (std::find(kept.begin(), kept.end(), a) == kept.end()) dropped.push_back(a);
    std::vector<ir::RegisterDigit> map;
    TLC_CHECK(anchor.slice(dropped, &map), "a broadcast read of a layout without those axes");
    std::string sum;
    int64_t registers = anchor.registers();
    for (const ir::RegisterDigit& d : map) {
        std::string digit_text = digit(slot, {d.extent, ir::LayoutAxis::Register, d.from_stride}, registers);
        sum += (sum.empty() ? "" : " + ") + (d.to_stride == 1 ? digit_text : fmt::format("{} * {}", digit_text, d.to_stride));
    }
    return sum.empty() ? "0" : sum;
}

std::string KernelEmitter::slot_count(const FragmentLayout& l) const {
    if (l.kind == LayoutKind::General) return std::to_string(l.layout.registers());
    return l.type_name + "::kSlots";
}

std::string KernelEmitter::slot_valid(const FragmentLayout& l, const std::string& slot) const {
    // A blocked layout whose chunks fill every thread's slots has no padding: no test, so that the
    // slots' code is straight-line and nvcc can share loads between them.
    if (l.kind == LayoutKind::Blocked)
        return layout_padding_condition(l.layout, slot).empty() ? "" : fmt::format("{}::valid(tl_tid, {})", l.type_name, slot);
    if (l.kind != LayoutKind::General) return "";
    return layout_padding_condition(l.layout, slot);
}

} // namespace tlc::codegen
