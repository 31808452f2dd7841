# Two commands do everything from a fresh clone: `make plan` and `make test`. `make integration` adds the tier that
# runs Lattice's output through the real programs that consume it (root and apt: it installs them from Debian).
# The virtualenv is created on first use and refreshed whenever a requirements file changes.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
STACK ?= dev
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: plan check test integration lint bench schema policy-table docs validate-sarif clean

# One line per step: the install is quiet, so say what it is doing while it does it.
$(STAMP): requirements.txt requirements-dev.txt pyproject.toml
	@test -x $(PY) || { echo "make: creating the virtualenv $(VENV)"; $(PYTHON) -m venv $(VENV); }
	@echo "make: installing requirements-dev.txt into $(VENV) (the first time: a few minutes, needs PyPI)"
	@$(PY) -m pip install --quiet -r requirements-dev.txt
	@echo "make: installing lattice itself (editable)"
	@$(PY) -m pip install --quiet --no-deps -e .
	@touch $(STAMP)

plan: $(STAMP)
	@echo "make: planning stack $(STACK) offline under the mock engine, then its policy verdict"
	@$(PY) -m lattice plan --stack $(STACK) --check

check: $(STAMP)
	@echo "make: checking stack $(STACK) against the policy pack"
	@$(PY) -m lattice check --stack $(STACK)

# The suite starts two workers and about fifty Python processes (the CLI, the served policy pack), each importing
# Lattice's own modules: with PYTHONDONTWRITEBYTECODE set in the environment, every one of them compiled those modules
# from source again and each worker rewrote every test module's asserts again (about 25 s of CPU a run). The suite
# writes Python's bytecode caches (the __pycache__ folders .gitignore leaves out) whatever the environment says.
test: $(STAMP)
	@echo "make: running the test suite (pytest-xdist: one worker per core)"
	@PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -q -n auto --ignore=tests/integration

# The real-client tier (tests/integration): rendered VPN gateway files loaded by strongSwan and FRR, tunnels negotiated
# and BGP brought up in network namespaces, the interface script through shellcheck; the policy pack served from its own
# virtualenv built from policies/requirements.txt (needs PyPI). Needs root (namespaces, daemons);
# installs the Debian packages below when missing (charon-systemd is charon with vici; libcharon-extra-plugins has
# kernel-libipsec, libstrongswan-standard-plugins AES-GCM and the ECP groups; prometheus brings promtool, which checks
# and unit-tests Lattice's alert rules; prometheus-alertmanager brings amtool, which checks the Alertmanager configuration
# and walks its routes; nginx-light runs the central metrics receiver's and the weights export's planned configuration;
# rclone runs an inference endpoint's planned weights copy), and
# stops with exit 2 where it cannot.
INTEGRATION_PACKAGES := iproute2 strongswan-swanctl charon-systemd libcharon-extra-plugins \
  libstrongswan-standard-plugins libstrongswan-extra-plugins frr shellcheck prometheus prometheus-alertmanager \
  nginx-light rclone graphviz
# Node.js with npm runs Mermaid's parser over `lattice diagram`; Debian's nodejs and npm only where there is no npm
# (a Node.js from elsewhere brings its own).
integration: $(STAMP)
	@missing=$$(for p in $(INTEGRATION_PACKAGES); do dpkg-query -W -f='$${db:Status-Status}' "$$p" 2>/dev/null | \
	  grep -qx installed || echo "$$p"; done | tr '\n' ' '); \
	command -v npm >/dev/null || missing="$$missing nodejs npm"; \
	if [ "$$(id -u)" != 0 ]; then \
	  echo "make integration: needs root (it creates network namespaces and runs charon and FRR in them); run it as root, e.g. sudo make integration" >&2; exit 2; fi; \
	if [ -n "$$missing" ]; then \
	  command -v apt-get >/dev/null || { echo "make integration: needs the Debian packages $$missing and apt-get to install them; install them with your distribution's tools" >&2; exit 2; }; \
	  echo "make: installing $$missing from Debian (apt-get)"; \
	  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null || \
	    { echo "make integration: apt-get could not install $$missing" >&2; exit 2; }; fi
	@echo "make: running the integration tier (strongSwan, FRR, shellcheck in network namespaces; promtool; amtool; nginx; rclone; Mermaid, Graphviz)"
	@$(PY) -m pytest -q tests/integration

# zizmor (pinned in requirements-dev.txt) audits the workflows and the Dependabot config offline; any
# finding, whatever its severity, or a workflow it cannot parse fails the target.
lint: $(STAMP)
	@echo "make: ruff check and ruff format --check"
	@$(PY) -m ruff check -q .
	@$(PY) -m ruff format -q --check .
	@echo "make: zizmor over the workflows and the Dependabot config"
	@$(VENV)/bin/zizmor --offline --strict-collection --no-progress .github/workflows/ .github/dependabot.yml

# Figures beside issue 13's and issue 20's targets (several minutes): plan ÷ floor and the rest, and the test suite's
# wall time (SUITE=0 leaves the suite out); RUNS=N sets the runs.
bench: $(STAMP)
	@echo "make: benchmarks beside issue 13's targets (several minutes)"
	@$(PY) -m bench --runs $(or $(RUNS),3) $(if $(filter 0,$(SUITE)),,--suite)

# Optional: Microsoft's SARIF Multitool (npm registry) validates what `lattice check --format sarif` emits.
validate-sarif: $(STAMP)
	@npm ping --fetch-timeout=5000 --fetch-retries=0 >/dev/null 2>&1 || { \
	  echo "make validate-sarif: needs npm and the npm registry ($$(npm config get registry 2>/dev/null || echo 'npm not found')) to fetch @microsoft/sarif-multitool; neither answered within 5 s" >&2; exit 2; }
	mkdir -p out/sarif-multitool
	$(PY) -m lattice check --stack $(STACK) --format sarif --output out/$(STACK).sarif || true
	cd out/sarif-multitool && npm install --silent --no-save @microsoft/sarif-multitool@5.7.0
	cd out/sarif-multitool && npx @microsoft/sarif-multitool validate ../$(STACK).sarif -o ../$(STACK).validation.sarif
	$(PY) -c "import json,sys; r=json.load(open('out/$(STACK).validation.sarif'))['runs'][0].get('results',[]); print(len(r),'SARIF validation findings'); sys.exit(1 if r else 0)"

schema: $(STAMP)
	@echo "make: writing schema/stack-file.schema.json"
	@$(PY) -m lattice schema --output schema/stack-file.schema.json
	@echo "make: writing schema/package.schema.json (refused if it breaks consumers without a version bump)"
	@$(PY) -m lattice.components.package.schema

# The docs' policy table (docs/concepts/policies.md) and README's rule count, from the registry
# (tests/policies/test_registry.py holds them equal).
policy-table: $(STAMP)
	$(PY) -c "from pathlib import Path; from lattice.check.policy_table import update_count, update_table; from lattice.policies.registry import all_rules; rules = all_rules(); update_table(Path('docs/concepts/policies.md'), rules); update_count(Path('README.md'), rules)"

# The documentation site (mkdocs.yml, docs/): the reference pages and the prod diagram regenerated from the code,
# then MkDocs with the Material theme (pinned in requirements-dev.txt) builds it strictly into out/site.
docs: $(STAMP)
	@echo "make: regenerating docs/reference and the prod diagram from the code"
	@$(PY) -m lattice.docs
	@echo "make: mkdocs build --strict into out/site"
	@NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --quiet --site-dir out/site

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache out
