# Everything a fresh machine needs: `make run` and `make test` create .venv and install first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: install run test test-fast test-compose bench bench-generate bench-service bench-faults bench-scale bench-load clean

install: $(STAMP)

# The editable install also builds the native core in place (setup.py), or says in one line why not.
$(STAMP): pyproject.toml setup.py $(wildcard worker/engines/*/core.py) worker/engines/out.py worker/engines/out.pxd \
		worker/store/bloom.py worker/generating/core.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test,docs]'
	$(BIN)/dealer games --cores
	# Byte-compile now: where PYTHONDONTWRITEBYTECODE is set, every run would compile from source.
	$(BIN)/python -m compileall -q worker webui
	touch $(STAMP)

# `make run PORT=8601 HOST=0.0.0.0`: either left out, `dealer serve` chooses.
run: install
	$(BIN)/dealer serve $(if $(HOST),--host $(HOST)) $(if $(PORT),--port $(PORT))

# One pytest run over one process more than the machine has CPUs (pytest-xdist), a test file to a process
# (a file's tests on the shared live services: a unit per mode), the longest first (tests/support/plugin.py
# orders them and hands them out):
# the live tests (tests/browser, faults, integration: real servers and browsers) mostly wait on the
# processes they started, so the spare CPU goes to the rest: the machine's CPUs are busy throughout a run
# (/proc/stat), a pytest process about a third of the time, Chromium and the live services the rest.
# A file's tests share its process, and with it the live services a file starts once. A run that finds
# none of the tests PYTEST_ARGS names (pytest's status 5) is no failure.
TEST_PROCESSES ?= $(shell echo $$(( $$(nproc) + 1 )))
# pytest rewrites each test module's asserts and keeps the result in __pycache__, unless told to write no
# bytecode: where PYTHONDONTWRITEBYTECODE is set (as on this kind of machine), every process of every run
# rewrote all 400 test modules again, 5 of its 9 CPU-seconds of collecting. The runs here write it.
KEEP_REWRITTEN := PYTHONDONTWRITEBYTECODE=
test: install
	@$(KEEP_REWRITTEN) $(BIN)/python -m pytest -n $(TEST_PROCESSES) --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS) || { code=$$?; [ $$code -eq 5 ] || exit $$code; }

# The edit loop's run, in a minute or so: the tests that start no live process and need no server of the
# machine's, and are quick: `-m "not live and not services and not slow"` (no browser, no live web or
# workers, no PostgreSQL nor Redis; the embedded SQLite ones run). `live` marks the folders of
# tests/support/plugin.py's LIVE_FOLDERS, `services` the tests on PostgreSQL or Redis (the same plugin
# marks those on the shared fixtures' parameters), `slow` a test of more than a second and a half of CPU;
# `make test` runs them all. A process a CPU: these tests wait on nothing, and each process collects the
# whole suite first.
test-fast: install
	@$(KEEP_REWRITTEN) $(BIN)/python -m pytest -n $$(nproc) -m "not live and not services and not slow" $(PYTEST_ARGS) \
		|| { code=$$?; [ $$code -eq 5 ] || exit $$code; }

# docker-compose.yml end to end on this machine's Docker (docker/test-compose says what it installs and keeps).
test-compose: install
	docker/test-compose

# The engines' figure, and the tests `make test` runs at a smaller size, at their full size: the native
# core's tests against the pure-Python engines (the suite solves 3,000 random cases a game where this
# solves 100,000, tests/engines/test_native.py RANDOM_CASES, and draws 100 examples a property test
# where this draws 250, EXAMPLES, which test_faults.py shares) and the newcomer's check page of a
# 200,000-line output (the suite's is of 50,000: tests/browser/test_newcomer.py BIG_LINES).
bench: install
	$(BIN)/python -m bench.engines
	DEALER_DIFFERENTIAL_CASES=100000 DEALER_PROPERTY_EXAMPLES=250 $(BIN)/python -m pytest -q -p no:cacheprovider \
		tests/engines/test_native.py tests/engines/test_faults.py
	DEALER_BIG_CHECK_LINES=200000 $(BIN)/python -m pytest -q -p no:cacheprovider tests/browser/test_newcomer.py

bench-generate: install
	$(BIN)/python -m bench.generate

bench-service: install
	$(BIN)/python -m bench.service

bench-faults: install
	$(BIN)/python -m bench.faults

bench-scale: install
	$(BIN)/python -m bench.scale

bench-load: install
	$(BIN)/python -m bench.load

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
