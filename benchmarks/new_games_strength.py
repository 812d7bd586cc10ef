r"""SoG at a time budget against uniform random in games new to it (issue 15).

  python benchmarks/new_games_strength.py --json \
      --games="phantom_ttt;dark_hex(num_rows=3,num_cols=3)"

For each game, --num_games games of `pyspiel.load_bot("sog", game, seat,
{"time_limit": --time_limit, "seed": k, "policy_threshold":
--policy_threshold})` against --opponent (OpenSpiel's
uniform random bot by default, or a bot string such as
'ismcts(simulations=5000,seed={seed})'), in duplicate seats (games 2k and
2k + 1 share seed k = --first_seed + 0, 1, ...; SoG in seat 0, then 1),
played as OpenSpiel's `evaluate_bots` plays them (restart, step,
inform_action: SoG also searches at the opponent's decisions, as the
paper's bot does). Prints, per game, SoG's wins / draws / losses, its win
rate with a 95% Wilson interval, its mean return with a 95% normal
interval, the median and largest seconds per SoG decision and the
opponent's median. --json adds every row as one JSON object on the last
line. Progress goes to stderr. --player seats another bot in SoG's place
(e.g. the opponent, to measure what it scores against itself).
"""

import json
import math
import statistics
import sys
import time

from absl import app
from absl import flags
import numpy as np
import pyspiel

import open_spiel_sog  # pylint: disable=unused-import  (registers "sog")
from open_spiel_sog.bots import sog

_GAMES = flags.DEFINE_string(
    "games", "phantom_ttt;dark_hex(num_rows=3,num_cols=3);"
    "breakthrough(rows=6,columns=6)", "Game strings, separated by ';'.")
_NUM_GAMES = flags.DEFINE_integer("num_games", 40, "Games per game string.")
_MAX_MOVES = flags.DEFINE_integer(
    "max_moves", 0, "Stop a game after this many decisions and score it a "
    "draw (0: play every game to its end; kriegspiel runs for hundreds).")
_TIME_LIMIT = flags.DEFINE_float("time_limit", 1.0,
                                 "sog's time_limit (seconds per decision).")
_SIMULATIONS = flags.DEFINE_integer(
    "simulations", -1, "sog's simulations: -1 (its default) searches by "
    "time alone under the time limit, a count caps the search (the runs "
    "in benchmarks/results used 1000).")
_MAX_HISTORIES = flags.DEFINE_integer(
    "max_histories", -1, "sog's max_histories (-1: the bot's default).")
_POLICY_THRESHOLD = flags.DEFINE_float(
    "policy_threshold", 0.0, "sog's policy_threshold (0: plays the searched "
    "policy; e.g. 0.15 drops the actions below 0.15 and renormalises).")
_OPPONENT = flags.DEFINE_string(
    "opponent", "uniform_random", "The opponent: 'uniform_random', or a bot "
    "string for pyspiel.load_bot, where '{seed}' stands for the game's seed "
    "(e.g. 'ismcts(simulations=5000,seed={seed})').")
_PLAYER = flags.DEFINE_string(
    "player", "", "Seat another bot in SoG's place, as a bot string where "
    "'{seed}' stands for the game's seed plus 1000 (so that it differs from "
    "the opponent's; e.g. the opponent itself, to see what it scores "
    "against itself); empty: SoG, with the flags above.")
_FIRST_SEED = flags.DEFINE_integer(
    "first_seed", 0, "Seed of the first pair of games (games 2k and 2k + 1 "
    "use --first_seed + k): another value plays other games.")
_PARAMS = flags.DEFINE_string(
    "params", "", "More sog parameters, 'name=value,name=value' (e.g. "
    "'averaging_power=2'); those with a flag of their own are refused.")
_JSON = flags.DEFINE_bool("json", False, "Also print the rows as JSON.")

_OWN_FLAGS = {"time_limit": "time_limit", "simulations": "simulations",
              "seed": "first_seed", "policy_threshold": "policy_threshold",
              "max_histories": "max_histories"}


def extra_params() -> dict:
  """--params as typed sog parameters (checked by SoGConfig)."""
  try:
    return sog.SoGConfig.params_from_text(_PARAMS.value, {
        name: f"is set by a flag of its own (--{flag}); use that instead"
        for name, flag in _OWN_FLAGS.items()})
  except ValueError as e:
    raise app.UsageError(str(e)) from None


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
  """95% Wilson score interval of a win rate."""
  if n == 0:
    return (0.0, 1.0)
  p = wins / n
  centre = (p + z * z / (2 * n)) / (1 + z * z / n)
  half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
  return (centre - half, centre + half)


def opponent_bot(game, player: int, seed: int):
  """The opponent bot, or None for uniform random (drawn from the game's
  random state)."""
  if _OPPONENT.value == "uniform_random":
    return None
  bot = pyspiel.load_bot(_OPPONENT.value.replace("{seed}", str(seed)), game,
                         player)
  bot.restart()
  return bot


