// vector_add_test.cu — C = A + B against a float64 reference (samples/vector_add.tl).
// Build: nvcc -std=c++17 -O2 -I runtime -I <gen dir> tests/gpu/vector_add_test.cu <gen dir>/vector_add.cu
// -DTLC_T=<type> tests a variant generated with -D T=... (default float, the sample's f32).
#include "vector_add.h"
#include "harness.h"

#ifndef TLC_T
#define TLC_T float
#endif
using T = TLC_T;

namespace {

struct Stream {
    cudaStream_t s = nullptr;
    Stream() { TH_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
    ~Stream() { if (s) cudaStreamDestroy(s); }
};

th::Outcome check(int64_t n, uint64_t seed, bool own_stream = false) {
    const auto a = th::random_vector<T>(n, seed);
    const auto b = th::random_vector<T>(n, seed + 1);
    th::DeviceBuffer<T> A(a), B(b), C(n);
    C.poison();
    if (own_stream) {
        Stream stream;
        th::check_launch(tlc::vector_add(A.get(), B.get(), C.get(), n, stream.s), "vector_add", stream.s);
    } else {
        th::check_launch(tlc::vector_add(A.get(), B.get(), C.get(), n), "vector_add");
    }
    const auto c = C.download();
    std::vector<double> ref(n);
    for (int64_t i = 0; i < n; ++i) ref[i] = th::to_f64(a[i]) + th::to_f64(b[i]);
    return th::numeric(th::rel_err(c, ref), th::Dtype<T>::bound,
                       A.guards_intact() && B.guards_intact() && C.guards_intact());
}

}  // namespace

int main() {
    th::Suite suite(th::test_name("vector_add"));
    for (int64_t n : {int64_t(1), int64_t(1000), int64_t(1) << 20, int64_t(1000003)}) {
        suite.run("N=" + std::to_string(n), [&] { return check(n, 100 + n); },
                  n > 100000 ? th::When::full : th::When::always);
    }
    suite.run("N=4097_stream", [&] { return check(4097, 7, /*own_stream=*/true); });
    suite.run("N=0_empty_grid", [&] {
        th::DeviceBuffer<T> A(0), B(0), C(0);
        th::check_launch(tlc::vector_add(A.get(), B.get(), C.get(), 0), "vector_add");
        return th::expect(C.guards_intact(), "an empty launch wrote to C");
    });
    suite.run("null_pointer", [&] {
        th::DeviceBuffer<T> A(16), B(16), C(16);
        return th::expect_invalid([&] { return tlc::vector_add(A.get(), nullptr, C.get(), 16); });
    });
    suite.run("negative_dim", [&] {
        th::DeviceBuffer<T> A(16), B(16), C(16);
        return th::expect_invalid([&] { return tlc::vector_add(A.get(), B.get(), C.get(), -1); });
    });
    // Last: a stub that does not validate would launch far out of bounds here.
    suite.run("dim_above_int32", [&] {
        th::DeviceBuffer<T> A(16), B(16), C(16);
        return th::expect_invalid([&] { return tlc::vector_add(A.get(), B.get(), C.get(), int64_t(1) << 31); });
    });
    return suite.finish();
}
