# The README's two commands: `make run` (the site) and `make test` (the whole test suite).
# Both create .venv when it is missing and install everything from requirements.txt.
# With an environment that already has everything (another checkout's, say), skip the install:
#   make -o /path/to/venv/.installed run VENV=/path/to/venv
# (tests/browser/test_fresh_clone.py serves a fresh clone so). `make test` installs in a sub-make, beside
# apt-get (system-packages), where -o does not reach: there VENV=/path/to/venv alone skips the
# install when that venv's .installed is newer than requirements.txt and pyproject.toml.
# The recipes run this checkout's code, not the code a shared venv's editable install points
# at: `python -m` and `python serve.py` put this folder first on the import path.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PORT ?= 8501
# Where pip finds a CPU-only torch on a machine without a GPU, e.g.
#   make install TORCH_INDEX=https://download.pytorch.org/whl/cpu
TORCH_INDEX ?=
TORCH_PIN := $(shell grep -E '^torch==' requirements.txt)
# The corpus: $ETC_DATA_DIR, else ../shared/ETCDataset/etc beside this checkout, else data/.
ETC_DATA_DIR ?= $(firstword $(wildcard ../shared/ETCDataset/etc) data/ETCDataset/etc)
export ETC_DATA_DIR

.PHONY: install lock run test test-fast test-unit test-gpu system-packages chromium postgres lint format prepare benchmarks screenshots clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# pip installs without compiling every module to bytecode (--no-compile): compiling all of torch,
# transformers and the rest up front took about 60 s of a 100 s install on two cores, most of it
# for modules nothing here imports; Python compiles a module on its first import and keeps the
# bytecode beside it. So that it keeps it, the recipes do not pass on a shell's
# PYTHONDONTWRITEBYTECODE (with it, every process would compile torch again: 25 s instead of 10).
unexport PYTHONDONTWRITEBYTECODE
PIP_INSTALL = $(BIN)/python -m pip install -q --no-compile

# requirements.lock (`make lock`, benchmarks/lock.py): every package pinned, in two halves that two
# pips install side by side (--no-deps: nothing left to resolve between them): a new venv's
# install on two cores took 17 s that way, against 32 s for one `pip install -r requirements.txt`, which
# then runs as before and finds everything there. Where the pins do not fit (another platform,
# another torch build), the halves fail before installing anything and requirements.txt alone
# installs. LOCK= (empty) skips the lock.
LOCK ?= requirements.lock

$(VENV)/.installed: requirements.txt pyproject.toml $(LOCK) | $(BIN)/python
	$(PIP_INSTALL) --upgrade pip
	$(if $(TORCH_INDEX),$(PIP_INSTALL) --index-url $(TORCH_INDEX) "$(TORCH_PIN)")
	@if [ -n "$(LOCK)" ]; then \
	  sed '/^# second half/q' $(LOCK) > $(VENV)/lock-1.txt; \
	  sed -n '/^# second half/,$$p' $(LOCK) > $(VENV)/lock-2.txt; \
	  echo "$(PIP_INSTALL) --no-deps -r $(VENV)/lock-1.txt & (lock-2.txt): $(LOCK), two halves at once"; \
	  $(PIP_INSTALL) --no-deps -r $(VENV)/lock-1.txt & first=$$!; \
	  $(PIP_INSTALL) --no-deps -r $(VENV)/lock-2.txt; second=$$?; wait $$first; \
	  if [ $$? != 0 ] || [ $$second != 0 ]; then \
	    echo "$(LOCK) does not fit this machine: installing from requirements.txt alone"; fi; \
	fi
	$(PIP_INSTALL) -r requirements.txt
	$(PIP_INSTALL) --no-deps -e .
	touch $@

install: $(VENV)/.installed

# After a change of requirements.txt: write requirements.lock from this environment (installed
# from requirements.txt: `make install LOCK=` first). tests/unit/test_lock.py checks that it fits.
lock: | $(BIN)/python
	$(BIN)/python benchmarks/lock.py > requirements.lock.new && mv requirements.lock.new requirements.lock

# The corpus (downloaded when ETC_DATA_DIR has none), the DuckDB store, and a board that is not
# empty: the paper's published rows and the computed baselines, seeded idempotently (exit 4: the
# running site holds the board, which then has them already).
prepare: install
	@if [ ! -d "$(ETC_DATA_DIR)/dialogues" ]; then \
	  echo "No corpus at $(ETC_DATA_DIR): downloading the public ETC dataset into data/"; \
	  $(BIN)/python -m etclib download --dest data --quiet; \
	fi
	$(BIN)/python -m etclib db
	$(BIN)/python -m leaderboard seed-baselines

run: prepare
	$(BIN)/python serve.py --server.port $(PORT) --server.headless true

