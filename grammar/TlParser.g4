// Parser of the tlc tile language; src/syntax/ turns its parse tree into our own AST.
parser grammar TlParser;

options { tokenVocab = TlLexer; }

// ---- module ---------------------------------------------------------------------------------
module      : item* EOF;
item        : importDecl | constDecl | fnDecl | kernelDecl | programDecl;
importDecl  : IMPORT STRING_LIT SEMI;
constDecl   : CONST IDENT (COLON typeRef)? ASSIGN expr SEMI;

// fn gelu(x: f32) -> f32 { return x * sigmoid(1.702 * x); }
// extern fn rotl(x: u32, n: u32) -> u32 = "__funnelshift_l";   (a CUDA device function; optional
// `pair "name2"`, its form for two elements at once, and `in "header.cuh"`, and an optional body:
// the reference `tlc run` executes)
// fn lerp<T: dtype>(a: T, b: T, t: T) -> T { ... }   (dtype parameters, deduced at each call)
fnDecl      : EXTERN? FN declName (LT compileParam (COMMA compileParam)* COMMA? GT)? LPAREN (fnParam (COMMA fnParam)*)? RPAREN ARROW typeRef
              (ASSIGN cudaName=STRING_LIT (pairWord=IDENT pairName=STRING_LIT)? (IN header=STRING_LIT)?)? (block | SEMI);
fnParam     : IDENT COLON typeRef;
// Kernels and functions may take the name of a tile operation (`kernel gemm`).
declName    : IDENT | COPY | GEMM | FILL | CLEAR | REDUCE | CUMSUM | ATOMIC_ADD;

// @no_tma kernel gemm<BM = 128, T: dtype = f16>(A: global T[M, K], ...) grid(...) threads(256) { ... }
kernelDecl  : attribute* KERNEL declName (LT (compileParam (COMMA compileParam)*)? COMMA? GT)?
              LPAREN (runtimeParam (COMMA runtimeParam)*)? COMMA? RPAREN
              launchClause* block;
// program decode<D = 128>(Q: global f16[B, H, D], ...) requires(...) {
//     let splits = cdiv(S, 512);
//     workspace Part: f32[B, splits, H, D];
//     launch decode_split<D = D>(Q, K, V, Part, sm_scale);
//     launch decode_combine<D = D>(Part, O);
// }
// Several kernels behind one launch function: host values, scratch tensors, launches in order.
programDecl : PROGRAM declName (LT (compileParam (COMMA compileParam)*)? COMMA? GT)?
              LPAREN (runtimeParam (COMMA runtimeParam)*)? COMMA? RPAREN
              launchClause* LBRACE programStmt* RBRACE;
programStmt : letStmt | workspaceStmt | launchStmt | programIf;
// Launches taken when a host condition holds: `if tiles < sm_count { launch ...; } else { ... }`.
programIf   : IF expr programBlock (ELSE (programIf | programBlock))?;
programBlock: LBRACE programStmt* RBRACE;
workspaceStmt : WORKSPACE IDENT COLON typeRef SEMI;
// Compile-time arguments are named; a value stops above the relational level, as a default does.
launchStmt  : LAUNCH declName (LT (launchParam (COMMA launchParam)*)? COMMA? GT)?
              LPAREN argList RPAREN SEMI;
launchParam : IDENT ASSIGN shift;
// The default stops above the relational level so that the closing `>` ends the list.
// `W: int in [128, 1024, 8192]` lists candidate values: one variant is compiled per value.
compileParam: IDENT (COLON paramKind)? (IN LBRACK expr (COMMA expr)* COMMA? RBRACK)? (ASSIGN shift)?;
paramKind   : INT | DTYPE | BOOL_KIND;
runtimeParam: IDENT COLON GLOBAL MUT? typeRef        # tensorParam
            | IDENT COLON typeRef                    # scalarParam
            ;
