// stdlib_decode_test.cu — split-KV flash decoding of stdlib/decode.tl against float64: the split kernel, then the combine kernel, and the program `flash_decode` that launches both.
//   flash_decode_split(Q, K, V, Lens, Tbl, O_part, Lse, sm_scale, split_len, B, H, NQ, NP, HKV, PS, MAXP, SPLITS, HNQ)
//     (Lens: not read without VARLEN, Tbl without PAGED; K, V: [NP = B, HKV, PS = S, D])
//       Q: [B, H, NQ, D]; K, V: [B, HKV, S, D]; O_part: [B, SPLITS, H·NQ, D] f32; Lse: [B, SPLITS, H·NQ] f32
//   flash_decode_combine(O_part, Lse, O, B, SPLITS, HNQ, H, NQ)     O: [B, H, NQ, D]
// The NQ new tokens are the last NQ positions of the cache; with CAUSAL token t sees keys
// 0 .. S-NQ+t (none at all when that is negative: its O must be 0). The test allocates the
// workspaces for SPLITS = cdiv(S, split_len) and checks O (within the dtype's bound), each split's
// Lse (log2 Σ exp(sm_scale · q·k) over the keys of the split the row sees, within 1e-5) and that a
// row seeing no key of a split has Lse = -inf and O_part = 0. Errors are printed in units of the
// larger of the two bounds' ratios (1.0 = at a bound).
// D, CAUSAL and T are compile-time parameters, so each variant is its own generated file and
// binary (tests/gpu/variants.sh):
//   default   D = 128, causal, f16    (no macros)
//   bf16      tlc -D T=bf16           -DTLC_T=__nv_bfloat16
//   d64       tlc -D D=64             -DTLC_D=64
//   full      tlc -D CAUSAL=false     -DTLC_CAUSAL=0   (every token sees every key)
#include "decode.h"
#include "harness.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#ifndef TLC_T
#define TLC_T __half
#endif
#ifndef TLC_CAUSAL
#define TLC_CAUSAL 1
#endif
#ifndef TLC_D
#define TLC_D 128
#endif

