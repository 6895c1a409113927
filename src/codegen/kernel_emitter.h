// Emits one kernel's __global__ function: shared-memory plan, fragment declarations, statements and
// the lowering of every tile operation onto the block's threads.
#pragma once

#include "codegen/codegen.h"
#include "codegen/cuda_writer.h"
#include "codegen/layout_expr.h"
#include "ir/walk.h"

#include <fmt/format.h>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tlc::schedule {
struct SpreadChunks;  // schedule/parallel_chunks.h
}

namespace tlc::codegen {

using schedule::SpreadChunks;

// The layouts infer-layouts chose; codegen only reads them.
using ir::FragmentLayout;
using ir::GemmPlan;
using ir::KernelLayouts;
using ir::LayoutKind;

// A chunk of a fragment's slots: consecutive registers of one thread that hold consecutive columns
// (KernelEmitter::slot_chunk).
struct SlotChunk {
    std::vector<std::string> start; // the coordinates of the chunk's first element; the last a multiple of the width
    std::string offset;             // the slot's position in the chunk
    int64_t width = 1;
};

// Inside a parallel loop anchored on a distributed layout, fragments of that layout are indexed by
// the slot variable instead of coordinates.
struct ElementContext {
    const FragmentLayout* layout = nullptr; // anchor layout, or null
    std::string slot;                       // the slot variable
    std::vector<const ir::Var*> loop_vars;  // the parallel loop's variables
    const ir::For* loop = nullptr;          // the parallel loop
    std::string store_guard;                // when every thread runs every iteration: who stores to memory
    // A blocked anchor whose chunks of `chunk_width` elements tile its last axis: the loop variable
    // of that axis is chunk_start + chunk_offset, with chunk_start a multiple of the width and
    // chunk_offset a constant once the slot loop is unrolled. `v / d` and `v % d` for d dividing
    // the width are printed from the two parts, so the slots of one chunk share those indices.
    const ir::Var* chunked_var = nullptr;
    std::string chunk_start, chunk_offset;
    int64_t chunk_width = 1;
    // Shared-memory reads loaded a chunk at a time before the chunk's slots (emit_parallel): the
    // register that holds each one's element for this slot.
    std::map<const ir::Load*, std::string> chunk_reads;
    // Stores gathered for a whole chunk (a round-robin loop's chunk, emit_chunked_spread): the
    // registers that take each one's element for this slot, and the mask of the slots that stored.
    struct ChunkWrite {
        std::string registers, written;
        std::string element;  // this store's register (an expression of the slot offset)
    };
    std::map<const ir::Store*, ChunkWrite> chunk_writes;
    // Variables printed as another name (a loop variable as its chunk's first value).
    std::map<const ir::Var*, std::string> renamed;
};

// A TMA descriptor parameter of a warp-specialized kernel: one per (global tensor, box shape), for
// the loop's loads and the epilogue's store.
struct TmaMap {
    std::string name;           // kernel parameter, e.g. tl_map_A
    const ir::Buffer* tensor = nullptr;
    int64_t box_rows = 0;       // boxes are [box_rows][box_cols]
    int64_t box_cols = 0;       // one swizzle row: 128, 64 or 32 bytes (ir/dtype.h tile_swizzle_bytes)
    int row_axis = 0;           // the tensor's axis of the box rows (its last axis holds the columns)
};
std::vector<TmaMap> tma_maps(const ir::Kernel& kernel);

class KernelEmitter {
public:
    // Reads the kernel's layouts (kernel.layouts, from infer-layouts).
    KernelEmitter(const ir::Kernel& kernel, const CodegenOptions& options, const SourceManager& sources,
                  DiagnosticEngine& diags, CudaWriter& out);

    void emit();
    // Statements outside any kernel context (bodies of user functions).
    void emit_statements(const ir::StmtPtr& s) { stmt(s, {}); }
    int64_t shared_bytes() const { return plan_.total_bytes; }
    bool ok() const { return ok_; }

