// Unit and property tests of the register-tile layout algebra (src/ir/layout.h).
#include "ir/layout.h"

#include <doctest/doctest.h>

#include <map>
#include <random>
#include <set>
#include <tuple>

using tlc::ir::Layout;
using tlc::ir::LayoutAxis;
using tlc::ir::LayoutFactor;

namespace {

// Every coordinate of a shape, row-major.
std::vector<std::vector<int64_t>> coords_of(const std::vector<int64_t>& shape) {
    std::vector<std::vector<int64_t>> out{{}};
    for (int64_t e : shape) {
        std::vector<std::vector<int64_t>> next;
        for (auto& c : out)
            for (int64_t i = 0; i < e; ++i) {
                auto d = c;
                d.push_back(i);
                next.push_back(d);
            }
        out = std::move(next);
    }
    return out;
}

// The properties every valid layout has: place() and element() are inverse; each element has
// exactly replicas() owners; no (thread, register) holds two elements; without replication the map
// elements -> (thread, register) is a bijection onto the non-padding slots.
void check_properties(const Layout& l) {
    std::string why;
    REQUIRE_MESSAGE(l.valid(&why), l.str() << ": " << why);
    std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> held;
    int64_t elements = 0;
    for (auto& c : coords_of(l.shape)) {
        ++elements;
        auto owners = l.owners(c);
        CHECK(int64_t(owners.size()) == l.replicas());
        auto slot = l.place(c);
        CHECK(slot.reg < l.registers());
        for (int64_t t : owners) {
            auto back = l.element(t, slot.reg);
            REQUIRE(back);
            CHECK(*back == c);
            auto [it, fresh] = held.emplace(std::pair{t, slot.reg}, c);
            CHECK_MESSAGE(fresh, "two elements in one register of one thread: " << l.str());
        }
    }
    // Every slot element() reports is one of the held ones (no element appears from nowhere).
    int64_t slots = 0;
    for (int64_t t = 0; t < l.threads; ++t)
        for (int64_t r = 0; r < l.registers(); ++r)
            if (auto e = l.element(t, r)) {
                ++slots;
                auto it = held.find({t, r});
                REQUIRE(it != held.end());
                CHECK(it->second == *e);
            }
    CHECK(slots == elements * l.replicas());
}

} // namespace

TEST_CASE("mma accumulator layout matches mma.sync's m16n8 fragment") {
    Layout l = Layout::mma_accumulator(16, 8, 1, 1);
    CHECK(l.threads == 32);
    CHECK(l.registers() == 4);
    CHECK(l.replicas() == 1);
    // PTX ISA, mma.m16n8k16 f32 accumulator: c0,c1 at row lane/4, cols 2*(lane%4)+{0,1}; c2,c3 at row lane/4+8.
    for (int64_t lane = 0; lane < 32; ++lane)
        for (int64_t r = 0; r < 4; ++r) {
            auto e = l.element(lane, r);
            REQUIRE(e);
            CHECK((*e)[0] == lane / 4 + 8 * (r / 2));
            CHECK((*e)[1] == 2 * (lane % 4) + r % 2);
        }
    CHECK(l.vector_width() == 2);
}

TEST_CASE("mma accumulator over a warp grid agrees with the runtime's MmaAccLayout formula") {
    for (auto [m, n, wm, wn] : {std::tuple{64, 64, 2, 2}, {128, 64, 4, 1}, {32, 128, 1, 4}, {48, 40, 1, 1}, {128, 256, 2, 4}}) {
        Layout l = Layout::mma_accumulator(m, n, wm, wn);
        check_properties(l);
        int64_t warp_m_rows = m / wm, warp_n_cols = n / wn, tiles_n = warp_n_cols / 8;
        CHECK(l.registers() == (warp_m_rows / 16) * tiles_n * 4);
        for (int64_t t = 0; t < l.threads; ++t)
            for (int64_t s = 0; s < l.registers(); ++s) {
                int64_t warp = t / 32, lane = t % 32, r = s % 4;
                int64_t row = (warp / wn) * warp_m_rows + (s / (tiles_n * 4)) * 16 + lane / 4 + 8 * (r / 2);
                int64_t col = (warp % wn) * warp_n_cols + ((s / 4) % tiles_n) * 8 + (lane % 4) * 2 + r % 2;
                auto e = l.element(t, s);
                REQUIRE(e);
                CHECK((*e)[0] == row);
                CHECK((*e)[1] == col);
            }
    }
}

