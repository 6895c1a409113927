// fragment_gemm_test.cu — the kernels of fragment_gemm.tl (tests/gpu/gen_fragment_gemm.py) against
// float64: for each operand dtype (f16, bf16, f32) and row count R, C[R, 32] = A[:, 0:32] ·
// B[0:32, :] + A[:, 32:64] · B[32:64, :] with A [R, 64] and B [64, 32] staged from fragments into
// shared scratch, two gemms into one accumulator (on the tensor cores for f16/bf16 when R is a
// multiple of 16). Under compute-sanitizer memcheck (exact-size buffers) an operand that overruns
// its scratch reservation is reported; the guard zones catch stray global writes.
//
// Stubs: frag_<dtype>_<R>(A, B, C). The kernels are those of the committed fragment_gemm.tl, or,
// when gen_fragment_gemm.py --all wrote fragment_gemm_rows.h next to the generated header, those
// of one part of the exhaustive family (fragment_gemm_all.sh builds one binary per part).
#include "fragment_gemm.h"
#include "harness.h"

#if __has_include("fragment_gemm_rows.h")
#include "fragment_gemm_rows.h" // one part of the exhaustive family: TH_FRAGMENT_CASES of its kernels
#else
// X(dtype, R) for every kernel of the committed fragment_gemm.tl.
#define TH_FRAGMENT_ROWS(X, dtype)                                                                                   \
    X(dtype, 1) X(dtype, 2) X(dtype, 3) X(dtype, 5) X(dtype, 8) X(dtype, 15) X(dtype, 16) X(dtype, 17) X(dtype, 31)   \
        X(dtype, 32) X(dtype, 33) X(dtype, 48) X(dtype, 63) X(dtype, 64) X(dtype, 65) X(dtype, 100) X(dtype, 127)      \
            X(dtype, 128) X(dtype, 129) X(dtype, 192) X(dtype, 200) X(dtype, 255) X(dtype, 256)
#define TH_FRAGMENT_CASES(X) TH_FRAGMENT_ROWS(X, f16) TH_FRAGMENT_ROWS(X, bf16) TH_FRAGMENT_ROWS(X, f32)
#endif

#include <string>

namespace {

template <typename T> using Launch = cudaError_t (*)(const T*, const T*, float*, cudaStream_t);

template <typename T> th::Outcome check(Launch<T> launch, int64_t rows, uint64_t seed) {
    const int64_t K = 64, N = 32;
    const auto a = th::random_vector<T>(static_cast<size_t>(rows * K), seed, -1.0, 1.0);
    const auto b = th::random_vector<T>(static_cast<size_t>(K * N), seed + 1, -1.0, 1.0);
    th::DeviceBuffer<T> A(a), B(b);
    th::DeviceBuffer<float> C(static_cast<size_t>(rows * N));
    C.poison();
    th::check_launch(launch(A.get(), B.get(), C.get(), 0), "frag");
    const auto c = C.download();
    const std::vector<double> ref = th::matmul_reference(a, b, rows, N, K, K);
    // f32 operands: products and sums in f32 (bound 1e-5); f16/bf16: f32 accumulation (1e-2).
    return th::numeric(th::rel_err(c, ref), th::Dtype<T>::bound, A.guards_intact() && B.guards_intact() && C.guards_intact());
}

// The largest shapes run only in full runs; under TH_QUICK=1 (sanitizers) every row count up to 65
// and a few larger ones run.
th::When when_for(int rows) { return rows <= 65 || rows == 129 || rows == 256 ? th::When::always : th::When::full; }

} // namespace

int main() {
    th::Suite suite(th::test_name("fragment_gemm"));
    uint64_t seed = 7000;
#define TH_TYPE_f16 __half
#define TH_TYPE_bf16 __nv_bfloat16
#define TH_TYPE_f32 float
#define TH_CASE(dtype, R)                                                                                             \
    suite.run(std::string(#dtype "/R=") + std::to_string(R),                                                          \
              [&] { return check<TH_TYPE_##dtype>(tlc::frag_##dtype##_##R, R, seed); }, when_for(R));                \
    seed += 10;
    TH_FRAGMENT_CASES(TH_CASE)
    return suite.finish();
}
