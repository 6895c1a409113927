// Pass `walk-grid` (see walk_grid.h): one-tile-per-block kernels that stage their tiles in shared
// memory walk the grid's tiles in a pipelined loop over resident blocks.
#include "schedule/walk_grid.h"

#include "ir/mutate.h"
#include "ir/substitute.h"
#include "ir/walk.h"
#include "schedule/pipeline_loops.h"

#include <fmt/format.h>

#include <array>
#include <set>

namespace tlc::schedule {

namespace {

// A top-level copy that pipeline-loops can issue a tile ahead: global into a whole shared tile.
bool stages_a_tile(const ir::StmtPtr& s) {
    auto* c = s->as<ir::Copy>();
    return c && c->src.buffer->scope == ir::Scope::Global && c->dst.buffer->scope == ir::Scope::Shared && c->dst.is_whole();
}

bool copies_from_global(const ir::StmtPtr& s) {
    bool found = false;
    ir::walk_stmts(s, [&](const ir::Stmt& t) {
        if (auto* c = t.as<ir::Copy>(); c && c->src.buffer->scope == ir::Scope::Global) found = true;
    });
    return found;
}

// Why the body streams its own tiles or cannot be repeated per tile; empty when it can.
std::string body_blocker(const ir::StmtPtr& body) {
    std::string why;
    ir::walk_stmts(body, [&](const ir::Stmt& s) {
        if (!why.empty()) return;
        if (s.as<ir::Return>()) why = "the body returns early";
        if (s.as<ir::WarpSpecializedLoop>()) why = "the kernel is warp-specialized";
        if (auto* f = s.as<ir::For>(); f && f->loop_kind != ir::LoopKind::Parallel && copies_from_global(f->body))
            why = f->loop_kind == ir::LoopKind::Pipelined ? "a `pipelined` loop streams its own tiles"
                                                          : "a loop copies its own tiles from global memory";
    });
    return why;
}

// block.{x,y,z} -> the tile's coordinates, grid.{x,y,z} -> the tile counts.
class TileCoordinates : public ir::Mutator {
public:
    TileCoordinates(std::array<ir::ExprPtr, 3> block, std::array<ir::ExprPtr, 3> grid) : block_(std::move(block)), grid_(std::move(grid)) {}

protected:
    using ir::Mutator::visit;
    ir::ExprPtr visit(const ir::NodePtr<ir::Builtin>& op) override {
        switch (op->builtin) {
            case ir::BuiltinKind::BlockIdxX: return block_[0];
            case ir::BuiltinKind::BlockIdxY: return block_[1];
            case ir::BuiltinKind::BlockIdxZ: return block_[2];
            case ir::BuiltinKind::GridDimX: return grid_[0];
            case ir::BuiltinKind::GridDimY: return grid_[1];
            case ir::BuiltinKind::GridDimZ: return grid_[2];
            default: return op;
        }
    }

private:
    std::array<ir::ExprPtr, 3> block_, grid_;
};

int64_t shared_bytes(const ir::Buffer& b) { return b.num_elements() * dtype_bytes(b.dtype); }

} // namespace

bool walk_grid(ir::Kernel& kernel, int64_t shared_memory_limit, DiagnosticEngine& diags) {
    if (!kernel.options.walk_grid || !kernel.options.persistent || kernel.warp_specialization.enabled || kernel.walks_grid) return false;
    auto* seq = kernel.body ? kernel.body->as<ir::Seq>() : nullptr;
    if (!seq) return false;
    // Only a kernel that stages a tile in shared memory has loads to put in flight ahead.
    const ir::Stmt* staged = nullptr;
    std::set<const ir::Buffer*> staged_tiles;
    for (const ir::StmtPtr& s : seq->stmts)
        if (stages_a_tile(s)) {
            if (!staged) staged = s.get();
            staged_tiles.insert(s->as<ir::Copy>()->dst.buffer.get());
        }
    auto not_walked = [&](SourceRange at, const std::string& why, const std::string& fix) {
        diags.report(DiagKind::GridNotWalked, at, kernel.name, why);
        diags.note(DiagKind::NoteFix, at, fix);
        return false;
    };
    if (!staged)
        return not_walked(kernel.name_range, "its body copies no tile from global into shared memory at its top level",
                             "copy the block's tile into a whole shared tile at the top of the kernel body");
    // A kernel that streams in its own loops, or sizes its grid by the GPU, walks already.
    if (std::string why = body_blocker(kernel.body); !why.empty())
        return not_walked(staged->range, why, "drop `@walk_grid`: the kernel streams its tiles already");
    for (const ir::ExprPtr& g : kernel.grid)
        if (ir::reads_builtin(g, ir::BuiltinKind::SmCount))
            return not_walked(staged->range, "its grid is sized by `sm_count`",
                                 "drop `@walk_grid`, or size the grid by the data (one block per tile)");

    // One tile in all: nothing to walk.
    int64_t constant_tiles = 1;
    for (const ir::ExprPtr& g : kernel.grid) {
        std::optional<int64_t> c = ir::const_int(g);
        constant_tiles = c ? constant_tiles * *c : -1;
        if (!c) break;
    }
    if (constant_tiles == 1)
        return not_walked(staged->range, "its grid is one tile", "drop `@walk_grid`");
    if (!kernel.cluster.empty())
        return not_walked(staged->range, "the blocks of a cluster run together, which a walk over resident blocks would not keep",
                          "drop the `cluster` clause to let the blocks walk the tiles");
    int64_t bytes = 0;
    for (const ir::StmtPtr& s : seq->stmts)
        if (auto* a = s->as<ir::Alloc>(); a && a->buffer->scope == ir::Scope::Shared)
            bytes += shared_bytes(*a->buffer) * (staged_tiles.count(a->buffer.get()) ? 2 : 1);
    if (bytes > shared_memory_limit / 2)
        return not_walked(staged->range, fmt::format("its shared tiles, with a second buffer for each staged one, take {} bytes, more than "
                                      "half of the {} a block may have, so fewer than two blocks would fit an SM",
                                      bytes, shared_memory_limit),
                          "use smaller tiles, or write the walk yourself: a grid sized by `sm_count` and a `pipelined` loop over "
                          "the tiles (docs/language.md, section 5.5)");

    // Names no variable or buffer of the kernel has.
    std::set<std::string> taken = ir::names_in(kernel);
    const SourceRange at = kernel.name_range;
    auto fresh = [&](const std::string& base, ir::VarKind kind) {
        return std::make_shared<ir::Var>(ir::Var{ir::fresh_name(taken, base), Dtype::I32, kind, at});
    };

    std::vector<ir::StmtPtr> out;     // before the loop: the hoisted allocations, the tile counts
    std::vector<ir::StmtPtr> trip;    // the loop body
    std::array<ir::ExprPtr, 3> counts = {ir::make_int(1), ir::make_int(1), ir::make_int(1)};
    static const char* const axis_names[3] = {"x", "y", "z"};
    for (size_t i = 0; i < kernel.grid.size(); ++i) {
        if (ir::const_int(kernel.grid[i])) {
            counts[i] = kernel.grid[i];
            continue;
        }
        ir::VarPtr v = fresh(fmt::format("tiles_{}", axis_names[i]), ir::VarKind::Let);
        out.push_back(std::make_shared<ir::LetStmt>(v, kernel.grid[i], at));
        counts[i] = ir::make_var(v);
    }
    ir::ExprPtr tiles = counts[0];
    for (size_t i = 1; i < 3; ++i)
        if (ir::const_int(counts[i]) != 1) tiles = ir::make_binary(ir::BinaryOp::Mul, tiles, counts[i]);

    ir::VarPtr walk = fresh("tile_walk", ir::VarKind::LoopVar);
    ir::VarPtr tile = fresh("tile", ir::VarKind::Let);
    auto block_x = std::make_shared<ir::Builtin>(ir::BuiltinKind::BlockIdxX, at);
    auto grid_x = std::make_shared<ir::Builtin>(ir::BuiltinKind::GridDimX, at);
    trip.push_back(std::make_shared<ir::LetStmt>(
        tile, ir::make_binary(ir::BinaryOp::Add, block_x, ir::make_binary(ir::BinaryOp::Mul, ir::make_var(walk), grid_x)), at));
    // The tile's coordinates: x fastest, as the hardware numbers the blocks of a grid.
    std::array<ir::ExprPtr, 3> coordinates = {ir::make_int(0), ir::make_int(0), ir::make_int(0)};
    ir::ExprPtr rest = ir::make_var(tile);
    for (size_t i = 0; i < kernel.grid.size(); ++i) {
        const bool last = i + 1 == kernel.grid.size();
        ir::ExprPtr value = last ? rest : ir::make_binary(ir::BinaryOp::Mod, rest, counts[i]);
        ir::VarPtr v = fresh(fmt::format("tile_{}", axis_names[i]), ir::VarKind::Let);
        trip.push_back(std::make_shared<ir::LetStmt>(v, value, at));
        coordinates[i] = ir::make_var(v);
        if (!last) rest = ir::make_binary(ir::BinaryOp::Div, rest, counts[i]);
    }
    TileCoordinates to_tile(coordinates, counts);
    for (const ir::StmtPtr& s : seq->stmts) {
        if (auto* a = s->as<ir::Alloc>(); a && a->buffer->scope != ir::Scope::Local) {
            // Shared and fragment tiles are declared once, before the walk; a fragment's initial
            // value is filled in at the top of each tile.
            out.push_back(a->init ? std::make_shared<ir::Alloc>(a->buffer, nullptr, a->range) : s);
            if (a->init) trip.push_back(std::make_shared<ir::Fill>(ir::whole(a->buffer), to_tile.mutate(a->init), a->range));
            continue;
        }
        trip.push_back(to_tile.mutate(s));
    }
    ir::ExprPtr trips = std::make_shared<ir::Call>(
        ir::Intrinsic::Cdiv, std::vector<ir::ExprPtr>{ir::make_binary(ir::BinaryOp::Sub, tiles, block_x), grid_x}, Dtype::I32, at);
    ir::LoopOptions options;
    options.stages = 2;
    out.push_back(std::make_shared<ir::For>(ir::LoopKind::Pipelined, std::vector<ir::VarPtr>{walk}, std::vector<ir::ExprPtr>{trips},
                                            options, std::make_shared<ir::Seq>(std::move(trip), kernel.body->range), staged->range));
    ir::Kernel walked = kernel;
    walked.body = std::make_shared<ir::Seq>(std::move(out), kernel.body->range);
    // The walk pays only when pipeline-loops can issue the next tile's copies ahead.
    bool pipelined = false;
    ir::walk_stmts(pipeline_loops(walked, nullptr), [&](const ir::Stmt& s) { pipelined |= s.as<ir::AsyncCommit>() != nullptr; });
    if (!pipelined)
        return not_walked(staged->range, "no copy of its tiles could be issued a tile ahead (two copies write one shared tile, a tile is read before "
                          "it is copied, or a copied region depends on a value loaded from memory)",
                          "copy each tile once, into a shared tile of its own, at the top of the kernel body");
    kernel.body = walked.body;
    kernel.walks_grid = true;
    return true;
}

} // namespace tlc::schedule
