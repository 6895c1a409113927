#!/usr/bin/env bash
# Installs the Debian packages tlc needs (idempotent; run as root or with sudo).
#   scripts/install-deps.sh          what building and running tlc needs (no test suite)
#   scripts/install-deps.sh --test   also the test suite's tools: doctest, clang (sanitizer and
#                                    fuzzing builds), make, Vim, Node.js and npm, Chromium
# apt-get runs only when a package is missing; `apt-get update` only then, too.
set -euo pipefail
with_tests=0
case "${1:-}" in
    "") ;;
    --test) with_tests=1 ;;
    *) echo "usage: scripts/install-deps.sh [--test]" >&2; exit 2 ;;
esac
# A plain build (-DTLC_BUILD_TESTS=OFF). pkg-config: src/CMakeLists.txt does
# find_package(PkgConfig REQUIRED); nothing above pulls it in.
# libdtl-dev: the line diffs of `tlc tune --report` (header-only).
PKGS=(cmake ninja-build g++ pkg-config antlr4 libantlr4-runtime-dev libcli11-dev libspdlog-dev libfmt-dev
      nlohmann-json3-dev libdtl-dev)
if ((with_tests)); then
    # doctest: the unit tests; python3: every test runner.
    PKGS+=(doctest-dev python3)
    # clang + libclang-rt-dev (the compiler-rt of Debian's default clang: libFuzzer, ASan, UBSan):
    # scripts/fuzz.sh builds the libFuzzer target with them.
    PKGS+=(clang libclang-rt-dev)
    # make: the CMake-package test also builds samples/cmake-consumer with Unix Makefiles; vim: the
    # editors.vim test loads editors/vim in a headless Vim.
    PKGS+=(make vim)
    # chromium: the report_browser test renders `tlc tune --report` pages in headless Chromium.
    PKGS+=(chromium)
fi
missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((with_tests)); then
    # Node.js and npm: scripts/test-deps.sh installs the TextMate engine from npm for the
    # editors.textmate test. Checked by command, not by package: NodeSource's nodejs bundles npm
    # and conflicts with Debian's npm package.
    command -v node >/dev/null 2>&1 || missing+=(nodejs)
    command -v npm >/dev/null 2>&1 || missing+=(npm)
fi
if ((${#missing[@]})); then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update
    # `env` so that the variable survives sudo, which resets the environment.
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi
