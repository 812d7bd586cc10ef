r"""Joint policy search on a two-player common-payoff game.

  python examples/jps.py --game="simple_bidding(n=8)" --start=cfr --seeds=5 \
      --json

For each seed: a start policy (--start=cfr: the last iterate of
--cfr_iterations of CFR from a random initial policy, as the JPS authors'
code runs it, mixed; `purified` gives its value purified to each
infostate's most probable action, the paper's CFR1k column;
--start=uniform), then JPS (chains of at most --depth
infostates, 0: the game's depth; --samples > 0: the sample-based variant).
Prints each seed's start and final value and their means; with --json the
last line is one JSON object with `game`, `start` and `final` (lists over
seeds), the value traces, and the seconds.
"""

import json
import sys

from absl import app
from absl import flags
import numpy as np
import pyspiel

import open_spiel_sog  # registers the paper's games  # pylint: disable=unused-import
from open_spiel_sog.algorithms import jps

_GAME = flags.DEFINE_string(
    "game", "tiny_hanabi", "A two-player common-payoff (IDENTICAL utility) "
    "OpenSpiel game: tiny_hanabi, jps_comm(length=L), simple_bidding(n=N), "
    "mini_bridge(n=N), ...")
_START = flags.DEFINE_enum("start", "cfr", ["cfr", "uniform"],
                           "Start policy: purified CFR, or uniform.")
_CFR_ITERATIONS = flags.DEFINE_integer("cfr_iterations", 1000,
                                       "CFR iterations of --start=cfr.")
_SEEDS = flags.DEFINE_integer("seeds", 5, "Seeds (CFR's random initial "
                              "policies; the samples).")
_DEPTH = flags.DEFINE_integer(
    "depth", 0, "Most infostates in one change (a chain); 0: the game's "
    "depth.")
_SAMPLES = flags.DEFINE_integer(
    "samples", 0, "0: exact densities; N: the sample-based variant with N "
    "histories per candidate infostate.")
_MAX_ITERATIONS = flags.DEFINE_integer("max_iterations", 10_000,
                                       "Changes accepted at most per seed.")
_JSON = flags.DEFINE_bool("json", False, "Print a JSON summary last.")


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  for name, flag in (("seeds", _SEEDS), ("cfr_iterations", _CFR_ITERATIONS),
                     ("max_iterations", _MAX_ITERATIONS)):
    if flag.value < 1:
      raise app.UsageError(f"--{name} must be >= 1, got {flag.value}")
  config = jps.JPSConfig(depth=_DEPTH.value, samples=_SAMPLES.value,
                         max_iterations=_MAX_ITERATIONS.value)
  try:
    if config.depth < 0 or config.samples < 0:
      raise ValueError("--depth and --samples must be >= 0")
    out = jps.search_from_starts(
        _GAME.value, _START.value, _CFR_ITERATIONS.value, _SEEDS.value,
        config, log=lambda line: print(line, file=sys.stderr, flush=True))
  except (ValueError, pyspiel.SpielError) as e:
    raise app.UsageError(str(e)) from None
  print(f"{out['game']}: start {np.mean(out['start']):.4f} (purified "
        f"{np.mean(out['purified']):.4f}), JPS "
        f"{np.mean(out['final']):.4f} (best {max(out['final']):.4f}) over "
        f"{len(out['final'])} seeds")
  if _JSON.value:
    print(json.dumps(out))


if __name__ == "__main__":
  app.run(main)
