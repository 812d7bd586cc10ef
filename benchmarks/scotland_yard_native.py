r"""The C++ Scotland Yard against its Python twin: a timed anchored rollout
search's simulations and histories on one position, side by side in one
process.

  python benchmarks/scotland_yard_native.py --json
  # results: benchmarks/results/scotland_yard/
  #   scotland_yard_native_london_2s_2026-12-05.json

The position: --game's first decision of --player after --walk random
actions (seed --seed). For each game (`scotland_yard`, the C++ game searched
on the native engine; `python_scotland_yard`, the Python game on the Python
engine) --repeats fresh `AnchoredSearch`es (rollout leaves, the defaults of
`AnchoredConfig`, no simulation cap) run to a --seconds deadline; reported
per game: the median growth simulations (`AnchoredResult.simulations`) and
histories in the tree (`AnchoredResult.nodes`), and their ratios.
"""

import json
import platform
import random
import statistics
import time

from absl import app
from absl import flags
import pyspiel

import open_spiel_sog  # pylint: disable=unused-import  (registers the games)
from open_spiel_sog.algorithms.sog.anchored.search import AnchoredConfig
from open_spiel_sog.algorithms.sog.anchored.search import AnchoredSearch
from open_spiel_sog.games import scotland_yard

_GAME = flags.DEFINE_string("game", "scotland_yard(map=london)",
                            "The C++ game (python_ is prefixed for the twin).")
_SECONDS = flags.DEFINE_float("seconds", 2.0, "Seconds a search.")
_PLAYER = flags.DEFINE_integer("player", 1, "The searcher (1: detectives).")
_WALK = flags.DEFINE_integer("walk", 0, "Random actions before the "
                             "searcher's first decision.")
_REPEATS = flags.DEFINE_integer("repeats", 3, "Searches per game.")
_SEED = flags.DEFINE_integer("seed", 0, "Seed of the walk and the searches.")
_THREADS = flags.DEFINE_integer(
    "threads", 1, "The native engine's threads (2: the expander beside the "
    "CFR thread); the Python engine runs on one.")
_JSON = flags.DEFINE_bool("json", False, "Print a JSON summary, last.")


def position(game: pyspiel.Game) -> pyspiel.State:
  rng = random.Random(_SEED.value)
  state = game.new_initial_state()
  walked = 0
  while not state.is_terminal() and (
      walked < _WALK.value or state.current_player() != _PLAYER.value):
    state.apply_action(rng.choice(state.legal_actions()))
    walked += 1
  if state.is_terminal():
    raise app.UsageError("the game ended before the searcher's decision")
  return state


def measure(game_string: str, native: bool) -> dict:
  game = pyspiel.load_game(game_string)
  state = position(game)
  rows = []
  for k in range(_REPEATS.value):
    search = AnchoredSearch(game, _PLAYER.value, AnchoredConfig(
        simulations=10**9, seed=_SEED.value + k,
        threads=_THREADS.value if native else 1), native=native)
    result = search.search(state, time.monotonic() + _SECONDS.value)
    rows.append({"simulations": result.simulations, "histories": result.nodes,
                 "iterations": result.iterations,
                 "seconds": result.seconds})
    print(f"[{game_string}] search {k}: {result.simulations} simulations, "
          f"{result.nodes} histories, {result.iterations} CFR+ iterations, "
          f"{result.seconds:.2f} s", flush=True)
  return {"game": game_string, "engine": "native" if native else "python",
          "history": state.history(),
          "simulations": statistics.median(r["simulations"] for r in rows),
          "histories": statistics.median(r["histories"] for r in rows),
          "searches": rows}


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  if scotland_yard.NATIVE_REASON is not None:
    raise app.UsageError("scotland_yard is the Python game here: "
                         f"{scotland_yard.NATIVE_REASON}")
  if not _GAME.value.startswith("scotland_yard"):
    raise app.UsageError("--game must be a scotland_yard(...) game string")
  cpp = measure(_GAME.value, native=True)
  python = measure("python_" + _GAME.value, native=False)
  summary = {
      "command": "python benchmarks/scotland_yard_native.py " + " ".join(
          f"--{f}={flags.FLAGS[f].value}" for f in
          ("game", "seconds", "player", "walk", "repeats", "seed")),
      "machine": platform.platform(),
      "date": time.strftime("%Y-%m-%d", time.gmtime()),
      "cpp": cpp, "python": python,
      "simulations_ratio": cpp["simulations"] / max(python["simulations"], 1),
      "histories_ratio": cpp["histories"] / max(python["histories"], 1)}
  print(f"C++ game, native engine: {cpp['simulations']} simulations, "
        f"{cpp['histories']} histories; Python game, Python engine: "
        f"{python['simulations']} simulations, {python['histories']} "
        f"histories; ratios {summary['simulations_ratio']:.0f}x simulations, "
        f"{summary['histories_ratio']:.0f}x histories")
  if _JSON.value:
    print(json.dumps(summary))


if __name__ == "__main__":
  app.run(main)
