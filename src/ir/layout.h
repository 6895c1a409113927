// Register-tile layouts: which thread of the block holds which element of a fragment in which
// register, and over which threads each element is replicated — one data structure with a small
// algebra (product, slice, expand, permute, vector width, reduction plan). See docs/layouts.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tlc::ir {

enum class LayoutAxis : uint8_t { Register, Thread };

// One digit of a mixed-radix split of a tile coordinate: the digit's `extent` values go to
// register (or thread) indices 0, stride, 2·stride, ...
struct LayoutFactor {
    int64_t extent = 1;
    LayoutAxis axis = LayoutAxis::Register;
    int64_t stride = 1;
    bool operator==(const LayoutFactor&) const = default;
};

// How a reduce along one axis runs over a layout: combine `registers` values per thread, then
// exchange with xor shuffles among the lanes that shared a row, then (when `warps` > 1) once across
// the warps that did.
struct ReductionPlan {
    int64_t registers = 1;             // values per thread folded into one (the axis' register digits)
    std::vector<int> shuffle_xor;      // lane masks, one butterfly step each
    int64_t warps = 1;                 // warps holding parts of one row: one cross-warp exchange if > 1
    bool shuffles_only = true;         // false when a lane digit is not a power of two (no xor tree)

    // The values the cross-warp exchange of `outputs` results puts in the scratch: one per warp and
    // result, each warp's results in a run of their own, rounded up to 32 from 32 results on (the run
    // is swizzled so that the 32 lanes of a warp touch 32 banks, which leaves fewer than 32 results
    // in place; codegen/emit_reduce.cpp).
    int64_t exchange_slots(int64_t outputs) const { return (outputs < 32 ? outputs : (outputs + 31) / 32 * 32) * warps; }
};

// A register digit a slice keeps: digit (reg / from_stride) % extent of the sliced layout's
// register `reg` is the digit of stride `to_stride` in the slice's register index.
struct RegisterDigit {
    int64_t from_stride = 1, extent = 1, to_stride = 1;
    bool operator==(const RegisterDigit&) const = default;
};

// A layout of a tile of `shape` over a block of `threads` threads. The tile's axes are grouped into
// modes (one axis each, or several axes flattened row-major into one mode); each mode's
// coordinate is split into factors, minor first: coordinate = d0 + e0·(d1 + e1·(d2 + ...)). The
// element goes to register Σ dᵢ·strideᵢ over the register factors, and to thread Σ dᵢ·strideᵢ over
// the thread factors plus any combination of the replication factors (the threads no factor
// reaches, see replication()). A mode whose extents multiply to more than its size has padding
// slots, which hold no element.
struct Layout {
    struct Mode {
        int axes = 1; // consecutive tile axes flattened into this mode
        std::vector<LayoutFactor> factors;
        bool operator==(const Mode&) const = default;
    };
    std::vector<int64_t> shape;
    int64_t threads = 1;
    std::vector<Mode> modes;

    // Every thread holds every element, registers in row-major order.
    static Layout replicated(const std::vector<int64_t>& shape, int64_t threads);
    // The tile flattened row-major and cut into chunks of `vector` elements dealt round-robin to the
    // threads: thread t holds chunks t, t + threads, ...
    static Layout blocked(const std::vector<int64_t>& shape, int64_t threads, int64_t vector);
    // Per axis, for tiles that are reduced or broadcast along an axis: the last axis cut into
    // chunks of `vector` elements on consecutive threads, each other axis (last to first) over the
    // threads left, the rest of each axis in registers (row-major); threads no axis needs hold
    // replicas. Equal to blocked() for most tiles whose last extent is a multiple of the chunks.
    // With `compact_rows` (a tile reduced along its last axis), a row spans no more threads than
    // the tile needs to use them all, so that each warp holds whole rows when there are enough.
    static Layout blocked_rows(const std::vector<int64_t>& shape, int64_t threads, int64_t vector,
                               bool compact_rows = false);
    // The mma.sync m16n8 accumulator layout over an [m, n] tile, the block's warps arranged
    // warps_m × warps_n (warp w at row w / warps_n, column w % warps_n); per thread, the four
    // accumulator registers of each 16×8 tile, tiles ordered row-major within the warp's part.
    // With `m_interleaved`, a warp's 16-row tiles are not adjacent but 16·warps_m rows apart (warp
    // row w holds rows 16w + 16·warps_m·t + 0..15, t = 0, 1, ...): the wgmma accumulator of
    // several 64-row slabs per warpgroup. With `warps_m_fastest`, warp w is at row w % warps_m,
    // column w / warps_m instead: warpgroups of 4 warps side by side along N (a wgmma accumulator
    // whose columns are split over the warpgroups).
    static Layout mma_accumulator(int64_t m, int64_t n, int64_t warps_m, int64_t warps_n, bool m_interleaved = false,
                                  bool warps_m_fastest = false);
    // One thread holding a tile of `shape` in row-major registers (the unit of product()).
    static Layout registers_only(const std::vector<int64_t>& shape);
    // `threads` threads arranged over `shape` row-major, one element each.
    static Layout threads_only(const std::vector<int64_t>& shape);

