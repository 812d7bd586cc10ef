r"""Depth-limited solving with multi-valued states, scored exactly.

  python examples/depth_limited.py --game=leduc_poker --frontier=round \
      --strategies=self_generative --k=8 --json

Computes a blueprint (`--blueprint_iterations` of CFR+ over the public tree),
then for each seat solves the trunk (from the game's root to the frontier)
against an opponent who picks, per infostate at the frontier, one of `--k`
continuation strategies; the seat plays the blueprint below the frontier.
Prints the exploitability (OpenSpiel's, NashConv / 2) of the blueprint and
of the composite (each seat's trunk strategy, the blueprint elsewhere); with
--json the last line is one JSON object with both and the settings.
"""

import json
import time

from absl import app
from absl import flags
import pyspiel

from open_spiel_sog.algorithms import dls as dl
from open_spiel_sog.games import efg

_GAME = flags.DEFINE_string(
    "game", "leduc_poker", "OpenSpiel game string (two-player zero-sum, "
    "sequential, with infostate strings, small enough to enumerate), or a "
    f"shipped EFG game: {', '.join(efg.shipped())}.")
_BLUEPRINT_ITERATIONS = flags.DEFINE_integer(
    "blueprint_iterations", 1000, "CFR+ iterations of the blueprint.")
_FRONTIER = flags.DEFINE_enum(
    "frontier", "round", list(dl.FRONTIERS),
    "round: the chance public states that open a new round (Leduc's public "
    "card); depth: --depth public transitions below the root.")
_DEPTH = flags.DEFINE_integer(
    "depth", 4, "Frontier depth for --frontier=depth (public transitions, "
    "chance steps included).")
_K = flags.DEFINE_integer("k", 4, "Continuation strategies (the blueprint "
                          "counts as one).")
_STRATEGIES = flags.DEFINE_enum(
    "strategies", "self_generative", list(dl.STRATEGY_SETS),
    "bias: the blueprint with one opponent action scaled by --bias_factor, "
    "one per action; self_generative: best responses to the trunk solution.")
_BIAS_FACTOR = flags.DEFINE_float("bias_factor", 10.0,
                                  "Scale of the biased action (bias set).")
_ITERATIONS = flags.DEFINE_integer(
    "iterations", 1000, "CFR+ iterations of each depth-limited solve.")
_JSON = flags.DEFINE_bool("json", False, "Print a JSON summary as the last "
                          "line.")


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  config = dl.DLSConfig(frontier=_FRONTIER.value, depth=_DEPTH.value,
                        strategies=_STRATEGIES.value, k=_K.value,
                        bias_factor=_BIAS_FACTOR.value,
                        iterations=_ITERATIONS.value)
  start = time.perf_counter()
  try:
    config.validate()
    game = efg.load_game(_GAME.value)
    dl.check_game(game)
    blueprint = dl.compute_blueprint(game, _BLUEPRINT_ITERATIONS.value)
    summary = dl.depth_limited_exploitability(game, config,
                                              blueprint=blueprint)
  except (ValueError, pyspiel.SpielError) as e:
    raise app.UsageError(str(e)) from None
  summary.update(game=_GAME.value, frontier=config.frontier,
                 depth=config.depth if config.frontier == "depth" else None,
                 strategies=config.strategies, k_requested=config.k,
                 iterations=config.iterations,
                 blueprint_iterations=_BLUEPRINT_ITERATIONS.value,
                 seconds=time.perf_counter() - start)
  print(f"{_GAME.value}: blueprint ({_BLUEPRINT_ITERATIONS.value} CFR+ "
        f"iterations) exploitability {summary['blueprint_exploitability']:.6f}")
  print(f"depth-limited ({config.frontier} frontier, {config.strategies}, "
        f"k={summary['k']}) exploitability {summary['exploitability']:.6f} "
        f"in {summary['seconds']:.1f} s")
  if _JSON.value:
    print(json.dumps(summary))


if __name__ == "__main__":
  app.run(main)
