// A recursive-descent evaluator for the cost-model expressions of `tlc tune --cost-model`.
#include "tune/cost_model.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace tlc::tune {

namespace {

class CostParser {
public:
    CostParser(const std::string& text, const std::map<std::string, double>& values) : s_(text), values_(values) {}

    double parse() {
        double v = sum();
        skip();
        if (i_ != s_.size()) fail("unexpected `" + s_.substr(i_, 1) + "`");
        return v;
    }

private:
    [[noreturn]] void fail(const std::string& why) { throw std::runtime_error(why + " at column " + std::to_string(i_ + 1)); }
    void skip() {
        while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    bool eat(char c) {
        skip();
        if (i_ < s_.size() && s_[i_] == c) {
            ++i_;
            return true;
        }
        return false;
    }
    double sum() {
        double v = product();
        for (;;) {
            if (eat('+')) v += product();
            else if (eat('-')) v -= product();
            else return v;
        }
    }
    double product() {
        double v = unary();
        for (;;) {
            if (eat('*')) v *= unary();
            else if (eat('/')) v /= unary();
            else if (eat('%')) v = std::fmod(v, unary());
            else return v;
        }
    }
    double unary() {
        if (eat('-')) return -unary();
        return primary();
    }
    double primary() {
        skip();
        if (eat('(')) {
            double v = sum();
            if (!eat(')')) fail("expected `)`");
            return v;
        }
        if (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.')) {
            char* end = nullptr;
            double v = std::strtod(s_.c_str() + i_, &end);
            i_ = static_cast<size_t>(end - s_.c_str());
            return v;
        }
        size_t start = i_;
        while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) ++i_;
        std::string name = s_.substr(start, i_ - start);
        if (name.empty()) fail(i_ < s_.size() ? "unexpected `" + s_.substr(i_, 1) + "`" : "unexpected end");
        if (eat('(')) {
            double a = sum();
            if (name == "abs") {
                if (!eat(')')) fail("expected `)`");
                return std::fabs(a);
            }
            if (!eat(',')) fail("expected `,`");
            double b = sum();
            if (!eat(')')) fail("expected `)`");
            if (name == "min") return std::min(a, b);
            if (name == "max") return std::max(a, b);
            fail("unknown function `" + name + "` (min, max, abs)");
        }
        auto it = values_.find(name);
        if (it == values_.end()) {
            i_ = start;
            fail("unknown name `" + name + "`");
        }
        return it->second;
    }

    const std::string& s_;
    const std::map<std::string, double>& values_;
    size_t i_ = 0;
};

} // namespace

std::optional<double> evaluate_cost(const std::string& expr, const std::map<std::string, double>& values,
                                    std::string* error) {
    try {
        return CostParser(expr, values).parse();
    } catch (const std::exception& e) {
        if (error) *error = e.what();
        return std::nullopt;
    }
}

} // namespace tlc::tune
