# `make run` and `make test` are all a newcomer needs; see README.md.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
HOST   ?= 127.0.0.1
PORT   ?= 5000

.PHONY: install run migrate test lint bench translations clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	rm -f $(VENV)/.installed-*
	touch $@

migrate: install
	$(BIN)/flask --app wsgi db upgrade

run: migrate
	@echo "svc-auth on http://$(HOST):$(PORT): the embedded default (SQLite, one worker), for one machine."
	@echo "It reads requests straight from clients: in production it goes behind a buffering proxy (README, Deployment)."
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

bench: install
	scripts/install-bench-tools
	$(BIN)/python bench/run.py
	$(BIN)/python bench/enumeration.py

# Extract every message (babel.cfg), bring each language's catalogue up to date, compile the .mo
# files the service reads. Adding a language: README, "Languages".
TRANSLATIONS := app/translations
translations: install
	$(BIN)/pybabel extract -F babel.cfg --no-location --sort-output -k N_ -k _l \
		-o $(TRANSLATIONS)/messages.pot .
	$(BIN)/pybabel update -i $(TRANSLATIONS)/messages.pot -d $(TRANSLATIONS) --no-fuzzy-matching \
		--ignore-obsolete --no-wrap
	$(BIN)/pybabel compile -d $(TRANSLATIONS) --statistics

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache
