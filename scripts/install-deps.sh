#!/usr/bin/env bash
# Installs the Debian packages tlc needs to build and test (idempotent; run as root or with sudo).
set -euo pipefail
# pkg-config: src/CMakeLists.txt does find_package(PkgConfig REQUIRED); nothing above pulls it in.
PKGS=(cmake ninja-build g++ pkg-config antlr4 libantlr4-runtime-dev libcli11-dev libspdlog-dev libfmt-dev
      doctest-dev nlohmann-json3-dev python3)
# clang + libclang-rt-dev (the compiler-rt of Debian's default clang: libFuzzer, ASan, UBSan):
# scripts/fuzz.sh builds the libFuzzer target with them.
PKGS+=(clang libclang-rt-dev)
# make: the CMake-package test also builds samples/cmake-consumer with Unix Makefiles; vim: the
# editors.vim test loads editors/vim in a headless Vim.
PKGS+=(make vim)
missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js and npm: the editors.textmate test installs the TextMate engine from npm. Checked by
# command, not by package: NodeSource's nodejs bundles npm and conflicts with Debian's npm package.
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if ((${#missing[@]})); then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update
    # `env` so that the variable survives sudo, which resets the environment.
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi
