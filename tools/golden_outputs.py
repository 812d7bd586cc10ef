"""Records outputs that a change meant to keep behaviour must leave identical.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python tools/golden_outputs.py > a.json
    ... change the code ...
    OPENBLAS_NUM_THREADS=1 .venv/bin/python tools/golden_outputs.py > b.json
    cmp a.json b.json

Every float is written with `repr` (the shortest text that reads back as the
same double), so two runs agree to the last digit or the files differ. What
is recorded (issue 47's list):

  * SoG's exact exploitability (OpenSpiel's, of the policy the paper's
    protocol composes) on kuhn_poker (seeds 0-2) and leduc_poker (seed 0) at
    simulations=100, and on leduc_poker at simulations=10 (seed 0), with a
    digest of each composed policy table;
  * the first decision's searched policy at simulations=50, seed=0 in
    phantom_ttt (sampled public states), connect_four (perfect information)
    and liars_dice (the shipped network);
  * the known answers of the depth-limited solving tests
    (tests/depth_limited_test.py, tests/dls_bot_test.py) and of the joint
    policy search tests (tests/jps_test.py).

`--parts` picks a subset (sog, first, dls, jps). With the shim disabled
(OPEN_SPIEL_SOG_DISABLE_SHIM=1) the same outputs exercise the numpy passes.
"""

import hashlib
import json
import sys

from absl import app
from absl import flags
import numpy as np
import pyspiel

import open_spiel_sog  # registers the bots and games  # pylint: disable=unused-import
from open_spiel_sog.algorithms import dls as dl
from open_spiel_sog.algorithms import jps
from open_spiel_sog.bots import sog
from open_spiel_sog.evaluation import exploitability as ev
from open_spiel_sog.games import efg

_PARTS = flags.DEFINE_list("parts", ["sog", "first", "dls", "jps"],
                           "which outputs to record: sog, first, dls, jps")


def _floats(x):
  """`x` with every float (numpy's too) as its repr, recursively."""
  if isinstance(x, dict):
    return {str(k): _floats(v) for k, v in x.items()}
  if isinstance(x, (list, tuple)):
    return [_floats(v) for v in x]
  if isinstance(x, np.ndarray):
    return _floats(x.tolist())
  if isinstance(x, (float, np.floating)):
    return repr(float(x))
  if isinstance(x, np.integer):
    return int(x)
  return x


def _digest(table) -> str:
  text = json.dumps(_floats(table), sort_keys=True)
  return hashlib.sha256(text.encode()).hexdigest()[:16]


def sog_outputs() -> dict:
  out = {}
  for name, game_name, simulations, seeds in (
      ("kuhn_poker", "kuhn_poker", 100, (0, 1, 2)),
      ("leduc_poker", "leduc_poker", 100, (0,)),
      # (At 100 simulations most searches above complete their trees and
      # never query the network; at 10 the network values most leaves.)
      ("leduc_poker_simulations10", "leduc_poker", 10, (0,))):
    game = pyspiel.load_game(game_name)
    config = sog.SoGConfig.from_params({"simulations": simulations})
    value_fn = sog.make_value_function(config, game)
    rows = {}
    for seed in seeds:
      table, searches = ev.sog_policy(game, config, seed, value_fn=value_fn)
      rows[seed] = {
          "exploitability": ev.os_exploitability.exploitability(
              game, ev.tabular_policy(game, table)),
          "searches": searches,
          "policy_digest": _digest(table)}
    out[name] = rows
  return out


def _first_decision(game: pyspiel.Game) -> pyspiel.State:
  state = game.new_initial_state()
  while state.is_chance_node():
    state.apply_action(state.chance_outcomes()[0][0])
  return state


def first_outputs() -> dict:
  out = {}
  for game_name in ("phantom_ttt", "connect_four", "liars_dice"):
    game = pyspiel.load_game(game_name)
    state = _first_decision(game)
    bot = pyspiel.load_bot("sog", game, state.current_player(),
                           {"simulations": 50, "seed": 0})
    policy, action = bot.step_with_policy(state)
    out[game_name] = {"policy": [list(pair) for pair in policy],
                      "action": action}
  return out


def _probs(table, key):
  return [p for _, p in table[key]]