TEST_CASE("m-interleaved mma accumulator (wgmma slabs) agrees with the runtime's MmaAccLayout formula") {
    for (auto [m, n, wm] : {std::tuple{128, 128, 4}, {256, 64, 8}, {192, 32, 4}, {64, 64, 4}}) {
        Layout l = Layout::mma_accumulator(m, n, wm, 1, true);
        check_properties(l);
        int64_t tiles_n = n / 8;
        CHECK(l.registers() == (m / (16 * wm)) * tiles_n * 4);
        for (int64_t t = 0; t < l.threads; ++t)
            for (int64_t s = 0; s < l.registers(); ++s) {
                int64_t warp = t / 32, lane = t % 32, r = s % 4;
                int64_t row = (s / (tiles_n * 4)) * 16 * wm + warp * 16 + lane / 4 + 8 * (r / 2);
                int64_t col = ((s / 4) % tiles_n) * 8 + (lane % 4) * 2 + r % 2;
                auto e = l.element(t, s);
                REQUIRE(e);
                CHECK((*e)[0] == row);
                CHECK((*e)[1] == col);
            }
    }
    // One tile per warp: the same layout either way.
    CHECK(Layout::mma_accumulator(64, 64, 4, 1, true) == Layout::mma_accumulator(64, 64, 4, 1));
}

TEST_CASE("blocked layout agrees with the runtime's BlockedLayout formula, padding included") {
    for (auto [shape, threads, v] : {std::tuple{std::vector<int64_t>{7, 33}, 64, 1}, {{64, 64}, 128, 4}, {{1000}, 256, 8}, {{3, 5, 8}, 32, 8}}) {
        Layout l = Layout::blocked(shape, threads, v);
        check_properties(l);
        int64_t numel = 1;
        for (auto e : shape) numel *= e;
        for (int64_t t = 0; t < threads; ++t)
            for (int64_t s = 0; s < l.registers(); ++s) {
                int64_t flat = ((s / v) * threads + t) * v + s % v;
                auto e = l.element(t, s);
                CHECK(bool(e) == (flat < numel));
                if (!e) continue;
                int64_t back = 0;
                for (size_t d = 0; d < shape.size(); ++d) back = back * shape[d] + (*e)[d];
                CHECK(back == flat);
            }
        CHECK(l.vector_width() == v);
        if (shape.size() > 1) CHECK_FALSE(l.slice(0)); // one flat mode: no axis can be dropped on its own
    }
}

TEST_CASE("replicated layout: every thread holds everything") {
    Layout l = Layout::replicated({4, 3}, 64);
    check_properties(l);
    CHECK(l.replicas() == 64);
    CHECK(l.registers() == 12);
    CHECK(l.owners({2, 1}).size() == 64);
    CHECK(l.place({2, 1}).reg == 7);
}

