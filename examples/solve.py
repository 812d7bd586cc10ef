r"""Solves a game with the vectorized public-tree CFR+.

  python examples/solve.py --game=leduc_poker --iterations=1000 --eval_every=100

Prints the exploitability (OpenSpiel's, in chips, of the average policy) as it
goes; with --json the last line is one JSON object with the whole summary.
"""

import json

from absl import app
from absl import flags

from open_spiel_sog.algorithms import cfr

_GAME = flags.DEFINE_string("game", "leduc_poker", "OpenSpiel game string "
                            "(two-player zero-sum, small enough to enumerate).")
_ITERATIONS = flags.DEFINE_integer("iterations", 1000, "CFR+ iterations.")
_EVAL_EVERY = flags.DEFINE_integer(
    "eval_every", 100, "Measure exploitability every N iterations "
    "(0: only at the end, -1: never).")
_ALTERNATING = flags.DEFINE_bool(
    "alternating", True, "Alternating updates (CFR+); false: simultaneous.")
_JSON = flags.DEFINE_bool("json", False, "Print a JSON summary as the last "
                          "line.")
_PROGRESS = flags.DEFINE_bool("progress", True, "Show a progress bar.")


def config_from_flags() -> cfr.SolveConfig:
  return cfr.SolveConfig(
      game=_GAME.value,
      iterations=_ITERATIONS.value,
      eval_every=_EVAL_EVERY.value,
      cfr=cfr.CFRConfig(alternating=_ALTERNATING.value),
      progress=_PROGRESS.value)


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  try:
    summary = cfr.solve(config_from_flags())
  except ValueError as e:
    raise app.UsageError(str(e)) from None
  for iteration, value in summary["exploitability"]:
    print(f"iteration {iteration:6d}  exploitability {value:.6f}")
  print(f"{summary['game']}: {summary['iterations']} iterations in "
        f"{summary['seconds']:.2f} s ({summary['iterations_per_second']:.0f} "
        f"it/s), game value {summary['game_value']:.6f}")
  if _JSON.value:
    print(json.dumps(summary))


if __name__ == "__main__":
  app.run(main)
