// Host side of the dynamic tile order: the global-memory counter from which a launch's persistent
// blocks claim their tiles, and each block's mailbox, through which its producer hands the claimed
// tile to its consumers; one set per (device, stream).
#pragma once

#include "tl/host/launch.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>

namespace tl::host {

// A zeroed 32-bit counter followed by one 16-byte mailbox per block (the counter takes the first
// 16 bytes), for a launch of up to `blocks` blocks on `stream` (of the current device). The
// persistent grid has at most one block per SM and the buffer is sized for the device's SM count,
// so a larger `blocks` is an error.
//
// A launch leaves its counter at zero (its last claim resets it), and launches on one stream run
// in order, so every launch on the stream reuses the stream's counter; launches on different
// streams never share one. The per-thread default stream, one handle for a different stream in
// each host thread, gets a counter per thread. A new counter is zeroed in stream order, before
// the launch that asks for it. A launch captured into a CUDA graph gets a counter of its own,
// which the graph keeps, and its zeroing is captured too (each replay starts from zero): run one
// instantiation of such a graph at a time.
inline cudaError_t tile_counter(cudaStream_t stream, int64_t blocks, unsigned** out) {
    static std::mutex mutex;
    static std::map<std::tuple<int, cudaStream_t, std::thread::id>, unsigned*> counters;
    int device = 0;
    if (cudaError_t err = cudaGetDevice(&device); err != cudaSuccess) return err;
    const int sm_count = current_device_traits().sm_count;  // cached per device
    if (sm_count <= 0 || blocks > sm_count) return cudaErrorInvalidValue;
#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
    const bool per_thread = stream == cudaStreamPerThread || stream == nullptr;
#else
    const bool per_thread = stream == cudaStreamPerThread;
#endif
    const auto key = std::make_tuple(device, stream, per_thread ? std::this_thread::get_id() : std::thread::id{});
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (cudaError_t err = cudaStreamIsCapturing(stream, &capture); err != cudaSuccess) return err;
    std::lock_guard<std::mutex> lock(mutex);
    const bool capturing = capture != cudaStreamCaptureStatusNone;
    if (!capturing) {
        if (auto it = counters.find(key); it != counters.end()) {
            *out = it->second;
            return cudaSuccess;
        }
    }
    // cudaMalloc is allowed while a stream captures in relaxed mode; the allocation stays out of
    // any graph.
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    if (cudaError_t err = cudaThreadExchangeStreamCaptureMode(&mode); err != cudaSuccess) return err;
    unsigned* counter = nullptr;
    const size_t bytes = 16 * (1 + static_cast<size_t>(sm_count));
    cudaError_t err = cudaMalloc(&counter, bytes);
    cudaThreadExchangeStreamCaptureMode(&mode);
    if (err != cudaSuccess) return err;
    if (err = cudaMemsetAsync(counter, 0, bytes, stream); err != cudaSuccess) {
        cudaFree(counter);
        return err;
    }
    if (!capturing) counters[key] = counter;
    *out = counter;
    return cudaSuccess;
}

} // namespace tl::host
