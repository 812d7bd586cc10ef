r"""Whether SoG's detectives search the exact set of Mr. X's possible
locations (issue 72 item 5's check).

Plays London games with `scotland_yard_mcts` on both sides; at the
detectives' decisions of the chosen rounds, the `sog` bot searches the
position for `--time_limit` seconds and its anchored subgame's root
histories of the detectives' infostate are read: the stations Mr. X holds in
them, against `scotland_yard_mcts`'s possible-location set (the set the
travel log allows). Prints, per round, how many histories the root and the
tree hold and how much of the possible set the root covers.

  python benchmarks/scotland_yard_root_set.py --games=4 --json
"""

from __future__ import annotations

import json
import random
import statistics
import time

from absl import app
from absl import flags
import pyspiel

import open_spiel_sog  # pylint: disable=unused-import  (registers the bots)
from open_spiel_sog.bots import scotland_yard_mcts as sym

_GAME = flags.DEFINE_string("game", "scotland_yard(map=london)", "The game.")
_GAMES = flags.DEFINE_integer("games", 4, "Games played.")
_ROUNDS = flags.DEFINE_list("rounds", ["1", "5", "15"],
                            "Rounds (Mr. X's moves made) at which the "
                            "detectives' first decision is searched.")
_TIME = flags.DEFINE_float("time_limit", 0.5, "The sog bot's seconds a move.")
_PLAYOUTS = flags.DEFINE_integer("playouts", 300, "scotland_yard_mcts's "
                                 "playouts a move, for the games' moves.")
_SEED = flags.DEFINE_integer("seed", 0, "Seed of the games.")
_JSON = flags.DEFINE_bool("json", False, "Print one JSON line at the end.")


def _mrx_station(python_game, history) -> int:
  """Mr. X's station after `history`, replayed in the Python twin."""
  state = python_game.new_initial_state()
  for a in history:
    state.apply_action(a)
  return state.mrx


def main(argv):
  del argv
  game = pyspiel.load_game(_GAME.value)
  python_game = pyspiel.load_game("python_" + _GAME.value)
  rounds = sorted(int(r) for r in _ROUNDS.value)
  engine = sym.engine(game)
  rng = random.Random(_SEED.value)
  rows = {r: [] for r in rounds}
  for g in range(_GAMES.value):
    movers = [pyspiel.load_bot("scotland_yard_mcts", game, p, {
        "playouts": _PLAYOUTS.value, "seed": _SEED.value * 1000 + 2 * g + p})
              for p in range(2)]
    state = game.new_initial_state()
    searched = set()
    while not state.is_terminal():
      if state.is_chance_node():
        outcomes = state.chance_outcomes()
        state.apply_action(rng.choices([a for a, _ in outcomes],
                                       [p for _, p in outcomes])[0])
        continue
      player = state.current_player()
      history = list(state.history())
      if player == 1:
        made = sum(1 for _ in _mrx_moves(python_game, history))
        if made in rounds and made not in searched:
          searched.add(made)
          bot = pyspiel.load_bot("sog", game, 1, {
              "time_limit": _TIME.value, "seed": g})
          start = time.perf_counter()
          bot.step(state)
          seconds = time.perf_counter() - start
          search = bot.anchored
          result = search.last_result
          n1 = result.root_histories[0]
          root = search.last_root[:n1]
          stations = {_mrx_station(python_game, r.state.history())
                      for r in root}
          possible = set(engine.possible_locations(history))
          rows[made].append({
              "game": g, "root_histories": n1,
              "tree_histories": result.nodes,
              "simulations": result.simulations,
              "possible": len(possible), "covered": len(stations & possible),
              "outside": len(stations - possible),
              "equal": stations == possible, "seconds": round(seconds, 3)})
          print(f"game {g} round {made}: root {n1} histories, "
                f"{len(stations & possible)} of {len(possible)} possible "
                f"stations, {len(stations - possible)} outside", flush=True)
      state.apply_action(movers[player].step(state))
  summary = {}
  for r, rs in rows.items():
    if not rs:
      continue
    summary[r] = {
        "searches": len(rs),
        "median_root_histories": statistics.median(x["root_histories"]
                                                   for x in rs),
        "median_tree_histories": statistics.median(x["tree_histories"]
                                                   for x in rs),
        "median_possible": statistics.median(x["possible"] for x in rs),
        "median_covered": statistics.median(x["covered"] for x in rs),
        "equal": sum(x["equal"] for x in rs),
        "outside": sum(x["outside"] for x in rs)}
    print(f"round {r}: {summary[r]}")
  if _JSON.value:
    print(json.dumps({"game": _GAME.value, "time_limit": _TIME.value,
                      "rows": rows, "summary": summary}))


def _mrx_moves(python_game, history):
  """Mr. X's moves in `history` (one per round he has moved)."""
  state = python_game.new_initial_state()
  for a in history:
    if not state.is_chance_node() and state.current_player() == 0:
      yield a
    state.apply_action(a)


if __name__ == "__main__":
  app.run(main)
