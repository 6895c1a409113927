// AST builder, statement rules: blocks, allocations, let, assignments, if, loops and tile operations.
#include "syntax/builder.h"

namespace tlc::syntax {

using P = tlgen::TlParser;

// block : LBRACE stmt* RBRACE
std::unique_ptr<ast::Block> AstBuilder::build_block(P::BlockContext* ctx) {
    auto block = std::make_unique<ast::Block>(range_of(ctx));
    if (!ctx) return block;
    for (auto* s : ctx->stmt())
        if (ast::StmtPtr stmt = build_stmt(s)) block->stmts.push_back(std::move(stmt));
    return block;
}

// stmt : allocStmt | viewStmt | letStmt | ifStmt | forStmt | tileOpStmt | returnStmt | block | assignStmt | exprStmt
ast::StmtPtr AstBuilder::build_stmt(P::StmtContext* ctx) {
    if (auto* s = ctx->allocStmt()) return build_alloc(s);
    if (auto* s = ctx->viewStmt()) return build_view(s);
    if (auto* s = ctx->letStmt()) return build_let(s);
    if (auto* s = ctx->ifStmt()) return build_if(s);
    if (auto* s = ctx->forStmt()) return build_for(s);
    if (auto* s = ctx->tileOpStmt()) return build_tile_op(s);
    if (auto* s = ctx->returnStmt()) return build_return(s);
    if (auto* s = ctx->block()) return build_block(s);
    if (auto* s = ctx->assignStmt()) return build_assign(s);
    if (auto* s = ctx->exprStmt()) return build_expr_stmt(s);
    return nullptr;
}

// allocStmt : scope=(SHARED | FRAGMENT | LOCAL) IDENT COLON typeRef (ASSIGN expr)? SEMI
ast::StmtPtr AstBuilder::build_alloc(P::AllocStmtContext* ctx) {
    auto a = std::make_unique<ast::Alloc>(range_of(ctx));
    switch (ctx->scope->getType()) {
    case P::SHARED: a->scope = ast::Scope::Shared; break;
    case P::FRAGMENT: a->scope = ast::Scope::Fragment; break;
    default: a->scope = ast::Scope::Local; break;
    }
    a->name = ctx->IDENT()->getText();
    a->name_range = range_of(ctx->IDENT());
    a->type = build_type_ref(ctx->typeRef());
    if (ctx->expr()) a->init = build_expr(ctx->expr());
    return a;
}

// viewStmt : VIEW IDENT COLON typeRef ASSIGN IDENT SEMI
ast::StmtPtr AstBuilder::build_view(P::ViewStmtContext* ctx) {
    auto v = std::make_unique<ast::View>(range_of(ctx));
    v->name = ctx->IDENT(0)->getText();
    v->name_range = range_of(ctx->IDENT(0));
    v->type = build_type_ref(ctx->typeRef());
    v->tensor = ctx->IDENT(1)->getText();
    v->tensor_range = range_of(ctx->IDENT(1));
    return v;
}

// letStmt : LET IDENT (COLON typeRef)? ASSIGN expr SEMI
ast::StmtPtr AstBuilder::build_let(P::LetStmtContext* ctx) {
    auto l = std::make_unique<ast::Let>(range_of(ctx));
    l->name = ctx->IDENT()->getText();
    l->name_range = range_of(ctx->IDENT());
    if (ctx->typeRef()) l->type = build_type_ref(ctx->typeRef());
    l->value = build_expr(ctx->expr());
    return l;
}

// assignStmt : lvalue op=(ASSIGN | PLUS_ASSIGN | ...) expr SEMI ; lvalue : IDENT (LBRACK exprList RBRACK)?
ast::StmtPtr AstBuilder::build_assign(P::AssignStmtContext* ctx) {
    auto a = std::make_unique<ast::Assign>(range_of(ctx));
    switch (ctx->op->getType()) {
    case P::PLUS_ASSIGN: a->op = ast::AssignOp::Add; break;
    case P::MINUS_ASSIGN: a->op = ast::AssignOp::Sub; break;
    case P::STAR_ASSIGN: a->op = ast::AssignOp::Mul; break;
    case P::SLASH_ASSIGN: a->op = ast::AssignOp::Div; break;
    default: a->op = ast::AssignOp::Set; break;
    }
    a->target = ctx->lvalue()->IDENT()->getText();
    a->target_range = range_of(ctx->lvalue());
    a->indices = build_expr_list(ctx->lvalue()->exprList());
    a->value = build_expr(ctx->expr());
    return a;
}

// ifStmt : IF expr block (ELSE (ifStmt | block))?
ast::StmtPtr AstBuilder::build_if(P::IfStmtContext* ctx) {
    auto s = std::make_unique<ast::If>(range_of(ctx));
    s->cond = build_expr(ctx->expr());
    s->then_body = build_block(ctx->block(0));
    if (ctx->ifStmt()) s->else_body = build_if(ctx->ifStmt());
    else if (ctx->block().size() > 1) s->else_body = build_block(ctx->block(1));
    return s;
}

// forStmt : attribute* FOR IDENT (COMMA IDENT)* IN kind=(PARALLEL | ...) LPAREN argList RPAREN block
ast::StmtPtr AstBuilder::build_for(P::ForStmtContext* ctx) {
    auto f = std::make_unique<ast::For>(range_of(ctx));
    for (auto* a : ctx->attribute()) f->attrs.push_back(build_attribute(a));
    for (auto* id : ctx->IDENT()) {
        f->vars.push_back(id->getText());
        f->var_ranges.push_back(range_of(id));
    }
    switch (ctx->kind->getType()) {
    case P::PARALLEL: f->loop_kind = ast::LoopKind::Parallel; break;
    case P::UNROLL: f->loop_kind = ast::LoopKind::Unroll; break;
    case P::PIPELINED: f->loop_kind = ast::LoopKind::Pipelined; break;
    default: f->loop_kind = ast::LoopKind::Serial; break;
    }
    f->args = build_args(ctx->argList());
    f->body = build_block(ctx->block());
    return f;
}

// tileOpStmt : op=(COPY | GEMM | FILL | CLEAR | REDUCE | CUMSUM | ATOMIC_ADD) LPAREN argList RPAREN SEMI
ast::StmtPtr AstBuilder::build_tile_op(P::TileOpStmtContext* ctx) {
    auto t = std::make_unique<ast::TileOp>(range_of(ctx));
    switch (ctx->op->getType()) {
    case P::GEMM: t->op = ast::TileOpKind::Gemm; break;
    case P::FILL: t->op = ast::TileOpKind::Fill; break;
    case P::CLEAR: t->op = ast::TileOpKind::Clear; break;
    case P::REDUCE: t->op = ast::TileOpKind::Reduce; break;
    case P::CUMSUM: t->op = ast::TileOpKind::Cumsum; break;
    case P::ATOMIC_ADD: t->op = ast::TileOpKind::AtomicAdd; break;
    default: t->op = ast::TileOpKind::Copy; break;
    }
    t->op_range = range_of(ctx->op);
    t->args = build_args(ctx->argList());
    return t;
}

// returnStmt : RETURN expr SEMI
ast::StmtPtr AstBuilder::build_return(P::ReturnStmtContext* ctx) {
    auto r = std::make_unique<ast::Return>(range_of(ctx));
    r->value = build_expr(ctx->expr());
    return r;
}

// exprStmt : expr SEMI
ast::StmtPtr AstBuilder::build_expr_stmt(P::ExprStmtContext* ctx) {
    auto s = std::make_unique<ast::ExprStmt>(range_of(ctx));
    s->expr = build_expr(ctx->expr());
    return s;
}

// workspaceStmt : WORKSPACE IDENT COLON typeRef SEMI
ast::StmtPtr AstBuilder::build_workspace(P::WorkspaceStmtContext* ctx) {
    auto w = std::make_unique<ast::Workspace>(range_of(ctx));
    w->name = ctx->IDENT()->getText();
    w->name_range = range_of(ctx->IDENT());
    w->type = build_type_ref(ctx->typeRef());
    return w;
}

// launchStmt : LAUNCH declName (LT launchParam,* GT)? LPAREN argList RPAREN SEMI ; launchParam : IDENT ASSIGN shift
ast::StmtPtr AstBuilder::build_launch(P::LaunchStmtContext* ctx) {
    auto l = std::make_unique<ast::Launch>(range_of(ctx));
    l->kernel = ctx->declName()->getText();
    l->kernel_range = range_of(ctx->declName());
    for (auto* p : ctx->launchParam()) {
        ast::Arg a;
        a.name = p->IDENT()->getText();
        a.name_range = range_of(p->IDENT());
        a.value = build_binary_level(p->shift());
        l->compile_args.push_back(std::move(a));
    }
    l->args = build_args(ctx->argList());
    return l;
}

} // namespace tlc::syntax
