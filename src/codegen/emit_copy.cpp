// Lowering of copy, fill and atomic_add: element loops spread over the block's threads (or over a
// fragment's owned slots), 16-byte vector accesses where a run-time alignment and bounds check
// allows, masked scalar accesses at tensor edges.
#include "codegen/cuda_names.h"
#include "codegen/kernel_emitter.h"
#include "support/check.h"

#include <fmt/format.h>

namespace tlc::codegen {

namespace {

// f32 to f16 or bf16: the runtime converts two values with one packed instruction (tl::convert_pair).
// f32 pairs that one instruction converts (tl::convert_pair): to f16, bf16 and the 8-bit floats.
bool packed_conversion(Dtype from, Dtype to) {
    return from == Dtype::F32 && (to == Dtype::F16 || to == Dtype::BF16 || to == Dtype::F8E4M3 || to == Dtype::F8E5M2);
}

// Per-thread storage: every thread needs every element.
bool per_thread(const ir::Buffer& b, const FragmentLayout* l) {
    return b.scope == ir::Scope::Local || (b.scope == ir::Scope::Fragment && (!l || !l->distributed()));
}

// Largest power-of-two vector width (elements) so that `width * bytes` <= 16 and divides `last`.
int vector_width(int64_t last, int bytes, int limit) {
    int v = 1;
    while (v * 2 <= limit && (v * 2) * bytes <= 16 && last % (v * 2) == 0) v *= 2;
    return v;
}

} // namespace

void KernelEmitter::emit_copy(const ir::Copy& c) {
    if (c.async && emit_copy_async(c)) return;
    bool dst_dist = is_distributed(*c.dst.buffer), src_dist = is_distributed(*c.src.buffer);
    if (dst_dist && src_dist) {
        if (ir::needs_relayout(layouts_, c.src.buffer.get(), c.dst.buffer.get())) {
            // Different layouts: exchange through the shared scratch.
            std::string type = cuda_type(c.src.buffer->dtype);
            std::string tile = fmt::format("reinterpret_cast<{}*>(tl_scratch)", type);
            auto shape = c.src.tile_shape();
            out_.line(block_sync() + ";");
            for_each_owned(*c.src.buffer, Holders::First, [&](const std::vector<std::string>& coords, const std::string& s) {
                out_.line(fmt::format("{}[{}] = {}[{}];", tile, flatten(coords, shape), identifier(c.src.buffer->name), s));
            });
            out_.line(block_sync() + ";");
            for_each_owned(*c.dst.buffer, Holders::Every, [&](const std::vector<std::string>& coords, const std::string& s) {
                out_.line(fmt::format("{}[{}] = {};", identifier(c.dst.buffer->name), s,
                                      cast_to(tile + "[" + flatten(coords, shape) + "]", c.src.buffer->dtype, c.dst.buffer->dtype)));
            });
            out_.line(block_sync() + ";");
            return;
        }
    }
    if (dst_dist) return emit_copy_with_fragment(c, false);
    if (src_dist) return emit_copy_with_fragment(c, true);
    emit_copy_flat(c);
}

// global -> shared with cp.async, 16 bytes per instruction, for whole aligned chunks inside the
// tensor; a chunk at the tensor's edge or misaligned falls back to plain loads and stores (the pad
// value, zero by default, outside the tensor), which complete at once and so are just as safe
// under the pipeline's waits.
bool KernelEmitter::emit_copy_async(const ir::Copy& c) {
    const ir::Buffer &s = *c.src.buffer, &d = *c.dst.buffer;
    auto shape = c.dst.tile_shape();
    // Remark R0003: the pipeline asked for an asynchronous copy that cp.async cannot do.
    auto not_async = [&](const std::string& reason, const std::string& fix) {
        diags_.report(DiagKind::CopyNotAsync, c.range, d.name, reason);
        diags_.note(DiagKind::NoteFix, c.range, fix);
        return false;
    };
    if (s.scope != ir::Scope::Global || d.scope != ir::Scope::Shared) return false;
    if (s.dtype != d.dtype)
        return not_async(fmt::format("it converts `{}` to `{}`, and cp.async only moves bytes", dtype_name(s.dtype), dtype_name(d.dtype)),
                         fmt::format("declare `{}` as `{}` and convert after the copy", d.name, dtype_name(s.dtype)));
    const int bytes = dtype_bytes(s.dtype);
    if (shape.empty() || c.src.ranges.back().is_point || c.dst.ranges.back().is_point) {
        // No contiguous run: 4- and 8-byte elements still go one cp.async each (a column of scales).
        if (bytes == 4 || bytes == 8) return emit_copy_async_elements(c);
        return not_async(fmt::format("its innermost axis is a single index, so no 16 bytes it moves are contiguous, and its "
                                     "{}-byte elements are smaller than the 4 bytes of the smallest cp.async",
                                     bytes),
                         "copy a slice along the innermost (contiguous) axis of both sides");
    }
    const int width = 16 / bytes;
    if (shape.back() % width != 0)
        return not_async(fmt::format("its innermost extent {} is not a multiple of {} `{}` elements (16 bytes, one cp.async)",
                                     shape.back(), width, dtype_name(s.dtype)),
                         fmt::format("make the innermost extent of `{}` a multiple of {}", d.name, width));
    int64_t chunks = 1;
    for (int64_t e : shape) chunks *= e;
    chunks /= width;
    std::string type = cuda_type(s.dtype);
    // Fast path, decided once per tile (block-uniform): the whole tile inside the tensor and every
    // 16-byte chunk aligned; then each chunk is one unmasked cp.async.
    std::string interior = fmt::format("tl::is_aligned({}, 16) && {} % {} == 0", identifier(s.name), parenthesized(expr(s.shape.back())), width);
    size_t tile_axis = 0;
    for (size_t d = 0; d < c.src.ranges.size(); ++d) {
        const ir::Range& r = c.src.ranges[d];
        std::string start = expr(r.start), dim = parenthesized(expr(s.shape[d]));
        if (r.is_point) {
            interior += fmt::format(" && tl::in_bounds({}, {})", point_index(r), expr(s.shape[d]));
        } else {
            interior += fmt::format(" && {} >= 0 && {} + {} <= {}", parenthesized(start), parenthesized(start), r.extent, dim);
            if (r.limit) interior += fmt::format(" && {} >= {}", parenthesized(expr(r.limit)), r.extent);  // every element exists
            if (d + 1 == c.src.ranges.size()) interior += fmt::format(" && {} % {} == 0", parenthesized(start), width);
            ++tile_axis;
        }
    }
    // A gather decides its rows one by one (each index may fall outside X): no tile-wide fast path.
    // A point gather picks one index for the whole tile, which the tile-wide test checks.
    const bool fast_path = !c.src.gathers_rows();
    if (fast_path) {
        out_.line(fmt::format("if ({}) {{", interior));
        out_.indent();
        std::string ch = fresh("chunk");
        spread_loop(ch, chunks, [&] {
            std::vector<std::string> coords = unflatten(ch + " * " + std::to_string(width), shape);
            std::vector<std::string> si = region_indices(c.src, coords), di = region_indices(c.dst, coords);
            out_.line(fmt::format("tl::cp_async_16(&{}, &{});", element(d, di), element(s, si)));
        });
        out_.dedent();
        out_.line("} else {");
        out_.indent();
    }
    std::string ch = fresh("chunk");
    spread_loop(ch, chunks, [&] {
        std::vector<std::string> coords = unflatten(ch + " * " + std::to_string(width), shape);
        std::vector<std::string> si = region_indices(c.src, coords), di = region_indices(c.dst, coords);
        std::string sp = fresh("src"), dp = fresh("dst");
        out_.line(fmt::format("const {}* {} = &{};", type, sp, element(s, si)));
        out_.line(fmt::format("{}* {} = &{};", type, dp, element(d, di)));
        // Elements of this chunk inside the tensor: all rows in bounds, then the columns left.
        std::string last_dim = axis_end(c.src, si.size() - 1);
        std::string valid = fresh("valid");
        std::string row_ok;
        for (size_t dim = 0; dim + 1 < si.size(); ++dim)
            row_ok += (row_ok.empty() ? "" : " && ") + fmt::format("tl::in_bounds({}, {})", si[dim], axis_end(c.src, dim));
        // Columns of this chunk inside the tensor, counted from its first. Only whole chunks go
        // through cp.async: a partial one would still make a 16-byte read past the end of a small
        // allocation (compute-sanitizer reports it), so edges are copied element by element, with
        // the pad value outside the tensor, which is just as safe under the pipeline's waits. A
        // whole chunk whose source is only 8- or 4-byte aligned (rows whose pitch is not a
        // multiple of 16 bytes) is still asynchronous: 8- or 4-byte cp.async (tl::cp_async_chunk).
        out_.line(fmt::format("const int {} = {}max(0, min({}, {} - ({})));", valid, row_ok.empty() ? "" : "!(" + row_ok + ") ? 0 : ",
                              width, last_dim, si.back()));
        out_.line(fmt::format("if ({} == {} && {} >= 0 && tl::is_aligned({}, 4)) {{", valid, width, si.back(), sp));
        out_.indent();
        out_.line(fmt::format("tl::cp_async_chunk({}, {});  // 16, 8 or 4 bytes per cp.async, as the source is aligned", dp, sp));
        out_.dedent();
        // A chunk wholly outside the tensor (padding rows of an edge tile, say) is the pad value:
        // one vector store where the destination's chunks are aligned. Not in a gather (rows or
        // a page picked by an index), whose chunks lie outside only where an index does: there the
        // extra branch cost the paged decoding kernel a register spill on sm_80.
        const int64_t chunk_bytes = width * dtype_bytes(d.dtype);
        const std::string pad = c.pad ? expr(c.pad) : int_literal(0, d.dtype);
        if (!c.src.gathers() && chunk_bytes <= 16 && (chunk_bytes & (chunk_bytes - 1)) == 0 &&
            shared_chunks_aligned(c.dst, width)) {
            out_.line(fmt::format("}} else if ({} == 0) {{", valid));
            out_.indent();
            out_.line(fmt::format("tl::fill_vector<{}, {}>({}, {});", type, width, dp, pad));
            out_.dedent();
        }
        out_.line("} else {");
        out_.indent();
        out_.line("#pragma unroll");
        std::vector<std::string> each = si;
        each.back() = "(" + si.back() + ") + tl_v";
        out_.line(fmt::format("for (int tl_v = 0; tl_v < {}; ++tl_v) {}[tl_v] = {} ? {}[tl_v] : {};", width, dp,
                              bounds_mask(c.src, each), sp, pad));
        out_.dedent();
        out_.line("}");
    });
    if (fast_path) {
        out_.dedent();
        out_.line("}");
    }
    return true;
}

// global -> shared with no contiguous run (a point index innermost), 4- or 8-byte elements: one
// cp.async per element, spread over the threads; an element outside the tensor is stored as the
// pad value (zero by default). Elements are aligned to their size (the launch checks the tensors).
bool KernelEmitter::emit_copy_async_elements(const ir::Copy& c) {
    const ir::Buffer &s = *c.src.buffer, &d = *c.dst.buffer;
    auto shape = c.dst.tile_shape();
    int64_t n = 1;
    for (int64_t e : shape) n *= e;
    std::string i = fresh("elem");
    spread_loop(i, n, [&] {
        std::vector<std::string> coords = unflatten(i, shape);
        std::vector<std::string> si = region_indices(c.src, coords), di = region_indices(c.dst, coords);
        out_.line(fmt::format("if ({}) tl::cp_async_{}(&{}, &{});", bounds_mask(c.src, si), dtype_bytes(s.dtype), element(d, di),
                              element(s, si)));
        out_.line(fmt::format("else {} = {};", element(d, di), c.pad ? expr(c.pad) : int_literal(0, d.dtype)));
    });
    return true;
}

// Whether every chunk of `width` consecutive elements that a fragment's layout moves into or out
// of the shared region `r` starts at an address aligned to the chunk's bytes, by construction: the
// slot's offset and row pitch are multiples of the chunk, so is the region's (constant) first
// column, and the layouts start their runs at multiples of their length (codegen's `run`).
// Stores from a fragment then drop the run-time test; loads keep it: without the branch ptxas
// hoists every load of the copy, which cost the sm_80 layernorm (64 registers) a spill.
bool KernelEmitter::shared_chunks_aligned(const ir::Region& r, int width) const {
    if (r.buffer->scope != ir::Scope::Shared || r.ranges.empty()) return false;
    auto it = plan_.buffers.find(r.buffer.get());
    if (it == plan_.buffers.end()) return false;
    const int64_t chunk_bytes = int64_t(width) * dtype_bytes(r.buffer->dtype);
    const std::optional<int64_t> first_col = ir::const_int(r.ranges.back().start);
    // wgmma's swizzled layout permutes whole 16-byte units of 1024-byte-aligned rows.
    if (it->second.swizzled) return it->second.stages == 1 && chunk_bytes <= 16 && first_col && *first_col % width == 0;
    return it->second.offset % chunk_bytes == 0 && it->second.row_pitch % width == 0 && first_col && *first_col % width == 0;
}

// One side is a distributed fragment: each thread moves the elements it holds.
namespace {
// Runs of consecutive slots that are consecutive columns: a blocked layout's chunks, and the
// register pairs (2j, 2j + 1) of the mma / wgmma accumulator layout.
int consecutive_column_run(const FragmentLayout& l) {
    return l.kind == LayoutKind::Blocked  ? l.vector
           : l.kind == LayoutKind::MmaAcc ? 2
                                          : static_cast<int>(l.layout.vector_width());
}
} // namespace

void KernelEmitter::emit_copy_with_fragment(const ir::Copy& c, bool fragment_is_src) {
    const ir::Region& frag = fragment_is_src ? c.src : c.dst;
    const ir::Region& other = fragment_is_src ? c.dst : c.src;
    const ir::Buffer& f = *frag.buffer;
    const ir::Buffer& o = *other.buffer;
    const FragmentLayout* l = layout_of(f);
    std::string fname = identifier(f.name);
    std::string pad = c.pad ? expr(c.pad) : int_literal(0, c.dst.buffer->dtype);
    bool other_is_memory = o.scope == ir::Scope::Global || o.scope == ir::Scope::Shared;
    Dtype from = c.src.buffer->dtype, to = c.dst.buffer->dtype;

    if (is_distributed(o)) { // same layout on both sides: slot by slot
        out_.line("#pragma unroll");
        out_.line(fmt::format("for (int tl_s = 0; tl_s < {}; ++tl_s) {}[tl_s] = {};", slot_count(*l),
                              identifier(c.dst.buffer->name), cast_to(identifier(c.src.buffer->name) + "[tl_s]", from, to)));
        return;
    }

    // A wgmma accumulator loaded from global memory (a gemm that adds to C's values): one predicated
    // load per element. The vector path's branch (whole chunk inside and aligned, or element by
    // element) merges into the accumulator's registers, and ptxas then serialises every wgmma of the
    // loop that accumulates onto them (C7515), where a group stays in flight across trips.
    const bool into_accumulator = !fragment_is_src && o.scope == ir::Scope::Global && is_wgmma_accumulator(f);
    auto scalar_move = [&](const std::vector<std::string>& coords, const std::string& slot) {
        std::vector<std::string> idx = region_indices(other, coords);
        std::string elem = element(o, idx);
        std::string mask = o.scope == ir::Scope::Global ? bounds_mask(other, idx) : "";
        if (fragment_is_src) {
            std::string store = fmt::format("{} = {};", elem, cast_to(fname + "[" + slot + "]", from, to));
            out_.line(mask.empty() ? store : "if (" + mask + ") " + store);
        } else {
            std::string value = mask.empty() ? cast_to(elem, from, to) : guarded_value(o, idx, mask, to, pad, !c.pad, into_accumulator);
            out_.line(fmt::format("{}[{}] = {};", fname, slot, value));
        }
    };

    int bytes = dtype_bytes(o.dtype);
    int run = consecutive_column_run(*l);
    int width = other_is_memory && !other.ranges.back().is_point && !into_accumulator ? vector_width(run, bytes, run) : 1;
    // Remark R0005 (one element per load or store), but not for a tile of at most one element a
    // thread, which a vector access would not move faster.
    const bool few_elements = !f.const_shape.empty() && ir::element_count(f.const_shape) <= kernel_.threads;
    if (width == 1 && other_is_memory && !into_accumulator && !few_elements) {
        const char* scope = o.scope == ir::Scope::Global ? "global" : "shared";
        if (other.ranges.back().is_point) {
            diags_.report(DiagKind::CopyNotVectorized, c.range, f.declared_name(), scope, o.name,
                          fmt::format("its innermost axis in `{}` is a single index, so the elements are not contiguous", o.name));
            diags_.note(DiagKind::NoteFix, c.range, fmt::format("copy a slice along the innermost axis of `{}`", o.name));
        } else if (run == 1 && l->kind == LayoutKind::General) {
            diags_.report(DiagKind::CopyNotVectorized, c.range, f.declared_name(), scope, o.name,
                          fmt::format("its layout ({}) puts consecutive elements of a row in different threads", l->origin));
            if (o.scope == ir::Scope::Global)  // a shared tile is staged already: its own copy is the vectorized one
                diags_.note(DiagKind::NoteFix, c.range,
                            fragment_is_src
                                ? fmt::format("for a large tile, copy `{}` into a `shared` tile first; the copy from shared "
                                              "memory to global memory is vectorized",
                                              f.declared_name())
                                : fmt::format("for a large tile, copy the region into a `shared` tile first and `{}` from it; "
                                              "the copy from global to shared memory is vectorized (asynchronous in a "
                                              "pipelined loop)",
                                              f.declared_name()));
        } else if (run == 1) {
            int64_t last = f.const_shape.empty() ? 1 : f.const_shape.back();
            diags_.report(DiagKind::CopyNotVectorized, c.range, f.declared_name(), scope, o.name,
                          fmt::format("the last extent of `{}` is {}, which is odd, so each thread holds single elements of a row",
                                      f.declared_name(), last));
            diags_.note(DiagKind::NoteFix, c.range,
                        fmt::format("make the last extent of `{}` even (a multiple of {} for 16-byte accesses)", f.declared_name(),
                                    std::max(2, 16 / bytes)));
        }
    }
    if (width == 1) {
        for_each_owned(f, fragment_is_src ? Holders::First : Holders::Every, scalar_move);
        return;
    }
    // Fragment against memory: chunks of `width` consecutive elements in one access.
    std::string ch = fresh("chunk");
    std::string first = fragment_is_src ? first_replica_condition(l->layout) : "";
    if (!first.empty()) {
        out_.line(fmt::format("if ({}) {{  // one copy of each replicated element is stored", first));
        out_.indent();
    }
    out_.line("#pragma unroll");
    out_.block(fmt::format("for (int {0} = 0; {0} < {1}; {0} += {2})", ch, slot_count(*l), width), [&] {
        if (std::string valid = slot_valid(*l, ch); !valid.empty()) out_.line(fmt::format("if (!({})) continue;", valid));
        std::vector<std::string> coords = slot_coords(f, ch);
        std::vector<std::string> idx = region_indices(other, coords);
        std::string ptr = fresh("ptr");
        out_.line(fmt::format("{}{}* {} = &{};", fragment_is_src ? "" : "const ", cuda_type(o.dtype), ptr, element(o, idx)));
        std::string ok = fragment_is_src && shared_chunks_aligned(other, width) ? "true" : fmt::format("tl::is_aligned({}, {})", ptr, width * bytes);
        if (o.scope == ir::Scope::Global) ok = chunk_in_bounds(other, idx, width) + " && " + ok;
        std::string vec = fresh("vec");
        const bool always = ok == "true";  // aligned by construction: the vector access alone
        out_.line(always ? "{" : fmt::format("if ({}) {{", ok));
        out_.indent();
        out_.line(fmt::format("{} {}[{}];", cuda_type(o.dtype), vec, width));
        if (fragment_is_src) {
            out_.line("#pragma unroll");
            if (packed_conversion(from, to) && width % 2 == 0)  // f32 pairs in one instruction
                out_.line(fmt::format("for (int tl_v = 0; tl_v < {0}; tl_v += 2) tl::convert_pair(&{1}[tl_v], {2}[{3} + tl_v], {2}[{3} + tl_v + 1]);",
                                      width, vec, fname, ch));
            else
                out_.line(fmt::format("for (int tl_v = 0; tl_v < {}; ++tl_v) {}[tl_v] = {};", width, vec,
                                      cast_to(fname + "[" + ch + " + tl_v]", from, to)));
            out_.line(fmt::format("tl::store_vector<{}, {}>({}, {});", cuda_type(o.dtype), width, ptr, vec));
        } else {
            out_.line(fmt::format("tl::load_vector<{}, {}>({}, {});", cuda_type(o.dtype), width, vec, ptr));
            out_.line("#pragma unroll");
            out_.line(fmt::format("for (int tl_v = 0; tl_v < {}; ++tl_v) {}[{} + tl_v] = {};", width, fname, ch,
                                  cast_to(vec + "[tl_v]", from, to)));
        }
        out_.dedent();
        if (always) {
            out_.line("}");
            return;
        }
        out_.line("} else {");
        out_.indent();
        out_.line("#pragma unroll");
        out_.block(fmt::format("for (int tl_v = 0; tl_v < {}; ++tl_v)", width), [&] {
            std::vector<std::string> c2 = slot_coords(f, ch + " + tl_v");
            scalar_move(c2, ch + " + tl_v");
        });
        out_.dedent();
        out_.line("}");
    });
    if (!first.empty()) {
        out_.dedent();
        out_.line("}");
    }
}

// Neither side is a distributed fragment: the block's threads share the elements, or each thread
// copies all of them — when the destination is per-thread storage, and in a per-thread copy
// (ir::is_per_thread), whose `local` data and region may differ between threads.
void KernelEmitter::emit_copy_flat(const ir::Copy& c) {
    const ir::Buffer &s = *c.src.buffer, &d = *c.dst.buffer;
    auto shape = c.dst.tile_shape();
    bool every = per_thread(d, layout_of(d)) || ir::is_per_thread(c);
    std::string pad = c.pad ? expr(c.pad) : int_literal(0, d.dtype);
    auto move = [&](const std::vector<std::string>& coords) {
        std::vector<std::string> si = region_indices(c.src, coords), di = region_indices(c.dst, coords);
        std::string value = s.scope == ir::Scope::Global ? guarded_value(s, si, bounds_mask(c.src, si), d.dtype, pad, !c.pad)
                                                         : cast_to(element(s, si), s.dtype, d.dtype);
        std::string store = fmt::format("{} = {};", element(d, di), value);
        if (d.scope == ir::Scope::Global) store = "if (" + bounds_mask(c.dst, di) + ") " + store;
        out_.line(store);
    };
    bool memory = (s.scope == ir::Scope::Global || s.scope == ir::Scope::Shared) &&
                  (d.scope == ir::Scope::Global || d.scope == ir::Scope::Shared);
    if (emit_local_copy_vectorized(c, move)) return;
    int width = 1;
    if (memory && !every && !shape.empty() && !c.src.ranges.back().is_point && !c.dst.ranges.back().is_point)
        width = vector_width(shape.back(), std::max(dtype_bytes(s.dtype), dtype_bytes(d.dtype)), 8);
    if (width == 1 || shape.empty()) {
        if (shape.empty()) {
            out_.block(every ? "" : "if (tl_tid == 0)", [&] { move({}); });
            return;
        }
        for_each_element(shape, every, [&](const std::vector<std::string>& coords, const std::string&) { move(coords); });
        return;
    }
    int64_t chunks = ir::element_count(shape) / width;
    std::string ch = fresh("chunk");
    spread_loop(ch, chunks, [&] {
        std::vector<std::string> coords = unflatten(ch + " * " + std::to_string(width), shape);
        std::vector<std::string> si = region_indices(c.src, coords), di = region_indices(c.dst, coords);
        std::string sp = fresh("src"), dp = fresh("dst");
        out_.line(fmt::format("const {}* {} = &{};", cuda_type(s.dtype), sp, element(s, si)));
        out_.line(fmt::format("{}* {} = &{};", cuda_type(d.dtype), dp, element(d, di)));
        std::string ok = fmt::format("tl::is_aligned({}, {}) && tl::is_aligned({}, {})", sp, width * dtype_bytes(s.dtype), dp,
                                     width * dtype_bytes(d.dtype));
        if (s.scope == ir::Scope::Global) ok = chunk_in_bounds(c.src, si, width) + " && " + ok;
        if (d.scope == ir::Scope::Global) ok = chunk_in_bounds(c.dst, di, width) + " && " + ok;
        out_.line(fmt::format("if ({}) {{", ok));
        out_.indent();
        std::string vs = fresh("vec");
        out_.line(fmt::format("{} {}[{}];", cuda_type(s.dtype), vs, width));
        out_.line(fmt::format("tl::load_vector<{}, {}>({}, {});", cuda_type(s.dtype), width, vs, sp));
        if (s.dtype == d.dtype) {
            out_.line(fmt::format("tl::store_vector<{}, {}>({}, {});", cuda_type(d.dtype), width, dp, vs));
        } else {
            std::string vd = fresh("vec");
            out_.line(fmt::format("{} {}[{}];", cuda_type(d.dtype), vd, width));
            out_.line("#pragma unroll");
            out_.line(fmt::format("for (int tl_v = 0; tl_v < {}; ++tl_v) {}[tl_v] = {};", width, vd, cast_to(vs + "[tl_v]", s.dtype, d.dtype)));
            out_.line(fmt::format("tl::store_vector<{}, {}>({}, {});", cuda_type(d.dtype), width, dp, vd));
        }
        emit_chunk_else_elements(ch, width, shape, move);
    });
}

// Whether the run of `width` elements of global region `r` from `idx` lies inside the tensor: its
// first and its last element in bounds.
std::string KernelEmitter::chunk_in_bounds(const ir::Region& r, std::vector<std::string> idx, int width) {
    std::string first = bounds_mask(r, idx);
    idx.back() = "(" + idx.back() + ") + " + std::to_string(width - 1);
    return first + " && " + bounds_mask(r, idx);
}

// Closes a chunk's vector branch with its `else`: the chunk's elements one by one through `move`.
void KernelEmitter::emit_chunk_else_elements(const std::string& chunk, int width, const std::vector<int64_t>& shape,
                                             const std::function<void(const std::vector<std::string>&)>& move) {
    out_.dedent();
    out_.line("} else {");
    out_.indent();
    out_.line("#pragma unroll");
    out_.block(fmt::format("for (int tl_v = 0; tl_v < {}; ++tl_v)", width), [&] {
        move(unflatten(chunk + " * " + std::to_string(width) + " + tl_v", shape));
    });
    out_.dedent();
    out_.line("}");
}

// A per-thread copy between a `local` tile and global or shared memory, runs of its last axis at
// once: each run of up to 16 bytes is one vector access where it lies inside the tensor and is
// aligned, element by element otherwise (through a register array, so that the `local` tile
// stays in registers: its elements are indexed by constants only).
bool KernelEmitter::emit_local_copy_vectorized(const ir::Copy& c,
                                               const std::function<void(const std::vector<std::string>&)>& move) {
    const bool to_local = c.dst.buffer->scope == ir::Scope::Local;
    const ir::Region& mem = to_local ? c.src : c.dst;
    const ir::Region& loc = to_local ? c.dst : c.src;
    const ir::Buffer &m = *mem.buffer, &l = *loc.buffer;
    auto shape = c.dst.tile_shape();
    // Not in a kernel with gemms: a branch around loads there can serialize the wgmmas in flight,
    // and the vector path's registers made the FP8 tile kernel's mma.sync loop spill (the element
    // loads below are selects).
    if (l.scope != ir::Scope::Local || (m.scope != ir::Scope::Global && m.scope != ir::Scope::Shared) || shape.empty() ||
        mem.ranges.back().is_point || loc.ranges.back().is_point || !ir::is_per_thread(c) || !layouts_.gemms.empty())
        return false;
    const int width = vector_width(shape.back(), dtype_bytes(m.dtype), 16);
    if (width == 1) return false;
    const int64_t chunks = ir::element_count(shape) / width;
    const std::string mt = cuda_type(m.dtype);
    out_.line("#pragma unroll");
    std::string ch = fresh("chunk");
    out_.block(fmt::format("for (int {0} = 0; {0} < {1}; ++{0})", ch, chunks), [&] {
        std::vector<std::string> first = unflatten(ch + " * " + std::to_string(width), shape);
        std::vector<std::string> mi = region_indices(mem, first);
        std::string p = fresh("ptr");
        out_.line(fmt::format("{}{}* {} = &{};", to_local ? "const " : "", mt, p, element(m, mi)));
        std::string ok = fmt::format("tl::is_aligned({}, {})", p, width * dtype_bytes(m.dtype));
        if (m.scope == ir::Scope::Global) ok = chunk_in_bounds(mem, mi, width) + " && " + ok;
        std::string v = fresh("vec");
        auto local_at = [&](const std::string& lane) {
            return element(l, region_indices(loc, unflatten(ch + " * " + std::to_string(width) + " + " + lane, shape)));
        };
        out_.line(fmt::format("if ({}) {{", ok));
        out_.indent();
        out_.line(fmt::format("{} {}[{}];", mt, v, width));
        if (to_local) {
            out_.line(fmt::format("tl::load_vector<{}, {}>({}, {});", mt, width, v, p));
            out_.line("#pragma unroll");
            out_.line(fmt::format("for (int tl_v = 0; tl_v < {}; ++tl_v) {} = {};", width, local_at("tl_v"),
                                  cast_to(v + "[tl_v]", m.dtype, l.dtype)));
        } else {
            out_.line("#pragma unroll");
            out_.line(fmt::format("for (int tl_v = 0; tl_v < {}; ++tl_v) {}[tl_v] = {};", width, v,
                                  cast_to(local_at("tl_v"), l.dtype, m.dtype)));
            out_.line(fmt::format("tl::store_vector<{}, {}>({}, {});", mt, width, p, v));
        }
        emit_chunk_else_elements(ch, width, shape, move);
    });
    return true;
}

void KernelEmitter::emit_fill(const ir::Fill& f) {
    const ir::Buffer& d = *f.dst.buffer;
    std::string value = expr(f.value);  // a fill of memory names it once, below
    if (is_distributed(d)) {
        out_.line("#pragma unroll");
        out_.line(fmt::format("for (int tl_s = 0; tl_s < {}; ++tl_s) {}[tl_s] = {};", slot_count(*layout_of(d)),
                              identifier(d.name), value));
        return;
    }
    auto shape = f.dst.tile_shape();
    bool every = per_thread(d, layout_of(d));
    auto store = [&](const std::vector<std::string>& coords) {
        std::vector<std::string> idx = region_indices(f.dst, coords);
        std::string s = fmt::format("{} = {};", element(d, idx), value);
        out_.line(d.scope == ir::Scope::Global ? "if (" + bounds_mask(f.dst, idx) + ") " + s : s);
    };
    if (shape.empty()) {
        out_.block(every ? "" : "if (tl_tid == 0)", [&] { store({}); });
        return;
    }
    // A block's fill of global or shared memory: runs of up to 16 bytes along the last axis, one
    // vector store each where the run is aligned and (in global memory) inside the tensor.
    const int width = every || f.dst.ranges.back().is_point ? 1 : vector_width(shape.back(), dtype_bytes(d.dtype), 16);
    if (width == 1) {
        for_each_element(shape, every, [&](const std::vector<std::string>& coords, const std::string&) { store(coords); });
        return;
    }
    std::string v = fresh("value"), ch = fresh("chunk");
    out_.line(fmt::format("const {} {} = {};", cuda_type(d.dtype), v, value));
    value = v;
    spread_loop(ch, ir::element_count(shape) / width, [&] {
        std::vector<std::string> di = region_indices(f.dst, unflatten(ch + " * " + std::to_string(width), shape));
        std::string dp = fresh("dst");
        out_.line(fmt::format("{}* {} = &{};", cuda_type(d.dtype), dp, element(d, di)));
        std::string ok = fmt::format("tl::is_aligned({}, {})", dp, width * dtype_bytes(d.dtype));
        if (d.scope == ir::Scope::Global) ok = chunk_in_bounds(f.dst, di, width) + " && " + ok;
        out_.line(fmt::format("if ({}) {{", ok));
        out_.indent();
        out_.line(fmt::format("tl::fill_vector<{}, {}>({}, {});", cuda_type(d.dtype), width, dp, v));
        emit_chunk_else_elements(ch, width, shape, store);
    });
}

void KernelEmitter::emit_iteration_atomic_add(const ir::AtomicAdd& a, const ElementContext& ctx) {
    const ir::Buffer& d = *a.dst.buffer;
    std::vector<std::string> idx;
    for (const ir::Range& r : a.dst.ranges) {
        const std::string at = expr(r.start, ctx);
        idx.push_back(r.gather ? fmt::format("tl::gather_index({}, {}, {})", identifier(r.gather->name), at, expr(r.gather->shape[0]))
                               : at);
    }
    std::string guard = bounds_mask(a.dst, idx);
    if (!ctx.store_guard.empty()) guard = ctx.store_guard + " && " + guard;  // one replica of the iteration adds
    out_.line(fmt::format("if ({}) tl::atomic_add(&{}, {});", guard, element(d, idx),
                          cast_to(expr(a.value, ctx), a.value->dtype, d.dtype)));
}

void KernelEmitter::emit_atomic_add(const ir::AtomicAdd& a) {
    const ir::Buffer& d = *a.dst.buffer;
    if (a.value) { // one element, added once per block
        std::vector<std::string> idx = region_indices(a.dst, {});
        out_.line(fmt::format("if (tl_tid == 0 && {}) tl::atomic_add(&{}, {});", bounds_mask(a.dst, idx), element(d, idx),
                              cast_to(expr(a.value), a.value->dtype, d.dtype)));
        return;
    }
    const ir::Buffer& s = *a.src.buffer;
    auto add = [&](const std::vector<std::string>& coords, const std::string& src_value) {
        std::vector<std::string> di = region_indices(a.dst, coords);
        out_.line(fmt::format("if ({}) tl::atomic_add(&{}, {});", bounds_mask(a.dst, di), element(d, di), cast_to(src_value, s.dtype, d.dtype)));
    };
    if (is_distributed(s) && emit_paired_atomic_add(a)) return;
    if (is_distributed(s)) {
        for_each_owned(s, Holders::First, [&](const std::vector<std::string>& coords, const std::string& slot) {
            add(coords, identifier(s.name) + "[" + slot + "]");
        });
        return;
    }
    for_each_element(a.dst.tile_shape(), false, [&](const std::vector<std::string>& coords, const std::string&) {
        add(coords, element(s, region_indices(a.src, coords)));
    });
}

// atomic_add of an f32 fragment whose threads hold pairs of neighbouring elements of a row in
// consecutive slots (an mma layout's register pairs, a blocked layout's even vectors) into f32
// memory along its last axis: one tl::atomic_add_pair per pair (an 8-byte atomic on sm_90 and
// newer), each element alone where the pair crosses the region's bounds. False when it does not
// apply.
bool KernelEmitter::emit_paired_atomic_add(const ir::AtomicAdd& a) {
    const ir::Buffer& s = *a.src.buffer;
    const ir::Buffer& d = *a.dst.buffer;
    const FragmentLayout* l = layout_of(s);
    if (!l || s.dtype != Dtype::F32 || d.dtype != Dtype::F32 || a.dst.ranges.back().is_point) return false;
    if (consecutive_column_run(*l) % 2) return false;
    std::string first = first_replica_condition(l->layout);
    std::string ch = fresh("pair");
    out_.block(first.empty() ? std::string() : fmt::format("if ({})", first), [&] {
        out_.line("#pragma unroll");
        out_.block(fmt::format("for (int {0} = 0; {0} < {1}; {0} += 2)", ch, slot_count(*l)), [&] {
            if (std::string valid = slot_valid(*l, ch); !valid.empty()) out_.line(fmt::format("if (!({})) continue;", valid));
            std::vector<std::string> idx = region_indices(a.dst, slot_coords(s, ch));
            std::vector<std::string> next = idx;
            next.back() = "(" + next.back() + ") + 1";
            const std::string value = identifier(s.name) + "[" + ch + "]", value2 = identifier(s.name) + "[" + ch + " + 1]";
            out_.line(fmt::format("if ({} && {}) tl::atomic_add_pair(&{}, {}, {});", bounds_mask(a.dst, idx), bounds_mask(a.dst, next),
                                  element(d, idx), value, value2));
            out_.block("else", [&] {
                out_.line(fmt::format("if ({}) tl::atomic_add(&{}, {});", bounds_mask(a.dst, idx), element(d, idx), value));
                out_.line(fmt::format("if ({}) tl::atomic_add(&{}, {});", bounds_mask(a.dst, next), element(d, next), value2));
            });
        });
    });
    return true;
}

} // namespace tlc::codegen
