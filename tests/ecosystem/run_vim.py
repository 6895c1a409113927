#!/usr/bin/env python3
"""Editor test: loads editors/vim in a headless Vim over every sample, the stdlib, the golden inputs and
a fixture of lexical corner cases, and checks the highlight group of every character against a
reference lexer written from the language reference (longest match, as ANTLR lexes).

Exits 77 (ctest: skipped) when vim is not installed.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
KEYWORD_GROUPS = {
    "import": "tlInclude", "if": "tlStatement", "else": "tlStatement", "for": "tlStatement",
    "in": "tlStatement", "return": "tlStatement", "kernel": "tlDeclaration", "fn": "tlDeclaration",
    "const": "tlDeclaration", "let": "tlDeclaration", "mut": "tlStorageClass", "grid": "tlKeyword",
    "threads": "tlKeyword", "cluster": "tlKeyword", "as": "tlCast", "true": "tlBoolean",
    "false": "tlBoolean",
}
SECTION_GROUPS = {
    "compile-time parameter kinds": "tlType", "dtypes": "tlType", "memory scopes": "tlStorageClass",
    "loop kinds": "tlLoopKind", "tile operations": "tlTileOp",
}
# Reference rules after the grammar's literal tokens, in the grammar's order (ties go to the first).
PATTERN_RULES = [
    ("float", [r"[0-9][0-9_]*\.(?:[0-9][0-9_]*)?(?:[eE][+-]?[0-9]+)?", r"[0-9][0-9_]*[eE][+-]?[0-9]+",
               r"\.[0-9][0-9_]*(?:[eE][+-]?[0-9]+)?"]),
    ("int", [r"[0-9][0-9_]*", r"0x[0-9a-fA-F][0-9a-fA-F_]*"]),
    ("string", [r'"(?:[^"\\\r\n]|\\.)*"']),
    ("ident", [r"[a-zA-Z_][a-zA-Z_0-9]*"]),
    ("comment", [r"//[^\r\n]*", r"/\*[\s\S]*?\*/"]),
    ("ws", [r"[ \t\r\n\f]+"]),
]
VIM_SCRIPT = r"""
set nocompatible
let &rtp = '{rtp},' . &rtp
filetype on
syntax on
for [src, dst] in {pairs}
  execute 'edit ' . fnameescape(src)
  let out = [&filetype]
  for g:ln in range(1, line('$'))
    call add(out, join(map(range(1, len(getline(g:ln))), 'synIDattr(synID(g:ln, v:val, 1), "name")'), ','))
  endfor
  call writefile(out, dst)
