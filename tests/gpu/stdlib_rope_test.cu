// stdlib_rope_test.cu — the rotary embeddings of stdlib/rope.tl against float64, in place on
// X[NT, H, D]: rope_half pairs (x[i], x[i + D/2]), rope_interleaved pairs (x[2i], x[2i + 1]), each
// rotated by the angle of its token's position (tables Cos, Sin: [P, D/2], f32). Positions include
// -1 and P (rows left unchanged). T f16 and D = 128 by default (-DTLC_T, -DTLC_D for other builds).
#include "rope.h"
#include "harness.h"

#include <cmath>

#ifndef TLC_T
#define TLC_T __half
#endif
#ifndef TLC_D
#define TLC_D 128
#endif
using T = TLC_T;
constexpr int64_t D = TLC_D;

namespace {

th::Outcome check(bool interleaved, int64_t NT, int64_t H, int64_t P, uint64_t seed) {
    const int64_t half = D / 2;
    const auto x = th::random_vector<T>(th::numel({NT, H, D}), seed);
    std::vector<int32_t> pos(static_cast<size_t>(NT));
    th::Rng rng(seed + 1);
    for (auto& p : pos) p = static_cast<int32_t>(rng.next() % uint64_t(P + 2)) - 1;  // -1 .. P
    std::vector<float> cs(static_cast<size_t>(P * half)), sn(cs.size());
    for (int64_t p = 0; p < P; ++p)
        for (int64_t i = 0; i < half; ++i) {
            const double angle = double(p) * std::pow(10000.0, -2.0 * double(i) / double(D));
            cs[size_t(p * half + i)] = float(std::cos(angle));
            sn[size_t(p * half + i)] = float(std::sin(angle));
        }
    th::DeviceBuffer<T> X(x);
    th::DeviceBuffer<int32_t> Pos(pos);
    th::DeviceBuffer<float> Cos(cs), Sin(sn);
    const auto launch = interleaved ? tlc::rope_interleaved : tlc::rope_half;
    th::check_launch(launch(X.get(), Pos.get(), Cos.get(), Sin.get(), NT, H, P, 0), interleaved ? "rope_interleaved" : "rope_half");
    std::vector<double> ref = th::to_f64(x);
    for (int64_t t = 0; t < NT; ++t) {
        const int32_t p = pos[size_t(t)];
        if (p < 0 || p >= P) continue;
        for (int64_t h = 0; h < H; ++h)
            for (int64_t i = 0; i < half; ++i) {
                const int64_t base = (t * H + h) * D;
                const int64_t ia = interleaved ? base + 2 * i : base + i, ib = interleaved ? base + 2 * i + 1 : base + i + half;
                const double a = th::to_f64(x[size_t(ia)]), b = th::to_f64(x[size_t(ib)]);
                const double c = cs[size_t(p * half + i)], s = sn[size_t(p * half + i)];
                ref[size_t(ia)] = a * c - b * s;
                ref[size_t(ib)] = b * c + a * s;
            }
    }
    return th::numeric(th::rel_err(X.download(), ref), th::Dtype<T>::bound,
                       X.guards_intact() && Pos.guards_intact() && Cos.guards_intact() && Sin.guards_intact());
}

}  // namespace

int main() {
    th::Suite suite(th::test_name("stdlib_rope"));
    for (bool interleaved : {false, true}) {
        const std::string k = interleaved ? "rope_interleaved" : "rope_half";
        suite.run(k + "/NT=7,H=3,P=5", [=] { return check(interleaved, 7, 3, 5, 10); });
        suite.run(k + "/NT=1,H=1,P=1", [=] { return check(interleaved, 1, 1, 1, 20); });
        suite.run(k + "/NT=333,H=8,P=400", [=] { return check(interleaved, 333, 8, 400, 30); }, th::When::full);
        suite.run(k + "/NT=4096,H=32,P=4096", [=] { return check(interleaved, 4096, 32, 4096, 40); }, th::When::full);
        suite.run(k + "/null_pointer", [=] {
            th::DeviceBuffer<float> Cos(64), Sin(64);
            th::DeviceBuffer<int32_t> Pos(4);
            const auto launch = interleaved ? tlc::rope_interleaved : tlc::rope_half;
            return th::expect_invalid([&] { return launch(nullptr, Pos.get(), Cos.get(), Sin.get(), 4, 1, 1, 0); });
        });
    }
    return suite.finish();
}
