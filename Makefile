# Everything a fresh machine needs: `make run` and `make test` create .venv and install first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: install run test test-compose bench bench-generate bench-service bench-faults bench-scale bench-load clean

install: $(STAMP)

# The editable install also builds the native core in place (setup.py), or says in one line why not.
$(STAMP): pyproject.toml setup.py $(wildcard worker/engines/*/core.py) worker/engines/out.py worker/engines/out.pxd \
		worker/store/bloom.py worker/generating/core.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	$(BIN)/dealer games --cores
	# Byte-compile now: where PYTHONDONTWRITEBYTECODE is set, every run would compile from source.
	$(BIN)/python -m compileall -q worker webui
	touch $(STAMP)

run: install
	$(BIN)/dealer serve

# Two runs, both always: the tests that start no process on every CPU (pytest-xdist), then the live ones
# (tests/browser, faults, integration) alone, one at a time. A run that finds none of its tests among
# those PYTEST_ARGS names (pytest's status 5) is no failure.
test: install
	@status=0; \
	$(BIN)/python -m pytest -n auto -m "not live" $(PYTEST_ARGS) || { code=$$?; [ $$code -eq 5 ] || status=$$code; }; \
	$(BIN)/python -m pytest -m live $(PYTEST_ARGS) || { code=$$?; [ $$code -eq 5 ] || status=$$code; }; \
	exit $$status

# docker-compose.yml end to end on this machine's Docker (docker/test-compose says what it installs and keeps).
test-compose: install
	docker/test-compose

bench: install
	$(BIN)/python -m bench.engines

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
