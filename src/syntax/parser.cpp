// Drives ANTLR: checks the raw bytes, lexes, bounds nesting, parses (SLL first, then LL with
// recovery) and reports every problem as a tlc diagnostic instead of ANTLR's raw text.
#include "syntax/parser.h"

#include "syntax/builder.h"
#include "support/edit_distance.h"

#include <cctype>
#include <unordered_map>

namespace tlc::syntax {

using P = tlgen::TlParser;

namespace {

constexpr char kNonAsciiMarker = 0x7f;

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid.
size_t utf8_sequence_length(const std::string& s, size_t i) {
    unsigned char c = s[i];
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (n == 0 || i + n > s.size()) return 0;
    for (size_t k = 1; k < n; ++k)
        if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 0;
    if (n == 2 && c < 0xc2) return 0; // overlong
    return n;
}

// Reports invalid UTF-8 and NUL bytes; returns a copy with each offending byte replaced by a
// space, so that the lexer sees plain text and the columns stay put.
std::string sanitize(const SourceFile& file, uint32_t file_id, DiagnosticEngine& diags) {
    std::string text = file.text();
    for (size_t i = 0; i < text.size();) {
        unsigned char c = text[i];
        if (c == 0) {
            SourceLoc at = file.loc_at(file_id, i);
            diags.report(DiagKind::NulByte, SourceRange{at, at});
            text[i++] = ' ';
            continue;
        }
        size_t n = utf8_sequence_length(text, i);
        if (n == 0) {
            SourceLoc at = file.loc_at(file_id, i);
            diags.report(DiagKind::InvalidUtf8, SourceRange{at, at}, c);
            text[i++] = ' ';
            continue;
        }
        // ANTLR counts code points while diagnostics count bytes: map each byte of a multi-byte
        // character to DEL so both agree. Non-ASCII is only legal inside comments and strings.
        if (n > 1)
            for (size_t k = 0; k < n; ++k) text[i + k] = kNonAsciiMarker;
        i += n;
    }
    return text;
}

std::string token_display(antlr4::Token* tok) {
    if (!tok || tok->getType() == antlr4::Token::EOF) return "end of file";
    std::string t = tok->getText();
    if (t.size() > 40) t = t.substr(0, 37) + "...";
    return "`" + t + "`";
}

// The spelling of a token type for "expected ..." messages: `;` for literals, a word otherwise.
std::string token_type_display(const antlr4::dfa::Vocabulary& vocab, ssize_t type) {
    if (type == static_cast<ssize_t>(antlr4::Token::EOF)) return "end of file";
    std::string lit = vocab.getLiteralName(type);
    if (!lit.empty()) return fmt::format("`{}`", lit.substr(1, lit.size() - 2));
    switch (type) {
    case P::IDENT: return "identifier";
    case P::INT_LIT: return "integer";
    case P::FLOAT_LIT: return "number";
    case P::STRING_LIT: return "string";
    case P::DTYPE_NAME: return "dtype";
    default: return vocab.getDisplayName(type);
    }
}

std::string expected_list(antlr4::Parser* parser, const antlr4::misc::IntervalSet& set) {
    const auto& vocab = parser->getVocabulary();
    std::vector<ssize_t> types = set.toList();
    if (types.size() > 6) return "";
    std::string out;
    for (size_t i = 0; i < types.size(); ++i) {
        if (i) out += i + 1 == types.size() ? " or " : ", ";
        out += token_type_display(vocab, types[i]);
    }
    return out;
}

// What the parser was in the middle of, for messages such as "expected `;` after statement".
std::string context_suffix(antlr4::ParserRuleContext* ctx) {
    for (auto* c = ctx; c; c = dynamic_cast<antlr4::ParserRuleContext*>(c->parent)) {
        switch (c->getRuleIndex()) {
        case P::RuleAllocStmt:
        case P::RuleViewStmt:
        case P::RuleLetStmt:
        case P::RuleAssignStmt:
        case P::RuleTileOpStmt:
        case P::RuleReturnStmt:
        case P::RuleExprStmt: return " after statement";
        case P::RuleConstDecl:
        case P::RuleImportDecl: return " after declaration";
        case P::RuleKernelDecl: return " in kernel declaration";
        case P::RuleFnDecl: return " in function declaration";
        default: break;
        }
    }
    return "";
}

// Error strategy that phrases ANTLR's recovery events as clang-style diagnostics.
class DiagnosticErrorStrategy : public antlr4::DefaultErrorStrategy {
public:
    DiagnosticErrorStrategy(AstBuilder& ranges, DiagnosticEngine& diags) : ranges_(ranges), diags_(diags) {}

protected:
    void emit(antlr4::Token* at, const std::string& message, bool after_previous, antlr4::Parser* parser) {
        SourceRange r = ranges_.range_of(at);
        if (after_previous) {
            // Point just past the previous token, as clang does for a missing `;`.
            antlr4::Token* prev = parser->getTokenStream()->LT(-1);
            if (prev) {
                SourceRange pr = ranges_.range_of(prev);
                r = SourceRange{pr.end, pr.end};
            }
        }
        if (!r.valid()) r = last_valid_;
        // A second error on the line of the previous one is most often the recovery's echo of it
        // (`for i in paralel(256) {` also lacks the `;` of the statement the parser then saw).
        if (reported_any_ && r.begin.file == last_valid_.begin.file && r.begin.line == last_valid_.begin.line) return;
        reported_any_ = true;
        last_valid_ = r;
        antlr4::Token* before = parser->getTokenStream()->LT(-1);
        if (at && at->getType() == P::SEMI && before && before->getType() == P::RETURN) {
            diags_.report(DiagKind::SyntaxError, r,
                          "`return` needs a value: only a `fn` returns, with `return <expression>;` (a kernel's block "
                          "ends at its closing brace; put the rest of its work under an `if`)");
            return;
        }
        diags_.report(DiagKind::SyntaxError, r, message);
        note_misspelt_keyword(at, parser);
        note_misspelt_leading_keyword(at, parser);
        note_unclosed_brace(at, parser);
    }

