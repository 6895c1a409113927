# Generates the ANTLR4 C++ lexer and parser from grammar/ at build time with Debian's antlr4 tool.
find_program(ANTLR4_TOOL NAMES antlr4 REQUIRED)
set(TLC_GRAMMAR_DIR ${PROJECT_SOURCE_DIR}/grammar)
set(TLC_GEN_DIR ${PROJECT_BINARY_DIR}/antlr)
set(TLC_GEN_SOURCES
  ${TLC_GEN_DIR}/TlLexer.cpp ${TLC_GEN_DIR}/TlParser.cpp
  ${TLC_GEN_DIR}/TlLexer.h ${TLC_GEN_DIR}/TlParser.h)
add_custom_command(
  OUTPUT ${TLC_GEN_SOURCES}
  COMMAND ${ANTLR4_TOOL} -Dlanguage=Cpp -no-listener -no-visitor -package tlgen
          -o ${TLC_GEN_DIR} -Xexact-output-dir
          ${TLC_GRAMMAR_DIR}/TlLexer.g4 ${TLC_GRAMMAR_DIR}/TlParser.g4
  DEPENDS ${TLC_GRAMMAR_DIR}/TlLexer.g4 ${TLC_GRAMMAR_DIR}/TlParser.g4
  COMMENT "Generating the tl parser with ANTLR4"
  VERBATIM)
add_custom_target(tlc_grammar DEPENDS ${TLC_GEN_SOURCES})
