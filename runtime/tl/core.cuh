// The core of the tlc runtime, which every generated .cu includes: dtypes, layouts, per-thread math
// and memory, cp.async, warp mma and reductions, the launch functions' argument checks.
#pragma once

#include "tl/types.cuh"
#include "tl/layout.cuh"
#include "tl/thread/math.cuh"
#include "tl/thread/half_pairs.cuh"
#include "tl/thread/memory.cuh"
#include "tl/thread/cp_async.cuh"
#include "tl/warp/ldmatrix.cuh"
#include "tl/warp/mma.cuh"
#include "tl/warp/reduce.cuh"
#include "tl/block/reduce.cuh"
#include "tl/block/grid_dependency.cuh"
#include "tl/host/launch.h"
