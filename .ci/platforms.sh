#!/usr/bin/env bash
# Installs the platforms' own client packages into a venv of their own (and promptfoo from npm into
# a local prefix), so tests/core/platforms can load our exports with the real thing while the app's
# dependencies stay lean. Idempotent: a second run with the same package list returns at once.
#
#   STUDIO_PLATFORMS_DIR  where to install (default: ~/.cache/grader-studio/platforms)
#   STUDIO_PLATFORMS_NPM  set to 0 to skip promptfoo (npm)
#
# Each package installs on its own, so one that cannot install (e.g. needs a newer Python) does not
# stop the others. Any failure makes the script exit 1 (and leaves no stamp, so the next run tries
# again); tests skip with a reason for whatever is missing, or fail when STUDIO_REQUIRE_PLATFORMS=1
# (.ci/run sets it when CI=true).
set -u

DIR="${STUDIO_PLATFORMS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/grader-studio/platforms}"
PY="${STUDIO_PLATFORMS_PYTHON:-python3}"
VENV="$DIR/venv"
NPM_PREFIX="$DIR/npm"

PIP_PACKAGES=(
  "adaptive-sdk==0.14.2"
  "meetkai-mka1>=0.12,<0.13"
  "letta-evals==0.26.0"
  "openai>=1.60"
  # Azure's evaluators document OpenAI-compatible text-similarity metrics: the conformance reference
  # for text_similarity (tests/conformance/test_openai_similarity.py)
  "azure-ai-evaluation>=1.18,<2"
  "hud>=0.6.21,<0.7"
  "inspect-ai>=0.3.200"
)
NPM_PACKAGES=("promptfoo@0")

stamp_text="$("$PY" --version 2>&1) ${PIP_PACKAGES[*]} npm:${STUDIO_PLATFORMS_NPM:-1}:${NPM_PACKAGES[*]}"
stamp_file="$DIR/stamp"
if [[ -x "$VENV/bin/python" && -f "$stamp_file" && "$(cat "$stamp_file")" == "$stamp_text" ]]; then
  echo "platforms: up to date in $DIR"
  exit 0
fi

start=$(date +%s)
mkdir -p "$DIR"
[[ -x "$VENV/bin/python" ]] || "$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null 2>&1 || true

status="$DIR/status.txt"
: > "$status"
failed=0
for spec in "${PIP_PACKAGES[@]}"; do
  t0=$(date +%s)
  if "$VENV/bin/python" -m pip install -q "$spec" >"$DIR/pip-${spec%%[=<>]*}.log" 2>&1; then
    echo "ok   $spec ($(( $(date +%s) - t0 )) s)" | tee -a "$status"
  else
    echo "FAIL $spec ($(( $(date +%s) - t0 )) s): $(tail -n 3 "$DIR/pip-${spec%%[=<>]*}.log" | tr '\n' ' ')" | tee -a "$status"
    failed=1
  fi
done

if [[ "${STUDIO_PLATFORMS_NPM:-1}" != "0" ]] && command -v npm >/dev/null; then
  t0=$(date +%s)
  if npm install --prefix "$NPM_PREFIX" --no-audit --no-fund --loglevel=error "${NPM_PACKAGES[@]}" \
      >"$DIR/npm.log" 2>&1; then
    echo "ok   npm ${NPM_PACKAGES[*]} ($(( $(date +%s) - t0 )) s)" | tee -a "$status"
  else
    echo "FAIL npm ${NPM_PACKAGES[*]} ($(( $(date +%s) - t0 )) s): $(tail -n 3 "$DIR/npm.log" | tr '\n' ' ')" | tee -a "$status"
    failed=1
  fi
elif [[ "${STUDIO_PLATFORMS_NPM:-1}" != "0" ]]; then
  echo "FAIL npm: node/npm not found, promptfoo not installed" | tee -a "$status"
  failed=1
fi

if [[ "$failed" != 0 ]]; then
  echo "platforms: some packages did not install (see $status); not stamping, the next run retries" >&2
  exit 1
fi

echo "$stamp_text" > "$stamp_file"
echo "platforms: installed in $DIR in $(( $(date +%s) - start )) s"