def play(game, seat: int, seed: int, times: list[float],
         opponent_times: list[float], extra: dict) -> float:
  """One game, SoG in `seat`; returns SoG's return."""
  rng = np.random.RandomState(seed)
  other = opponent_bot(game, 1 - seat, seed)
  if _PLAYER.value:
    bot = pyspiel.load_bot(_PLAYER.value.replace("{seed}", str(seed + 1000)),
                           game, seat)
  else:
    bot = pyspiel.load_bot("sog", game, seat, {
        **extra, "time_limit": _TIME_LIMIT.value,
        "simulations": _SIMULATIONS.value, "seed": seed,
        "policy_threshold": _POLICY_THRESHOLD.value,
        **({"max_histories": _MAX_HISTORIES.value}
           if _MAX_HISTORIES.value >= 0 else {})})
  bot.restart()
  state = game.new_initial_state()
  decisions = 0
  while not state.is_terminal():
    if _MAX_MOVES.value and decisions >= _MAX_MOVES.value:
      return 0.0  # stopped at the cap: a draw
    if state.is_chance_node():
      actions, probs = zip(*state.chance_outcomes())
      state.apply_action(int(rng.choice(actions, p=probs)))
      continue
    player = state.current_player()
    if player == seat:
      start = time.monotonic()
      action = bot.step(state)
      times.append(time.monotonic() - start)
      if other is not None:
        other.inform_action(state, player, action)
    elif other is None:
      action = int(rng.choice(state.legal_actions()))
      bot.inform_action(state, player, action)
    else:
      start = time.monotonic()
      action = other.step(state)
      opponent_times.append(time.monotonic() - start)
      bot.inform_action(state, player, action)
    state.apply_action(action)
    decisions += 1
  return state.returns()[seat]


def run_game(name: str, extra: dict) -> dict:
  game = pyspiel.load_game(name)
  times: list[float] = []
  opponent_times: list[float] = []
  returns = []
  start = time.monotonic()
  for g in range(_NUM_GAMES.value):
    # Duplicate seats: games 2k and 2k + 1 share seed k, SoG in each seat.
    returns.append(play(game, g % 2, _FIRST_SEED.value + g // 2, times,
                        opponent_times, extra))
    print(f"{name}: game {g + 1}/{_NUM_GAMES.value}, seat {g % 2}, return "
          f"{returns[-1]:+g} ({time.monotonic() - start:.0f} s)",
          file=sys.stderr, flush=True)
  wins = sum(r > 0 for r in returns)
  draws = sum(r == 0 for r in returns)
  n = len(returns)
  # SoG's wins / draws / losses in each seat (games 2k: seat 0).
  by_seat = [[sum(r > 0 for r in returns[s::2]),
              sum(r == 0 for r in returns[s::2]),
              sum(r < 0 for r in returns[s::2])] for s in (0, 1)]
  low, high = wilson(wins, n)
  half = 1.96 * float(np.std(returns, ddof=1)) / math.sqrt(n) if n > 1 else 0
  return {
      "game": name, "player": _PLAYER.value or "sog",
      "opponent": _OPPONENT.value, "games": n, "wins": wins,
      "max_moves": _MAX_MOVES.value,
      "draws": draws, "losses": n - wins - draws, "win_rate": wins / n,
      "win_rate_95": [low, high], "mean_return": float(np.mean(returns)),
      "mean_return_95": half,
      "decision_seconds_median": statistics.median(times),
      "decision_seconds_max": max(times), "time_limit": _TIME_LIMIT.value,
      "policy_threshold": _POLICY_THRESHOLD.value,
      "simulations": _SIMULATIONS.value, "params": extra, "seat_0": by_seat[0],
      "seat_1": by_seat[1], "returns": returns,
      "opponent_seconds_median": (statistics.median(opponent_times)
                                  if opponent_times else None),
  }


def main(argv):
  del argv
  extra = extra_params()
  if _PLAYER.value and extra:
    raise app.UsageError("--params sets sog parameters; with --player the "
                         "seat holds another bot")
  rows = [run_game(name, extra) for name in _GAMES.value.split(";") if name]
  who = (_PLAYER.value if _PLAYER.value else
         f"SoG (time_limit={_TIME_LIMIT.value} s, policy_threshold="
         f"{_POLICY_THRESHOLD.value:g}"
         f"{''.join(f', {k}={v}' for k, v in extra.items())})")
  print(f"{who} against {_OPPONENT.value}, "
        f"{_NUM_GAMES.value} games per row, duplicate seats\n")
  print("| game | wins / draws / losses | as seat 0 | as seat 1 | win rate "
        "(95%) | mean return (95%) | SoG s per decision (median / max) | "
        "opponent s (median) |")
  print("|---|---|---|---|---|---|---|---|")
  for r in rows:
    low, high = r["win_rate_95"]
    other = r["opponent_seconds_median"]
    print(f"| {r['game']} | {r['wins']} / {r['draws']} / {r['losses']} | "
          f"{' / '.join(map(str, r['seat_0']))} | "
          f"{' / '.join(map(str, r['seat_1']))} | "
          f"{r['win_rate']:.2f} ({low:.2f}-{high:.2f}) | "
          f"{r['mean_return']:+.2f} +- {r['mean_return_95']:.2f} | "
          f"{r['decision_seconds_median']:.2f} / "
          f"{r['decision_seconds_max']:.2f} | "
          f"{'' if other is None else f'{other:.2f}'} |")
  if _JSON.value:
    print(json.dumps({"rows": rows}))


if __name__ == "__main__":
  app.run(main)
