// The mbarrier protocol of warp-specialized loops and its verifier. The protocol (MbarrierProtocol)
// is the one description that codegen emits from and that the verifier model-checks: every
// interleaving of the producer, the consumer warpgroups and the asynchronous TMA and wgmma
// completions is explored for small trip and tile counts, and a read of a stage before its data
// landed, an overwrite of a stage still being read, a parity wait that passes on the wrong phase, or
// a deadlock is an internal error (never silently wrong code).
#pragma once

#include "ir/ir.h"

#include <optional>
#include <string>

namespace tlc::schedule {

struct MbarrierProtocol {
    int stages = 2;             // ring of shared-memory stages, one full/empty mbarrier pair each
    int consumer_groups = 1;    // consumer warpgroups, each arriving once per trip on `empty`
    int mma_in_flight = 1;      // wgmma.wait_group N before releasing the previous trip's stage
    bool producer_waits_empty = true;
    // Parities (trip `it`, stage `it % stages`, round `it / stages`): the consumers wait on full
    // with parity round & 1; the producer waits on empty with parity (round & 1) ^ 1, which
    // passes at once in round 0 (the "previous" phase of a fresh barrier counts as complete).
    int full_parity(int it) const { return (it / stages) & 1; }
    int empty_parity(int it) const { return ((it / stages) & 1) ^ 1; }
};

MbarrierProtocol protocol_of(const ir::Kernel& kernel, const ir::WarpSpecializedLoop& loop);

// Explores the protocol for 1..max_trips trips per tile and 1..2 tiles; returns the first
// violation found (with the trace that leads to it), or nullopt.
std::optional<std::string> check_mbarrier_protocol(const MbarrierProtocol& p, int max_trips);

// Runs check_mbarrier_protocol on every warp-specialized loop of the kernel; a violation is an
// internal error.
void verify_mbarrier_protocol(const ir::Kernel& kernel);

} // namespace tlc::schedule
