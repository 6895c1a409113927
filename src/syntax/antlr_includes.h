// The only place that includes ANTLR and the generated parser, with their warnings silenced.
#pragma once

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wall"
#pragma GCC diagnostic ignored "-Wextra"
#pragma GCC diagnostic ignored "-Wattributes"
#pragma GCC diagnostic ignored "-Woverloaded-virtual"
#endif
#include <antlr4-runtime.h>
#include "TlLexer.h"
#include "TlParser.h"
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
