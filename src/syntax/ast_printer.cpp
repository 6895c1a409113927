// Canonical .tl printing of the AST: fully parenthesised binaries, 4-space indentation.
#include "syntax/ast_printer.h"

#include <fmt/format.h>

namespace tlc::syntax {

namespace {

class Printer {
public:
    std::string out;

    void line(int indent, const std::string& text) { out += std::string(indent * 4, ' ') + text + "\n"; }

    std::string expr(const ast::Expr& e) {
        std::string s;
        expr_to(s, e);
        return s;
    }

    // Appends `e` to `s`. Appending, not returning strings to concatenate, keeps a long
    // `x + x + ... + x` chain linear (concatenation copies the chain at every level).
    void expr_to(std::string& s, const ast::Expr& e) {
        switch (e.kind) {
        case ast::ExprKind::IntLit: s += std::to_string(static_cast<const ast::IntLit&>(e).value); return;
        case ast::ExprKind::FloatLit: s += static_cast<const ast::FloatLit&>(e).text; return;
        case ast::ExprKind::BoolLit: s += static_cast<const ast::BoolLit&>(e).value ? "true" : "false"; return;
        case ast::ExprKind::Name: s += static_cast<const ast::Name&>(e).name; return;
        case ast::ExprKind::Member: {
            auto& m = static_cast<const ast::Member&>(e);
            expr_to(s, *m.base);
            s += ".";
            s += m.member;
            return;
        }
        case ast::ExprKind::Index: {
            auto& x = static_cast<const ast::Index&>(e);
            expr_to(s, *x.base);
            s += "[";
            for (size_t i = 0; i < x.slices.size(); ++i) {
                if (i) s += ", ";
                expr_to(s, *x.slices[i].start);
                if (x.slices[i].extent) {
                    s += " +: ";
                    expr_to(s, *x.slices[i].extent);
                }
            }
            s += "]";
            return;
        }
        case ast::ExprKind::Call: {
            auto& c = static_cast<const ast::Call&>(e);
            s += c.callee;
            s += "(";
            args_to(s, c.args);
            s += ")";
            return;
        }
        case ast::ExprKind::Unary: {
            auto& u = static_cast<const ast::Unary&>(e);
            s += ast::spelling(u.op);
            s += "(";
            expr_to(s, *u.operand);
            s += ")";
            return;
        }
        case ast::ExprKind::Binary: {
            auto& b = static_cast<const ast::Binary&>(e);
            s += "(";
            expr_to(s, *b.lhs);
            s += " ";
            s += ast::spelling(b.op);
            s += " ";
            expr_to(s, *b.rhs);
            s += ")";
            return;
        }
        case ast::ExprKind::Ternary: {
            auto& t = static_cast<const ast::Ternary&>(e);
            s += "(";
            expr_to(s, *t.cond);
            s += " ? ";
            expr_to(s, *t.then_value);
            s += " : ";
            expr_to(s, *t.else_value);
            s += ")";
            return;
        }
        case ast::ExprKind::Cast: {
            auto& c = static_cast<const ast::Cast&>(e);
            s += "(";
            expr_to(s, *c.operand);
            s += " as ";
            s += c.target.name;
            s += ")";
            return;
        }
        }
        s += "?";
    }

    std::string args(const std::vector<ast::Arg>& list) {
        std::string s;
        args_to(s, list);
        return s;
    }

    void args_to(std::string& s, const std::vector<ast::Arg>& list) {
        for (size_t i = 0; i < list.size(); ++i) {
            if (i) s += ", ";
            if (!list[i].name.empty()) s += list[i].name + " = ";
            expr_to(s, *list[i].value);
        }
    }

    std::string type(const ast::TypeRef& t) {
        std::string s = t.elem.name;
        if (!t.shape.empty()) {
            s += "[";
            for (size_t i = 0; i < t.shape.size(); ++i) s += (i ? ", " : "") + expr(*t.shape[i]);
            s += "]";
        }
        return s;
    }

    std::string attrs(const std::vector<ast::Attribute>& list) {
        std::string s;
        for (auto& a : list) {
            s += "@";
            s += a.name;
            if (!a.args.empty()) {
                s += "(";
                args_to(s, a.args);
                s += ")";
            }
            s += " ";
        }
        return s;
    }

