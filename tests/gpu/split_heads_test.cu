// split_heads_test.cu — Y[B, H, S, D] = X[B, S, H * D] split by heads (samples/split_heads.tl, whose
// kernel reads X through a view [B, S, H, D]); a pure copy, expected exact. -DTLC_T / -DTLC_D test a
// variant generated with -D T=... / -D D=... (defaults: the sample's f16 and 64).
#include "split_heads.h"
#include "harness.h"

#ifndef TLC_T
#define TLC_T __half
#endif
#ifndef TLC_D
#define TLC_D 64
#endif
using T = TLC_T;
constexpr int64_t D = TLC_D;

namespace {

th::Outcome check(int64_t B, int64_t S, int64_t H, uint64_t seed) {
    const auto x = th::random_vector<T>(th::numel({B, S, H * D}), seed);
    th::DeviceBuffer<T> X(x), Y(th::numel({B, H, S, D}));
    Y.poison();
    th::check_launch(tlc::split_heads(X.get(), Y.get(), B, S, H * D, H), "split_heads");
    const auto y = Y.download();
    std::vector<double> ref(y.size());
    for (int64_t b = 0; b < B; ++b)
        for (int64_t s = 0; s < S; ++s)
            for (int64_t h = 0; h < H; ++h)
                for (int64_t d = 0; d < D; ++d)
                    ref[((b * H + h) * S + s) * D + d] = th::to_f64(x[((b * S + s) * H + h) * D + d]);
    return th::numeric(th::rel_err(y, ref), th::Dtype<T>::bound, X.guards_intact() && Y.guards_intact());
}

}  // namespace

int main() {
    th::Suite suite(th::test_name("split_heads"));
    struct Shape { int64_t B, S, H; };
    const Shape shapes[] = {{1, 1, 1}, {2, 70, 3}, {1, 64, 8}, {3, 129, 5}, {4, 2048, 16}};
    uint64_t seed = 900;
    for (const Shape& s : shapes) {
        suite.run("B=" + std::to_string(s.B) + ",S=" + std::to_string(s.S) + ",H=" + std::to_string(s.H),
                  [&] { return check(s.B, s.S, s.H, seed); }, s.B * s.S * s.H * D > 300000 ? th::When::full : th::When::always);
        seed += 10;
    }
    suite.run("S=0_empty_grid", [&] {
        th::DeviceBuffer<T> X(0), Y(0);
        th::check_launch(tlc::split_heads(X.get(), Y.get(), 2, 0, 4 * D, 4), "split_heads");
        return th::expect(Y.guards_intact(), "an empty launch wrote to Y");
    });
    suite.run("view_does_not_cover_X", [&] {  // C = 100 is not H * D: the view's precondition fails
        th::DeviceBuffer<T> X(2 * 3 * 100), Y(2 * 3 * 3 * D);
        return th::expect_invalid([&] { return tlc::split_heads(X.get(), Y.get(), 2, 3, 100, 3); });
    });
    suite.run("null_pointer", [&] {
        th::DeviceBuffer<T> X(64), Y(64);
        return th::expect_invalid([&] { return tlc::split_heads(nullptr, Y.get(), 1, 1, D, 1); });
    });
    return suite.finish();
}