namespace {

using T = TLC_T;
constexpr bool kCausal = TLC_CAUSAL != 0;
constexpr int64_t D = TLC_D;
constexpr double kLseBound = 1e-5;

struct Shape {
    int64_t B, H, HKV, NQ, S, split_len;
    double sm_scale;  // 0: 1 / sqrt(D)
    double qscale;    // Q drawn from [-qscale, qscale): larger values peak the rows
    size_t offset;    // every tensor this many elements into its allocation
    th::When when;
    const char* tag;
};

// The Lens argument of the split kernel built without VARLEN: any i32 buffer (it is not read).
const int32_t* unused_lens() {
    static th::DeviceBuffer<int32_t> lens(1024);
    return lens.get();
}

// The Tbl argument (B x 1) of the split kernel built without PAGED: not read either. Without
// PAGED the cache is one page per sequence: NP = B pages of PS = S positions.
const int32_t* unused_tbl() {
    static th::DeviceBuffer<int32_t> tbl(1024);
    return tbl.get();
}

th::Outcome check(const Shape& sh, uint64_t seed) {
    const int64_t B = sh.B, H = sh.H, HKV = sh.HKV, NQ = sh.NQ, S = sh.S, L = sh.split_len;
    const int64_t SPLITS = (S + L - 1) / L, HNQ = H * NQ, G = H / HKV;
    const double sm_scale = sh.sm_scale > 0.0 ? sh.sm_scale : 1.0 / std::sqrt(double(D));
    const size_t nq = th::numel({B, H, NQ, D}), nkv = th::numel({B, HKV, S, D});
    const auto q = th::random_vector<T>(nq, seed, -sh.qscale, sh.qscale);
    const auto k = th::random_vector<T>(nkv, seed + 1);
    const auto v = th::random_vector<T>(nkv, seed + 2);
    th::OffsetBuffer<T> Q(q, sh.offset), K(k, sh.offset), V(v, sh.offset), O(nq, sh.offset);
    th::OffsetBuffer<float> Opart(th::numel({B, SPLITS, HNQ, D}), sh.offset), Lse(th::numel({B, SPLITS, HNQ}), sh.offset);
    O.poison();
    Opart.poison();
    Lse.poison();
    const float scale = static_cast<float>(sm_scale);
    th::check_launch(tlc::flash_decode_split(Q.get(), K.get(), V.get(), unused_lens(), unused_tbl(), Opart.get(), Lse.get(), scale, int32_t(L), B, H, NQ, B, HKV, S, 1, SPLITS, HNQ),
                     "flash_decode_split");
    th::check_launch(tlc::flash_decode_combine(Opart.get(), Lse.get(), O.get(), B, SPLITS, HNQ, H, NQ),
                     "flash_decode_combine");
    const auto o = O.download();
    const auto lse = Lse.download();
    const auto opart = Opart.download();

    const auto qd = th::to_f64(q), kd = th::to_f64(k), vd = th::to_f64(v);
    std::vector<double> ref(nq, 0.0), sc(static_cast<size_t>(S)), p(static_cast<size_t>(S));
    std::vector<double> lse_ref;
    std::vector<float> lse_got;
    int bad_empty = 0;  // rows seeing no key of a split whose Lse is not -inf or whose O_part is not 0
    for (int64_t b = 0; b < B; ++b) {
        for (int64_t h = 0; h < H; ++h) {
            const int64_t hk = h / G;
            const double* Kh = &kd[size_t((b * HKV + hk) * S * D)];
            const double* Vh = &vd[size_t((b * HKV + hk) * S * D)];
            for (int64_t t = 0; t < NQ; ++t) {
                const double* Qr = &qd[size_t(((b * H + h) * NQ + t) * D)];
                const int64_t n_keys = kCausal ? std::clamp<int64_t>(S - NQ + t + 1, 0, S) : S;
                double m = -INFINITY;
                for (int64_t j = 0; j < n_keys; ++j) {
                    double s = 0.0;
                    for (int64_t d = 0; d < D; ++d) s += Qr[d] * Kh[j * D + d];
                    sc[size_t(j)] = s * double(scale);
                    m = std::max(m, sc[size_t(j)]);
                }
                double l = 0.0;
                for (int64_t j = 0; j < n_keys; ++j) l += (p[size_t(j)] = std::exp(sc[size_t(j)] - m));
                double* Or = &ref[size_t(((b * H + h) * NQ + t) * D)];
                for (int64_t j = 0; j < n_keys; ++j)
                    for (int64_t d = 0; d < D; ++d) Or[d] += p[size_t(j)] / l * Vh[j * D + d];
                for (int64_t s = 0; s < SPLITS; ++s) {
                    const size_t row = size_t((b * SPLITS + s) * HNQ + h * NQ + t);
                    const int64_t k0 = s * L, k1 = std::min(n_keys, (s + 1) * L);
                    if (k1 <= k0) {
                        bool zero = true;
                        for (int64_t d = 0; d < D; ++d) zero = zero && opart[row * size_t(D) + size_t(d)] == 0.0f;
                        bad_empty += !(lse[row] == -INFINITY && zero);
                        continue;
                    }
                    double ms = -INFINITY, ls = 0.0;
                    for (int64_t j = k0; j < k1; ++j) ms = std::max(ms, sc[size_t(j)]);
                    for (int64_t j = k0; j < k1; ++j) ls += std::exp(sc[size_t(j)] - ms);
                    lse_ref.push_back((ms + std::log(ls)) / std::log(2.0));
                    lse_got.push_back(lse[row]);
                }
            }
        }
    }
    const double err = std::max(th::rel_err(o, ref) / th::Dtype<T>::bound,
                                lse_ref.empty() ? 0.0 : th::rel_err(lse_got, lse_ref) / kLseBound);
    th::Outcome out = th::numeric(err, 1.0,
                                  Q.guards_intact() && K.guards_intact() && V.guards_intact() && O.guards_intact() &&
                                      Opart.guards_intact() && Lse.guards_intact());
    if (bad_empty > 0) {
        out.ok = false;
        out.note = std::to_string(bad_empty) + " rows that see no key of a split without Lse = -inf and O_part = 0";
    }
    return out;
}

// The program `flash_decode`: it chooses the slice length and keeps its workspaces itself (a
// buffer per stream), or uses the caller's (`own_workspace`, sized by flash_decode_workspace_size);
// O against float64 attention.
// With a page size (and lens), the program `flash_decode_paged`: the cache cut into pages of a
// shuffled pool with spare pages no sequence uses, table entries past a sequence's end -1.
th::Outcome check_program(const Shape& sh, uint64_t seed, bool own_workspace, const std::vector<int32_t>* lens = nullptr,
                          int64_t page_size = 0) {
    const int64_t B = sh.B, H = sh.H, HKV = sh.HKV, NQ = sh.NQ, S = sh.S, G = H / HKV;
    const float scale = float(1.0 / std::sqrt(double(D)));
    const size_t nq = th::numel({B, H, NQ, D}), nkv = th::numel({B, HKV, S, D});
    const auto q = th::random_vector<T>(nq, seed, -sh.qscale, sh.qscale);
    const auto k = th::random_vector<T>(nkv, seed + 1);
    const auto v = th::random_vector<T>(nkv, seed + 2);
    th::OffsetBuffer<T> Q(q, sh.offset), K(k, sh.offset), V(v, sh.offset), O(nq, sh.offset);
    O.poison();
    const int64_t PS = page_size, MAXP = PS ? S / PS : 0, NP = B * MAXP + 3;
    const size_t bytes = PS ? tlc::flash_decode_paged_workspace_size(scale, B, H, NQ, NP, HKV, PS, MAXP)
                            : tlc::flash_decode_workspace_size(scale, B, H, NQ, HKV, S);
    th::DeviceBuffer<unsigned char> W(own_workspace ? bytes : 0);
    th::DeviceBuffer<int32_t> Lens(lens ? *lens : std::vector<int32_t>(size_t(B), int32_t(S)));
    if (PS) {
        std::vector<int32_t> pool(static_cast<size_t>(NP)), tbl(static_cast<size_t>(B * MAXP));
        std::iota(pool.begin(), pool.end(), 0);
        std::shuffle(pool.begin(), pool.end(), std::mt19937_64(seed));
        std::vector<T> kp(th::numel({NP, HKV, PS, D})), vp(kp.size());
        for (int64_t b = 0; b < B; ++b)
            for (int64_t i = 0; i < MAXP; ++i) {
                const int64_t page = pool[size_t(b * MAXP + i)];
                tbl[size_t(b * MAXP + i)] = i * PS < (*lens)[size_t(b)] ? int32_t(page) : -1;
                for (int64_t hk = 0; hk < HKV; ++hk) {
                    const size_t from = size_t(((b * HKV + hk) * S + i * PS) * D), to = size_t(((page * HKV + hk) * PS) * D);
                    std::copy_n(k.begin() + long(from), PS * D, kp.begin() + long(to));
                    std::copy_n(v.begin() + long(from), PS * D, vp.begin() + long(to));
                }
            }
        th::OffsetBuffer<T> Kp(kp, sh.offset), Vp(vp, sh.offset);
        th::DeviceBuffer<int32_t> Tbl(tbl);
        th::check_launch(tlc::flash_decode_paged(Q.get(), Kp.get(), Vp.get(), Tbl.get(), Lens.get(), O.get(), scale, B, H, NQ, NP, HKV,
                                                 PS, MAXP, 0, own_workspace ? W.get() : nullptr, own_workspace ? bytes : 0),
                         "flash_decode_paged");
    } else if (lens)
        th::check_launch(tlc::flash_decode_varlen(Q.get(), K.get(), V.get(), Lens.get(), O.get(), scale, B, H, NQ, HKV, S, 0,
                                                  own_workspace ? W.get() : nullptr, own_workspace ? bytes : 0),
                         "flash_decode_varlen");
    else
        th::check_launch(tlc::flash_decode(Q.get(), K.get(), V.get(), O.get(), scale, B, H, NQ, HKV, S, 0,
                                           own_workspace ? W.get() : nullptr, own_workspace ? bytes : 0),
                         "flash_decode");
    const auto o = O.download();
    const auto qd = th::to_f64(q), kd = th::to_f64(k), vd = th::to_f64(v);
    std::vector<double> ref(nq, 0.0), p(static_cast<size_t>(S));
    for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < H; ++h)
            for (int64_t t = 0; t < NQ; ++t) {
                const double* Qr = &qd[size_t(((b * H + h) * NQ + t) * D)];
                const size_t kv = size_t((b * HKV + h / G) * S * D);
                const int64_t len = lens ? std::clamp<int64_t>((*lens)[size_t(b)], 0, S) : S;  // the sequence's length
                const int64_t n_keys = kCausal ? std::clamp<int64_t>(len - NQ + t + 1, 0, len) : len;
                double m = -INFINITY, l = 0.0;
                for (int64_t j = 0; j < n_keys; ++j) {
                    double s = 0.0;
                    for (int64_t d = 0; d < D; ++d) s += Qr[d] * kd[kv + size_t(j * D + d)];
                    m = std::max(m, p[size_t(j)] = s * double(scale));
                }
                for (int64_t j = 0; j < n_keys; ++j) l += (p[size_t(j)] = std::exp(p[size_t(j)] - m));
                double* Or = &ref[size_t(((b * H + h) * NQ + t) * D)];
                for (int64_t j = 0; j < n_keys; ++j)
                    for (int64_t d = 0; d < D; ++d) Or[d] += p[size_t(j)] / l * vd[kv + size_t(j * D + d)];
            }
    return th::numeric(th::rel_err(o, ref), th::Dtype<T>::bound,
                       Q.guards_intact() && K.guards_intact() && V.guards_intact() && O.guards_intact() && W.guards_intact());
}

