// The register-tile layout algebra (see layout.h): construction, queries, slice/expand/permute,
// the blocked product and reduction plans over mixed-radix factors.
#include "ir/layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace tlc::ir {

namespace {

using Factors = std::vector<LayoutFactor>;

int64_t product_of(const std::vector<int64_t>& v, size_t from, size_t to) {
    int64_t p = 1;
    for (size_t i = from; i < to; ++i) p *= v[i];
    return p;
}

int64_t extent_product(const Factors& fs) {
    int64_t p = 1;
    for (auto& f : fs) p *= f.extent;
    return p;
}

bool is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

// The factors of one axis kind over all modes, sorted by stride.
Factors collect(const Layout& l, LayoutAxis axis) {
    Factors out;
    for (auto& m : l.modes)
        for (auto& f : m.factors)
            if (f.axis == axis && f.extent > 1) out.push_back(f);
    std::stable_sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.stride < b.stride; });
    return out;
}

// Checks that stride-sorted factors nest (each starts where the ones below end, or above with a
// gap that is a whole number of them) and returns the gaps, with the span up to `total` when it is
// given. Returns false when they overlap.
bool nest(const Factors& sorted, int64_t total, Factors* gaps, std::string* why, const char* what) {
    int64_t p = 1;
    for (auto& f : sorted) {
        if (f.stride < p || f.stride % p) {
            if (why) *why = fmt::format("{} factor {}:{} overlaps the factors below it", what, f.extent, f.stride);
            return false;
        }
        if (f.stride > p && gaps) gaps->push_back({f.stride / p, f.axis, p});
        p = f.stride * f.extent;
    }
    if (total > 0) {
        if (total % p) {
            if (why) *why = fmt::format("{} factors span {}, which does not divide {}", what, p, total);
            return false;
        }
        if (total > p && gaps) gaps->push_back({total / p, LayoutAxis::Thread, p});
    }
    return true;
}

// First tile axis of each mode.
std::vector<int> mode_starts(const Layout& l) {
    std::vector<int> starts;
    int a = 0;
    for (auto& m : l.modes) starts.push_back(a), a += m.axes;
    return starts;
}

// The index of the mode that is exactly tile axis `axis`, or -1.
int single_axis_mode(const Layout& l, int axis) {
    auto starts = mode_starts(l);
    for (size_t i = 0; i < starts.size(); ++i)
        if (starts[i] == axis && l.modes[i].axes == 1) return static_cast<int>(i);
    return -1;
}

// Renumbers the register factors densely in their current stride order.
void compact_registers(std::vector<Layout::Mode>& modes) {
    std::vector<LayoutFactor*> regs;
    for (auto& m : modes)
        for (auto& f : m.factors)
            if (f.axis == LayoutAxis::Register) regs.push_back(&f);
    std::stable_sort(regs.begin(), regs.end(), [](auto* a, auto* b) { return a->stride < b->stride; });
    int64_t p = 1;
    for (auto* f : regs) f->stride = p, p *= f->extent;
}

} // namespace

Layout Layout::registers_only(const std::vector<int64_t>& shape) {
    Layout l;
    l.shape = shape;
    for (size_t d = 0; d < shape.size(); ++d)
        l.modes.push_back({1, {{shape[d], LayoutAxis::Register, product_of(shape, d + 1, shape.size())}}});
    return l;
}

Layout Layout::threads_only(const std::vector<int64_t>& shape) {
    Layout l;
    l.shape = shape;
    l.threads = product_of(shape, 0, shape.size());
    for (size_t d = 0; d < shape.size(); ++d)
        l.modes.push_back({1, {{shape[d], LayoutAxis::Thread, product_of(shape, d + 1, shape.size())}}});
    return l;
}

Layout Layout::replicated(const std::vector<int64_t>& shape, int64_t threads) {
    Layout l = registers_only(shape);
    l.threads = threads;
    return l;
}

Layout Layout::blocked(const std::vector<int64_t>& shape, int64_t threads, int64_t vector) {
    if (shape.empty()) return replicated(shape, threads);
    Layout l;
    l.shape = shape;
    l.threads = threads;
    int64_t numel = product_of(shape, 0, shape.size());
    int64_t chunks = (numel + vector * threads - 1) / (vector * threads);
    l.modes.push_back({static_cast<int>(shape.size()),
                       {{vector, LayoutAxis::Register, 1}, {threads, LayoutAxis::Thread, 1}, {chunks, LayoutAxis::Register, vector}}});
    return l;
}

