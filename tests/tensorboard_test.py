"""examples/train.py --tensorboard_dir (needs the optional tensorboard extra).

Deselected by default (pyproject.toml's addopts has -m 'not tensorboard'); run
with `make test-tensorboard`, which installs the extra (tensorflow and
tensorboard) first. tensorflow and tensorboard are imported inside the tests,
so collecting this file does not need them.
"""

import json
import math
import os
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_STEPS = 25
_EVAL_EVERY = 10


def _train_py(*flags, env=None):
  return subprocess.run(
      [sys.executable, os.path.join(ROOT, "examples", "train.py"), *flags],
      capture_output=True, text=True, timeout=300, check=False, env=env,
      cwd=tempfile.mkdtemp(prefix="train-runs-"))


def _read_scalars(logdir: str) -> dict[str, list[tuple[int, float]]]:
  """{tag: [(step, value), ...]} of the scalar summaries in `logdir`, read
  back with TensorBoard's own EventAccumulator."""
  from tensorboard.backend.event_processing import event_accumulator  # pylint: disable=g-import-not-at-top
  from tensorboard.util import tensor_util  # pylint: disable=g-import-not-at-top
  accumulator = event_accumulator.EventAccumulator(
      logdir, size_guidance={event_accumulator.TENSORS: 0})
  accumulator.Reload()
  scalars = {}
  for tag in accumulator.Tags()["tensors"]:
    # tf.summary.scalar writes tensors that the scalars plugin shows.
    plugin = accumulator.SummaryMetadata(tag).plugin_data.plugin_name
    assert plugin == "scalars", (tag, plugin)
    scalars[tag] = [(e.step, float(tensor_util.make_ndarray(e.tensor_proto)))
                    for e in accumulator.Tensors(tag)]
  return scalars


@pytest.mark.tensorboard
def test_train_binary_writes_tensorboard_summaries(tmp_path):
  """The trainer writes the losses and the examples added every 10 steps, and
  the exploitability at each evaluation (every --eval_every steps and at the
  last step)."""
  logdir = str(tmp_path / "tb")
  checkpoint = str(tmp_path / "k.npz")
  result = _train_py(
      "--game=kuhn_poker", "--backend=inline", f"--steps={_STEPS}",
      "--hidden=16", "--batch_size=32", "--min_replay=32",
      "--simulations=10", "--solver_simulations=10",
      f"--eval_every={_EVAL_EVERY}", "--eval_simulations=10",
      f"--checkpoint={checkpoint}", f"--tensorboard_dir={logdir}", "--json",
      "--noprogress")
  assert result.returncode == 0, result.stderr
  summary = json.loads(result.stdout.strip().splitlines()[-1])
  assert summary["steps"] == _STEPS
  events = [f for f in os.listdir(logdir) if f.startswith("events.out")]
  assert len(events) == 1, events

  scalars = _read_scalars(logdir)
  print("scalars read back:", json.dumps(scalars))
  assert set(scalars) == {"loss", "value_loss", "policy_loss", "examples",
                          "exploitability"}
  for tag in ("loss", "value_loss", "policy_loss", "examples"):
    assert [step for step, _ in scalars[tag]] == [10, 20], (tag, scalars[tag])
  for tag in ("loss", "value_loss", "policy_loss"):
    assert all(math.isfinite(v) and v >= 0 for _, v in scalars[tag]), (
        tag, scalars[tag])
  examples = [v for _, v in scalars["examples"]]
  assert 32 <= examples[0] <= examples[1] <= summary["examples"], examples
  # Evaluated at steps 10 and 20, then at the last step, 25; the values are
  # the run's own measurements (float32 in the event file).
  evaluations = [(row["step"], row["exploitability"])
                 for row in summary["evaluations"]]
  assert [step for step, _ in scalars["exploitability"]] == [10, 20, 25]
  assert [step for step, _ in evaluations] == [10, 20, 25]
  assert [v for _, v in scalars["exploitability"]] == pytest.approx(
      [v for _, v in evaluations], rel=1e-6)


@pytest.mark.tensorboard
def test_train_binary_without_tensorboard_package_exits_before_training(
    tmp_path):
  """tensorflow installed, tensorboard not (what tensorflow alone installs):
  tf.summary.scalar has no implementation, so the run stops at start-up with
  one line naming the install command instead of at the first summary."""
  import tensorflow  # pylint: disable=g-import-not-at-top,unused-import
  shadow = tmp_path / "shadow" / "tensorboard"
  shadow.mkdir(parents=True)
  (shadow / "__init__.py").write_text(
      "raise ImportError(\"No module named 'tensorboard' (shadowed)\")\n")
  env = dict(os.environ)
  env["PYTHONPATH"] = os.pathsep.join(
      [str(tmp_path / "shadow")] +
      ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
  checkpoint = tmp_path / "k.npz"
  logdir = tmp_path / "tb"
  result = _train_py(
      "--game=kuhn_poker", "--backend=inline", "--steps=5", "--hidden=16",
      "--batch_size=4", "--min_replay=4", "--simulations=2",
      "--solver_simulations=2", f"--checkpoint={checkpoint}",
      f"--tensorboard_dir={logdir}", "--noprogress", env=env)
  assert result.returncode != 0, result.stderr
  assert "Traceback" not in result.stderr, result.stderr
  errors = [line for line in result.stderr.splitlines()
            if "--tensorboard_dir" in line]
  assert len(errors) == 1, result.stderr
  assert "No module named 'tensorboard'" in errors[0]
  assert "pip install 'open_spiel_sog[tensorboard]'" in errors[0]
  assert not checkpoint.exists()
  assert not logdir.exists()