launchClause: GRID LPAREN exprList RPAREN            # gridClause
            | THREADS LPAREN expr RPAREN             # threadsClause
            | CLUSTER LPAREN exprList RPAREN         # clusterClause
            | REQUIRES LPAREN exprList RPAREN        # requiresClause
            | WHEN LPAREN expr RPAREN                # whenClause
            ;
attribute   : AT IDENT (LPAREN (attrArg (COMMA attrArg)*)? RPAREN)?;
attrArg     : (argName ASSIGN)? expr;

// A dtype (or a dtype-valued name) with an optional shape.
typeRef     : elemType (LBRACK exprList RBRACK)?;
elemType    : DTYPE_NAME | BOOL_KIND | IDENT;

// ---- statements -----------------------------------------------------------------------------
block       : LBRACE stmt* RBRACE;
stmt        : allocStmt
            | viewStmt
            | letStmt
            | ifStmt
            | forStmt
            | tileOpStmt
            | returnStmt
            | block
            | assignStmt
            | exprStmt
            ;
allocStmt   : scope=(SHARED | FRAGMENT | LOCAL) IDENT COLON typeRef (ASSIGN expr)? SEMI;
// `view Xh: f16[T, C / 64, 64] = X;` sees a global tensor with another shape (same elements).
viewStmt    : VIEW IDENT COLON typeRef ASSIGN IDENT SEMI;
letStmt     : LET IDENT (COLON typeRef)? ASSIGN expr SEMI;
assignStmt  : lvalue op=(ASSIGN | PLUS_ASSIGN | MINUS_ASSIGN | STAR_ASSIGN | SLASH_ASSIGN) expr SEMI;
lvalue      : IDENT (LBRACK exprList RBRACK)?;
ifStmt      : IF expr block (ELSE (ifStmt | block))?;
forStmt     : attribute* FOR IDENT (COMMA IDENT)* IN
              kind=(PARALLEL | SERIAL | UNROLL | PIPELINED) LPAREN argList RPAREN block;
tileOpStmt  : op=(COPY | GEMM | FILL | CLEAR | REDUCE | CUMSUM | ATOMIC_ADD) LPAREN argList RPAREN SEMI;
returnStmt  : RETURN expr SEMI;
exprStmt    : expr SEMI;

argList     : (arg (COMMA arg)*)?;
arg         : (argName ASSIGN)? expr;
// `clear` is also a tile operation, and a named option of gemm and reduce.
argName     : IDENT | CLEAR;

// ---- expressions (C precedence, lowest first) -----------------------------------------------
exprList    : expr (COMMA expr)*;
expr        : ternary;
ternary     : logicalOr (QUESTION expr COLON ternary)?;
logicalOr   : logicalAnd (OR_OR logicalAnd)*;
logicalAnd  : bitOr (AND_AND bitOr)*;
bitOr       : bitXor (PIPE bitXor)*;
bitXor      : bitAnd (CARET bitAnd)*;
bitAnd      : equality (AMP equality)*;
equality    : relational (op+=(EQ | NE) relational)*;
relational  : shift (op+=(LT | LE | GT | GE) shift)*;
shift       : additive (op+=(SHL | SHR) additive)*;
additive    : multiplicative (op+=(PLUS | MINUS) multiplicative)*;
multiplicative : castExpr (op+=(STAR | SLASH | PERCENT) castExpr)*;
castExpr    : unary (AS elemType)*;
unary       : op=(MINUS | BANG | TILDE | PLUS) unary
            | postfix
            ;
postfix     : primary (LBRACK sliceList RBRACK | DOT IDENT)*;
sliceList   : slice (COMMA slice)*;
slice       : expr (PLUS_COLON expr)?;
primary     : INT_LIT                                     # intLit
            | FLOAT_LIT                                   # floatLit
            | (TRUE | FALSE)                              # boolLit
            | callee=(IDENT | DTYPE_NAME) LPAREN argList RPAREN   # callExpr
            | name=(IDENT | GRID)                         # nameExpr
            | DTYPE_NAME                                  # dtypeExpr
            | LPAREN expr RPAREN                          # parenExpr
            ;
