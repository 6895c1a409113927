// compare_elements.h — element-by-element output checks shared by the GPU tests of loops that
// write some elements and must leave the others alone (spread_chunks_test.cu, column_walks_test.cu).
#pragma once

#include "harness.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace th {

// An output element as a double.
inline double val(float x) { return x; }
inline double val(__half x) { return to_f64(x); }
inline double val(__nv_bfloat16 x) { return to_f64(x); }
inline double val(int8_t x) { return x; }
inline double val(uint8_t x) { return x; }
inline double val(int32_t x) { return x; }

// "" for aligned tensors, else "/in+<a>,out+<b>" (the element offsets of the inputs and outputs).
inline std::string offsets(size_t in, size_t out) {
    if (in == 0 && out == 0) return "";
    return "/in+" + std::to_string(in) + ",out+" + std::to_string(out);
}

// Compares an output element by element. An element with stored[i] == 0 must keep the bits it had
// before the launch (`before`); the others must equal ref[i] exactly when tol == 0 (ref already
// rounded to T), else satisfy |got - ref| <= tol * scale[i]. The figure reported is the largest
// |got - ref| (exact) or |got - ref| / scale (otherwise); NaN where a stored element is not finite.
template <typename T>
Outcome compare(const char* tensor, const std::vector<T>& got, const std::vector<T>& before, const std::vector<double>& ref,
                    const std::vector<char>& stored, const std::vector<double>& scale, double tol, bool guards_ok) {
    if (got.size() != ref.size()) return expect(false, std::string(tensor) + ": size mismatch");
    double worst = 0.0;
    bool non_finite = false;
    size_t worst_i = 0, changed = 0, first_changed = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        if (!stored.empty() && !stored[i]) {
            if (std::memcmp(&got[i], &before[i], sizeof(T)) != 0 && changed++ == 0) first_changed = i;
            continue;
        }
        const double v = val(got[i]);
        if (!std::isfinite(v)) {
            if (!non_finite) worst_i = i;
            non_finite = true;
            continue;
        }
        const double e = tol == 0.0 ? std::fabs(v - ref[i]) : std::fabs(v - ref[i]) / scale[i];
        if (!non_finite && e > worst) worst = e, worst_i = i;
    }
    Outcome o = numeric(non_finite ? std::nan("") : worst, tol, guards_ok && changed == 0);
    const bool numeric_ok = !non_finite && (worst == 0.0 || worst < tol);
    if (changed > 0) {
        o.note = std::to_string(changed) + " element(s) of " + tensor + " that the kernel must not write changed, the first at " +
                 std::to_string(first_changed);
    } else if (!guards_ok) {
        o.note = "out-of-bounds write: a guard zone changed";
    } else if (!numeric_ok && !got.empty()) {
        o.note = std::string(tensor) + "[" + std::to_string(worst_i) + "] = " + std::to_string(val(got[worst_i])) +
                 ", expected " + std::to_string(ref[worst_i]);
    }
    return o;
}

} // namespace th
