#!/usr/bin/env bash
# Installs everything the test suite needs before it runs, so that no test touches the network:
# the Debian packages (scripts/install-deps.sh --test), then the TextMate engine that the
# editors.textmate test drives (npm vscode-textmate and vscode-oniguruma, pinned, into
# <build>/tests/ecosystem/textmate). Idempotent: nothing is fetched when it is already there.
# Environment: TLC_BUILD_DIR (default build).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh --test
build_dir=${TLC_BUILD_DIR:-build}
python3 tests/ecosystem/run_textmate.py --install-only --root . --work "$build_dir/tests/ecosystem/textmate"
