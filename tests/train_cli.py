"""examples/train.py for the tests that drive it: as a child process
(`run`) and as a module (`module`), loaded once per process because its
flags are defined when it loads; every test file shares that one."""

import importlib.util
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRAIN = os.path.join(ROOT, "examples", "train.py")


def run(*args: str, timeout: float = 600,
        cwd: str = ROOT) -> subprocess.CompletedProcess:
  """`python examples/train.py ARGS` in `cwd`, its output captured."""
  return subprocess.run([sys.executable, TRAIN, *args], capture_output=True,
                        text=True, timeout=timeout, check=False, cwd=cwd)


def module():
  """examples/train.py as the module `examples_train` (its flags defined,
  not parsed)."""
  binary = sys.modules.get("examples_train")
  if binary is None:
    spec = importlib.util.spec_from_file_location("examples_train", TRAIN)
    binary = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(binary)
    sys.modules["examples_train"] = binary
  return binary
