r"""Cost of a simulation: SoG against OpenSpiel's C++ MCTS, side by side.

  python benchmarks/simulation_cost.py --json

For each game of --games (perfect-information games), at --positions
positions (the initial state, then states reached by uniformly random moves
from a fixed seed), a fresh SoG(--simulations, 1) bot (`pyspiel.load_bot("sog",
...)` with --sog_params) and a fresh `pyspiel.MCTSBot` (--simulations
simulations, uct_c 2, a `RandomRolloutEvaluator` with one rollout) each take
one decision, in turn, in this process, --repeats times. Reported: the
median seconds per decision of each, and their ratio (SoG / MCTS), per game
(over positions and repeats). Both searches are timed from `step` to its
return. By default SoG's rollout value function plays one random game per
leaf (`rollouts=1`), as MCTS's evaluator does per simulation, so that the
ratio compares equal work; `--sog_params=value_function=rollout` compares
the bots as configured (sog's default is 8 rollouts per leaf history).
"""

import json
import statistics
import sys
import time

from absl import app
from absl import flags
import numpy as np
import pyspiel

import open_spiel_sog  # pylint: disable=unused-import  (registers "sog")

_GAMES = flags.DEFINE_string(
    "games", "connect_four;chess;go(board_size=9)",
    "Perfect-information games, separated by ';'.")
_SIMULATIONS = flags.DEFINE_integer("simulations", 100,
                                    "Simulations of both searches.")
_SOG_PARAMS = flags.DEFINE_string(
    "sog_params", "value_function=rollout,rollouts=1",
    "Other sog parameters, 'name=value,...' (default: one rollout per leaf, "
    "MCTS's work per simulation).")
_POSITIONS = flags.DEFINE_integer(
    "positions", 3, "Positions per game: the initial state and states after "
    "10, 20, ... uniformly random moves.")
_REPEATS = flags.DEFINE_integer("repeats", 5,
                                "Decisions per bot and position.")
_SEED = flags.DEFINE_integer("seed", 0, "Seed of the random moves.")
_JSON = flags.DEFINE_bool("json", False, "Print a JSON summary last.")


def positions(game: pyspiel.Game, count: int, seed: int) -> list:
  """The initial state and states after 10, 20, ... random moves (chance
  sampled), skipping any that end the game."""
  rng = np.random.default_rng(seed)
  out = []
  for k in range(count):
    state = game.new_initial_state()
    moves = 0
    while moves < 10 * k and not state.is_terminal():
      if state.is_chance_node():
        actions, probs = zip(*state.chance_outcomes())
        state.apply_action(int(rng.choice(actions, p=probs)))
        continue
      state.apply_action(int(rng.choice(state.legal_actions())))
      moves += 1
    while state.is_chance_node():
      actions, probs = zip(*state.chance_outcomes())
      state.apply_action(int(rng.choice(actions, p=probs)))
    if not state.is_terminal():
      out.append(state)
  return out


def measure(game_string: str) -> dict:
  game = pyspiel.load_game(game_string)
  if (game.get_type().information !=
      pyspiel.GameType.Information.PERFECT_INFORMATION):
    raise ValueError(f"simulation_cost: {game_string} is not a perfect-"
                     "information game (OpenSpiel's MCTS needs one)")
  sog_times, mcts_times = [], []
  for state in positions(game, _POSITIONS.value, _SEED.value):
    player = state.current_player()
    for rep in range(_REPEATS.value):
      params = [p for p in _SOG_PARAMS.value.split(",") if p] + [
          f"simulations={_SIMULATIONS.value}", f"seed={rep}"]
      sog = pyspiel.load_bot(f"sog({','.join(params)})", game, player)
      mcts = pyspiel.MCTSBot(game, pyspiel.RandomRolloutEvaluator(1, rep),
                             2.0, _SIMULATIONS.value, 10**9, False, rep,
                             False)
      start = time.perf_counter()
      sog.step(state)
      sog_times.append(time.perf_counter() - start)
      start = time.perf_counter()
      mcts.step(state)
      mcts_times.append(time.perf_counter() - start)
  sog_median = statistics.median(sog_times)
  mcts_median = statistics.median(mcts_times)
  return {"game": game_string, "decisions": len(sog_times),
          "sog_seconds": sog_median, "mcts_seconds": mcts_median,
          "ratio": sog_median / mcts_median}


def main(argv):
  del argv
  rows = []
  for game_string in [g for g in _GAMES.value.split(";") if g]:
    row = measure(game_string)
    rows.append(row)
    print(f"{row['game']}: SoG {row['sog_seconds']:.4f} s, MCTS "
          f"{row['mcts_seconds']:.4f} s per decision of "
          f"{_SIMULATIONS.value} simulations (medians of "
          f"{row['decisions']}): ratio {row['ratio']:.1f}", flush=True)
  if _JSON.value:
    print(json.dumps({"simulations": _SIMULATIONS.value,
                      "sog_params": _SOG_PARAMS.value, "rows": rows}))


if __name__ == "__main__":
  try:
    app.run(main)
  except ValueError as e:
    print(e, file=sys.stderr)
    sys.exit(2)
