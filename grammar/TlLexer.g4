// Lexer of the tlc tile language: every keyword, dtype, scope and operator is declared here once.
lexer grammar TlLexer;

// ---- keywords -------------------------------------------------------------------------------
IMPORT      : 'import';
CONST       : 'const';
KERNEL      : 'kernel';
PROGRAM     : 'program';
WORKSPACE   : 'workspace';
LAUNCH      : 'launch';
FN          : 'fn';
EXTERN      : 'extern';
RETURN      : 'return';
LET         : 'let';
VIEW        : 'view';
MUT         : 'mut';
IF          : 'if';
ELSE        : 'else';
FOR         : 'for';
IN          : 'in';
GRID        : 'grid';
THREADS     : 'threads';
CLUSTER     : 'cluster';
REQUIRES    : 'requires';
WHEN        : 'when';
AS          : 'as';
TRUE        : 'true';
FALSE       : 'false';

// ---- compile-time parameter kinds -----------------------------------------------------------
INT         : 'int';
DTYPE       : 'dtype';
BOOL_KIND   : 'bool';

// ---- memory scopes --------------------------------------------------------------------------
GLOBAL      : 'global';
SHARED      : 'shared';
FRAGMENT    : 'fragment';
LOCAL       : 'local';

// ---- loop kinds -----------------------------------------------------------------------------
PARALLEL    : 'parallel';
SERIAL      : 'serial';
UNROLL      : 'unroll';
PIPELINED   : 'pipelined';

// ---- tile operations ------------------------------------------------------------------------
COPY        : 'copy';
GEMM        : 'gemm';
FILL        : 'fill';
CLEAR       : 'clear';
REDUCE      : 'reduce';
CUMSUM      : 'cumsum';
ATOMIC_ADD  : 'atomic_add';

// ---- dtypes ---------------------------------------------------------------------------------
DTYPE_NAME  : 'f16' | 'bf16' | 'f32' | 'f64' | 'f8e4m3' | 'f8e5m2' | 'i8' | 'u8' | 'i16'
            | 'i32' | 'i64' | 'u32';

// ---- operators and punctuation --------------------------------------------------------------
PLUS_COLON  : '+:';
ARROW       : '->';
PLUS_ASSIGN : '+=';
MINUS_ASSIGN: '-=';
STAR_ASSIGN : '*=';
SLASH_ASSIGN: '/=';
EQ          : '==';
NE          : '!=';
LE          : '<=';
GE          : '>=';
AND_AND     : '&&';
OR_OR       : '||';
SHL         : '<<';
SHR         : '>>';
LT          : '<';
GT          : '>';
ASSIGN      : '=';
PLUS        : '+';
MINUS       : '-';
STAR        : '*';
SLASH       : '/';
PERCENT     : '%';
BANG        : '!';
TILDE       : '~';
AMP         : '&';
PIPE        : '|';
CARET       : '^';
QUESTION    : '?';
COLON       : ':';
SEMI        : ';';
COMMA       : ',';
DOT         : '.';
AT          : '@';
LPAREN      : '(';
RPAREN      : ')';
LBRACK      : '[';
RBRACK      : ']';
LBRACE      : '{';
RBRACE      : '}';

// ---- literals and names ---------------------------------------------------------------------
FLOAT_LIT   : DIGITS '.' DIGITS? EXPONENT? | DIGITS EXPONENT | '.' DIGITS EXPONENT?;
INT_LIT     : DIGITS | '0x' HEX_DIGIT (HEX_DIGIT | '_')*;
STRING_LIT  : '"' (~["\\\r\n] | '\\' .)* '"';
IDENT       : [a-zA-Z_] [a-zA-Z_0-9]*;

fragment DIGITS    : [0-9] [0-9_]*;
fragment EXPONENT  : [eE] [+-]? [0-9]+;
fragment HEX_DIGIT : [0-9a-fA-F];

// ---- trivia ---------------------------------------------------------------------------------
LINE_COMMENT  : '//' ~[\r\n]* -> channel(HIDDEN);
BLOCK_COMMENT : '/*' .*? '*/' -> channel(HIDDEN);
WS            : [ \t\r\n\f]+ -> skip;

// Anything else is a lexical error reported by the error listener, never a crash.
UNKNOWN_CHAR  : .;
