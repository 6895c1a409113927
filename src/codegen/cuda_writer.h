// A small indenting text writer for generated CUDA, so emitters never count spaces themselves.
#pragma once

#include <string>

namespace tlc::codegen {

class CudaWriter {
public:
    void line(const std::string& text = "") {
        if (text.empty()) {
            out_ += "\n";
            return;
        }
        out_.append(indent_ * 4, ' ');
        out_ += text;
        out_ += "\n";
    }
    // `head {` ... `}` around whatever `body` writes.
    template <typename Body> void block(const std::string& head, Body body, const std::string& tail = "}") {
        line(head.empty() ? "{" : head + " {");
        ++indent_;
        body();
        --indent_;
        line(tail);
    }
    void indent() { ++indent_; }
    void dedent() { --indent_; }
    std::string& str() { return out_; }

private:
    std::string out_;
    int indent_ = 0;
};

} // namespace tlc::codegen
