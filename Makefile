# The README's two commands: `make demo` and `make test`. Each creates .venv
# (Python 3.11+) and installs cellplane with its test extra when missing.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint unit functional integration venv clean

venv: $(STAMP)

# --no-compile: Python compiles a module when it is first imported (and
# keeps the .pyc), so only what runs is compiled, not all 8,000 files of
# the venv (about 13 s of CPU less per install).
$(STAMP): setup.cfg pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --no-compile -e '.[test]'
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/cellplane demo

# The import contract (.importlinter) first: a broken layer fails in seconds.
# Every test runs on TEST_WORKERS pytest-xdist workers, a file per worker at
# a time: each test has its own vhosts and databases (a file's shared
# deployment stays on one worker), and a test that restarts its broker has
# a node of its own (tests/integration/conftest.py's own_rabbit). Integration tests mostly wait
# on their daemons, so three workers on 2 cores keep both busy. Files are
# handed out in collection order (--no-loadscope-reorder; tests/conftest.py
# puts the slow integration files first), not xdist's default of the files
# with most tests first, which left the slowest files for the end.
# The 40 slowest tests are listed at the end: where the suite's time goes.
TEST_WORKERS ?= 3
test: lint
	$(BIN)/python -m pytest tests -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=40

# The import contract, then ruff (pyflakes, pycodestyle, import order,
# bugbear, blind excepts, noqa comments that still silence something:
# [tool.ruff] in pyproject.toml).
lint: $(STAMP)
	$(BIN)/lint-imports
	$(BIN)/ruff check .

unit: $(STAMP)
	$(BIN)/python -m pytest tests/unit

functional: $(STAMP)
	$(BIN)/python -m pytest tests/functional

integration: $(STAMP)
	$(BIN)/python -m pytest tests/integration

clean:
	rm -rf $(VENV) build *.egg-info
