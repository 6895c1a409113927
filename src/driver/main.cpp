// tlc command-line entry point (temporary bootstrap: parse and print the AST).
#include "support/diagnostics.h"
#include "syntax/ast_printer.h"
#include "syntax/parser.h"

#include <fstream>
#include <iostream>
#include <sstream>

int main(int argc, char** argv) {
    if (argc < 2) return 2;
    std::ifstream in(argv[1], std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    tlc::SourceManager sm;
    uint32_t id = sm.add(argv[1], ss.str());
    tlc::DiagnosticEngine diags(sm);
    auto m = tlc::syntax::parse_module(sm, id, diags);
    std::cerr << diags.render();
    if (diags.has_errors()) return 1;
    std::cout << tlc::syntax::print_module(m);
    return 0;
}
