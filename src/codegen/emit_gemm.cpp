// Lowering of gemm: tensor cores (mma.sync per warp: m16n8k16 for f16/bf16 into f32 and f16 into
// f16, m16n8k32 for e4m3/e5m2 into f32), a per-element FMA loop for every other dtype; fragment
// operands are staged through shared scratch.
#include "codegen/cuda_names.h"
#include "codegen/kernel_emitter.h"
#include "support/check.h"

#include <fmt/format.h>

#include <functional>

namespace tlc::codegen {

// Writes a region of a fragment (or local tile) into shared scratch at `dst_ptr` with row pitch
// `pitch`, between barriers so the scratch is free before and complete after.
void KernelEmitter::emit_stage_to_scratch(const ir::Region& r, const std::string& dst_ptr, int64_t pitch) {
    const ir::Buffer& b = *r.buffer;
    auto shape = r.tile_shape();
    TLC_CHECK(shape.size() == 2, "gemm operands are 2-d tiles");
    out_.line(block_sync() + ";  // the staging buffer may still be read by a previous gemm");
    auto put = [&](const std::vector<std::string>& coords, const std::string& value) {
        out_.line(fmt::format("{}[{} * {} + {}] = {};", dst_ptr, parenthesized(coords[0]), pitch, parenthesized(coords[1]), value));
    };
    if (is_distributed(b)) {
        for_each_owned(b, Holders::First, [&](const std::vector<std::string>& coords, const std::string& slot) {
            put(coords, identifier(b.name) + "[" + slot + "]");
        });
    } else {
        for_each_element(shape, false, [&](const std::vector<std::string>& coords, const std::string&) {
            put(coords, element(b, region_indices(r, coords)));
        });
    }
    out_.line(block_sync() + ";");
}

// Whether an FMA-path gemm may run k outermost over the accumulator's slots of a thread: that
// order keeps the operand elements of every slot live during a k, on top of the kernel's spread
// fragments (their registers, counted at 4 bytes), which must stay under the register cap the
// launch bounds set (65536 / (threads · @min_blocks), at most 255); else one slot at a time.
bool KernelEmitter::k_outer_fits(const FragmentLayout& acc) const {
    int64_t live = acc.layout.registers() / 2;  // the slots' operand elements, about one per two slots
    for (const auto& [buffer, layout] : layouts_.fragments)
        if (layout.kind != LayoutKind::Replicated)
            live += (layout.layout.registers() * dtype_bytes(buffer->dtype) + 3) / 4;
    const int64_t blocks = std::max<int64_t>(kernel_.options.min_blocks, 1);
    const int64_t cap = std::min<int64_t>(255, 65536 / (kernel_.threads * blocks));
    return live + 32 <= cap;  // 32: addresses, indices and the other scalars
}

void KernelEmitter::emit_gemm(const ir::Gemm& g) {
    auto plan_it = layouts_.gemms.find(&g);
    GemmPlan plan = plan_it == layouts_.gemms.end() ? GemmPlan{} : plan_it->second;
    auto a_shape = g.a.tile_shape(), b_shape = g.b.tile_shape(), c_shape = g.c.tile_shape();
    int64_t M = c_shape[0], N = c_shape[1];
    int64_t K = g.transpose_a ? a_shape[0] : a_shape[1];
    const ir::Buffer& c = *g.c.buffer;
    std::string cname = identifier(c.name);

    // A shared operand is addressed in place; any other operand is staged into scratch where the
    // shared-memory plan put it.
    auto staging = plan_.scratch.find(&g);
    auto operand = [&](const ir::Region& r, bool is_a) -> std::pair<std::string, int64_t> {
        const ir::Buffer& b = *r.buffer;
        if (b.scope == ir::Scope::Shared) {
            std::vector<std::string> zero(r.tile_shape().size(), "0");
            std::string origin = element(b, region_indices(r, zero));
            return {"&" + origin, plan_.buffers.at(&b).row_pitch};
        }
        TLC_CHECK(staging != plan_.scratch.end(), "a gemm operand outside shared memory without planned staging");
        const ir::StagedOperand& st = is_a ? staging->second.a : staging->second.b;
        TLC_CHECK(st.rows == r.tile_shape()[0] && st.cols == r.tile_shape()[1], "staged operand shape differs from the plan");
        std::string ptr = fresh("staged");
        out_.line(fmt::format("{}* {} = reinterpret_cast<{}*>(tl_scratch + {});  // {} x {}, row pitch {}", cuda_type(b.dtype), ptr,
                              cuda_type(b.dtype), st.offset, st.rows, st.cols, st.pitch));
        emit_stage_to_scratch(r, ptr, st.pitch);
        return {ptr, st.pitch};
    };

    out_.block("", [&] {
        std::string in_type = cuda_type(g.a.buffer->dtype);
        // A compile-time pitch of whole 16-byte rows selects the ldmatrix path of the runtime.
        auto matrix = [&](const ir::Region& r, bool trans, const std::string& ptr, int64_t pitch) {
            std::string type = cuda_type(r.buffer->dtype);
            if ((pitch * dtype_bytes(r.buffer->dtype)) % 16 == 0)
                return fmt::format("tl::SharedMatrix<{}, {}, {}>{{{}}}", type, trans, pitch, ptr);
            return fmt::format("tl::SharedMatrix<{}, {}>{{{}, {}}}", type, trans, ptr, pitch);
        };
        if (plan.a_in_registers) {
            // A's registers are the mma A fragments: only B comes from shared memory.
            auto [b_ptr, b_pitch] = operand(g.b, false);
            const FragmentLayout* l = layout_of(c);
            if (g.clear)
                out_.line(fmt::format("for (int tl_s = 0; tl_s < {}; ++tl_s) {}[tl_s] = 0.0f;", slot_count(*l), cname));
            out_.line(fmt::format("tl::warp_gemm_mma_register_a<{}, {}, {}, {}, {}, {}>(  // A from the registers of `{}`", M, N,
                                  K, plan.warps_m, in_type, g.transpose_b, g.a.buffer->name));
            out_.indent();
            out_.line(fmt::format("{}, {}, {}, tl_tid);", cname, identifier(g.a.buffer->name), matrix(g.b, g.transpose_b, b_ptr, b_pitch)));
            out_.dedent();
            return;
        }
        auto [a_ptr, a_pitch] = operand(g.a, true);
        auto [b_ptr, b_pitch] = operand(g.b, false);
        if (plan.tensor_core) {
            const FragmentLayout* l = layout_of(c);
            if (g.clear)
                out_.line(fmt::format("for (int tl_s = 0; tl_s < {}; ++tl_s) {}[tl_s] = 0.0f;", slot_count(*l), cname));
            out_.line(fmt::format("tl::warp_gemm_mma<{}, {}, {}, {}, {}, {}, {}, {}>(", M, N, K, plan.warps_m, plan.warps_n,
                                  in_type, g.transpose_a, g.transpose_b));
            out_.indent();
            out_.line(fmt::format("{}, {},", cname, matrix(g.a, g.transpose_a, a_ptr, a_pitch)));
            out_.line(fmt::format("{}, tl_tid);", matrix(g.b, g.transpose_b, b_ptr, b_pitch)));
            out_.dedent();
            return;
        }
        // FMA path: each thread computes the accumulator elements it holds, the products summed in
        // the order of k.
        out_.line(fmt::format("const tl::SharedMatrix<{}, {}> tl_a{{{}, {}}};", in_type, g.transpose_a, a_ptr, a_pitch));
        out_.line(fmt::format("const tl::SharedMatrix<{}, {}> tl_b{{{}, {}}};", cuda_type(g.b.buffer->dtype), g.transpose_b, b_ptr, b_pitch));
        auto product = [&](const std::vector<std::string>& coords) {
            return fmt::format("{} * {}", cast_to(fmt::format("tl_a.at({}, tl_k)", coords[0]), g.a.buffer->dtype, c.dtype),
                               cast_to(fmt::format("tl_b.at(tl_k, {})", coords[1]), g.b.buffer->dtype, c.dtype));
        };
        // Each accumulator element this thread computes: the slots it holds of a spread one, every
        // element of a replicated one (which may live in local memory).
        auto each_target = [&](const std::function<void(const std::vector<std::string>&, const std::string&)>& f) {
            if (is_distributed(c)) {
                for_each_owned(c, Holders::Every, [&](const std::vector<std::string>& coords, const std::string& slot) {
                    f(coords, cname + "[" + slot + "]");
                });
            } else {
                for_each_element(c_shape, true, [&](const std::vector<std::string>& coords, const std::string&) {
                    f(coords, element(c, region_indices(g.c, coords)));
                });
            }
        };
        if (is_distributed(c) && !g.transpose_b && k_outer_fits(*layout_of(c))) {
            // A spread accumulator is in registers: one k at a time for all its slots, so that the
            // operand elements slots share are loaded once per k, B's along its rows. (A B stored
            // transposed runs along k instead: one element at a time walks both operands' rows.)
            if (g.clear)
                each_target([&](const std::vector<std::string>&, const std::string& target) {
                    out_.line(fmt::format("{} = {};", target, int_literal(0, c.dtype)));
                });
            out_.block(fmt::format("for (int tl_k = 0; tl_k < {}; ++tl_k)", K), [&] {
                each_target([&](const std::vector<std::string>& coords, const std::string& target) {
                    out_.line(fmt::format("{} += {};", target, product(coords)));
                });
            });
            return;
        }
        // One element at a time, summed in a register.
        std::string acc_type = cuda_type(c.dtype);
        each_target([&](const std::vector<std::string>& coords, const std::string& target) {
            out_.line(fmt::format("{} tl_sum = {};", acc_type, g.clear ? int_literal(0, c.dtype) : target));
            out_.line(fmt::format("for (int tl_k = 0; tl_k < {}; ++tl_k) tl_sum += {};", K, product(coords)));
            out_.line(fmt::format("{} = tl_sum;", target));
        });
    });
}

} // namespace tlc::codegen
