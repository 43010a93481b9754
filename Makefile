# The two commands of the README. Both create .venv and install what is needed first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test bench clean

$(BIN)/dbgateway: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

## run: install, then start the gateway with embedded defaults (127.0.0.1:8080, ./data)
run: $(BIN)/dbgateway
	$(BIN)/dbgateway serve

## test: install, make sure PostgreSQL answers (starting the local cluster if stopped), run every test
test: $(BIN)/dbgateway
	$(BIN)/python scripts/ensure_postgres.py
	$(BIN)/pytest $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