    // ---- expressions (emit_expr.cpp)
    std::string expr(const ir::ExprPtr& e, const ElementContext& ctx = {});
    // Element `indices` of a distributed fragment inside a loop anchored on ctx.layout.
    std::string distributed_element(const ir::Buffer& b, const std::vector<ir::ExprPtr>& indices, const ElementContext& ctx) const;
    std::string var_name(const ir::Var& v) const;
    std::string cast_to(const std::string& value, Dtype from, Dtype to) const;
    // Inside a warp-specialized kernel, block.* name the current tile and thread.x / block.x
    // count only the kernel's own (consumer) threads.
    // Block coordinates and tile counts come from variables (tl_block_x, tl_tiles_x, ...), not from
    // blockIdx and gridDim: a warp-specialized kernel's tile loop, a launch in block.y-first order.
    bool tile_coordinates() const { return kernel_.warp_specialization.enabled || kernel_.blocks_y_first || !kernel_.cluster.empty(); }
    void emit_blocks_y_first();
    void emit_blocks_of_clusters();
    std::string tile_counts_declaration();
    int threads() const { return kernel_.threads; }
    bool fast_math() const { return kernel_.options.fast_math; }

private:
    // ---- kernel skeleton (kernel_emitter.cpp)
    void emit_views(); // `view` declarations: aliases of their tensors' pointers
    void emit_grid_dependency(); // a program's kernel: wait for the kernel before it
    void emit_shared_declarations(); // pointers into tl_smem for every shared buffer and the scratch
    // ---- warp-specialized kernels (emit_warp_specialized.cpp)
    void emit_warp_specialized_body();
    std::set<const ir::Buffer*> packed_register_operands() const;
    void emit_tile_loop(const std::function<void()>& body, bool producer);
    struct RingNames {
        std::string full, empty, stage;
    };
    static RingNames ring_names(bool first_ring);
    void emit_producer(const ir::WarpSpecializedLoop& loop);
    void emit_consumer_loop(const ir::WarpSpecializedLoop& loop);
    void emit_wgmma(const ir::Gemm& g, const std::string& stage = "tl_stage");
    void emit_tma_load(const ir::Region& src, const ir::Buffer& dst, const std::string& stage_offset, const std::string& barrier,
                       const std::vector<TmaMap>& maps, int multicast_axes = 0);
    // A TMA box's coordinates in region `r`, innermost axis first: its columns' start plus
    // `col_offset`, then every other axis' start (the row axis's plus `row_offset`, the points as
    // they are); an empty offset adds nothing.
    std::string tma_box_coordinates(const ir::Region& r, int row_axis, const std::string& col_offset, const std::string& row_offset);
    // Thread-block clusters: whether a ring holds a tile the cluster's blocks share (its stages are
    // then released in every block of the cluster), and the trips of a tile past the grid's edge.
    bool ring_shared_in_cluster(bool first_ring) const;
    std::string release_stage(const std::string& empty, const std::string& stage, bool first_ring) const;
    void emit_cluster_idle_tile(const ir::WarpSpecializedLoop& loop);
    void emit_tma_once_wait(const ir::Copy& c);
    void emit_tma_store(const ir::Copy& c);
    // The block-wide barrier of the current code: __syncthreads, or a named barrier over the
    // consumer warpgroups once a warp-specialized kernel has split into roles.
    std::string block_sync() const { return block_sync_; }
    void emit_signature();
    void emit_layouts();
    void stmt(const ir::StmtPtr& s, const ElementContext& ctx);
    void source_comment(const ir::Stmt& s, const std::string& what);
    std::string source_text(const SourceRange& r) const;

