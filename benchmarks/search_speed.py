r"""Speed of a SoG decision with a network, against a fixed C++ workload.

  python benchmarks/search_speed.py --json

Times the median SoG(--simulations, 1) decision with the network shipped for
--game (`value_function=auto`, Leduc's by default) and, in the same process,
the median time of --cfr_iterations iterations of OpenSpiel's C++
`CFRPlusSolver` on the same game, and prints their ratio (issue 16: 0.22
when the issue was written, goal 0.07). The decisions are the first
decision of player 0 and, after player 0 calls, player 1's, for --deals
deals (drawn from --seed), each by a fresh bot with seeds 0 .. --repeats - 1
(one warm-up decision first: first calls pay for imports and caches;
bots after the first at a state reuse the exact expansions and encodings it
built, unless --cold clears them before each decision). The
workload is timed --cfr_repeats times, before the decisions, after them and
between states, so that a machine whose speed drifts during the run (this
shared one's does, by up to 2x) shows in both medians. --json
adds, on the last line, the summary and every decision's policy (so a
change to the search can be checked for the same results on the same
seeds). Progress goes to stderr.
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
from open_spiel_sog.algorithms.sog import cvpn

_GAME = flags.DEFINE_string("game", "leduc_poker",
                            "A game with a shipped network.")
_SIMULATIONS = flags.DEFINE_integer("simulations", 100,
                                    "sog's simulations (SoG(s, 1)).")
_WALKS = flags.DEFINE_integer(
    "walks_per_simulation", 100,
    "sog's walks_per_simulation (1: every walk a simulation, the search "
    "before redrawn walks; docs/sog.md).")
_DEALS = flags.DEFINE_integer("deals", 3, "Deals to decide at.")
_REPEATS = flags.DEFINE_integer("repeats", 3,
                                "Bots (seeds 0, 1, ...) per decision.")
_CFR_ITERATIONS = flags.DEFINE_integer(
    "cfr_iterations", 100, "CFRPlusSolver iterations in the C++ workload.")
_CFR_REPEATS = flags.DEFINE_integer(
    "cfr_repeats", 7,
    "Times the workload is timed (at least 2), spread over the run: before "
    "the decisions, after them and evenly between the states.")
_SEED = flags.DEFINE_integer("seed", 0, "Seed of the deals.")
_COLD = flags.DEFINE_bool(
    "cold", False,
    "Clear what searches share across bots (exact expansions, encodings: "
    "cvpn.clear_shared_caches) before each timed decision, as a process's "
    "first search at a state finds it; without it, the bots after the "
    "first at each state reuse what it built (the same results).")
_JSON = flags.DEFINE_bool("json", False, "Print a JSON summary last.")


def decision_states(game: pyspiel.Game, deals: int, seed: int) -> list:
  """Per deal: player 0's first decision and player 1's after a call."""
  rng = np.random.default_rng(seed)
  out = []
  for _ in range(deals):
    state = game.new_initial_state()
    while state.is_chance_node():
      actions, probs = zip(*state.chance_outcomes())
      state.apply_action(int(rng.choice(actions, p=probs)))
    out.append(state.clone())
    state.apply_action(state.legal_actions()[0])  # (Leduc: call)
    if not state.is_terminal() and not state.is_chance_node():
      out.append(state.clone())
  return out


def cfr_seconds(game: pyspiel.Game, iterations: int) -> float:
  solver = pyspiel.CFRPlusSolver(game)
  start = time.perf_counter()
  for _ in range(iterations):
    solver.evaluate_and_update_policy()
  return time.perf_counter() - start


def main(argv):
  del argv
  game = pyspiel.load_game(_GAME.value)
  path = cvpn.shipped_checkpoint(game)
  if path is not None:
    try:
      cvpn.read_checkpoint(path)
    except cvpn.CheckpointError:  # (a policy-value network: no CVPN)
      path = None
  if path is None:
    print(f"search_speed: no CVPN network ships for {game} (this times a "
          f"CVPN search against CFR+); shipped: "
          f"{', '.join(cvpn.shipped_games())}", file=sys.stderr)
    sys.exit(2)
  params = {"simulations": _SIMULATIONS.value, "expansions_per_update": 1.0,
            "walks_per_simulation": _WALKS.value}
  if _WALKS.value < 1:
    print("search_speed: --walks_per_simulation must be at least 1",
          file=sys.stderr)
    sys.exit(2)
  states = decision_states(game, _DEALS.value, _SEED.value)
  warm = pyspiel.load_bot("sog", game, states[0].current_player(),
                          dict(params, seed=0))
  warm.step(states[0])
  if _CFR_REPEATS.value < 2:
    print("search_speed: --cfr_repeats must be at least 2 (before and after "
          "the decisions)", file=sys.stderr)
    sys.exit(2)
  # After how many states each workload run comes (0: before them all).
  cfr_after = np.round(np.linspace(0, len(states),
                                   _CFR_REPEATS.value)).astype(int).tolist()
  cfr = [cfr_seconds(game, _CFR_ITERATIONS.value)
         for _ in range(cfr_after.count(0))]
  times, decisions = [], []
  for k, state in enumerate(states):
    player = state.current_player()
    for seed in range(_REPEATS.value):
      bot = pyspiel.load_bot("sog", game, player, dict(params, seed=seed))
      if _COLD.value:
        cvpn.clear_shared_caches()
      start = time.perf_counter()
      policy = bot.get_policy(state)
      times.append(time.perf_counter() - start)
      decisions.append({"history": state.history(), "seed": seed,
                        "policy": [[int(a), float(p)] for a, p in policy]})
    print(f"search_speed: state {k + 1}/{len(states)}", file=sys.stderr,
          flush=True)
    cfr += [cfr_seconds(game, _CFR_ITERATIONS.value)
            for _ in range(cfr_after.count(k + 1))]
  sog_median = statistics.median(times)
  cfr_median = statistics.median(cfr)
  summary = {
      "game": str(game), "simulations": _SIMULATIONS.value,
      "walks_per_simulation": _WALKS.value, "decisions": len(times),
      "sog_seconds": sog_median,
      "cfr_iterations": _CFR_ITERATIONS.value, "cfr_seconds": cfr_median,
      "cfr_runs": cfr, "ratio": sog_median / cfr_median,
      "cold": _COLD.value,
  }
  print(f"{game}: SoG({_SIMULATIONS.value}, 1) with the shipped network "
        f"{sog_median:.3f} s per decision (median of {len(times)})"
        f"{' (cold caches)' if _COLD.value else ''}; "
        f"{_CFR_ITERATIONS.value} iterations of C++ CFRPlusSolver "
        f"{cfr_median:.3f} s (median of {len(cfr)}): ratio "
        f"{summary['ratio']:.3f}")
  if _JSON.value:
    print(json.dumps(dict(summary, policies=decisions)))


if __name__ == "__main__":
  app.run(main)
