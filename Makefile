# Two commands: `make demo` (set up + main job on the sample data), `make test` (set up + suite).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: setup chromium demo test lint bench clean

BASE := $(VENV)/.base-stamp

# What the demo needs: the package and its required dependencies (pandas, scikit-learn, ...),
# a few hundred MB. No torch, Spark or Great Expectations: those are extras, loaded only when
# a rule asks for them.
$(BASE): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $(BASE)

# Everything the suite exercises: every extra.
$(STAMP): $(BASE)
	# torch first, pinned to the CPU build, so the text extra does not pull a CUDA one
	$(BIN)/python -m pip install --quiet "torch==2.13.0"
	$(BIN)/python -m pip install --quiet -e ".[all]"
	touch $(STAMP)

# The report and review-page tests drive the machine's Chromium (Debian's package; no download).
chromium:
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null)

setup: $(STAMP)

demo: $(BASE)
	$(BIN)/linkage dedupe sample_data/customers.csv --rules rules/customers.yaml --out out/customers

test: setup chromium
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

lint: setup
	$(BIN)/ruff check .

bench: setup
	$(BIN)/python bench/compare.py --rows 100000 1000000

clean:
	rm -rf out .pytest_cache .ruff_cache
