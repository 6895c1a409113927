// Host-side helpers of the generated launch stubs: argument checks and the readable message of the
// last failed launch (per host thread).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tl::host {

inline std::string& last_error_storage() {
    thread_local std::string message;
    return message;
}

// Records `message` as the last error and returns cudaErrorInvalidValue.
inline cudaError_t invalid_argument(const std::string& message) {
    last_error_storage() = message;
    return cudaErrorInvalidValue;
}

// A tensor argument's pointer: null only for a tensor without elements (`empty`; PyTorch's
// data_ptr() of an empty tensor is null), else aligned to its element size.
inline cudaError_t check_pointer(const void* p, const char* kernel, const char* name, size_t element_bytes, bool empty = false) {
    if (p == nullptr && empty) return cudaSuccess;
    if (p == nullptr) return invalid_argument(std::string(kernel) + ": `" + name + "` is a null pointer");
    if (reinterpret_cast<uintptr_t>(p) % element_bytes != 0)
        return invalid_argument(std::string(kernel) + ": `" + name + "` is not aligned to its element size (" +
                                std::to_string(element_bytes) + " bytes)");
    return cudaSuccess;
}

inline cudaError_t check_dim(int64_t value, const char* kernel, const char* name) {
    if (value < 0) return invalid_argument(std::string(kernel) + ": dimension `" + name + "` is negative (" + std::to_string(value) + ")");
    if (value > INT32_MAX) return invalid_argument(std::string(kernel) + ": dimension `" + name + "` exceeds 2^31 - 1");
    return cudaSuccess;
}

// Records the CUDA error of a failed runtime call (launch, attribute) with its context.
inline cudaError_t record(cudaError_t err, const char* kernel, const char* what) {
    if (err != cudaSuccess) last_error_storage() = std::string(kernel) + ": " + what + ": " + cudaGetErrorString(err);
    return err;
}

// Compute capability of the current device and its SM count (cached per device).
struct DeviceTraits {
    int major = 0;
    int minor = 0;
    int sm_count = 0;
};
inline DeviceTraits current_device_traits() {
    static thread_local int cached_device = -1;
    static thread_local DeviceTraits cached{};
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) return {};
    if (dev != cached_device) {
        DeviceTraits t{};
        if (cudaDeviceGetAttribute(&t.major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&t.minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&t.sm_count, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
            return {};
        cached = t;
        cached_device = dev;
    }
    return cached;
}

// Fails the launch (cudaErrorInvalidDeviceFunction, with a message) when the current device's
// compute capability, as major * 10 + minor, is below `needed`: `what` needs that instruction set.
inline cudaError_t check_compute_capability(int needed, const char* kernel, const char* what) {
    const DeviceTraits t = current_device_traits();
    if (t.major * 10 + t.minor >= needed) return cudaSuccess;
    last_error_storage() = std::string(kernel) + ": " + what + " needs compute capability " + std::to_string(needed / 10) + "." +
                           std::to_string(needed % 10) + " or newer; this device has " + std::to_string(t.major) + "." +
                           std::to_string(t.minor);
    return cudaErrorInvalidDeviceFunction;
}

// The launch of a kernel through cudaLaunchKernelEx, for what the triple-chevron syntax cannot say:
// a cluster shape (`cluster` of 0 x 0 x 0: none) and programmatic stream serialization
// (`overlap_previous`: the kernel may be scheduled before the previous kernel on the stream has
// finished; it must call tl::wait_for_previous_grid before it touches memory). The latter is asked
// for only on devices of compute capability 9.0 and newer, which have it.
struct LaunchShape {
    dim3 grid;
    dim3 block;
    size_t shared_bytes = 0;
    dim3 cluster = dim3(0, 0, 0);
    bool overlap_previous = false;
};
template <typename... Params, typename... Args>
inline cudaError_t launch(void (*kernel)(Params...), const LaunchShape& shape, cudaStream_t stream, Args&&... args) {
    cudaLaunchConfig_t config = {};
    config.gridDim = shape.grid;
    config.blockDim = shape.block;
    config.dynamicSmemBytes = shape.shared_bytes;
    config.stream = stream;
    cudaLaunchAttribute attributes[2] = {};
    unsigned count = 0;
    if (shape.cluster.x > 0) {
        attributes[count].id = cudaLaunchAttributeClusterDimension;
        attributes[count].val.clusterDim.x = shape.cluster.x;
        attributes[count].val.clusterDim.y = shape.cluster.y;
        attributes[count].val.clusterDim.z = shape.cluster.z;
        ++count;
    }
    if (shape.overlap_previous && current_device_traits().major >= 9) {
        attributes[count].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attributes[count].val.programmaticStreamSerializationAllowed = 1;
        ++count;
    }
    config.attrs = attributes;
    config.numAttrs = count;
    return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

// The builtin `sm_count` of launch expressions (grid, requires, when, a program's lets): the SM
// count of the current device; 1 when the device cannot be queried (the launch then reports why).
inline int sm_count() {
    const int n = current_device_traits().sm_count;
    return n > 0 ? n : 1;
}

// `compute()` for `kernel` on the current device, computed once per kernel, device and `what`
// (the quantity) on each host thread; 1 when the device cannot be queried.
template <typename Compute> inline int64_t cached_per_kernel(const void* kernel, int what, Compute compute) {
    struct Entry {
        const void* kernel;
        int device;
        int what;
        int64_t value;
    };
    static thread_local std::vector<Entry> cache;
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) return 1;
    for (const Entry& e : cache)
        if (e.kernel == kernel && e.device == dev && e.what == what) return e.value;
    const int64_t value = compute();
    cache.push_back({kernel, dev, what, value});
    return value;
}

// The blocks of `kernel` the current device holds at once: blocks resident per SM (at `threads`
// threads and `shared_bytes` of dynamic shared memory a block) times its SMs; at least 1. Cached
// per kernel and device on each host thread.
template <typename Kernel> inline int64_t resident_blocks(Kernel* kernel, int threads, size_t shared_bytes) {
    return cached_per_kernel(reinterpret_cast<const void*>(kernel), 0, [&]() -> int64_t {
        int per_sm = 0;
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, shared_bytes) != cudaSuccess || per_sm < 1) {
            (void)cudaGetLastError();  // the launch reports what is wrong
            per_sm = 1;
        }
        return int64_t(per_sm) * sm_count();
    });
}

