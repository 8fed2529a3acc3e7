#!/usr/bin/env bash
# Build the llama-cpp-python wheel ONCE into a user cache and install it (plus the
# server extras) into the project venv. Later runs find the wheel and only install it.
#
# Why: llama-cpp-python ships as an sdist only; compiling it takes ~5 minutes on 2 cores.
# The test suite (tests/rrdemo/backends/test_openai*.py) and bench/served.py use its OpenAI-compatible
# server (python -m llama_cpp.server) as a real inference server on loopback.
#
# Usage: scripts/build_llama_cpp_wheel.sh [--build-only]
# Env:   PYTHON (default .venv/bin/python), LLAMA_CPP_VERSION,
#        WHEEL_DIR (default ~/.cache/rrdemo/wheels: outside the clone, so fresh clones reuse it),
#        LLAMA_CPP_NATIVE=1: compile for this CPU (GGML_NATIVE=ON: AVX-512 and VNNI where the CPU
#        has them) into WHEEL_DIR/native and install it over the portable one. With AVX-512 VNNI
#        the 1.5B's Q4_K_M weights run about 1.4x (decoding) to 1.8x (a prefill-heavy batch)
#        faster (bench/README.md, "A build for this CPU"); the wheel then runs on this CPU only.
set -euo pipefail

cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-.venv/bin/python}"
VERSION="${LLAMA_CPP_VERSION:-0.3.36}"
WHEEL_DIR="${WHEEL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/rrdemo/wheels}"
NATIVE="${LLAMA_CPP_NATIVE:-0}"
if [[ "$NATIVE" == 1 ]]; then
    WHEEL_DIR="$WHEEL_DIR/native"
    CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=ON}"
elif [[ "$NATIVE" != 0 ]]; then
    echo "LLAMA_CPP_NATIVE must be 0 (portable, the default) or 1 (this CPU), got '$NATIVE'" >&2
    exit 2
fi

# Already installed (this version, with its server)? Nothing to do (a native build reinstalls).
if [[ "${1:-}" != "--build-only" && "$NATIVE" == 0 ]] && "$PYTHON" -c "import importlib.metadata as m, llama_cpp.server.app, sys; sys.exit(m.version('llama-cpp-python') != '$VERSION')" 2>/dev/null; then
    echo "llama-cpp-python $VERSION with its server is installed" >&2
    exit 0
fi

mkdir -p "$WHEEL_DIR"
wheel="$(ls "$WHEEL_DIR"/llama_cpp_python-"$VERSION"-*.whl 2>/dev/null | head -1 || true)"
if [[ -z "$wheel" ]]; then
    echo "building llama-cpp-python==$VERSION wheel into $WHEEL_DIR (about 5 minutes)..." >&2
    # GGML_NATIVE=OFF: portable CPU build (the wheel may be reused on another CPU). A native build
    # skips pip's cache, which keys a built wheel by the sdist alone and would hand back the
    # portable one.
    CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}" CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" \
        nice "$PYTHON" -m pip wheel --no-deps $([[ "$NATIVE" == 1 ]] && echo --no-cache-dir) \
        "llama-cpp-python==$VERSION" -w "$WHEEL_DIR"
    wheel="$(ls "$WHEEL_DIR"/llama_cpp_python-"$VERSION"-*.whl | head -1)"
else
    echo "reusing $wheel" >&2
fi

if [[ "${1:-}" == "--build-only" ]]; then
    echo "$wheel"
    exit 0
fi

# --no-deps: its runtime deps and the server extras (diskcache, sse-starlette, starlette-context,
# pydantic-settings, uvicorn, fastapi) are pinned in requirements.txt.
"$PYTHON" -m pip install -q --no-deps --force-reinstall "$wheel"
"$PYTHON" -c "import llama_cpp, llama_cpp.server.app; print('llama_cpp', llama_cpp.__version__)"
