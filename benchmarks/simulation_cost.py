r"""Cost of a simulation: SoG against OpenSpiel's C++ MCTS, side by side.

  python benchmarks/simulation_cost.py --simulations=1000,10000 --json

For each game of --games (perfect-information games), at --positions
positions (the initial state, then states reached by uniformly random moves
from a fixed seed), and each count of --simulations, a fresh SoG(s, c) bot
per engine of --engines (`pyspiel.load_bot("sog", ...)` with --sog_params
and `engine=...`: "native" is the C++ history engine, "python" the public-
state GT-CFR) and a fresh `pyspiel.MCTSBot` (s simulations, uct_c 2, a
`RandomRolloutEvaluator` with one rollout) each take one decision, in turn,
in this process, --repeats times. Reported: the median seconds per decision
of each, and their ratio (SoG / MCTS), per game, count and engine (over
positions and repeats). By default SoG values a leaf with one random game
(`rollouts=1`), as MCTS's evaluator does per simulation, so that the ratio
compares equal work; its expansions_per_update is its default (-1: paced by
work on the native engine, 1 on the Python one).

--anchored_games (fog-of-war games searched by the anchored subgame) adds,
per game and engine (the native one per --anchored_threads), the histories
in the tree, the growth simulations and the CFR+ iterations of a first
search of --anchored_seconds at the first decision (past any chance draws at the start, drawn from --seed; medians
of --repeats, each with its own seed) and the native/python ratios, its
leaves valued by --anchored_value_function (rollouts by default; `auto`
takes a network shipped for the game), with --anchored_params.
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
_SIMULATIONS = flags.DEFINE_list(
    "simulations", ["1000", "10000"],
    "Simulations of both searches, one measurement per count.")
_ENGINES = flags.DEFINE_list("engines", ["native"],
                             "SoG's engines to measure: native, python.")
_ANCHORED = flags.DEFINE_string(
    "anchored_games", "phantom_ttt",
    "Fog-of-war games whose anchored search is measured by histories and "
    "iterations per --anchored_seconds, engine against engine "
    "(';'-separated; empty: none).")
_ANCHORED_SECONDS = flags.DEFINE_float("anchored_seconds", 1.0,
                                       "time_limit of those searches.")
_ANCHORED_VALUES = flags.DEFINE_string(
    "anchored_value_function", "rollout",
    "value_function of those searches (rollout: random rollouts, the "
    "engines' own work; auto: a network shipped for the game, if any).")
_ANCHORED_ENGINES = flags.DEFINE_list(
    "anchored_engines", ["python", "native"],
    "Engines of those searches (the ratios need both; a game of Python "
    "states, such as scotland_yard, has only the Python one).")
_ANCHORED_THREADS = flags.DEFINE_list(
    "anchored_threads", ["1", "2"],
    "Threads of the native engine's anchored searches, one measurement "
    "each (2: the expander thread beside the CFR thread).")
_ANCHORED_PARAMS = flags.DEFINE_string(
    "anchored_params", "",
    "More sog parameters of those searches, comma-separated (e.g. "
    "leaf_batch=64).")
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


def measure(game_string: str, simulations: int) -> list[dict]:
  game = pyspiel.load_game(game_string)
  if (game.get_type().information !=
      pyspiel.GameType.Information.PERFECT_INFORMATION):
    raise ValueError(f"simulation_cost: {game_string} is not a perfect-"
                     "information game (OpenSpiel's MCTS needs one)")
  sog_times = {engine: [] for engine in _ENGINES.value}
  mcts_times = []
  for state in positions(game, _POSITIONS.value, _SEED.value):
    player = state.current_player()
    for rep in range(_REPEATS.value):
      for engine in _ENGINES.value:
        params = [p for p in _SOG_PARAMS.value.split(",") if p] + [
            f"simulations={simulations}", f"seed={rep}", f"engine={engine}"]
        sog = pyspiel.load_bot(f"sog({','.join(params)})", game, player)
        start = time.perf_counter()
        sog.step(state)
        sog_times[engine].append(time.perf_counter() - start)
      mcts = pyspiel.MCTSBot(game, pyspiel.RandomRolloutEvaluator(1, rep),
                             2.0, simulations, 10**9, False, rep, False)
      start = time.perf_counter()
      mcts.step(state)
      mcts_times.append(time.perf_counter() - start)
  mcts_median = statistics.median(mcts_times)
  return [{"game": game_string, "simulations": simulations, "engine": engine,
           "decisions": len(times),
           "sog_seconds": statistics.median(times),
           "mcts_seconds": mcts_median,
           "ratio": statistics.median(times) / mcts_median}
          for engine, times in sog_times.items()]


_LABELS = {"python": "python engine", "native": "native engine",
           "native_2threads": "native engine on two threads"}


def measure_anchored(game_string: str) -> dict:
  """Histories and CFR+ iterations of first searches of the anchored
  subgame, per engine and, on the native engine, per thread count
  (medians of --repeats seeds; each repeat runs every variant in turn, so
  that a busy machine slows them alike)."""
  game = pyspiel.load_game(game_string)
  # (The first decision: past any chance draws at the start, as London's
  # Mr. X start; `positions` draws them from --seed.)
  start = positions(game, 1, _SEED.value)[0]
  out = {"game": game_string, "seconds": _ANCHORED_SECONDS.value,
         "value_function": _ANCHORED_VALUES.value,
         "params": _ANCHORED_PARAMS.value}
  variants = []  # (label, engine, threads)
  for engine in _ANCHORED_ENGINES.value:
    if engine not in ("python", "native"):
      raise ValueError(f"--anchored_engines takes python and native, got "
                       f"{engine!r}")
    if engine == "python":
      variants.append(("python", "python", 1))
      continue
    for threads in map(int, _ANCHORED_THREADS.value):
      if threads not in (1, 2):
        raise ValueError(f"--anchored_threads takes 1 and 2, got {threads}")
      variants.append(("native" if threads == 1 else "native_2threads",
                       "native", threads))
  measured = {label: {"histories": [], "iterations": [], "simulations": [],
                      "seconds": []} for label, _, _ in variants}
  for rep in range(_REPEATS.value):
    for label, engine, threads in variants:
      bot = pyspiel.load_bot(
          f"sog(subgame=anchored,engine={engine},seed={rep},"
          f"threads={threads},"
          f"value_function={_ANCHORED_VALUES.value},"
          f"time_limit={_ANCHORED_SECONDS.value}"
          f"{',' + _ANCHORED_PARAMS.value if _ANCHORED_PARAMS.value else ''})",
          game,
          start.current_player())
      begin = time.perf_counter()
      bot.step(start)
      took = time.perf_counter() - begin
      result = bot.anchored.last_result
      m = measured[label]
      m["histories"].append(result.nodes)
      m["iterations"].append(result.iterations)
      m["simulations"].append(result.simulations)
      m["seconds"].append(took)
  for label, m in measured.items():
    out[label] = {name: statistics.median(values)
                  for name, values in m.items()}
  if "python" in out:
    for label, suffix in (("native", ""), ("native_2threads", "_2threads")):
      if label in out:
        out["histories_ratio" + suffix] = (out[label]["histories"] /
                                           out["python"]["histories"])
        out["iterations_ratio" + suffix] = (out[label]["iterations"] /
                                            out["python"]["iterations"])
  return out


def main(argv):
  del argv
  rows = []
  for game_string in [g for g in _GAMES.value.split(";") if g]:
    for simulations in map(int, _SIMULATIONS.value):
      for row in measure(game_string, simulations):
        rows.append(row)
        print(f"{row['game']}: SoG ({row['engine']}) {row['sog_seconds']:.4f}"
              f" s, MCTS {row['mcts_seconds']:.4f} s per decision of "
              f"{simulations} simulations (medians of {row['decisions']}): "
              f"ratio {row['ratio']:.2f}", flush=True)
  anchored = []
  for game_string in [g for g in _ANCHORED.value.split(";") if g]:
    row = measure_anchored(game_string)
    anchored.append(row)
    labels = [k for k in ("python", "native", "native_2threads") if k in row]
    parts = [f"{row[e]['histories']:.0f} histories after "
             f"{row[e]['simulations']:.0f} simulations and "
             f"{row[e]['iterations']:.0f} CFR+ iterations on the "
             f"{_LABELS[e]}" for e in labels]
    ratios = "".join(
        f" (ratios to Python{name}: {row['histories_ratio' + suffix]:.1f} "
        f"and {row['iterations_ratio' + suffix]:.1f})"
        for name, suffix in (("", ""), (", two threads", "_2threads"))
        if "histories_ratio" + suffix in row)
    print(f"{game_string}: a {row['seconds']:g} s anchored search "
          f"(value_function={row['value_function']}) holds "
          f"{', '.join(parts)}{ratios}", flush=True)
  if _JSON.value:
    print(json.dumps({"sog_params": _SOG_PARAMS.value, "rows": rows,
                      "anchored": anchored}))


if __name__ == "__main__":
  try:
    app.run(main)
  except ValueError as e:
    print(e, file=sys.stderr)
    sys.exit(2)
