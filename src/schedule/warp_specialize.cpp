// Pass `warp-specialize`: rewrites a pipelined main loop whose gemms read tiles it loads into a
// WarpSpecializedLoop (see warp_specialize.h for the conditions and the resulting protocol).
#include "schedule/warp_specialize.h"

#include "schedule/plan_shared_memory.h"

#include "ir/walk.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

namespace tlc::schedule {

namespace {

using Why = std::optional<std::string>; // the failed condition, or nullopt when it holds

std::vector<ir::StmtPtr> flatten(const ir::StmtPtr& s) {
    if (!s) return {};
    if (auto* seq = s->as<ir::Seq>()) return seq->stmts;
    return {s};
}

int count_pipelined(const ir::StmtPtr& s) {
    if (!s) return 0;
    int n = 0;
    if (auto* seq = s->as<ir::Seq>())
        for (auto& c : seq->stmts) n += count_pipelined(c);
    if (auto* f = s->as<ir::For>()) n += (f->loop_kind == ir::LoopKind::Pipelined) + count_pipelined(f->body);
    if (auto* i = s->as<ir::If>()) n += count_pipelined(i->then_body) + count_pipelined(i->else_body);
    return n;
}

Why check_copy(const ir::Copy& c) {
    const ir::Buffer& src = *c.src.buffer;
    const ir::Buffer& dst = *c.dst.buffer;
    if (src.scope != ir::Scope::Global || dst.scope != ir::Scope::Shared)
        return fmt::format("the loop copies `{}` into `{}`, not global into shared", src.name, dst.name);
    if (ir::tma_row_axis(c.src) < 0)
        return fmt::format("the copy from `{}` is not a slice of two ranged axes, the last one of them, in a tensor of at most "
                           "5 axes (a TMA box)",
                           src.name);
    if (!c.dst.is_whole()) return fmt::format("the copy into `{}` does not fill the whole tile", dst.name);
    if (src.dtype != dst.dtype || (src.dtype != Dtype::F16 && src.dtype != Dtype::BF16 && !is_float8(src.dtype)))
        return fmt::format("the copy into `{}` is not f16, bf16 or an 8-bit float without conversion", dst.name);
    if (c.pad) return fmt::format("the copy into `{}` has a pad value (TMA fills with zeros)", dst.name);
    if (c.src.gathers_rows()) return fmt::format("the copy into `{}` gathers rows (a TMA box is rectangular)", dst.name);
    if (c.src.gathers()) return fmt::format("the copy into `{}` reads an index from a tensor (TMA loads here take computed coordinates only)", dst.name);
    if (!c.src.tile_limits().empty())
        return fmt::format("the copy into `{}` has a bounded extent (a TMA box has a constant shape)", dst.name);
    int64_t rows = dst.const_shape[0], cols = dst.const_shape[1];
    if (rows > 256) return fmt::format("tile `{}` has {} rows (a TMA box has at most 256)", dst.name, rows);
    if (!tile_swizzle_bytes(dst.dtype, cols))
        return fmt::format("tile `{}` has rows of {} bytes, not a multiple of 32 (the narrowest swizzle)", dst.name,
                           cols * dtype_bytes(dst.dtype));
    return std::nullopt;
}

Why check_gemm(const ir::Gemm& g, int warpgroups) {
    if (!g.a.is_whole() || !g.b.is_whole()) return std::string("the gemm's operands are not whole tiles");
    const Dtype at = g.a.buffer->dtype, bt = g.b.buffer->dtype;
    const bool f8 = is_float8(at) && is_float8(bt);
    if (at != bt && !f8) return std::string("the gemm's operands have different dtypes");
    if (f8 && (g.transpose_a || !g.transpose_b))
        return std::string("8-bit float wgmma operands must be K-major: A stored [M, K] and B stored [N, K] (transpose_b = true)");
    const ir::Buffer& c = *g.c.buffer;
    if (c.scope != ir::Scope::Fragment || c.dtype != Dtype::F32 || !g.c.is_whole() || c.rank() != 2)
        return std::string("the gemm's accumulator is not a whole f32 fragment");
    int64_t m = c.const_shape[0], n = c.const_shape[1];
    auto as = g.a.buffer->const_shape, bs = g.b.buffer->const_shape;
    int64_t k = g.transpose_a ? as[0] : as[1];
    // Each consumer warpgroup runs m64 wgmmas over slabs of 64 rows: slab t of warpgroup w holds
    // rows 64 * (t * warpgroups + w) onwards; with too few rows for that, every warpgroup runs
    // every slab over its share of the columns (wgmma_splits_columns).
    const bool by_columns = wgmma_splits_columns(m, warpgroups);
    if (m % (64 * warpgroups) && !by_columns)
        return warpgroups == 1
                   ? fmt::format("the accumulator has {} rows; wgmma with one consumer warpgroup needs a multiple of 64", m)
                   : fmt::format("the accumulator has {} rows; wgmma with {} consumer warpgroups needs a multiple of 64 "
                                 "(split by columns over the warpgroups) or of {} (by 64-row slabs)",
                                 m, warpgroups, 64 * warpgroups);
    const int64_t n_each = by_columns ? n / warpgroups : n; // the columns one warpgroup's wgmmas compute
    if (by_columns && (n % (8 * warpgroups)))
        return fmt::format("the {}-row accumulator is split by columns over {} warpgroups, but its {} columns are not a "
                           "multiple of {}",
                           m, warpgroups, n, 8 * warpgroups);
    if (n % 8 || n_each > 256) return fmt::format("the accumulator has {} columns (wgmma: a multiple of 8, at most 256)", n);
    if (int64_t per_thread = m * n / (128 * warpgroups); per_thread > kMaxWgmmaAccumulators)
        return fmt::format("the {} x {} accumulator needs {} registers per consumer thread (at most {}); use more "
                           "consumer warpgroups (threads(256)) or a smaller tile",
                           m, n, per_thread, kMaxWgmmaAccumulators);
    // One wgmma takes 32 bytes of K. A K-major operand's rows are cut into swizzle boxes of 128, 64
    // or 32 bytes (tile_swizzle_bytes); an MN-major operand's rows into 128-byte boxes.
    if (int64_t step = 32 / dtype_bytes(at); k % step) return fmt::format("the gemm's k extent {} is not a multiple of {}", k, step);
    const int64_t row = swizzle_row_elements(at);
    if (!g.transpose_b && n_each % row)
        return fmt::format("the accumulator has {} columns{}, not a multiple of {} (B is MN-major: whole 128-byte rows)", n_each,
                           by_columns ? " per warpgroup" : "", row);
    if (g.transpose_a && m % row)
        return fmt::format("A's M extent is not a multiple of {} (A is MN-major: whole 128-byte rows)", row);
    return std::nullopt;
}

// Whether the trip's first gemm can be issued one trip early (WarpSpecializedLoop::
// issue_first_gemm_early): it is a wgmma gemm of two loaded tiles, a later statement uses its
// result, and every statement after the last such use is a wgmma gemm that leaves that result
// alone, one of them reading a tile of the ring (it then releases the stage). Its accumulator is
// free once that last use is done, so trip t + 1's gemm may overwrite it while trip t's trailing
// gemms run. Not with tiles the consumers write (loop.written): the barriers around their writes
// would fall among the trailing gemms, and the next trip's write while they run.
bool issues_first_gemm_early(const ir::WarpSpecializedLoop& loop) {
    if (!loop.written.empty()) return false;
    const std::vector<ir::StmtPtr>& stmts = loop.statements();
    const std::vector<const ir::Gemm*> wgmmas = loop.wgmma_gemms();
    auto is_wgmma = [&](const ir::Stmt& s) {
        return std::find(wgmmas.begin(), wgmmas.end(), s.as<ir::Gemm>()) != wgmmas.end() && s.as<ir::Gemm>();
    };
    if (stmts.size() < 3 || !is_wgmma(*stmts[0])) return false;
    const ir::Gemm& first = *stmts[0]->as<ir::Gemm>();
    if (first.a.buffer->scope != ir::Scope::Shared) return false;
    const size_t tail_begin = loop.trailing_begin();
    if (tail_begin == 1 || tail_begin == stmts.size()) return false;
    bool reads_ring = false;
    for (size_t i = tail_begin; i < stmts.size(); ++i) {
        if (!is_wgmma(*stmts[i])) return false;
        const ir::Gemm& g = *stmts[i]->as<ir::Gemm>();
        reads_ring |= loop.reads_ring(g);
    }
    return reads_ring;
}

// Splits the loads of a software-pipelined trip into two rings (WarpSpecializedLoop::first_stages)
// when some tiles are read by the first gemm alone and others by a later statement: the first
// gemm's tiles are released as soon as it retires, so the producer refills them a trip sooner and
// that gemm never waits for the other tiles (attention's Q Kᵀ waits for K only, not for V).
// With the loop's stages in each ring, the loads keep the lookahead that one ring gets only with a
// stage more (the stage the consumers hold while the trailing gemms run).
void split_rings(ir::WarpSpecializedLoop& loop) {
    const std::vector<ir::StmtPtr>& stmts = loop.statements();
    const ir::Gemm& first = *stmts.front()->as<ir::Gemm>();
    auto read_later = [&](const ir::Buffer* b) {
        for (size_t i = 1; i < stmts.size(); ++i)
            if (ir::buffer_uses(stmts[i]).touches(b)) return true;
        return false;
    };
    size_t first_only = 0;
    for (ir::TmaLoad& ld : loop.loads) {
        const ir::Buffer* b = ld.dst.get();
        ld.first_ring = (first.a.buffer.get() == b || first.b.buffer.get() == b) && !read_later(b);
        first_only += ld.first_ring;
    }
    // The first gemm must read no tile of the main ring (it would wait for both rings then).
    bool first_reads_main = false;
    for (const ir::TmaLoad& ld : loop.loads)
        first_reads_main |= !ld.first_ring && (first.a.buffer == ld.dst || first.b.buffer == ld.dst);
    if (first_only == 0 || first_only == loop.loads.size() || first_reads_main) {
        for (ir::TmaLoad& ld : loop.loads) ld.first_ring = false;
        return;
    }
    loop.first_stages = loop.stages;
}

// Whether `s` reads `tile` only element by element (loads in expressions), never as a region
// (a copy, a reduce, a gemm operand) and never writes it.
bool reads_only_elements(const ir::StmtPtr& s, const ir::Buffer* tile) {
    bool ok = true;
    std::function<void(const ir::StmtPtr&)> visit = [&](const ir::StmtPtr& st) {
        ir::for_each_child(*st, {
            .expr = [](const ir::ExprPtr&) {},
            .region = [&](const ir::Region& r, ir::Access) { ok &= r.buffer.get() != tile; },
            .store = [&](const ir::Store& store) { ok &= store.buffer.get() != tile; },
            .stmt = visit,
        });
    };
    visit(s);
    return ok;
}

// Whether the copy `c`, a top-level statement of the trip (`trip`), writes a tile that wgmma
// gemms of the trip may read (ir::WarpSpecializedLoop::written): a whole 16-bit tile of wgmma's
// swizzled layout written whole from a fragment, first in the trip, by no other statement, and
// otherwise read only by gemms or element by element (codegen addresses each element's swizzled
// place; a region copy or reduce of it would not).
Why check_written_operand(const ir::Copy& c, const std::vector<ir::StmtPtr>& trip) {
    const ir::Buffer& dst = *c.dst.buffer;
    if (!c.src.is_whole() || !c.dst.is_whole()) return fmt::format("the copy into `{}` does not write the whole tile from a whole fragment", dst.name);
    if (dst.dtype != Dtype::F16 && dst.dtype != Dtype::BF16) return fmt::format("tile `{}` is not f16 or bf16", dst.name);
    if (dst.rank() != 2 || !tile_swizzle_bytes(dst.dtype, dst.const_shape[1]))
        return fmt::format("tile `{}` is not a 2-d tile with rows of a multiple of 32 bytes (wgmma's swizzled layout)", dst.name);
    bool written = false;
    for (const ir::StmtPtr& s : trip) {
        if (s.get() == &c) {
            written = true;
            continue;
        }
        const ir::BufferUses u = ir::buffer_uses(s);
        if (!u.touches(&dst)) continue;
        if (!written) return fmt::format("the trip reads `{}` before it writes it", dst.name);
        if (u.writes.count(&dst)) return fmt::format("the trip writes `{}` more than once", dst.name);
        if (s->as<ir::Gemm>()) continue; // an operand (an accumulator would be a write)
        if (!reads_only_elements(s, &dst))
            return fmt::format("tile `{}` is read other than by gemms or element by element", dst.name);
    }
    return std::nullopt;
}

struct Match {
    size_t loop_index = 0;
    ir::WarpSpecializedLoop* loop = nullptr;
    ir::StmtPtr replacement;
    std::vector<ir::StmtPtr> top; // the kernel body's statements, the copies made once marked
    std::vector<ir::WarpSpecialization::ConsumerCopy> consumer_copies;
    std::vector<ir::WarpSpecialization::ConsumerCopy> mma_sync_gemms;
};

Why match(const ir::Kernel& kernel, Match& out) {
    if (!kernel.options.tma) return std::string("@no_tma");
    if (!kernel.options.warp_specialize) return std::string("@no_warp_specialize");
    if (!kernel.options.pipeline) return std::string("@no_pipeline");
    if (!kernel.options.async_copy) return std::string("@no_async_copy");
    if (kernel.threads != 128 && kernel.threads != 256 && kernel.threads != 384)
        return fmt::format("threads({}): the Hopper path runs one to three consumer warpgroups (threads(128), threads(256) or "
                           "threads(384))",
                           kernel.threads);
    int warpgroups = kernel.threads / 128;
    if (count_pipelined(kernel.body) != 1) return std::string("the kernel does not have exactly one pipelined loop");

    auto top = flatten(kernel.body);
    size_t at = top.size();
    for (size_t i = 0; i < top.size(); ++i)
        if (auto* f = top[i]->as<ir::For>(); f && f->loop_kind == ir::LoopKind::Pipelined) at = i;
    if (at == top.size()) return std::string("the pipelined loop is not at the top level of the kernel body");
    auto* loop = top[at]->as<ir::For>();
    if (loop->options.pipeline == false || loop->options.async_copy == false)
        return std::string("@no_pipeline / @no_async_copy on the loop");
    if (loop->options.stages < 2) return std::string("the loop has fewer than 2 stages");

    // The trip's leading `let`s and copies, then the rest (the consumers' part). A copy that TMA
    // can make goes to the producer when its tile is read only by gemms of such tiles (wgmma
    // reads the swizzled tiles in place); any other copy stays with the consumers, synchronous.
    // A copy before the loop into a tile that only those gemms read is made by TMA once per tile.
    std::vector<ir::StmtPtr> lets, head_copies, rest;
    for (const ir::StmtPtr& s : flatten(loop->body)) {
        if (rest.empty() && s->kind == ir::StmtKind::Let) lets.push_back(s);
        else if (rest.empty() && s->kind == ir::StmtKind::Copy) head_copies.push_back(s);
        else rest.push_back(s);
    }
    std::set<const ir::Buffer*> candidates, once;
    // Why a tile's copy is not a TMA load: the copy itself (check_copy), else the tile's uses.
    std::map<const ir::Buffer*, std::string> copy_why, use_why;
    for (const ir::StmtPtr& s : head_copies) {
        auto* c = s->as<ir::Copy>();
        if (Why why = check_copy(*c)) copy_why[c->dst.buffer.get()] = *why;
        else if (!candidates.insert(c->dst.buffer.get()).second)
            return fmt::format("tile `{}` is loaded twice in one trip", c->dst.buffer->name);
    }
    // Copies before the loop: a tile copied once, used nowhere else outside the loop.
    auto uses_outside_loop = [&](const ir::Buffer* b, const ir::Stmt* except) {
        for (size_t i = 0; i < top.size(); ++i)
            if (i != at && top[i].get() != except && ir::buffer_uses(top[i]).touches(b)) return true;
        return false;
    };
    for (size_t i = 0; i < at; ++i) {
        auto* c = top[i]->as<ir::Copy>();
        if (!c || c->src.buffer->scope != ir::Scope::Global || c->dst.buffer->scope != ir::Scope::Shared) continue;
        const ir::Buffer* dst = c->dst.buffer.get();
        if (!check_copy(*c) && !candidates.count(dst) && !uses_outside_loop(dst, c)) candidates.insert(dst), once.insert(dst);
    }
    // Tiles the consumers write in the trip for wgmma gemms to read (check_written_operand), used
    // nowhere outside the loop.
    std::set<const ir::Buffer*> written;
    std::map<const ir::Buffer*, std::string> written_why;
    for (const ir::StmtPtr& s : rest) {
        auto* c = s->as<ir::Copy>();
        if (!c || c->src.buffer->scope != ir::Scope::Fragment || c->dst.buffer->scope != ir::Scope::Shared) continue;
        const ir::Buffer* dst = c->dst.buffer.get();
        if (Why why = check_written_operand(*c, rest)) written_why[dst] = *why;
        else if (uses_outside_loop(dst, nullptr)) written_why[dst] = fmt::format("tile `{}` is also used outside the pipelined loop", dst->name);
        else written.insert(dst);
    }
    auto operand_tile = [&](const ir::Buffer* b) { return candidates.count(b) || written.count(b); };
    // A fragment A operand (wgmma's register form) is a 16-bit copy, made in the trip, of the
    // accumulator of a gemm of two such tiles: the accumulator's layout is then the A operand's.
    auto register_operand = [&](const ir::Gemm& g) {
        const ir::Buffer* a = g.a.buffer.get();
        if (a->scope != ir::Scope::Fragment || dtype_bytes(a->dtype) != 2 || a->dtype != g.b.buffer->dtype || g.transpose_a ||
            a->rank() != 2 || !g.a.is_whole() || a->const_shape[0] % (64 * warpgroups))
            return false;
        for (const ir::StmtPtr& s : rest) {
            auto* c = s->as<ir::Copy>();
            if (!c || c->dst.buffer.get() != a || !c->dst.is_whole() || c->src.buffer->scope != ir::Scope::Fragment || !c->src.is_whole() ||
                c->src.buffer->const_shape != a->const_shape)
                continue;
            for (const ir::StmtPtr& t : rest)
                if (auto* acc = t->as<ir::Gemm>(); acc && acc->c.buffer == c->src.buffer && operand_tile(acc->a.buffer.get()) &&
                                                   operand_tile(acc->b.buffer.get()))
                    return true;
        }
        return false;
    };
    // Drop the candidates read other than as an operand of a wgmma gemm, until none is.
    auto wgmma_of = [&](const ir::Stmt& st) -> const ir::Gemm* {
        auto* g = st.as<ir::Gemm>();
        return g && operand_tile(g->b.buffer.get()) && (operand_tile(g->a.buffer.get()) || register_operand(*g)) ? g : nullptr;
    };
    for (bool changed = true; changed;) {
        changed = false;
        for (const ir::StmtPtr& s : rest) {
            const ir::Gemm* g = wgmma_of(*s);
            // A written tile is laid out for wgmma: every gemm that reads it must run on wgmma.
            if (auto* other = s->as<ir::Gemm>(); other && !g)
                for (const ir::Buffer* b : {other->a.buffer.get(), other->b.buffer.get()})
                    if (written.erase(b)) {
                        written_why[b] = fmt::format("a gemm reads `{}` with an operand that wgmma cannot read", b->name);
                        changed = true;
                    }
            ir::BufferUses u = ir::buffer_uses(s);
            for (auto it = candidates.begin(); it != candidates.end();) {
                const bool operand = g && (g->a.buffer.get() == *it || g->b.buffer.get() == *it) && g->c.buffer.get() != *it;
                if (u.touches(*it) && !operand) {
                    use_why[*it] = fmt::format("tile `{}` is used other than as an operand of a gemm of loaded tiles", (*it)->name);
                    once.erase(*it);
                    it = candidates.erase(it), changed = true;
                } else {
                    ++it;
                }
            }
        }
    }
    std::vector<ir::TmaLoad> loads;
    std::vector<ir::StmtPtr> consumer;
    out.consumer_copies.clear();
    for (const ir::StmtPtr& s : head_copies) {
        auto* c = s->as<ir::Copy>();
        const ir::Buffer* dst = c->dst.buffer.get();
        if (candidates.count(dst)) {
            loads.push_back({c->src, c->dst.buffer, c->range});
            continue;
        }
        consumer.push_back(s);
        if (c->src.buffer->scope == ir::Scope::Global && dst->scope == ir::Scope::Shared)
            out.consumer_copies.push_back({c->range, dst->name, copy_why.count(dst) ? copy_why.at(dst) : use_why.at(dst)});
    }
    consumer.insert(consumer.end(), rest.begin(), rest.end());
    std::vector<const ir::Gemm*> gemms;
    for (const ir::StmtPtr& s : consumer)
        if (const ir::Gemm* g = wgmma_of(*s)) gemms.push_back(g);
    if (gemms.empty()) {
        // Why the trip's first gemm does not run on wgmma: an operand's copy, an operand that is no
        // tile the loop loads, or an operand's other uses.
        for (const ir::StmtPtr& s : consumer) {
            auto* g = s->as<ir::Gemm>();
            if (!g) continue;
            for (const ir::Buffer* b : {g->a.buffer.get(), g->b.buffer.get()})
                if (auto it = copy_why.find(b); it != copy_why.end()) return it->second;
            for (const ir::Buffer* b : {g->a.buffer.get(), g->b.buffer.get()})
                if (auto it = written_why.find(b); it != written_why.end()) return it->second;
            for (const ir::Buffer* b : {g->a.buffer.get(), g->b.buffer.get()}) {
                bool copied = false;
                for (const ir::StmtPtr& h : head_copies) copied |= h->as<ir::Copy>()->dst.buffer.get() == b;
                if (!copied)
                    return fmt::format("the gemm's operand `{}` is not a shared tile the loop loads (here wgmma reads B, and "
                                       "A unless it is a 16-bit copy of a wgmma accumulator, from shared tiles that TMA "
                                       "loads in the loop or once before it, or that the trip writes whole from a fragment)",
                                       b->name);
            }
            for (const ir::Buffer* b : {g->a.buffer.get(), g->b.buffer.get()})
                if (auto it = use_why.find(b); it != use_why.end()) return it->second;
        }
        return std::string("the pipelined loop has no gemm of two shared tiles it loads");
    }
    if (loads.empty()) return std::string("the pipelined loop loads no tile by TMA");
    for (auto it = once.begin(); it != once.end();) { // loaded once only when a wgmma reads it
        bool read = false;
        for (const ir::Gemm* g : gemms) read |= g->a.buffer.get() == *it || g->b.buffer.get() == *it;
        if (!read) candidates.erase(*it);
        it = read ? std::next(it) : once.erase(it);
    }
    for (const ir::Gemm* g : gemms)
        if (Why why = check_gemm(*g, warpgroups)) return why;
    // The gemms left to mma.sync, and why (remark R0012): a register A operand wgmma cannot read
    // first (its tiles are dropped because of it), then the operands' own reasons.
    out.mma_sync_gemms.clear();
    for (const ir::StmtPtr& s : consumer) {
        auto* g = s->as<ir::Gemm>();
        if (!g || wgmma_of(*s)) continue;
        const ir::Buffer& a = *g->a.buffer;
        std::string why;
        if (a.scope == ir::Scope::Fragment && a.rank() == 2 && a.const_shape[0] % (64 * warpgroups))
            why = fmt::format("wgmma reads a register A operand in 64-row slabs, one per consumer warpgroup, and `{}` has {} "
                              "rows, not a multiple of {}",
                              a.name, a.const_shape[0], 64 * warpgroups);
        else if (a.scope == ir::Scope::Fragment && !register_operand(*g))
            why = fmt::format("its A operand `{}` is a fragment but not a 16-bit copy of a wgmma accumulator", a.name);
        for (const ir::Buffer* b : {g->a.buffer.get(), g->b.buffer.get()})
            for (const auto* reasons : {&written_why, &use_why, &copy_why})
                if (auto it = reasons->find(b); why.empty() && it != reasons->end()) why = it->second;
        if (why.empty()) why = "an operand is not a shared tile the loop loads by TMA or writes whole from a fragment";
        out.mma_sync_gemms.push_back({g->range, g->c.buffer->name, why});
    }
    // Each wgmma gemm is issued as early as it can be: before the statements ahead of it that
    // leave its accumulator and its register operand alone (e.g. loads of scales), which then run
    // while its wgmmas do.
    for (size_t i = 0; i < consumer.size(); ++i) {
        auto* g = consumer[i]->as<ir::Gemm>();
        if (!g || std::find(gemms.begin(), gemms.end(), g) == gemms.end()) continue;
        const ir::Buffer* register_a = g->a.buffer->scope == ir::Scope::Fragment ? g->a.buffer.get() : nullptr;
        for (size_t j = i; j > 0; --j) {
            const ir::StmtPtr& before = consumer[j - 1];
            const ir::BufferUses u = ir::buffer_uses(before);
            if (before->as<ir::Gemm>() || before->kind == ir::StmtKind::Let || u.touches(g->c.buffer.get()) ||
                (register_a && u.touches(register_a)) || u.writes.count(g->a.buffer.get()) || u.writes.count(g->b.buffer.get()))
                break;
            std::swap(consumer[j - 1], consumer[j]);
        }
    }

    // The tiles loaded in the loop belong to the loop alone.
    for (const ir::Buffer* b : candidates)
        if (!once.count(b) && uses_outside_loop(b, nullptr)) return fmt::format("tile `{}` is also used outside the pipelined loop", b->name);

    // The producer evaluates the `let`s before the loop that the trip count and the loads'
    // coordinates read; they must not read on-chip memory, which only the consumers hold.
    std::vector<ir::ExprPtr> producer_exprs{loop->extents[0]};
    for (const ir::TmaLoad& ld : loads) ir::for_each_region_expr(ld.src, [&](const ir::ExprPtr& e) { producer_exprs.push_back(e); });
    for (size_t i = 0; i < at; ++i)
        if (auto* c = top[i]->as<ir::Copy>(); c && once.count(c->dst.buffer.get()))
            ir::for_each_region_expr(c->src, [&](const ir::ExprPtr& e) { producer_exprs.push_back(e); });
    std::set<const ir::Var*> needed;
    for (const ir::ExprPtr& e : producer_exprs)
        for (const ir::Var* v : ir::vars_read(e)) needed.insert(v);
    auto reads_on_chip = [](const ir::ExprPtr& e) {
        bool on_chip = false;
        ir::walk_expr(e, [&](const ir::Expr& x) {
            if (auto* l = x.as<ir::Load>()) on_chip |= l->buffer->scope != ir::Scope::Global;
        });
        return on_chip;
    };
    std::vector<ir::StmtPtr> all_lets(top.begin(), top.begin() + static_cast<std::ptrdiff_t>(at));
    all_lets.insert(all_lets.end(), lets.begin(), lets.end());
    for (size_t i = all_lets.size(); i-- > 0;) {
        auto* l = all_lets[i]->as<ir::LetStmt>();
        if (!l || !needed.count(l->var.get())) continue;
        if (reads_on_chip(l->value))
            return fmt::format("the producer needs `{}` (a trip count or a load's coordinates), which reads on-chip memory",
                               l->var->name);
        for (const ir::Var* v : ir::vars_read(l->value)) needed.insert(v);
    }
    for (const ir::ExprPtr& e : producer_exprs)
        if (reads_on_chip(e)) return std::string("the trip count or a load's coordinates read on-chip memory");

    // The copies before the loop that TMA makes once per tile.
    std::vector<ir::BufferPtr> once_tiles;
    for (size_t i = 0; i < at; ++i) {
        auto* c = top[i]->as<ir::Copy>();
        if (!c || !once.count(c->dst.buffer.get())) continue;
        auto marked = std::make_shared<ir::Copy>(*c);
        marked->tma_once = true;
        top[i] = marked;
        once_tiles.push_back(c->dst.buffer);
    }
    out.top = top;

    auto ws = std::make_shared<ir::WarpSpecializedLoop>(loop->vars[0], loop->extents[0], loop->options.stages, lets,
                                                        loads, std::make_shared<ir::Seq>(consumer, loop->range), loop->range);
    ws->once = once_tiles;
    for (const ir::StmtPtr& s : rest) // the written tiles a wgmma reads, in the order the trip writes them
        if (auto* c = s->as<ir::Copy>(); c && written.count(c->dst.buffer.get()))
            for (const ir::Gemm* g : gemms)
                if (g->a.buffer == c->dst.buffer || g->b.buffer == c->dst.buffer) {
                    ws->written.push_back(c->dst.buffer);
                    break;
                }
    ws->issue_first_gemm_early = kernel.options.overlap_wgmma && issues_first_gemm_early(*ws);
    ws->pingpong = ws->issue_first_gemm_early && kernel.options.pingpong && warpgroups >= 2;
    out.loop_index = at;
    out.loop = ws.get();
    out.replacement = ws;
    return std::nullopt;
}

// Why `c` cannot be stored through shared memory by TMA, or empty when it can: `copy(acc, G[r +:
// BM, c +: N])` of a wgmma's accumulator, in 64-row slabs per consumer warpgroup, into a 2-d
// f16/bf16 tensor with N a multiple of 64, or into a slice of a tensor of up to 5 axes whose other
// axes are points (`O[b, h, r +: BM, c +: N]`: a box of one along each of them).
// `wgmma_layout`: whether the copied fragment is laid out as a wgmma accumulator (before
// infer-layouts, only an accumulator itself is known to be).
std::string why_not_tma_storable(const ir::Copy& c, const std::function<bool(const ir::Buffer&)>& wgmma_layout,
                                 int kernel_threads) {
    if (c.src.buffer->scope != ir::Scope::Fragment || c.dst.buffer->scope != ir::Scope::Global)
        return "it is not a copy of a fragment into global memory";
    if (c.pad) return "it has a pad value";
    const ir::Buffer& dst = *c.dst.buffer;
    if (!c.src.is_whole() || c.src.buffer->rank() != 2)
        return fmt::format("it is not a copy of a whole 2-d fragment (`{}`)", c.src.buffer->name);
    if (dst.rank() > 5 || ir::tma_row_axis(c.dst) < 0)
        return fmt::format("its destination is not a 2-d slice of `{}` (two ranges, the last axis one of them, every other axis a "
                           "point, at most 5 axes; `{}` has {})",
                           dst.name, dst.name, dst.rank());
    if (dst.dtype != Dtype::F16 && dst.dtype != Dtype::BF16)
        return fmt::format("`{}` holds {}; the epilogue stages 16-bit (f16, bf16) tiles only", dst.name, dtype_name(dst.dtype));
    if (!c.dst.tile_limits().empty()) return "its extent is bounded, and a TMA box has a constant shape";
    const int64_t slab_rows = 64 * (kernel_threads / 128);
    if (!wgmma_layout(*c.src.buffer)) {
        if (c.src.buffer->const_shape[0] < slab_rows)
            return fmt::format("`{}` has {} rows, fewer than 64 for each of the {} consumer warpgroups, so the warpgroups split its "
                               "columns; the staging boxes take slabs of 64 whole rows per warpgroup",
                               c.src.buffer->name, c.src.buffer->const_shape[0], kernel_threads / 128);
        return fmt::format("`{}` is not in a wgmma accumulator's layout", c.src.buffer->name);
    }
    if (c.src.buffer->const_shape[0] % slab_rows)
        return fmt::format("its {} rows are not a multiple of {} (64 per consumer warpgroup)", c.src.buffer->const_shape[0], slab_rows);
    if (c.dst.ranges.back().extent % 64)
        return fmt::format("its {} columns are not a multiple of 64 (the staging box's width)", c.dst.ranges.back().extent);
    return {};
}

// The kernel's last statements, as far back as each is a copy that TMA can store (why_not_tma_storable)
// into a tensor of the last one's dtype (one kind of staging box): the body with them marked
// `tma_store`, or null when the last statement is not one.
ir::StmtPtr with_tma_store(const std::vector<ir::StmtPtr>& top, const std::function<bool(const ir::Buffer&)>& wgmma_layout,
                           int kernel_threads) {
    std::vector<ir::StmtPtr> body = top;
    size_t marked = 0;
    for (size_t i = body.size(); i-- > 0;) {
        auto* c = body[i]->as<ir::Copy>();
        if (!c || c->dst.buffer->dtype != body.back()->as<ir::Copy>()->dst.buffer->dtype) break;
        if (c->tma_store) continue;
        if (!why_not_tma_storable(*c, wgmma_layout, kernel_threads).empty()) break;
        auto store = std::make_shared<ir::Copy>(*c);
        store->tma_store = true;
        body[i] = store;
        ++marked;
    }
    return marked ? std::make_shared<ir::Seq>(body) : nullptr;
}

// Whether `b` is the accumulator of one of the loop's wgmma gemms.
auto is_wgmma_accumulator(const ir::WarpSpecializedLoop& loop) {
    return [&loop](const ir::Buffer& b) {
        for (const ir::Gemm* g : loop.wgmma_gemms())
            if (g->c.buffer.get() == &b) return true;
        return false;
    };
}

// Shared memory per block on sm_90a.
constexpr int64_t kHopperSharedBytes = 227 * 1024;

// Two rings where one ring cannot hold the stage a software-pipelined trip keeps one trip longer:
// one ring of the loop's stages + 1 is as fast when it fits (measured on an H200: attention at
// D = 64 ran 1-2% faster with one ring of five stages than with K and V rings of four and five),
// and with fewer stages its loads would have too little lookahead (attention at D = 128 with
// 176-key tiles: 0.78x cuDNN with one ring of two stages, 1.0x with two rings).
void split_rings_if_one_does_not_fit(ir::Kernel& kernel, ir::WarpSpecializedLoop& loop) {
    const int asked = loop.stages;
    loop.stages = asked + 1;
    const bool one_fits = compute_shared_memory_plan(kernel).total_bytes <= kHopperSharedBytes;
    loop.stages = asked;
    if (!one_fits) split_rings(loop);
}

// Deepens the TMA ring of `loop` beyond the loop's own stages when they hold fewer than
// kRingBytesInFlight bytes of loads, as far as shared memory allows: on this path a stage costs
// shared memory only (no registers, no instructions per stage), and the loads in flight must
// cover the latency of L2 and HBM at the tensor cores' rate (a 128 x 128 x 32 f16 tile of 16 KB a
// stage runs at 0.45x cuBLAS with 3 stages and 0.87x with 8 on an H200), plus the stage the
// consumers hold when the trip's first gemm is issued one trip early. Returns the loop's own
// stage count when it deepened the ring, else 0.
int deepen_ring(ir::Kernel& kernel, ir::WarpSpecializedLoop& loop) {
    int64_t stage_bytes = 0;
    for (const ir::TmaLoad& ld : loop.loads) stage_bytes += ld.dst->num_elements() * dtype_bytes(ld.dst->dtype);
    const int asked = loop.stages;
    // A loop whose trip's first gemm is issued one trip early holds one stage more in the consumers
    // (only in the ring of the trailing gemms' tiles when the first gemm's tiles have their own).
    const int held = loop.issue_first_gemm_early ? 1 : 0;
    const int wanted = static_cast<int>(
        std::min<int64_t>(kMaxRingStages, (kRingBytesInFlight + stage_bytes - 1) / stage_bytes + held));
    for (int stages = wanted; stages > asked; --stages) {
        loop.stages = stages;
        if (loop.first_stages) loop.first_stages = std::max(asked, stages - held);
        if (compute_shared_memory_plan(kernel).total_bytes <= kHopperSharedBytes) return asked;
    }
    loop.stages = asked;
    if (loop.first_stages) loop.first_stages = asked;
    return 0;
}

// Whether the loop's trip count can differ between the kernel's tiles: it reads a block index or
// a tensor element, directly or through the `let`s before the loop (attention's causal bound
// reads block.x, a variable-length batch its lengths).
bool trips_differ_between_tiles(const std::vector<ir::StmtPtr>& top, size_t loop_index, const ir::WarpSpecializedLoop& loop) {
    return ir::any_expr_through_lets(loop.trip_count, {top.begin(), top.begin() + static_cast<std::ptrdiff_t>(loop_index)},
                                     [](const ir::Expr& x) {
                                         if (x.kind == ir::ExprKind::Load) return true;
                                         auto* b = x.as<ir::Builtin>();
                                         return b && (b->builtin == ir::BuiltinKind::BlockIdxX || b->builtin == ir::BuiltinKind::BlockIdxY ||
                                                      b->builtin == ir::BuiltinKind::BlockIdxZ);
                                     });
}

// In a kernel launched in thread-block clusters, the blocks of a cluster take neighbouring tiles
// together (a cluster's tiles in the persistent loop) and share the loads whose coordinates do not
// change along a cluster axis (TmaLoad::multicast_axes): each block of the group that shares a
// tile loads one slice of its rows and multicasts it to the others, which cuts the traffic from
// L2 for that tile by the group's size. Why a load is not shared goes to `unshared` (a remark);
// the returned reason, when the cluster cannot be combined with the Hopper path at all.
Why share_loads_in_cluster(const ir::Kernel& kernel, const std::vector<ir::StmtPtr>& top, size_t loop_index,
                           ir::WarpSpecializedLoop& loop, std::vector<ir::WarpSpecialization::ConsumerCopy>& unshared) {
    if (trips_differ_between_tiles(top, loop_index, loop))
        return std::string("the loop's trip count differs between tiles, but the blocks of a thread-block cluster share "
                           "their loads trip by trip");
    std::vector<ir::StmtPtr> lets(top.begin(), top.begin() + static_cast<std::ptrdiff_t>(loop_index));
    lets.insert(lets.end(), loop.lets.begin(), loop.lets.end());
    static constexpr ir::BuiltinKind kBlockAxis[3] = {ir::BuiltinKind::BlockIdxX, ir::BuiltinKind::BlockIdxY, ir::BuiltinKind::BlockIdxZ};
    static constexpr const char* kAxisName[3] = {"x", "y", "z"};
    for (ir::TmaLoad& ld : loop.loads) {
        int axes = 0, blocks = 1;
        std::string changes; // the cluster axes the load's coordinates change along
        for (size_t a = 0; a < kernel.cluster.size(); ++a) {
            if (kernel.cluster[a] == 1) continue;
            bool reads = false;
            ir::for_each_region_expr(ld.src, [&](const ir::ExprPtr& e) {
                reads |= ir::any_expr_through_lets(e, lets, [&](const ir::Expr& x) {
                    auto* b = x.as<ir::Builtin>();
                    return b && b->builtin == kBlockAxis[a];
                });
            });
            if (reads) changes += fmt::format("{}block.{}", changes.empty() ? "" : ", ", kAxisName[a]);
            else axes |= 1 << a, blocks *= kernel.cluster[a];
        }
        const int64_t rows = ld.dst->const_shape[0];
        if (!axes) {
            unshared.push_back({ld.range, ld.dst->name, fmt::format("its coordinates change with {}, along every axis of the cluster", changes)});
        } else if (rows % (8 * blocks)) {
            unshared.push_back({ld.range, ld.dst->name,
                                fmt::format("its {} rows do not split into {} slices of whole 8-row swizzle atoms, one per block "
                                            "that shares it",
                                            rows, blocks)});
        } else {
            ld.multicast_axes = axes;
        }
    }
    return std::nullopt;
}

} // namespace

bool warp_specialize(ir::Kernel& kernel, const std::string& arch, const ir::Kernel* sm80, std::string* why_not) {
    if (arch != "sm_90a") return false; // the other targets have no TMA / wgmma: nothing to remark
    if (count_pipelined(kernel.body) == 0) return false; // nothing to specialise: no remark either
    // A kernel without a gemm (a streaming or row kernel) has nothing for wgmma: no remark either.
    bool has_gemm = false;
    ir::walk_stmts(kernel.body, [&](const ir::Stmt& s) { has_gemm |= s.kind == ir::StmtKind::Gemm; });
    if (!has_gemm) why_not = nullptr;
    Match m;
    if (Why why = match(kernel, m)) {
        kernel.schedule_remark = "Hopper path (TMA + wgmma + warp specialization) not applied: " + *why;
        // Switched off by the user (an attribute, --disable, stages = 1): no remark for that.
        if (why_not && kernel.options.tma && kernel.options.warp_specialize && kernel.options.pipeline &&
            kernel.options.async_copy && why->rfind("@no_", 0) != 0 && *why != "the loop has fewer than 2 stages")
            *why_not = *why;
        return false;
    }
    std::vector<ir::WarpSpecialization::ConsumerCopy> unshared;
    if (!kernel.cluster.empty())
        if (Why why = share_loads_in_cluster(kernel, m.top, m.loop_index, *m.loop, unshared)) {
            kernel.schedule_remark = "Hopper path (TMA + wgmma + warp specialization) not applied: " + *why;
            if (why_not) *why_not = *why;
            return false;
        }
    // The launch stub passes one argument list to both kernels: the sm_80 specialisation serves
    // only when its parameters and dims are the kernel's, in the same order.
    auto same_signature = [&](const ir::Kernel& other) {
        if (other.params.size() != kernel.params.size() || other.dims.size() != kernel.dims.size()) return false;
        for (size_t i = 0; i < kernel.params.size(); ++i)
            if (other.params[i].name() != kernel.params[i].name() || !other.params[i].tensor != !kernel.params[i].tensor)
                return false;
        for (size_t i = 0; i < kernel.dims.size(); ++i)
            if (other.dims[i]->name != kernel.dims[i]->name) return false;
        return true;
    };
    if (sm80 && !same_signature(*sm80)) sm80 = nullptr;
    auto fallback = std::make_shared<ir::Kernel>(sm80 ? *sm80 : kernel);
    fallback->options = kernel.options;
    // The sm_80 build may number its variants differently: the fallback is this variant's.
    fallback->variant = kernel.variant;
    fallback->function_suffix = kernel.function_suffix;
    fallback->schedule_remark = sm80 ? "fallback of the warp-specialized kernel (specialised as for sm_80): runs where TMA cannot"
                                     : "fallback of the warp-specialized kernel: runs where TMA cannot";
    auto top = m.top;
    top[m.loop_index] = m.replacement;
    kernel.body = std::make_shared<ir::Seq>(top, kernel.body->range);
    // The epilogue's store through shared memory and TMA, when the final copy allows it and the
    // staging buffers fit next to the pipeline (227 KB per block on sm_90a).
    kernel.warp_specialization.enabled = true;
    kernel.warp_specialization.consumer_copies = m.consumer_copies;
    kernel.warp_specialization.mma_sync_gemms = m.mma_sync_gemms;
    kernel.warp_specialization.unshared_loads = unshared;
    // Tiles whose trip counts differ (a causal mask, variable lengths) would leave blocks idle in a
    // fixed order: such kernels claim their tiles from a counter as they go.
    kernel.warp_specialization.dynamic_tiles = kernel.options.persistent && kernel.options.dynamic_tiles &&
                                               trips_differ_between_tiles(top, m.loop_index, *m.loop);
    if (ir::StmtPtr stored = kernel.options.tma_store ? with_tma_store(top, is_wgmma_accumulator(*m.loop), kernel.threads) : nullptr) {
        ir::Kernel candidate = kernel;
        candidate.body = stored;
        if (compute_shared_memory_plan(candidate).total_bytes <= kHopperSharedBytes) kernel.body = stored;
    }
    if (m.loop->issue_first_gemm_early && kernel.options.split_rings) split_rings_if_one_does_not_fit(kernel, *m.loop);
    if (kernel.options.deepen_ring) kernel.warp_specialization.requested_stages = deepen_ring(kernel, *m.loop);
    kernel.fallback = fallback;
    kernel.function_suffix += "_sm90";
    // block.* and grid.* name the tile and the tile grid in the emitted kernel, so any kernel can be
    // persistent.
    kernel.warp_specialization.persistent = kernel.options.persistent;
    int warpgroups = kernel.threads / 128;
    // 64 K registers per SM, one block: the producer keeps 40 (32 beside three consumer warpgroups,
    // which then get 160 each), the consumers share the rest (setmaxnreg takes multiples of 8, at
    // most 256).
    kernel.warp_specialization.producer_registers = warpgroups == 3 ? 32 : 40;
    int consumer = (65536 - 128 * kernel.warp_specialization.producer_registers) / (128 * warpgroups) / 8 * 8;
    kernel.warp_specialization.consumer_registers = consumer > 256 ? 256 : consumer;
    return true;
}

// After infer-layouts: whether a fragment of `kernel` is laid out as a wgmma accumulator.
std::function<bool(const ir::Buffer&)> has_wgmma_accumulator_layout(const ir::Kernel& kernel) {
    const int warps = kernel.threads / 32;
    return [&kernel, warps](const ir::Buffer& b) {
        auto it = kernel.layouts.fragments.find(&b);
        if (it == kernel.layouts.fragments.end() || b.rank() != 2) return false;
        const int64_t rows = b.const_shape[0], cols = b.const_shape[1];
        return it->second.kind == ir::LayoutKind::MmaAcc &&
               it->second.layout == ir::Layout::mma_accumulator(rows, cols, warps, 1, rows > 16 * warps);
    };
}

void store_accumulator_layouts_by_tma(ir::Kernel& kernel) {
    const ir::WarpSpecializedLoop* loop = ir::warp_specialized_loop(kernel);
    auto* seq = kernel.body ? kernel.body->as<ir::Seq>() : nullptr;
    if (!kernel.warp_specialization.enabled || !loop || !seq || !kernel.layouts.wgmma_accumulator || !kernel.options.tma_store) return;
    ir::StmtPtr stored = with_tma_store(seq->stmts, has_wgmma_accumulator_layout(kernel), kernel.threads);
    if (!stored) return;
    ir::Kernel candidate = kernel;
    candidate.body = stored;
    if (compute_shared_memory_plan(candidate).total_bytes <= kHopperSharedBytes) kernel.body = stored;
}

std::vector<ir::WarpSpecialization::ConsumerCopy> stores_not_by_tma(const ir::Kernel& kernel) {
    std::vector<ir::WarpSpecialization::ConsumerCopy> out;
    auto* seq = kernel.body ? kernel.body->as<ir::Seq>() : nullptr;
    if (!kernel.warp_specialization.enabled || !seq || !kernel.layouts.wgmma_accumulator) return out;
    const auto wgmma_layout = has_wgmma_accumulator_layout(kernel);
    // What the epilogue would store if shared memory had room for its staging boxes.
    ir::StmtPtr would_store = with_tma_store(seq->stmts, wgmma_layout, kernel.threads);
    const auto& would = would_store ? would_store->as<ir::Seq>()->stmts : seq->stmts;
    for (size_t i = 0; i < seq->stmts.size(); ++i) {
        auto* c = seq->stmts[i]->as<ir::Copy>();
        if (!c || c->tma_store || c->src.buffer->scope != ir::Scope::Fragment || c->dst.buffer->scope != ir::Scope::Global)
            continue;
        // Copies of wgmma accumulators, and of those whose columns the warpgroups split (too few
        // rows for a slab per warpgroup); an mma.sync accumulator has its own remark (R0012).
        auto layout = kernel.layouts.fragments.find(c->src.buffer.get());
        const bool columns_split = layout != kernel.layouts.fragments.end() && layout->second.kind == ir::LayoutKind::MmaAcc &&
                                   c->src.buffer->rank() == 2 && c->src.buffer->const_shape[0] < 64 * (kernel.threads / 128);
        if (!wgmma_layout(*c->src.buffer) && !columns_split) continue;
        std::string why = why_not_tma_storable(*c, wgmma_layout, kernel.threads);
        if (why.empty() && !kernel.options.tma_store)
            why = "the TMA-store epilogue is switched off (@no_tma_store or --disable tma-store)";
        if (why.empty() && would[i]->as<ir::Copy>()->tma_store)
            why = fmt::format("its staging boxes do not fit in the {} bytes of shared memory beside the ring", kHopperSharedBytes);
        if (why.empty()) {
            // Only the kernel's last copies are stored so, all into tensors of the last one's dtype.
            const Dtype last = seq->stmts.back()->as<ir::Copy>() ? seq->stmts.back()->as<ir::Copy>()->dst.buffer->dtype
                                                                  : c->dst.buffer->dtype;
            bool only_copies_after = true;
            const ir::Copy* unstorable_after = nullptr;  // a later copy TMA does not store
            for (size_t j = i + 1; j < seq->stmts.size(); ++j) {
                auto* later = seq->stmts[j]->as<ir::Copy>();
                only_copies_after &= later != nullptr;
                if (later && !unstorable_after && !why_not_tma_storable(*later, wgmma_layout, kernel.threads).empty())
                    unstorable_after = later;
            }
            if (only_copies_after && unstorable_after)
                why = fmt::format("it is followed by the copy of `{}` into `{}`, which TMA does not store (only the copies "
                                  "that end the kernel are stored so; copy `{}` last)",
                                  unstorable_after->src.buffer->name, unstorable_after->dst.buffer->name, c->src.buffer->name);
            else if (only_copies_after && last != c->dst.buffer->dtype)
                why = fmt::format("`{}` holds {} and the kernel's last copy stores {}: the epilogue's staging boxes "
                                  "hold one dtype", c->dst.buffer->name, dtype_name(c->dst.buffer->dtype), dtype_name(last));
            else
                why = "it is followed by statements other than such copies (only the copies that end the kernel are "
                      "stored so)";
        }
        out.push_back({c->range, c->src.buffer->name, why});
    }
    return out;
}

std::string why_cluster_shares_nothing(const ir::Kernel& kernel, bool hopper_path_refused) {
    if (kernel.cluster_blocks() <= 1) return {};
    if (kernel.warp_specialization.enabled) {
        const ir::WarpSpecializedLoop* loop = ir::warp_specialized_loop(kernel);
        if (loop)
            for (const ir::TmaLoad& ld : loop->loads)
                if (ld.multicast_axes) return {};
        return "no TMA load of its warp-specialized loop is shared (remark R0013 says why at each)";
    }
    const std::string only = "only the TMA loads of the Hopper path's warp-specialized loop";
    if (hopper_path_refused)
        return only + " are shared across a cluster, and the kernel does not take that path (remark R0002 says why)";
    if (!kernel.options.tma || !kernel.options.warp_specialize || !kernel.options.pipeline)
        return only + " are shared across a cluster, and the path is switched off for this kernel";
    return only + " (a `pipelined` loop with a gemm of loaded tiles) are shared across a cluster, and the kernel has no such loop";
}

} // namespace tlc::schedule
