r"""Exact solving and exact exploitability on small Scotland Yard maps.

    python benchmarks/scotland_yard_exact.py --json
    python benchmarks/scotland_yard_exact.py --configs=glasses_r6 --noagents
    python benchmarks/scotland_yard_exact.py --configs=glasses \
        --sog_seeds=0,1,2 --ismcts_simulations=100,1000

For every configuration (--configs, names from CONFIGS): the size of the game
(histories, terminal histories, public states, infostates per player) and of
its public tree, `check_public_states` on it, then PublicTreeCFR from the root for --iterations
iterations: the game value (OpenSpiel's `policy_value` of the average
policy), its exploitability judged by OpenSpiel's `exploitability` (NashConv /
2) and the seconds each step took, OpenSpiel's evaluation included.

With agents (the default; --noagents skips them), on every configuration in
--agent_configs:
  * SoG(s, 1) with the exact value function (--sog_simulations, seeds
    --sog_seeds), its policy built by the paper's protocol
    (`sog_exploitability`);
  * OpenSpiel's ISMCTSBot (its Python port: the C++ bot cannot resample a
    Python game) for each of --ismcts_simulations, its policy at every
    infostate tabulated from its searches (`bot_exploitability`), same seeds;
both scored by OpenSpiel's exact exploitability. Results go to --out (JSON).
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time

from absl import app
from absl import flags
import numpy as np
import pyspiel
from open_spiel.python.algorithms import expected_game_score
from open_spiel.python.algorithms import exploitability

import open_spiel_sog  # pylint: disable=unused-import (registers the game)
from open_spiel_sog.algorithms.cfr import PublicTreeCFR
from open_spiel_sog.evaluation.exploitability import bot_exploitability
from open_spiel_sog.evaluation.exploitability import sog_exploitability
from open_spiel_sog.public_state import ObserverConfig
from open_spiel_sog.public_state import PublicStateObserver
from open_spiel_sog.public_state import check_public_states

# name: game string. Rounds beyond 5 need more than the map's 5 tickets.
CONFIGS = {
    "glasses_r3_d39": "scotland_yard(map=glasses,max_rounds=3,"
                      "detective_starts=3/9)",
    "glasses_r3": "scotland_yard(map=glasses,max_rounds=3)",
    "glasses_r4": "scotland_yard(map=glasses,max_rounds=4)",
    "glasses": "scotland_yard(map=glasses)",
    "glasses_r6": "scotland_yard(map=glasses,max_rounds=6,detective_taxi=6,"
                  "mrx_taxi=6)",
    "glasses_r7": "scotland_yard(map=glasses,max_rounds=7,detective_taxi=7,"
                  "mrx_taxi=7)",
    "wheel": "scotland_yard(map=wheel)",
    "islands": "scotland_yard(map=islands)",
}

_CONFIGS = flags.DEFINE_list(
    "configs", ["glasses_r3_d39", "glasses_r3", "glasses_r4", "glasses",
                "wheel", "islands"],
    f"Configurations to size and solve; known: {', '.join(CONFIGS)}.")
_ITERATIONS = flags.DEFINE_integer("iterations", 1000,
                                   "PublicTreeCFR iterations from the root.")
_AGENTS = flags.DEFINE_bool("agents", True, "Also measure SoG and ISMCTS "
                            "exploitability on --agent_configs.")
_AGENT_CONFIGS = flags.DEFINE_list(
    "agent_configs", ["glasses_r3_d39", "glasses"],
    "Configurations on which SoG and ISMCTS are scored.")
_SOG_SIMULATIONS = flags.DEFINE_integer("sog_simulations", 100,
                                        "SoG's s (GT-CFR simulations).")
_SOG_SEEDS = flags.DEFINE_list("sog_seeds", ["0", "1", "2"],
                               "Seeds of the SoG and ISMCTS policies.")
_ISMCTS_SIMULATIONS = flags.DEFINE_list(
    "ismcts_simulations", ["100", "1000"],
    "ISMCTS simulations per search, one row each.")
_OUT = flags.DEFINE_string(
    "out", "", "Write the results as JSON here (default: none).")
_JSON = flags.DEFINE_bool("json", False, "Print one JSON object as the last "
                          "line.")


def _count_histories(game: pyspiel.Game) -> tuple[int, int]:
  """(histories, terminal histories), chance nodes included."""
  stack = [game.new_initial_state()]
  nodes = terminals = 0
  while stack:
    state = stack.pop()
    nodes += 1
    if state.is_terminal():
      terminals += 1
      continue
    actions = ([a for a, _ in state.chance_outcomes()]
               if state.is_chance_node() else state.legal_actions())
    stack.extend(state.child(a) for a in actions)
  return nodes, terminals


def measure_config(name: str, iterations: int) -> dict:
  """Sizes, PublicTreeCFR value and OpenSpiel-judged exploitability."""
  game = pyspiel.load_game(CONFIGS[name])
  row = {"config": name, "game": CONFIGS[name]}
  start = time.perf_counter()
  row["histories"], row["terminal_histories"] = _count_histories(game)
  row["count_seconds"] = time.perf_counter() - start

  start = time.perf_counter()
  observer = PublicStateObserver(
      game, ObserverConfig(max_public_states=5_000_000))
  solver = PublicTreeCFR(game, root=observer.root())
  row["tree_seconds"] = time.perf_counter() - start
  tree = solver.tree
  row["public_states"] = len(tree.public_states)
  row["decision_public_states"] = sum(
      1 for ps in tree.public_states if ps.is_player_node())
  row["infostates"] = [int(tree.players[p].num_rows) for p in range(2)]
  row["largest_public_state"] = max(len(ps.histories)
                                    for ps in tree.public_states)
  start = time.perf_counter()
  check = check_public_states(game, observer=observer)
  row["check_public_states"] = check["mode"]
  row["check_seconds"] = time.perf_counter() - start
  print(f"[{name}] {row['histories']:,} histories, {row['public_states']:,} "
        f"public states, infostates {row['infostates']} "
        f"(tree {row['tree_seconds']:.1f} s)", file=sys.stderr, flush=True)

  start = time.perf_counter()
  solver.run(iterations)
  row["cfr_seconds"] = time.perf_counter() - start
  row["iterations"] = iterations
  start = time.perf_counter()
  policy = solver.average_policy()
  row["policy_seconds"] = time.perf_counter() - start
  start = time.perf_counter()
  row["game_value_mrx"] = float(expected_game_score.policy_value(
      game.new_initial_state(), [policy, policy])[0])
  row["exploitability"] = float(exploitability.exploitability(game, policy))
  row["openspiel_seconds"] = time.perf_counter() - start
  print(f"[{name}] value (Mr. X) {row['game_value_mrx']:+.4f}, "
        f"exploitability {row['exploitability']:.2e} after {iterations} "
        f"iterations ({row['cfr_seconds']:.1f} s; OpenSpiel's evaluation "
        f"{row['openspiel_seconds']:.1f} s)", file=sys.stderr, flush=True)
  return row


def measure_agents(name: str, seeds: list[int], sog_simulations: int,
                   ismcts_simulations: list[int]) -> list[dict]:
  game = pyspiel.load_game(CONFIGS[name])
  rows = []
  result = sog_exploitability(
      game, {"simulations": sog_simulations, "value_function": "exact"},
      seeds, progress=True)
  result.update(config=name, agent=f"SoG({sog_simulations}, 1) exact")
  rows.append(result)
  print(f"[{name}] {result['agent']}: {result['values']}", file=sys.stderr,
        flush=True)
  for sims in ismcts_simulations:
    result = bot_exploitability(game, "ismcts", {"simulations": sims}, seeds,
                                progress=True)
    result.update(config=name, agent=f"ISMCTS({sims})")
    rows.append(result)
    print(f"[{name}] {result['agent']}: {result['values']}",
          file=sys.stderr, flush=True)
  return rows


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  for name in list(_CONFIGS.value) + list(_AGENT_CONFIGS.value):
    if name not in CONFIGS:
      raise app.UsageError(f"unknown configuration {name!r}; known: "
                           f"{', '.join(CONFIGS)}")
  try:
    seeds = [int(s) for s in _SOG_SEEDS.value]
    ismcts_sims = [int(s) for s in _ISMCTS_SIMULATIONS.value]
  except ValueError as e:
    raise app.UsageError(f"--sog_seeds/--ismcts_simulations: {e}") from None

  results = {"machine": platform.platform(), "configs": [], "agents": []}
  print("| config | histories | public states | infostates (X / D) | "
        "value (Mr. X) | exploitability | tree s | CFR s | OpenSpiel s |")
  print("|---|---|---|---|---|---|---|---|---|")
  for name in _CONFIGS.value:
    row = measure_config(name, _ITERATIONS.value)
    results["configs"].append(row)
    print(f"| {name} | {row['histories']:,} | {row['public_states']:,} | "
          f"{row['infostates'][0]:,} / {row['infostates'][1]:,} | "
          f"{row['game_value_mrx']:+.4f} | {row['exploitability']:.2e} | "
          f"{row['tree_seconds']:.1f} | {row['cfr_seconds']:.1f} | "
          f"{row['openspiel_seconds']:.1f} |", flush=True)
  if _AGENTS.value:
    print("\n| config | agent | exploitability min / mean / max | "
          "per seed | s per seed |")
    print("|---|---|---|---|---|")
    for name in _AGENT_CONFIGS.value:
      for row in measure_agents(name, seeds, _SOG_SIMULATIONS.value,
                                ismcts_sims):
        results["agents"].append(row)
        print(f"| {name} | {row['agent']} | {row['min']:.4f} / "
              f"{row['mean']:.4f} / {row['max']:.4f} | "
              f"{', '.join(f'{v:.4f}' for v in row['values'])} | "
              f"{np.mean(row['seconds']):.0f} |", flush=True)
  if _OUT.value:
    os.makedirs(os.path.dirname(os.path.abspath(_OUT.value)), exist_ok=True)
    with open(_OUT.value, "w", encoding="utf-8") as f:
      json.dump(results, f, indent=1)
  if _JSON.value:
    print(json.dumps(results))


if __name__ == "__main__":
  app.run(main)
