// The typed AST builder: one method per grammar rule, from an ANTLR context to an owned AST node.
#pragma once

#include "syntax/antlr_includes.h"
#include "syntax/ast.h"
#include "support/diagnostics.h"

namespace tlc::syntax {

class AstBuilder {
public:
    AstBuilder(const SourceFile& file, uint32_t file_id, DiagnosticEngine& diags)
        : file_(file), file_id_(file_id), diags_(diags) {}

    // build_decl.cpp
    ast::Module build_module(tlgen::TlParser::ModuleContext* ctx);
    ast::Import build_import(tlgen::TlParser::ImportDeclContext* ctx);
    ast::Const build_const(tlgen::TlParser::ConstDeclContext* ctx);
    ast::Fn build_fn(tlgen::TlParser::FnDeclContext* ctx);
    ast::Kernel build_kernel(tlgen::TlParser::KernelDeclContext* ctx);
    ast::Program build_program(tlgen::TlParser::ProgramDeclContext* ctx);
    // The signature and launch clauses that kernels and programs share.
    template <class Ctx> void build_signature(Ctx* ctx, ast::Kernel& k);
    ast::CompileParam build_compile_param(tlgen::TlParser::CompileParamContext* ctx);
    ast::RuntimeParam build_runtime_param(tlgen::TlParser::RuntimeParamContext* ctx);
    ast::Attribute build_attribute(tlgen::TlParser::AttributeContext* ctx);
    ast::TypeRef build_type_ref(tlgen::TlParser::TypeRefContext* ctx);
    ast::TypeName build_elem_type(tlgen::TlParser::ElemTypeContext* ctx);

    // build_stmt.cpp
    std::unique_ptr<ast::Block> build_block(tlgen::TlParser::BlockContext* ctx);
    ast::StmtPtr build_stmt(tlgen::TlParser::StmtContext* ctx);
    ast::StmtPtr build_alloc(tlgen::TlParser::AllocStmtContext* ctx);
    ast::StmtPtr build_view(tlgen::TlParser::ViewStmtContext* ctx);
    ast::StmtPtr build_let(tlgen::TlParser::LetStmtContext* ctx);
    ast::StmtPtr build_assign(tlgen::TlParser::AssignStmtContext* ctx);
    ast::StmtPtr build_if(tlgen::TlParser::IfStmtContext* ctx);
    ast::StmtPtr build_for(tlgen::TlParser::ForStmtContext* ctx);
    ast::StmtPtr build_tile_op(tlgen::TlParser::TileOpStmtContext* ctx);
    ast::StmtPtr build_return(tlgen::TlParser::ReturnStmtContext* ctx);
    ast::StmtPtr build_expr_stmt(tlgen::TlParser::ExprStmtContext* ctx);
    ast::StmtPtr build_workspace(tlgen::TlParser::WorkspaceStmtContext* ctx);
    ast::StmtPtr build_launch(tlgen::TlParser::LaunchStmtContext* ctx);
    ast::StmtPtr build_program_stmt(tlgen::TlParser::ProgramStmtContext* ctx);
    ast::StmtPtr build_program_if(tlgen::TlParser::ProgramIfContext* ctx);
    std::unique_ptr<ast::Block> build_program_block(tlgen::TlParser::ProgramBlockContext* ctx);

    // build_expr.cpp
    std::vector<ast::Arg> build_args(tlgen::TlParser::ArgListContext* ctx);
    ast::Arg build_arg(tlgen::TlParser::ArgContext* ctx);
    std::vector<ast::ExprPtr> build_expr_list(tlgen::TlParser::ExprListContext* ctx);
    ast::ExprPtr build_expr(tlgen::TlParser::ExprContext* ctx);
    ast::ExprPtr build_ternary(tlgen::TlParser::TernaryContext* ctx);
    ast::ExprPtr build_cast(tlgen::TlParser::CastExprContext* ctx);
    ast::ExprPtr build_unary(tlgen::TlParser::UnaryContext* ctx);
    ast::ExprPtr build_postfix(tlgen::TlParser::PostfixContext* ctx);
    ast::ExprPtr build_primary(tlgen::TlParser::PrimaryContext* ctx);

    // Any binary precedence level (logicalOr ... multiplicative), folded left-associatively.
    ast::ExprPtr build_binary_level(antlr4::ParserRuleContext* ctx);

    SourceRange range_of(antlr4::ParserRuleContext* ctx) const;
    SourceRange range_of(antlr4::tree::TerminalNode* node) const;
    SourceRange range_of(antlr4::Token* tok) const;

private:
    ast::ExprPtr error_expr(SourceRange r);

    const SourceFile& file_;
    uint32_t file_id_;
    DiagnosticEngine& diags_;
};

} // namespace tlc::syntax
