r"""Averages the parameters of a training run's checkpoints (weight averaging).

    python examples/average_checkpoints.py \
        --checkpoints='runs/leduc/leduc_poker.step-*.npz' --min_step=12000 \
        --output=/tmp/leduc_poker.npz

Stochastic weight averaging (Izmailov et al., 2018): the mean of the
parameters saved along the last part of a run (`train.py --checkpoint_every=N
--keep_checkpoints`) is a smoother network than any single one of them. The
output is an inference checkpoint (no optimiser state, so it cannot be
resumed) that the sog bot loads with `checkpoint=PATH`. Its metadata lists the
averaged steps. Two of the shipped networks were made this way (README.md,
"Shipped networks").
"""

from __future__ import annotations

import glob
import sys

from absl import app
from absl import flags

from open_spiel_sog.algorithms.sog import cvpn

_CHECKPOINTS = flags.DEFINE_list(
    "checkpoints", None,
    "Checkpoints to average: paths or glob patterns, comma-separated.")
_MIN_STEP = flags.DEFINE_integer(
    "min_step", 0, "Only average checkpoints saved at this step or later.")
_MAX_STEP = flags.DEFINE_integer(
    "max_step", 0, "Only average checkpoints saved at this step or earlier "
    "(0: no limit).")
_GAME = flags.DEFINE_string(
    "game", "", "The game the checkpoints must be for (default: the first "
    "checkpoint's).")
_OUTPUT = flags.DEFINE_string("output", None, "Where to write the average.")


def expand(patterns: list[str]) -> list[str]:
  """Paths matching the patterns, in order, without repeats."""
  paths = []
  for pattern in patterns:
    matches = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [
        pattern]
    if not matches:
      raise cvpn.CheckpointError(f"no checkpoint matches {pattern!r}")
    paths.extend(p for p in matches if p not in paths)
  return paths


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  try:
    paths = []
    for path in expand(_CHECKPOINTS.value):
      step = cvpn.read_checkpoint(path)[0]["step"]
      if step >= _MIN_STEP.value and (not _MAX_STEP.value or
                                      step <= _MAX_STEP.value):
        paths.append(path)
    if not paths:
      raise cvpn.CheckpointError(
          f"no checkpoint among {_CHECKPOINTS.value} has a step in "
          f"[{_MIN_STEP.value}, {_MAX_STEP.value or 'any'}]")
    net = cvpn.average_checkpoints(paths, _GAME.value or None)
    cvpn.save_checkpoint(_OUTPUT.value, net, game=net.metadata["game"],
                         extra=net.metadata["extra"])
  except (cvpn.CheckpointError, ValueError) as e:
    print(f"average_checkpoints: {e}", file=sys.stderr)
    return 1
  steps = net.metadata["extra"]["averaged_steps"]
  print(f"wrote {_OUTPUT.value}: the average of {len(steps)} checkpoints of "
        f"{net.metadata['game']} at steps {steps}")
  return 0


if __name__ == "__main__":
  flags.mark_flags_as_required(["checkpoints", "output"])
  app.run(main)
