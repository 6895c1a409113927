// The asynchronous protocols of warp-specialized kernels and their verifier.
//
// MbarrierProtocol is the pipeline's full/empty handshake; StoreProtocol is the epilogue's staging
// of TMA stores through shared memory. Each struct is the one description codegen emits from and
// the verifier model-checks: every interleaving of the threads and of the asynchronous completions
// (TMA loads landing, wgmma groups retiring, TMA stores finishing their reads) is explored for small
// trip, chunk and tile counts. A read of a stage before its data landed, an overwrite of shared
// memory an asynchronous operation still reads, an async-proxy read of plain stores not ordered by
// fence.proxy.async, a parity wait that passes on the wrong phase, or a deadlock is an internal
// error (never silently wrong code).
#pragma once

#include "ir/ir.h"

#include <optional>
#include <string>

namespace tlc::schedule {

struct MbarrierProtocol {
    int stages = 2;             // ring of shared-memory stages, one full/empty mbarrier pair each
    // A second ring, for the tiles only a software-pipelined trip's first gemm reads
    // (WarpSpecializedLoop::first_stages): that many stages, released as soon as that gemm
    // retires; the main ring then holds the trailing gemms' tiles. 0: one ring.
    int first_stages = 0;
    int consumer_groups = 1;    // consumer warpgroups; each arrives once per trip on `empty`
    int mma_in_flight = 1;      // wgmma.wait_group N after issuing a trip's wgmmas
    int release_lag = 1;        // then release the stage of trip it - release_lag (the rest at tile end)
    bool producer_waits_empty = true;
    int empty_arrivals = -1;    // arrivals that complete an `empty` phase (-1: consumer_groups)
    // Parities (trip `it`, stage `it % stages`, round `it / stages`): the consumers wait on full
    // with parity (round + full_parity_offset) & 1; the producer waits on empty with parity
    // (round + empty_parity_offset) & 1, which with offset 1 passes at once in round 0 (the
    // "previous" phase of a fresh barrier counts as complete).
    int full_parity_offset = 0;
    int empty_parity_offset = 1;
    int full_parity(int it, int ring = 0) const { return (it / ring_stages(ring) + full_parity_offset) & 1; }
    int empty_parity(int it, int ring = 0) const { return (it / ring_stages(ring) + empty_parity_offset) & 1; }
    int ring_stages(int ring) const { return ring ? first_stages : stages; }
    int arrivals_per_phase() const { return empty_arrivals < 0 ? consumer_groups : empty_arrivals; }
    // Thread-block clusters: the blocks whose producers each load a slice of every stage of the
    // rings in `shared_rings` (bit r: ring r, 0 the main ring, 1 the first gemm's; TMA multicast)
    // and whose consumer groups each release such a stage in every block of the cluster (`empty`
    // then completes with arrivals_per_phase() arrivals from each block).
    int cluster_blocks = 1;
    int shared_rings = 0;
};

// Per consumer warpgroup: `boxes` staging boxes used round-robin by a chunk counter that runs on
// across tiles; before writing a box the issuing thread waits until at most `pending_reads` of its
// stores still read shared memory; every writer fences (fence.proxy.async) before the barrier that
// precedes the store.
struct StoreProtocol {
    int boxes = 2;
    int pending_reads = 1;
    bool fence = true;
    bool counter_runs_across_tiles = true; // false: the box index restarts at each tile
    int writers = 2;                       // abstract writer threads (the first one issues)
};

// The ping-pong of the consumer warpgroups (WarpSpecializedLoop::pingpong; warpgroup.cuh): each
// issue of wgmmas is a turn: bar.sync on its own named barrier, issue, bar.arrive on the next
// warpgroup's ((w + 1) % N); the last warpgroup arrives on warpgroup 0's barrier once at the
// start, so warpgroup 0 goes first. A phase of a barrier completes with one arrival each of the
// waiting warpgroup and the one passing to it (2 x 128 threads).
struct PingpongProtocol {
    int warpgroups = 2;
    bool start_arrival = true;  // pingpong_start
    bool pass_to_next = true;   // pingpong_pass_turn arrives on the next warpgroup's barrier (else its own)
    int arrivals_per_phase = 2; // warpgroups whose arrivals complete a phase (the barrier's 256 threads)
};

MbarrierProtocol protocol_of(const ir::Kernel& kernel, const ir::WarpSpecializedLoop& loop);
// The mbarrier pair of the tiles a warp-specialized kernel loads once per tile (copies marked
// tma_once): a one-stage ring whose trips are the block's tiles; the producer waits until every
// consumer warp has retired the previous tile's wgmmas (tl_once_empty) before refilling it, the
// consumers wait for the load (tl_once_full) before the loop.
MbarrierProtocol once_protocol_of(const ir::Kernel& kernel);
// The handover of each tile's index when the tiles go in a dynamic order
// (WarpSpecialization::dynamic_tiles): a ring of one stage whose trips are the block's tiles; the
// producer waits until every consumer warp read the last index (tl_tile_empty) before writing the
// next one to the block's mailbox and arriving on tl_tile_full; the consumers wait on tl_tile_full,
// read the index and arrive at once (nothing of theirs stays in flight).
MbarrierProtocol tile_handover_protocol_of(const ir::Kernel& kernel);
StoreProtocol store_protocol_of(const ir::Kernel& kernel);
PingpongProtocol pingpong_protocol_of(const ir::Kernel& kernel);

// Explores the protocol for 1..max_trips trips per tile and 1..2 tiles; returns the first
// violation found (with the trace that leads to it), or nullopt.
std::optional<std::string> check_mbarrier_protocol(const MbarrierProtocol& p, int max_trips);
// The same exploration with the consumers doing what the loop's schedule (WarpSpecializedLoop::
// schedule, pass schedule-wgmma) says, step by step, instead of what the protocol's knobs describe.
std::optional<std::string> check_consumer_schedule(const MbarrierProtocol& p, const ir::WarpSpecializedLoop& loop, int max_trips);
// The gemm tokens of the loop's schedule, run for 1..max_trips trips of one tile: no statement
// touches the accumulator or register operand of a gemm in flight, or an accumulator retired without
// a fence; no fence names a token in flight; no stage is released while an issued gemm reads it;
// no barrier comes, and no statement writes the tile, while a gemm reading a tile the consumers write
// is in flight; nothing is in flight when the tile ends. Returns the first violation.
std::optional<std::string> check_gemm_tokens(const ir::WarpSpecializedLoop& loop, int max_trips);

// Explores the ping-pong for 1..max_turns turns of each warpgroup: two inside their turns at once,
// or a deadlock, is a violation.
std::optional<std::string> check_pingpong_protocol(const PingpongProtocol& p, int max_turns);
// Explores the store protocol for 1..max_chunks chunks per tile and 1..3 tiles.
std::optional<std::string> check_store_protocol(const StoreProtocol& p, int max_chunks);

// The protocol as verify_mbarrier_protocol explores it: every index and parity is computed from the
// stage counts the same way for any count, and the state space grows exponentially with them, so
// longer rings are explored as 4 stages (one ring) or 3 (two rings, the difference between them
// kept where it can be).
MbarrierProtocol explored_bounds(MbarrierProtocol p);

// Runs the checks on every warp-specialized kernel: its loop's consumer schedule against the
// producer, the gemm tokens, the ping-pong, the tiles loaded once per tile, and the store protocol
// when its epilogue stores through TMA. A violation is an internal error.
void verify_mbarrier_protocol(const ir::Kernel& kernel);

} // namespace tlc::schedule
