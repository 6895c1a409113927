// Element addressing: row-major global offsets in 64-bit with bounds masks, padded shared rows,
// fragment slots and replicated arrays; tile coordinates to buffer indices.
#include "codegen/cuda_names.h"
#include "codegen/kernel_emitter.h"
#include "codegen/layout_expr.h"
#include "support/check.h"

#include <fmt/format.h>

namespace tlc::codegen {

std::string KernelEmitter::shared_pointer(const ir::Buffer& b) const { return identifier(b.name); }

std::string KernelEmitter::global_offset(const ir::Buffer& b, const std::vector<std::string>& indices) {
    // ((i0 * D1 + i1) * D2 + i2) with the first product widened to 64 bits.
    std::string off;
    for (size_t d = 0; d < indices.size(); ++d) {
        if (d == 0) {
            off = indices.size() == 1 ? indices[0] : "int64_t(" + indices[0] + ")";
            continue;
        }
        std::string dim = expr(b.shape[d]);
        off = fmt::format("{} * {} + {}", d == 1 ? off : "(" + off + ")", parenthesized(dim), parenthesized(indices[d]));
    }
    return off.empty() ? "0" : off;
}

std::string KernelEmitter::bounds_mask(const ir::Region& r, const std::vector<std::string>& indices) {
    std::string mask;
    for (size_t d = 0; d < indices.size(); ++d)
        mask += std::string(mask.empty() ? "" : " && ") + "tl::in_bounds(" + indices[d] + ", " + axis_end(r, d) + ")";
    return mask;
}

std::string KernelEmitter::guarded_value(const ir::Buffer& b, const std::vector<std::string>& indices, const std::string& mask, Dtype to,
                                         const std::string& pad, bool zero_pad, bool branch_free) {
    const std::string elem = element(b, indices);
    if (!wgmmas_in_flight_ && !branch_free) return fmt::format("{} ? {} : {}", mask, cast_to(elem, b.dtype, to), pad);
    const std::string value = cast_to(fmt::format("tl::{}(&{}, {})", b.is_mutable ? "load_if" : "load_read_only_if", elem, mask), b.dtype, to);
    return zero_pad ? value : fmt::format("{} ? {} : {}", mask, value, pad);
}

std::string KernelEmitter::exists_along(const ir::Region& r, int axis, const std::string& coord) {
    std::vector<ir::ExprPtr> limits = r.tile_limits();
    if (axis < 0 || static_cast<size_t>(axis) >= limits.size() || !limits[axis]) return "";
    return fmt::format("{} < {}", parenthesized(coord), parenthesized(expr(limits[axis])));
}

std::string KernelEmitter::tile_axis_count(const ir::Region& r, int axis) {
    std::vector<ir::ExprPtr> limits = r.tile_limits();
    if (axis >= 0 && static_cast<size_t>(axis) < limits.size() && limits[axis]) return parenthesized(expr(limits[axis]));
    return std::to_string(r.tile_shape()[static_cast<size_t>(axis)]);
}

std::string KernelEmitter::axis_end(const ir::Region& r, size_t d) {
    std::string dim = expr(r.buffer->shape[d]);
    if (d >= r.ranges.size() || !r.ranges[d].limit) return dim;
    std::string limit = expr(r.ranges[d].limit);
    std::optional<int64_t> start = ir::const_int(r.ranges[d].start);
    if (start && *start == 0) return limit == dim ? dim : fmt::format("min({}, {})", dim, limit);  // `0 +: N <= 8192` of an axis of N
    // At least 0: a slice that starts below 0 may end there too, and tl::in_bounds compares unsigned.
    return fmt::format("max(0, min({}, {} + {}))", dim, parenthesized(expr(r.ranges[d].start)), parenthesized(limit));
}

std::string KernelEmitter::flatten(const std::vector<std::string>& idx, const std::vector<int64_t>& shape) const {
    std::string flat;
    for (size_t d = 0; d < idx.size(); ++d) {
        if (d == 0) {
            flat = idx[0];
            continue;
        }
        flat = fmt::format("{} * {} + {}", d == 1 ? parenthesized(flat) : "(" + flat + ")", shape[d], parenthesized(idx[d]));
    }
    return flat.empty() ? "0" : flat;
}

std::vector<std::string> KernelEmitter::unflatten(const std::string& flat, const std::vector<int64_t>& shape) const {
    return unflatten_index(flat, shape);
}

std::string KernelEmitter::element(const ir::Buffer& b, const std::vector<std::string>& indices) {
    std::string name = identifier(b.name);
    switch (b.scope) {
    case ir::Scope::Global: return name + "[" + global_offset(b, indices) + "]";
    case ir::Scope::Shared: {
        auto it = plan_.buffers.find(&b);
        TLC_CHECK(it != plan_.buffers.end(), "shared buffer without a slot: " + b.name);
        if (indices.empty()) return name + "[0]";
        std::string rows = indices.size() == 1 ? "" : flatten(std::vector<std::string>(indices.begin(), indices.end() - 1),
                                                              std::vector<int64_t>(b.const_shape.begin(), b.const_shape.end() - 1));
        if (rows.empty()) return name + "[" + indices.back() + "]";
        const ir::SharedSlot& slot = it->second;
        if (slot.swizzled) {  // wgmma's swizzled layout (a tile the consumers write for wgmma to read)
            TLC_CHECK(slot.stages == 1 && indices.size() == 2, "an element access to a tile of the TMA ring");
            return fmt::format("{}[tl::sm90::swizzled_element<{}, {}, {}>({}, {})]", name, slot.rows, slot.swizzle_bytes(), slot.elem_bytes,
                               indices[0], indices[1]);
        }
        if (slot.xor_rows > 0)  // 16-byte units XOR-swizzled by row (schedule/column_walks.h)
            return fmt::format("{}[{} * {} + tl::xor_swizzled_column<{}, {}, {}>({}, {})]", name, parenthesized(rows), slot.row_pitch,
                               slot.xor_rows, slot.xor_keys, slot.xor_unit(), rows, indices.back());
        return fmt::format("{}[{} * {} + {}]", name, parenthesized(rows), slot.row_pitch, parenthesized(indices.back()));
    }
    case ir::Scope::Fragment:
    case ir::Scope::Local:
        if (b.rank() == 0) return name;
        return name + "[" + flatten(indices, b.const_shape) + "]";
    }
    return name;
}

std::string KernelEmitter::point_index(const ir::Range& range) {
    if (!range.gather) return expr(range.start);
    // Idx[start], -1 (masked) outside Idx
    return fmt::format("tl::gather_index({}, {}, {})", identifier(range.gather->name), expr(range.start), expr(range.gather->shape[0]));
}

std::vector<std::string> KernelEmitter::region_indices(const ir::Region& r, const std::vector<std::string>& coords) {
    std::vector<std::string> out;
    size_t c = 0;
    for (const ir::Range& range : r.ranges) {
        std::string start = expr(range.start);
        if (range.is_point) {
            out.push_back(point_index(range));
            continue;
        }
        TLC_CHECK(c < coords.size(), "region has more slice axes than coordinates");
        const std::string& coord = coords[c++];
        std::string at = start == "0" ? coord : parenthesized(start) + " + " + parenthesized(coord);
        if (range.gather) {  // Idx[start + coord], -1 (masked) outside Idx
            out.push_back(fmt::format("tl::gather_index({}, {}, {})", identifier(range.gather->name), at, expr(range.gather->shape[0])));
            continue;
        }
        out.push_back(at);
    }
    return out;
}

std::optional<SlotChunk> KernelEmitter::slot_chunk(const ir::Buffer& frag, const std::string& slot, bool first_of_chunk) const {
    // A chunk of `width` elements along the last axis (when the chunks tile it) starts at a
    // multiple of the width: the last coordinate is the chunk's start plus the slot's offset in it,
    // a constant once the slot loop is unrolled. Written that way, nvcc sees that the slots of a
    // chunk share every index taken at a coarser grain (`j / 8` for a packed word), and stores of
    // a chunk to consecutive addresses. A blocked layout's chunks are its vectors; a general
    // layout's, the run of consecutive registers that hold consecutive columns (vector_width); an
    // accumulator's, its register pairs.
    const FragmentLayout* l = layout_of(frag);
    if (!l || frag.const_shape.empty()) return std::nullopt;
    SlotChunk c;
    if (l->kind == LayoutKind::Blocked) {
        if (l->vector <= 1 || frag.const_shape.back() % l->vector != 0) return std::nullopt;
        std::string first = first_of_chunk ? slot : fmt::format("({} / {}) * {}", parenthesized(slot), l->vector, l->vector);
        std::string flat = fmt::format("{}::flat(tl_tid, {})", l->type_name, first);
        c.start = unflatten(flat, frag.const_shape);
        c.start.back() = fmt::format("{} % {}", parenthesized(flat), frag.const_shape.back());
        c.width = l->vector;
    } else if (l->kind == LayoutKind::General) {
        int64_t width = l->layout.vector_width();
        if (width <= 1 || l->layout.modes.back().axes != 1 || frag.const_shape.back() % width != 0) return std::nullopt;
        c.start = layout_coordinates(l->layout, first_of_chunk ? slot : fmt::format("{} / {} * {}", parenthesized(slot), width, width));
        c.width = width;
    } else if (l->kind == LayoutKind::MmaAcc) {
        // An mma / wgmma accumulator: registers 2k and 2k + 1 hold neighbouring columns of a row.
        if (frag.const_shape.size() != 2 || frag.const_shape.back() % 2 != 0) return std::nullopt;
        std::string first = first_of_chunk ? slot : fmt::format("{} / 2 * 2", parenthesized(slot));
        c.start = {fmt::format("{}::row(tl_tid, {})", l->type_name, first), fmt::format("{}::col(tl_tid, {})", l->type_name, first)};
        c.width = 2;
    } else {
        return std::nullopt;
    }
    c.offset = fmt::format("{} % {}", parenthesized(slot), c.width);
    return c;
}

std::vector<std::string> KernelEmitter::slot_coords(const ir::Buffer& frag, const std::string& slot) const {
    const FragmentLayout* l = layout_of(frag);
    TLC_CHECK(l && l->distributed(), "slot coordinates of a non-distributed fragment");
    if (l->kind == LayoutKind::General) return layout_coordinates(l->layout, slot);
    if (l->kind == LayoutKind::MmaAcc)
        return {fmt::format("{}::row(tl_tid, {})", l->type_name, slot), fmt::format("{}::col(tl_tid, {})", l->type_name, slot)};
    if (auto chunk = slot_chunk(frag, slot); chunk && l->kind == LayoutKind::Blocked) {
        std::vector<std::string> coords = chunk->start;
        coords.back() = fmt::format("{} + {}", parenthesized(coords.back()), chunk->offset);
        return coords;
    }
    return unflatten(fmt::format("{}::flat(tl_tid, {})", l->type_name, slot), frag.const_shape);
}

} // namespace tlc::codegen
