# The two set-up commands: `make demo` and `make test`. Each creates .venv on a fresh machine.
# `make test` = `make lint` (ruff, mypy --strict; versions pinned in the test extra), the system packages of the
# browser and PostgreSQL tests (.ci/system-deps: Debian's chromium and postgresql, installed as root, named
# otherwise), then the fast suite: every test not marked `slow` (`make test-slow` runs those; .ci/run runs both).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip

.PHONY: demo test test-slow bench lint clean system-deps

$(VENV)/.base:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	touch $@

$(VENV)/.demo: $(VENV)/.base pyproject.toml
	$(PIP) install --quiet -e '.[plot,web]'
	touch $@

$(VENV)/.test: $(VENV)/.base pyproject.toml
	$(PIP) install --quiet -e '.[test,plot,web,interop,dask,parquet]'
	touch $@

$(VENV)/.bench: $(VENV)/.base pyproject.toml
	$(PIP) install --quiet -e '.[bench]'
	touch $@

demo: $(VENV)/.demo
	$(PY) examples/demo.py
	$(PY) examples/dpsgd.py
	$(VENV)/bin/optcomp plan examples/census_plan.toml
	@echo "The planner as a local web page: $(VENV)/bin/optcomp serve  (http://127.0.0.1:8000)"

test: lint system-deps
	$(PY) -m pytest -n 2 -m "not slow" tests

# chromium and postgresql for the browser and PostgreSQL tests (the same script .ci/run uses, through `make test`).
system-deps:
	@.ci/system-deps

# Long hypothesis hunts and sweeps (marked `slow`); .ci/run runs them after `make test`.
test-slow: $(VENV)/.test
	$(PY) -m pytest -n 2 -m slow tests

bench: $(VENV)/.bench
	$(PY) benchmarks/run_all.py

lint: $(VENV)/.test
	$(PY) -m ruff check src tests
	$(PY) -m mypy src/optcomp

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .hypothesis
