// Barrier inference in three separate steps: a read-only planner, a rewriter that inserts the
// planned barriers, and an independent verifier of the final IR.
//
// Precondition: tile ops not yet lowered; no Barrier nodes written by the user (none can be).
// Postcondition: every ordered pair of shared-memory accesses that may come from different threads
// (RAW, WAR, WAW) is separated by a Barrier on every path, loop back-edges included.
//
//   copy(A[..], a); gemm(a, b, acc);      =>   copy(A[..], a); barrier  // RAW on `a`
//                                              gemm(a, b, acc);
#pragma once

#include "ir/ir.h"

#include <map>
#include <vector>
#include <string>

namespace tlc::schedule {

// Statement before which a barrier goes -> the hazard it resolves.
using BarrierPlan = std::map<const ir::Stmt*, std::string>;

// barrier_plan.cpp: finds the fewest barrier positions (per straight-line run) that resolve every
// hazard. Hazards inside a branch whose condition differs between threads cannot be resolved by a
// barrier; they are returned in `divergent` (branch, hazard) for the caller to report.
BarrierPlan plan_barriers(const ir::StmtPtr& body,
                          std::vector<std::pair<const ir::Stmt*, std::string>>* divergent = nullptr);

// barrier_insert.cpp: rebuilds `body` with an ir::Barrier before each planned statement.
ir::StmtPtr insert_barriers(const ir::StmtPtr& body, const BarrierPlan& plan);

// barrier_verify.cpp: re-checks the scheduled kernel; a missing barrier is an internal error
// (TLC_CHECK), never silently wrong code. Returns the number of shared accesses checked.
size_t verify_barriers(const ir::Kernel& kernel);

} // namespace tlc::schedule
