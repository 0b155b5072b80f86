#!/usr/bin/env bash
# Screenshots of the studio on a fresh demo library, under Xvfb.
#   packaging/screenshots.sh [OUT_DIR]     (default: packaging/screenshots/out)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
out="${1:-$here/screenshots/out}"
python="${PYTHON:-python}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$repo"
"$python" -m studio --db "$work/library.sqlite" demo >/dev/null
unset QT_QPA_PLATFORM
xvfb-run -a -s "-screen 0 1600x1000x24" "$python" "$here/screenshots.py" --db "$work/library.sqlite" "$out"
