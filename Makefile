# `make run` and `make test` are all a newcomer needs; see README.md (and docs/, `make docs`).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
HOST   ?= 127.0.0.1
PORT   ?= 5000
# Where people reach it: SVC_PUBLIC_URL when set (e.g. http://localhost:5000, for passkeys).
URL    := $(or $(SVC_PUBLIC_URL),http://$(HOST):$(PORT))

.PHONY: install run migrate test lint docs bench translations clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	rm -f $(VENV)/.installed-*
	touch $@

migrate: install
	$(BIN)/flask --app wsgi db upgrade

# The issuer, the links in mail and the address printed agree with where it listens.
run: export SVC_PUBLIC_URL := $(URL)
run: migrate
	@echo "svc-auth is serving on $(URL): open $(URL)/signup to create an account,"
	@echo "then $(URL)/account; the API reference is $(URL)/api/docs."
	@[ -n "$$SVC_MAIL_URL" ] || echo "Mail (confirmation and reset links) is written to this log (SVC_MAIL_URL to send it)."
	@echo "The embedded default (SQLite, one worker) for one machine: in production it goes behind a"
	@echo "buffering proxy (docs/operators/deployment.md)."
	$(BIN)/gunicorn -c gunicorn.conf.py --bind $(HOST):$(PORT) --workers 1 wsgi:app

# Everything on SQLite, then every app-factory test again on a throwaway PostgreSQL.
POSTGRES_SUITE := tests/api tests/captcha tests/oauth tests/oidc tests/recovery tests/pages tests/domain tests/test_*.py

test: install
	scripts/install-test-tools
	$(BIN)/python -m pytest
	SVC_TEST_DATABASE=postgresql $(BIN)/python -m pytest -q $(POSTGRES_SUITE)

lint: install
	$(BIN)/ruff check app tests bench
	$(BIN)/mypy

# The site in docs/ (MkDocs, Material theme) into build/site; --strict fails on a broken link or
# anchor, and the configuration reference must be what the settings generate.
docs: install
	$(BIN)/python scripts/settings-reference --check
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

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
