# `make run` and `make test` work on a fresh machine: each creates .venv in the
# repository when it is missing, installs the package (building the C++ shim)
# and then runs.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.open_spiel_sog-installed

.PHONY: install run test bench bazel-test clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# The shim is compiled against the pinned open_spiel wheel already in the venv,
# so build requirements are installed first and the build is not isolated.
$(STAMP): $(PY) setup.py pyproject.toml open_spiel_sog/_native/shim.cc
	$(PY) -m pip install --quiet "setuptools>=64" wheel pybind11==3.1.0 open_spiel==2.0.2
	$(PY) -m pip install --quiet --no-build-isolation -e ".[test,progress]"
	touch $(STAMP)

install: $(STAMP)

run: install
	$(PY) examples/solve.py --game=leduc_poker --iterations=1000 --eval_every=100

test: install
	$(PY) -m pytest -q tests

bench: install
	$(PY) benchmarks/public_tree_cfr_vs_openspiel.py --game=leduc_poker --iterations=1000 --repeats=5

clean:
	rm -rf build *.egg-info open_spiel_sog/_native/*.so
