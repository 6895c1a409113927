// The C++ expressions codegen writes for fragment layouts (codegen/layout_expr.h), evaluated here
// for every thread and register and compared with the layout algebra: coordinates, padding,
// first replica, and the register of a broadcast read.
#include "codegen/layout_expr.h"

#include <doctest/doctest.h>

#include <cctype>
#include <map>
#include <stdexcept>
#include <string>

using tlc::ir::Layout;

namespace {

// Integer expressions of C precedence over + - * / % < == && and parentheses, with variables.
class Evaluator {
public:
    Evaluator(const std::string& text, std::map<std::string, int64_t> vars) : s_(text), vars_(std::move(vars)) {}
    int64_t run() {
        int64_t v = logical_and();
        skip();
        if (i_ != s_.size()) throw std::runtime_error("trailing text in `" + s_ + "`");
        return v;
    }

private:
    void skip() {
        while (i_ < s_.size() && s_[i_] == ' ') ++i_;
    }
    bool eat(const std::string& op) {
        skip();
        if (s_.compare(i_, op.size(), op) != 0) return false;
        i_ += op.size();
        return true;
    }
    int64_t logical_and() {
        int64_t v = equality();
        while (eat("&&")) {
            int64_t r = equality();
            v = v && r;
        }
        return v;
    }
    int64_t equality() {
        int64_t v = less();
        while (eat("==")) v = v == less();
        return v;
    }
    int64_t less() {
        int64_t v = sum();
        while (eat("<")) v = v < sum();
        return v;
    }
    int64_t sum() {
        int64_t v = product();
        for (;;) {
            if (eat("+")) v += product();
            else if (eat("-")) v -= product();
            else return v;
        }
    }
    int64_t product() {
        int64_t v = atom();
        for (;;) {
            if (eat("*")) v *= atom();
            else if (eat("/")) v /= atom();
            else if (eat("%")) v %= atom();
            else return v;
        }
    }
    int64_t atom() {
        skip();
        if (eat("(")) {
            int64_t v = logical_and();
            if (!eat(")")) throw std::runtime_error("missing `)` in `" + s_ + "`");
            return v;
        }
        size_t start = i_;
        while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) ++i_;
        std::string word = s_.substr(start, i_ - start);
        if (word.empty()) throw std::runtime_error("unexpected text in `" + s_ + "`");
        if (std::isdigit(static_cast<unsigned char>(word[0]))) return std::stoll(word);
        return vars_.at(word);
    }

    std::string s_;
    std::map<std::string, int64_t> vars_;
    size_t i_ = 0;
};

int64_t eval(const std::string& e, int64_t tid, int64_t slot) { return Evaluator(e, {{"tl_tid", tid}, {"s", slot}}).run(); }

// Codegen's expressions for `l` agree with the algebra at every (thread, register).
void check_expressions(const Layout& l) {
    CAPTURE(l.str());
    auto coords = tlc::codegen::layout_coordinates(l, "s");
    std::string valid = tlc::codegen::layout_padding_condition(l, "s");
    std::string first = tlc::codegen::first_replica_condition(l);
    REQUIRE(coords.size() == l.shape.size());
    for (int64_t t = 0; t < l.threads; ++t) {
        for (int64_t r = 0; r < l.registers(); ++r) {
            auto element = l.element(t, r);
            bool holds = valid.empty() || eval(valid, t, r);
            CHECK(holds == element.has_value());
            if (!element) continue;
            for (size_t d = 0; d < coords.size(); ++d) CHECK(eval(coords[d], t, r) == (*element)[d]);
            // The first replica is the smallest owner.
            bool is_first = first.empty() || eval(first, t, r);
            CHECK(is_first == (l.owners(*element).front() == t));
        }
    }
}

} // namespace

TEST_CASE("layout expressions: blocked, per-axis blocked, mma accumulators and their slices") {
    check_expressions(Layout::mma_accumulator(64, 64, 4, 1));
    check_expressions(Layout::mma_accumulator(32, 32, 2, 4));
    check_expressions(Layout::blocked({1000}, 128, 4));
    check_expressions(Layout::blocked({5, 100}, 128, 4));
    for (auto& [shape, threads, v] : std::vector<std::tuple<std::vector<int64_t>, int64_t, int64_t>>{
             {{64, 64}, 128, 8}, {{5, 100}, 128, 4}, {{8, 96}, 128, 8}, {{4, 8, 32}, 128, 4}, {{300, 8}, 96, 8}}) {
        Layout l = Layout::blocked_rows(shape, threads, v);
        check_expressions(l);
        for (int axis = 0; axis < l.rank(); ++axis) check_expressions(*l.slice(axis));
    }
    for (auto [wm, wn] : std::vector<std::pair<int, int>>{{4, 1}, {1, 4}, {2, 2}}) {
        Layout acc = Layout::mma_accumulator(64, 32, wm, wn);
        check_expressions(*acc.slice(0));
        check_expressions(*acc.slice(1));
    }
}

TEST_CASE("layout expressions: the register of a broadcast read holds the element's row") {
    for (const Layout& anchor : {Layout::mma_accumulator(64, 64, 4, 1), Layout::mma_accumulator(32, 64, 2, 2),
                                 Layout::blocked_rows({16, 64}, 128, 8), Layout::blocked_rows({4, 6, 16}, 128, 4)}) {
        CAPTURE(anchor.str());
        for (int kept_axis = 0; kept_axis < anchor.rank(); ++kept_axis) {
            std::vector<int> dropped;
            for (int a = 0; a < anchor.rank(); ++a)
                if (a != kept_axis) dropped.push_back(a);
            Layout slice = *anchor.slice(dropped);
            std::string reg = tlc::codegen::sliced_register_index(anchor, {kept_axis}, "s");
            for (int64_t t = 0; t < anchor.threads; ++t)
                for (int64_t r = 0; r < anchor.registers(); ++r) {
                    auto e = anchor.element(t, r);
                    if (!e) continue;
                    auto held = slice.element(t, eval(reg, t, r));
                    REQUIRE(held);
                    CHECK((*held)[0] == (*e)[kept_axis]);
                }
        }
    }
}
