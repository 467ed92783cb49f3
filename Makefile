PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Processes `make test` runs the suite on (pytest-xdist; each takes whole test files).
TEST_PROCESSES ?= 2

.PHONY: install demo test lint bench clean

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

clean:
	rm -rf $(VENV) runs .pytest_cache test-artifacts
