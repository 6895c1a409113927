// Which device pass is compiling: TL_SM90A_DEVICE is 1 only in the sm_90a device pass, where the
// Hopper-only instructions (wgmma, setmaxnreg) exist. The sm90 primitives compile to nothing in the
// other passes, so one generated .cu builds for every arch; the host stubs launch a Hopper kernel
// only on a compute-capability 9.0 device.
#pragma once

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define TL_SM90A_DEVICE 1
#else
#define TL_SM90A_DEVICE 0
#endif

#include <stdint.h>

namespace tl::sm90 {

__device__ __forceinline__ uint32_t smem_address(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

} // namespace tl::sm90
