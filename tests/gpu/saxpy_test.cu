// saxpy_test.cu — Y = a*X + Y (in place) against a float64 reference (samples/saxpy.tl).
#include "saxpy.h"
#include "harness.h"

namespace {

th::Outcome check(int64_t n, float a, uint64_t seed) {
    const auto x = th::random_vector<float>(n, seed);
    const auto y = th::random_vector<float>(n, seed + 1);
    th::DeviceBuffer<float> X(x), Y(y);  // Y is read and written: not poisoned
    th::check_launch(tlc::saxpy(X.get(), Y.get(), a, n), "saxpy");
    const auto out = Y.download();
    std::vector<double> ref(n);
    for (int64_t i = 0; i < n; ++i) ref[i] = double(a) * x[i] + y[i];
    return th::numeric(th::rel_err(out, ref), th::Dtype<float>::bound, X.guards_intact() && Y.guards_intact());
}

}  // namespace

int main() {
    th::Suite suite(th::test_name("saxpy"));
    for (int64_t n : {int64_t(1), int64_t(1000), int64_t(1) << 20, int64_t(1000003)}) {
        suite.run("N=" + std::to_string(n), [&] { return check(n, 1.75f, 200 + n); },
                  n > 100000 ? th::When::full : th::When::always);
    }
    suite.run("N=5000_a=-0.3", [&] { return check(5000, -0.3f, 5); });
    suite.run("N=0_empty_grid", [&] {
        th::DeviceBuffer<float> X(0), Y(0);
        th::check_launch(tlc::saxpy(X.get(), Y.get(), 2.0f, 0), "saxpy");
        return th::expect(Y.guards_intact(), "an empty launch wrote to Y");
    });
    suite.run("null_pointer", [&] {
        th::DeviceBuffer<float> X(16), Y(16);
        return th::expect_invalid([&] { return tlc::saxpy(X.get(), nullptr, 2.0f, 16); });
    });
    suite.run("negative_dim", [&] {
        th::DeviceBuffer<float> X(16), Y(16);
        return th::expect_invalid([&] { return tlc::saxpy(X.get(), Y.get(), 2.0f, -5); });
    });
    return suite.finish();
}
