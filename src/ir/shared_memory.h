// The kernel's dynamic shared memory as planned after scheduling: where every shared tile, the
// lowerings' scratch, the TMA-store staging boxes and the mbarriers live, and the size the launch
// requests. schedule/plan_shared_memory.cpp writes it, schedule/verify_shared_bounds.cpp checks it,
// and codegen reads every offset, pitch and size from it (never a formula of its own).
#pragma once

#include "ir/dtype.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tlc::ir {

struct Buffer;
struct Stmt;

// A shared tile's place. A tile loaded by the warp-specialized loop's TMA ring holds `stages`
// unpadded copies in a swizzled layout (128-, 64- or 32-byte, by its row's bytes); any other tile
// is one copy whose rows may be padded against bank conflicts, or, for a tile that chunked
// `parallel` loops read down its columns, unpadded with its 16-byte units XOR-swizzled: unit u of
// row r lies at unit u ^ ((r + r / xor_rows) % xor_keys) of the row (schedule/column_walks.h).
struct SharedSlot {
    int64_t offset = 0;    // bytes from the start of the dynamic shared memory
    int64_t rows = 1;      // elements / last extent
    int64_t cols = 1;      // the last extent
    int64_t row_pitch = 1; // elements between rows (>= cols)
    int elem_bytes = 1;
    int stages = 1;
    bool swizzled = false; // TMA's swizzle (slot 1024-byte aligned; stages whole periods of the pattern)
    int64_t xor_rows = 0;  // > 0: the XOR swizzle of 16-byte units, keyed by row + row / xor_rows
    int64_t xor_keys = 0;  // ... modulo xor_keys (a power of two that divides the row's units)
    int64_t xor_unit() const { return 16 / elem_bytes; } // elements per 16-byte unit
    int64_t stage_bytes() const { return rows * row_pitch * elem_bytes; }
    // The swizzle width in bytes (ir/dtype.h swizzle_bytes_of_row), 0 when not swizzled.
    int64_t swizzle_bytes() const { return swizzled ? swizzle_bytes_of_row(cols * elem_bytes) : 0; }
    int64_t bytes() const { return stages * stage_bytes(); }
};

// A gemm operand that is not in shared memory, copied into the scratch area with a padded row
// pitch so that the tensor cores (or the FMA loop) can read it from shared memory.
struct StagedOperand {
    int64_t offset = 0; // bytes from the start of the scratch area
    int64_t rows = 0;   // 0: this operand is not staged
    int64_t cols = 0;
    int64_t pitch = 0;  // elements between rows
    int elem_bytes = 0;
    // Bytes from `offset` to one past the last element written: row r, column c lands at
    // r * pitch + c.
    int64_t touched_bytes() const { return rows ? ((rows - 1) * pitch + cols) * elem_bytes : 0; }
    int64_t reserved_bytes() const { return rows * pitch * elem_bytes; }
};

// The scratch one lowering uses, from the start of the scratch area (lowerings run one after
// another, separated by barriers, so each starts at 0).
struct ScratchUse {
    std::string what;           // e.g. "block reduction of `m`", for the IR dump and errors
    int64_t bytes = 0;          // what the lowering may touch
    StagedOperand a, b;         // gemm: the staged operands (rows == 0 when in shared memory)
};

struct SharedMemoryPlan {
    bool planned = false;
    std::map<const Buffer*, SharedSlot> buffers;
    std::vector<const Buffer*> order;           // allocation order, for deterministic output
    std::map<const Stmt*, ScratchUse> scratch;  // every lowering that communicates through scratch
    // Tiles read down their columns by a chunked loop that keep padded rows, and why (a remark
    // when the loop then runs one element at a time).
    std::map<const Buffer*, std::string> unswizzled_column_walks;
    int64_t scratch_offset = 0;
    int64_t scratch_bytes = 0;                  // the largest use
    const Stmt* largest_scratch_use = nullptr;  // its statement (the first in program order)
    int64_t store_stage_offset = -1;            // TMA-store staging boxes (-1: none)
    int64_t store_stage_bytes = 0;
    int64_t barriers_offset = -1;               // warp-specialized loop's full/empty mbarriers (-1: none)
    int64_t barriers_bytes = 0;
    int64_t alignment_slack = 0;                // a warp-specialized kernel aligns its base to 1024 itself
    int64_t total_bytes = 0;                    // what the launch requests
};

} // namespace tlc::ir
