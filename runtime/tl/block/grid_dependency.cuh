// Programmatic dependent launch (compute capability 9.0 and newer): a kernel of a program waits for
// the kernel before it on the stream, which may still be running when it is scheduled.
#pragma once

namespace tl {

// Waits until the grids this one depends on (the previous kernel on the stream, when this one was
// launched with programmatic stream serialization) have completed and their writes to memory are
// visible. A no-op for a kernel launched without it, and before sm_90.
__device__ __forceinline__ void wait_for_previous_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

} // namespace tl