    int rank() const { return static_cast<int>(shape.size()); }
    // Registers each thread needs: one past the largest register index.
    int64_t registers() const;
    // Threads holding each element (threads / the threads the factors reach).
    int64_t replicas() const;
    // The thread digits no factor uses: an element lives in every thread that differs from its
    // owner only in these digits. Empty when every element has one owner.
    std::vector<LayoutFactor> replication() const;
    // False for factors that overlap or leave gaps the replication cannot describe, shapes the modes
    // do not cover, or register indices used twice.
    bool valid(std::string* why = nullptr) const;
    // True when each axis is its own mode (slice/expand/reduction_plan need it for their axis).
    bool per_axis() const;

    struct Slot {
        int64_t thread = 0;
        int64_t reg = 0;
        bool operator==(const Slot&) const = default;
    };
    // Where element `coord` lives (its first replica).
    Slot place(const std::vector<int64_t>& coord) const;
    // Every thread holding `coord`, ascending.
    std::vector<int64_t> owners(const std::vector<int64_t>& coord) const;
    // The element a thread's register holds, or nullopt (padding, an unused register).
    std::optional<std::vector<int64_t>> element(int64_t thread, int64_t reg) const;
    // Consecutive elements of the last axis held in consecutive registers of one thread (the width
    // of a vector load or store), at least 1.
    int64_t vector_width() const;

    // The layout of a reduce's result over `axis`: the axis dropped, its thread digits becoming
    // replication (the threads that shared a row share its result), its register digits folded
    // and the remaining registers renumbered densely. nullopt when `axis` shares a mode.
    std::optional<Layout> slice(int axis) const;
    // The layout of a tile that drops several axes (ascending, each its own mode): a broadcast
    // operand read at fewer axes than the tile it is combined with. With `map`, also how this
    // layout's register indices map to the slice's (compose the digits: Σ digit · to_stride).
    std::optional<Layout> slice(const std::vector<int>& axes, std::vector<RegisterDigit>* map = nullptr) const;
    // The register of slice(axes) that holds the element register `reg` of this layout holds.
    static int64_t sliced_register(int64_t reg, const std::vector<RegisterDigit>& map);
    // The inverse of slice: a new axis of `extent` at position `axis`, split by `factors` (register
    // strides in units of the existing registers' count are appended after them; thread factors
    // must use digits that are replication in this layout). nullopt when that does not fit.
    std::optional<Layout> expand(int axis, int64_t extent, std::vector<LayoutFactor> factors) const;
    // The axes reordered: result axis i is this layout's axis order[i] (per-axis layouts only).
    std::optional<Layout> permute(const std::vector<int>& order) const;
    // How a reduce along `axis` runs (per-axis layouts only).
    std::optional<ReductionPlan> reduction_plan(int axis) const;
    // Along several axes at once: their registers folded, their lanes' shuffles, their warps.
    std::optional<ReductionPlan> reduction_plan(const std::vector<int>& axes) const;

    // Factors merged where one continues the other, extent-1 factors dropped: equal layouts have
    // equal normal forms.
    Layout normalized() const;
    bool operator==(const Layout& other) const;
    // e.g. `[64, 32] over 128 threads: (8:t4 2:r2 2:r8 2:t64, 2:r1 4:t1 2:r4 2:t32) 16 registers`.
    std::string str() const;
};

// The blocked product: `inner` repeated over the tile of `outer` (same rank, per-axis). Axis i of
// the result has extent inner.shape[i] · outer.shape[i]; the outer digits are the more significant
// ones, their thread strides scaled by inner.threads and register strides by inner.registers().
// E.g. mma_accumulator = product(product(m16n8 atom, registers_only(tiles)), threads_only(warps)).
std::optional<Layout> product(const Layout& inner, const Layout& outer);

} // namespace tlc::ir
