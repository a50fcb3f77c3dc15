# The two commands of the README. Both start from a fresh clone: they create .venv and install the lock.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test lint bench clean

$(STAMP): requirements.lock pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet uv==0.13.9
	$(BIN)/uv pip sync --quiet --python $(BIN)/python requirements.lock
	$(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps -e .
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(BIN)/lfh demo

test: setup
	$(BIN)/ruff check ingest tests bench
	$(BIN)/python -m pytest

lint: setup
	$(BIN)/ruff check ingest tests bench

bench: setup
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) target logs warehouse/*.duckdb warehouse/*.wal