TEST_CASE("slicing an accumulator gives the rows' owners and the reduction plan") {
    Layout acc = Layout::mma_accumulator(64, 64, 2, 2); // 128 threads, each warp 32 x 32
    auto rows = acc.slice(1);
    REQUIRE(rows);
    check_properties(*rows);
    // Each row of a warp's part is held by the 4 lanes of a quad, and by the two warps of a warp row.
    CHECK(rows->replicas() == 8);
    CHECK(rows->str() == "[64] over 128 threads: (8:t4 2:r1 2:r2 2:t64) 4 registers, 8 replicas"); // docs/layouts.md
    CHECK(acc.str() == "[64, 64] over 128 threads: (8:t4 2:r2 2:r16 2:t64, 2:r1 4:t1 4:r4 2:t32) 32 registers");
    CHECK(rows->registers() == 4); // 2 halves (r / 2) x 2 row tiles
    auto owners = rows->owners({0});
    CHECK(owners == std::vector<int64_t>{0, 1, 2, 3, 32, 33, 34, 35});
    auto plan = acc.reduction_plan(1);
    REQUIRE(plan);
    CHECK(plan->registers == 8); // 2 columns per register pair x 4 column tiles
    CHECK(plan->shuffle_xor == std::vector<int>{1, 2});
    CHECK(plan->warps == 2);
    CHECK(plan->shuffles_only);

    // Full-row warps (warps stacked along M): the reduce needs no cross-warp exchange.
    auto full_rows = Layout::mma_accumulator(64, 64, 4, 1).reduction_plan(1);
    REQUIRE(full_rows);
    CHECK(full_rows->warps == 1);

    auto cols = acc.slice(0);
    REQUIRE(cols);
    check_properties(*cols);
    auto col_plan = acc.reduction_plan(0);
    REQUIRE(col_plan);
    CHECK(col_plan->shuffle_xor == std::vector<int>{4, 8, 16});
}

TEST_CASE("slice covers each remaining coordinate exactly once per replica, for random layouts") {
    std::mt19937 rng(7);
    for (int i = 0; i < 40; ++i) {
        int64_t wm = 1 << (rng() % 3), wn = 1 << (rng() % 3);
        int64_t m = 16 * wm * (1 + rng() % 3), n = 8 * wn * (1 + rng() % 3);
        Layout acc = Layout::mma_accumulator(m, n, wm, wn);
        for (int axis = 0; axis < 2; ++axis) {
            auto s = acc.slice(axis);
            REQUIRE(s);
            check_properties(*s);
            // The owners of a sliced element are exactly the threads that held some element of its row.
            for (int64_t k = 0; k < s->shape[0]; k += 5) {
                std::set<int64_t> expected;
                for (int64_t j = 0; j < acc.shape[axis == 0 ? 0 : 1]; ++j) {
                    std::vector<int64_t> c = axis == 1 ? std::vector<int64_t>{k, j} : std::vector<int64_t>{j, k};
                    expected.insert(acc.place(c).thread);
                }
                auto owners = s->owners({k});
                CHECK(std::set<int64_t>(owners.begin(), owners.end()) == expected);
            }
        }
    }
}

TEST_CASE("expand undoes slice") {
    Layout acc = Layout::mma_accumulator(32, 32, 1, 2);
    auto rows = acc.slice(1);
    REQUIRE(rows);
    // Re-add the column axis with the accumulator's own column factors (register strides relative).
    auto back = rows->expand(1, 32, {{2, LayoutAxis::Register, 1}, {4, LayoutAxis::Thread, 1}, {2, LayoutAxis::Register, 2}, {2, LayoutAxis::Thread, 32}});
    REQUIRE(back);
    check_properties(*back);
    CHECK(back->replicas() == 1);
    // Thread digits that are not replication in the sliced layout are refused.
    CHECK_FALSE(rows->expand(1, 4, {{4, LayoutAxis::Thread, 4}}));
}

TEST_CASE("product builds hierarchical layouts; permute transposes") {
    auto quad = Layout::threads_only({1, 4});
    auto twice = Layout::registers_only({2, 2});
    auto p = tlc::ir::product(quad, twice);
    REQUIRE(p);
    check_properties(*p);
    CHECK(p->shape == std::vector<int64_t>{2, 8});
    CHECK(p->threads == 4);
    CHECK(p->registers() == 4);
    CHECK(p->place({1, 5}) == Layout::Slot{1, 3});

    auto t = p->permute({1, 0});
    REQUIRE(t);
    check_properties(*t);
    CHECK(t->place({5, 1}) == p->place({1, 5}));
    CHECK(t->vector_width() == 1);
}

