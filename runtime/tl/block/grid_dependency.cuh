// Programmatic dependent launch (compute capability 9.0 and newer): a kernel of a program waits for
// the kernel before it on the stream, and lets the one after it be scheduled early.
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

// Lets the next kernel on the stream, if it was launched with programmatic stream serialization,
// be scheduled once every block of this grid has run this (or exited). The next kernel still
// waits for this one's completion before it touches memory (wait_for_previous_grid). A no-op
// before sm_90.
__device__ __forceinline__ void allow_next_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

} // namespace tl