    // Two names in a row (`fragmnet x: f32[256];`) are never valid: the first is most likely a
    // misspelt keyword that starts a declaration or statement.
    void note_misspelt_leading_keyword(antlr4::Token* at, antlr4::Parser* parser) {
        if (!at || at->getType() != P::IDENT) return;
        // The token before `at` on the default channel (the parser may not have consumed it).
        auto* stream = dynamic_cast<antlr4::BufferedTokenStream*>(parser->getTokenStream());
        if (!stream) return;
        antlr4::Token* prev = nullptr;
        for (ssize_t i = static_cast<ssize_t>(at->getTokenIndex()) - 1; i >= 0 && !prev; --i)
            if (antlr4::Token* t = stream->get(static_cast<size_t>(i)); t->getChannel() == antlr4::Token::DEFAULT_CHANNEL) prev = t;
        if (!prev || prev->getType() != P::IDENT) return;
        std::vector<size_t> every;
        for (size_t type = 1; type <= parser->getVocabulary().getMaxTokenType(); ++type) every.push_back(type);
        suggest_keyword(prev, every, parser);
    }

    // "did you mean" the keyword among token `types` nearest to `word`'s text, if close enough to
    // be a likely typo.
    void suggest_keyword(antlr4::Token* word_token, const std::vector<size_t>& types, antlr4::Parser* parser) {
        std::string word = word_token->getText();
        if (word.size() < 3 || word.size() > 64) return;
        const auto& vocab = parser->getVocabulary();
        std::string best;
        size_t best_d = (word.size() + 1) / 3 + 1;
        for (size_t type : types) {
            std::string lit = vocab.getLiteralName(type);
            if (lit.size() < 3 || !std::isalpha(static_cast<unsigned char>(lit[1]))) continue;
            std::string keyword = lit.substr(1, lit.size() - 2);
            size_t d = edit_distance(word, keyword);
            if (d < best_d) best = keyword, best_d = d;
        }
        if (!best.empty())
            diags_.note(DiagKind::NoteHint, ranges_.range_of(word_token), "did you mean `" + best + "`?");
    }

    // An identifier where a keyword was expected (`for i in paralel(64)`): "did you mean".
    void note_misspelt_keyword(antlr4::Token* at, antlr4::Parser* parser) {
        if (!at || at->getType() != P::IDENT) return;
        antlr4::misc::IntervalSet expected;
        try {
            expected = parser->getExpectedTokens();
        } catch (const std::exception&) {
            return;
        }
        std::vector<size_t> types;
        for (ssize_t type : expected.toList())
            if (type > 0) types.push_back(static_cast<size_t>(type));
        suggest_keyword(at, types, parser);
    }