TEST_CASE("normal form: split factors compare equal to merged ones") {
    Layout a = Layout::threads_only({8});
    Layout b = a;
    b.modes[0].factors = {{2, LayoutAxis::Thread, 1}, {1, LayoutAxis::Register, 9}, {4, LayoutAxis::Thread, 2}};
    CHECK(a == b);
    CHECK_FALSE(a == Layout::registers_only({8}));
}

TEST_CASE("invalid layouts say why") {
    Layout l = Layout::threads_only({8});
    l.modes[0].factors.push_back({2, LayoutAxis::Thread, 4}); // overlaps thread digits 4..7
    std::string why;
    CHECK_FALSE(l.valid(&why));
    CHECK(why.find("overlaps") != std::string::npos);
    Layout short_mode = Layout::registers_only({8});
    short_mode.modes[0].factors[0].extent = 4;
    CHECK_FALSE(short_mode.valid(&why));
    CHECK(why.find("cover") != std::string::npos);
}

TEST_CASE("str names each factor") {
    CHECK(Layout::mma_accumulator(16, 8, 1, 1).str() == "[16, 8] over 32 threads: (8:t4 2:r2, 2:r1 4:t1) 4 registers");
    CHECK(Layout::replicated({4}, 32).str() == "[4] over 32 threads: (4:r1) 4 registers, 32 replicas");
}

TEST_CASE("blocked_rows: per-axis, valid, row-major registers, and equal to blocked() where the chunks divide") {
    // Every element held, each by the same number of threads, for shapes with and without padding.
    for (auto [shape, threads, v] : std::vector<std::tuple<std::vector<int64_t>, int64_t, int64_t>>{
             {{8, 256}, 256, 8}, {{64, 64}, 128, 8}, {{5, 100}, 128, 4}, {{3, 7}, 64, 1}, {{2, 4, 32}, 128, 4},
             {{1024}, 256, 4}, {{64}, 128, 8}, {{16, 2}, 32, 2}, {{300, 8}, 96, 8}}) {
        const int64_t rows = shape[0]; // clang 14's lambdas cannot capture a structured binding
        CAPTURE(rows);
        Layout l = Layout::blocked_rows(shape, threads, v);
        CHECK(l.per_axis());
        check_properties(l);
        CHECK(l.vector_width() == v);
        for (int axis = 0; axis < l.rank(); ++axis) {
            CHECK(l.slice(axis));
            CHECK(l.reduction_plan(axis));
        }
    }
    // Where every row is a whole number of chunks rounds, the same placement as the flat layout.
    for (auto [shape, threads, v] : std::vector<std::tuple<std::vector<int64_t>, int64_t, int64_t>>{
             {{8, 256}, 256, 8}, {{64, 64}, 128, 8}, {{4, 1024}, 256, 4}, {{1024}, 256, 4}}) {
        Layout rows = Layout::blocked_rows(shape, threads, v), flat = Layout::blocked(shape, threads, v);
        for (auto& c : coords_of(shape)) CHECK(rows.place(c) == flat.place(c));
    }
    // A row of 256 columns over 32 lanes: the row's reduction is 5 shuffles, no cross-warp step.
    auto plan = Layout::blocked_rows({8, 256}, 256, 8).reduction_plan(1);
    REQUIRE(plan);
    CHECK(plan->registers == 8);
    CHECK(plan->shuffle_xor == std::vector<int>{1, 2, 4, 8, 16});
    CHECK(plan->warps == 1);
}

