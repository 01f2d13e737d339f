# The README's two commands: `make demo` and `make test`. Each creates .venv
# (Python 3.11+) and installs cellplane with its test extra when missing.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint unit functional integration venv clean

venv: $(STAMP)

# Bytecode is written here, once, for the venv and this tree: Python does
# not keep what it compiles on import where PYTHONDONTWRITEBYTECODE is set
# (as on the machines CI runs on), and then every process, each daemon and
# each CLI call, compiles every module it imports again: 2-7 s of CPU per
# daemon start, a 2 x 5 deployment up in 35 s instead of 13. compileall
# writes .pyc files whatever that variable says; a source edited later is
# compiled in memory, never run stale (its .pyc records the source's mtime).
# pip's own compile is skipped, so that both use every core.
PURELIB = $$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
$(STAMP): setup.cfg pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --no-compile -e '.[test]'
	@# Some packages ship test data that is not Python 3: not ours to fail on.
	@$(BIN)/python -m compileall -q -j 0 $(PURELIB) >/dev/null || true
	@# This tree, its hidden directories (.git, .venv*) left out.
	$(BIN)/python -m compileall -q -j 0 -x '/\.' .
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