Layout Layout::blocked_rows(const std::vector<int64_t>& shape, int64_t threads, int64_t vector, bool compact_rows) {
    if (shape.empty()) return replicated(shape, threads);
    // The smallest divisor of `available` threads that is at least `extent` (all of them if none).
    auto thread_extent = [](int64_t extent, int64_t available) {
        for (int64_t d = 1; d <= available; ++d)
            if (available % d == 0 && d >= extent) return d;
        return available;
    };
    Layout l;
    l.shape = shape;
    l.threads = threads;
    l.modes.resize(shape.size());
    int64_t thread_stride = 1, reg_stride = 1;
    for (size_t a = shape.size(); a-- > 0;) {
        int64_t v = a + 1 == shape.size() ? vector : 1;
        int64_t units = (shape[a] + v - 1) / v;
        int64_t t = thread_extent(units, threads / thread_stride);
        if (compact_rows && a + 1 == shape.size() && t > 32) {
            // Rows enough for every warp: one warp per row at most; else the threads the rows
            // leave, so that a reduction along the row crosses as few warps as it can.
            int64_t rows = product_of(shape, 0, a);
            while (t > 32 && t % 2 == 0 && (t / 2) * rows >= threads) t /= 2;
        }
        int64_t regs = (units + t - 1) / t;
        Factors fs;
        if (v > 1) fs.push_back({v, LayoutAxis::Register, reg_stride});
        fs.push_back({t, LayoutAxis::Thread, thread_stride});
        fs.push_back({regs, LayoutAxis::Register, reg_stride * v});
        l.modes[a] = {1, std::move(fs)};
        thread_stride *= t;
        reg_stride *= v * regs;
    }
    return l.normalized();
}

Layout Layout::mma_accumulator(int64_t m, int64_t n, int64_t warps_m, int64_t warps_n, bool m_interleaved, bool warps_m_fastest) {
    // m16n8 accumulator: row r in lane 4·(r % 8) + c / 2, register 2·(r / 8) + c % 2.
    Layout atom;
    atom.shape = {16, 8};
    atom.threads = 32;
    atom.modes = {{1, {{8, LayoutAxis::Thread, 4}, {2, LayoutAxis::Register, 2}}},
                  {1, {{2, LayoutAxis::Register, 1}, {4, LayoutAxis::Thread, 1}}}};
    const int64_t tiles_m = m / (16 * warps_m), tiles_n = n / (8 * warps_n);
    Layout warps = threads_only({warps_m, warps_n});
    if (warps_m_fastest) { // warp w at (w % warps_m, w / warps_m)
        warps.modes[0].factors[0].stride = 1;
        warps.modes[1].factors[0].stride = warps_m;
    }
    if (m_interleaved) { // the warps' rows inside each 16·warps_m-row band, then the bands in registers
        auto band = product(*product(atom, registers_only({1, tiles_n})), warps);
        return product(*band, registers_only({tiles_m, 1}))->normalized();
    }
    auto per_warp = product(atom, registers_only({tiles_m, tiles_n}));
    return product(*per_warp, warps)->normalized();
}

int64_t Layout::registers() const {
    int64_t top = 0;
    for (auto& m : modes)
        for (auto& f : m.factors)
            if (f.axis == LayoutAxis::Register) top += (f.extent - 1) * f.stride;
    return top + 1;
}

std::vector<LayoutFactor> Layout::replication() const {
    Factors gaps;
    nest(collect(*this, LayoutAxis::Thread), threads, &gaps, nullptr, "thread");
    return gaps;
}

int64_t Layout::replicas() const { return extent_product(replication()); }

bool Layout::valid(std::string* why) const {
    int axes = 0;
    for (auto& m : modes) {
        if (m.axes < 1) {
            if (why) *why = "a mode covers no axis";
            return false;
        }
        int64_t size = product_of(shape, axes, std::min<size_t>(axes + m.axes, shape.size()));
        axes += m.axes;
        if (extent_product(m.factors) < size) {
            if (why) *why = fmt::format("a mode's factors cover {} of its {} elements", extent_product(m.factors), size);
            return false;
        }
        for (auto& f : m.factors)
            if (f.extent < 1 || f.stride < 1) {
                if (why) *why = "a factor has no extent or stride";
                return false;
            }
    }
    if (axes != rank()) {
        if (why) *why = fmt::format("the modes cover {} axes of {}", axes, rank());
        return false;
    }
    return nest(collect(*this, LayoutAxis::Thread), threads, nullptr, why, "thread") &&
           nest(collect(*this, LayoutAxis::Register), 0, nullptr, why, "register");
}

bool Layout::per_axis() const {
    for (auto& m : modes)
        if (m.axes != 1) return false;
    return true;
}