    void block(int indent, const ast::Block& b) {
        for (auto& s : b.stmts) stmt(indent, *s);
    }

    void stmt(int indent, const ast::Stmt& s) {
        switch (s.kind) {
        case ast::StmtKind::Block:
            line(indent, "{");
            block(indent + 1, static_cast<const ast::Block&>(s));
            line(indent, "}");
            break;
        case ast::StmtKind::Alloc: {
            auto& a = static_cast<const ast::Alloc&>(s);
            std::string init = a.init ? " = " + expr(*a.init) : "";
            line(indent, fmt::format("{} {}: {}{};", ast::spelling(a.scope), a.name, type(a.type), init));
            break;
        }
        case ast::StmtKind::View: {
            auto& v = static_cast<const ast::View&>(s);
            line(indent, fmt::format("view {}: {} = {};", v.name, type(v.type), v.tensor));
            break;
        }
        case ast::StmtKind::Let: {
            auto& l = static_cast<const ast::Let&>(s);
            std::string t = l.type ? ": " + type(*l.type) : "";
            line(indent, fmt::format("let {}{} = {};", l.name, t, expr(*l.value)));
            break;
        }
        case ast::StmtKind::Assign: {
            auto& a = static_cast<const ast::Assign&>(s);
            std::string target = a.target;
            if (!a.indices.empty()) {
                target += "[";
                for (size_t i = 0; i < a.indices.size(); ++i) target += (i ? ", " : "") + expr(*a.indices[i]);
                target += "]";
            }
            line(indent, fmt::format("{} {} {};", target, ast::spelling(a.op), expr(*a.value)));
            break;
        }
        case ast::StmtKind::If: {
            auto* cur = &static_cast<const ast::If&>(s);
            line(indent, "if " + expr(*cur->cond) + " {");
            while (true) {
                block(indent + 1, *cur->then_body);
                if (!cur->else_body) {
                    line(indent, "}");
                    break;
                }
                if (cur->else_body->kind == ast::StmtKind::If) {
                    cur = static_cast<const ast::If*>(cur->else_body.get());
                    line(indent, "} else if " + expr(*cur->cond) + " {");
                    continue;
                }
                line(indent, "} else {");
                block(indent + 1, static_cast<const ast::Block&>(*cur->else_body));
                line(indent, "}");
                break;
            }
            break;
        }
        case ast::StmtKind::For: {
            auto& f = static_cast<const ast::For&>(s);
            std::string vars;
            for (size_t i = 0; i < f.vars.size(); ++i) vars += (i ? ", " : "") + f.vars[i];
            line(indent, fmt::format("{}for {} in {}({}) {{", attrs(f.attrs), vars, ast::spelling(f.loop_kind), args(f.args)));
            block(indent + 1, *f.body);
            line(indent, "}");
            break;
        }
        case ast::StmtKind::TileOp: {
            auto& t = static_cast<const ast::TileOp&>(s);
            line(indent, fmt::format("{}({});", ast::spelling(t.op), args(t.args)));
            break;
        }
        case ast::StmtKind::Return:
            line(indent, "return " + expr(*static_cast<const ast::Return&>(s).value) + ";");
            break;
        case ast::StmtKind::ExprStmt:
            line(indent, expr(*static_cast<const ast::ExprStmt&>(s).expr) + ";");
            break;
        case ast::StmtKind::Workspace: {
            auto& w = static_cast<const ast::Workspace&>(s);
            line(indent, fmt::format("workspace {}: {};", w.name, type(w.type)));
            break;
        }
        case ast::StmtKind::Launch: {
            auto& l = static_cast<const ast::Launch&>(s);
            std::string compile = l.compile_args.empty() ? std::string() : fmt::format("<{}>", args(l.compile_args));
            line(indent, fmt::format("launch {}{}({});", l.kernel, compile, args(l.args)));
            break;
        }
        }
    }

