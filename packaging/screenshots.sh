#!/usr/bin/env bash
# Screenshots of the studio on a fresh demo library, under Xvfb, at 1280x800 and 1920x1080.
#   packaging/screenshots.sh [OUT_DIR] [SIZES...]   (default: packaging/screenshots/out, 1280x800 1920x1080)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
out="${1:-$here/screenshots/out}"
shift || true
sizes=("${@:-1280x800 1920x1080}")
read -r -a sizes <<<"${sizes[*]}"
python="${PYTHON:-python}"
cd "$repo"
unset QT_QPA_PLATFORM
for size in "${sizes[@]}"; do
  work="$(mktemp -d)"
  "$python" -m studio --db "$work/library.sqlite" demo >/dev/null
  # a screen of the size shot: a window that outgrows it shows as a wrong-sized shot (issue 35)
  xvfb-run -a -s "-screen 0 ${size}x24" "$python" "$here/screenshots.py" --db "$work/library.sqlite" \
    --size "$size" "$out/$size"
  rm -rf "$work"
done