std::string shape_name(const Shape& s) {
    return "B=" + std::to_string(s.B) + ",H=" + std::to_string(s.H) + ",HKV=" + std::to_string(s.HKV) +
           ",NQ=" + std::to_string(s.NQ) + ",S=" + std::to_string(s.S) + ",split=" + std::to_string(s.split_len) + s.tag;
}

}  // namespace

int main() {
    th::Suite suite(th::test_name("stdlib_decode"));
    std::printf("# T=%s CAUSAL=%d D=%d (errors in units of their bounds: the dtype's for O, %.0e for Lse)\n",
                th::Dtype<T>::name, int(kCausal), int(D), kLseBound);
    const Shape shapes[] = {
        // quick: GQA 4 and 8 and plain multi-head, NQ 1, 4, 16, a partial last split, S = 1
        // (causal: tokens 0..2 see no key), unaligned base addresses with a 2-key last split
        // (causal: token 0 sees none of it)
        {2, 8, 2, 1, 77, 64, 0.0, 1.0, 0, th::When::always, ""},
        {1, 8, 1, 4, 1, 64, 0.0, 1.0, 0, th::When::always, ""},
        {1, 2, 2, 16, 77, 64, 0.0, 1.0, 0, th::When::always, ""},
        {1, 4, 2, 3, 130, 64, 0.0, 1.0, 1, th::When::always, "_offset1"},
        // full
        {2, 4, 4, 1, 1000, 128, 0.0, 1.0, 0, th::When::full, ""},                // G = 1
        {2, 16, 4, 4, 1000, 256, 0.0, 1.0, 0, th::When::full, ""},               // G = 4
        {1, 16, 2, 16, 1000, 64, 0.0, 1.0, 0, th::When::full, ""},               // G·NQ = 128 rows: two row groups
        {1, 8, 8, 4, 1000, 1024, 0.0, 1.0, 0, th::When::full, "_one_split"},     // split_len > S
        {1, 4, 4, 16, 1, 64, 0.0, 1.0, 0, th::When::full, ""},                   // NQ > S
        {1, 8, 1, 16, 4097, 512, 0.0, 1.0, 0, th::When::full, ""},               // last split: one key
        {1, 4, 1, 4, 4097, 64, 0.0, 1.0, 0, th::When::full, ""},                 // 65 splits: 5 combine chunks
        {2, 32, 8, 1, 4097, 1024, 0.3, 4.0, 0, th::When::full, "_qscale4"},      // peaked rows
        {1, 8, 2, 4, 1000, 192, 0.0, 1.0, 1, th::When::full, "_offset1"},
        {1, 16, 2, 4, 32768, 2048, 0.0, 1.0, 0, th::When::full, "_long"},
    };
    uint64_t seed = 13000;
    for (const Shape& s : shapes) {
        suite.run("flash_decode/" + shape_name(s), [&] { return check(s, seed); }, s.when);
        seed += 10;
    }

    // The program: slice length and workspaces chosen by it, or the caller's workspace.
    const Shape program_shapes[] = {
        {2, 8, 2, 1, 77, 0, 0.0, 1.0, 0, th::When::always, ""},
        {1, 4, 1, 3, 1000, 0, 0.0, 1.0, 1, th::When::always, "_offset1"},
        {1, 32, 8, 1, 32768, 0, 0.0, 1.0, 0, th::When::full, "_long"},
        {16, 32, 8, 4, 4097, 0, 0.0, 1.0, 0, th::When::full, "_batch16"},
    };
    for (const Shape& s : program_shapes) {
        for (bool own : {false, true}) {
            suite.run(std::string("flash_decode_program/") + (own ? "caller_workspace/" : "") + shape_name(s),
                      [&] { return check_program(s, seed, own); }, s.when);
            seed += 10;
        }
    }
    // flash_decode_varlen: sequences of different lengths (one empty, one negative, one full).
    {
        const Shape s{4, 16, 4, 2, 5000, 0, 0.0, 1.0, 0, th::When::always, ""};
        const std::vector<int32_t> lens = {5000, 1, 0, 3333};
        for (bool own : {false, true}) {
            suite.run(std::string("flash_decode_varlen/") + (own ? "caller_workspace/" : "") + "lens=5000,1,0,3333",
                      [&] { return check_program(s, seed, own, &lens); });
            seed += 10;
        }
        const Shape l{2, 32, 8, 1, 40000, 0, 0.0, 1.0, 0, th::When::full, ""};
        const std::vector<int32_t> long_lens = {40000, 17};
        suite.run("flash_decode_varlen/lens=40000,17", [&] { return check_program(l, seed, false, &long_lens); }, l.when);
        const std::vector<int32_t> negative = {-5, 100, 4999, 2};
        suite.run("flash_decode_varlen/lens=-5,100,4999,2", [&] { return check_program(s, seed + 10, false, &negative); });
        seed += 20;
    }
    // flash_decode_paged: pages of 64 and 256 positions (BN = 64), sequences ending inside a page,
    // an empty one, a full one; unaligned base addresses.
    {
        const Shape s{4, 16, 4, 2, 5120, 0, 0.0, 1.0, 0, th::When::always, ""};
        const std::vector<int32_t> lens = {5120, 1, 0, 3333};
        for (int64_t ps : {64, 256})
            for (bool own : {false, true}) {
                suite.run("flash_decode_paged/" + std::string(own ? "caller_workspace/" : "") + "page=" + std::to_string(ps) +
                              ",lens=5120,1,0,3333",
                          [&] { return check_program(s, seed, own, &lens, ps); });
                seed += 10;
            }
        const Shape o{3, 8, 1, 5, 1024, 0, 0.0, 1.0, 1, th::When::always, "_offset1"};
        const std::vector<int32_t> short_lens = {1000, 64, 65};
        suite.run("flash_decode_paged/page=128,B=3,H=8,HKV=1,NQ=5_offset1", [&] { return check_program(o, seed, false, &short_lens, 128); });
        const Shape l{2, 32, 8, 1, 40960, 0, 0.0, 1.0, 0, th::When::full, ""};
        const std::vector<int32_t> long_lens = {40000, 17};
        suite.run("flash_decode_paged/page=256,lens=40000,17", [&] { return check_program(l, seed + 10, false, &long_lens, 256); },
                  l.when);
        seed += 20;
    }
    suite.run("flash_decode_paged/requires_PS%BN", [&] {
        th::DeviceBuffer<T> Q(64 * D), K(64 * D), V(64 * D), O(64 * D);
        th::DeviceBuffer<int32_t> Tbl(8), Lens(2);
        return th::expect_invalid([&] {
            return tlc::flash_decode_paged(Q.get(), K.get(), V.get(), Tbl.get(), Lens.get(), O.get(), 0.125f, 1, 4, 1, 2, 2, 48, 2);
        });
    });
    suite.run("flash_decode_program/workspace_too_small", [&] {
        const size_t n = th::numel({1, 4, 1, D}), nkv = th::numel({1, 2, 1000, D});
        th::DeviceBuffer<T> Q(n), K(nkv), V(nkv), O(n);
        const size_t bytes = tlc::flash_decode_workspace_size(0.125f, 1, 4, 1, 2, 1000);
        th::DeviceBuffer<unsigned char> W(bytes);
        if (bytes == 0) return th::expect(false, "a zero workspace size for S = 1000");
        return th::expect_invalid([&] {
            return tlc::flash_decode(Q.get(), K.get(), V.get(), O.get(), 0.125f, 1, 4, 1, 2, 1000, 0, W.get(), bytes - 1);
        });
    });
    suite.run("flash_decode_program/requires_H=5_HKV=2", [&] {
        th::DeviceBuffer<T> Q(5 * D), K(2 * 64 * D), V(2 * 64 * D), O(5 * D);
        return th::expect_invalid([&] {
            return tlc::flash_decode(Q.get(), K.get(), V.get(), O.get(), 0.125f, 1, 5, 1, 2, 64);
        });
    });

    // S = 0: the split kernel has an empty grid (SPLITS = 0); the combine kernel writes O = 0.
    suite.run("flash_decode/S=0", [] {
        const size_t n = th::numel({1, 4, 2, D});
        th::DeviceBuffer<T> Q(n), K(0), V(0), O(n);
        th::DeviceBuffer<float> Opart(0), Lse(0);
        O.poison();
        th::check_launch(tlc::flash_decode_split(Q.get(), K.get(), V.get(), unused_lens(), unused_tbl(), Opart.get(), Lse.get(), 0.125f, 64, 1, 4, 2, 1, 2, 0, 1, 0, 8),
                         "flash_decode_split");
        th::check_launch(tlc::flash_decode_combine(Opart.get(), Lse.get(), O.get(), 1, 0, 8, 4, 2), "flash_decode_combine");
        return th::numeric(th::rel_err(O.download(), std::vector<double>(n, 0.0)), th::Dtype<T>::bound,
                           Opart.guards_intact() && Lse.guards_intact() && O.guards_intact());
    });
    suite.run("flash_decode/B=0_empty_grid", [] {
        th::DeviceBuffer<T> Q(0), K(0), V(0), O(0);
        th::DeviceBuffer<float> Opart(0), Lse(0);
        th::check_launch(tlc::flash_decode_split(Q.get(), K.get(), V.get(), unused_lens(), unused_tbl(), Opart.get(), Lse.get(), 0.125f, 64, 0, 4, 1, 0, 2, 64, 1, 1, 4),
                         "flash_decode_split");
        th::check_launch(tlc::flash_decode_combine(Opart.get(), Lse.get(), O.get(), 0, 1, 4, 4, 1), "flash_decode_combine");
        return th::expect(Opart.guards_intact() && Lse.guards_intact() && O.guards_intact(), "an empty launch wrote");
    });

    // Argument checks: B = 1, H = 4, NQ = 1, HKV = 2, S = 64, one split.
    const size_t nq = 4 * D, nkv = 2 * 64 * D;
    suite.run("flash_decode_split/null_pointer", [&] {
        th::DeviceBuffer<T> Q(nq), K(nkv), V(nkv);
        th::DeviceBuffer<float> Opart(nq), Lse(4);
        return th::expect_invalid([&] {
            return tlc::flash_decode_split(Q.get(), K.get(), nullptr, unused_lens(), unused_tbl(), Opart.get(), Lse.get(), 0.125f, 64, 1, 4, 1, 1, 2, 64, 1, 1, 4);
        });
    });
    suite.run("flash_decode_split/negative_dim", [&] {
        th::DeviceBuffer<T> Q(nq), K(nkv), V(nkv);
        th::DeviceBuffer<float> Opart(nq), Lse(4);
        return th::expect_invalid([&] {
            return tlc::flash_decode_split(Q.get(), K.get(), V.get(), unused_lens(), unused_tbl(), Opart.get(), Lse.get(), 0.125f, 64, 1, 4, 1, 1, 2, -64, 1, 1, 4);
        });
    });
    // The kernel's requires(HKV > 0, H % HKV == 0, HNQ == H * NQ, split_len > 0, split_len % BN == 0).
    suite.run("flash_decode_split/requires_HKV=0", [&] {
        th::DeviceBuffer<T> Q(nq), K(nkv), V(nkv);
        th::DeviceBuffer<float> Opart(nq), Lse(4);
        return th::expect_invalid([&] {
            return tlc::flash_decode_split(Q.get(), K.get(), V.get(), unused_lens(), unused_tbl(), Opart.get(), Lse.get(), 0.125f, 64, 1, 4, 1, 1, 0, 64, 1, 1, 4);
        });
    });
    suite.run("flash_decode_split/requires_H=5_HKV=2", [&] {
        th::DeviceBuffer<T> Q(5 * D), K(nkv), V(nkv);
        th::DeviceBuffer<float> Opart(5 * D), Lse(5);
        return th::expect_invalid([&] {
            return tlc::flash_decode_split(Q.get(), K.get(), V.get(), unused_lens(), unused_tbl(), Opart.get(), Lse.get(), 0.125f, 64, 1, 5, 1, 1, 2, 64, 1, 1, 5);
        });
    });
    suite.run("flash_decode_split/requires_HNQ=H*NQ", [&] {
        th::DeviceBuffer<T> Q(nq), K(nkv), V(nkv);
        th::DeviceBuffer<float> Opart(nq), Lse(4);
        return th::expect_invalid([&] {
            return tlc::flash_decode_split(Q.get(), K.get(), V.get(), unused_lens(), unused_tbl(), Opart.get(), Lse.get(), 0.125f, 64, 1, 4, 1, 1, 2, 64, 1, 1, 2);
        });
    });
    suite.run("flash_decode_split/requires_split_len=100", [&] {
        th::DeviceBuffer<T> Q(nq), K(nkv), V(nkv);
        th::DeviceBuffer<float> Opart(nq), Lse(4);
        return th::expect_invalid([&] {
            return tlc::flash_decode_split(Q.get(), K.get(), V.get(), unused_lens(), unused_tbl(), Opart.get(), Lse.get(), 0.125f, 100, 1, 4, 1, 1, 2, 64, 1, 1, 4);
        });
    });
    suite.run("flash_decode_split/requires_split_len=0", [&] {
        th::DeviceBuffer<T> Q(nq), K(nkv), V(nkv);
        th::DeviceBuffer<float> Opart(nq), Lse(4);
        return th::expect_invalid([&] {
            return tlc::flash_decode_split(Q.get(), K.get(), V.get(), unused_lens(), unused_tbl(), Opart.get(), Lse.get(), 0.125f, 0, 1, 4, 1, 1, 2, 64, 1, 1, 4);
        });
    });
    suite.run("flash_decode_combine/null_pointer", [&] {
        th::DeviceBuffer<float> Opart(nq), Lse(4);
        return th::expect_invalid([&] { return tlc::flash_decode_combine(Opart.get(), nullptr, nullptr, 1, 1, 4, 4, 1); });
    });
    suite.run("flash_decode_combine/requires_HNQ=H*NQ", [&] {
        th::DeviceBuffer<float> Opart(nq), Lse(4);
        th::DeviceBuffer<T> O(nq);
        return th::expect_invalid([&] { return tlc::flash_decode_combine(Opart.get(), Lse.get(), O.get(), 1, 1, 4, 2, 1); });
    });
    return suite.finish();
}