// The clusters of `cluster_blocks` blocks of `kernel` (1-d, at `threads` threads and `shared_bytes`
// of dynamic shared memory a block) that the current device holds at once: fewer than its SMs
// divided by the cluster's blocks where a GPC's SMs do not split into whole clusters. At least 1;
// cached per kernel and device on each host thread.
template <typename Kernel> inline int64_t resident_clusters(Kernel* kernel, int threads, size_t shared_bytes, int cluster_blocks) {
    return cached_per_kernel(reinterpret_cast<const void*>(kernel), 1, [&]() -> int64_t {
        cudaLaunchConfig_t config = {};
        config.gridDim = dim3(unsigned(cluster_blocks) * unsigned(sm_count()), 1, 1);
        config.blockDim = dim3(unsigned(threads), 1, 1);
        config.dynamicSmemBytes = shared_bytes;
        cudaLaunchAttribute attribute = {};
        attribute.id = cudaLaunchAttributeClusterDimension;
        attribute.val.clusterDim.x = unsigned(cluster_blocks);
        attribute.val.clusterDim.y = 1;
        attribute.val.clusterDim.z = 1;
        config.attrs = &attribute;
        config.numAttrs = 1;
        int clusters = 0;
        if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) != cudaSuccess || clusters < 1) {
            (void)cudaGetLastError();  // the launch reports what is wrong
            clusters = std::max(1, sm_count() / cluster_blocks);
        }
        return int64_t(clusters);
    });
}

// The shared-memory carveout (percent of an SM's shared memory, for
// cudaFuncAttributePreferredSharedMemoryCarveout) that holds as many blocks of `kernel` as its
// threads, registers and the blocks-per-SM limit allow, each with `shared_bytes` of dynamic shared
// memory; the driver rounds it up to a configuration it supports. Asking for all of the shared
// memory instead shrinks the L1 cache that the global loads in flight go through (a bf16 transpose
// of 8 KB a block: 0.85x a copy against 0.99x). 100 when the device cannot be queried.
template <typename Kernel> inline int occupancy_carveout(Kernel* kernel, int threads, size_t shared_bytes) {
    int dev = 0, per_sm_bytes = 0, reserved = 0, blocks = 0;
    cudaFuncAttributes attributes{};
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&per_sm_bytes, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev) != cudaSuccess ||
        cudaFuncGetAttributes(&attributes, kernel) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, 0) != cudaSuccess || per_sm_bytes <= 0 || blocks < 1) {
        (void)cudaGetLastError();  // the launch reports what is wrong
        return 100;
    }
    const int64_t needed = int64_t(blocks) * int64_t(shared_bytes + attributes.sharedSizeBytes + size_t(reserved));
    const int64_t percent = (100 * needed + per_sm_bytes - 1) / per_sm_bytes;
    return percent >= 100 ? 100 : int(percent);
}

} // namespace tl::host

namespace tlc {
// The readable message of the last launch-stub failure on this host thread ("" if none).
inline const char* last_error_message() { return tl::host::last_error_storage().c_str(); }
} // namespace tlc

// The same for C and other languages (ctypes): declare it as
//     const char* tlc_last_error_message(void);
// Every file that includes this header defines it, as an inline function that the compiler must
// emit even when the file does not call it (`used`); the linker keeps one copy per program, like
// any inline function, however many generated .cu files are linked together.
#if defined(__GNUC__) || defined(__clang__)
extern "C" inline __attribute__((used)) const char* tlc_last_error_message() {
    return tl::host::last_error_storage().c_str();
}
#else
extern "C" inline const char* tlc_last_error_message() { return tl::host::last_error_storage().c_str(); }
#endif
