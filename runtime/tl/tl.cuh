// Master header of the tlc device runtime: the core and every optional header. A generated .cu
// includes tl/core.cuh and only the optional headers (sm90/, host/tma.h, ...) its code uses.
#pragma once

#include "tl/core.cuh"
#include "tl/sm90/mbarrier.cuh"
#include "tl/sm90/tma.cuh"
#include "tl/sm90/warpgroup.cuh"
#include "tl/sm90/wgmma.cuh"
#include "tl/sm90/tile_order.cuh"
#include "tl/sm90/cluster.cuh"
#include "tl/host/tma.h"
#include "tl/host/workspace.h"
#include "tl/host/tile_counter.h"
