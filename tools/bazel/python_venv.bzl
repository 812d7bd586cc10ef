"""Points Bazel's Python toolchain at the repository's own virtualenv.

Bazel 4.2.3 resolves Python through toolchains (--incompatible_use_python_toolchains
is on by default), which makes the old --python_path flag a no-op for py_test. So
this repository rule writes an external repository `@<name>` that holds a
py_runtime whose interpreter_path is <workspace>/.venv/bin/python, plus the
toolchain wrapping it, and WORKSPACE registers that toolchain. The absolute path is
computed here, from wherever the workspace is checked out, never hard-coded.

Running the venv's own interpreter (rather than a system python3 with PYTHONPATH
pointed at site-packages) gives the tests exactly what `make test` sees: the venv's
site-packages (pyspiel, numpy, pytest, ...) and its .pth files. The repository
root comes from the runfiles tree, which Bazel's Python launcher always puts on
sys.path, so tests import the `open_spiel_sog` sources and data declared in BUILD.
"""

def _python_venv_impl(rctx):
    workspace_dir = rctx.path(Label("@//:WORKSPACE")).dirname
    python = workspace_dir.get_child(rctx.attr.venv).get_child("bin").get_child("python")
    if not python.exists:
        # Not fatal, so `bazel query` etc. still work; the tests themselves then
        # fail with "No such file", and `make bazel-test` creates the venv first.
        print("WARNING: %s does not exist yet; run `make install` first." % python)
    rctx.file("BUILD.bazel", """\
load("@bazel_tools//tools/python:toolchain.bzl", "py_runtime_pair")

py_runtime(
    name = "venv_py3_runtime",
    interpreter_path = "{python}",
    python_version = "PY3",
    # The launcher script Bazel writes for every py_test re-executes itself
    # with interpreter_path; let it start under the same interpreter.
    stub_shebang = "#!{python}",
)

py_runtime_pair(
    name = "venv_runtime_pair",
    py3_runtime = ":venv_py3_runtime",
)

toolchain(
    name = "toolchain",
    toolchain = ":venv_runtime_pair",
    toolchain_type = "@bazel_tools//tools/python:toolchain_type",
)
""".format(python = python))
    rctx.file("WORKSPACE", 'workspace(name = "%s")\n' % rctx.name)

python_venv = repository_rule(
    implementation = _python_venv_impl,
    attrs = {
        "venv": attr.string(default = ".venv", doc = "venv folder, relative to the workspace root"),
    },
    # Re-run on every fetch so a moved or re-created venv is picked up.
    local = True,
)
