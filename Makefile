# Two commands do everything from a fresh clone: `make plan` and `make test`.
# The virtualenv is created on first use and refreshed whenever a requirements file changes.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
STACK ?= dev
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: plan check test lint bench schema clean

$(STAMP): requirements.txt requirements-dev.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -r requirements-dev.txt
	$(PY) -m pip install --quiet --no-deps -e .
	touch $(STAMP)

plan: $(STAMP)
	$(PY) -m lattice plan --stack $(STACK)

check: $(STAMP)
	$(PY) -m lattice check --stack $(STACK)

test: $(STAMP)
	$(PY) -m pytest -q

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

bench: $(STAMP)
	$(PY) bench/bench_plan.py

schema: $(STAMP)
	$(PY) -m lattice schema --output schema/stack-file.schema.json

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache out