    // ---- element addressing (emit_access.cpp)
    // Index expression of buffer element `indices` (strings), and the bounds mask of an element of a
    // global region: inside the tensor, and inside the limit of each bounded axis (axis_end, the
    // exclusive end of the elements of axis d that exist: the tensor's extent, or for a bounded
    // slice `s +: N <= 8192`, min(extent, s + N)).
    std::string element(const ir::Buffer& b, const std::vector<std::string>& indices);
    std::string global_offset(const ir::Buffer& b, const std::vector<std::string>& indices);
    std::string bounds_mask(const ir::Region& r, const std::vector<std::string>& indices);
    // `mask ? <global element `indices` of b, converted to `to`> : pad`. While wgmmas are in flight
    // (a consumer step between an issue and the wait that retires it) the element is read by a
    // predicated load (tl::load_if, zero bits where `mask` fails; the select dropped when
    // `zero_pad`), not behind a branch: a branch there makes ptxas wait for the wgmmas first.
    // `branch_free` asks for the predicated load wherever it is.
    std::string guarded_value(const ir::Buffer& b, const std::vector<std::string>& indices, const std::string& mask, Dtype to,
                              const std::string& pad, bool zero_pad, bool branch_free = false);
    // Whether `b` is the accumulator of a wgmma gemm of the kernel's warp-specialized loop.
    bool is_wgmma_accumulator(const ir::Buffer& b) const;
    std::string axis_end(const ir::Region& r, size_t d);
    // `coord < N` when tile axis `axis` of `r` is bounded (`N <= 8192`): element `coord` exists; "" otherwise.
    std::string exists_along(const ir::Region& r, int axis, const std::string& coord);
    // How many elements of tile axis `axis` of `r` exist: its limit when bounded, else its extent.
    std::string tile_axis_count(const ir::Region& r, int axis);
    // Buffer indices of a region element given its tile coordinates (one per non-point axis).
    std::vector<std::string> region_indices(const ir::Region& r, const std::vector<std::string>& coords);
    std::string point_index(const ir::Range& range);  // a point axis's index: its start, or Idx[start]
    std::vector<std::string> unflatten(const std::string& flat, const std::vector<int64_t>& shape) const;
    std::string flatten(const std::vector<std::string>& idx, const std::vector<int64_t>& shape) const;
    std::string shared_pointer(const ir::Buffer& b) const;
    // Tile coordinates of slot `slot` of a distributed fragment.
    // The chunk slot `slot` of a fragment falls in, when its chunks tile the last axis
    // (`first_of_chunk`: the caller's slot is a chunk's first, a multiple of the width).
    std::optional<SlotChunk> slot_chunk(const ir::Buffer& frag, const std::string& slot, bool first_of_chunk = false) const;
    // A round-robin loop whose threads take chunks of consecutive iterations (schedule/parallel_chunks.h);
    // reports the stores to global memory left one element per access. Returns false, emitting no
    // code, when the loop runs one iteration at a time.
    bool emit_chunked_spread(const ir::For& f, const std::vector<int64_t>& extents, ElementContext& ctx,
                             const std::function<void(const std::vector<std::string>&)>& bind_vars);
    // Before a chunk's slots run: the chunk's loads of `plan` into registers (ctx.chunk_reads) and
    // registers for its stores (ctx.chunk_writes), the loop's last variable printed as `start` in
    // their addresses. Returns the stores to make after the slots (emit_chunk_stores).
    struct ChunkStore {
        std::string type, first, registers, written;
        int64_t run = 0;
        std::vector<std::string> swizzled_indices;  // the first element's, for a tile with swizzled units (else empty)
        const ir::Buffer* buffer = nullptr;
    };
    // Whether `b` is a shared tile whose 16-byte units are permuted by row: XOR-swizzled for column walks
    // (schedule/column_walks.h) or in wgmma's swizzled layout; its elements are addressed one by one.
    bool units_permuted(const ir::Buffer& b) const;
    void emit_swizzled_chunk(const ir::Buffer& b, std::vector<std::string> idx, int64_t run, const std::string& pattern,
                             const std::string& registers);
    std::vector<ChunkStore> emit_chunk_loads(const ir::For& f, const SpreadChunks& plan, const std::string& start,
                                             const std::string& offset, ElementContext& ctx);
    void emit_chunk_stores(const std::vector<ChunkStore>& stores, const std::string& guard);
    void report_scalar_stores(const SpreadChunks& plan);
    // Pair forms of extern functions (emit_pairs.cpp): a loop over a fragment whose threads hold
    // neighbouring elements of a row in consecutive registers, ending with a store of a call of an
    // `extern fn` with a pair form, computes each register pair with one call of it.
    struct PairPlan {
        const ir::Store* store = nullptr;  // null: no pairs (remark R0011 at each call that has a pair form)
        const ir::Call* call = nullptr;
    };
    PairPlan plan_pairs(const ir::For& f, const ir::Buffer* anchor);
    void report_unpaired_calls(const ir::For& f, const std::string& why);
    // The slots `first_slot` and `first_slot + 1`: `open_half(h)` binds the loop's variables for slot
    // first_slot + h; the body but its last statement runs for both, then the pair call and the stores.
    void emit_paired_slots(const ir::For& f, const PairPlan& plan, ElementContext& ctx, const std::string& first_slot,
                           const std::function<void(const std::string&)>& open_half);
    bool emit_chunked_parallel(const ir::For& f, const ir::Buffer& anchor, const std::vector<int64_t>& extents,
                               ElementContext& ctx, const std::function<void(const std::vector<std::string>&)>& bind_vars,
                               const PairPlan& pairs);
    std::vector<std::string> slot_coords(const ir::Buffer& frag, const std::string& slot) const;

    // ---- fragment layouts (emit_layout.cpp)
    // The number of register slots of a distributed layout (a constant expression).
    std::string slot_count(const FragmentLayout& l) const;
    bool k_outer_fits(const FragmentLayout& acc) const;
    // The condition under which slot `slot` of this thread holds an element ("" when every slot does).
    std::string slot_valid(const FragmentLayout& l, const std::string& slot) const;
    // Reduce along an axis into a fragment that holds the source's layout with the axis dropped:
    // a fold over registers, xor shuffles among the lanes of a row, at most one cross-warp step.
    bool emit_sliced_reduce(const ir::Reduce& r);
    bool emit_reduce_by_result_holders(const ir::Reduce& r);
    // The warps that share an element of `to` (a slice of `from` along `axes`) combine their `tl_part`.
    void emit_cross_warp_reduce(const ir::Layout& from, const FragmentLayout& to, const std::vector<int>& axes, ir::ReduceOp op,
                                const ir::ReductionPlan& plan, int64_t outs, const std::string& acc_type);
    void emit_combine_partials(const ir::PartialCombine& c);

    // ---- tile operations (emit_copy.cpp, emit_gemm.cpp, emit_reduce.cpp, emit_parallel.cpp)
    void emit_copy(const ir::Copy& c);
    bool shared_chunks_aligned(const ir::Region& r, int width) const;
    void emit_copy_with_fragment(const ir::Copy& c, bool fragment_is_src);
    std::string chunk_in_bounds(const ir::Region& r, std::vector<std::string> idx, int width);
    void emit_chunk_else_elements(const std::string& chunk, int width, const std::vector<int64_t>& shape,
                                  const std::function<void(const std::vector<std::string>&)>& move);
    bool emit_local_copy_vectorized(const ir::Copy& c, const std::function<void(const std::vector<std::string>&)>& move);
    void emit_copy_flat(const ir::Copy& c);
    bool emit_copy_async(const ir::Copy& c); // false when the copy cannot be asynchronous
    bool emit_copy_async_elements(const ir::Copy& c); // one cp.async per 4- or 8-byte element
    void emit_fill(const ir::Fill& f);
    void emit_gemm(const ir::Gemm& g);
    void emit_stage_to_scratch(const ir::Region& r, const std::string& dst_ptr, int64_t pitch);
    void emit_reduce(const ir::Reduce& r);
    void emit_cumsum(const ir::Cumsum& c);
    // A cumsum of a 1-D fragment held in runs of `run` registers (schedule::register_scan_run).
    void emit_sum_before(const std::string& acc_type, const std::string& partials, int64_t per_line, const std::string& first_warp,
                         bool sync_first);
    void emit_register_scan(const ir::Cumsum& c, int64_t run, const std::string& acc_type, Dtype acc);
    void emit_segmented_scan(const std::vector<int64_t>& shape, int axis, bool reverse, const std::string& tile,
                             const std::string& acc_type);
    void emit_atomic_add(const ir::AtomicAdd& a);
    // The scalar form inside a `parallel` loop: one add per iteration, by the thread that runs it.
    void emit_iteration_atomic_add(const ir::AtomicAdd& a, const ElementContext& ctx);
    bool emit_paired_atomic_add(const ir::AtomicAdd& a);
    void emit_parallel(const ir::For& f);
    // Whether the code of one iteration of ctx.loop prints variable `v`: not where it only indexes
    // a distributed fragment (read by slot) or an access hoisted to its chunk.
    bool printed_in_iteration(const ir::Var& v, const ElementContext& ctx) const;
    // Iterates every element of a tile spread over the threads (or by each thread when
    // `every_thread`); `body` receives the tile coordinates.
    template <typename Body> void for_each_element(const std::vector<int64_t>& shape, bool every_thread, Body body);
    // `for (var = tid; var < count; var += threads)`, written as a fully unrolled loop with a
    // compile-time trip count when short, so address arithmetic that depends only on the thread
    // folds and is hoisted out of enclosing loops.
    template <typename Body> void spread_loop(const std::string& var, int64_t count, Body body);
    // Which holders of a replicated element a loop over a fragment's elements visits: every one
    // (writing the fragment: each keeps its copy) or the first (reading it into memory or a sum).
    enum class Holders { Every, First };
    // Iterates the elements of a fragment this thread holds.
    template <typename Body> void for_each_owned(const ir::Buffer& frag, Holders holders, Body body);
    const FragmentLayout* layout_of(const ir::Buffer& b) const;
    bool is_distributed(const ir::Buffer& b) const;
    std::string fresh(const std::string& base);
    void error(const SourceRange& r, const std::string& message);

    const ir::Kernel& kernel_;
    const ir::SharedMemoryPlan& plan_; // offsets, pitches and scratch of every shared access
    const KernelLayouts& layouts_;
    const CodegenOptions& options_;
    const SourceManager& sources_;
    DiagnosticEngine& diags_;
    CudaWriter& out_;
    int name_counter_ = 0;
    bool ok_ = true;
    std::string block_sync_ = "__syncthreads()";
    // Top-level `let`s the role being emitted does not read (the producer's coordinates, in the
    // consumers of a warp-specialized kernel): not emitted.
    std::set<const ir::Stmt*> omitted_lets_;
    const ir::WarpSpecializedLoop* ws_loop_ = nullptr; // the kernel's warp-specialized loop, if any
    // While a consumer step is printed: whether wgmma groups may be in flight (guarded_value).
    bool wgmmas_in_flight_ = false;
    std::set<const ir::Buffer*> packed_pairs_;          // fragments declared as tl::HalfPairs
    std::optional<ir::BufferUses> buffer_uses_;         // of the kernel body, computed on first use
    // True when the kernel reads or writes `b` (its declaration aside).
    bool referenced(const ir::Buffer& b);
};

std::string kernel_function_name(const ir::Kernel& k);

template <typename Body>
inline void KernelEmitter::for_each_element(const std::vector<int64_t>& shape, bool every_thread, Body body) {
    int64_t n = ir::element_count(shape);
    std::string e = fresh("e");
    if (every_thread) {
        // Unrolled where it is short, so that registers it indexes (a replicated fragment) stay registers.
        if (n <= 256) out_.line("#pragma unroll");
        out_.block(fmt::format("for (int {0} = 0; {0} < {1}; ++{0})", e, n), [&] { body(unflatten(e, shape), e); });
        return;
    }
    spread_loop(e, n, [&] { body(unflatten(e, shape), e); });
}

template <typename Body> inline void KernelEmitter::spread_loop(const std::string& var, int64_t count, Body body) {
    const int64_t threads = kernel_.threads;
    const int64_t trips = (count + threads - 1) / threads;
    if (trips > 32) {
        out_.block(fmt::format("for (int {0} = tl_tid; {0} < {1}; {0} += {2})", var, count, threads), body);
        return;
    }
    std::string i = fresh("i");
    out_.line("#pragma unroll");
    out_.block(fmt::format("for (int {0} = 0; {0} < {1}; ++{0})", i, trips), [&] {
        out_.line(fmt::format("const int {} = tl_tid + {} * {};", var, i, threads));
        if (count % threads == 0) {
            body();
        } else {
            out_.block(fmt::format("if ({} < {})", var, count), body);
        }
    });
}

template <typename Body> inline void KernelEmitter::for_each_owned(const ir::Buffer& frag, Holders holders, Body body) {
    const FragmentLayout* l = layout_of(frag);
    std::string s = fresh("s");
    auto loop = [&] {
        out_.line("#pragma unroll");
        out_.block(fmt::format("for (int {0} = 0; {0} < {1}; ++{0})", s, slot_count(*l)), [&] {
            if (std::string valid = slot_valid(*l, s); !valid.empty()) out_.line(fmt::format("if (!({})) continue;", valid));
            body(slot_coords(frag, s), s);
        });
    };
    std::string first = holders == Holders::First ? first_replica_condition(l->layout) : "";
    if (first.empty())
        loop();
    else
        out_.block(fmt::format("if ({})", first), loop);
}

} // namespace tlc::codegen
