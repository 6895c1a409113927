// Unit tests of tl::load_chunk_guarded and tl::store_chunk (runtime/tl/thread/memory.cuh) on the
// host: every start position around a row's ends, aligned and unaligned sources, rows that do not
// exist, and every store mask of an 8-element chunk, against one-element references.
#include <cuda_runtime.h>

#include "tl/thread/memory.cuh"

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

namespace {

// A row of `extent` values 1, 2, ..., placed `offset` elements into an over-aligned buffer.
template <typename T> struct Row {
    alignas(16) T storage[256];
    T* row;
    Row(int offset, int extent) : row(storage + offset) {
        for (int i = 0; i < 256; ++i) storage[i] = T(-7);
        for (int i = 0; i < extent; ++i) row[i] = T(i + 1);
    }
};

template <typename T, int N> void check_loads() {
    const int extent = 37;
    for (int offset : {0, 1, 3, 16 / int(sizeof(T))}) {
        Row<T> r(offset + 64, extent);
        for (int start = -N - 1; start <= extent + 1; ++start) {
            for (bool exists : {true, false}) {
                T got[N];
                tl::load_chunk_guarded<T, N>(got, r.row + start, exists, start, extent);
                for (int v = 0; v < N; ++v) {
                    const bool inside = exists && start + v >= 0 && start + v < extent;
                    CHECK_MESSAGE(got[v] == (inside ? T(start + v + 1) : T(0)), "offset ", offset, " start ", start, " slot ", v);
                }
            }
        }
    }
}

template <typename T, int N> void check_stores() {
    for (int offset : {0, 1, 2}) {
        for (unsigned mask = 0; mask < (1u << N); ++mask) {
            Row<T> r(offset, 0);
            T src[N];
            for (int v = 0; v < N; ++v) src[v] = T(100 + v);
            tl::store_chunk<T, N>(r.row + 8, src, mask);
            for (int i = 0; i < 32; ++i) {
                const int v = i - 8;
                const bool stored = v >= 0 && v < N && (mask >> v & 1u);
                CHECK_MESSAGE(r.row[i] == (stored ? T(100 + v) : T(-7)), "offset ", offset, " mask ", mask, " element ", i);
            }
        }
    }
}

} // namespace

TEST_CASE("load_chunk_guarded reads the chunk's elements inside the row and 0 outside") {
    check_loads<float, 4>();
    check_loads<float, 8>();   // 32 bytes: two 16-byte pieces
    check_loads<int16_t, 8>();
    check_loads<int8_t, 16>();
    check_loads<double, 2>();
    check_loads<int32_t, 2>(); // an 8-byte chunk
}

TEST_CASE("store_chunk writes exactly the elements whose bit is set") {
    check_stores<float, 4>();
    check_stores<int16_t, 8>();
    check_stores<int8_t, 8>();
    check_stores<float, 8>();
}
