// Host-side workspaces of program launch functions: one device buffer per (device, stream), grown
// on demand in stream order and reused by every later launch on that stream.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <map>
#include <mutex>
#include <utility>

namespace tl::host {

// A workspace's bytes rounded up so that the next one starts 256-byte aligned.
constexpr int64_t workspace_align(int64_t bytes) { return (bytes + 255) / 256 * 256; }

// A device buffer of at least `bytes` for work queued on `stream` (of the current device). It stays
// valid for everything queued on the stream until a later call asks for more; that call frees it in
// stream order (after the work queued before) and allocates a larger one. Work on one stream runs
// in order, so launches sharing the buffer never overlap. Under CUDA graph capture, make one launch
// before capturing (so that no allocation is captured) or pass a workspace of your own.
inline cudaError_t stream_workspace(size_t bytes, cudaStream_t stream, void** out) {
    struct Buffer {
        void* pointer = nullptr;
        size_t bytes = 0;
    };
    static std::mutex mutex;
    static std::map<std::pair<int, cudaStream_t>, Buffer> buffers;
    int device = 0;
    if (cudaError_t err = cudaGetDevice(&device); err != cudaSuccess) return err;
    std::lock_guard<std::mutex> lock(mutex);
    Buffer& b = buffers[{device, stream}];
    if (b.bytes < bytes || b.pointer == nullptr) {
        if (b.pointer != nullptr) {
            if (cudaError_t err = cudaFreeAsync(b.pointer, stream); err != cudaSuccess) return err;
            b = Buffer{};
        }
        size_t want = bytes > 256 ? bytes : 256;
        if (cudaError_t err = cudaMallocAsync(&b.pointer, want, stream); err != cudaSuccess) return err;
        b.bytes = want;
    }
    *out = b.pointer;
    return cudaSuccess;
}

} // namespace tl::host