Layout::Slot Layout::place(const std::vector<int64_t>& coord) const {
    Slot s;
    int axis = 0;
    for (auto& m : modes) {
        int64_t c = 0;
        for (int a = axis; a < axis + m.axes; ++a) c = c * shape[a] + coord[a];
        axis += m.axes;
        for (auto& f : m.factors) {
            int64_t d = c % f.extent;
            c /= f.extent;
            (f.axis == LayoutAxis::Thread ? s.thread : s.reg) += d * f.stride;
        }
    }
    return s;
}

std::vector<int64_t> Layout::owners(const std::vector<int64_t>& coord) const {
    std::vector<int64_t> out{place(coord).thread};
    for (auto& f : replication()) {
        std::vector<int64_t> next;
        for (int64_t t : out)
            for (int64_t d = 0; d < f.extent; ++d) next.push_back(t + d * f.stride);
        out = std::move(next);
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::optional<std::vector<int64_t>> Layout::element(int64_t thread, int64_t reg) const {
    if (thread < 0 || thread >= threads || reg < 0 || reg >= registers()) return std::nullopt;
    // The factors nest, so each index splits uniquely into digits; replication digits are ignored.
    int64_t thread_rest = thread, reg_rest = reg;
    for (auto& f : replication()) thread_rest -= ((thread / f.stride) % f.extent) * f.stride;
    std::vector<int64_t> coord(shape.size());
    int axis = 0;
    for (auto& m : modes) {
        int64_t c = 0, place_value = 1;
        for (auto& f : m.factors) {
            int64_t index = f.axis == LayoutAxis::Thread ? thread : reg;
            int64_t d = (index / f.stride) % f.extent;
            (f.axis == LayoutAxis::Thread ? thread_rest : reg_rest) -= d * f.stride;
            c += d * place_value;
            place_value *= f.extent;
        }
        for (int a = axis + m.axes - 1; a >= axis; --a) coord[a] = c % shape[a], c /= shape[a];
        if (c) return std::nullopt; // padding
        axis += m.axes;
    }
    if (thread_rest || reg_rest) return std::nullopt; // an index no digit combination reaches
    return coord;
}

int64_t Layout::vector_width() const {
    if (modes.empty() || shape.empty()) return 1;
    int64_t run = 1;
    for (auto& f : modes.back().factors) {
        if (f.extent == 1) continue;
        if (f.axis != LayoutAxis::Register || f.stride != run) break;
        run *= f.extent;
    }
    return std::gcd(run, shape.back());
}

std::optional<Layout> Layout::slice(int axis) const { return slice(std::vector<int>{axis}); }

std::optional<Layout> Layout::slice(const std::vector<int>& axes, std::vector<RegisterDigit>* map) const {
    Layout out = *this;
    std::vector<int> modes_to_drop;
    for (size_t i = 0; i < axes.size(); ++i) {
        int m = single_axis_mode(*this, axes[i]);
        if (m < 0 || (i && axes[i] <= axes[i - 1])) return std::nullopt;
        modes_to_drop.push_back(m);
    }
    for (size_t i = axes.size(); i-- > 0;) {
        out.shape.erase(out.shape.begin() + axes[i]);
        out.modes.erase(out.modes.begin() + modes_to_drop[i]);
    }
    std::vector<int64_t> old_strides;
    for (auto& m : out.modes)
        for (auto& f : m.factors)
            if (f.axis == LayoutAxis::Register) old_strides.push_back(f.stride);
    compact_registers(out.modes);
    if (map) {
        map->clear();
        size_t i = 0;
        for (auto& m : out.modes)
            for (auto& f : m.factors)
                if (f.axis == LayoutAxis::Register) {
                    if (f.extent > 1) map->push_back({old_strides[i], f.extent, f.stride});
                    ++i;
                }
    }
    return out;
}

int64_t Layout::sliced_register(int64_t reg, const std::vector<RegisterDigit>& map) {
    int64_t out = 0;
    for (auto& d : map) out += (reg / d.from_stride) % d.extent * d.to_stride;
    return out;
}

std::optional<Layout> Layout::expand(int axis, int64_t extent, std::vector<LayoutFactor> factors) const {
    auto starts = mode_starts(*this);
    size_t at = std::find(starts.begin(), starts.end(), axis) - starts.begin();
    if (axis != rank() && at == starts.size()) return std::nullopt;
    if (axis == rank()) at = modes.size();
    int64_t regs = registers();
    for (auto& f : factors)
        if (f.axis == LayoutAxis::Register) f.stride *= regs;
    Layout out = *this;
    out.shape.insert(out.shape.begin() + axis, extent);
    out.modes.insert(out.modes.begin() + static_cast<long>(at), Mode{1, std::move(factors)});
    if (!out.valid()) return std::nullopt;
    return out;
}

std::optional<Layout> Layout::permute(const std::vector<int>& order) const {
    if (!per_axis() || order.size() != shape.size()) return std::nullopt;
    Layout out = *this;
    for (size_t i = 0; i < order.size(); ++i) {
        if (order[i] < 0 || order[i] >= rank()) return std::nullopt;
        out.shape[i] = shape[order[i]];
        out.modes[i] = modes[order[i]];
    }
    return out;
}

std::optional<ReductionPlan> Layout::reduction_plan(int axis) const {
    int m = single_axis_mode(*this, axis);
    if (m < 0) return std::nullopt;
    ReductionPlan plan;
    for (auto f : modes[m].factors) {
        if (f.extent == 1) continue;
        if (f.axis == LayoutAxis::Register) {
            plan.registers *= f.extent;
            continue;
        }
        // A thread digit that crosses the warp boundary splits into a lane part and a warp part.
        if (f.stride < 32 && f.stride * f.extent > 32) {
            int64_t lanes = 32 / f.stride;
            if (32 % f.stride || f.extent % lanes) {
                plan.shuffles_only = false;
                plan.warps *= f.extent;
                continue;
            }
            plan.warps *= f.extent / lanes;
            f.extent = lanes;
        }
        if (f.stride >= 32) {
            plan.warps *= f.extent;
        } else if (is_pow2(f.stride) && is_pow2(f.extent)) {
            for (int64_t k = 1; k < f.extent; k *= 2) plan.shuffle_xor.push_back(static_cast<int>(f.stride * k));
        } else {
            plan.shuffles_only = false;
        }
    }
    return plan;
}

std::optional<ReductionPlan> Layout::reduction_plan(const std::vector<int>& axes) const {
    ReductionPlan plan;
    for (int axis : axes) {
        std::optional<ReductionPlan> one = reduction_plan(axis);
        if (!one) return std::nullopt;
        plan.registers *= one->registers;
        plan.shuffle_xor.insert(plan.shuffle_xor.end(), one->shuffle_xor.begin(), one->shuffle_xor.end());
        plan.warps *= one->warps;
        plan.shuffles_only = plan.shuffles_only && one->shuffles_only;
    }
    return plan;
}

Layout Layout::normalized() const {
    Layout out = *this;
    for (auto& m : out.modes) {
        Factors merged;
        for (auto& f : m.factors) {
            if (f.extent == 1) continue;
            if (!merged.empty() && merged.back().axis == f.axis && merged.back().stride * merged.back().extent == f.stride)
                merged.back().extent *= f.extent;
            else
                merged.push_back(f);
        }
        m.factors = std::move(merged);
    }
    return out;
}

bool Layout::operator==(const Layout& other) const {
    Layout a = normalized(), b = other.normalized();
    return a.shape == b.shape && a.threads == b.threads && a.modes == b.modes;
}

std::string Layout::str() const {
    if (!std::all_of(modes.begin(), modes.end(), [](const Mode& m) {
            return std::none_of(m.factors.begin(), m.factors.end(), [](auto& f) { return f.extent == 1; });
        }))
        return normalized().str();
    std::string out = "[";
    for (size_t i = 0; i < shape.size(); ++i) out += fmt::format("{}{}", i ? ", " : "", shape[i]);
    out += fmt::format("] over {} threads: (", threads);
    for (size_t i = 0; i < modes.size(); ++i) {
        if (i) out += ", ";
        if (modes[i].axes > 1) out += fmt::format("{} axes flat: ", modes[i].axes);
        bool first = true;
        for (auto& f : modes[i].factors) {
            out += fmt::format("{}{}:{}{}", first ? "" : " ", f.extent, f.axis == LayoutAxis::Thread ? 't' : 'r', f.stride);
            first = false;
        }
    }
    out += fmt::format(") {} registers", registers());
    if (int64_t r = replicas(); r > 1) out += fmt::format(", {} replicas", r);
    return out;
}

std::optional<Layout> product(const Layout& inner, const Layout& outer) {
    if (inner.rank() != outer.rank() || !inner.per_axis() || !outer.per_axis()) return std::nullopt;
    Layout out;
    out.threads = inner.threads * outer.threads;
    int64_t regs = inner.registers();
    for (int d = 0; d < inner.rank(); ++d) {
        if (extent_product(inner.modes[d].factors) != inner.shape[d]) return std::nullopt; // padded inner
        out.shape.push_back(inner.shape[d] * outer.shape[d]);
        Layout::Mode m = inner.modes[d];
        for (auto f : outer.modes[d].factors) {
            f.stride *= f.axis == LayoutAxis::Thread ? inner.threads : regs;
            m.factors.push_back(f);
        }
        out.modes.push_back(std::move(m));
    }
    return out;
}

} // namespace tlc::ir
