# Two commands: `make demo` (set up + main job on the sample data), `make test` (set up + suite).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: setup chromium demo test lint bench bench-text clean

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
	# the derived embedding models (static, ONNX exports) now, not on a user's first run
	HF_HUB_OFFLINE=1 $(BIN)/python -c "from linkage.text.embeddings import build_models; build_models()"
	touch $(STAMP)

# recordlinkage caps pandas below 3, so its interop tests (tests_pandas2/) run in a second,
# small environment: pandas 2.2 (the oldest pandas linkage supports), recordlinkage, pytest;
# no torch, Spark or GX. About half a minute to build.
PANDAS2 := .venv-pandas2
PANDAS2_STAMP := $(PANDAS2)/.installed-stamp

$(PANDAS2_STAMP): pyproject.toml
	test -x $(PANDAS2)/bin/python || $(PYTHON) -m venv $(PANDAS2)
	$(PANDAS2)/bin/python -m pip install --quiet "pandas==2.2.*" "pytest>=8" -e ".[recordlinkage]"
	touch $(PANDAS2_STAMP)

# The report and review-page tests drive the machine's Chromium (Debian's package; no download).
chromium:
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null)

setup: $(STAMP)

demo: $(BASE)
	$(BIN)/linkage dedupe sample_data/customers.csv --rules rules/customers.yaml --out out/customers

test: setup chromium $(PANDAS2_STAMP)
	$(BIN)/ruff check .
	# two workers (pytest-xdist): whole files each, the Spark files on one (tests/conftest.py)
	$(BIN)/python -m pytest -n 2
	$(PANDAS2)/bin/python -m pytest tests_pandas2

lint: setup
	$(BIN)/ruff check .

bench: setup
	$(BIN)/python bench/compare.py --rows 100000 1000000

# The other near-duplicate tools of bench/text_dedup_bench.py, each in an environment of its
# own (never in .venv): datatrove 0.10.1 (+ spaCy, its English word tokenizer, and pyarrow) and
# text-dedup 0.4.0 (+ graphframes-py; its Spark script also needs the graphframes JVM package,
# which Spark fetches from Maven, so without a network it stops at its connected components).
TEXTDEDUP := bench/.venv-textdedup
TEXTDEDUP_SPARK := bench/.venv-textdedup-spark

$(TEXTDEDUP)/.installed-stamp:
	test -x $(TEXTDEDUP)/bin/python || $(PYTHON) -m venv $(TEXTDEDUP)
	$(TEXTDEDUP)/bin/python -m pip install --quiet "datatrove[processing]==0.10.1" spacy pyarrow
	touch $@

$(TEXTDEDUP_SPARK)/.installed-stamp:
	test -x $(TEXTDEDUP_SPARK)/bin/python || $(PYTHON) -m venv $(TEXTDEDUP_SPARK)
	$(TEXTDEDUP_SPARK)/bin/python -m pip install --quiet "text-dedup==0.4.0" graphframes-py
	touch $@

bench-text: setup $(TEXTDEDUP)/.installed-stamp $(TEXTDEDUP_SPARK)/.installed-stamp
	nice -n 10 $(BIN)/python bench/text_dedup_bench.py --docs 100000

clean:
	rm -rf out .pytest_cache .ruff_cache
