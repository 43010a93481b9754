# The commands of the README. Each creates its virtual environment and installs what it needs first.
PYTHON ?= python3
# What `make run` and `make bench` use: dbgateway and what serving needs, nothing else.
VENV := .venv
BIN := $(VENV)/bin
# What `make test` uses: dbgateway with its test tools, and the example SQLite driver beside it. Kept apart, so
# that the tests never change what `make run` serves (the example driver installed in .venv made the
# development gateway accept base_type=sqlite) nor what it installs (72 packages instead of 24).
TEST_VENV := .venv-test
TEST_BIN := $(TEST_VENV)/bin

.PHONY: run test bench clean install-venv install-test-venv

# `make run` and `make test` started together may both find their environment missing: installs hold a lock
# (flock, util-linux), and whoever finds an install done when it gets the lock does nothing.
LOCK := .venv.lock

$(BIN)/dbgateway: pyproject.toml
	@flock $(LOCK) $(MAKE) --no-print-directory install-venv

install-venv:
	@if [ -x $(BIN)/dbgateway ] && [ $(BIN)/dbgateway -nt pyproject.toml ]; then exit 0; fi; \
	set -e; \
	echo "installing dbgateway into $(VENV)"; \
	$(PYTHON) -m venv $(VENV); \
	$(BIN)/pip install --quiet --upgrade pip; \
	$(BIN)/pip install --quiet -e .; \
	touch $(BIN)/dbgateway

# The test environment: editable installs, so code changes need no reinstall; only a new pyproject.toml
# (dependencies, entry points) of dbgateway or of the example driver does, which the prerequisites say.
$(TEST_BIN)/pytest: pyproject.toml examples/sqlite-driver/pyproject.toml
	@flock $(LOCK) $(MAKE) --no-print-directory install-test-venv

install-test-venv:
	@if [ -x $(TEST_BIN)/pytest ] && [ $(TEST_BIN)/pytest -nt pyproject.toml ] \
		&& [ $(TEST_BIN)/pytest -nt examples/sqlite-driver/pyproject.toml ]; then exit 0; fi; \
	set -e; \
	echo "installing dbgateway, its test tools and the example driver into $(TEST_VENV)"; \
	$(PYTHON) -m venv $(TEST_VENV); \
	$(TEST_BIN)/pip install --quiet --upgrade pip; \
	$(TEST_BIN)/pip install --quiet -e '.[test]' -e examples/sqlite-driver; \
	touch $(TEST_BIN)/pytest

## run: install, then start the gateway with embedded defaults (127.0.0.1:8080, ./data)
## (a .venv that an older `make test` gave the example driver loses it first)
run: $(BIN)/dbgateway
	@if ls $(VENV)/lib/python*/site-packages/dbgateway_sqlite_example-*.dist-info >/dev/null 2>&1; then \
		echo "removing the example SQLite driver from $(VENV): the tests keep it in $(TEST_VENV)"; \
		$(BIN)/pip uninstall --quiet --yes dbgateway-sqlite-example; \
	fi
	$(BIN)/dbgateway serve

## test: install into .venv-test (with the test tools and the example driver), make sure PostgreSQL answers
## (starting the local cluster if stopped) and Chromium is installed (apt-get install -y chromium if missing, for
## the console's browser tests), run every test: tests/ and the contract kit against the example driver
test: $(TEST_BIN)/pytest
	$(TEST_BIN)/python scripts/ensure_postgres.py
	$(TEST_BIN)/python scripts/ensure_chromium.py
	$(TEST_BIN)/pytest $(PYTEST_ARGS)

## bench: install, make sure PostgreSQL answers and wrk is installed (apt-get if missing), run bench/run.py
## (about 3 minutes; results in bench/results/, table on stdout; BENCH_ARGS="--workers 1" and so on)
bench: $(BIN)/dbgateway
	$(BIN)/python scripts/ensure_postgres.py
	@command -v wrk >/dev/null || { echo "bench: wrk is missing; installing it with apt-get install -y wrk"; \
		apt-get install -y wrk >/dev/null || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }; }
	$(BIN)/python -m bench.run $(BENCH_ARGS)

clean:
	rm -rf $(VENV) $(TEST_VENV) $(LOCK) build *.egg-info .pytest_cache
