// Host side of TMA: builds the CUtensorMap of a 2-d row-major tensor for a launch stub, through the
// runtime's driver entry point (the user links only cudart), and the checks that decide whether a
// tensor can be read through TMA at all (16-byte aligned base and row pitch).
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace tl::host {

inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
    static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
        void* p = nullptr;
        cudaDriverEntryPointQueryResult status{};
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &status) != cudaSuccess ||
            status != cudaDriverEntryPointSuccess)
            p = nullptr;
        return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
    }();
    return fn;
}

// True when a [rows][cols] tensor of `element_bytes` elements at `base` satisfies TMA's rules.
inline bool tma_compatible(const void* base, int64_t rows, int64_t cols, int element_bytes) {
    return tensor_map_encoder() != nullptr && reinterpret_cast<uintptr_t>(base) % 16 == 0 &&
           (cols * element_bytes) % 16 == 0 && rows >= 1 && cols >= 1 && rows < (int64_t(1) << 31) &&
           cols < (int64_t(1) << 31);
}

// Everything the encoding of a 2-d tensor map reads: equal keys encode equal descriptors.
struct TensorMapKey {
    const void* base = nullptr;
    int type = -1;
    int element_bytes = 0;
    int64_t rows = 0, cols = 0;
    int box_rows = 0, box_cols = 0;
    bool operator==(const TensorMapKey& o) const {
        return base == o.base && type == o.type && element_bytes == o.element_bytes && rows == o.rows &&
               cols == o.cols && box_rows == o.box_rows && box_cols == o.box_cols;
    }
};

// The descriptors a thread encoded most recently, so that launching again with the same pointer,
// shape and box (every step of a loop, every layer of a model) skips the driver call that encodes
// one (microseconds: as long as a small GEMM). Direct-mapped by a hash of the key, kSlots entries:
// O(1), no allocation, no lock (one cache per thread); a colliding key evicts the older entry.
template <int kSlots = 16> class TensorMapCache {
public:
    // The cached descriptor of `key` into *map, or encode(map) on a miss (kept when it succeeds).
    template <typename Encode> bool get(CUtensorMap* map, const TensorMapKey& key, Encode&& encode) {
        Entry& e = entries_[slot(key)];
        if (e.valid && e.key == key) {
            *map = e.map;
            ++hits_;
            return true;
        }
        if (!encode(map)) return false;
        e.key = key;
        e.map = *map;
        e.valid = true;
        return true;
    }
    long hits() const { return hits_; }

private:
    struct Entry {
        TensorMapKey key;
        CUtensorMap map;
        bool valid = false;
    };
    static int slot(const TensorMapKey& k) {
        uint64_t h = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(k.base)) * 0x9E3779B97F4A7C15ull;
        for (uint64_t v : {static_cast<uint64_t>(k.rows), static_cast<uint64_t>(k.cols),
                           static_cast<uint64_t>(k.box_rows) << 32 | static_cast<uint32_t>(k.box_cols),
                           static_cast<uint64_t>(k.type) << 8 | static_cast<uint64_t>(k.element_bytes)})
            h = (h ^ v) * 0x100000001B3ull;
        return static_cast<int>((h >> 32) % kSlots);
    }
    Entry entries_[kSlots]{};
    long hits_ = 0;
};

// Map of a row-major [rows][cols] tensor read in [box_rows][box_cols] boxes, each box row one
// swizzle row: box_cols * element_bytes is 128, 64 or 32, and the box is swizzled that wide (as a
// wgmma operand of that swizzle mode expects); out-of-bounds elements read as zero. Cached per
// thread.
inline bool make_tensor_map_2d(CUtensorMap* map, const void* base, CUtensorMapDataType type, int element_bytes,
                               int64_t rows, int64_t cols, int box_rows, int box_cols) {
    auto encode = tensor_map_encoder();
    if (encode == nullptr) return false;
    const int row_bytes = box_cols * element_bytes;
    const CUtensorMapSwizzle swizzle = row_bytes == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                                       : row_bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                       : row_bytes == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                                         : CU_TENSOR_MAP_SWIZZLE_NONE;
    if (swizzle == CU_TENSOR_MAP_SWIZZLE_NONE) return false;
    static thread_local TensorMapCache<> cache;
    const TensorMapKey key{base, static_cast<int>(type), element_bytes, rows, cols, box_rows, box_cols};
    return cache.get(map, key, [&](CUtensorMap* out) {
        cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
        cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols) * element_bytes};
        cuuint32_t box[2] = {static_cast<cuuint32_t>(box_cols), static_cast<cuuint32_t>(box_rows)};
        cuuint32_t element_strides[2] = {1, 1};
        CUresult r = encode(out, type, 2, const_cast<void*>(base), dims, strides, box, element_strides,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        return r == CUDA_SUCCESS;
    });
}

} // namespace tl::host
