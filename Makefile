# The README's two commands: `make demo` and `make test`. Each creates .venv
# (Python 3.11+) and installs cellplane with its test extra when missing.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint unit functional integration venv clean

venv: $(STAMP)

$(STAMP): setup.cfg pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/cellplane demo

# The import contract (.importlinter) first: a broken layer fails in seconds.
test: lint
	$(BIN)/python -m pytest tests

lint: $(STAMP)
	$(BIN)/lint-imports

unit: $(STAMP)
	$(BIN)/python -m pytest tests/unit

functional: $(STAMP)
	$(BIN)/python -m pytest tests/functional

integration: $(STAMP)
	$(BIN)/python -m pytest tests/integration

clean:
	rm -rf $(VENV) build *.egg-info
