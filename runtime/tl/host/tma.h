// Host side of TMA: builds the CUtensorMap of a row-major tensor (2 to 5 dims) for a launch stub, through the
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

// Everything the encoding of a tensor map reads: equal keys encode equal descriptors. dims are
// row-major (dims[rank - 1] contiguous); boxes are [box_rows][box_cols] in dims row_dim and
// rank - 1, one element in every other dim.
struct TensorMapKey {
    const void* base = nullptr;
    int type = -1;
    int element_bytes = 0;
    int rank = 0, row_dim = 0;
    int64_t dims[5] = {};
    int box_rows = 0, box_cols = 0;
    bool operator==(const TensorMapKey& o) const {
        if (base != o.base || type != o.type || element_bytes != o.element_bytes || rank != o.rank || row_dim != o.row_dim ||
            box_rows != o.box_rows || box_cols != o.box_cols)
            return false;
        for (int i = 0; i < rank; ++i)
            if (dims[i] != o.dims[i]) return false;
        return true;
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
        for (int i = 0; i < k.rank; ++i) h = (h ^ static_cast<uint64_t>(k.dims[i])) * 0x100000001B3ull;
        for (uint64_t v : {static_cast<uint64_t>(k.box_rows) << 32 | static_cast<uint32_t>(k.box_cols),
                           static_cast<uint64_t>(k.type) << 16 | static_cast<uint64_t>(k.element_bytes) << 8 |
                               static_cast<uint64_t>(k.rank) << 4 | static_cast<uint64_t>(k.row_dim)})
            h = (h ^ v) * 0x100000001B3ull;
        return static_cast<int>((h >> 32) % kSlots);
    }
    Entry entries_[kSlots]{};
    long hits_ = 0;
};

// Map of a row-major tensor of `rank` (2..5) dims `dims` read in boxes of [box_rows][box_cols]
// elements in dims `row_dim` and rank - 1 (one element in every other dim), each box row one
// swizzle row: box_cols * element_bytes is 128, 64 or 32, and the box is swizzled that wide (as a
// wgmma operand of that swizzle mode expects); out-of-bounds elements read as zero. Cached per
// thread.
inline bool make_tensor_map(CUtensorMap* map, const void* base, CUtensorMapDataType type, int element_bytes, int rank,
                            const int64_t* dims, int row_dim, int box_rows, int box_cols) {
    auto encode = tensor_map_encoder();
    if (encode == nullptr || rank < 2 || rank > 5 || row_dim < 0 || row_dim >= rank - 1) return false;
    const int row_bytes = box_cols * element_bytes;
    const CUtensorMapSwizzle swizzle = row_bytes == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                                       : row_bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                       : row_bytes == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                                         : CU_TENSOR_MAP_SWIZZLE_NONE;
    if (swizzle == CU_TENSOR_MAP_SWIZZLE_NONE) return false;
    static thread_local TensorMapCache<> cache;
    TensorMapKey key{base, static_cast<int>(type), element_bytes, rank, row_dim, {}, box_rows, box_cols};
    for (int i = 0; i < rank; ++i) key.dims[i] = dims[i];
    return cache.get(map, key, [&](CUtensorMap* out) {
        // The driver takes the innermost dim first; strides (bytes) of every dim but the innermost.
        cuuint64_t sizes[5], strides[4];
        cuuint32_t box[5], element_strides[5];
        uint64_t stride = static_cast<uint64_t>(element_bytes);
        for (int d = 0; d < rank; ++d) {
            const int dim = rank - 1 - d;
            sizes[d] = static_cast<cuuint64_t>(dims[dim]);
            if (d > 0) strides[d - 1] = stride;
            stride *= static_cast<uint64_t>(dims[dim]);
            box[d] = dim == rank - 1 ? static_cast<cuuint32_t>(box_cols) : dim == row_dim ? static_cast<cuuint32_t>(box_rows) : 1u;
            element_strides[d] = 1;
        }
        CUresult r = encode(out, type, static_cast<cuuint32_t>(rank), const_cast<void*>(base), sizes, strides, box,
                            element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        return r == CUDA_SUCCESS;
    });
}

// The same for a row-major [rows][cols] tensor.
inline bool make_tensor_map_2d(CUtensorMap* map, const void* base, CUtensorMapDataType type, int element_bytes,
                               int64_t rows, int64_t cols, int box_rows, int box_cols) {
    const int64_t dims[2] = {rows, cols};
    return make_tensor_map(map, base, type, element_bytes, 2, dims, 0, box_rows, box_cols);
}

} // namespace tl::host
