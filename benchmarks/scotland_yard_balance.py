r"""Scotland Yard's balance per role on the board game's setup: pairs of
registered bots at equal time a move, roles alternated, reporting how often
the detectives win (95% Wilson intervals) and, where the two bots differ,
each bot's score in each role.

    python benchmarks/scotland_yard_balance.py --games=100 --workers=2 \
        --pairings="ismcts:ismcts,scotland_yard_mcts:scotland_yard_mcts,scotland_yard_mcts:ismcts"

A pairing A:B plays --games games. Where A and B differ, game 2k has A as
Mr. X and B as the detectives and game 2k+1 the reverse, both from the same
deal (starts drawn from seed + k); where they are the same bot, game g is
dealt from seed + g. Every bot gets time_limit=--time_limit and a seed from
the game's. The results file is rewritten after each game, and a rerun of
the same command resumes it (the games already in it are not played again).
The pairings take turns game by game.
Writes benchmarks/results/scotland_yard/scotland_yard_balance_<date>.json
with the command, commit, machine and every game's outcome.
"""

import collections
import json
import multiprocessing
import os
import sys
import time

from absl import app
from absl import flags
import pyspiel

import open_spiel_sog  # pylint: disable=unused-import  (registers the bots)
from open_spiel_sog.evaluation import tournament

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scotland_yard_games  # pylint: disable=g-import-not-at-top,wrong-import-position

_PAIRINGS = flags.DEFINE_string(
    "pairings",
    "ismcts:ismcts,scotland_yard_mcts:scotland_yard_mcts,"
    "scotland_yard_mcts:ismcts",
    "Comma-separated A:B pairs of registered bot names.")
_GAMES = flags.DEFINE_integer("games", 100, "Games per pairing (even where "
                              "A and B differ: each deal is played twice).")
_TIME_LIMIT = flags.DEFINE_float("time_limit", 0.5, "Seconds a move, every "
                                 "bot.")
_SEED = flags.DEFINE_integer("seed", 0, "First deal's seed.")
_WORKERS = flags.DEFINE_integer("workers", 1, "Processes playing games.")
_GAME = flags.DEFINE_string("game", "scotland_yard(map=london)", "The game.")
_OUT = flags.DEFINE_string("out", "", "Results file (default: benchmarks/"
                           "results/scotland_yard/scotland_yard_balance_"
                           "<date>.json).")

_game = None


def _play_job(job: tuple[str, str, list, int, int]) -> dict:
  """One game in a worker (the game loaded once per process)."""
  global _game
  game_string, pairing, seats, index, seed = job
  if _game is None or str(_game) != game_string:
    _game = pyspiel.load_game(game_string)
  result = scotland_yard_games.play_bots(_game, seats, seed)
  result.update(pairing=pairing, index=index, mr_x=seats[0][0],
                detectives=seats[1][0])
  return result


def jobs_of(pairing: str, games: int, seed: int, time_limit: float,
            game: str) -> list:
  try:
    a, b = pairing.split(":")
  except ValueError:
    raise app.UsageError(f"--pairings: {pairing!r} is not A:B") from None
  params = {"time_limit": time_limit}
  jobs = []
  for g in range(games):
    if a == b:
      seats, deal = [(a, params)] * 2, seed + g
    else:
      seats = [(a, params), (b, params)] if g % 2 == 0 else [(b, params),
                                                             (a, params)]
      deal = seed + g // 2
    jobs.append((game, pairing, seats, g, deal))
  return jobs


def summary(pairing: str, games: list[dict]) -> dict:
  """The detectives' wins, and each bot's score in each role."""
  n = len(games)
  wins = sum(g["detectives_win"] for g in games)
  row = {"pairing": pairing, "games": n, "detective_wins": wins,
         "detective_win_rate": wins / n if n else None,
         "detective_wilson_95": list(tournament.wilson_interval(wins, n)),
         "outcomes": dict(collections.Counter(g["outcome"] for g in games)),
         "mean_rounds": sum(g["rounds"] for g in games) / n if n else None,
         "cpu_seconds": round(sum(g["cpu_seconds"] for g in games), 1)}
  a, b = pairing.split(":")
  if a != b:
    for bot in (a, b):
      as_x = [g for g in games if g["mr_x"] == bot]
      as_d = [g for g in games if g["detectives"] == bot]
      x_wins = sum(not g["detectives_win"] for g in as_x)
      d_wins = sum(g["detectives_win"] for g in as_d)
      row[bot] = {
          "as_mr_x": [x_wins, len(as_x)],
          "as_mr_x_wilson_95": list(tournament.wilson_interval(x_wins,
                                                               len(as_x))),
          "as_detectives": [d_wins, len(as_d)],
          "as_detectives_wilson_95": list(
              tournament.wilson_interval(d_wins, len(as_d))),
          "score": (x_wins + d_wins) / n if n else None,
          "score_wilson_95": list(tournament.wilson_interval(x_wins + d_wins,
                                                             n))}
  return row


def _line(row: dict) -> str:
  low, high = row["detective_wilson_95"]
  text = (f"{row['pairing']}: detectives win {row['detective_wins']}/"
          f"{row['games']} = {row['detective_win_rate']:.1%} "
          f"[{low:.1%}, {high:.1%}]")
  for bot in row["pairing"].split(":"):
    if bot in row:
      r = row[bot]
      text += (f"; {bot}: Mr. X {r['as_mr_x'][0]}/{r['as_mr_x'][1]}, "
               f"detectives {r['as_detectives'][0]}/{r['as_detectives'][1]},"
               f" score {r['score']:.3f}")
  return text


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  if _GAMES.value < 1:
    raise app.UsageError("--games must be at least 1")
  if _TIME_LIMIT.value <= 0:
    raise app.UsageError("--time_limit must be positive")
  try:
    game = pyspiel.load_game(_GAME.value)
  except pyspiel.SpielError as e:
    raise app.UsageError(f"--game: {e}") from None
  pairings = _PAIRINGS.value.split(",")
  for pairing in pairings:
    for job in jobs_of(pairing, 2, 0, _TIME_LIMIT.value, _GAME.value):
      for p, (name, params) in enumerate(job[2]):
        try:
          pyspiel.load_bot(name, game, p, params)
        except (pyspiel.SpielError, ValueError) as e:
          raise app.UsageError(f"--pairings: {name} does not load for seat "
                               f"{p} of {_GAME.value}: {e}") from None
  result = scotland_yard_games.header(
      "Scotland Yard's balance per role: registered bots at equal time a "
      "move, roles alternated (detectives' win rate, each bot's score per "
      "role)")
  out = _OUT.value or scotland_yard_games.results_path(
      "scotland_yard_balance", result["date"])
  settings = {"game": _GAME.value, "time_limit": _TIME_LIMIT.value,
              "seed": _SEED.value}
  done = []
  if os.path.exists(out):
    with open(out, encoding="utf-8") as f:
      saved = json.load(f)
    if saved.get("settings") != settings:
      raise app.UsageError(f"{out} holds a run with other settings "
                           f"({saved.get('settings')}); give --out")
    done = saved["per_game"]
  result.update(workers=_WORKERS.value, settings=settings, rows=[],
                per_game=done)
  have = {(g["pairing"], g["index"]) for g in done}
  jobs = [job for p in pairings
          for job in jobs_of(p, _GAMES.value, _SEED.value, _TIME_LIMIT.value,
                             _GAME.value)
          if (job[1], job[3]) not in have]
  # The pairings take turns, so that a run stopped early has all of them.
  jobs.sort(key=lambda job: job[3])
  print(f"{len(jobs)} games to play ({len(done)} already in {out})",
        flush=True)

  def write():
    result["rows"] = [summary(p, [g for g in result["per_game"]
                                  if g["pairing"] == p]) for p in pairings]
    with open(out + ".tmp", "w", encoding="utf-8") as f:
      json.dump(result, f, indent=1)
    os.replace(out + ".tmp", out)

  start = time.monotonic()
  with multiprocessing.get_context("spawn").Pool(_WORKERS.value) as pool:
    for k, game in enumerate(pool.imap_unordered(_play_job, jobs,
                                                 chunksize=1), 1):
      result["per_game"].append(game)
      write()
      print(f"[{(time.monotonic() - start) / 60:.1f} min] {k}/{len(jobs)} "
            f"{game['pairing']} #{game['index']}: Mr. X {game['mr_x']}, "
            f"detectives {game['detectives']}, "
            f"{'detectives win' if game['detectives_win'] else 'Mr. X wins'}"
            f" ({game['outcome']}, {game['rounds']} rounds)", flush=True)
  write()
  for row in result["rows"]:
    if row["games"]:
      print(_line(row))
  print("wrote", out)


if __name__ == "__main__":
  app.run(main)
