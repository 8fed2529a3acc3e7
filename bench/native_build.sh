#!/usr/bin/env bash
# The portable llama.cpp build against one compiled for this CPU, side by side in one run: the
# same calibration batch (16 answers of the 1.5B decoded together on one pinned thread, arith2,
# step-by-step, moderate injection, greedy, L tokens each) under each build, in alternating order
# (portable, native, native, portable), wall time and decoded tokens of each; then decoding alone
# (`bench.decode_rows`: 16 and 4 answers of one shared prompt) in the same order. Not in `make bench`:
# it needs the native build (LLAMA_CPP_NATIVE=1 scripts/build_llama_cpp_wheel.sh --build-only),
# unpacked where PYTHONPATH can put it first:
#   .venv/bin/python -m pip install --no-deps --target /tmp/native_site ~/.cache/rrdemo/wheels/native/*.whl
#   bench/native_build.sh /tmp/native_site [L] [core]
# bench/README.md, "A build for this CPU", has the numbers measured here.
set -euo pipefail

cd "$(dirname "$0")/.."
SITE="${1:?give the folder the native wheel is unpacked in}"
L="${2:-48}"
CORE="${3:-0}"
[[ -d "$SITE/llama_cpp" ]] || { echo "no llama_cpp package in $SITE" >&2; exit 2; }
OUT="$(mktemp -d)"

one() {  # label, PYTHONPATH
    local log="$OUT/$1-$RANDOM/log.jsonl" start end
    start=$(date +%s.%N)
    PYTHONPATH="$2" RRDEMO_LLAMA_THREADS=1 taskset -c "$CORE" .venv/bin/rrdemo calibrate \
        --tasks arith2 --styles step-by-step --injections moderate --n 16 --max-tokens "$L" \
        --temperature 0 --batch 16 --out "$log" --quiet > /dev/null
    end=$(date +%s.%N)
    .venv/bin/python - "$1" "$start" "$end" "$log" <<'EOF'
import json, sys
label, start, end, log = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
with open(log) as f:
    tokens = sum(r["n_tokens"] for r in map(json.loads, f) if r.get("type") == "answer")
print(f"{label:9} {end - start:7.1f} s  {tokens:5d} tokens  {tokens / (end - start):5.2f} tok/s")
EOF
}

PYTHONPATH="$SITE" .venv/bin/python -c "import llama_cpp; print('native:', llama_cpp.llama_print_system_info().decode().strip())"
.venv/bin/python -c "import llama_cpp; print('portable:', llama_cpp.llama_print_system_info().decode().strip())"
one portable ""
one native "$SITE"
one native "$SITE"
one portable ""
for site in "" "$SITE" "$SITE" ""; do
    PYTHONPATH="$site" RRDEMO_LLAMA_THREADS=1 taskset -c "$CORE" .venv/bin/python -m bench.decode_rows
done
rm -rf "$OUT"
