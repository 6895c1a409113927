// AST builder, expression rules: precedence levels, postfix subscripts and members, literals, calls.
#include "syntax/builder.h"

#include <charconv>
#include <cstdlib>

namespace tlc::syntax {

using P = tlgen::TlParser;

SourceRange AstBuilder::range_of(antlr4::Token* tok) const {
    if (!tok) return {};
    size_t start = tok->getStartIndex(), stop = tok->getStopIndex();
    if (start == INVALID_INDEX) return {};
    SourceLoc b = file_.loc_at(file_id_, static_cast<uint32_t>(start));
    SourceLoc e = file_.loc_at(file_id_, static_cast<uint32_t>(stop + 1));
    return {b, e};
}

SourceRange AstBuilder::range_of(antlr4::tree::TerminalNode* node) const {
    return node ? range_of(node->getSymbol()) : SourceRange{};
}

SourceRange AstBuilder::range_of(antlr4::ParserRuleContext* ctx) const {
    if (!ctx || !ctx->getStart()) return {};
    SourceRange b = range_of(ctx->getStart());
    SourceRange e = range_of(ctx->getStop() ? ctx->getStop() : ctx->getStart());
    if (e.end.offset < b.begin.offset) e = b;
    return {b.begin, e.end};
}

ast::ExprPtr AstBuilder::error_expr(SourceRange r) { return std::make_unique<ast::IntLit>(r, 0); }

// argList : (arg (COMMA arg)*)?
std::vector<ast::Arg> AstBuilder::build_args(P::ArgListContext* ctx) {
    std::vector<ast::Arg> args;
    if (!ctx) return args;
    for (auto* a : ctx->arg()) args.push_back(build_arg(a));
    return args;
}

// arg : (IDENT ASSIGN)? expr
ast::Arg AstBuilder::build_arg(P::ArgContext* ctx) {
    ast::Arg arg;
    if (ctx->argName()) {
        arg.name = ctx->argName()->getText();
        arg.name_range = range_of(ctx->argName());
    }
    arg.value = build_expr(ctx->expr());
    return arg;
}

// exprList : expr (COMMA expr)*
std::vector<ast::ExprPtr> AstBuilder::build_expr_list(P::ExprListContext* ctx) {
    std::vector<ast::ExprPtr> out;
    if (!ctx) return out;
    for (auto* e : ctx->expr()) out.push_back(build_expr(e));
    return out;
}

// expr : ternary
ast::ExprPtr AstBuilder::build_expr(P::ExprContext* ctx) {
    if (!ctx || !ctx->ternary()) return error_expr(range_of(ctx));
    return build_ternary(ctx->ternary());
}

// ternary : logicalOr (QUESTION expr COLON ternary)?
ast::ExprPtr AstBuilder::build_ternary(P::TernaryContext* ctx) {
    ast::ExprPtr cond = build_binary_level(ctx->logicalOr());
    if (!ctx->QUESTION()) return cond;
    ast::ExprPtr then_value = build_expr(ctx->expr());
    ast::ExprPtr else_value = ctx->ternary() ? build_ternary(ctx->ternary()) : error_expr(range_of(ctx));
    return std::make_unique<ast::Ternary>(range_of(ctx), std::move(cond), std::move(then_value), std::move(else_value));
}

namespace {
bool binary_op_of(size_t token_type, ast::BinaryOp& op) {
    switch (token_type) {
    case P::STAR: op = ast::BinaryOp::Mul; return true;
    case P::SLASH: op = ast::BinaryOp::Div; return true;
    case P::PERCENT: op = ast::BinaryOp::Mod; return true;
    case P::PLUS: op = ast::BinaryOp::Add; return true;
    case P::MINUS: op = ast::BinaryOp::Sub; return true;
    case P::SHL: op = ast::BinaryOp::Shl; return true;
    case P::SHR: op = ast::BinaryOp::Shr; return true;
    case P::LT: op = ast::BinaryOp::Lt; return true;
    case P::LE: op = ast::BinaryOp::Le; return true;
    case P::GT: op = ast::BinaryOp::Gt; return true;
    case P::GE: op = ast::BinaryOp::Ge; return true;
    case P::EQ: op = ast::BinaryOp::Eq; return true;
    case P::NE: op = ast::BinaryOp::Ne; return true;
    case P::AMP: op = ast::BinaryOp::BitAnd; return true;
    case P::CARET: op = ast::BinaryOp::BitXor; return true;
    case P::PIPE: op = ast::BinaryOp::BitOr; return true;
    case P::AND_AND: op = ast::BinaryOp::And; return true;
    case P::OR_OR: op = ast::BinaryOp::Or; return true;
    default: return false;
    }
}
} // namespace

// Every binary level (logicalOr ... multiplicative) has the shape `operand (op operand)*`; the
// chain is folded left-associatively. The operand of the tightest level is castExpr.
ast::ExprPtr AstBuilder::build_binary_level(antlr4::ParserRuleContext* ctx) {
    if (!ctx) return error_expr({});
    if (auto* cast = dynamic_cast<P::CastExprContext*>(ctx)) return build_cast(cast);
    ast::ExprPtr acc;
    ast::BinaryOp pending{};
    SourceRange pending_range;
    bool have_op = false;
    for (auto* child : ctx->children) {
        if (auto* rule = dynamic_cast<antlr4::ParserRuleContext*>(child)) {
            ast::ExprPtr operand = build_binary_level(rule);
            if (!acc) {
                acc = std::move(operand);
            } else if (have_op) {
                SourceRange r{acc->range.begin, operand->range.end};
                acc = std::make_unique<ast::Binary>(r, pending, std::move(acc), std::move(operand), pending_range);
                have_op = false;
            }
        } else if (auto* term = dynamic_cast<antlr4::tree::TerminalNode*>(child)) {
            have_op = binary_op_of(term->getSymbol()->getType(), pending);
            pending_range = range_of(term);
        }
    }
    return acc ? std::move(acc) : error_expr(range_of(ctx));
}

// castExpr : unary (AS elemType)*
ast::ExprPtr AstBuilder::build_cast(P::CastExprContext* ctx) {
    ast::ExprPtr e = build_unary(ctx->unary());
    for (auto* t : ctx->elemType()) {
        ast::TypeName target = build_elem_type(t);
        SourceRange r{e->range.begin, target.range.end};
        e = std::make_unique<ast::Cast>(r, std::move(e), std::move(target));
    }
    return e;
}

// unary : op=(MINUS | BANG | TILDE | PLUS) unary | postfix
ast::ExprPtr AstBuilder::build_unary(P::UnaryContext* ctx) {
    if (!ctx) return error_expr({});
    if (ctx->postfix()) return build_postfix(ctx->postfix());
    ast::UnaryOp op = ast::UnaryOp::Neg;
    switch (ctx->op ? ctx->op->getType() : static_cast<size_t>(P::MINUS)) {
    case P::BANG: op = ast::UnaryOp::Not; break;
    case P::TILDE: op = ast::UnaryOp::BitNot; break;
    case P::PLUS: op = ast::UnaryOp::Plus; break;
    default: op = ast::UnaryOp::Neg; break;
    }
    return std::make_unique<ast::Unary>(range_of(ctx), op, build_unary(ctx->unary()));
}

// postfix : primary (LBRACK sliceList RBRACK | DOT IDENT)*
ast::ExprPtr AstBuilder::build_postfix(P::PostfixContext* ctx) {
    ast::ExprPtr e = build_primary(ctx->primary());
    for (size_t i = 1; i < ctx->children.size(); ++i) {
        auto* child = ctx->children[i];
        if (auto* list = dynamic_cast<P::SliceListContext*>(child)) {
            std::vector<ast::Slice> slices;
            for (auto* s : list->slice()) {
                ast::Slice slice;
                slice.range = range_of(s);
                slice.start = build_expr(s->expr(0));
                if (s->PLUS_COLON()) slice.extent = build_expr(s->expr(1));
                slices.push_back(std::move(slice));
            }
            SourceLoc end = e->range.end;
            if (i + 1 < ctx->children.size())
                if (auto* t = dynamic_cast<antlr4::tree::TerminalNode*>(ctx->children[i + 1])) end = range_of(t).end;
            e = std::make_unique<ast::Index>(SourceRange{e->range.begin, end}, std::move(e), std::move(slices));
        } else if (auto* term = dynamic_cast<antlr4::tree::TerminalNode*>(child)) {
            if (term->getSymbol()->getType() != P::IDENT) continue;
            SourceRange mr = range_of(term);
            SourceRange r{e->range.begin, mr.end};
            e = std::make_unique<ast::Member>(r, std::move(e), term->getText(), mr);
        }
    }
    return e;
}

// primary : INT_LIT | FLOAT_LIT | TRUE | FALSE | callee(args) | IDENT | ( expr )
ast::ExprPtr AstBuilder::build_primary(P::PrimaryContext* ctx) {
    SourceRange r = range_of(ctx);
    if (auto* lit = dynamic_cast<P::IntLitContext*>(ctx)) {
        std::string text = lit->getText();
        std::string digits;
        for (char c : text)
            if (c != '_') digits += c;
        uint64_t value = 0;
        bool hex = digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X');
        const char* first = digits.data() + (hex ? 2 : 0);
        auto [ptr, ec] = std::from_chars(first, digits.data() + digits.size(), value, hex ? 16 : 10);
        if (ec != std::errc() || ptr != digits.data() + digits.size()) {
            diags_.report(DiagKind::IntLiteralOverflow, r, text);
            value = 0;
        }
        return std::make_unique<ast::IntLit>(r, value);
    }
    if (auto* lit = dynamic_cast<P::FloatLitContext*>(ctx)) {
        std::string text = lit->getText();
        std::string digits;
        for (char c : text)
            if (c != '_') digits += c;
        char* end = nullptr;
        double value = std::strtod(digits.c_str(), &end);
        if (end != digits.c_str() + digits.size()) diags_.report(DiagKind::InvalidFloatLiteral, r, text);
        return std::make_unique<ast::FloatLit>(r, value, text);
    }
    if (auto* lit = dynamic_cast<P::BoolLitContext*>(ctx)) return std::make_unique<ast::BoolLit>(r, lit->TRUE() != nullptr);
    if (auto* call = dynamic_cast<P::CallExprContext*>(ctx)) {
        return std::make_unique<ast::Call>(r, call->callee->getText(), range_of(call->callee), build_args(call->argList()));
    }
    if (auto* name = dynamic_cast<P::NameExprContext*>(ctx)) return std::make_unique<ast::Name>(r, name->name->getText());
    if (auto* dt = dynamic_cast<P::DtypeExprContext*>(ctx)) return std::make_unique<ast::Name>(r, dt->DTYPE_NAME()->getText());
    if (auto* paren = dynamic_cast<P::ParenExprContext*>(ctx)) return build_expr(paren->expr());
    return error_expr(r);
}

} // namespace tlc::syntax