    void module(const ast::Module& m) {
        for (auto& i : m.imports) line(0, "import \"" + i.path + "\";");
        for (auto& c : m.consts) {
            std::string t = c.type ? ": " + type(*c.type) : "";
            line(0, fmt::format("const {}{} = {};", c.name, t, expr(*c.value)));
        }
        for (auto& f : m.fns) {
            std::string params;
            for (size_t i = 0; i < f.params.size(); ++i)
                params += (i ? ", " : "") + f.params[i].name + ": " + type(f.params[i].type);
            std::string head = fmt::format("{}fn {}{}({}) -> {}", f.is_extern ? "extern " : "", f.name, compile_params(f.type_params),
                                           params, type(f.result));
            if (f.cuda_name) head += " = \"" + *f.cuda_name + "\"";
            if (f.pair_name) head += " pair \"" + *f.pair_name + "\"";
            if (f.header) head += " in \"" + *f.header + "\"";
            if (!f.body) {
                line(0, head + ";");
                continue;
            }
            line(0, head + " {");
            block(1, *f.body);
            line(0, "}");
        }
        for (auto& k : m.kernels) {
            signature(k, attrs(k.attrs) + "kernel ");
            line(0, "{");
            block(1, *k.body);
            line(0, "}");
        }
        for (auto& p : m.programs) {
            signature(p.header, "program ");
            line(0, "{");
            for (auto& s : p.body) stmt(1, *s);
            line(0, "}");
        }
    }

    // `<BM: int in [64, 128] = 128, T: dtype>`, or "" for none.
    std::string compile_params(const std::vector<ast::CompileParam>& params) {
        if (params.empty()) return "";
        std::string out = "<";
        for (size_t i = 0; i < params.size(); ++i) {
            auto& p = params[i];
            out += (i ? ", " : "") + p.name;
            if (p.kind != ast::ParamKind::Inferred) out += std::string(": ") + ast::spelling(p.kind);
            if (!p.candidates.empty()) {
                out += " in [";
                for (size_t j = 0; j < p.candidates.size(); ++j) out += (j ? ", " : "") + expr(*p.candidates[j]);
                out += "]";
            }
            if (p.default_value) out += " = " + expr(*p.default_value);
        }
        return out + ">";
    }

    // `kernel NAME<...>(...)` and its launch clauses (a program's too).
    void signature(const ast::Kernel& k, const std::string& keyword) {
        {
            std::string head = keyword + k.name;
            head += compile_params(k.compile_params);
            head += "(";
            for (size_t i = 0; i < k.params.size(); ++i) {
                auto& p = k.params[i];
                head += (i ? ", " : "") + p.name + ": " + (p.is_tensor ? (p.is_mutable ? "global mut " : "global ") : "") + type(p.type);
            }
            head += ")";
            line(0, head);
            std::string launch;
            if (!k.grid.empty()) {
                launch += "grid(";
                for (size_t i = 0; i < k.grid.size(); ++i) launch += (i ? ", " : "") + expr(*k.grid[i]);
                launch += ")";
            }
            if (k.threads) launch += (launch.empty() ? "" : " ") + std::string("threads(") + expr(*k.threads) + ")";
            if (!k.cluster.empty()) {
                launch += (launch.empty() ? "" : " ") + std::string("cluster(");
                for (size_t i = 0; i < k.cluster.size(); ++i) launch += (i ? ", " : "") + expr(*k.cluster[i]);
                launch += ")";
            }
            if (!k.requires_.empty()) {
                launch += (launch.empty() ? "" : " ") + std::string("requires(");
                for (size_t i = 0; i < k.requires_.size(); ++i) launch += (i ? ", " : "") + expr(*k.requires_[i]);
                launch += ")";
            }
            if (k.when) launch += (launch.empty() ? "" : " ") + std::string("when(") + expr(*k.when) + ")";
            if (!launch.empty()) line(1, launch);
        }
    }
};

} // namespace

std::string print_module(const ast::Module& module) {
    Printer p;
    p.module(module);
    return p.out;
}

std::string print_expr(const ast::Expr& expr) {
    Printer p;
    return p.expr(expr);
}

std::string print_launch(const ast::Launch& launch) {
    Printer p;
    p.stmt(0, launch);
    while (!p.out.empty() && p.out.back() == '\n') p.out.pop_back();
    return p.out;
}

} // namespace tlc::syntax