endfor
qall!
"""


def grammar_literals(path):
    """(name, section, [literals]) of every rule of TlLexer.g4 made only of quoted literals."""
    rules, section, text, rule_section = [], None, "", None
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^//\s*-{2,}\s*(.*?)\s*-{2,}\s*$", line.strip())
            if m:
                section = m.group(1)
                continue
            code = re.sub(r"//.*$", "", line).strip()
            if not code:
                continue
            if not text:
                rule_section = section
            text += " " + code
            if code.endswith(";"):
                m = re.match(r"^\s*([A-Z_][A-Z_0-9]*)\s*:\s*((?:'[^']*'\s*\|?\s*)+);$", text)
                if m:
                    words = [re.sub(r"\\(.)", r"\1", w) for w in re.findall(r"'([^']*)'", m.group(2))]
                    rules.append((m.group(1), rule_section, words))
                text = ""
    return rules


def lex(text, literal_rules):
    compiled = [(kind, [re.compile(p) for p in pats]) for kind, pats in PATTERN_RULES]
    pos, tokens = 0, []
    while pos < len(text):
        best, length = None, 0
        for name, section, words in literal_rules:
            for w in words:
                if text.startswith(w, pos) and len(w) > length:
                    best, length = ("word" if section != "operators and punctuation" else "operator",
                                    section, name), len(w)
        for kind, pats in compiled:
            for p in pats:
                m = p.match(text, pos)
                if m and len(m.group()) > length:
                    best, length = (kind, None, kind), len(m.group())
        if not best:
            best, length = ("unknown", None, "UNKNOWN_CHAR"), 1
        tokens.append((best, pos, text[pos:pos + length]))
        pos += length
    return tokens


def allowed_groups(kind, section, word):
    if kind == "word":
        if section == "keywords":
            return {KEYWORD_GROUPS[word]} if word in KEYWORD_GROUPS else \
                {"tlInclude", "tlDeclaration", "tlStatement", "tlStorageClass", "tlKeyword", "tlCast", "tlBoolean"}
        return {SECTION_GROUPS.get(section, "?")}
    return {"operator": {"tlOperator", ""}, "float": {"tlFloat"}, "int": {"tlNumber"},
            "string": {"tlString"}, "comment": {"tlComment", "tlTodo"}, "ident": {""},
            "ws": {""}}.get(kind, set())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", required=True)
    args = ap.parse_args()
    vim = shutil.which("vim")
    if not vim:
        print("SKIPPED: vim is not installed")
        return SKIP
    root = os.path.abspath(args.root)
    files = []
    for pattern in ("samples/**/*.tl", "stdlib/*.tl", "tests/golden/*.tl", "tests/ecosystem/**/*.tl"):
        files += sorted(glob.glob(os.path.join(root, pattern), recursive=True))
    tmp = tempfile.mkdtemp(prefix="tlc-vim-")
    pairs = [[f, os.path.join(tmp, f"{i}.txt")] for i, f in enumerate(files)]
    script = os.path.join(tmp, "check.vim")
    as_vim = "[" + ", ".join("[%s, %s]" % tuple("'" + s.replace("'", "''") + "'" for s in p) for p in pairs) + "]"
    with open(script, "w", encoding="utf-8") as f:
        f.write(VIM_SCRIPT.format(rtp=os.path.join(root, "editors", "vim").replace("'", "''"), pairs=as_vim))
    r = subprocess.run([vim, "-Nu", "NONE", "-i", "NONE", "-es", "-S", script], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0 or r.stdout.strip() or r.stderr.strip():
        print(f"FAIL: vim exited {r.returncode}\n{r.stdout}\n{r.stderr}")
        return 1

    literal_rules = grammar_literals(os.path.join(root, "grammar", "TlLexer.g4"))
    failures, seen = [], {}
    for src, dst in pairs:
        rel = os.path.relpath(src, root)
        with open(src, encoding="utf-8") as f:
            text = f.read()
        with open(dst, encoding="utf-8") as f:
            out = f.read().split("\n")
        if out[0] != "tl":
            failures.append(f"{rel}: filetype is `{out[0]}`, not tl (ftdetect)")
            continue
        # Group of each character: Vim reports by byte column, so map characters to bytes.
        groups, lines = [], text.split("\n")
        for n, line in enumerate(lines):
            by_byte = out[n + 1].split(",") if n + 1 < len(out) and out[n + 1] else []
            col = 0
            for ch in line:
                groups.append(by_byte[col] if col < len(by_byte) else "")
                col += len(ch.encode("utf-8"))
            if n + 1 < len(lines):
                groups.append(None)  # the line break
        for (kind, section, name), start, word in lex(text, literal_rules):
            want = allowed_groups(kind, section, word)
            seen[kind] = seen.get(kind, 0) + 1
            for i in range(start, start + len(word)):
                if groups[i] is not None and groups[i] not in want:
                    line = text.count("\n", 0, i) + 1
                    failures.append(f"{rel}:{line}: {name} {word!r}: character {text[i]!r} is in group "
                                    f"`{groups[i]}`, expected one of {sorted(want)}")
                    break
    shutil.rmtree(tmp)
    for kind in ("word", "comment", "int", "float", "string", "ident"):
        if not seen.get(kind):
            failures.append(f"no {kind} token in any file: the test checked nothing for it")
    print(f"{len(files)} files; tokens checked: {', '.join(f'{n} {k}' for k, n in sorted(seen.items()))}")
    for f in failures[:60]:
        print(f"FAIL {f}")
    if failures:
        print(f"{len(failures)} mismatches")
        return 1
    print("all highlight groups as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