# Debian's packages for the tests, each installed when missing and permitted (root or
# passwordless sudo), all in one apt-get call; otherwise the tests that need one skip with the
# reason. Chromium (and CJK/emoji fonts for legible screenshots) for the browser tests
# (opt out: make test CHROMIUM=0); PostgreSQL's server binaries for the tests that run the
# leaderboard, the judge cache and the studies on a real server (tests/pgserver.py starts a
# throw-away cluster on loopback; opt out: make test POSTGRES=0). `make test` runs this beside
# the venv's install (two jobs): apt-get downloads while pip unpacks.
CHROMIUM ?= 1
CHROMIUM_BIN ?= /usr/bin/chromium
POSTGRES ?= 1
NEED_CHROMIUM = $(if $(filter 1,$(CHROMIUM)),$(if $(wildcard $(CHROMIUM_BIN)),,chromium fonts-noto-cjk fonts-noto-color-emoji))
NEED_POSTGRES = $(if $(filter 1,$(POSTGRES)),$(if $(wildcard /usr/lib/postgresql/*/bin/pg_ctl)$(shell command -v pg_ctl),,postgresql))
SYSTEM_PACKAGES = $(strip $(NEED_CHROMIUM) $(NEED_POSTGRES))

system-packages:
	@if [ -n "$(SYSTEM_PACKAGES)" ] && command -v apt-get >/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; elif sudo -n true 2>/dev/null; then SUDO="sudo -n"; else \
	    echo "$(SYSTEM_PACKAGES) missing and installing needs root: the tests that need them will skip."; \
	    exit 0; fi; \
	  echo "Installing Debian's $(SYSTEM_PACKAGES) for the browser and server-database tests"; \
	  { $$SUDO apt-get update -qq && \
	    $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	      $(SYSTEM_PACKAGES); } \
	  || echo "Could not install $(SYSTEM_PACKAGES): the tests that need them will skip."; \
	fi

chromium:
	@$(MAKE) --no-print-directory system-packages POSTGRES=0

postgres:
	@$(MAKE) --no-print-directory system-packages CHROMIUM=0

# The tests run on TEST_JOBS pytest-xdist workers: one more than the machine's cores (each
# module's tests on one worker, so that its served site or trained model is set up once; --dist
# loadgroup would be finer but does not group on pytest 9.2, xdist issue 1386; tests/conftest.py
# hands out the longest modules first). One more, because a worker waiting on a browser, a served
# site or a process it started leaves its core idle: on two cores, two workers kept the cores 92 %
# busy over a run of the suite, three 99 % (benchmarks/results.md, "Test suite run time").
# TEST_JOBS=0: no workers. No test needs the machine to itself: the fault tests kill at named
# fault points and age leases instead of waiting for them, and no test bounds a wall-clock time
# (benchmarks/ keep the timings).
TEST_JOBS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 1 )))
PYTEST_PARALLEL = $(BIN)/python -m pytest -n $(TEST_JOBS) --dist loadfile --no-loadscope-reorder

test:
	@$(MAKE) --no-print-directory -j2 install system-packages
	$(PYTEST_PARALLEL)

# The tiers are folders (README "Tests"): tests/unit, tests/integration, tests/browser, tests/gpu.
# Everything but the real-browser tests.
test-fast: install
	$(PYTEST_PARALLEL) tests/unit tests/integration tests/gpu

# The unit tier, from the environment that is there (no install; VENV=... names another), on
# UNIT_JOBS pytest-xdist workers (UNIT_JOBS=0: no workers). It fails when it takes longer than
# UNIT_BUDGET seconds (counted from the start of the target), naming the slowest tests: make them
# faster or move them to tests/integration. For one run: `make test-unit UNIT_BUDGET=90`.
UNIT_BUDGET ?= 30
UNIT_JOBS ?= 2
# pytest's temporary folders for this tier, apart: the end of a run deletes the oldest of the runs
# kept there, which would otherwise be a whole `make test`'s (a gigabyte, many seconds).
UNIT_TMP ?= $(or $(TMPDIR),/tmp)/etc-unit-tests

test-unit:
	@if [ ! -f "$(VENV)/.installed" ]; then \
	  echo "No environment at $(VENV): run 'make install' (or name one: make test-unit VENV=/path/to/venv)"; \
	  exit 2; fi
	@started=$$(date +%s.%N); \
	echo '$(BIN)/python -m pytest -n $(UNIT_JOBS) tests/unit --time-budget $(UNIT_BUDGET)'; \
	mkdir -p $(UNIT_TMP); \
	PYTEST_DEBUG_TEMPROOT=$(UNIT_TMP) ETC_TEST_STARTED=$$started \
	$(BIN)/python -m pytest -q -n $(UNIT_JOBS) tests/unit \
	  --time-budget $(UNIT_BUDGET) --durations=10

# The GPU tier: 4-bit QLoRA training, 4-bit generation with an adapter, streaming and the chat's
# in-process backend on a CUDA device (each test skips, with the reason, where there is none).
test-gpu: install
	$(BIN)/python -m pytest tests/gpu

# ruff, then the import contracts of pyproject.toml ([tool.importlinter]; README "Architecture").
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# The documentation's screenshots (docs/img/*.png: every page at 1440 and 390 px wide, the
# README's chat.png and leaderboard.png), taken from a site on a throw-away board that
# docs/screenshots.py seeds and serves; no test writes them.
screenshots: install
	$(BIN)/python docs/screenshots.py

benchmarks: prepare
	$(BIN)/python benchmarks/score_lexical.py
	$(BIN)/python benchmarks/score_lexical.py --processes 5
	$(BIN)/python benchmarks/worker_warm.py
	$(BIN)/python benchmarks/store.py
	$(BIN)/python benchmarks/retrieval.py
	$(BIN)/python benchmarks/leaderboard.py
	$(BIN)/python benchmarks/judge_throughput.py
	$(BIN)/python benchmarks/generate.py
	$(BIN)/python benchmarks/site.py
	$(BIN)/python benchmarks/scale_out.py
	$(BIN)/python benchmarks/faults.py

clean:
	rm -rf $(VENV) data/etc.duckdb .pytest_cache
