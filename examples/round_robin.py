r"""A round-robin tournament between registered bots, with Elo ratings.

    python examples/round_robin.py --game=leduc_poker \
        --bots="sog(simulations=100);ismcts(simulations=1000);oos;uniform_random" \
        --games_per_pair=200 --out=/tmp/leduc_rr

Every pair of --bots plays --games_per_pair deals in each seat order, with the
same chance seed for both orders of a deal (duplicate play). Prints the table
of mean returns (row against column, 95% intervals) and Elo ratings fitted to
every game (95% bootstrap intervals). With --out, writes DIR/results.json
(every game's seats, chance seed and returns, and the tables),
DIR/table.txt and DIR/heatmap.png. Any bot `pyspiel.load_bot` knows can be
named, OpenSpiel's and this package's alike (`import open_spiel_sog`
registers sog, ismcts_br, oos, dls, mcts, ismcts and cfr_policy).
"""

from __future__ import annotations

import json
import os
import sys

from absl import app
from absl import flags
import pyspiel

import open_spiel_sog  # registers the package's bots  # pylint: disable=unused-import
from open_spiel_sog.evaluation import tournament

_GAME = flags.DEFINE_string("game", "kuhn_poker", "Game string for load_game.")
_BOTS = flags.DEFINE_string(
    "bots", "cfr_policy;uniform_random",
    "Semicolon-separated bots: NAME or NAME(k=v,...), as pyspiel.load_bot "
    "takes them.")
_GAMES = flags.DEFINE_integer("games_per_pair", 100,
                              "Deals per pair (each played in both seat "
                              "orders).")
_SEED = flags.DEFINE_integer("seed", 0, "Seed of the chance outcomes.")
_BOOTSTRAP = flags.DEFINE_integer("elo_bootstrap", 200,
                                  "Bootstrap resamples of the Elo intervals.")
_RESULTS = flags.DEFINE_string(
    "results", "", "Re-read this results.json (from --out) and print its "
    "tables again instead of playing (--game and --bots are ignored).")
_OUT = flags.DEFINE_string("out", "", "Directory for results.json, table.txt "
                           "and heatmap.png.")
_PROGRESS = flags.DEFINE_bool("progress", True, "Show a progress bar.")
_JSON = flags.DEFINE_bool("json", False,
                          "Print a JSON summary (without the per-game list) "
                          "as the last line.")


def _reread(path: str) -> dict:
  try:
    with open(path) as f:
      saved = json.load(f)
    result = tournament.summarize(saved["game"], saved["bots"],
                                  saved["games"], seed=saved.get("seed", 0),
                                  elo_bootstrap=_BOOTSTRAP.value)
  except (KeyError, TypeError, json.JSONDecodeError) as e:
    raise ValueError(f"{path}: not a round_robin results.json ({e!r})"
                     ) from None
  result["seconds"] = saved.get("seconds")
  return result


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  try:
    if _RESULTS.value:
      result = _reread(_RESULTS.value)
    else:
      game = pyspiel.load_game(_GAME.value)
      result = tournament.round_robin(
          game, _BOTS.value, games_per_pair=_GAMES.value, seed=_SEED.value,
          elo_bootstrap=_BOOTSTRAP.value, progress=_PROGRESS.value)
  except (ValueError, OSError, pyspiel.SpielError) as e:
    print(f"round_robin: {e}", file=sys.stderr)
    return 2
  table = tournament.format_table(result)
  print(table, flush=True)
  if _OUT.value:
    os.makedirs(_OUT.value, exist_ok=True)
    with open(os.path.join(_OUT.value, "results.json"), "w") as f:
      json.dump(result, f)
    with open(os.path.join(_OUT.value, "table.txt"), "w") as f:
      f.write(table + "\n")
    tournament.plot_heatmap(result, os.path.join(_OUT.value, "heatmap.png"))
  if _JSON.value:
    summary = {k: v for k, v in result.items() if k != "games"}
    summary["out"] = _OUT.value or None
    print(json.dumps(summary))
  return 0


if __name__ == "__main__":
  app.run(main)
