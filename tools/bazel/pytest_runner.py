"""`main` of every py_test in //:BUILD: runs pytest on one test file.

The test files are plain pytest modules without a `__main__` block, so Bazel
cannot run them directly. Bazel starts this script (under the venv interpreter,
with the runfiles tree as working directory) with the test file's
runfiles-relative path as argument; its exit status is pytest's.
"""

import os
import sys

import pytest


def main(argv):
  args = [
      # Don't write .pytest_cache into the runfiles tree / execroot.
      "-p", "no:cacheprovider",
  ]
  # pyproject.toml is part of the test's data, so pytest reads the same
  # [tool.pytest.ini_options] as `make test`, rooted at the runfiles tree.
  if os.path.exists("pyproject.toml"):
    args += ["-c", "pyproject.toml", "--rootdir", "."]
  # Per-test-case results for Bazel's test.xml.
  xml_output = os.environ.get("XML_OUTPUT_FILE")
  if xml_output:
    args.append("--junitxml=" + xml_output)
  # Keep pytest's tmp_path folders inside the test's private TEST_TMPDIR.
  test_tmpdir = os.environ.get("TEST_TMPDIR")
  if test_tmpdir:
    args.append("--basetemp=" + os.path.join(test_tmpdir, "pytest"))
  return pytest.main(args + argv)


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
