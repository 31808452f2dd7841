# Two commands do everything from a fresh clone: `make plan` and `make test`.
# The virtualenv is created on first use and refreshed whenever a requirements file changes.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
STACK ?= dev
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: plan check test lint bench schema policy-table validate-sarif clean

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

# zizmor (pinned in requirements-dev.txt) audits the workflows and the Dependabot config offline; any
# finding, whatever its severity, or a workflow it cannot parse fails the target.
lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(VENV)/bin/zizmor --offline --strict-collection --no-progress .github/workflows/ .github/dependabot.yml

# Figures beside issue 13's targets (several minutes); SUITE=1 also times the test suite, RUNS=N sets the runs.
bench: $(STAMP)
	$(PY) -m bench --runs $(or $(RUNS),3) $(if $(SUITE),--suite)

# Optional: Microsoft's SARIF Multitool (npm registry) validates what `lattice check --format sarif` emits.
validate-sarif: $(STAMP)
	mkdir -p out/sarif-multitool
	$(PY) -m lattice check --stack $(STACK) --format sarif --output out/$(STACK).sarif || true
	cd out/sarif-multitool && npm install --silent --no-save @microsoft/sarif-multitool@5.7.0
	cd out/sarif-multitool && npx @microsoft/sarif-multitool validate ../$(STACK).sarif -o ../$(STACK).validation.sarif
	$(PY) -c "import json,sys; r=json.load(open('out/$(STACK).validation.sarif'))['runs'][0].get('results',[]); print(len(r),'SARIF validation findings'); sys.exit(1 if r else 0)"

schema: $(STAMP)
	$(PY) -m lattice schema --output schema/stack-file.schema.json

# README's policy table, from the registry (tests/policies/test_registry.py holds them equal).
policy-table: $(STAMP)
	$(PY) -c "from pathlib import Path; from lattice.policy_table import update_readme; from policies.registry import all_rules; update_readme(Path('README.md'), all_rules())"

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache out
