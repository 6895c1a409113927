// stdlib_transpose_test.cu — the batched transpose of stdlib/transpose.tl: Y[b] = X[b]ᵀ, compared
// element by element (a transpose moves values, so they must be equal), with guards around every
// buffer, at shapes that are and are not multiples of the tile. T bf16 by default (-DTLC_T=float
// for the file generated with -D T=f32).
#include "transpose.h"
#include "harness.h"

#include <string>

#ifndef TLC_T
#define TLC_T __nv_bfloat16
#endif
using T = TLC_T;

namespace {

th::Outcome check(int64_t BT, int64_t M, int64_t N, uint64_t seed) {
    const auto x = th::random_vector<T>(th::numel({BT, M, N}), seed);
    th::DeviceBuffer<T> X(x), Y(th::numel({BT, N, M}));
    Y.poison();
    th::check_launch(tlc::transpose(X.get(), Y.get(), BT, M, N), "transpose");
    const auto y = Y.download();
    for (int64_t b = 0; b < BT; ++b)
        for (int64_t r = 0; r < M; ++r)
            for (int64_t c = 0; c < N; ++c)
                if (th::to_f64(y[size_t((b * N + c) * M + r)]) != th::to_f64(x[size_t((b * M + r) * N + c)]))
                    return th::expect(false, "Y[" + std::to_string(b) + ", " + std::to_string(c) + ", " + std::to_string(r) + "] wrong");
    return th::expect(X.guards_intact() && Y.guards_intact(), "out-of-bounds write");
}

}  // namespace

int main() {
    th::Suite suite(th::test_name("stdlib_transpose"));
    const int64_t shapes[][3] = {{3, 65, 130}, {1, 1, 1}, {2, 64, 64}, {5, 1000, 37}, {1, 37, 1000}, {16, 1024, 4096}, {300, 129, 257}};
    uint64_t seed = 12000;
    for (const auto& s : shapes) {
        const bool small = s[0] * s[1] * s[2] <= 200000;
        suite.run("transpose/BT=" + std::to_string(s[0]) + ",M=" + std::to_string(s[1]) + ",N=" + std::to_string(s[2]),
                  [&] { return check(s[0], s[1], s[2], seed); }, small ? th::When::always : th::When::full);
        seed += 10;
    }
    suite.run("transpose/BT=0_empty_grid", [] {
        th::DeviceBuffer<T> X(0), Y(0);
        th::check_launch(tlc::transpose(X.get(), Y.get(), 0, 10, 10), "transpose");
        return th::expect(Y.guards_intact(), "an empty launch wrote");
    });
    suite.run("transpose/null_pointer", [] {
        th::DeviceBuffer<T> Y(64);
        return th::expect_invalid([&] { return tlc::transpose(nullptr, Y.get(), 1, 8, 8); });
    });
    return suite.finish();
}
