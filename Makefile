# Two commands on a fresh machine:  `make run`  (install everything, launch the app)
#                                   `make test` (install everything, run the whole test suite)
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# torch is pinned to the CPU build: anything else pulls gigabytes of CUDA packages.
CONSTRAINTS := packaging/constraints-cpu.txt

.PHONY: install run test test-deps bundle clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml $(CONSTRAINTS)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip wheel
	$(PY) -m pip install --quiet -c $(CONSTRAINTS) "torch==2.13.0"
	$(PY) -m pip install --quiet -c $(CONSTRAINTS) -e ".[dev]"
	touch $@

run: install
	$(VENV)/bin/searchain-desktop

# The screenshot test renders under a virtual X server: install Xvfb when we can (root on Debian).
test-deps:
	@command -v Xvfb >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
	  && (apt-get update -qq && apt-get install -y -qq xvfb >/dev/null) || echo "note: Xvfb not installed; the screenshot test will be skipped"; }

test: install test-deps
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest

bundle: install
	$(PY) -m pip install --quiet -c $(CONSTRAINTS) pyinstaller
	$(VENV)/bin/pyinstaller --noconfirm packaging/searchain-desktop.spec

clean:
	rm -rf $(VENV) build dist .pytest_cache
