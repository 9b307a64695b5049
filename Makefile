# git-retcon: developer targets. `make test` is what CI runs (via .ci/run).
PYTHON ?= python3
VENV ?= .venv
PREFIX ?= /usr/local
BIN := $(VENV)/bin

.PHONY: venv install test bench man clean

$(BIN)/git-retcon: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

venv: $(BIN)/git-retcon

# Install the command, its man page and completions under PREFIX.
install:
	$(PYTHON) -m pip install --prefix '$(PREFIX)' .

test: venv
	$(BIN)/python -m pytest -q

bench: venv
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) build dist *.egg-info
