# The README's commands. Each starts from a fresh clone: it creates .venv and installs the lock.
#   make check   the developer's loop: ruff, sqlfluff and every fast test (tests/tiers.py); no root, no apt
#   make test    the full suite, CI's command (.ci/run): installs the system packages the slow tests drive
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup system-deps demo check test lint sqllint sqlfix bench clean

# Python writes each module's bytecode (.pyc) the first time a process imports it. Where PYTHONDONTWRITEBYTECODE is
# set (as on the project's machine) it never does, so every process compiled what it imported from source each
# time it started: about 3 s of CPU more for each dbt process and 1-2 s for each `lfh` command (alone,
# tests/test_build_up_to_date.py took 76 s of CPU without and 31 s with). The commands below let Python write it:
# once per module, only for what is imported (compiling the whole lock up front cost 34 s of CPU).
unexport PYTHONDONTWRITEBYTECODE

# The venv is made without pip (venv's ensurepip is most of a fresh setup's time); uv is installed into it by the
# system's pip where there is one (pip >= 22.3 has --python), else by a pip that ensurepip puts in the venv. pip
# itself comes from the lock (`lfh lexicon` downloads with it).
$(STAMP): requirements.lock pyproject.toml
	$(PY) -m venv --without-pip $(VENV)
	$(PY) -m pip --python $(BIN)/python install --quiet --disable-pip-version-check uv==0.13.9 2>/dev/null \
		|| { $(BIN)/python -m ensurepip --default-pip >/dev/null && $(BIN)/python -m pip install --quiet uv==0.13.9; }
	$(BIN)/uv pip sync --quiet --python $(BIN)/python requirements.lock
	$(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps -e .
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(BIN)/lfh demo

# Tests also drive headless Chromium (the report), a real PostgreSQL (serving) and local Spark (pyspark needs a Java
# 17 runtime, tests/test_spark.py); Debian packages, root only.
system-deps:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }
	@ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; }
	@command -v java >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null; }

# Parallel workers (pytest-xdist): one more than the cores by default: a fresh-clone make test, quiet, took
# 10 min 23 s on 2 workers, 8 min 45 s on 3 and 8 min 28 s on 4 (README, Test time). With 3, vmstat shows the 2
# cores busy until the last half minute. Each test module runs on one worker (--dist loadscope:
# its module fixtures, e.g. a built warehouse, are built once), in the order tests/tiers.py gives (the Spark
# build first, beside everything else on the other workers).
PYTEST_WORKERS ?= $(shell python3 -c 'import os; print((os.cpu_count() or 1) + 1)')
PYTEST_PARALLEL := -n $(PYTEST_WORKERS) --dist loadscope --no-loadscope-reorder

# sqlfluff runs beside pytest; its report is printed when the tests are done. It lints through
# tests/sqlfluff_changed.py: `make check` only the models whose compiled SQL, source, sqlfluff configuration,
# stand-ins or tool versions changed since they last passed; `make test` every model (--all), which also fills that
# cache (target/sqlfluff-passed.json). The correction models are linted against a lint-only stand-in of
# ppi_corrected_shares (tests/sqlfluff_stand_ins; its 60-75 KB expansion is a templated region, whose style
# violations sqlfluff drops; whether that SQL is valid is for DuckDB and Spark, which run it in the tests).
SQLFLUFF_CHANGED = LFH_DB=$(SQLFLUFF_DB) $(BIN)/python tests/sqlfluff_changed.py
LINT_BESIDE = @mkdir -p target; \
	$(SQLFLUFF_CHANGED) $(2) > target/sqlfluff.log 2>&1 & lint=$$!; \
	$(BIN)/python -m pytest $(1); tests=$$?; \
	wait $$lint; linted=$$?; \
	if [ $$linted -ne 0 ]; then cat target/sqlfluff.log; echo "sqlfluff: failed (make sqlfix fixes most)"; \
	else grep '^sqlfluff:' target/sqlfluff.log; echo "sqlfluff: clean"; fi; \
	[ $$tests -eq 0 ] && [ $$linted -eq 0 ]

check: setup
	$(BIN)/ruff check ingest tests bench
	$(call LINT_BESIDE,-m "not slow" $(PYTEST_PARALLEL) -q)

test: setup system-deps
	$(BIN)/ruff check ingest tests bench
	$(call LINT_BESIDE,$(PYTEST_PARALLEL) --durations=30,--all)

# sqlfluff with the dbt templater compiles the project; it gets a scratch DuckDB file so that it never opens the
# warehouse. `make sqllint` lints every model as `make test` does. `make sqlfix` applies the fixable rules (run it
# after merging SQL changes); it renders the real macros, so the correction models take minutes there.
SQLFLUFF_DB := $(CURDIR)/target/sqlfluff.duckdb

sqllint: setup
	@mkdir -p target
	$(SQLFLUFF_CHANGED) --all

sqlfix: setup
	@mkdir -p target
	LFH_DB=$(SQLFLUFF_DB) $(BIN)/sqlfluff fix models

lint: setup
	$(BIN)/ruff check ingest tests bench
	$(MAKE) sqllint

bench: setup
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) target logs warehouse/*.duckdb warehouse/*.wal warehouse/spark
