// Lowering of warp-specialized kernels (sm_90a): the role split, the persistent tile loop, the
// producer's TMA issue loop and the consumers' wgmma loop, following the mbarrier protocol that
// schedule/verify_mbarriers.h describes and model-checks.
#include "codegen/cuda_names.h"
#include "codegen/kernel_emitter.h"
#include "ir/walk.h"
#include "schedule/verify_mbarriers.h"
#include "support/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <set>

namespace tlc::codegen {

namespace {
// Named barriers: 1 spans the consumers, 2 + w is warpgroup w's TMA-store staging, 4 + w its
// ping-pong turn.
constexpr int kPingpongBarrier = 8; // 8 .. 8 + warpgroups - 1 (1 is the consumers', 2 + w warpgroup w's epilogue)
// The columns of one TMA box into a shared tile: one swizzle row of the tile.
int64_t box_cols_of(const ir::Buffer& tile) {
    const int64_t bytes = tile_swizzle_bytes(tile.dtype, tile.const_shape[1]);
    TLC_CHECK(bytes > 0, "a TMA tile whose rows are not a multiple of 32 bytes");
    return bytes / dtype_bytes(tile.dtype);
}
// The blocks of the kernel's cluster that share a load (TmaLoad::multicast_axes), each loading one
// slice of its rows: 1 when the block loads it alone.
int sharing_blocks(const ir::Kernel& kernel, int multicast_axes) {
    int blocks = 1;
    for (size_t a = 0; a < kernel.cluster.size(); ++a)
        if (multicast_axes & (1 << a)) blocks *= kernel.cluster[a];
    return blocks;
}
} // namespace

std::vector<TmaMap> tma_maps(const ir::Kernel& kernel) {
    std::vector<TmaMap> maps;
    std::vector<TmaMap> boxes; // (tensor, box rows, box cols), unnamed
    auto load_box = [&](const ir::Region& src, const ir::Buffer& dst, int slices) {
        boxes.push_back({"", src.buffer.get(), dst.const_shape[0] / slices, box_cols_of(dst), ir::tma_row_axis(src)});
    };
    for (const ir::Copy* c : ir::tma_once_copies(kernel)) load_box(c->src, *c->dst.buffer, 1);
    for (const ir::TmaLoad& ld : ir::warp_specialized_loop(kernel)->loads)
        load_box(ld.src, *ld.dst, sharing_blocks(kernel, ld.multicast_axes)); // a shared tile: one slice a box
    for (const ir::Copy* st : ir::tma_store_copies(kernel))
        boxes.push_back({"", st->dst.buffer.get(), 64, swizzle_row_elements(st->dst.buffer->dtype), ir::tma_row_axis(st->dst)});
    for (TmaMap box : boxes) {
        bool known = false;
        for (const TmaMap& m : maps)
            known |= m.tensor == box.tensor && m.box_rows == box.box_rows && m.box_cols == box.box_cols && m.row_axis == box.row_axis;
        if (known) continue;
        int same_tensor = 0;
        for (const TmaMap& m : maps) same_tensor += m.tensor == box.tensor;
        box.name = "tl_map_" + identifier(box.tensor->name) +
                   (same_tensor ? fmt::format("_{}x{}", box.box_rows, box.box_cols) : "") +
                   (same_tensor && box.row_axis != static_cast<int>(box.tensor->rank()) - 2 ? fmt::format("_rows{}", box.row_axis) : "");
        maps.push_back(box);
    }
    return maps;
}

namespace {
const TmaMap& map_for(const std::vector<TmaMap>& maps, const ir::Buffer* tensor, int64_t box_rows, int64_t box_cols,
                      int row_axis = 0) {
    for (const TmaMap& m : maps)
        if (m.tensor == tensor && m.box_rows == box_rows && m.box_cols == box_cols && m.row_axis == row_axis) return m;
    TLC_CHECK(false, "no TMA map for a tensor");
    return maps.front();
}

// The top-level `let`s of the kernel body before its warp-specialized loop.
std::vector<ir::StmtPtr> lets_before_loop(const ir::Kernel& kernel, const ir::WarpSpecializedLoop& loop) {
    std::vector<ir::StmtPtr> lets;
    for (const ir::StmtPtr& s : static_cast<const ir::Seq*>(kernel.body.get())->stmts) {
        if (s.get() == &loop) break;
        if (s->kind == ir::StmtKind::Let) lets.push_back(s);
    }
    return lets;
}

bool is_block_x(const ir::Expr& x) {
    auto* b = x.as<ir::Builtin>();
    return b && b->builtin == ir::BuiltinKind::BlockIdxX;
}

// The variables an expression or a statement tree reads.
auto var_collector(std::set<const ir::Var*>& vars) {
    return [&vars](const ir::Expr& x) {
        if (auto* v = x.as<ir::VarRef>()) vars.insert(v->var.get());
    };
}
void add_vars(const ir::ExprPtr& e, std::set<const ir::Var*>& vars) { ir::walk_expr(e, var_collector(vars)); }
std::set<const ir::Var*> vars_read_in(const std::vector<ir::ExprPtr>& exprs) {
    std::set<const ir::Var*> vars;
    for (const ir::ExprPtr& e : exprs) add_vars(e, vars);
    return vars;
}
std::set<const ir::Var*> vars_read_in(const ir::StmtPtr& s) {
    std::set<const ir::Var*> vars;
    ir::walk_exprs(s, var_collector(vars));
    return vars;
}

// The loop `let`s one role needs: those whose variables it reads, directly or through a later
// needed let; the rest would be unused variables in that role's CUDA.
std::vector<ir::StmtPtr> lets_needed_by(const std::vector<ir::StmtPtr>& lets, std::set<const ir::Var*> used) {
    std::vector<bool> keep(lets.size(), false);
    for (size_t i = lets.size(); i-- > 0;) {
        auto* l = lets[i]->as<ir::LetStmt>();
        keep[i] = !l || used.count(l->var.get());
        if (l && keep[i]) add_vars(l->value, used);
    }
    std::vector<ir::StmtPtr> out;
    for (size_t i = 0; i < lets.size(); ++i)
        if (keep[i]) out.push_back(lets[i]);
    return out;
}
} // namespace

// The persistent tile loop with tl_block_{x,y,z}: the tiles of the kernel's grid in a grouped
// order (8 tile-rows at a time) so that blocks running together share A and B tiles in L2. Block b
// takes tiles b, b + blocks, ..., or, when the trip counts differ between tiles
// (WarpSpecialization::dynamic_tiles), tile b and then whichever tile is next when it starts one:
// the producer claims it from tl_tile_counter and hands its index to the consumers through the
// block's mailbox, 16 bytes of global memory beside the counter (a one-slot ring: tl_tile_full
// when written, tl_tile_empty when every consumer warp read it; the mbarriers' release and acquire
// order the global accesses). Not shared memory: compute-sanitizer's racecheck does not order
// plain shared-memory accesses by mbarrier phases and would report the handover.
// The index tl_tiles says that no tile is left.
void KernelEmitter::emit_tile_loop(const std::function<void()>& body, bool producer) {
    // When the loop's trip count depends on block.x (attention's causal mask), each group's tiles
    // run from the x with the most trips down when that is the last x: the longest tiles first,
    // so that the short ones fill the blocks' last rounds (both roles order the tiles alike).
    const std::vector<ir::StmtPtr> lets = lets_before_loop(kernel_, *ws_loop_);
    const std::vector<ir::StmtPtr> trip_lets = lets_needed_by(lets, vars_read_in({ws_loop_->trip_count}));
    const bool by_x = ir::any_expr_through_lets(ws_loop_->trip_count, lets, is_block_x);
    if (by_x) {
        out_.line("// The trip count depends on block.x: when the last x has the most trips, the tiles run longest first.");
        out_.block("auto tl_trips_at = [&](const int tl_block_x)", [&] {
            out_.line("const int tl_block_y = 0, tl_block_z = 0;");
            out_.line("(void)tl_block_x, (void)tl_block_y, (void)tl_block_z;");
            for (const ir::StmtPtr& l : trip_lets) stmt(l, {});
            out_.line(fmt::format("return {};", expr(ws_loop_->trip_count)));
        }, "};");
        out_.line("const bool tl_longest_first = tl_trips_at(tl_tiles_x - 1) > tl_trips_at(0);");
    }
    // In clusters, the loop walks clusters of tiles (tl_cluster_tiles_*), in the same order, and
    // each block of a cluster takes the tile at its place in the cluster.
    const bool clusters = !kernel_.cluster.empty();
    const std::string tiles = clusters ? "tl_cluster_tiles" : "tl_tiles", at = clusters ? "tl_cluster_tile" : "tl_block";
    auto coordinates = [&] {
        out_.line(fmt::format("const int {1}_z = tl_tile / ({0}_x * {0}_y);", tiles, at));
        out_.line(fmt::format("const int tl_in_plane = tl_tile % ({0}_x * {0}_y);", tiles));
        out_.line(fmt::format("const int tl_group_first_y = tl_in_plane / (8 * {0}_x) * 8;", tiles));
        out_.line(fmt::format("const int tl_group_rows = min({0}_y - tl_group_first_y, 8);", tiles));
        out_.line(fmt::format("const int {1}_y = tl_group_first_y + tl_in_plane % (8 * {0}_x) % tl_group_rows;", tiles, at));
        if (by_x) {
            out_.line("const int tl_x_in_group = tl_in_plane % (8 * tl_tiles_x) / tl_group_rows;");
            out_.line("const int tl_block_x = tl_longest_first ? tl_tiles_x - 1 - tl_x_in_group : tl_x_in_group;");
        } else {
            out_.line(fmt::format("const int {1}_x = tl_in_plane % (8 * {0}_x) / tl_group_rows;", tiles, at));
        }
        if (clusters) {
            const std::array<int, 3> c = kernel_.cluster_shape();
            out_.line(fmt::format("const int tl_block_x = tl_cluster_tile_x * {0} + int(tl_cluster_rank % {0});", c[0]));
            out_.line(fmt::format("const int tl_block_y = tl_cluster_tile_y * {1} + int(tl_cluster_rank / {0} % {1});", c[0], c[1]));
            out_.line(fmt::format("const int tl_block_z = tl_cluster_tile_z * {2} + int(tl_cluster_rank / {0});", c[0] * c[1], c[1], c[2]));
        }
        out_.line("(void)tl_block_x, (void)tl_block_y, (void)tl_block_z;");
    };
    if (!kernel_.warp_specialization.dynamic_tiles) {
        // tl_round counts this block's tiles: the parity of the tiles loaded once per tile.
        const bool rounds = !ir::tma_once_copies(kernel_).empty();
        const std::string first = clusters ? fmt::format("int(blockIdx.x) / {}", kernel_.cluster_blocks()) : "blockIdx.x";
        const std::string step = clusters ? fmt::format("int(gridDim.x) / {}", kernel_.cluster_blocks()) : "gridDim.x";
        out_.block(rounds ? fmt::format("for (int tl_tile = {0}, tl_round = 0; tl_tile < {1}; tl_tile += {2}, ++tl_round)", first, tiles, step)
                          : fmt::format("for (int tl_tile = {0}; tl_tile < {1}; tl_tile += {2})", first, tiles, step),
                   [&] {
                       coordinates();
                       body();
                   });
        return;
    }
    TLC_CHECK(!clusters, "a warp-specialized kernel in clusters with tiles in a dynamic order");
    const schedule::MbarrierProtocol handover = schedule::tile_handover_protocol_of(kernel_);
    if (producer) {
        out_.line("// The trip counts differ between tiles: this block starts with tile blockIdx.x, then claims the next one as it finishes each.");
        out_.line("int tl_tile = blockIdx.x;");
        out_.block("for (int tl_round = 0;; ++tl_round)", [&] {
            out_.line(fmt::format("tl::sm90::mbarrier_wait(tl_tile_empty, (tl_round + {}) & 1);  // every consumer warp read the last tile's index",
                                  handover.empty_parity_offset));
            out_.line("tl::sm90::hand_over_tile(tl_mailbox, tl_tile, tl_tile_full);  // tl_tiles: none left");
            out_.line("if (tl_tile >= tl_tiles) break;");
            coordinates();
            body();
            out_.line("tl_tile = tl::sm90::claim_next_tile(tl_tile_counter, tl_tiles);");
        });
        return;
    }
    out_.line("// The tiles in the order the producer claims them (tl_tiles: none left).");
    out_.block("for (int tl_round = 0;; ++tl_round)", [&] {
        out_.line(fmt::format("tl::sm90::mbarrier_wait(tl_tile_full, (tl_round + {}) & 1);  // the producer handed over this round's tile",
                              handover.full_parity_offset));
        out_.line("const int tl_tile = tl::sm90::tile_in_mailbox(tl_mailbox);");
        out_.line("__syncwarp();");
        out_.line("if (tl_tid % 32 == 0) tl::sm90::mbarrier_arrive(tl_tile_empty);  // this warp read it");
        out_.line("if (tl_tile >= tl_tiles) break;");
        coordinates();
        body();
    });
}

// The TMA load of `src` into the shared tile `dst` (at element offset `stage_offset`), box by box
// (one swizzle row of the tile each), completing on `barrier`.
// A tile the cluster's blocks share (`multicast_axes`, TmaLoad::multicast_axes): this block loads
// its slice of the rows (tl_slice_<axes> of them) into every sharing block (tl_mask_<axes>).
void KernelEmitter::emit_tma_load(const ir::Region& src, const ir::Buffer& dst, const std::string& stage_offset,
                                  const std::string& barrier, const std::vector<TmaMap>& maps, int multicast_axes) {
    const int64_t rows = dst.const_shape[0], cols = dst.const_shape[1];
    const int64_t box_cols = box_cols_of(dst); // one swizzle row: 128, 64 or 32 bytes
    const int row_axis = ir::tma_row_axis(src), rank = static_cast<int>(src.ranges.size());
    const int slices = sharing_blocks(kernel_, multicast_axes);
    const int64_t box_rows = rows / slices;
    const TmaMap& map = map_for(maps, src.buffer.get(), box_rows, box_cols, row_axis);
    const std::string slice = "tl_slice_" + ir::multicast_axes_name(multicast_axes);
    for (int64_t box = 0; box < cols / box_cols; ++box) {
        const std::string coords = tma_box_coordinates(src, row_axis, box ? fmt::format("{}", box * box_cols) : "",
                                                       slices > 1 ? fmt::format("{} * {}", slice, box_rows) : "");
        std::string offset = stage_offset + (box ? fmt::format(" + {}", box * rows * box_cols) : "");
        if (slices == 1) {
            out_.line(fmt::format("tl::sm90::tma_load_{}d({}{}, &{}, {}, {});", rank, identifier(dst.name), offset, map.name, barrier, coords));
            continue;
        }
        out_.line(fmt::format("tl::sm90::tma_load_{}d_multicast({}{} + {} * {}, &{}, {}, tl_mask_{}, {});", rank, identifier(dst.name), offset,
                              slice, box_rows * box_cols, map.name, barrier, ir::multicast_axes_name(multicast_axes), coords));
    }
}

std::string KernelEmitter::tma_box_coordinates(const ir::Region& r, int row_axis, const std::string& col_offset,
                                               const std::string& row_offset) {
    const int rank = static_cast<int>(r.ranges.size());
    std::string coords = expr(r.ranges[rank - 1].start) + (col_offset.empty() ? "" : " + " + col_offset);
    for (int axis = rank - 2; axis >= 0; --axis)
        coords += ", " + expr(r.ranges[axis].start) + (axis == row_axis && !row_offset.empty() ? " + " + row_offset : "");
    return coords;
}

bool KernelEmitter::is_wgmma_accumulator(const ir::Buffer& b) const {
    if (!ws_loop_) return false;
    for (const ir::Gemm* g : ws_loop_->wgmma_gemms())
        if (g->c.buffer.get() == &b) return true;
    return false;
}

bool KernelEmitter::ring_shared_in_cluster(bool first_ring) const {
    return schedule::protocol_of(kernel_, *ws_loop_).shared_rings >> (first_ring ? 1 : 0) & 1;
}

// The release of a stage by one consumer warp: in every block of the cluster when the blocks share
// a tile of the ring (each block's producer refills its slice in all of them).
std::string KernelEmitter::release_stage(const std::string& empty, const std::string& stage, bool first_ring) const {
    if (ring_shared_in_cluster(first_ring))
        return fmt::format("tl::sm90::mbarrier_arrive_each_block<{}>(&{}[{}])", kernel_.cluster_blocks(), empty, stage);
    return fmt::format("tl::sm90::mbarrier_arrive(&{}[{}])", empty, stage);
}

// A tile past the kernel's grid, which a block of a cluster at the grid's edge takes: the block
// computes nothing, but its producer still loads its slices of the shared tiles, and its consumers
// wait for and release each trip's stages, so that the protocol runs in step in every block.
void KernelEmitter::emit_cluster_idle_tile(const ir::WarpSpecializedLoop& loop) {
    const schedule::MbarrierProtocol protocol = schedule::protocol_of(kernel_, loop);
    out_.block("if (tl_block_x >= tl_tiles_x || tl_block_y >= tl_tiles_y || tl_block_z >= tl_tiles_z)", [&] {
        out_.line("// A tile past the grid's edge: this block only takes part in its cluster's shared loads.");
        const std::vector<ir::StmtPtr> trip_lets = lets_needed_by(lets_before_loop(kernel_, loop), vars_read_in({loop.trip_count}));
        for (const ir::StmtPtr& l : trip_lets) stmt(l, {});
        if (!loop.once.empty()) {
            const schedule::MbarrierProtocol op = schedule::once_protocol_of(kernel_);
            out_.line(fmt::format("tl::sm90::mbarrier_wait(tl_once_full, (tl_round + {}) & 1);", op.full_parity_offset));
            out_.line("if (tl_tid % 32 == 0) tl::sm90::mbarrier_arrive(tl_once_empty);");
        }
        out_.block(fmt::format("for (int tl_k = 0; tl_k < {}; ++tl_k, ++tl_it)", parenthesized(expr(loop.trip_count))), [&] {
            for (const bool first_ring : loop.first_stages ? std::vector<bool>{true, false} : std::vector<bool>{false}) {
                const RingNames ring = ring_names(first_ring);
                const int stages = protocol.ring_stages(first_ring ? 1 : 0);
                out_.line(fmt::format("tl::sm90::mbarrier_wait(&{}[tl_it % {}], (tl_it / {} + {}) & 1);", ring.full, stages, stages,
                                      protocol.full_parity_offset));
                out_.line(fmt::format("if (tl_tid % 32 == 0) {};", release_stage(ring.empty, fmt::format("tl_it % {}", stages), first_ring)));
            }
        });
        out_.line("continue;");
    });
}

// A copy made once per tile by the producer: the consumers wait until it landed (one wait, at the
// first such copy, covers them all: they complete one phase of tl_once_full together).
void KernelEmitter::emit_tma_once_wait(const ir::Copy& c) {
    source_comment(c, "copy, loaded by TMA once per tile");
    if (ir::tma_once_copies(kernel_).front() == &c)
        out_.line(fmt::format("tl::sm90::mbarrier_wait(tl_once_full, (tl_round + {}) & 1);  // the tiles loaded once per tile landed",
                              schedule::once_protocol_of(kernel_).full_parity_offset));
}

// The names of a ring's mbarrier arrays and stage index: the main ring's, or those of the ring of
// the tiles only the trip's first gemm reads (WarpSpecializedLoop::first_stages).
KernelEmitter::RingNames KernelEmitter::ring_names(bool first_ring) {
    return first_ring ? RingNames{"tl_first_full", "tl_first_empty", "tl_first_stage"} : RingNames{"tl_full", "tl_empty", "tl_stage"};
}

void KernelEmitter::emit_producer(const ir::WarpSpecializedLoop& loop) {
    const schedule::MbarrierProtocol protocol = schedule::protocol_of(kernel_, loop);
    auto maps = tma_maps(kernel_);
    const std::vector<const ir::Copy*> once = ir::tma_once_copies(kernel_);
    auto bytes_of = [](const ir::Buffer& b) { return b.num_elements() * dtype_bytes(b.dtype); };
    int64_t once_bytes = 0;
    for (const ir::Copy* c : once) once_bytes += bytes_of(*c->dst.buffer);
    const std::vector<const ir::Copy*> stores = ir::tma_store_copies(kernel_);
    auto is_store_map = [&](const TmaMap& m) {
        return m.box_rows == 64 && std::any_of(stores.begin(), stores.end(), [&](const ir::Copy* c) { return c->dst.buffer.get() == m.tensor; });
    };
    for (const TmaMap& m : maps)
        if (!is_store_map(m)) out_.line(fmt::format("tl::sm90::tma_prefetch_descriptor(&{});", m.name));
    std::set<int> shared_axes;
    for (const ir::TmaLoad& ld : loop.loads)
        if (ld.multicast_axes) shared_axes.insert(ld.multicast_axes);
    for (int axes : shared_axes) {
        const std::array<int, 3> c = kernel_.cluster_shape();
        const std::string share = fmt::format("tl::sm90::ClusterShare<{}, {}, {}, {}>", c[0], c[1], c[2], axes);
        out_.line(fmt::format("const int tl_slice_{} = {}::slice(tl_cluster_rank);  // this block's slice of the tiles shared along {}",
                              ir::multicast_axes_name(axes), share, ir::multicast_axes_name(axes)));
        out_.line(fmt::format("const uint16_t tl_mask_{} = {}::mask(tl_cluster_rank);  // the blocks that share them", ir::multicast_axes_name(axes), share));
    }
    out_.line("int tl_it = 0;  // trips issued so far, across tiles: stage tl_it % stages, round tl_it / stages");
    emit_tile_loop([&] {
        // The `let`s before the loop that the producer reads (the tile's origin, the trip count) — pure values.
        std::vector<ir::ExprPtr> read{loop.trip_count};
        for (const ir::TmaLoad& ld : loop.loads) ir::for_each_region_expr(ld.src, [&](const ir::ExprPtr& e) { read.push_back(e); });
        const std::vector<ir::StmtPtr> trip_lets = lets_needed_by(loop.lets, vars_read_in(read));
        for (const ir::StmtPtr& l : trip_lets) read.push_back(l->as<ir::LetStmt>()->value);
        for (const ir::Copy* c : once) ir::for_each_region_expr(c->src, [&](const ir::ExprPtr& e) { read.push_back(e); });
        const std::set<const ir::Var*> used = vars_read_in(read);
        for (const ir::StmtPtr& s : lets_needed_by(lets_before_loop(kernel_, loop), used)) stmt(s, {});
        if (!once.empty()) {
            const schedule::MbarrierProtocol op = schedule::once_protocol_of(kernel_);
            out_.line(fmt::format("tl::sm90::mbarrier_wait(tl_once_empty, (tl_round + {}) & 1);  // the previous tile's readers are done",
                                  op.empty_parity_offset));
            out_.line(fmt::format("tl::sm90::mbarrier_arrive_expect_tx(tl_once_full, {});", once_bytes));
            for (const ir::Copy* c : once) {
                source_comment(*c, "tma load, once per tile");
                emit_tma_load(c->src, *c->dst.buffer, "", "tl_once_full", maps);
            }
        }
        std::string k = var_name(*loop.var);
        out_.block(fmt::format("for (int {0} = 0; {0} < {1}; ++{0}, ++tl_it)", k, parenthesized(expr(loop.trip_count))), [&] {
            // Each ring in turn (the first gemm's first): wait until its stage is empty, expect its
            // bytes, issue its loads.
            bool lets_done = false;
            for (const bool first_ring : loop.first_stages ? std::vector<bool>{true, false} : std::vector<bool>{false}) {
                const RingNames ring = ring_names(first_ring);
                const int stages = protocol.ring_stages(first_ring ? 1 : 0);
                int64_t bytes = 0;
                for (const ir::TmaLoad& ld : loop.loads)
                    if (ld.first_ring == first_ring) bytes += bytes_of(*ld.dst);
                out_.line(fmt::format("const int {} = tl_it % {};", ring.stage, stages));
                if (protocol.producer_waits_empty)
                    out_.line(fmt::format("tl::sm90::mbarrier_wait(&{}[{}], (tl_it / {} + {}) & 1);  // consumers released it",
                                          ring.empty, ring.stage, stages, protocol.empty_parity_offset));
                out_.line(fmt::format("tl::sm90::mbarrier_arrive_expect_tx(&{}[{}], {});", ring.full, ring.stage, bytes));
                if (!lets_done)
                    for (const ir::StmtPtr& l : trip_lets) stmt(l, {});
                lets_done = true;
                for (const ir::TmaLoad& ld : loop.loads) {
                    if (ld.first_ring != first_ring) continue;
                    ir::Copy original(ld.src, ir::whole(ld.dst), nullptr, ld.range);
                    source_comment(original, "tma load");
                    emit_tma_load(ld.src, *ld.dst, fmt::format(" + {} * {}", ring.stage, ld.dst->num_elements()),
                                  fmt::format("&{}[{}]", ring.full, ring.stage), maps, ld.multicast_axes);
                }
            }
        });
    }, /*producer=*/true);
}

// One gemm of two loaded tiles, on the current stage: warpgroup_gemm issues its wgmmas (one
// commit group); a cleared accumulator is zeroed first.
void KernelEmitter::emit_wgmma(const ir::Gemm& g, const std::string& stage) {
    const ir::Buffer& c = *g.c.buffer;
    const FragmentLayout* l = layout_of(c);
    const bool by_columns = l && l->warps_m_fastest; // the columns split over the warpgroups
    TLC_CHECK(l && l->kind == LayoutKind::MmaAcc &&
                  (by_columns ? l->warps_m == 4 && l->warps_n == kernel_.threads / 128 : l->warps_n == 1 && l->warps_m == kernel_.threads / 32),
              "wgmma accumulator without the wgmma layout");
    int64_t bm = g.transpose_a ? g.a.buffer->const_shape[1] : g.a.buffer->const_shape[0];
    int64_t bk = g.transpose_a ? g.a.buffer->const_shape[0] : g.a.buffer->const_shape[1];
    int64_t bn = c.const_shape[1];
    source_comment(g, "gemm");
    // clear = true: the first wgmma of each slab overwrites the accumulators (scale-d = 0).
    const std::string clear = g.clear ? ", true" : "";
    // A tile of `loads` is read at the current stage; a tile loaded once per tile has one copy.
    auto tile = [&](const ir::Buffer& b) {
        if (!ws_loop_->loads_into(&b)) return identifier(b.name);
        return fmt::format("{} + {} * {}", identifier(b.name), ws_loop_->in_first_ring(&b) ? ring_names(true).stage : stage,
                           b.num_elements());
    };
    if (g.a.buffer->scope == ir::Scope::Fragment) {
        TLC_CHECK(!by_columns, "a register A operand with the accumulator's columns split over the warpgroups");
        const FragmentLayout* la = layout_of(*g.a.buffer);
        const int warps = kernel_.threads / 32;
        TLC_CHECK(la && la->kind == LayoutKind::MmaAcc && la->layout == ir::Layout::mma_accumulator(bm, bk, warps, 1, bm > 16 * warps),
                  "a wgmma register operand without the wgmma accumulator layout");
        out_.line(fmt::format("tl::sm90::warpgroup_gemm_rs<{}, {}, {}, {}, {}, {}>({}, {}, {}, tl_tid / 128{});  // A from the registers of `{}`",
                              cuda_type(g.b.buffer->dtype), bm, bn, bk, g.transpose_b, kernel_.threads / 128, identifier(c.name),
                              identifier(g.a.buffer->name), tile(*g.b.buffer), clear, g.a.buffer->name));
        return;
    }
    out_.line(fmt::format("tl::sm90::warpgroup_gemm<{}, {}, {}, {}, {}, {}, {}{}>({}, {}, {}, tl_tid / 128{});{}",
                          cuda_type(g.a.buffer->dtype), bm, bn, bk, g.transpose_a, g.transpose_b, kernel_.threads / 128,
                          by_columns ? ", true" : "", identifier(c.name), tile(*g.a.buffer), tile(*g.b.buffer), clear,
                          by_columns ? "  // each warpgroup its share of the columns" : ""));
}

// The consumers' loop: the steps of the loop's schedule (pass schedule-wgmma) in order. A
// software-pipelined loop runs its first trip on its own, then trips 1 .. n - 1, then the drain,
// inside a branch taken when the tile has trips; any other loop runs each trip alike. In a
// software-pipelined trip `tl_it` is the current trip's (incremented at each trip's start),
// otherwise the loop's increment advances it, so that the tile's end sees the next trip's.
void KernelEmitter::emit_consumer_loop(const ir::WarpSpecializedLoop& loop) {
    const ir::ConsumerSchedule& schedule = loop.schedule;
    TLC_CHECK(!schedule.trip.empty(), "a warp-specialized loop reached codegen without its consumer schedule");
    const schedule::MbarrierProtocol protocol = schedule::protocol_of(kernel_, loop);
    const std::string k = var_name(*loop.var), trips = fresh("trips");
    const bool pipelined = schedule.software_pipelined();
    // Where the steps are printed: trip 0 of a software-pipelined loop (k is 0), any trip, or after
    // the trips (the drain, inside the tile's trips' branch; the tile's end, after it).
    enum class Part { FirstTrip, Trip, Drain, TileEnd };
    std::map<int, const ir::Gemm*> gemm_of_token;
    for (const auto* part : {&schedule.first_trip, &schedule.trip, &schedule.drain})
        for (const ir::ConsumerStep& s : *part)
            if (s.kind == ir::ConsumerStep::Kind::Issue) gemm_of_token[s.token] = s.stmt->as<ir::Gemm>();
    auto stage_name = [&](int ring, int back) {
        if (back == 0) return ring_names(ring == 1).stage;
        TLC_CHECK(ring == 0 && back == 1, "a consumer step on a stage other than this trip's or the previous one's (main ring)");
        return std::string("tl_stage_prev");
    };
    // The stage of (ring, back) as an expression, where no step declared it.
    auto stage_expr = [&](int ring, int back, Part part) {
        const int stages = protocol.ring_stages(ring);
        // After a loop whose increment advanced tl_it, the last trip is tl_it - 1.
        const int behind = back + (part == Part::TileEnd && !pipelined ? 1 : 0);
        return behind ? fmt::format("(tl_it + {}) % {}", stages - behind, stages) : fmt::format("tl_it % {}", stages);
    };
    std::set<std::pair<int, int>> declared; // (ring, back) stage indices declared in the current part
    // Whether wgmma groups may be in flight after `steps`, given whether they may be before them
    // (an issue commits a group; a wait with no group pending retires them all).
    auto in_flight_after = [](const std::vector<ir::ConsumerStep>& steps, bool before) {
        for (const ir::ConsumerStep& s : steps) {
            if (s.kind == ir::ConsumerStep::Kind::Issue) before = true;
            if (s.kind == ir::ConsumerStep::Kind::Wait && s.pending == 0) before = false;
        }
        return before;
    };
    auto print = [&](const ir::ConsumerStep& s, Part part) {
        using Kind = ir::ConsumerStep::Kind;
        using When = ir::ConsumerStep::When;
        const RingNames ring = ring_names(s.ring == 1);
        const int stages = protocol.ring_stages(s.ring);
        const std::string trip_it = s.back ? fmt::format("(tl_it - {})", s.back) : "tl_it";
        const std::string stage = declared.count({s.ring, s.back}) ? stage_name(s.ring, s.back) : stage_expr(s.ring, s.back, part);
        // The condition of a release that happens only in some trips.
        auto condition = [&]() -> std::string {
            switch (s.when) {
            case When::Always: return "";
            case When::TripExists: return part == Part::TileEnd ? fmt::format("{} >= {} && ", trips, s.back + 1) : fmt::format("{} >= {} && ", k, s.back);
            case When::LastTrip: return part == Part::FirstTrip ? fmt::format("{} == 1 && ", trips) : fmt::format("{} + 1 == {} && ", k, trips);
            case When::NoTrips: return fmt::format("{} <= 0 && ", trips);
            }
            return "";
        };
        const std::string which = s.back ? fmt::format("trip {} - {}", part == Part::Drain || part == Part::TileEnd ? "last" : k, s.back)
                                         : (part == Part::Drain || part == Part::TileEnd ? "the last trip" : "trip " + k);
        switch (s.kind) {
        case Kind::StageIndex:
            declared.insert({s.ring, s.back});
            out_.line(s.back ? fmt::format("const int {} = {};  // {}'s", stage_name(s.ring, s.back), stage_expr(s.ring, s.back, part), which)
                             : fmt::format("const int {} = {};", stage_name(s.ring, s.back), stage_expr(s.ring, s.back, part)));
            break;
        case Kind::WaitLoads:
            out_.line(fmt::format("tl::sm90::mbarrier_wait(&{}[{}], ({} / {} + {}) & 1);  // {}'s TMA loads{} landed", ring.full, stage, trip_it,
                                  stages, protocol.full_parity_offset, which, s.ring ? " for the first gemm" : ""));
            break;
        case Kind::Lets:
            for (const ir::StmtPtr& l : lets_needed_by(loop.lets, vars_read_in(loop.body))) stmt(l, {});
            break;
        case Kind::Run:
            stmt(s.stmt, {});
            break;
        case Kind::Issue:
            TLC_CHECK(std::find(loop.statements().begin(), loop.statements().end(), s.stmt) != loop.statements().end(),
                      "a consumer step issues a gemm that is not a statement of the loop");
            {
                // emit_wgmma names the stage indices of the rings the gemm reads: a step declared them.
                const ir::Gemm& g = *s.stmt->as<ir::Gemm>();
                for (const ir::Buffer* b : {g.a.buffer.get(), g.b.buffer.get()})
                    if (loop.loads_into(b))
                        TLC_CHECK(declared.count(loop.in_first_ring(b) ? std::pair{1, 0} : std::pair{0, s.back}),
                                  "a gemm issued before the stage index of the tiles it reads");
                emit_wgmma(g, stage_name(0, s.back));
                wgmmas_in_flight_ = true;
            }
            break;
        case Kind::Wait:
            {
                // The comment names the tokens whose results the next statements read.
                std::string retired;
                for (int t : s.fenced) retired += fmt::format("{}#{} (into `{}`)", retired.empty() ? "" : ", ", t, gemm_of_token.at(t)->c.buffer->name);
                std::string note = retired.empty() ? (s.pending ? fmt::format("at most {} wgmma group(s) still in flight", s.pending)
                                                                : "every wgmma group retired")
                                                   : retired + " retired" +
                                                         (s.pending ? fmt::format("; the {} newest group(s) run on", s.pending) : "");
                out_.line(fmt::format("tl::sm90::wgmma_wait<{}>();  // {}", s.pending, note));
            }
            for (int t : s.fenced) out_.line(fmt::format("tl::sm90::fence_accumulators({});", identifier(gemm_of_token.at(t)->c.buffer->name)));
            wgmmas_in_flight_ = wgmmas_in_flight_ && s.pending > 0;
            break;
        case Kind::Release:
            out_.line(fmt::format("if ({}tl_tid % 32 == 0) {};  // release {}'s stage{}{}", condition(), release_stage(ring.empty, stage, s.ring == 1),
                                  which, s.ring ? " of the first gemm's tiles" : "",
                                  ring_shared_in_cluster(s.ring == 1) ? " in every block of the cluster" : ""));
            break;
        case Kind::ReleaseOnce:
            out_.line(fmt::format("if ({}tl_tid % 32 == 0) tl::sm90::mbarrier_arrive(tl_once_empty);  // the tiles loaded once per tile may be refilled",
                                  condition()));
            break;
        case Kind::TurnBegin:
            out_.line(fmt::format("tl::sm90::pingpong_wait_turn<{}, {}>(tl_tid / 128);", kPingpongBarrier, kernel_.threads / 128));
            break;
        case Kind::TurnEnd:
            out_.line(fmt::format("tl::sm90::pingpong_pass_turn<{}, {}>(tl_tid / 128);", kPingpongBarrier, kernel_.threads / 128));
            break;
        }
    };
    // Whether groups may be in flight where each part starts: not before the tile's first trip
    // (the tile before retired them all); at a trip's start if trip 0 of a software-pipelined loop
    // or the loop's own back edge leaves some.
    const bool after_first = pipelined && in_flight_after(schedule.first_trip, false);
    const bool at_trip = after_first || in_flight_after(schedule.trip, after_first);
    const bool after_trips = after_first || in_flight_after(schedule.trip, at_trip);
    auto print_all = [&](const std::vector<ir::ConsumerStep>& steps, Part part) {
        declared.clear();
        wgmmas_in_flight_ = part == Part::FirstTrip ? false
                            : part == Part::Trip    ? at_trip
                            : part == Part::Drain   ? after_trips
                                                    : in_flight_after(schedule.drain, after_trips);
        for (const ir::ConsumerStep& s : steps) print(s, part);
        wgmmas_in_flight_ = false;
    };
    if (!pipelined) {
        source_comment(loop, "warp-specialized loop");
        out_.line(fmt::format("const int {} = {};", trips, expr(loop.trip_count)));
        out_.block(fmt::format("for (int {0} = 0; {0} < {1}; ++{0}, ++tl_it)", k, trips), [&] { print_all(schedule.trip, Part::Trip); });
    } else {
        source_comment(loop, "warp-specialized loop, each trip's first gemm issued with the previous trip's trailing gemms");
        out_.line(fmt::format("const int {} = {};", trips, expr(loop.trip_count)));
        // What the tile's end does only when it had no trips comes first, beside the branch it skips.
        std::vector<ir::ConsumerStep> no_trips, tile_end;
        for (const ir::ConsumerStep& s : schedule.tile_end)
            (s.when == ir::ConsumerStep::When::NoTrips ? no_trips : tile_end).push_back(s);
        print_all(no_trips, Part::TileEnd);
        out_.block(fmt::format("if ({} > 0)", trips), [&] {
            out_.block("", [&] {
                out_.line("// Trip 0: its first gemm and the statements before its trailing gemms.");
                // The loop index, where the trip's statements or their lets read it.
                std::set<const ir::Var*> used = vars_read_in(loop.body);
                for (const ir::StmtPtr& l : lets_needed_by(loop.lets, used)) add_vars(l->as<ir::LetStmt>()->value, used);
                if (used.count(loop.var.get())) out_.line(fmt::format("const int {} = 0;", k));
                print_all(schedule.first_trip, Part::FirstTrip);
            });
            out_.block(fmt::format("for (int {0} = 1; {0} < {1}; ++{0})", k, trips), [&] {
                out_.line("++tl_it;");
                print_all(schedule.trip, Part::Trip);
            });
            out_.line("// The last trip's trailing gemms.");
            print_all(schedule.drain, Part::Drain);
            out_.line("++tl_it;");
        });
        return print_all(tile_end, Part::TileEnd);
    }
    print_all(schedule.tile_end, Part::TileEnd);
}

// copy(acc, G[r +: M, c +: N]) through shared memory: each consumer warpgroup writes each of its
// 64-row slabs (rows 64 * (t * warpgroups + w) onwards) in 64-column chunks into one of its two
// staging boxes (128-byte swizzled, so the 8 rows a warp writes at once hit 8 different bank
// groups), makes the writes visible to the async proxy, and one thread per warpgroup issues the
// TMA store, which clips at the tensor's edges. Before refilling a box, that thread waits until
// the store issued from it two chunks ago has read it (bulk async-groups are per thread, so the
// same thread issues, commits and waits).
void KernelEmitter::emit_tma_store(const ir::Copy& c) {
    const ir::Buffer& frag = *c.src.buffer;
    const ir::Buffer& dst = *c.dst.buffer;
    const FragmentLayout* l = layout_of(frag);
    const int warpgroups = kernel_.threads / 128;
    TLC_CHECK(l && l->kind == LayoutKind::MmaAcc && l->warps_n == 1 && l->warps_m == kernel_.threads / 32,
              "a TMA-stored fragment without the wgmma layout");
    const std::vector<TmaMap> maps = tma_maps(kernel_);
    const int row_axis = ir::tma_row_axis(c.dst);
    const TmaMap& map = map_for(maps, &dst, 64, swizzle_row_elements(dst.dtype), row_axis);
    const std::string coords = tma_box_coordinates(c.dst, row_axis, "tl_chunk_col", "tl_slab_row"); // this chunk's box
    const schedule::StoreProtocol protocol = schedule::store_protocol_of(kernel_);
    TLC_CHECK(protocol.counter_runs_across_tiles, "codegen keeps the staging box counter across tiles");
    const int64_t cols = frag.const_shape[1], chunks_per_slab = cols / 64;
    const int64_t slabs = frag.const_shape[0] / (64 * warpgroups);
    std::string type = cuda_type(dst.dtype);
    source_comment(c, "copy");
    out_.block("", [&] {
        out_.line("const int tl_wg = tl_tid / 128;");
        out_.line(fmt::format("{}* tl_boxes = reinterpret_cast<{}*>(tl_smem + {}) + tl_wg * {} * 64 * 64;  // this warpgroup's staging boxes",
                              type, type, plan_.store_stage_offset, protocol.boxes));
        out_.line("#pragma unroll");
        out_.block(fmt::format("for (int tl_chunk = 0; tl_chunk < {}; ++tl_chunk, ++tl_store_chunks)", slabs * chunks_per_slab), [&] {
            if (slabs > 1)
                out_.line(fmt::format("const int tl_slab_row = 64 * (tl_chunk / {} * {} + tl_wg), tl_chunk_col = 64 * (tl_chunk % {});  // slab, chunk",
                                      chunks_per_slab, warpgroups, chunks_per_slab));
            else
                out_.line("const int tl_slab_row = 64 * tl_wg, tl_chunk_col = 64 * tl_chunk;");
            out_.line(fmt::format("{}* tl_box = tl_boxes + (tl_store_chunks % {}) * 64 * 64;  // boxes in turn, across tiles", type,
                                  protocol.boxes));
            out_.line(fmt::format("if (tl_tid % 128 == 0) tl::sm90::bulk_wait_read<{}>();  // the last store from this box has read it",
                                  protocol.pending_reads));
            out_.line("tl::sm90::named_barrier_sync(2 + tl_wg, 128);");
            out_.line("#pragma unroll");
            out_.block("for (int tl_s = tl_chunk * 32; tl_s < tl_chunk * 32 + 32; tl_s += 2)", [&] {
                out_.line(fmt::format("const int tl_r = {}::row(tl_tid, tl_s) - tl_slab_row, tl_c = {}::col(tl_tid, tl_s) - tl_chunk_col;",
                                      l->type_name, l->type_name));
                out_.line(fmt::format("const {} tl_pair[2] = {{{}, {}}};", type, cast_to(identifier(frag.name) + "[tl_s]", frag.dtype, dst.dtype),
                                      cast_to(identifier(frag.name) + "[tl_s + 1]", frag.dtype, dst.dtype)));
                out_.line(fmt::format("tl::store_vector<{}, 2>(tl_box + tl::sm90::swizzled_offset<64>(tl_r, tl_c), tl_pair);", type));
            });
            if (protocol.fence) out_.line("tl::sm90::fence_proxy_async_shared();  // plain stores -> the TMA engine's reads");
            out_.line("tl::sm90::named_barrier_sync(2 + tl_wg, 128);");
            out_.block("if (tl_tid % 128 == 0)", [&] {
                out_.line(fmt::format("tl::sm90::tma_store_{}d(&{}, tl_box, {});", dst.rank(), map.name, coords));
                out_.line("tl::sm90::bulk_commit();");
            });
        });
    });
}

// The 16-bit fragments that are A operands of the loop's register-form wgmmas and that the kernel
// otherwise touches only element by element (stores, loads, slot-by-slot copies between
// fragments): held as tl::HalfPairs, in the packed form wgmma reads, so that no unpacked copy is
// kept alive (one register per element) beside the packed one.
std::set<const ir::Buffer*> KernelEmitter::packed_register_operands() const {
    std::set<const ir::Buffer*> operands;
    const std::vector<const ir::Gemm*> gemms = ws_loop_->wgmma_gemms();
    for (const ir::Gemm* g : gemms)
        if (const ir::Buffer& a = *g->a.buffer; a.scope == ir::Scope::Fragment && dtype_bytes(a.dtype) == 2 && is_distributed(a))
            operands.insert(&a);
    std::function<void(const ir::StmtPtr&)> visit = [&](const ir::StmtPtr& s) {
        ir::for_each_child(*s, {
            .expr = [](const ir::ExprPtr&) {},
            .region =
                [&](const ir::Region& r, ir::Access) {
                    if (!operands.count(r.buffer.get())) return;
                    auto* g = s->as<ir::Gemm>();
                    auto* c = s->as<ir::Copy>();
                    bool element_wise = c && is_distributed(*c->src.buffer) && is_distributed(*c->dst.buffer);
                    bool register_a = g && g->a.buffer == r.buffer && std::find(gemms.begin(), gemms.end(), g) != gemms.end();
                    if (!element_wise && !register_a) operands.erase(r.buffer.get());
                },
            .store = {},
            .stmt = visit,
        });
    };
    visit(kernel_.body);
    return operands;
}

void KernelEmitter::emit_warp_specialized_body() {
    const ir::WarpSpecializedLoop& loop = *ws_loop_;
    const ir::WarpSpecialization& ws = kernel_.warp_specialization;
    const schedule::MbarrierProtocol protocol = schedule::protocol_of(kernel_, loop);
    out_.line("#if defined(__CUDA_ARCH__) && !TL_SM90A_DEVICE");
    out_.line("__trap();  // built for another arch; the launch stub runs this kernel only on sm_90 devices");
    out_.line("#else");
    emit_grid_dependency();
    emit_layouts();
    emit_views();
    packed_pairs_ = packed_register_operands();
    out_.line("extern __shared__ __align__(1024) unsigned char tl_smem_raw[];");
    out_.line("unsigned char* tl_smem = tl_smem_raw + ((1024 - tl::sm90::smem_address(tl_smem_raw) % 1024) % 1024);");
    emit_shared_declarations();
    out_.line(fmt::format("uint64_t* tl_full = reinterpret_cast<uint64_t*>(tl_smem + {});   // per stage: its TMA loads landed",
                          plan_.barriers_offset));
    out_.line(fmt::format("uint64_t* tl_empty = tl_full + {};  // per stage: every consumer warp finished reading it", protocol.stages));
    std::string last = fmt::format("tl_empty + {}", protocol.stages); // the next free mbarrier
    if (protocol.first_stages) {
        out_.line(fmt::format("uint64_t* tl_first_full = {};  // the ring of the tiles only the first gemm reads: per stage, its loads landed",
                              last));
        out_.line(fmt::format("uint64_t* tl_first_empty = tl_first_full + {};  // per stage: every consumer warp's first gemm retired",
                              protocol.first_stages));
        last = fmt::format("tl_first_empty + {}", protocol.first_stages);
    }
    const bool once = !loop.once.empty();
    if (once) {
        out_.line(fmt::format("uint64_t* tl_once_full = {};  // the tiles loaded once per tile landed", last));
        out_.line("uint64_t* tl_once_empty = tl_once_full + 1;  // every consumer warp finished the tile's wgmmas");
        last = "tl_once_empty + 1";
    }
    const bool dynamic_tiles = ws.dynamic_tiles;
    if (dynamic_tiles) {
        out_.line(fmt::format("uint64_t* tl_tile_full = {};  // the producer wrote the next tile's index", last));
        out_.line("uint64_t* tl_tile_empty = tl_tile_full + 1;  // every consumer warp read it");
        out_.line("int* tl_mailbox = reinterpret_cast<int*>(tl_tile_counter) + 4 * (1 + blockIdx.x);  // this block's 16 bytes beside the counter");
    }
    out_.block("if (threadIdx.x == 0)", [&] {
        for (const bool first_ring : protocol.first_stages ? std::vector<bool>{false, true} : std::vector<bool>{false}) {
            const RingNames ring = ring_names(first_ring);
            out_.block(fmt::format("for (int tl_s = 0; tl_s < {}; ++tl_s)", protocol.ring_stages(first_ring ? 1 : 0)), [&] {
                out_.line(fmt::format("tl::sm90::mbarrier_init(&{}[tl_s], 1);", ring.full));
                const int blocks = ring_shared_in_cluster(first_ring) ? kernel_.cluster_blocks() : 1;
                out_.line(fmt::format("tl::sm90::mbarrier_init(&{}[tl_s], {});  // one arrival per consumer warp{}", ring.empty,
                                      protocol.arrivals_per_phase() * 4 * blocks,
                                      blocks > 1 ? " of each block of the cluster" : ""));
            });
        }
        if (once) {
            out_.line("tl::sm90::mbarrier_init(tl_once_full, 1);");
            out_.line(fmt::format("tl::sm90::mbarrier_init(tl_once_empty, {});  // one arrival per consumer warp",
                                  schedule::once_protocol_of(kernel_).arrivals_per_phase() * 4));
        }
        if (dynamic_tiles) {
            out_.line("tl::sm90::mbarrier_init(tl_tile_full, 1);");
            out_.line(fmt::format("tl::sm90::mbarrier_init(tl_tile_empty, {});  // one arrival per consumer warp",
                                  schedule::tile_handover_protocol_of(kernel_).arrivals_per_phase() * 4));
        }
        out_.line("tl::sm90::mbarrier_init_fence();");
    });
    const bool clusters = !kernel_.cluster.empty();
    if (clusters) {
        out_.line("tl::sm90::cluster_sync();  // the cluster's barriers are initialised before any block uses another's");
        out_.line("const uint32_t tl_cluster_rank = tl::sm90::cluster_block_rank();");
    } else {
        out_.line("__syncthreads();");
    }
    out_.line(tile_counts_declaration());
    out_.line("const int tl_tiles = tl_tiles_x * tl_tiles_y * tl_tiles_z;");
    if (clusters) {
        const std::array<int, 3> c = kernel_.cluster_shape();
        out_.line(fmt::format("const int tl_cluster_tiles_x = tl::cdiv(tl_tiles_x, {}), tl_cluster_tiles_y = tl::cdiv(tl_tiles_y, {}), "
                              "tl_cluster_tiles_z = tl::cdiv(tl_tiles_z, {});",
                              c[0], c[1], c[2]));
        out_.line("const int tl_cluster_tiles = tl_cluster_tiles_x * tl_cluster_tiles_y * tl_cluster_tiles_z;  // the tiles in clusters");
        out_.line("(void)tl_tiles;");
    }
    out_.block(fmt::format("if (threadIdx.x < {})", ws.producer_threads), [&] {
        out_.line("// Producer warpgroup: one thread issues every TMA load.");
        out_.line(fmt::format("tl::sm90::release_registers<{}>();", ws.producer_registers));
        out_.block("if (threadIdx.x == 0)", [&] { emit_producer(loop); });
    });
    out_.block("else", [&] {
        out_.line(fmt::format("// Consumer warpgroups: the kernel's {} threads.", kernel_.threads));
        out_.line(fmt::format("tl::sm90::claim_registers<{}>();", ws.consumer_registers));
        out_.line(fmt::format("const int tl_tid = tl::thread_index<{}>({});", kernel_.threads, ws.producer_threads));
        out_.line("int tl_it = 0;  // trips consumed so far, across tiles");
        if (loop.pingpong)
            out_.line(fmt::format("tl::sm90::pingpong_start<{}, {}>(tl_tid / 128);  // warpgroup 0 issues its wgmmas first", kPingpongBarrier,
                                  kernel_.threads / 128));
        if (plan_.store_stage_offset >= 0) out_.line("int tl_store_chunks = 0;  // epilogue chunks stored so far, across tiles");
        block_sync_ = fmt::format("tl::sm90::named_barrier_sync(1, {})", kernel_.threads);
        // The consumers read every variable of the body but the coordinates of the producer's loads.
        std::set<const ir::Var*> used;
        std::vector<ir::StmtPtr> top_lets;
        for (const ir::StmtPtr& s : static_cast<const ir::Seq*>(kernel_.body.get())->stmts) {
            if (s->kind == ir::StmtKind::Let) {
                top_lets.push_back(s);
            } else if (auto* w = s->as<ir::WarpSpecializedLoop>()) {
                add_vars(w->trip_count, used);
                const std::set<const ir::Var*> body = vars_read_in(w->body);
                used.insert(body.begin(), body.end());
                for (const ir::StmtPtr& l : lets_needed_by(w->lets, body)) add_vars(l->as<ir::LetStmt>()->value, used);
            } else if (auto* c = s->as<ir::Copy>(); !c || !c->tma_once) {
                const std::set<const ir::Var*> read = vars_read_in(s);
                used.insert(read.begin(), read.end());
            }
        }
        const std::vector<ir::StmtPtr> kept = lets_needed_by(top_lets, used);
        for (const ir::StmtPtr& l : top_lets)
            if (std::find(kept.begin(), kept.end(), l) == kept.end()) omitted_lets_.insert(l.get());
        emit_tile_loop([&] {
            if (clusters) emit_cluster_idle_tile(loop);
            stmt(kernel_.body, {});
            // The next tile's epilogue reuses the shared memory this one may still be reading.
            if (plan_.scratch_bytes > 0 || plan_.order.size() > loop.loads.size() + loop.once.size())
                out_.line(block_sync() + ";  // every consumer finished this tile's epilogue");
        }, /*producer=*/false);
        if (plan_.store_stage_offset >= 0)
            out_.line("if (tl_tid % 128 == 0) tl::sm90::bulk_wait<0>();  // the last TMA stores are complete");
        block_sync_ = "__syncthreads()";
        omitted_lets_.clear();
    });
    if (clusters) out_.line("tl::sm90::cluster_sync();  // no block leaves while another may still arrive on its barriers or load into it");
    out_.line("#endif");
}

} // namespace tlc::codegen
