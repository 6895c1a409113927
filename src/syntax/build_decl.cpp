// AST builder, declaration rules: the module, imports, constants, functions and kernels.
#include "syntax/builder.h"

namespace tlc::syntax {

using P = tlgen::TlParser;

// module : item* EOF ; item : importDecl | constDecl | fnDecl | kernelDecl | programDecl
ast::Module AstBuilder::build_module(P::ModuleContext* ctx) {
    ast::Module m;
    m.file = file_id_;
    for (auto* item : ctx->item()) {
        if (auto* d = item->importDecl()) m.imports.push_back(build_import(d));
        else if (auto* d = item->constDecl()) m.consts.push_back(build_const(d));
        else if (auto* d = item->fnDecl()) m.fns.push_back(build_fn(d));
        else if (auto* d = item->kernelDecl()) m.kernels.push_back(build_kernel(d));
        else if (auto* d = item->programDecl()) m.programs.push_back(build_program(d));
    }
    return m;
}

namespace {
// The value of a string literal token: the text between the quotes, escapes resolved.
std::string string_value(antlr4::Token* token) {
    std::string text = token->getText(), value;
    for (size_t i = 1; i + 1 < text.size(); ++i) {
        if (text[i] == '\\' && i + 2 < text.size()) ++i;
        value += text[i];
    }
    return value;
}
} // namespace

// importDecl : IMPORT STRING_LIT SEMI
ast::Import AstBuilder::build_import(P::ImportDeclContext* ctx) {
    return ast::Import{string_value(ctx->STRING_LIT()->getSymbol()), range_of(ctx->STRING_LIT())};
}

// constDecl : CONST IDENT (COLON typeRef)? ASSIGN expr SEMI
ast::Const AstBuilder::build_const(P::ConstDeclContext* ctx) {
    ast::Const c;
    c.name = ctx->IDENT()->getText();
    c.name_range = range_of(ctx->IDENT());
    if (ctx->typeRef()) c.type = build_type_ref(ctx->typeRef());
    c.value = build_expr(ctx->expr());
    c.range = range_of(ctx);
    return c;
}

// fnDecl : EXTERN? FN declName (LT compileParam,* GT)? LPAREN (fnParam (COMMA fnParam)*)? RPAREN ARROW typeRef
//          (ASSIGN STRING_LIT (IDENT STRING_LIT)? (IN STRING_LIT)?)? (block | SEMI)
ast::Fn AstBuilder::build_fn(P::FnDeclContext* ctx) {
    ast::Fn f;
    f.name = ctx->declName()->getText();
    f.name_range = range_of(ctx->declName());
    for (auto* p : ctx->compileParam()) f.type_params.push_back(build_compile_param(p));
    for (auto* p : ctx->fnParam())
        f.params.push_back(ast::FnParam{p->IDENT()->getText(), range_of(p->IDENT()), build_type_ref(p->typeRef())});
    f.result = build_type_ref(ctx->typeRef());
    if (ctx->block()) f.body = build_block(ctx->block());
    f.range = range_of(ctx);
    if (ctx->EXTERN()) {
        f.is_extern = true;
        f.extern_range = range_of(ctx->EXTERN());
    }
    if (ctx->cudaName) {
        f.cuda_name = string_value(ctx->cudaName);
        f.cuda_name_range = range_of(ctx->cudaName);
    }
    if (ctx->pairName) {
        f.pair_word = ctx->pairWord->getText();
        f.pair_word_range = range_of(ctx->pairWord);
        f.pair_name = string_value(ctx->pairName);
        f.pair_name_range = range_of(ctx->pairName);
    }
    if (ctx->header) {
        f.header = string_value(ctx->header);
        f.header_range = range_of(ctx->header);
    }
    return f;
}

// kernelDecl : attribute* KERNEL IDENT (LT compileParam,* GT)? LPAREN runtimeParam,* RPAREN launchClause* block
ast::Kernel AstBuilder::build_kernel(P::KernelDeclContext* ctx) {
    ast::Kernel k;
    for (auto* a : ctx->attribute()) k.attrs.push_back(build_attribute(a));
    build_signature(ctx, k);
    k.body = build_block(ctx->block());
    return k;
}

// programDecl : PROGRAM declName (LT compileParam,* GT)? LPAREN runtimeParam,* RPAREN launchClause*
//               LBRACE programStmt* RBRACE
ast::Program AstBuilder::build_program(P::ProgramDeclContext* ctx) {
    ast::Program p;
    build_signature(ctx, p.header);
    for (auto* s : ctx->programStmt())
        if (ast::StmtPtr stmt = build_program_stmt(s)) p.body.push_back(std::move(stmt));
    return p;
}

// programStmt : letStmt | workspaceStmt | launchStmt | programIf
ast::StmtPtr AstBuilder::build_program_stmt(P::ProgramStmtContext* ctx) {
    if (auto* l = ctx->letStmt()) return build_let(l);
    if (auto* w = ctx->workspaceStmt()) return build_workspace(w);
    if (auto* l = ctx->launchStmt()) return build_launch(l);
    if (auto* i = ctx->programIf()) return build_program_if(i);
    return nullptr; // after a syntax error
}

// programIf : IF expr programBlock (ELSE (programIf | programBlock))?
ast::StmtPtr AstBuilder::build_program_if(P::ProgramIfContext* ctx) {
    auto s = std::make_unique<ast::If>(range_of(ctx));
    s->cond = build_expr(ctx->expr());
    s->then_body = build_program_block(ctx->programBlock(0));
    if (ctx->programIf()) s->else_body = build_program_if(ctx->programIf());
    else if (ctx->programBlock().size() > 1) s->else_body = build_program_block(ctx->programBlock(1));
    return s;
}

// programBlock : LBRACE programStmt* RBRACE
std::unique_ptr<ast::Block> AstBuilder::build_program_block(P::ProgramBlockContext* ctx) {
    auto b = std::make_unique<ast::Block>(range_of(ctx));
    for (auto* s : ctx->programStmt())
        if (ast::StmtPtr stmt = build_program_stmt(s)) b->stmts.push_back(std::move(stmt));
    return b;
}

template <class Ctx> void AstBuilder::build_signature(Ctx* ctx, ast::Kernel& k) {
    k.name = ctx->declName()->getText();
    k.name_range = range_of(ctx->declName());
    for (auto* p : ctx->compileParam()) k.compile_params.push_back(build_compile_param(p));
    for (auto* p : ctx->runtimeParam()) k.params.push_back(build_runtime_param(p));
    for (auto* clause : ctx->launchClause()) {
        SourceRange r = range_of(clause);
        if (auto* g = dynamic_cast<P::GridClauseContext*>(clause)) {
            if (k.grid_range.valid()) diags_.report(DiagKind::DuplicateLaunch, r, "grid");
            k.grid = build_expr_list(g->exprList());
            k.grid_range = r;
        } else if (auto* t = dynamic_cast<P::ThreadsClauseContext*>(clause)) {
            if (k.threads) diags_.report(DiagKind::DuplicateLaunch, r, "threads");
            k.threads = build_expr(t->expr());
            k.threads_range = r;
        } else if (auto* c = dynamic_cast<P::ClusterClauseContext*>(clause)) {
            if (k.cluster_range.valid()) diags_.report(DiagKind::DuplicateLaunch, r, "cluster");
            k.cluster = build_expr_list(c->exprList());
            k.cluster_range = r;
        } else if (auto* q = dynamic_cast<P::RequiresClauseContext*>(clause)) {
            for (ast::ExprPtr& e : build_expr_list(q->exprList())) k.requires_.push_back(std::move(e));
        } else if (auto* w = dynamic_cast<P::WhenClauseContext*>(clause)) {
            if (k.when) diags_.report(DiagKind::DuplicateLaunch, r, "when");
            k.when = build_expr(w->expr());
            k.when_range = r;
        }
    }
    k.range = range_of(ctx);
}

// compileParam : IDENT (COLON paramKind)? (IN LBRACK expr,* RBRACK)? (ASSIGN expr)?
ast::CompileParam AstBuilder::build_compile_param(P::CompileParamContext* ctx) {
    ast::CompileParam p;
    p.name = ctx->IDENT()->getText();
    p.name_range = range_of(ctx->IDENT());
    p.kind = ast::ParamKind::Inferred;
    if (auto* k = ctx->paramKind()) {
        if (k->INT()) p.kind = ast::ParamKind::Int;
        else if (k->DTYPE()) p.kind = ast::ParamKind::Dtype;
        else p.kind = ast::ParamKind::Bool;
    }
    if (ctx->shift()) p.default_value = build_binary_level(ctx->shift());
    for (auto* e : ctx->expr()) p.candidates.push_back(build_expr(e));
    if (ctx->LBRACK()) p.candidates_range = SourceRange{range_of(ctx->LBRACK()).begin, range_of(ctx->RBRACK()).end};
    p.range = range_of(ctx);
    return p;
}

// runtimeParam : IDENT COLON GLOBAL MUT? typeRef | IDENT COLON typeRef
ast::RuntimeParam AstBuilder::build_runtime_param(P::RuntimeParamContext* ctx) {
    ast::RuntimeParam p;
    p.range = range_of(ctx);
    if (auto* t = dynamic_cast<P::TensorParamContext*>(ctx)) {
        p.name = t->IDENT()->getText();
        p.name_range = range_of(t->IDENT());
        p.is_tensor = true;
        p.is_mutable = t->MUT() != nullptr;
        p.type = build_type_ref(t->typeRef());
    } else if (auto* s = dynamic_cast<P::ScalarParamContext*>(ctx)) {
        p.name = s->IDENT()->getText();
        p.name_range = range_of(s->IDENT());
        p.type = build_type_ref(s->typeRef());
    }
    return p;
}

// attribute : AT IDENT (LPAREN (attrArg (COMMA attrArg)*)? RPAREN)? ; attrArg : (IDENT ASSIGN)? expr
ast::Attribute AstBuilder::build_attribute(P::AttributeContext* ctx) {
    ast::Attribute a;
    a.name = ctx->IDENT()->getText();
    a.range = range_of(ctx);
    for (auto* arg : ctx->attrArg()) {
        ast::Arg x;
        if (arg->argName()) {
            x.name = arg->argName()->getText();
            x.name_range = range_of(arg->argName());
        }
        x.value = build_expr(arg->expr());
        a.args.push_back(std::move(x));
    }
    return a;
}

// typeRef : elemType (LBRACK exprList RBRACK)?
ast::TypeRef AstBuilder::build_type_ref(P::TypeRefContext* ctx) {
    ast::TypeRef t;
    t.elem = build_elem_type(ctx->elemType());
    t.shape = build_expr_list(ctx->exprList());
    t.range = range_of(ctx);
    return t;
}

// elemType : DTYPE_NAME | BOOL_KIND | IDENT
ast::TypeName AstBuilder::build_elem_type(P::ElemTypeContext* ctx) {
    return ast::TypeName{ctx->getText(), range_of(ctx)};
}

} // namespace tlc::syntax
