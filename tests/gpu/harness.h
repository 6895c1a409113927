// harness.h — header-only helpers of the GPU correctness tests in tests/gpu/.
//
// Each test program includes the tlc-generated header of one sample, fills random inputs
// (fixed seeds), poisons the outputs with NaN, calls the generated launch stub, and compares
// against a float64 CPU reference by ||out - ref|| / ||ref|| (NaN never passes).
//
// Device buffers carry guard zones on both sides filled with a sentinel: a kernel that writes
// out of bounds changes a guard (the case fails), and one that reads out of bounds unmasked sees
// huge finite values that spoil the result. Set TH_NO_GUARD=1 to allocate exact sizes instead
// (for compute-sanitizer, which only reports accesses outside an allocation).
//
// One line per case: `PASS|FAIL <test> <case> rel_err=<x> (bound <y>)[ -- note]`, and a final
// `<test>: N passed, N failed`; the exit status is non-zero on any failure.
//
// TH_QUICK=1 runs only the cases registered with When::always (a few small, odd-sized shapes and
// the argument checks); a case registered with When::full prints `# SKIP <test> <case>` instead.
// The compute-sanitizer runs (run_gpu_tests.sh --quick, run_sanitizers.sh) set it.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <tl/host/launch.h>  // tlc::last_error_message(), tl::host::last_error_storage()

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#define TH_STR2(x) #x
#define TH_STR(x) TH_STR2(x)

