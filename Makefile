# clawmem — `make demo` opens the app on a demo workspace, `make test` runs the test suite.
# Both create .venv and install everything on first use (llama-cpp-python builds from source:
# about 5–10 minutes on 2 cores the first time; pip's wheel cache makes later installs fast).

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
PYTEST_ARGS ?=

.PHONY: install demo test soak lint typecheck screenshots record-embeddings bench clean

# llama.cpp is built for this CPU (-march=native) but without AMX: a CPU that lists AMX inside a
# VM whose hypervisor does not enable its tile state dies with SIGILL in the first matrix multiply
# (seen on an Intel Xeon guest, 2026-12-06). AVX-512 and the rest stay on where the CPU has them.
# The flags exist only for x86-64 compilers; other machines build as llama.cpp chooses.
NO_AMX := -mno-amx-tile -mno-amx-int8 -mno-amx-bf16
LLAMA_CMAKE_ARGS ?= $(if $(filter x86_64 amd64,$(shell uname -m)),-DCMAKE_C_FLAGS="$(NO_AMX)" -DCMAKE_CXX_FLAGS="$(NO_AMX)")

$(STAMP): pyproject.toml setup.py Makefile
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	CMAKE_ARGS='$(LLAMA_CMAKE_ARGS)' $(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

demo: install
	$(BIN)/clawmem --demo

# The suite in parallel, one worker per core (pytest-xdist); each test has its own temporary home
# and workspace, and each worker builds its own indexed templates. The slowest 15 are listed last.
# Lint (ruff and mypy over every package) runs first, so CI, which runs `make test`, checks it too.
PYTEST_WORKERS ?= auto
test: install lint
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --durations=15 $(PYTEST_ARGS)
	CLAWMEM_TEST_STORE=postgresql $(BIN)/python -m pytest -n $(PYTEST_WORKERS) $(SHARED_INDEX_TESTS) $(PYTEST_ARGS)

# The search tests, and Dreaming's and forget's (whose recall signals then go through the shared
# journal), again with every engine on a shared PostgreSQL index (pgserver's PostgreSQL 16 +
# pgvector, started per test process): the same answers from the other store (issue 39).
SHARED_INDEX_TESTS := tests/engine/test_search.py tests/engine/test_search_versions.py tests/engine/test_recency.py \
	tests/engine/test_dates.py tests/engine/test_ranking.py tests/engine/test_line_evidence.py \
	tests/engine/test_context.py tests/engine/test_demo_search.py tests/engine/test_dreaming.py \
	tests/engine/test_forget.py tests/engine/test_forget_participants.py

# The fault harness at full length: kill -9 at every write step of each scenario (CI samples 5),
# and the fuzzers (tests/fuzz) with ten times the examples, drawn at random.
soak: install
	CLAWMEM_SOAK=1 $(BIN)/python -m pytest tests/faults tests/fuzz -s $(PYTEST_ARGS)

# The packages installed as clawmem.<folder> (setup.py lists the same folders).
PACKAGES := engine shell cli mcp_server tui program

# mypy resolves clawmem.<package> through a tree of symlinks (the editable install's import hook is
# invisible to it), so each package is checked under the name it is imported by.
lint: install
	$(BIN)/ruff check $(PACKAGES) tests bench tools
	$(BIN)/ruff format --check $(PACKAGES) tests bench tools
	@mkdir -p .typecheck/clawmem && for p in $(PACKAGES); do ln -sfn ../../$$p .typecheck/clawmem/$$p; done
	cd .typecheck && MYPYPATH=. ../$(BIN)/mypy --cache-dir ../.mypy_cache $(addprefix -p clawmem.,$(PACKAGES))

# The TUI tests replay the real model's vectors (tests/tui/recorded_embeddings.py); after a
# change to what they embed, record again: runs the TUI tests live and rewrites the recording.
# Snapshot failures in that run are expected when the vectors changed: look at them, then update.
record-embeddings: install
	-CLAWMEM_RECORD_EMBEDDINGS=fresh $(BIN)/python -m pytest -q tests/tui
	@echo "recorded tests/fixtures/tui-embeddings.npz; now run make test and review any snapshot that changed"

screenshots: install
	$(BIN)/python -m tools.screenshots

bench: install
	$(BIN)/python bench/index_throughput.py
	$(BIN)/python bench/search_latency.py
	$(BIN)/python bench/locomo.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .typecheck
