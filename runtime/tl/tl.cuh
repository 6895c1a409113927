// Master header of the tlc device runtime: every generated .cu includes only this (and its own header).
#pragma once

#include "tl/types.cuh"
#include "tl/layout.cuh"
#include "tl/thread/math.cuh"
#include "tl/thread/memory.cuh"
#include "tl/thread/cp_async.cuh"
#include "tl/warp/ldmatrix.cuh"
#include "tl/warp/mma.cuh"
#include "tl/warp/reduce.cuh"
#include "tl/block/reduce.cuh"
#include "tl/sm90/mbarrier.cuh"
#include "tl/sm90/tma.cuh"
#include "tl/sm90/warpgroup.cuh"
#include "tl/sm90/wgmma.cuh"
#include "tl/host/launch.h"
#include "tl/host/tma.h"
#include "tl/host/workspace.h"