def dls_outputs() -> dict:
  out = {}
  rps = efg.load_game("rps_plus")
  blueprint = dl.compute_blueprint(rps, 1000)
  config = dl.DLSConfig(frontier="depth", depth=1, iterations=2000)
  solver = dl.DepthLimitedSolver(rps, 0, blueprint, config)
  for strategy in dl.pure_strategies(rps, solver):
    solver.add_strategy(strategy)
  solution = solver.solve()
  unsafe = dl.DepthLimitedSolver(rps, 0, blueprint, config).solve()
  out["rps_plus"] = {"k": solver.k, "solution": solution.policy_dict(),
                     "unsafe": unsafe.policy_dict()}
  kuhn = pyspiel.load_game("kuhn_poker")
  for seat, depth in ((0, 3), (1, 4)):
    blueprint = dl.compute_blueprint(kuhn, 30)
    config = dl.DLSConfig(frontier="depth", depth=depth, iterations=3000)
    solver = dl.DepthLimitedSolver(kuhn, seat, blueprint, config)
    for strategy in dl.pure_strategies(kuhn, solver):
      solver.add_strategy(strategy)
    solution = solver.solve()
    frozen = dl.frozen_blueprint_solve(kuhn, seat, blueprint, config, 3000)
    out[f"kuhn_seat{seat}_depth{depth}"] = {
        "trunk": solution.policy_dict(), "frozen": frozen,
        "value": solution.value}
  leduc = pyspiel.load_game("leduc_poker")
  blueprints = {n: dl.compute_blueprint(leduc, n) for n in (100, 1000)}
  runs = {}
  for name, n, kw in (("bias_k1", 1000, dict(strategies="bias", k=1)),
                      ("selfgen_k8", 1000,
                       dict(strategies="self_generative", k=8)),
                      ("bias_k4", 1000, dict(strategies="bias", k=4)),
                      ("selfgen_k8_bp100", 100,
                       dict(strategies="self_generative", k=8))):
    result = dl.depth_limited_exploitability(
        leduc, dl.DLSConfig(frontier="round", **kw), blueprint=blueprints[n])
    runs[name] = {key: result[key] for key in
                  ("exploitability", "blueprint_exploitability",
                   "frontier_public_states")}
  out["leduc"] = runs
  fast = dict(iterations=300)
  out["dls_bot"] = {
      "leduc_bias_k4": ev.dls_exploitability(
          "leduc_poker", dict(fast, strategies="bias", k=4))["exploitability"],
      "leduc_bias_k1": ev.dls_exploitability(
          "leduc_poker", dict(fast, strategies="bias", k=1))["exploitability"],
      "liars_dice_1x3_depth3": ev.dls_exploitability(
          "liars_dice(numdice=1,dice_sides=3)",
          dict(frontier="depth", depth=3, strategies="self_generative", k=4,
               iterations=500))["exploitability"]}
  return out


def jps_outputs() -> dict:
  out = {}
  for name in ("tiny_hanabi", "jps_comm(length=3)", "simple_bidding(n=4)",
               "mini_bridge(n=3)"):
    a = jps.GameArrays(pyspiel.load_game(name))
    rows = {"cfr200_seed3": _digest(jps.cfr(a, 200, seed=3)),
            "from_uniform": jps.JointPolicySearch(
                a, jps.JPSConfig(depth=3)).run(None).values}
    if name != "mini_bridge(n=3)":
      rows["cfr1000_then_jps"] = [
          jps.JointPolicySearch(a).run(
              jps.cfr(a, 1000, seed, average=False)).values[-1]
          for seed in range(20 if name == "tiny_hanabi" else 5)]
    out[name] = rows
  a = jps.GameArrays(pyspiel.load_game("simple_bidding(n=4)"))
  start = jps.purify(a, jps.cfr(a, 200, seed=0))
  result = jps.JointPolicySearch(
      a, jps.JPSConfig(samples=2, max_iterations=30, seed=0)).run(start)
  out["sampled"] = {"values": result.values, "probs": _digest(result.probs)}
  return out


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {' '.join(argv[1:])}")
  makers = {"sog": sog_outputs, "first": first_outputs, "dls": dls_outputs,
            "jps": jps_outputs}
  unknown = [p for p in _PARTS.value if p not in makers]
  if unknown:
    raise app.UsageError(f"--parts: unknown {', '.join(unknown)}; supported: "
                         f"{', '.join(makers)}")
  out = {}
  for part in _PARTS.value:
    out[part] = _floats(makers[part]())
    print(f"{part}: done", file=sys.stderr)
  print(json.dumps(out, indent=1, sort_keys=True))


if __name__ == "__main__":
  app.run(main)
