# The commands of the README. Each creates .venv and installs what is needed first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test bench clean

# `make run` and `make test` started together both find .venv missing: the install holds a lock
# (flock, util-linux), and whoever gets it second finds the install done and does nothing.
LOCK := .venv.lock

$(BIN)/dbgateway: pyproject.toml
	@flock $(LOCK) $(MAKE) --no-print-directory install-venv

.PHONY: install-venv
install-venv:
	@if [ -x $(BIN)/dbgateway ] && [ $(BIN)/dbgateway -nt pyproject.toml ]; then exit 0; fi; \
	set -e; \
	echo "installing dbgateway into $(VENV)"; \
	$(PYTHON) -m venv $(VENV); \
	$(BIN)/pip install --quiet --upgrade pip; \
	$(BIN)/pip install --quiet -e '.[test]'; \
	touch $(BIN)/dbgateway

# The example driver (examples/sqlite-driver) is installed editable beside dbgateway, so `make test` runs
# the driver contract kit (gateway.testing) against it. Editable: its code changes need no reinstall; only
# a new pyproject.toml (entry points) or a rebuilt venv does, which the stamp's prerequisites say.
SQLITE_EXAMPLE := $(VENV)/.sqlite-example-installed

$(SQLITE_EXAMPLE): examples/sqlite-driver/pyproject.toml $(BIN)/dbgateway
	@flock $(LOCK) $(BIN)/pip install --quiet --no-deps -e examples/sqlite-driver
	@touch $@

## run: install, then start the gateway with embedded defaults (127.0.0.1:8080, ./data)
run: $(BIN)/dbgateway
	$(BIN)/dbgateway serve

## test: install (with the example driver), make sure PostgreSQL answers (starting the local cluster if
## stopped), run every test: tests/ and the contract kit against the example driver
test: $(BIN)/dbgateway $(SQLITE_EXAMPLE)
	$(BIN)/python scripts/ensure_postgres.py
	$(BIN)/pytest $(PYTEST_ARGS)

## bench: install, make sure PostgreSQL answers and wrk is installed (apt-get if missing), run bench/run.py
## (about 3 minutes; results in bench/results/, table on stdout; BENCH_ARGS="--workers 1" and so on)
bench: $(BIN)/dbgateway
	$(BIN)/python scripts/ensure_postgres.py
	@command -v wrk >/dev/null || { echo "bench: wrk is missing; installing it with apt-get install -y wrk"; \
		apt-get install -y wrk >/dev/null || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }; }
	$(BIN)/python -m bench.run $(BENCH_ARGS)

clean:
	rm -rf $(VENV) $(LOCK) build *.egg-info .pytest_cache
