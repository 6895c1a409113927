// textmate_scopes.js — runs the real TextMate engine (vscode-textmate + vscode-oniguruma) over .tl files and checks scopes.
//
//   node textmate_scopes.js --modules BUILD/node_modules --root REPO file.tl ...
//
// The expected scopes come from a reference lexer written here from the language reference
// (docs/language.md §1) and the literal tokens of grammar/TlLexer.g4 — not from the generator's
// regexes — so a mistranslated regex, a keyword matched inside an identifier or a comment that
// ends too early shows up as a mismatch. Exits 1 on any mismatch.
'use strict';
const fs = require('fs');
const path = require('path');
const { createRequire } = require('module');

function parseArgs(argv) {
  const args = { files: [] };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--modules') args.modules = argv[++i];
    else if (argv[i] === '--root') args.root = argv[++i];
    else args.files.push(argv[i]);
  }
  if (!args.modules || !args.root || args.files.length === 0) {
    console.error('usage: node textmate_scopes.js --modules DIR --root REPO file.tl ...');
    process.exit(2);
  }
  return args;
}

const failures = [];
function fail(msg) {
  failures.push(msg);
}

// ---- the literal tokens of the lexer grammar, with their sections --------------------------------
function grammarLiterals(g4) {
  const rules = [];
  let section = null;
  let text = '';
  let ruleSection = null;
  for (const line of g4.split('\n')) {
    const header = line.match(/^\/\/\s*-{2,}\s*(.*?)\s*-{2,}\s*$/);
    if (header) { section = header[1]; continue; }
    const code = line.replace(/\/\/.*$/, '').trim();
    if (!code) continue;
    if (!text) ruleSection = section;
    text += ' ' + code;
    if (code.endsWith(';')) {
      const m = text.match(/^\s*([A-Z_][A-Z_0-9]*)\s*:\s*((?:'[^']*'\s*\|?\s*)+);$/);
      if (m) {
        const words = [...m[2].matchAll(/'([^']*)'/g)].map((x) => x[1].replace(/\\(.)/g, '$1'));
        rules.push({ name: m[1], section: ruleSection, words });
      }
      text = '';
    }
  }
  return rules;
}

// ---- the reference lexer: longest match, ties to the earlier rule, as ANTLR does -----------------
function referenceRules(literalRules) {
  const rules = literalRules.map((r) => ({ kind: r.section === 'operators and punctuation' ? 'operator' : 'word',
                                            name: r.name, section: r.section, literals: r.words }));
  const re = (s) => new RegExp(s, 'y');
  rules.push({ kind: 'float', name: 'FLOAT_LIT', res: [re('[0-9][0-9_]*\\.(?:[0-9][0-9_]*)?(?:[eE][+-]?[0-9]+)?'),
                                                      re('[0-9][0-9_]*[eE][+-]?[0-9]+'),
                                                      re('\\.[0-9][0-9_]*(?:[eE][+-]?[0-9]+)?')] });
  rules.push({ kind: 'int', name: 'INT_LIT', res: [re('[0-9][0-9_]*'), re('0x[0-9a-fA-F][0-9a-fA-F_]*')] });
  rules.push({ kind: 'string', name: 'STRING_LIT', res: [re('"(?:[^"\\\\\\r\\n]|\\\\.)*"')] });
  rules.push({ kind: 'ident', name: 'IDENT', res: [re('[a-zA-Z_][a-zA-Z_0-9]*')] });
  rules.push({ kind: 'line-comment', name: 'LINE_COMMENT', res: [re('//[^\\r\\n]*')] });
  rules.push({ kind: 'block-comment', name: 'BLOCK_COMMENT', res: [re('/\\*[\\s\\S]*?\\*/')] });
  rules.push({ kind: 'ws', name: 'WS', res: [re('[ \\t\\r\\n\\f]+')] });
  return rules;
}

function matchLength(rule, text, pos) {
  let best = 0;
  if (rule.literals) {
    for (const lit of rule.literals) if (text.startsWith(lit, pos)) best = Math.max(best, lit.length);
  } else {
    for (const r of rule.res) {
      r.lastIndex = pos;
      const m = r.exec(text);
      if (m) best = Math.max(best, m[0].length);
    }
  }
  return best;
}

function referenceLex(text, rules) {
  const tokens = [];
  let pos = 0;
  while (pos < text.length) {
    let best = null;
    let len = 0;
    for (const rule of rules) {
      const n = matchLength(rule, text, pos);
      if (n > len) { len = n; best = rule; }
    }
    if (!best) { best = { kind: 'unknown', name: 'UNKNOWN_CHAR' }; len = 1; }
    tokens.push({ rule: best, start: pos, end: pos + len, text: text.slice(pos, pos + len) });
    pos += len;
  }
  return tokens;
}

// ---- what each token must be highlighted as -----------------------------------------------------
const KEYWORD_SCOPES = {
  import: 'keyword.control.import.tl',
  if: 'keyword.control.tl', else: 'keyword.control.tl', for: 'keyword.control.tl',
  in: 'keyword.control.tl', return: 'keyword.control.tl',
  kernel: 'storage.type.kernel.tl', fn: 'storage.type.function.tl',
  const: 'storage.type.tl', let: 'storage.type.tl', mut: 'storage.modifier.tl',
  grid: 'keyword.other.launch.tl', threads: 'keyword.other.launch.tl', cluster: 'keyword.other.launch.tl',
  as: 'keyword.operator.cast.tl', true: 'constant.language.boolean.tl', false: 'constant.language.boolean.tl',
};
const SECTION_SCOPES = {
  'compile-time parameter kinds': 'storage.type.kind.tl',
  'memory scopes': 'storage.modifier.scope.tl',
  'loop kinds': 'keyword.control.loop.tl',
  'tile operations': 'support.function.tile.tl',
  dtypes: 'support.type.dtype.tl',
};
// The categories the test must have seen at least once over all files, or it proves nothing.
const counts = { keyword: 0, dtype: 0, 'line comment': 0, 'block comment': 0, integer: 0, float: 0,
                 string: 0, operator: 0, identifier: 0, 'other word': 0 };

function expectation(tok) {
  const r = tok.rule;
  switch (r.kind) {
    case 'word':
      if (r.section === 'keywords') {
        counts.keyword++;
        return KEYWORD_SCOPES[tok.text] ? { exact: KEYWORD_SCOPES[tok.text] }
                                        : { pattern: /^(keyword|storage|constant\.language)\.[\w.-]*tl$/ };
      }
      if (r.section === 'dtypes') counts.dtype++; else counts['other word']++;
      if (!SECTION_SCOPES[r.section]) return { pattern: /^(keyword|storage|support|constant)\.[\w.-]*tl$/ };
      return { exact: SECTION_SCOPES[r.section] };
    case 'operator': counts.operator++; return { pattern: /^(keyword\.operator|punctuation)\.[\w.-]*tl$/ };
    case 'float': counts.float++; return { exact: 'constant.numeric.float.tl' };
    case 'int': counts.integer++; return { exact: 'constant.numeric.integer.tl' };
    case 'string': counts.string++; return { within: 'string.quoted.double.tl' };
    case 'line-comment': counts['line comment']++; return { within: 'comment.line.double-slash.tl' };
    case 'block-comment': counts['block comment']++; return { within: 'comment.block.tl' };
    case 'ident': counts.identifier++; return { plain: true };
    case 'ws': return { plain: true };
    default: return null;
  }
}

// ---- running the engine --------------------------------------------------------------------------
async function main() {
  const args = parseArgs(process.argv.slice(2));
  const req = createRequire(path.join(path.resolve(args.modules), 'noop.js'));
  const vsctm = req('vscode-textmate');
  const onig = req('vscode-oniguruma');
  const wasm = fs.readFileSync(path.join(path.dirname(req.resolve('vscode-oniguruma')), 'onig.wasm'));
  await onig.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));

  // The extension manifest must point at the grammar and configuration this test reads.
  const ext = path.join(args.root, 'editors', 'vscode');
  const manifest = JSON.parse(fs.readFileSync(path.join(ext, 'package.json'), 'utf8'));
  const lang = manifest.contributes.languages.find((l) => l.id === 'tl');
  const gram = manifest.contributes.grammars.find((g) => g.language === 'tl');
  if (!lang || !lang.extensions.includes('.tl')) fail('package.json: no language `tl` for `.tl` files');
  if (!gram || gram.scopeName !== 'source.tl') fail('package.json: no grammar source.tl for language tl');
  const config = JSON.parse(fs.readFileSync(path.join(ext, lang.configuration), 'utf8').replace(/^\s*\/\/.*$/gm, ''));
  if (config.comments.lineComment !== '//' || String(config.comments.blockComment) !== '/*,*/') {
    fail(`language-configuration.json: comments are ${JSON.stringify(config.comments)}`);
  }
  const grammarPath = path.join(ext, gram.path);
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new onig.OnigScanner(patterns),
      createOnigString: (s) => new onig.OnigString(s),
    }),
    loadGrammar: async (scopeName) => (scopeName === 'source.tl'
      ? vsctm.parseRawGrammar(fs.readFileSync(grammarPath, 'utf8'), grammarPath) : null),
  });
  const grammar = await registry.loadGrammar('source.tl');

  const rules = referenceRules(grammarLiterals(fs.readFileSync(path.join(args.root, 'grammar', 'TlLexer.g4'), 'utf8')));
  for (const file of args.files) {
    const text = fs.readFileSync(file, 'utf8');
    const rel = path.relative(args.root, file);
    // Scopes of every character, and where TextMate tokens start, from the engine, line by line.
    const scopes = new Array(text.length).fill(null);
    const starts = new Set();
    const lineOf = new Array(text.length);
    let stack = vsctm.INITIAL;
    let offset = 0;
    const lines = text.split('\n');
    lines.forEach((raw, n) => {
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      const result = grammar.tokenizeLine(line, stack);
      for (const t of result.tokens) {
        starts.add(offset + t.startIndex);
        for (let i = t.startIndex; i < Math.min(t.endIndex, line.length); i++) scopes[offset + i] = t.scopes;
      }
      for (let i = 0; i <= raw.length && offset + i < text.length; i++) lineOf[offset + i] = n + 1;
      starts.add(offset + line.length);
      stack = result.ruleStack;
      offset += raw.length + 1;
    });
    const where = (pos) => `${rel}:${lineOf[pos]}`;
    let checked = 0;
    for (const tok of referenceLex(text, rules)) {
      const want = expectation(tok);
      if (!want) { fail(`${where(tok.start)}: the reference lexer sees an unknown character ${JSON.stringify(tok.text)}`); continue; }
      checked++;
      for (let i = tok.start; i < tok.end; i++) {
        const s = scopes[i];
        if (s === null) continue;  // a line break: no scope
        const innermost = s[s.length - 1];
        let ok;
        if (want.exact) ok = innermost === want.exact;
        else if (want.pattern) ok = want.pattern.test(innermost);
        else if (want.within) ok = s.includes(want.within);
        else ok = s.every((x) => x === 'source.tl');  // identifiers and blanks: no highlighting
        if (!ok) {
          fail(`${where(i)}: ${tok.rule.name} ${JSON.stringify(tok.text)}: character ${JSON.stringify(text[i])} has scopes ` +
               `[${s.join(' ')}]; expected ${want.exact || want.within || want.pattern || 'no scope but source.tl'}`);
          break;
        }
      }
      // Words, numbers and operators must be whole TextMate tokens: not a prefix or suffix of one.
      if ((want.exact || want.pattern) && (!starts.has(tok.start) || !starts.has(tok.end))) {
        fail(`${where(tok.start)}: ${tok.rule.name} ${JSON.stringify(tok.text)} is not a TextMate token of its own`);
      }
    }
    console.log(`${rel}: ${checked} tokens checked`);
  }
  const missing = Object.entries(counts).filter(([, n]) => n === 0).map(([k]) => k);
  if (missing.length) fail(`no ${missing.join(', ')} seen in any file: the test checked nothing for them`);
  console.log(`seen: ${Object.entries(counts).map(([k, n]) => `${n} ${k}`).join(', ')}`);
  if (failures.length) {
    for (const f of failures.slice(0, 60)) console.log(`FAIL ${f}`);
    if (failures.length > 60) console.log(`... and ${failures.length - 60} more`);
    console.log(`${failures.length} mismatches`);
    process.exit(1);
  }
  console.log('all scopes as expected');
}

main().catch((e) => { console.error(e && e.stack || e); process.exit(1); });
