# `make run` and `make test` work on a fresh machine: each creates .venv in the
# repository when it is missing, installs the package (building the C++ shim)
# and then runs. Every pip call takes the exact versions of constraints.txt
# (-c), so a fresh clone gets the environment the README's figures were
# measured with; `make lock` refreshes the pins (docs/environment.md).
PYTHON      ?= python3
VENV        := .venv
PY          := $(VENV)/bin/python
STAMP       := $(VENV)/.open_spiel_sog-installed
CONSTRAINTS := constraints.txt
PIP         := $(PY) -m pip install --quiet -c $(CONSTRAINTS)

.PHONY: install run test test-ray test-tensorboard bench bazel-test lock clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) pip

# The shim is compiled against the pinned open_spiel wheel already in the venv,
# so build requirements are installed first and the build is not isolated.
$(STAMP): $(PY) setup.py pyproject.toml open_spiel_sog/_native/shim.cc open_spiel_sog/_native/cfr_kernels.h open_spiel_sog/_native/history_tree.h open_spiel_sog/_native/history_engine.h open_spiel_sog/_native/expander.h open_spiel_sog/_native/rows.h open_spiel_sog/_native/blake2b.h open_spiel_sog/_native/rollouts.h open_spiel_sog/_native/scotland_yard.h open_spiel_sog/_native/scotland_yard_mcts.h $(CONSTRAINTS)
	$(PIP) setuptools wheel pybind11 open_spiel
	$(PIP) --no-build-isolation -e ".[test,progress,plot]"
	touch $(STAMP)

install: $(STAMP)

# The main job: SoG with its shipped network on leduc_poker, its exact
# exploitability beside OpenSpiel's IS-MCTS and uniform random, and a
# duplicate head-to-head (examples/sog_demo.py; the CFR solve stays available
# as examples/solve.py).
run: install
	$(PY) examples/sog_demo.py

# Two pytest workers (pytest-xdist), each taking whole test files; module
# fixtures are built once, in the worker that runs the file. A fresh clone's
# make test took 8 min 49 s on the 2-core machine, installs included
# (2026-12-07, at 60614e9; docs/testing.md).
# Tests marked `alone` time decisions against the wall clock: they run after
# the others, in one process, so that no other worker shares the cores.
test: install
	$(PY) -m pytest -q -n 2 --dist loadfile -m "not ray and not tensorboard and not alone" tests
	$(PY) -m pytest -q -m alone tests

# The ray backend's tests (marked `ray`, deselected by `make test`); installs
# the optional ray extra (ray, pinned in constraints.txt) first.
test-ray: install
	$(PIP) --no-build-isolation -e ".[ray]"
	$(PY) -m pytest -q -m ray tests

# examples/train.py --tensorboard_dir's tests (marked `tensorboard`, deselected
# by `make test`); installs the optional tensorboard extra (tensorflow and
# tensorboard, pinned in constraints.txt) first.
test-tensorboard: install
	$(PIP) --no-build-isolation -e ".[tensorboard]"
	$(PY) -m pytest -q -m tensorboard tests

bench: install
	$(PY) benchmarks/public_tree_cfr_vs_openspiel.py --game=leduc_poker --iterations=1000 --repeats=5

# Runs every tests/*_test.py as its own Bazel py_test, offline, with Debian's
# Bazel 4.2.3 (bazel-bootstrap, installed here when `bazel` is missing) under
# the venv's interpreter. The stub repositories replace what Bazel would
# otherwise download (see .bazelrc); --override_repository needs absolute paths,
# taken from this Makefile's folder. The output base lives in /tmp, one per
# checkout: inside the workspace, `bazel query //...` would descend into it.
# The venv is not a Bazel input, so a fingerprint of its installed
# distributions goes into the test environment: cached passes are dropped when
# the venv changes.
bazel-test: install
	@command -v bazel >/dev/null 2>&1 || { \
	  echo "bazel not found: installing Debian's bazel-bootstrap"; \
	  SUDO=; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  $$SUDO apt-get install -y bazel-bootstrap || \
	    { $$SUDO apt-get update && $$SUDO apt-get install -y bazel-bootstrap; }; \
	}
	root="$$(cd "$(dir $(firstword $(MAKEFILE_LIST)))" && pwd)" && \
	stubs="$$root/tools/bazel/stubs" && \
	output_base="/tmp/open_spiel_sog-bazel-$$(printf %s "$$root" | md5sum | cut -c1-12)" && \
	venv_id="$$(cat "$$root/.venv/pyvenv.cfg"; ls "$$root"/.venv/lib/python*/site-packages)" && \
	venv_id="$$(printf %s "$$venv_id" | md5sum | cut -c1-12)" && \
	cd "$$root" && \
	bazel --output_base="$$output_base" test \
	  --override_repository=rules_cc="$$stubs/rules_cc" \
	  --override_repository=rules_java="$$stubs/rules_java" \
	  --override_repository=remote_coverage_tools="$$stubs/remote_coverage_tools" \
	  --spawn_strategy=standalone \
	  --test_output=errors \
	  --test_env=OPEN_SPIEL_SOG_VENV_ID="$$venv_id" \
	  //:all

# Refreshes constraints.txt: a clean venv in .venv-lock with the newest
# releases the setup allows, frozen. The tensorboard and ray extras (for
# `make test-tensorboard` and `make test-ray`) are added after the rest is
# frozen and held to it, so they never change the pins of `make install`. Re-measure the README's
# figures with the new pins before committing them (docs/environment.md).
lock:
	rm -rf .venv-lock
	$(PYTHON) -m venv .venv-lock
	.venv-lock/bin/python -m pip install --quiet --upgrade pip setuptools wheel
	.venv-lock/bin/python -m pip install --quiet pybind11==3.1.0 open_spiel==2.0.2
	.venv-lock/bin/python -m pip install --quiet --no-build-isolation -e ".[test,progress,plot]"
	.venv-lock/bin/python -m pip freeze --all --exclude-editable > .venv-lock/base.txt
	.venv-lock/bin/python -m pip install --quiet -c .venv-lock/base.txt --no-build-isolation -e ".[tensorboard,ray]"
	{ sed -n '/^#/p' $(CONSTRAINTS); .venv-lock/bin/python -m pip freeze --all --exclude-editable; } > $(CONSTRAINTS).new
	mv $(CONSTRAINTS).new $(CONSTRAINTS)
	rm -rf .venv-lock
	@echo "constraints.txt refreshed: 'rm -rf .venv && make install', then re-measure (docs/environment.md)"

clean:
	rm -rf build *.egg-info open_spiel_sog/_native/*.so