    // The end of the file inside braces: point at the innermost `{` that was never closed.
    void note_unclosed_brace(antlr4::Token* at, antlr4::Parser* parser) {
        if (at && at->getType() != antlr4::Token::EOF) return;
        auto* stream = dynamic_cast<antlr4::BufferedTokenStream*>(parser->getTokenStream());
        if (!stream) return;
        std::vector<antlr4::Token*> open;
        for (antlr4::Token* tok : stream->getTokens()) {
            if (tok->getType() == P::LBRACE) open.push_back(tok);
            if (tok->getType() == P::RBRACE && !open.empty()) open.pop_back();
        }
        if (open.empty()) return;
        SourceRange r = ranges_.range_of(open.back());
        if (r.valid()) diags_.note(DiagKind::NoteHint, r, "to match this `{`");
    }

    void reportNoViableAlternative(antlr4::Parser* parser, const antlr4::NoViableAltException& e) override {
        emit(e.getOffendingToken(), "unexpected " + token_display(e.getOffendingToken()), false, parser);
    }
    void reportInputMismatch(antlr4::Parser* parser, const antlr4::InputMismatchException& e) override {
        std::string expected = expected_list(parser, e.getExpectedTokens());
        std::string msg = expected.empty() ? "unexpected " + token_display(e.getOffendingToken())
                                           : "expected " + expected + (expected == "`;`" ? context_suffix(parser->getContext()) : "") +
                                                 ", found " + token_display(e.getOffendingToken());
        emit(e.getOffendingToken(), msg, false, parser);
    }
    void reportFailedPredicate(antlr4::Parser* parser, const antlr4::FailedPredicateException& e) override {
        emit(e.getOffendingToken(), "unexpected " + token_display(e.getOffendingToken()), false, parser);
    }
    void reportUnwantedToken(antlr4::Parser* parser) override {
        if (inErrorRecoveryMode(parser)) return;
        beginErrorCondition(parser);
        antlr4::Token* t = parser->getCurrentToken();
        emit(t, "unexpected " + token_display(t), false, parser);
    }
    void reportMissingToken(antlr4::Parser* parser) override {
        if (inErrorRecoveryMode(parser)) return;
        beginErrorCondition(parser);
        std::string expected = expected_list(parser, getExpectedTokens(parser));
        std::string suffix = expected == "`;`" ? context_suffix(parser->getContext()) : "";
        emit(parser->getCurrentToken(), "expected " + (expected.empty() ? "more input" : expected) + suffix, true, parser);
    }

private:
    AstBuilder& ranges_;
    DiagnosticEngine& diags_;
    SourceRange last_valid_;
    bool reported_any_ = false;  // a syntax error was reported (last_valid_ is its place)
};

// Lexer listener that keeps ANTLR off the console: unknown characters are reported as E0101 by
// check_tokens, from the token stream, with the source range.
class SilentLexerListener : public antlr4::BaseErrorListener {
public:
    void syntaxError(antlr4::Recognizer*, antlr4::Token*, size_t, size_t, const std::string&,
                     std::exception_ptr) override {}
};

// Checks the token stream before parsing: lexical errors, identifier length and nesting depth.
// Returns false when parsing must not be attempted (it could exhaust the stack).
bool check_tokens(antlr4::CommonTokenStream& tokens, const SourceFile& file, uint32_t file_id,
                  const ParseLimits& limits, AstBuilder& ranges, DiagnosticEngine& diags) {
    bool ok = true;
    size_t depth = 0, prefix_run = 0;
    // An `else if` nests the next `if` inside the `else` (in the AST, the IR and the generated
    // CUDA, which indents it one level deeper): chains[d] counts the `else if`s of the chain
    // running at bracket depth d, and `chained` their sum over the enclosing depths.
    std::vector<size_t> chains(1, 0);
    size_t chained = 0;
    const std::vector<antlr4::Token*>& all = tokens.getTokens();
    auto next_type = [&](size_t i) -> size_t { // the next token that is not a comment
        for (++i; i < all.size(); ++i)
            if (all[i]->getChannel() == antlr4::Token::DEFAULT_CHANNEL) return all[i]->getType();
        return antlr4::Token::EOF;
    };
    antlr4::Token* prev = nullptr;
    for (size_t index = 0; index < all.size(); ++index) {
        antlr4::Token* tok = all[index];
        size_t type = tok->getType();
        if (type == antlr4::Token::EOF) break;
        SourceRange r = ranges.range_of(tok);
        // A closed `/* */` lexes as one BLOCK_COMMENT token, so `/` directly followed by `*` can
        // only be a comment that never ends (no tl syntax puts `*` right after `/`).
        if (type == P::STAR && prev && prev->getType() == P::SLASH && prev->getStopIndex() + 1 == tok->getStartIndex()) {
            SourceRange pr = ranges.range_of(prev);
            diags.report(DiagKind::UnterminatedComment, SourceRange{pr.begin, r.end});
            return false;
        }
        prev = tok;
        switch (type) {
        case P::UNKNOWN_CHAR: {
            std::string text = tok->getText();
            unsigned char c = text.empty() ? 0 : text[0];
            if (text == "\"") {
                diags.report(DiagKind::UnterminatedString, r);
            } else if (c == static_cast<unsigned char>(kNonAsciiMarker)) {
                diags.report(DiagKind::UnexpectedChar, r, "(non-ASCII text outside a comment)");
            } else {
                diags.report(DiagKind::UnexpectedChar, r, c >= 0x20 && c < 0x7f ? "`" + text + "`" : fmt::format("0x{:02x}", c));
            }
            break;
        }
        case P::IDENT:
            if (tok->getText().size() > limits.max_identifier) {
                diags.report(DiagKind::IdentifierTooLong, SourceRange{r.begin, r.begin}, tok->getText().size(),
                             limits.max_identifier);
                ok = false;
            }
            break;
        case P::BLOCK_COMMENT: {
            std::string text = tok->getText();
            if (text.size() < 4 || text.compare(text.size() - 2, 2, "*/") != 0) diags.report(DiagKind::UnterminatedComment, SourceRange{r.begin, r.begin});
            break;
        }
        default: break;
        }
        if (type == P::LPAREN || type == P::LBRACK || type == P::LBRACE) {
            ++depth;
            if (chains.size() <= depth) chains.resize(depth + 1, 0);
        }
        if ((type == P::RPAREN || type == P::RBRACK || type == P::RBRACE) && depth > 0) {
            chained -= chains[depth]; // the chains inside the closed brackets are over
            chains[depth] = 0;
            --depth;
            if (next_type(index) != P::ELSE) { // so is the one this `}` would continue
                chained -= chains[depth];
                chains[depth] = 0;
            }
        }
        if (type == P::ELSE && next_type(index) == P::IF) {
            ++chains[depth];
            ++chained;
        }
        // Prefix operators recurse in the parser just as brackets do.
        bool prefix = type == P::MINUS || type == P::BANG || type == P::TILDE || type == P::PLUS;
        prefix_run = prefix ? prefix_run + 1 : 0;
        if (depth + chained + prefix_run > limits.max_nesting) {
            diags.report(DiagKind::NestingTooDeep, r, limits.max_nesting);
            return false;
        }
        if (diags.saturated()) return false;
    }
    (void)file;
    (void)file_id;
    return ok;
}

} // namespace

ast::Module parse_module(const SourceManager& sources, uint32_t file_id, DiagnosticEngine& diags,
                         const ParseLimits& limits) {
    const SourceFile& file = sources.file(file_id);
    ast::Module empty;
    empty.file = file_id;
    if (file.text().size() > limits.max_file_bytes) {
        diags.report(DiagKind::FileTooLarge, SourceRange{}, file.text().size(), limits.max_file_bytes);
        return empty;
    }
    size_t errors_before = diags.error_count();
    std::string text = sanitize(file, file_id, diags);

    antlr4::ANTLRInputStream input(text);
    tlgen::TlLexer lexer(&input);
    lexer.removeErrorListeners();
    SilentLexerListener lexer_listener;
    lexer.addErrorListener(&lexer_listener);
    antlr4::CommonTokenStream tokens(&lexer);
    tokens.fill();

    AstBuilder builder(file, file_id, diags);
    if (!check_tokens(tokens, file, file_id, limits, builder, diags)) return empty;
    if (diags.error_count() > errors_before) return empty; // lexical errors: the parse would only add noise

    tlgen::TlParser parser(&tokens);
    parser.removeErrorListeners();
    // Fast path: SLL prediction, bail out on the first error; then full LL with recovery.
    parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(antlr4::atn::PredictionMode::SLL);
    parser.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
    P::ModuleContext* tree = nullptr;
    try {
        tree = parser.module();
    } catch (const antlr4::ParseCancellationException&) {
        tree = nullptr;
    }
    if (!tree) {
        tokens.seek(0);
        parser.reset();
        parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(antlr4::atn::PredictionMode::LL);
        parser.setErrorHandler(std::make_shared<DiagnosticErrorStrategy>(builder, diags));
        tree = parser.module();
    }
    if (diags.error_count() > errors_before || parser.getNumberOfSyntaxErrors() > 0) return empty;
    return builder.build_module(tree);
}

} // namespace tlc::syntax
