#!/usr/bin/env bash
# bundle.sh — a relocatable tlc: the installed tree plus every shared library tlc loads (the C
# library and its loader included), for a machine that has neither tlc's packages nor a package
# registry, such as a GPU server where `tlc tune`, `tlc run` or the random differential test runs.
#
#   scripts/bundle.sh [BUILD_DIR] [DEST]        (defaults: build, dist/tlc)
#
# DEST/bin/tlc is a shell script that starts the real executable through the bundled loader
# (DEST/bin/tlc-loader) with DEST/lib/tlc-bundle as its only library path, so the host's own
# libraries are never mixed in and any x86-64 Linux runs it. tlc finds its standard library next
# to the loader (DEST/share/tlc/stdlib), as for an installed tlc. Copy DEST anywhere, or run
# `tar czf tlc.tar.gz -C dist tlc` and unpack it there; needs bash, ldd and cmake here only.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${1:-$ROOT/build}
DEST=${2:-$ROOT/dist/tlc}

[[ -x $BUILD/src/tlc ]] || { echo "bundle.sh: no tlc in $BUILD (run scripts/build.sh first)" >&2; exit 2; }
rm -rf "$DEST"
cmake --install "$BUILD" --prefix "$DEST" > /dev/null
LIBS=$DEST/lib/tlc-bundle
mkdir -p "$LIBS"
mv "$DEST/bin/tlc" "$LIBS/tlc"

# The libraries, as the dynamic linker resolves them here, and the loader itself.
loader=
while read -r line; do
    if [[ $line =~ =\>\ (/[^ ]+) ]]; then
        cp -L "${BASH_REMATCH[1]}" "$LIBS/"
    elif [[ $line =~ ^(/[^ ]*ld-linux[^ ]*) ]]; then
        loader=${BASH_REMATCH[1]}
    fi
done < <(ldd "$LIBS/tlc")
[[ -n $loader ]] || { echo "bundle.sh: ldd names no dynamic loader for tlc" >&2; exit 1; }
# In bin/, so that the executable's path (/proc/self/exe: the loader) leads to share/tlc/stdlib.
cp -L "$loader" "$DEST/bin/tlc-loader"

cat > "$DEST/bin/tlc" <<'EOF'
#!/bin/sh
# tlc from a relocatable bundle (scripts/bundle.sh): the bundled loader and libraries only.
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/tlc-loader" --library-path "$here/../lib/tlc-bundle" "$here/../lib/tlc-bundle/tlc" "$@"
EOF
chmod +x "$DEST/bin/tlc" "$DEST/bin/tlc-loader"

# Check: the bundle runs and finds its standard library.
"$DEST/bin/tlc" --version > /dev/null
echo 'import "softmax.tl";' > "$DEST/.check.tl"
"$DEST/bin/tlc" check "$DEST/.check.tl"
rm -f "$DEST/.check.tl"
echo "bundle.sh: $DEST ($(du -sh "$DEST" | cut -f1)); run $DEST/bin/tlc"
