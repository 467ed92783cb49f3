PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Processes `make test` runs the suite on (pytest-xdist; each takes whole test files).
TEST_PROCESSES ?= 2

.PHONY: install demo test lint bench bench-smoke clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

demo: install
	$(BIN)/arena run tournaments/demo.yaml
	$(BIN)/arena leaderboard runs/demo

test: install
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
	  || [ -n "$$ARENA_CHROMIUM" ] \
	  || echo "make test: chromium not found, so the browser tests (tests/htmlreport, tests/viewer) are SKIPPED; install it with 'apt-get install -y chromium' as root (.ci/run does)"
	$(BIN)/pytest -q -rs -n $(TEST_PROCESSES) --dist loadfile

lint: install
	$(BIN)/ruff check arena tests benchmarks
	$(BIN)/ruff format --check arena tests benchmarks
	$(BIN)/mypy

bench: install
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

# Every benchmark at its small `--smoke` size, so none rots unseen (CI runs this).
# Each one's output goes to test-artifacts/bench-smoke/; a failure prints its tail.
# `make bench-smoke BENCHMARKS=benchmarks/bench_viewer.py` runs some of them.
SMOKE_LOGS := test-artifacts/bench-smoke
BENCHMARKS ?= $(wildcard benchmarks/bench_*.py)
bench-smoke: install
	@mkdir -p $(SMOKE_LOGS); all=$$(date +%s); \
	for b in $(BENCHMARKS); do \
	  name=$$(basename $$b .py); start=$$(date +%s); \
	  if ! $(BIN)/python $$b --smoke > $(SMOKE_LOGS)/$$name.log 2>&1; then \
	    tail -n 30 $(SMOKE_LOGS)/$$name.log; echo "bench-smoke: $$b --smoke FAILED"; exit 1; \
	  fi; \
	  echo "bench-smoke: $$name $$(( $$(date +%s) - start )) s $$(grep -m1 '^skipped:' $(SMOKE_LOGS)/$$name.log)"; \
	done; \
	echo "bench-smoke: every benchmark ran in $$(( $$(date +%s) - all )) s"

clean:
	rm -rf $(VENV) runs .pytest_cache test-artifacts