namespace th {

// ---- CUDA error checking ------------------------------------------------------------------------

struct CudaFailure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

inline void check_cuda(cudaError_t err, const char* expr, const char* file, int line) {
    if (err != cudaSuccess) {
        throw CudaFailure(std::string(expr) + " failed at " + file + ":" + std::to_string(line) + ": " +
                          cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
    }
}

// Throws (the current case fails) when a CUDA runtime call does not return cudaSuccess.
#define TH_CUDA(call) ::th::check_cuda((call), #call, __FILE__, __LINE__)

// A failed expectation inside a case (not a CUDA error): the case fails with `message`.
struct CheckFailure : std::runtime_error {
    using std::runtime_error::runtime_error;
};
#define TH_REQUIRE(cond, message)                                                                    \
    do {                                                                                             \
        if (!(cond)) throw ::th::CheckFailure(std::string(message) + " [" #cond "]");                \
    } while (0)

// Checks the return code of a generated launch stub, then cudaGetLastError and a device
// synchronisation (errors raised by the kernel itself).
inline void check_launch(cudaError_t err, const char* kernel, cudaStream_t stream = 0) {
    if (err != cudaSuccess) {
        throw CudaFailure(std::string("tlc::") + kernel + " returned " + cudaGetErrorName(err) + ": " +
                          tlc::last_error_message());
    }
    TH_CUDA(cudaGetLastError());
    if (stream) TH_CUDA(cudaStreamSynchronize(stream));
    TH_CUDA(cudaDeviceSynchronize());
    TH_CUDA(cudaGetLastError());
}

// ---- element types --------------------------------------------------------------------------------

template <typename T> struct Dtype;
template <> struct Dtype<float> {
    static constexpr const char* name = "f32";
    static constexpr double bound = 1e-5;  // fp32 results (PERFORMANCE.md)
    static double to_f64(float x) { return x; }
    static float from_f64(double x) { return static_cast<float>(x); }
};
template <> struct Dtype<__half> {
    static constexpr const char* name = "f16";
    static constexpr double bound = 1e-2;  // fp16 operands / outputs with fp32 accumulation
    static double to_f64(__half x) { return __half2float(x); }
    static __half from_f64(double x) { return __float2half_rn(static_cast<float>(x)); }
};
template <> struct Dtype<__nv_bfloat16> {
    static constexpr const char* name = "bf16";
    static constexpr double bound = 1e-2;
    static double to_f64(__nv_bfloat16 x) { return __bfloat162float(x); }
    static __nv_bfloat16 from_f64(double x) { return __float2bfloat16_rn(static_cast<float>(x)); }
};

template <typename T> double to_f64(T x) { return Dtype<T>::to_f64(x); }
template <typename T> std::vector<double> to_f64(const std::vector<T>& v) {
    std::vector<double> out(v.size());
    for (size_t i = 0; i < v.size(); ++i) out[i] = Dtype<T>::to_f64(v[i]);
    return out;
}

// ---- deterministic random data ------------------------------------------------------------------

// splitmix64: the same sequence on every platform and standard library.
class Rng {
public:
    explicit Rng(uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull) {}
    uint64_t next() {
        uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    // Uniform in [lo, hi).
    double uniform(double lo = -1.0, double hi = 1.0) {
        return lo + (hi - lo) * (static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0));
    }

private:
    uint64_t state_;
};

// n values of type T, uniform in [lo, hi) (then rounded to T).
template <typename T> std::vector<T> random_vector(size_t n, uint64_t seed, double lo = -1.0, double hi = 1.0) {
    Rng rng(seed);
    std::vector<T> v(n);
    for (auto& x : v) x = Dtype<T>::from_f64(rng.uniform(lo, hi));
    return v;
}

// ---- device buffers with guard zones --------------------------------------------------------------

// True when the environment variable is set to something other than "" or "0".
inline bool env_flag(const char* name) {
    const char* env = std::getenv(name);
    return env && *env && std::strcmp(env, "0") != 0;
}

inline bool guards_enabled() { return !env_flag("TH_NO_GUARD"); }

// TH_QUICK=1: only the small cases (When::always) run; see Suite::run.
inline bool quick_mode() { return env_flag("TH_QUICK"); }

constexpr unsigned char kSentinelByte = 0x7B;  // f32 1.3e36, f16 61280, bf16 1.3e36: finite, huge
constexpr unsigned char kPoisonByte = 0xFF;    // NaN in f32, f16 and bf16

// upload / download / poison for a device tensor class with get(), size() and bytes().
template <typename Derived, typename T> struct HostTransfers {
    void upload(const std::vector<T>& host) {
        const Derived& d = static_cast<const Derived&>(*this);
        TH_REQUIRE(host.size() == d.size(), "upload size mismatch");
        if (d.size()) TH_CUDA(cudaMemcpy(d.get(), host.data(), d.bytes(), cudaMemcpyHostToDevice));
    }
    std::vector<T> download() const {
        const Derived& d = static_cast<const Derived&>(*this);
        std::vector<T> host(d.size());
        if (d.size()) TH_CUDA(cudaMemcpy(host.data(), d.get(), d.bytes(), cudaMemcpyDeviceToHost));
        return host;
    }
    // Fills the elements with NaN (before each run, so that an unwritten output never passes).
    void poison() {
        const Derived& d = static_cast<const Derived&>(*this);
        if (d.size()) TH_CUDA(cudaMemset(d.get(), kPoisonByte, d.bytes()));
    }
};

template <typename T> class DeviceBuffer : public HostTransfers<DeviceBuffer<T>, T> {
public:
    // n elements; at least one element is allocated so that the pointer is never null.
    explicit DeviceBuffer(size_t n) : n_(n) {
        guard_ = guards_enabled() ? (size_t(1) << 16) : 0;  // elements on each side
        size_t total = guard_ * 2 + (n_ > 0 ? n_ : 1);
        TH_CUDA(cudaMalloc(&base_, total * sizeof(T)));
        TH_CUDA(cudaMemset(base_, kSentinelByte, total * sizeof(T)));
    }
    explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { this->upload(host); }
    ~DeviceBuffer() {
        if (base_) cudaFree(base_);
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    T* get() const { return base_ + guard_; }
    size_t size() const { return n_; }
    size_t bytes() const { return n_ * sizeof(T); }

    // True when both guard zones still hold the sentinel (no out-of-bounds write).
    bool guards_intact() const {
        if (guard_ == 0) return true;
        std::vector<unsigned char> g(guard_ * sizeof(T));
        const size_t body = n_ > 0 ? n_ : 1;
        for (T* p : {base_, base_ + guard_ + body}) {
            TH_CUDA(cudaMemcpy(g.data(), p, g.size(), cudaMemcpyDeviceToHost));
            for (unsigned char c : g)
                if (c != kSentinelByte) return false;
        }
        if (n_ == 0) {  // the one spare element must be untouched too
            unsigned char e[sizeof(T)];
            TH_CUDA(cudaMemcpy(e, get(), sizeof(T), cudaMemcpyDeviceToHost));
            for (unsigned char c : e)
                if (c != kSentinelByte) return false;
        }
        return true;
    }

private:
    T* base_ = nullptr;
    size_t n_ = 0;
    size_t guard_ = 0;
};

// A device tensor that starts `offset` elements into its allocation (a DeviceBuffer of
// offset + n elements), so that its base address is not 16-byte aligned when offset is 1 and the
// element is 2 or 4 bytes: exercises the element-wise paths that the kernels take for unaligned
// tensors. The `offset` elements in front keep the sentinel; guards_intact() checks them too, so
// a write just before the tensor fails the case even with TH_NO_GUARD=1. offset 0 is a DeviceBuffer.
template <typename T> class OffsetBuffer : public HostTransfers<OffsetBuffer<T>, T> {
public:
    OffsetBuffer(size_t n, size_t offset) : n_(n), offset_(offset), buf_(n + offset) {}
    OffsetBuffer(const std::vector<T>& host, size_t offset) : OffsetBuffer(host.size(), offset) { this->upload(host); }

    T* get() const { return buf_.get() + offset_; }
    size_t size() const { return n_; }
    size_t bytes() const { return n_ * sizeof(T); }

    bool guards_intact() const {
        if (!buf_.guards_intact()) return false;
        if (offset_ == 0) return true;
        std::vector<unsigned char> front(offset_ * sizeof(T));
        TH_CUDA(cudaMemcpy(front.data(), buf_.get(), front.size(), cudaMemcpyDeviceToHost));
        for (unsigned char c : front)
            if (c != kSentinelByte) return false;
        return true;
    }

private:
    size_t n_ = 0;
    size_t offset_ = 0;
    DeviceBuffer<T> buf_;
};

// ---- references -----------------------------------------------------------------------------------

// C[M, N] = A[M, K] · B[K, N] in float64, A row-major with row pitch lda (>= K), B [K, N] dense.
template <typename T>
std::vector<double> matmul_reference(const std::vector<T>& a, const std::vector<T>& b, int64_t M, int64_t N, int64_t K,
                                     int64_t lda) {
    std::vector<double> c(static_cast<size_t>(M * N), 0.0);
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
            double s = 0.0;
            for (int64_t k = 0; k < K; ++k) s += Dtype<T>::to_f64(a[i * lda + k]) * Dtype<T>::to_f64(b[k * N + j]);
            c[i * N + j] = s;
        }
    return c;
}

// The elements of an [M, N] output whose reference is computed when the whole product is too slow:
// the four corners and four random elements of every bm x bn tile, sorted, each once.
inline std::vector<std::pair<int64_t, int64_t>> sample_points(int64_t M, int64_t N, int64_t bm, int64_t bn, Rng& rng) {
    std::vector<std::pair<int64_t, int64_t>> pts;
    for (int64_t i0 = 0; i0 < M; i0 += bm)
        for (int64_t j0 = 0; j0 < N; j0 += bn) {
            const int64_t h = std::min(bm, M - i0), w = std::min(bn, N - j0);
            for (int64_t i : {i0, i0 + h - 1})
                for (int64_t j : {j0, j0 + w - 1}) pts.emplace_back(i, j);
            for (int r = 0; r < 4; ++r)
                pts.emplace_back(i0 + static_cast<int64_t>(rng.next() % uint64_t(h)),
                                 j0 + static_cast<int64_t>(rng.next() % uint64_t(w)));
        }
    std::sort(pts.begin(), pts.end());
    pts.erase(std::unique(pts.begin(), pts.end()), pts.end());
    return pts;
}

// ---- comparison -----------------------------------------------------------------------------------

// ||out - ref|| / ||ref|| in double; NaN when any output is not finite (NaN never passes).
// When ||ref|| is 0 the absolute error ||out|| is returned.
template <typename T> double rel_err(const std::vector<T>& out, const std::vector<double>& ref) {
    if (out.size() != ref.size()) return std::nan("");
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < out.size(); ++i) {
        const double o = Dtype<T>::to_f64(out[i]);
        if (!std::isfinite(o)) return std::nan("");
        const double d = o - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
    }
    if (den == 0.0) return std::sqrt(num);
    return std::sqrt(num / den);
}

// ---- results ----------------------------------------------------------------------------------------

struct Outcome {
    double rel_err = 0.0;
    double bound = 0.0;
    bool ok = true;      // additional checks (guards, return codes)
    std::string note;    // printed after the figures
};

// The usual numeric outcome: error against the bound, plus guard checks of the outputs.
inline Outcome numeric(double err, double bound, bool guards_ok = true) {
    Outcome o;
    o.rel_err = err;
    o.bound = bound;
    o.ok = guards_ok;
    if (!guards_ok) o.note = "out-of-bounds write: a guard zone of an output changed";
    return o;
}

// A non-numeric check (argument validation, empty grid): passes when `ok`.
inline Outcome expect(bool ok, std::string note_if_failed) {
    Outcome o;
    o.ok = ok;
    if (!ok) o.note = std::move(note_if_failed);
    return o;
}

struct Result {
    std::string test, name;
    bool passed = false;
    double rel_err = 0.0, bound = 0.0;
    std::string note;
};

// Which runs include a case: every run, or only full runs (skipped under TH_QUICK=1).
enum class When { always, full };

// One case of a row-wise stdlib kernel (norms, softmax): an M x N input drawn from [lo, hi],
// `offset` elements into its allocation, run in the modes `when` allows; `tag` suffixes its name.
struct RowsShape {
    int64_t M, N;
    double lo, hi;
    size_t offset;
    When when;
    const char* tag;
};

class Suite {
public:
    explicit Suite(std::string test) : test_(std::move(test)) {
        int device = 0;
        cudaDeviceProp prop{};
        cudaError_t err = cudaGetDevice(&device);
        if (err == cudaSuccess) err = cudaGetDeviceProperties(&prop, device);
        if (err == cudaSuccess) err = cudaFree(nullptr);  // creates the context
        if (err == cudaSuccess) {
            std::printf("# %s on %s (sm_%d%d)%s\n", test_.c_str(), prop.name, prop.major, prop.minor,
                        quick_mode() ? ", TH_QUICK=1: small cases only" : "");
        } else {
            // No usable device: one failed case, and every other case is skipped.
            no_device_ = true;
            std::printf("FAIL %s device rel_err=nan (bound 0e+00) -- no usable CUDA device: %s\n", test_.c_str(),
                        cudaGetErrorString(err));
            failed_++;
        }
        std::fflush(stdout);
    }

    const std::string& test() const { return test_; }

    // Runs one case; an exception (CUDA error, failed requirement) makes it a failure. A case of
    // When::full is skipped under TH_QUICK=1 (a `# SKIP` line, counted neither way).
    void run(const std::string& name, const std::function<Outcome()>& body, When when = When::always) {
        if (no_device_) return;
        if (when == When::full && quick_mode()) {
            std::printf("# SKIP %s %s (TH_QUICK=1)\n", test_.c_str(), name.c_str());
            std::fflush(stdout);
            ++skipped_;
            return;
        }
        Result r;
        r.test = test_;
        r.name = name;
        try {
            Outcome o = body();
            r.rel_err = o.rel_err;
            r.bound = o.bound;
            r.note = o.note;
            const bool numeric_ok = std::isfinite(o.rel_err) && (o.rel_err == 0.0 || o.rel_err < o.bound);
            r.passed = o.ok && numeric_ok;
            if (!numeric_ok && r.note.empty())
                r.note = std::isfinite(o.rel_err) ? "error above the bound" : "non-finite output (NaN/inf)";
        } catch (const std::exception& e) {
            r.passed = false;
            r.rel_err = std::nan("");
            r.bound = 0.0;
            r.note = e.what();
            cudaGetLastError();  // clear a non-sticky error so that later cases can run
        }
        std::printf("%s %s %s rel_err=%.3e (bound %.0e)%s%s\n", r.passed ? "PASS" : "FAIL", r.test.c_str(),
                    r.name.c_str(), r.rel_err, r.bound, r.note.empty() ? "" : " -- ", r.note.c_str());
        std::fflush(stdout);
        (r.passed ? passed_ : failed_)++;
        results_.push_back(std::move(r));
    }

    // Prints the final line and returns the exit status.
    int finish() const {
        if (skipped_ > 0) std::printf("# %d cases skipped (TH_QUICK=1)\n", skipped_);
        std::printf("%s: %d passed, %d failed\n", test_.c_str(), passed_, failed_);
        std::fflush(stdout);
        return (failed_ == 0 && passed_ > 0) ? 0 : 1;
    }

    const std::vector<Result>& results() const { return results_; }

private:
    std::string test_;
    int passed_ = 0, failed_ = 0, skipped_ = 0;
    bool no_device_ = false;
    std::vector<Result> results_;
};

// "<sample>" or "<sample>_<TLC_VARIANT>" when the build defines TLC_VARIANT (e.g. causal, f16).
inline std::string test_name(const char* sample) {
#ifdef TLC_VARIANT
    return std::string(sample) + "_" + TH_STR(TLC_VARIANT);
#else
    return sample;
#endif
}

// Clears the stub's last error message (tl/host/launch.h) before a negative test.
inline void clear_last_error_message() { tl::host::last_error_storage().clear(); }

// A negative test: the stub call must return cudaErrorInvalidValue without launching, and leave a
// non-empty tlc::last_error_message().
inline Outcome expect_invalid(const std::function<cudaError_t()>& call) {
    clear_last_error_message();
    TH_CUDA(cudaDeviceSynchronize());
    const cudaError_t err = call();
    const std::string message = tlc::last_error_message();
    const cudaError_t last = cudaGetLastError();
    TH_CUDA(cudaDeviceSynchronize());
    if (err != cudaErrorInvalidValue)
        return expect(false, std::string("expected cudaErrorInvalidValue, got ") + cudaGetErrorName(err));
    if (message.empty()) return expect(false, "tlc::last_error_message() is empty");
    if (last != cudaSuccess) return expect(false, std::string("cudaGetLastError after the call: ") + cudaGetErrorName(last));
    Outcome o;
    o.note = "message: " + message;
    return o;
}

// Elements of a shape, as size_t.
inline size_t numel(std::initializer_list<int64_t> dims) {
    size_t n = 1;
    for (int64_t d : dims) n *= static_cast<size_t>(d);
    return n;
}

}  // namespace th
