# prchain — every entry point a user or CI needs.
PY      ?= .venv/bin/python
PRCHAIN ?= .venv/bin/prchain
# pytest-xdist workers for `make test`. On 2 cores three keep both busier than two while a Docker
# test waits on the engine (docs/evaluation-log.md, "CI inside its 45 minutes again").
TEST_WORKERS ?= 3
export PRCHAIN_TEST_POSTGRES_URL ?= postgresql+psycopg://prchain:prchain@127.0.0.1:5432/prchain

.PHONY: install system harbor test test-fast lint schema migration bench run mine demo report-demo clean

install: .venv/.installed system harbor ## Python environment (with the Ray extra), Docker engine, PostgreSQL, base image, Harbor

.venv/.installed: pyproject.toml
	python3 -m venv .venv
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev,ray,report,mini]'
	touch $@

system:
	bash scripts/setup-system.sh
	$(PRCHAIN) env base

harbor: ## Harbor (Python >= 3.12, Docker Compose v2) in .harbor/, for the Harbor task format's tests
	bash scripts/setup-harbor.sh

test: .venv/.installed ## the whole suite, Docker and PostgreSQL tests included
	$(PY) -m pytest -q -m "not bench" -n $(TEST_WORKERS) --dist loadfile --durations=30

test-fast: .venv/.installed ## skip the Docker-marked tests (for machines without an engine)
	$(PY) -m pytest -q -m "not docker and not bench"

lint: .venv/.installed
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	.venv/bin/lint-imports
	$(PY) -m mypy prchain

schema: .venv/.installed ## regenerate prchain/store/schema.sql from the models
	$(PY) -m prchain.store.schema

migration: .venv/.installed ## a migration for your model change: make migration m="what changed"
	@test -n "$(m)" || { echo 'usage: make migration m="what changed"'; exit 2; }
	$(PY) -m prchain.store.migrate revision "$(m)"
	$(PY) -m ruff format -q prchain/store/migrations/versions
	$(PY) -m ruff check -q --fix prchain/store/migrations/versions
	$(PY) -m prchain.store.schema

bench: .venv/.installed ## speed figures of every stage (see bench/)
	$(PY) bench/run_all.py

run: .venv/.installed ## the whole job on repos.txt: mine → chains → … → trajectories, then the funnel (needs GITHUB_TOKEN)
	$(PRCHAIN) run --repos-file repos.txt

mine: .venv/.installed ## mine repos.txt from GitHub (needs GITHUB_TOKEN)
	$(PRCHAIN) mine --repos-file repos.txt

demo: .venv/.installed ## the whole pipeline offline on a repo made here, with the scripted LLM server
	bash scripts/demo.sh

report-demo: .venv/.installed ## HTML report of the demo store (built first if missing) plus PNG screenshots
	test -f data/demo/prchain.db || bash scripts/demo.sh
	$(PRCHAIN) report data/demo/report --config examples/demo.yaml --db sqlite:///data/demo/prchain.db
	$(PY) scripts/screenshots.py data/demo/report

clean:
	rm -rf .venv data bench/out
