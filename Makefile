# Entry points for a fresh machine: `make test` (fast suite, compiled with XLA's fast-compile
# flags: tests/conftest.py), `make test-slow` (tests marked `slow`: statistical, subprocess and
# notebook runs), `make test-codegen` (the operator tests with XLA's default code generation, what
# users run), `make demo`, `make docs` (the documentation site in docs/_build/html, warnings as
# errors: docs/README.md) and `make lint` (ruff check and ruff format --check).
# Each creates (or refreshes, when pyproject.toml changed) the virtualenv in .venv.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
DOCS_STAMP := $(VENV)/.docs-stamp
LINT_STAMP := $(VENV)/.lint-stamp
PYTEST_ARGS ?= -n 2

.PHONY: test test-slow test-codegen demo docs lint bench venv clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

# The docs and lint extras, installed over the test venv (re-installed with it when pyproject changes).
$(DOCS_STAMP): $(STAMP)
	$(PY) -m pip install -q -e '.[test,docs]'
	touch $(DOCS_STAMP)

$(LINT_STAMP): $(STAMP)
	$(PY) -m pip install -q -e '.[test,lint]'
	touch $(LINT_STAMP)

docs: $(DOCS_STAMP)
	$(VENV)/bin/sphinx-build -W --keep-going -b html docs docs/_build/html

lint: $(LINT_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

test: $(STAMP)
	STE_JAX_TEST_FAST_COMPILE=1 $(PY) -m pytest -q -m "not slow" $(PYTEST_ARGS) tests --doctest-modules ste_jax

test-codegen: $(STAMP)
	$(PY) -m pytest -q -m "not slow" $(PYTEST_ARGS) tests/ops tests/exact

test-slow: $(STAMP)
	$(PY) -m pytest -q -m slow $(PYTEST_ARGS) tests

demo: $(STAMP)
	$(PY) -m ste_jax demo

bench: $(STAMP)
	$(PY) benchmarks/operators.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info docs/_build docs/api docs/notebooks
