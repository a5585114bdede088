# Setup is part of each target: on a fresh machine `make demo` and `make test` are all it takes.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test test-fast lint clean

## Build the index of the sample docs/, ask it two questions (one it cannot answer), say how to run semsearch.
demo: $(VENV)/.installed-base
	$(BIN)/semsearch build docs --index index
	$(BIN)/semsearch ask "Przeprowadzam się, da się przekierować paczkę pod nowy adres?" -k 1
	$(BIN)/semsearch ask "Jaka jest pogoda w Krakowie?" || echo "(exit code $$?: no answer in docs/, as expected)"
	@echo "semsearch is installed at $(BIN)/semsearch: run 'source $(BIN)/activate' to put it on your PATH, or 'pipx install .' for everyday use"

# The test targets let Python and pytest write bytecode even where the environment says not to
# (PYTHONDONTWRITEBYTECODE=1, common in containers and CI images; an empty value counts as unset):
# without it, each of the two workers compiles every module and pytest rewrites the asserts of every
# test file again on every run, seconds of each worker's collection. What is written is __pycache__/,
# which git ignores.
test test-fast: export PYTHONDONTWRITEBYTECODE :=

## Run the whole test suite (installs CPU torch and the sentence-transformers extra first), on two
## workers: a file's tests keep their order (loadfile), and each worker builds the sample index once.
test: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest -n 2 --dist loadfile

## The quick lane while working: ruff and the tests not marked slow, on two workers (no real model;
## under 30 s on an idle 2-core machine once installed). A file's tests keep their order (loadfile).
test-fast: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest -m "not slow" -n 2 --dist loadfile

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed-base: pyproject.toml | $(VENV)/bin/python
	$(BIN)/pip install -q -e .
	touch $@

# CPU torch first: without it, sentence-transformers pulls a CUDA build of several GB.
$(VENV)/.installed-test: pyproject.toml | $(VENV)/bin/python
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[test]'
	touch $@ $(VENV)/.installed-base

clean:
	rm -rf $(VENV) index