TEST_CASE("blocked_rows, compact: a row per warp when there are rows for every warp, valid layouts") {
    // [8, 512] over 256 threads: 64 threads per row by default (a cross-warp reduction), one warp
    // per row compacted (shuffles only).
    auto wide = Layout::blocked_rows({8, 512}, 256, 8).reduction_plan(1);
    auto compact = Layout::blocked_rows({8, 512}, 256, 8, true).reduction_plan(1);
    REQUIRE(wide);
    REQUIRE(compact);
    CHECK(wide->warps == 2);
    CHECK(compact->warps == 1);
    CHECK(compact->registers == 16);
    // Fewer rows than warps: the rows share the threads out, still no replicas.
    Layout two = Layout::blocked_rows({2, 2048}, 256, 8, true);
    CHECK(two.replication().empty());
    CHECK(two.reduction_plan(1)->warps == 4);
    for (auto [shape, threads, v] : std::vector<std::tuple<std::vector<int64_t>, int64_t, int64_t>>{
             {{8, 512}, 256, 8}, {{2, 2048}, 256, 8}, {{1, 8192}, 512, 8}, {{32, 128}, 256, 8}, {{3, 1000}, 128, 8},
             {{2, 4, 512}, 256, 4}}) {
        const int64_t rows = shape[0]; // clang 14's lambdas cannot capture a structured binding
        CAPTURE(rows);
        Layout l = Layout::blocked_rows(shape, threads, v, true);
        CHECK(l.per_axis());
        check_properties(l);
        CHECK(l.reduction_plan(static_cast<int>(shape.size()) - 1));
    }
}

TEST_CASE("slice over several axes, and the register map of a broadcast read") {
    Layout acc = Layout::mma_accumulator(64, 32, 2, 2);
    std::vector<tlc::ir::RegisterDigit> map;
    auto rows = acc.slice(std::vector<int>{1}, &map);
    REQUIRE(rows);
    CHECK(*rows == *acc.slice(1));
    // Every register of the tile maps to the register of the slice that holds its row, in the
    // same thread (the thread is one of the row's owners).
    for (int64_t t = 0; t < acc.threads; ++t)
        for (int64_t r = 0; r < acc.registers(); ++r) {
            auto e = acc.element(t, r);
            if (!e) continue;
            int64_t reg = Layout::sliced_register(r, map);
            auto row = rows->element(t, reg);
            REQUIRE(row);
            CHECK((*row)[0] == (*e)[0]);
        }
    Layout l3 = Layout::blocked_rows({4, 6, 16}, 128, 4);
    auto mid = l3.slice(std::vector<int>{0, 2}, &map);
    REQUIRE(mid);
    check_properties(*mid);
    for (int64_t t = 0; t < l3.threads; ++t)
        for (int64_t r = 0; r < l3.registers(); ++r)
            if (auto e = l3.element(t, r)) {
                auto got = mid->element(t, Layout::sliced_register(r, map));
                REQUIRE(got);
                CHECK((*got)[0] == (*e)[1]);
            }
    CHECK_FALSE(l3.slice(std::vector<int>{2, 0})); // axes ascending
}

TEST_CASE("a reduction plan along several axes: their registers, their lanes' shuffles, their warps") {
    // [4, 16, 64] over 256 threads, per axis: b over 2 warps (stride 128) and 2 registers, t over
    // 4 lanes (stride 8) and 4 warps, c over 8 lanes and 8 registers.
    Layout l = Layout::blocked_rows({4, 16, 64}, 256, 8);
    auto b = l.reduction_plan(0), t = l.reduction_plan(1), both = l.reduction_plan(std::vector<int>{0, 1});
    REQUIRE(b);
    REQUIRE(t);
    REQUIRE(both);
    CHECK(both->registers == b->registers * t->registers);
    CHECK(both->warps == b->warps * t->warps);
    std::vector<int> masks = b->shuffle_xor;
    masks.insert(masks.end(), t->shuffle_xor.begin(), t->shuffle_xor.end());
    CHECK(both->shuffle_xor == masks);
    CHECK(both->shuffles_only);
    CHECK(both->warps == 8);
    CHECK(!Layout::mma_accumulator(64, 64, 4, 1).reduction_plan(std::vector<int>{0, 2}));  // no axis 2
}
