# `make run` and `make test` are all a newcomer needs; see README.md (and docs/, `make docs`).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
HOST   ?= 127.0.0.1
PORT   ?= 5000
# Where people reach it: SVC_PUBLIC_URL when set (e.g. http://localhost:5000, for passkeys).
URL    := $(or $(SVC_PUBLIC_URL),http://$(HOST):$(PORT))

.PHONY: install run port-free migrate test test-fast test-image check-deploy lint docs bench translations clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	rm -f $(VENV)/.installed-*
	touch $@

migrate: install
	$(BIN)/flask --app wsgi db upgrade

# The issuer, the links in mail and the address printed agree with where it listens. Another
# port: `make run PORT=5001`. A port in use stops it before anything is installed or printed.
run: export SVC_PUBLIC_URL := $(URL)
run: port-free migrate
	@echo "svc-auth is serving on $(URL): open $(URL)/signup to create an account,"
	@echo "then $(URL)/account; the API reference is $(URL)/api/docs."
	@[ -n "$$SVC_MAIL_URL" ] || echo "Mail (confirmation and reset links) is written to this log (SVC_MAIL_URL to send it)."
	@echo "The embedded default (SQLite, one worker) for one machine: in production it goes behind a"
	@echo "buffering proxy (docs/operators/deployment.md)."
	$(BIN)/gunicorn -c gunicorn.conf.py --bind $(HOST):$(PORT) --workers 1 wsgi:app

port-free:
	@$(PYTHON) -c 'import socket, sys; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("$(HOST)", $(PORT)))' 2>/dev/null \
	|| { echo "Port $(PORT) on $(HOST) is in use: stop what listens there, or serve on another port: make run PORT=5001"; exit 1; }

# The whole suite, as CI runs it: every test on SQLite, and the app-factory tests of
# tests/support/databases.py's POSTGRES_SUITE again on a throwaway PostgreSQL, in one pytest
# session shared by TEST_WORKERS processes (tests/support/scheduling.py). It ends with the branch
# coverage of app/ (coverage.py through pytest-cov: the modules not wholly covered, and the total),
# the time the tests took on each database and the whole run's.
TEST_WORKERS ?= 2
XDIST := -n $(TEST_WORKERS) --dist loadgroup
# Bytecode is written (to __pycache__, ignored by git) even where the environment asks not to:
# pytest rewrites the asserts of every test module, and each worker and server would otherwise
# redo it and recompile on every run (collection alone took 19 s a worker instead of 9).
test test-fast: export PYTHONDONTWRITEBYTECODE :=

test: install
	@start=$$(date +%s); scripts/install-test-tools \
	&& SVC_TEST_DATABASE=sqlite,postgresql $(BIN)/python -m pytest $(XDIST) --durations=15 \
		-p pytest_cov --cov=app --cov-branch --cov-report=term:skip-covered; \
	status=$$?; elapsed=$$(( $$(date +%s) - start )); \
	echo "make test: $$(( elapsed / 60 )) min $$(( elapsed % 60 )) s in all (exit $$status)"; \
	exit $$status

# The inner loop, in a few minutes: tests/unit (the app-factory tests, which mirror app/) on
# SQLite only; no real server, no browser (tests/system), no repository-wide check (tests/test_*).
test-fast: install
	SVC_TEST_DATABASE=sqlite $(BIN)/python -m pytest $(XDIST) -q tests/unit

# The Containerfile as shipped, built with podman on a Debian base made here (mmdebstrap; kept in
# podman's store, so made once a machine) and run: migrate, serve, sign up, verify, refresh; then
# the compose file's shape (PostgreSQL, Redis, nginx with TLS: stand-ins from Debian's packages)
# ending in a sign-in through nginx (tests/system/image). Not in `make test`: a first build on a machine
# takes minutes.
test-image: install
	@start=$$(date +%s); scripts/install-test-tools image \
	&& SVC_TEST_IMAGE=1 SVC_TEST_DATABASE=sqlite $(BIN)/python -m pytest -p no:randomly -q \
		--durations=5 tests/system/image; \
	status=$$?; elapsed=$$(( $$(date +%s) - start )); \
	echo "make test-image: $$(( elapsed / 60 )) min $$(( elapsed % 60 )) s in all (exit $$status)"; \
	exit $$status

# nginx -t, systemd-analyze verify, promtool check/test rules on deploy/ (scripts/check-deploy).
check-deploy:
	scripts/install-test-tools
	scripts/check-deploy

lint: install
	$(BIN)/ruff check app tests bench
	$(BIN)/mypy

# The site in docs/ (MkDocs, Material theme) into build/site; --strict fails on a broken link or
# anchor, and the configuration reference must be what the settings generate. The site must read
# offline: nothing loaded from another origin (scripts/check-site-offline).
docs: install
	$(BIN)/python scripts/settings-reference --check
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict
	$(BIN)/python scripts/check-site-offline build/site

bench: install
	scripts/install-bench-tools
	$(BIN)/python bench/run.py
	$(BIN)/python bench/enumeration.py

# Extract every message (babel.cfg), bring each language's catalogue up to date, compile the .mo
# files the service reads. Adding a language: docs/accounts/languages.md.
TRANSLATIONS := app/translations
translations: install
	$(BIN)/pybabel extract -F babel.cfg --no-location --sort-output -k N_ -k _l \
		-o $(TRANSLATIONS)/messages.pot .
	$(BIN)/pybabel update -i $(TRANSLATIONS)/messages.pot -d $(TRANSLATIONS) --no-fuzzy-matching \
		--ignore-obsolete --no-wrap
	$(BIN)/pybabel compile -d $(TRANSLATIONS) --statistics

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache
