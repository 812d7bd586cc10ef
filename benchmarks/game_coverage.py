r"""Which two-player zero-sum OpenSpiel games the sog bot plays (issue 15).

  python benchmarks/game_coverage.py --json > /tmp/coverage.json

For every registered game that can be played by two players and is zero-sum
or constant-sum, with default parameters (two players where the default is
another number), plus OpenSpiel's Python games (`open_spiel.python.games`),
in a child process of its own (a game that hangs or aborts cannot take the
run down):

1. `pyspiel.load_bot("sog", game, seat, {"time_limit": --time_limit})` for
   both seats;
2. one game SoG against SoG, played as `pyspiel.evaluate_bots` plays it
   (restart, step, inform_action; simultaneous nodes through
   `state.legal_actions(player)`), stopped after --max_moves moves;
3. where that game took under --short_game seconds, --random_games games
   against OpenSpiel's uniform random bot, SoG in each seat in turn.

Each game gets a row: `plays` or the error (its type and first line),
seconds per SoG decision (median and max), moves played, whether the move
cap stopped it, the game's process's peak memory after SoG against SoG
(`max_rss_mb`, "peak MB" in the table), and SoG's mean return against
uniform random (a game stopped at the cap counts 0, and the row says how
many were). A game that runs past --timeout seconds is recorded as a
timeout. The table goes to
stdout (Markdown); --json adds the rows as one JSON object on the last line.
Progress goes to stderr.
"""

import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time

from absl import app
from absl import flags
import numpy as np
import pyspiel

from coverage_games import coverage_games  # pylint: disable=g-bad-import-order

_GAMES = flags.DEFINE_string(
    "games", "", "Game strings to try, separated by ';' (empty: every "
    "two-player zero-sum or constant-sum game, see the module docstring).")
_SKIP = flags.DEFINE_string(
    "skip", "", "Short names to leave out, separated by ','.")
_TIME_LIMIT = flags.DEFINE_float("time_limit", 1.0,
                                 "sog's time_limit (seconds per decision).")
_SIMULATIONS = flags.DEFINE_integer(
    "simulations", -1, "sog's simulations: -1 (its default) searches by "
    "time alone under the time limit, a count caps the search (the runs "
    "in benchmarks/results used 1000).")
_MAX_MOVES = flags.DEFINE_integer(
    "max_moves", 200, "Moves (player decisions; a simultaneous node is one) "
    "after which a game is stopped.")
_RANDOM_GAMES = flags.DEFINE_integer(
    "random_games", 2, "Games against uniform random, seats alternating, "
    "where SoG against SoG was short.")
_SHORT_GAME = flags.DEFINE_float(
    "short_game", 60.0, "A game that SoG against SoG finished (or stopped) "
    "in under this many seconds also plays --random_games against uniform "
    "random.")
_TIMEOUT = flags.DEFINE_float(
    "timeout", 900.0, "Seconds after which a game's child process is "
    "stopped and the game recorded as a timeout.")
_JSON = flags.DEFINE_bool("json", False,
                          "Also print the rows as JSON on the last line.")
_ROWS_FILE = flags.DEFINE_string(
    "rows_file", "", "Also append each game's row to this file as one JSON "
    "line as soon as it is done (a run that is stopped keeps what it "
    "finished).")
_WORKER = flags.DEFINE_string("worker", "",
                              "(internal) play this game and print its row.")


def _log(message: str) -> None:
  print(message, file=sys.stderr, flush=True)


def _apply_chance(state, rng) -> None:
  actions, probs = zip(*state.chance_outcomes())
  state.apply_action(int(rng.choice(actions, p=np.asarray(probs) /
                                    sum(probs))))


def play(game, bots, max_moves: int, rng, sog_seats=(0, 1)):
  """One game as pyspiel.evaluate_bots plays it, stopped after max_moves.

  Returns (returns, moves, stopped, seconds of each SoG decision)."""
  state = game.new_initial_state()
  for bot in bots:
    bot.restart()
  moves, decisions = 0, []
  while not state.is_terminal() and moves < max_moves:
    if state.is_chance_node():
      _apply_chance(state, rng)
      continue
    if state.is_simultaneous_node():
      actions = []
      for p, bot in enumerate(bots):
        start = time.monotonic()
        actions.append(bot.step(state) if state.legal_actions(p) else
                       pyspiel.INVALID_ACTION)
        if p in sog_seats:
          decisions.append(time.monotonic() - start)
      state.apply_actions(actions)
    else:
      p = state.current_player()
      start = time.monotonic()
      action = bots[p].step(state)
      if p in sog_seats:
        decisions.append(time.monotonic() - start)
      for q, bot in enumerate(bots):
        if q != p:
          bot.inform_action(state, p, action)
      state.apply_action(action)
    moves += 1
  returns = state.returns() if state.is_terminal() else [0.0, 0.0]
  return returns, moves, not state.is_terminal(), decisions


def worker(game_string: str) -> dict:
  """Plays `game_string` (in this process) and returns its row."""
  import open_spiel.python.games  # pylint: disable=g-import-not-at-top,unused-import
  import open_spiel_sog  # pylint: disable=g-import-not-at-top,unused-import
  row = {"game": game_string}
  start = time.monotonic()
  game = pyspiel.load_game(game_string)
  params = {"time_limit": _TIME_LIMIT.value,
            "simulations": _SIMULATIONS.value}
  try:
    bots = [pyspiel.load_bot("sog", game, p, dict(params, seed=p))
            for p in range(2)]
    row["load_seconds"] = round(time.monotonic() - start, 2)
    rng = np.random.default_rng(0)
    start = time.monotonic()
    _, moves, stopped, decisions = play(game, bots, _MAX_MOVES.value, rng)
    took = time.monotonic() - start
  except Exception as e:  # pylint: disable=broad-except
    row["status"] = "error"
    row["error"] = f"{type(e).__name__}: {' '.join(str(e).split())[:400]}"
    row["seconds"] = round(time.monotonic() - start, 2)
    return row
  row.update(status="plays", moves=moves, stopped_at_cap=stopped,
             game_seconds=round(took, 1),
             # The child process's peak resident memory (Linux: KiB) after
             # SoG against SoG: a whole game's, imports included.
             max_rss_mb=round(resource.getrusage(
                 resource.RUSAGE_SELF).ru_maxrss / 1024))
  if decisions:
    row["decision_median"] = round(statistics.median(decisions), 6)
    row["decision_max"] = round(max(decisions), 6)
  if took < _SHORT_GAME.value and _RANDOM_GAMES.value > 0:
    results, capped = [], 0
    for k in range(_RANDOM_GAMES.value):
      seat = k % 2
      players = [pyspiel.load_bot("uniform_random", game, p, {"seed": k})
                 if p != seat else
                 pyspiel.load_bot("sog", game, p, dict(params, seed=k))
                 for p in range(2)]
      returns, _, stopped, _ = play(game, players, _MAX_MOVES.value, rng,
                                    sog_seats=(seat,))
      results.append(returns[seat])
      capped += stopped
    row["vs_random_mean"] = round(float(np.mean(results)), 3)
    row["vs_random_games"] = len(results)
    row["vs_random_capped"] = capped
  return row


def run_child(game_string: str, argv0: str) -> dict:
  """Runs the worker for one game in a child process."""
  args = [sys.executable, argv0, f"--worker={game_string}",
          f"--time_limit={_TIME_LIMIT.value}",
          f"--simulations={_SIMULATIONS.value}",
          f"--max_moves={_MAX_MOVES.value}",
          f"--random_games={_RANDOM_GAMES.value}",
          f"--short_game={_SHORT_GAME.value}"]
  start = time.monotonic()
  try:
    done = subprocess.run(args, capture_output=True, text=True,
                          timeout=_TIMEOUT.value, check=False)
  except subprocess.TimeoutExpired:
    return {"game": game_string, "status": "timeout",
            "seconds": round(time.monotonic() - start, 1)}
  for line in reversed(done.stdout.splitlines()):
    if line.startswith("{"):
      return json.loads(line)
  tail = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
  return {"game": game_string, "status": "crash",
          "error": f"exit {done.returncode}: {tail[:300]}",
          "seconds": round(time.monotonic() - start, 1)}


def _markdown(rows: list[dict]) -> str:
  lines = ["| game | result | s per decision (median / max) | moves | "
           "SoG vs uniform random | peak MB |", "|---|---|---|---|---|---|"]
  for r in rows:
    if r["status"] == "plays":
      result = "plays"
      timing = f"{r.get('decision_median', 0):.2f} / " \
               f"{r.get('decision_max', 0):.2f}"
      moves = f"{r['moves']}{' (cap)' if r['stopped_at_cap'] else ''}"
      random = ""
      if "vs_random_mean" in r:
        capped = (f", {r['vs_random_capped']} stopped at the cap (0)"
                  if r["vs_random_capped"] else "")
        random = (f"{r['vs_random_mean']:+.2f} ({r['vs_random_games']} "
                  f"games{capped})")
    else:
      result = f"{r['status']}: {r.get('error', '')}".rstrip(": ")
      timing, moves, random = "", "", ""
    peak = r.get("max_rss_mb", "")
    lines.append(f"| {r['game']} | {result} | {timing} | {moves} | {random} "
                 f"| {peak} |")
  return "\n".join(lines)


def main(argv):
  del argv
  if _WORKER.value:
    print(json.dumps(worker(_WORKER.value)), flush=True)
    return
  games = ([g for g in _GAMES.value.split(";") if g] if _GAMES.value
           else coverage_games())
  skip = {s for s in _SKIP.value.split(",") if s}
  games = [g for g in games if g.split("(")[0] not in skip]
  rows = []
  start = time.monotonic()
  for k, game_string in enumerate(games):
    row = run_child(game_string, os.path.abspath(__file__))
    rows.append(row)
    if _ROWS_FILE.value:
      with open(_ROWS_FILE.value, "a") as f:
        f.write(json.dumps(row) + "\n")
    _log(f"[{k + 1}/{len(games)}] {game_string}: {row['status']} "
         f"{row.get('error', '')} ({time.monotonic() - start:.0f} s)")
  print(_markdown(rows))
  plays = sum(r["status"] == "plays" for r in rows)
  print(f"\n{plays} of {len(rows)} games play (time_limit="
        f"{_TIME_LIMIT.value}, max_moves={_MAX_MOVES.value}).")
  if _JSON.value:
    print(json.dumps({
        "time_limit": _TIME_LIMIT.value, "simulations": _SIMULATIONS.value,
        "max_moves": _MAX_MOVES.value, "plays": plays, "games": len(rows),
        "python": platform.python_version(),
        "open_spiel": getattr(pyspiel, "__version__", "unknown"),
        "rows": rows}))


if __name__ == "__main__":
  app.run(main)
