r"""scotland_yard_mcts against the figures Nijssen and Winands publish: the
bot on both sides of London at a playout budget of the thesis' Table 7.10
(MCTS+LC seekers against the MCTS hider; the detectives win 55.6% at 1,000
playouts with r = 0.4, 64.5% at 2,500 with r = 0.2, over 1,000 games each),
reporting the detectives' win rate with its 95% Wilson interval.

    python benchmarks/scotland_yard_mcts_validate.py --games=250 \
        --rows=1000:0.4:0.556,2500:0.2:0.645

Each row is playouts:r:published, optionally followed by :key=value;...
of further bot parameters (an ablation: 1000:0.4:0.556:location_categorization=false).
The results file is rewritten after each row. Both seats run the same bot (every
enhancement on, r on both seats though only the detectives read it); game g
deals its starts from seed + g and seeds the bots from it. Runs the C++
search (the shim must load). Writes benchmarks/results/scotland_yard/
scotland_yard_mcts_validation_<date>.json with the command, commit, date,
machine and every game's outcome.
"""

import collections
import json
import math
import multiprocessing
import os
import sys
import time

from absl import app
from absl import flags
import pyspiel

import open_spiel_sog  # pylint: disable=unused-import  (registers the bot)
from open_spiel_sog.bots import scotland_yard_mcts as sym
from open_spiel_sog.evaluation import tournament

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scotland_yard_games  # pylint: disable=g-import-not-at-top,wrong-import-position

_GAMES = flags.DEFINE_integer("games", 250, "Games per row.")
_ROWS = flags.DEFINE_string(
    "rows", "1000:0.4:0.556,2500:0.2:0.645",
    "Comma-separated playouts:r:published detectives' win rate[:extra bot "
    "parameters as key=value;key=value].")
_PUBLISHED_GAMES = flags.DEFINE_integer(
    "published_games", 1000, "Games behind each published figure (thesis "
    "7.4.1: 1,000 a data point).")
_SEED = flags.DEFINE_integer("seed", 0, "First game's seed.")
_WORKERS = flags.DEFINE_integer("workers", 1, "Processes playing games "
                                "(each game is one process's).")
_GAME = flags.DEFINE_string("game", "scotland_yard(map=london)", "The game.")
_OUT = flags.DEFINE_string("out", "", "Results file (default: benchmarks/"
                           "results/scotland_yard/scotland_yard_mcts_"
                           "validation_<date>.json).")



_game = None


def _play_job(job: tuple[str, dict, int]) -> dict:
  """One game in a worker (the game loaded once per process)."""
  global _game
  game_string, params, seed = job
  if _game is None or str(_game) != game_string:
    _game = pyspiel.load_game(game_string)
  return play(_game, params, seed)


def play(game: pyspiel.Game, params: dict, seed: int) -> dict:
  """One game of scotland_yard_mcts with `params` on both seats."""
  return scotland_yard_games.play_bots(game, [(sym.NAME, params)] * 2, seed)


def main(_):
  game = pyspiel.load_game(_GAME.value)
  if sym.engine(game).__class__.__name__ != "ScotlandYardMCTS":
    raise SystemExit("the C++ search is not in use (the shim does not load); "
                     "the Python search is too slow for this run")
  result = scotland_yard_games.header(
      "scotland_yard_mcts on both sides against thesis Table 7.10 "
      "(detectives' win rate)")
  out = _OUT.value or scotland_yard_games.results_path(
      "scotland_yard_mcts_validation", result["date"])
  result.update(game=_GAME.value, workers=_WORKERS.value,
                defaults=dict(sym.DEFAULTS), lc_weights=list(sym.LC_WEIGHTS),
                rows=[])
  rows = result["rows"]
  for spec in _ROWS.value.split(","):
    playouts, r, published, *extra = spec.split(":")
    params = {"playouts": int(playouts), "coalition_reduction": float(r)}
    for item in (extra[0].split(";") if extra else []):
      key, value = item.split("=")
      params[key] = value
    start = time.monotonic()
    jobs = [(str(game), params, _SEED.value + g) for g in range(_GAMES.value)]
    if _WORKERS.value > 1:
      with multiprocessing.get_context("spawn").Pool(_WORKERS.value) as pool:
        games = pool.map(_play_job, jobs, chunksize=1)
    else:
      games = [_play_job(job) for job in jobs]
    seconds = time.monotonic() - start
    cpu_seconds = sum(g["cpu_seconds"] for g in games)
    wins = sum(g["detectives_win"] for g in games)
    low, high = tournament.wilson_interval(wins, len(games))
    published = float(published)
    m = _PUBLISHED_GAMES.value
    pub_half = 1.96 * math.sqrt(published * (1 - published) / m)
    row = {
        "playouts": int(playouts), "r": float(r),
        "bot_params": params,
        "games": len(games), "detective_wins": wins,
        "detective_win_rate": wins / len(games),
        "wilson_95": [low, high],
        "published": published,
        "published_95": [published - pub_half, published + pub_half],
        "published_inside_ours": low <= published <= high,
        "ours_inside_published": (published - pub_half <= wins / len(games)
                                  <= published + pub_half),
        "outcomes": dict(collections.Counter(g["outcome"] for g in games)),
        "mean_rounds": sum(g["rounds"] for g in games) / len(games),
        "seconds": round(seconds, 1),
        "cpu_seconds": round(cpu_seconds, 1),
        "per_game": games,
    }
    rows.append(row)
    print(f"{playouts} playouts, r={r}: detectives win {wins}/{len(games)} = "
          f"{wins / len(games):.1%} [{low:.1%}, {high:.1%}]; published "
          f"{published:.1%} [{published - pub_half:.1%}, "
          f"{published + pub_half:.1%}]; {seconds:.0f} s, {cpu_seconds:.0f} s of CPU ({params})",
          flush=True)
    with open(out, "w", encoding="utf-8") as f:
      json.dump(result, f, indent=1)
  print("wrote", out)


if __name__ == "__main__":
  app.run(main)
