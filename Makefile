# Every target sets up what it needs; `make check` is what CI runs.
VENV      ?= .venv
PYTHON    ?= python3
PY        := $(VENV)/bin/python
CUSTODIAN := $(VENV)/bin/custodian
STAMP     := $(VENV)/.installed-stamp
AXE       := .cache/axe/node_modules/axe-core/axe.min.js
DOMAIN    ?=
DEMO_DOMAINS := $(patsubst demo/%-answer.md,%,$(wildcard demo/*-answer.md))

LOCKS     := requirements/build.txt requirements/dev.txt

.PHONY: setup system-packages lock test check format lint types k8s docs bench hub agent-run dry-run demo demo-reset clean

setup: $(STAMP) $(AXE)

# axe-core for the review page's accessibility test, from its lock (integrity-checked by npm ci;
# --prefer-offline takes it from npm's cache when it is there).
$(AXE): tests/support/axe/package.json tests/support/axe/package-lock.json
	scripts/system_packages.sh npm
	mkdir -p .cache/axe && cp tests/support/axe/package.json tests/support/axe/package-lock.json .cache/axe/
	npm ci --prefix .cache/axe --prefer-offline --ignore-scripts --no-audit --no-fund

# Every package comes from the locks, hash-checked; the project itself is installed without
# resolving anything, and `pip check` fails if pyproject.toml names a dependency the lock lacks.
$(STAMP): pyproject.toml $(LOCKS)
	PYTHON=$(PYTHON) scripts/system_packages.sh venv
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --require-hashes $(foreach lock,$(LOCKS),-r $(lock))
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	$(PY) -m pip check
	@touch $(STAMP)

# Regenerates the locks from pyproject.toml and requirements/build.in against the public index
# (local pip configuration is ignored so the hashes are the index's); pins already in a lock are
# kept unless pyproject.toml excludes them. Add PIP_COMPILE_ARGS=--upgrade to move every pin.
PIP_COMPILE := PIP_CONFIG_FILE=/dev/null PIP_FIND_LINKS= PIP_EXTRA_INDEX_URL= \
	$(VENV)/bin/pip-compile --quiet --generate-hashes --no-emit-index-url --strip-extras \
	$(PIP_COMPILE_ARGS)
lock: setup
	$(PY) -m pip install --quiet 'pip-tools>=7.4,<8'
	$(PIP_COMPILE) --allow-unsafe --output-file=requirements/build.txt requirements/build.in
	$(PIP_COMPILE) --output-file=requirements/runtime.txt pyproject.toml
	$(PIP_COMPILE) --allow-unsafe --constraint=requirements/runtime.txt --extra=dev \
		--output-file=requirements/dev.txt pyproject.toml

test: setup
	$(PY) -m pytest -q -n auto

format: setup
	$(VENV)/bin/ruff format runtime tests bench k8s evals scripts
	$(VENV)/bin/ruff check --fix runtime tests bench k8s evals scripts

lint: setup
	$(VENV)/bin/ruff format --check runtime tests bench k8s evals scripts
	$(VENV)/bin/ruff check runtime tests bench k8s evals scripts

types: setup
	$(VENV)/bin/mypy
	$(VENV)/bin/mypy --strict k8s/validate.py k8s/manifest_policy.py k8s/cron_period.py \
		k8s/workload_policy.py k8s/fleet_policy.py k8s/fleet_page_policy.py k8s/schedule_policy.py k8s/new_domain.py

# Debian's npm, chromium, chromium-driver, prometheus-pushgateway and prometheus (promtool): as
# root they are installed when missing; otherwise make stops here and prints the command.
system-packages:
	scripts/system_packages.sh

check: system-packages lint types k8s test

k8s: setup
	$(PY) k8s/validate.py

# docs/commands.md from the parser and docs/settings.md from settings/table.py: run after changing
# either (tests/docs/test_reference_docs.py fails until you do).
docs: setup
	$(PY) scripts/gen_reference.py

bench: setup
	$(PY) bench/run.py
	$(PY) bench/history.py $(BENCH_ARGS)
	$(PY) bench/approvals.py
	$(PY) bench/startup.py
	$(PY) bench/faces.py
	$(PY) bench/tracker_redmine.py
	$(PY) bench/skip.py
	$(PY) bench/grants_month_hub.py
	$(PY) bench/k8s_fleet.py
	$(PY) bench/watch.py
	$(PY) bench/runs_page.py
	$(PY) bench/canon_retrieval.py
	$(PY) bench/fleet_queue.py
	$(PY) bench/fleet_queue.py --shards 4
	$(PY) bench/real_model.py
	$(PY) bench/tracker.py

hub: setup
	$(CUSTODIAN) hub serve --seed demo --db .custodian/hub.sqlite3

agent-run: setup
	@test -n "$(DOMAIN)" || { echo "usage: make agent-run DOMAIN=<domain>" >&2; exit 2; }
	$(CUSTODIAN) run --domain $(DOMAIN) --embedded-defaults

dry-run: setup
	@test -n "$(DOMAIN)" || { echo "usage: make dry-run DOMAIN=<domain>" >&2; exit 2; }
	$(CUSTODIAN) run --domain $(DOMAIN) --embedded-defaults --dry-run

# The whole loop on the embedded reference hub, with a recorded model answer (demo/<domain>-answer.md):
# one run that executes, queues and denies, then the approval queue. --force: a second demo run
# really runs, and shows what Custodian refuses to do twice.
demo: setup
	@test -f demo/$(or $(DOMAIN),website)-answer.md || { echo "no demo answer: demo/$(DOMAIN)-answer.md (the demo domains: $(DEMO_DOMAINS))" >&2; exit 2; }
	$(CUSTODIAN) run --domain $(or $(DOMAIN),website) --hub embedded --llm file:demo/$(or $(DOMAIN),website)-answer.md --force
	$(CUSTODIAN) approvals list --domain $(or $(DOMAIN),website) --status pending
	@echo
	@echo "approve: $(CUSTODIAN) approvals approve <ID> --hub embedded"
	@echo "reject:  $(CUSTODIAN) approvals reject <ID> --reason <why>"
	@echo "or read the note and decide in a browser: $(CUSTODIAN) review --hub embedded"
	@echo "back to the seed (memory, hub data and canon): make demo-reset"

# Back to the seed: the hub's data and every run's memory go (all of it ignored by git), and the
# canon is put back as committed, since an approved `write_canon` rewrites or adds a canon file.
# A pending item, a kept word or a canon edit is a person's: listed, and dropped only with FORCE=1.
demo-reset:
	@test "$(FORCE)" = 1 || $(dir $(CUSTODIAN))python scripts/demo_reset_check.py memory canon
	git clean -fdqX .custodian memory
	git checkout -- canon
	git clean -fdq canon

clean:
	rm -rf $(VENV) .custodian .pytest_cache .mypy_cache .ruff_cache
