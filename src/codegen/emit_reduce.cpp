// Lowering of reduce and cumsum: per-thread partial results over the elements a thread holds, then
// a block all-reduce (warp shuffles + shared scratch) so every thread sees the result.
#include "codegen/cuda_names.h"
#include "codegen/kernel_emitter.h"
#include "schedule/infer_layouts.h"
#include "schedule/plan_shared_memory.h"
#include "support/check.h"

#include <fmt/format.h>

namespace tlc::codegen {

namespace {
const char* op_type(ir::ReduceOp op) {
    switch (op) {
    case ir::ReduceOp::Sum: return "tl::SumOp";
    case ir::ReduceOp::Max: return "tl::MaxOp";
    case ir::ReduceOp::Min: return "tl::MinOp";
    case ir::ReduceOp::AbsMax: return "tl::AbsMaxOp";
    }
    return "tl::SumOp";
}
} // namespace

bool KernelEmitter::emit_sliced_reduce(const ir::Reduce& r) {
    const ir::Buffer &src = *r.src.buffer, &dst = *r.dst.buffer;
    auto plan = schedule::sliced_reduction_plan(layouts_, r);
    if (!plan) return false;
    const FragmentLayout &from = *layout_of(src), &to = *layout_of(dst);
    std::string op = op_type(r.op);
    Dtype acc = schedule::reduce_partial_dtype(dst.dtype);
    std::string acc_type = cuda_type(acc);
    const int64_t outs = to.layout.registers();
    std::string masks;
    for (int m : plan->shuffle_xor) masks += (masks.empty() ? "" : ", ") + std::to_string(m);
    out_.line(fmt::format("// each thread folds its {} values of each of its {} results{}{}", plan->registers, outs,
                          masks.empty() ? "" : "; xor shuffles " + masks + " among the lanes that share one",
                          plan->warps > 1 ? fmt::format("; then across the {} warps that do", plan->warps) : ""));
    out_.block("", [&] {
        out_.line(fmt::format("{} tl_part[{}];", acc_type, outs));
        out_.line("#pragma unroll");
        out_.line(fmt::format("for (int tl_i = 0; tl_i < {}; ++tl_i) tl_part[tl_i] = {}::identity<{}>();", outs, op, acc_type));
        std::string s = fresh("s");
        out_.line("#pragma unroll");
        out_.block(fmt::format("for (int {0} = 0; {0} < {1}; ++{0})", s, slot_count(from)), [&] {
            if (std::string valid = slot_valid(from, s); !valid.empty()) out_.line(fmt::format("if (!({})) continue;", valid));
            if (std::string exists = exists_along(r.src, r.axis, slot_coords(src, s)[r.axis]); !exists.empty())
                out_.line(fmt::format("if (!({})) continue;  // past the bounded extent", exists));
            std::vector<int> kept;
            for (int a = 0; a < from.layout.rank(); ++a)
                if (a != r.axis) kept.push_back(a);
            std::string reg = sliced_register_index(from.layout, kept, s);
            out_.line(fmt::format("tl_part[{0}] = {1}::combine(tl_part[{0}], {1}::element({2}));", reg, op,
                                  cast_to(identifier(src.name) + "[" + s + "]", src.dtype, acc)));
        });
        if (!plan->shuffle_xor.empty()) {
            out_.line("#pragma unroll");
            out_.block(fmt::format("for (int tl_i = 0; tl_i < {}; ++tl_i)", outs), [&] {
                for (int m : plan->shuffle_xor)
                    out_.line(fmt::format("tl_part[tl_i] = tl::xor_combine<{}, {}>(tl_part[tl_i]);", op, m));
            });
        }
        if (plan->warps > 1) emit_cross_warp_reduce(from.layout, to, {r.axis}, r.op, *plan, outs, acc_type);
        out_.line("#pragma unroll");
        out_.block(fmt::format("for (int tl_i = 0; tl_i < {}; ++tl_i)", outs), [&] {
            std::string target = identifier(dst.name) + "[tl_i]";
            std::string value = r.clear ? "tl_part[tl_i]" : fmt::format("{}::combine({}, tl_part[tl_i])", op, cast_to(target, dst.dtype, acc));
            out_.line(fmt::format("{} = {};", target, cast_to(value, acc, dst.dtype)));
        });
    });
    return true;
}

// The warps that share a row exchange their partial results through the scratch: one thread per
// warp and row writes, all read back the other warps' parts. Where the row's lanes fill every warp
// (all 32 lanes of a warp hold the same rows) and the warps are a power of two, lane l reads part
// l % warps and log2(warps) butterfly shuffles combine them (every lane ends with the same value,
// the combine being commutative): one shared load per row instead of one per warp.
void KernelEmitter::emit_cross_warp_reduce(const ir::Layout& from, const FragmentLayout& to, const std::vector<int>& reduced_axes,
                                           ir::ReduceOp reduce_op, const ir::ReductionPlan& plan, int64_t outs,
                                           const std::string& acc_type) {
    std::string op = op_type(reduce_op);
    // This thread's place among the warps of its row, and whether it writes for its warp: the first
    // lane of the row's lanes, the first replica of the source.
    std::string warp_index, writer = first_replica_condition(from);
    int64_t place = 1, row_lanes = 1;
    int axis = 0;
    for (const ir::Layout::Mode& m : from.modes) {
        if (!std::count(reduced_axes.begin(), reduced_axes.end(), axis++)) continue;
        for (ir::LayoutFactor f : m.factors) {
            if (f.axis != ir::LayoutAxis::Thread || f.extent == 1) continue;
            int64_t lanes = f.stride >= 32 ? 1 : std::min<int64_t>(f.extent, 32 / f.stride);
            row_lanes *= lanes;
            if (lanes > 1) {
                std::string lane_digit = fmt::format("(tl_tid / {} % {})", f.stride, lanes);
                writer += (writer.empty() ? "" : " && ") + lane_digit + " == 0";
            }
            if (f.extent / lanes > 1) {
                int64_t stride = f.stride * lanes;
                std::string d = fmt::format("(tl_tid / {} % {})", stride, f.extent / lanes);
                warp_index += (warp_index.empty() ? "" : " + ") + (place == 1 ? d : fmt::format("{} * {}", d, place));
                place *= f.extent / lanes;
            }
        }
    }
    TLC_CHECK(place == plan.warps, "cross-warp reduce: the warp digits do not multiply to the plan's warps");
    // Warp w's part of result e is at w * run + tl::bank_swizzle(e): a run of the results (rounded
    // up to 32) per warp, swizzled so that a warp's lanes, whichever results they hold (one each,
    // or a chunk of consecutive ones each), touch different banks.
    std::string scratch = fmt::format("reinterpret_cast<{}*>(tl_scratch)", acc_type);
    const int64_t run = plan.exchange_slots(ir::element_count(to.layout.shape)) / plan.warps;
    auto slot_of = [&](const std::string& reg, const std::string& warp) {
        std::string e = flatten(layout_coordinates(to.layout, reg), to.layout.shape);
        return run < 32 ? fmt::format("{}[({}) * {} + {}]", scratch, warp, run, e)  // the swizzle leaves e < 32 in place
                        : fmt::format("{}[({}) * {} + tl::bank_swizzle({})]", scratch, warp, run, e);
    };
    std::string valid = slot_valid(to, "tl_i");
    out_.line(fmt::format("if ({}) {{", writer.empty() ? "true" : writer));
    out_.indent();
    out_.line("#pragma unroll");
    out_.block(fmt::format("for (int tl_i = 0; tl_i < {}; ++tl_i)", outs), [&] {
        if (!valid.empty()) out_.line(fmt::format("if (!({})) continue;", valid));
        out_.line(fmt::format("{} = tl_part[tl_i];", slot_of("tl_i", warp_index.empty() ? "0" : warp_index)));
    });
    out_.dedent();
    out_.line("}");
    out_.line(block_sync() + ";");
    bool butterfly = row_lanes == 32 && plan.warps <= 32 && (plan.warps & (plan.warps - 1)) == 0;
    out_.line("#pragma unroll");
    out_.block(fmt::format("for (int tl_i = 0; tl_i < {}; ++tl_i)", outs), [&] {
        if (!valid.empty()) out_.line(fmt::format("if (!({})) continue;", valid));  // warp-uniform when butterfly
        if (butterfly) {
            out_.line(fmt::format("tl_part[tl_i] = {};", slot_of("tl_i", fmt::format("tl_tid % {}", plan.warps))));
            for (int64_t mask = 1; mask < plan.warps; mask *= 2)
                out_.line(fmt::format("tl_part[tl_i] = tl::xor_combine<{}, {}>(tl_part[tl_i]);", op, mask));
            return;
        }
        out_.line(fmt::format("tl_part[tl_i] = {};", slot_of("tl_i", "0")));
        out_.line("#pragma unroll");
        out_.line(fmt::format("for (int tl_w = 1; tl_w < {}; ++tl_w) tl_part[tl_i] = {}::combine(tl_part[tl_i], {});",
                              plan.warps, op, slot_of("tl_i", "tl_w")));
    });
    out_.line(block_sync() + ";  // the scratch is free again");
}

// The partial results of a fragment accumulated in `parallel` loops (ir::PartialCombine): the
// threads that ran different iterations of one element combine their registers — xor shuffles,
// then at most one exchange across warps — so that every thread holding the element holds the
// result, as after a reduce.
void KernelEmitter::emit_combine_partials(const ir::PartialCombine& c) {
    const ir::Buffer& b = *c.buffer;
    const FragmentLayout& to = *layout_of(b);
    auto plan = c.loop.reduction_plan(c.axes);
    TLC_CHECK(plan && plan->shuffles_only, "infer-layouts combines partial results only over a power-of-two lane group");
    std::string op = op_type(c.op);
    Dtype acc = schedule::reduce_partial_dtype(b.dtype);
    std::string acc_type = cuda_type(acc);
    const int64_t outs = to.layout.registers();
    std::string masks;
    for (int m : plan->shuffle_xor) masks += (masks.empty() ? "" : ", ") + std::to_string(m);
    out_.line(fmt::format("// combine the partial results of `{}` ({}): {}{}", b.name, ir::reduce_op_name(c.op),
                          masks.empty() ? "no shuffles" : "xor shuffles " + masks + " among the lanes that share an element",
                          plan->warps > 1 ? fmt::format(", then across the {} warps that do", plan->warps) : ""));
    out_.block("", [&] {
        out_.line(fmt::format("{} tl_part[{}];", acc_type, outs));
        out_.line("#pragma unroll");
        out_.block(fmt::format("for (int tl_i = 0; tl_i < {}; ++tl_i)", outs), [&] {
            out_.line(fmt::format("tl_part[tl_i] = {};", cast_to(identifier(b.name) + "[tl_i]", b.dtype, acc)));
            for (int m : plan->shuffle_xor) out_.line(fmt::format("tl_part[tl_i] = tl::xor_combine<{}, {}>(tl_part[tl_i]);", op, m));
        });
        if (plan->warps > 1) emit_cross_warp_reduce(c.loop, to, c.axes, c.op, *plan, outs, acc_type);
        out_.line("#pragma unroll");
        out_.line(fmt::format("for (int tl_i = 0; tl_i < {}; ++tl_i) {}[tl_i] = {};", outs, identifier(b.name),
                              cast_to("tl_part[tl_i]", acc, b.dtype)));
    });
}

// A shared source reduced by the threads that hold the results (schedule::reduce_by_result_holders):
// each folds the reduced axis of each of its results from shared memory, with no exchange.
bool KernelEmitter::emit_reduce_by_result_holders(const ir::Reduce& r) {
    if (!schedule::reduce_by_result_holders(r, layouts_, kernel_.threads)) return false;
    const ir::Buffer &src = *r.src.buffer, &dst = *r.dst.buffer;
    const std::string op = op_type(r.op);
    const Dtype acc = schedule::reduce_partial_dtype(dst.dtype);
    const std::string acc_type = cuda_type(acc);
    const int64_t length = r.src.tile_shape()[static_cast<size_t>(r.axis)];
    const std::string end = tile_axis_count(r.src, r.axis);  // past a bounded extent nothing is folded
    auto fold = [&](std::vector<std::string> coords, const std::string& target) {
        coords.insert(coords.begin() + r.axis, "tl_k");
        out_.block("", [&] {
            out_.line(fmt::format("{} tl_acc = {}::identity<{}>();", acc_type, op, acc_type));
            out_.line("#pragma unroll 4");
            out_.line(fmt::format("for (int tl_k = 0; tl_k < {}; ++tl_k) tl_acc = {}::combine(tl_acc, {}::element({}));", end, op, op,
                                  cast_to(element(src, region_indices(r.src, coords)), src.dtype, acc)));
            std::string value = r.clear ? "tl_acc" : fmt::format("{}::combine({}, tl_acc)", op, cast_to(target, dst.dtype, acc));
            out_.line(fmt::format("{} = {};", target, cast_to(value, acc, dst.dtype)));
        });
    };
    out_.line(fmt::format("// each thread folds, for each result it holds, the {} elements of `{}` along axis {}, read in shared memory", length, src.name, r.axis));
    if (dst.scope == ir::Scope::Shared) {
        for_each_element(r.dst.tile_shape(), false, [&](const std::vector<std::string>& coords, const std::string&) {
            fold(coords, element(dst, region_indices(r.dst, coords)));
        });
    } else {
        for_each_owned(dst, Holders::Every, [&](const std::vector<std::string>& coords, const std::string& slot) {
            fold(coords, identifier(dst.name) + "[" + slot + "]");
        });
    }
    return true;
}

void KernelEmitter::emit_reduce(const ir::Reduce& r) {
    if (emit_sliced_reduce(r)) return;
    if (emit_reduce_by_result_holders(r)) return;
    const ir::Buffer &src = *r.src.buffer, &dst = *r.dst.buffer;
    auto src_shape = r.src.tile_shape();
    auto dst_shape = r.dst.tile_shape();
    int64_t n_out = ir::element_count(dst_shape);
    std::string op = op_type(r.op);
    // Partials in the dst dtype, widened to f32 for 16/8-bit floats (the scratch the plan reserved
    // holds them).
    Dtype acc = schedule::reduce_partial_dtype(dst.dtype);
    std::string acc_type = cuda_type(acc);
    // Output coordinates = source coordinates without the reduced axis.
    auto out_flat = [&](const std::vector<std::string>& coords) {
        std::vector<std::string> o;
        for (size_t d = 0; d < coords.size(); ++d)
            if (static_cast<int>(d) != r.axis) o.push_back(coords[d]);
        return flatten(o, dst_shape);
    };
    const bool cross_thread = is_distributed(src) || src.scope == ir::Scope::Shared;
    const int64_t length = src_shape.empty() ? 1 : src_shape[static_cast<size_t>(r.axis)];
    constexpr int64_t kRegisterResults = 32;  // partials a thread keeps in registers, unrolled
    bool folded_by_lines = false;             // each result folded by a group of threads, read back by all
    out_.block("", [&] {
        out_.line(fmt::format("{} tl_part[{}];", acc_type, n_out));
        out_.line("#pragma unroll");
        out_.line(fmt::format("for (int tl_i = 0; tl_i < {}; ++tl_i) tl_part[tl_i] = {}::identity<{}>();", n_out, op, acc_type));
        auto accumulate = [&](const std::vector<std::string>& coords, const std::string& value) {
            std::string idx = out_flat(coords);
            std::string exists = exists_along(r.src, r.axis, coords[r.axis]);  // past a bounded extent: left out
            out_.line(fmt::format("{3}tl_part[{0}] = {1}::combine(tl_part[{0}], {1}::element({2}));", idx, op, cast_to(value, src.dtype, acc),
                                  exists.empty() ? "" : "if (" + exists + ") "));
        };
        if (is_distributed(src)) {
            for_each_owned(src, Holders::First, [&](const std::vector<std::string>& coords, const std::string& slot) {
                accumulate(coords, identifier(src.name) + "[" + slot + "]");
            });
        } else if (src.scope == ir::Scope::Shared && n_out <= kRegisterResults && length >= kernel_.threads) {
            // A few long lines of a shared tile: the results outer, unrolled, so that each partial
            // stays in a register (a flat walk over the elements indexes them at run time, which
            // puts them in local memory); each line's elements spread over the threads.
            std::vector<int64_t> kept = src_shape;
            kept.erase(kept.begin() + r.axis);
            const std::string end = tile_axis_count(r.src, r.axis);
            out_.line("#pragma unroll");
            out_.block(fmt::format("for (int tl_o = 0; tl_o < {}; ++tl_o)", n_out), [&] {
                std::vector<std::string> coords = unflatten("tl_o", kept);
                coords.insert(coords.begin() + r.axis, "tl_k");
                out_.block(fmt::format("for (int tl_k = tl_tid; tl_k < {}; tl_k += {})", end, kernel_.threads), [&] {
                    out_.line(fmt::format("tl_part[tl_o] = {0}::combine(tl_part[tl_o], {0}::element({1}));", op,
                                          cast_to(element(src, region_indices(r.src, coords)), src.dtype, acc)));
                });
            });
        } else if (src.scope == ir::Scope::Shared && n_out > 1 && n_out <= kernel_.threads) {
            // More results than stay unrolled, or lines shorter than the block, at most one result
            // a thread: `group` threads fold each line (thread t: line t % n_out, every group-th
            // element), into the scratch, and every thread then reads the results back. A flat
            // walk over the elements would index the partials at run time (local memory) and
            // all-reduce each one over the block. The group balances its share of a line against
            // the partials each thread reads back.
            int64_t group = 1;  // at most a warp count: the scratch holds n_out partials a warp (plan-shared-memory)
            while (group * 2 * n_out <= kernel_.threads && group * 2 <= kernel_.threads / 32 &&
                   group * 2 * group * 2 * n_out <= length)
                group *= 2;
            std::vector<int64_t> kept = src_shape;
            kept.erase(kept.begin() + r.axis);
            const std::string end = tile_axis_count(r.src, r.axis);
            const std::string scratch = fmt::format("reinterpret_cast<{}*>(tl_scratch)", acc_type);
            out_.block(fmt::format("if (tl_tid < {})", n_out * group), [&] {
                out_.line(fmt::format("{} tl_fold = {}::identity<{}>();", acc_type, op, acc_type));
                std::vector<std::string> coords = unflatten(group == 1 ? "tl_tid" : fmt::format("(tl_tid % {})", n_out), kept);
                coords.insert(coords.begin() + r.axis, "tl_k");
                const std::string first = group == 1 ? "0" : fmt::format("tl_tid / {}", n_out);
                const std::string step = group == 1 ? "++tl_k" : fmt::format("tl_k += {}", group);
                out_.block(fmt::format("for (int tl_k = {}; tl_k < {}; {})", first, end, step), [&] {
                    out_.line(fmt::format("tl_fold = {0}::combine(tl_fold, {0}::element({1}));", op,
                                          cast_to(element(src, region_indices(r.src, coords)), src.dtype, acc)));
                });
                out_.line(fmt::format("{}[tl_tid] = tl_fold;", scratch));
            });
            out_.line(block_sync() + ";");
            out_.line("#pragma unroll");
            out_.block(fmt::format("for (int tl_i = 0; tl_i < {}; ++tl_i)", n_out), [&] {
                out_.line(fmt::format("tl_part[tl_i] = {}[tl_i];", scratch));
                if (group > 1) {
                    out_.line("#pragma unroll");
                    out_.line(fmt::format("for (int tl_g = 1; tl_g < {}; ++tl_g) tl_part[tl_i] = {}::combine(tl_part[tl_i], {}[tl_g * {} + tl_i]);",
                                          group, op, scratch, n_out));
                }
            });
            out_.line(block_sync() + ";  // the scratch is free again");
            folded_by_lines = true;
        } else {
            for_each_element(src_shape, !cross_thread, [&](const std::vector<std::string>& coords, const std::string&) {
                accumulate(coords, element(src, region_indices(r.src, coords)));
            });
        }
        if (cross_thread && !folded_by_lines)
            out_.line(fmt::format("tl::block_allreduce<{}, {}, {}>(tl_part, reinterpret_cast<{}*>(tl_scratch), tl_tid);", op, n_out,
                                  kernel_.threads, acc_type));
        // Every thread now holds the result; write it (shared destinations by one thread per element).
        bool every = !(dst.scope == ir::Scope::Shared || dst.scope == ir::Scope::Global);
        auto store = [&](const std::vector<std::string>& coords, const std::string& flat) {
            std::vector<std::string> idx = region_indices(r.dst, coords);
            std::string target = element(dst, idx);
            std::string value = r.clear ? "tl_part[" + flat + "]"
                                        : fmt::format("{}::combine({}, tl_part[{}])", op, cast_to(target, dst.dtype, acc), flat);
            out_.line(fmt::format("{} = {};", target, cast_to(value, acc, dst.dtype)));
        };
        if (dst_shape.empty()) {
            out_.block(every ? "" : "if (tl_tid == 0)", [&] { store({}, "0"); });
        } else if (is_distributed(dst)) {
            // A fragment spread over the threads (a shared source, schedule::reduce_by_result_holders
            // having declined): each thread keeps the results it holds.
            for_each_owned(dst, Holders::Every, [&](const std::vector<std::string>& coords, const std::string& slot) {
                std::string target = identifier(dst.name) + "[" + slot + "]";
                std::string part = "tl_part[" + flatten(coords, dst_shape) + "]";
                std::string value = r.clear ? part : fmt::format("{}::combine({}, {})", op, cast_to(target, dst.dtype, acc), part);
                out_.line(fmt::format("{} = {};", target, cast_to(value, acc, dst.dtype)));
            });
        } else {
            for_each_element(dst_shape, every, [&](const std::vector<std::string>& coords, const std::string& flat) {
                store(coords, flat);
            });
        }
    });
}

// `tl_before`: the sum of `tl_segment` over the threads before this one in its line of `per_line`
// consecutive threads — a shuffle scan within the warp, then the totals of the line's earlier warps
// (from warp `first_warp` on; each warp's last lane) through `partials`, one value per thread.
// `sync_first` waits before writing them, for a scratch the operation before may still read.
void KernelEmitter::emit_sum_before(const std::string& acc_type, const std::string& partials, int64_t per_line,
                                    const std::string& first_warp, bool sync_first) {
    out_.line(fmt::format("const {} tl_through = tl::warp_inclusive_scan_lines<{}>(tl_segment, tl_tid);", acc_type, per_line));
    if (sync_first) out_.line(block_sync() + ";  // the scratch may still be read by the operation before");
    out_.line(fmt::format("{}[tl_tid] = tl_through;", partials));
    out_.line(block_sync() + ";");
    out_.line(fmt::format("{} tl_before = tl_through - tl_segment;", acc_type));
    out_.line(fmt::format("for (int tl_w = {}; tl_w < tl_tid / 32; ++tl_w) tl_before += {}[tl_w * 32 + 31];", first_warp, partials));
}

// Scans the staged tile `tile` (row-major `shape`) in place along `axis`, with every thread: each
// line along the axis is cut into segments of consecutive elements, P threads per line (the
// threads divided among the lines, at most one per element); a thread sums its segment, the sums
// of the segments before it come from a shuffle scan within its warp and, for a line over several
// warps, the warps' totals through the scratch after the tile; then each thread rescans its segment
// from that sum. O(n / threads + log 32 + P / 32) steps per thread and two barriers (a serial sum
// of the P segment sums before it took up to P - 1 shared-memory reads a thread: 255 at 256 threads
// a line).
void KernelEmitter::emit_segmented_scan(const std::vector<int64_t>& shape, int axis, bool reverse, const std::string& tile,
                                        const std::string& acc_type) {
    const int64_t n = shape[static_cast<size_t>(axis)];
    const int64_t lines = ir::element_count(shape) / std::max<int64_t>(n, 1);
    int64_t inner = 1;  // the stride of the axis in the flattened tile
    for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
    const int64_t threads = kernel_.threads;
    const int64_t per_line = std::max<int64_t>(1, std::min(n, threads / std::max<int64_t>(lines, 1)));
    const int64_t seg = (n + per_line - 1) / per_line;
    // Rounds of lines per thread: more than one only when there are more lines than threads, and then
    // each line has one thread (split == false).
    const int64_t line_groups = (lines + threads / per_line - 1) / (threads / per_line);
    const bool split = per_line > 1;
    std::string partials = fmt::format("({} + {})", tile, ir::element_count(shape));
    // Element `k` of line `l` in the flattened tile.
    auto at = [&](const std::string& l, const std::string& k) {
        std::string k_text = reverse ? fmt::format("({} - 1 - {})", n, k) : k;
        if (inner == 1) return fmt::format("{}[{} * {} + {}]", tile, l, n, k_text);
        return fmt::format("{}[({} / {}) * {} + {} * {} + {} % {}]", tile, l, inner, n * inner, k_text, inner, l, inner);
    };
    out_.line(fmt::format("// cumsum: {} line(s) of {}, {} thread(s) per line, segments of {}", lines, n, per_line, seg));
    if (split) out_.line(fmt::format("const int tl_part = tl_tid % {};  // this thread's segment of its line", per_line));
    auto for_lines = [&](const std::function<void()>& body) {
        out_.block(fmt::format("for (int tl_g = 0; tl_g < {}; ++tl_g)", line_groups), [&] {
            out_.line(fmt::format("const int tl_line = tl_g * {} + tl_tid / {};", threads / per_line, per_line));
            out_.block(fmt::format("if (tl_line < {} && tl_tid < {})", lines, (threads / per_line) * per_line), body);
        });
    };
    const std::string lo = fmt::format("tl_part * {}", seg), hi = fmt::format("min({}, tl_part * {} + {})", n, seg, seg);
    if (split) {
        // When a line has several threads (one round of lines): each thread's segment sum, then the
        // sum of the segments before it in its line — a scan within the warp, plus the totals of the
        // line's earlier warps (each warp's last lane), shared through the scratch.
        out_.line(fmt::format("const int tl_my_line = tl_tid / {};", per_line));
        out_.line(fmt::format("{} tl_segment = 0;", acc_type));
        out_.block(fmt::format("if (tl_my_line < {})", lines), [&] {
            out_.line(fmt::format("for (int tl_k = {}; tl_k < {}; ++tl_k) tl_segment += {};", lo, hi, at("tl_my_line", "tl_k")));
        });
        emit_sum_before(acc_type, partials, per_line, fmt::format("tl_my_line * {} / 32", per_line), false);
    }
    for_lines([&] {
        out_.line(fmt::format("{} tl_sum = {};", acc_type, split ? "tl_before" : "0"));
        const std::string from = split ? lo : "0";
        const std::string to = split ? hi : std::to_string(n);
        out_.block(fmt::format("for (int tl_k = {}; tl_k < {}; ++tl_k)", from, to), [&] {
            out_.line(fmt::format("tl_sum += {};", at("tl_line", "tl_k")));
            out_.line(fmt::format("{} = tl_sum;", at("tl_line", "tl_k")));
        });
    });
    out_.line(block_sync() + ";");
}

// Each thread sums its run in registers, a shuffle scan within the warp and the totals of the
// warps before it (through the scratch) give the sum of the runs before it, and each register
// gets that plus its own prefix: no staging of the tile, three barriers.
void KernelEmitter::emit_register_scan(const ir::Cumsum& c, int64_t run, const std::string& acc_type, Dtype acc) {
    const ir::Buffer &src = *c.src.buffer, &dst = *c.dst.buffer;
    const int64_t n = c.src.tile_shape()[0], threads = layout_of(src)->layout.threads;
    const std::string partials = fmt::format("reinterpret_cast<{}*>(tl_scratch)", acc_type);
    const std::string exists = fmt::format("tl_tid * {} + tl_r < {}", run, n);
    out_.block("", [&] {
        out_.line(fmt::format("// cumsum in registers: thread t holds elements t * {0} .. t * {0} + {1}", run, run - 1));
        out_.line(fmt::format("{} tl_prefix[{}];", acc_type, run));
        out_.line(fmt::format("{} tl_segment = 0;", acc_type));
        out_.line("#pragma unroll");
        out_.block(fmt::format("for (int tl_r = 0; tl_r < {}; ++tl_r)", run), [&] {
            out_.line(fmt::format("if ({}) tl_segment += {};", exists, cast_to(identifier(src.name) + "[tl_r]", src.dtype, acc)));
            out_.line("tl_prefix[tl_r] = tl_segment;");
        });
        emit_sum_before(acc_type, partials, threads, "0", true);
        out_.line("#pragma unroll");
        out_.block(fmt::format("for (int tl_r = 0; tl_r < {}; ++tl_r)", run), [&] {
            out_.line(fmt::format("if ({}) {}[tl_r] = {};", exists, identifier(dst.name), cast_to("tl_before + tl_prefix[tl_r]", acc, dst.dtype)));
        });
        out_.line(block_sync() + ";  // the warp totals read before the scratch is used again");
    });
}

void KernelEmitter::emit_cumsum(const ir::Cumsum& c) {
    const ir::Buffer &src = *c.src.buffer, &dst = *c.dst.buffer;
    auto shape = c.src.tile_shape();
    Dtype acc = schedule::cumsum_partial_dtype(dst.dtype);
    std::string acc_type = cuda_type(acc);
    if (int64_t run = schedule::register_scan_run(c, layouts_)) return emit_register_scan(c, run, acc_type, acc);
    if (ir::is_per_thread(c)) {
        // `local` to `local`: each thread scans its own tile, one running sum per line along the
        // axis; each element is read before it is written, so `dst` may be `src`.
        std::vector<int64_t> lines = shape;
        lines.erase(lines.begin() + c.axis);
        const int64_t n = shape[c.axis];
        auto scan_line = [&](std::vector<std::string> coords) {
            coords.insert(coords.begin() + c.axis, c.reverse ? fmt::format("{} - tl_k", n - 1) : "tl_k");
            out_.line(fmt::format("{} tl_sum = 0;", acc_type));
            out_.block(fmt::format("for (int tl_k = 0; tl_k < {}; ++tl_k)", n), [&] {
                std::string value = cast_to(element(src, region_indices(c.src, coords)), src.dtype, acc);
                if (std::string exists = exists_along(c.src, c.axis, coords[c.axis]); !exists.empty())
                    value = fmt::format("({} ? {} : {}(0))", exists, value, acc_type);  // past the bounded extent: 0
                out_.line(fmt::format("tl_sum += {};", value));
                out_.line(fmt::format("{} = {};", element(dst, region_indices(c.dst, coords)), cast_to("tl_sum", acc, dst.dtype)));
            });
        };
        if (lines.empty())
            out_.block("", [&] { scan_line({}); });
        else
            out_.block(fmt::format("for (int tl_l = 0; tl_l < {}; ++tl_l)", ir::element_count(lines)),
                       [&] { scan_line(unflatten("tl_l", lines)); });
        return;
    }
    std::string tile = fmt::format("reinterpret_cast<{}*>(tl_scratch)", acc_type);
    out_.block("", [&] {
        // Stage the source tile where every thread can read it.
        out_.line(block_sync() + ";");
        auto put = [&](const std::vector<std::string>& coords, const std::string& value) {
            std::string v = cast_to(value, src.dtype, acc);
            if (std::string exists = exists_along(c.src, c.axis, coords[c.axis]); !exists.empty())
                v = fmt::format("{} ? {} : {}(0)", exists, v, acc_type);  // past the bounded extent: 0
            out_.line(fmt::format("{}[{}] = {};", tile, flatten(coords, shape), v));
        };
        if (is_distributed(src)) {
            for_each_owned(src, Holders::First, [&](const std::vector<std::string>& coords, const std::string& slot) {
                put(coords, identifier(src.name) + "[" + slot + "]");
            });
        } else {
            for_each_element(shape, false, [&](const std::vector<std::string>& coords, const std::string&) {
                put(coords, element(src, region_indices(c.src, coords)));
            });
        }
        out_.line(block_sync() + ";");
        emit_segmented_scan(shape, c.axis, c.reverse, tile, acc_type);
        // The staged tile now holds the scan: each thread reads the elements it writes.
        auto scan = [&](const std::vector<std::string>& coords, const std::string& target) {
            out_.line(fmt::format("{} = {};", target, cast_to(fmt::format("{}[{}]", tile, flatten(coords, shape)), acc, dst.dtype)));
        };
        if (is_distributed(dst)) {
            for_each_owned(dst, Holders::Every, [&](const std::vector<std::string>& coords, const std::string& slot) {
                scan(coords, identifier(dst.name) + "[" + slot + "]");
            });
        } else {
            bool every = !(dst.scope == ir::Scope::Shared || dst.scope == ir::Scope::Global);
            for_each_element(shape, every, [&](const std::vector<std::string>& coords, const std::string&) {
                std::vector<std::string> idx = region_indices(c.dst, coords);
                std::string target = element(dst, idx);
                if (dst.scope == ir::Scope::Global) {
                    out_.block("if (" + bounds_mask(c.dst, idx) + ")", [&] { scan(coords, target); });
                } else {
                    scan(coords, target);
                }
            });
        }
        out_.line(block_sync() + ";");
    });
}

} // namespace tlc::codegen
