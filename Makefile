PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

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
	$(BIN)/pytest -q

lint: install
	$(BIN)/ruff check arena tests benchmarks
	$(BIN)/ruff format --check arena tests benchmarks
	$(BIN)/mypy

bench: install
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) runs .pytest_cache
