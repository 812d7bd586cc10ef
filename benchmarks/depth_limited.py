r"""Depth-limited solving: exploitability against k, and a Leduc round-robin.

  python benchmarks/depth_limited.py --json \
      --out=benchmarks/results/depth_limited

1. For each of --games (frontier "round" where the game has chance after a
   decision, else "depth" at --depth) and each blueprint of
   --blueprint_iterations CFR+ iterations: the exact exploitability
   (OpenSpiel's, NashConv / 2) of the composite (each seat's depth-limited
   trunk strategy, the blueprint below the frontier) for k = 1 .. --max_k
   continuation strategies of each set: "bias" (the blueprint, then one
   opponent action scaled by 10 per strategy, in action order) and
   "self_generative" (the blueprint, then best responses to the current
   trunk solution). Beside them: the blueprint, and the frozen-blueprint
   full solve (every opponent continuation: the limit in k). Plotted to
   OUT/depth_limited_k.png.
2. The exact exploitability of the dls bot (nested re-solving: what it
   plays over a whole game) for each of --bot_params on each game.
3. With --round_robin_games > 0: a round-robin (examples/round_robin.py's
   duplicate deals and Elo) of --bots on Leduc, written to
   OUT/round_robin_table.txt and OUT/round_robin.json.

The last line with --json is one JSON object with every row.
"""

import json
import os
import sys
import time

from absl import app
from absl import flags
import pyspiel

import open_spiel_sog  # pylint: disable=unused-import  (registers "dls")
from open_spiel_sog.algorithms import dls as dl
from open_spiel_sog.evaluation import exploitability as ev
from open_spiel_sog.evaluation import tournament
from open_spiel_sog.public_state import PublicStateObserver
from open_spiel_sog.public_state import PublicTree

_GAMES = flags.DEFINE_string(
    "games", "leduc_poker;liars_dice(numdice=1,dice_sides=4)",
    "Semicolon-separated games.")
_DEPTH = flags.DEFINE_integer(
    "depth", 4, "Frontier depth for games without a new round (public "
    "transitions, chance steps included).")
_BLUEPRINT_ITERATIONS = flags.DEFINE_string(
    "blueprint_iterations", "100,1000",
    "Comma-separated blueprint sizes (CFR+ iterations).")
_MAX_K = flags.DEFINE_integer("max_k", 8, "Largest k of the sweep.")
_ITERATIONS = flags.DEFINE_integer(
    "iterations", 1000, "CFR+ iterations of each depth-limited solve (and "
    "of the frozen-blueprint solve, times 3).")
_ROUND_ROBIN_GAMES = flags.DEFINE_integer(
    "round_robin_games", 0, "Deals per pair of the Leduc round-robin (0: "
    "skip it).")
_BOTS = flags.DEFINE_string(
    "bots", "dls;sog(simulations=100);cfr_policy;ismcts(simulations=1000)",
    "The round-robin's bots.")
_BOT_PARAMS = flags.DEFINE_string(
    "bot_params", "strategies=self_generative,k=4;strategies=bias,k=4",
    "Semicolon-separated dls bot settings (k=v,...) whose exact "
    "exploitability is measured on each game (its frontier added; empty: "
    "none).")
_OUT = flags.DEFINE_string("out", "", "Directory for the PNG and the "
                           "round-robin's table and results.")
_JSON = flags.DEFINE_bool("json", False, "Print a JSON summary last.")


def frontier_of(game: pyspiel.Game, depth: int) -> dl.DLSConfig:
  """"round" where the game has a chance public state after a decision,
  else "depth"."""
  root = PublicStateObserver(game).root()
  rounds = PublicTree(root, dl.trunk_public_states(root, "round", 1))
  if rounds.frontier:
    return dl.DLSConfig(frontier="round")
  return dl.DLSConfig(frontier="depth", depth=depth)


def sweep(game: pyspiel.Game, blueprint, config: dl.DLSConfig, kind: str,
          max_k: int) -> list[dict]:
  """Composite exploitability for k = 1 .. max_k of one strategy set (one
  solver per seat, its set grown by one strategy per step; the bias set
  stops when a seat runs out of action classes)."""
  rows = []
  solvers = [dl.DepthLimitedSolver(game, seat, blueprint, config)
             for seat in range(2)]
  classes = min(len(s.opponent_actions()) for s in solvers)
  for k in range(1, (min(max_k, classes + 1) if kind == "bias" else max_k)
                 + 1):
    start = time.perf_counter()
    solutions = [s.build_strategies(kind, k) for s in solvers]
    table = dl.composite_policy(game, blueprint, solutions)
    rows.append({"strategies": kind, "k": k,
                 "exploitability": dl.exploitability(game, table),
                 "seconds": time.perf_counter() - start})
    print(f"  {kind:15s} k={k}: {rows[-1]['exploitability']:.6f}",
          file=sys.stderr, flush=True)
  return rows


def frozen_exploitability(game, blueprint, config: dl.DLSConfig) -> float:
  table = dl.policy_dict(blueprint, game)
  for seat in range(2):
    table.update(dl.frozen_blueprint_solve(game, seat, blueprint, config,
                                           3 * config.iterations))
  return dl.exploitability(game, table)


def plot(results: list[dict], path: str) -> None:
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
  games = list(dict.fromkeys(r["game"] for r in results))
  fig, axes = plt.subplots(1, len(games), figsize=(6 * len(games), 4.2),
                           squeeze=False)
  for ax, name in zip(axes[0], games):
    for r in (r for r in results if r["game"] == name):
      for kind, style in (("bias", "o--"), ("self_generative", "s-")):
        rows = [x for x in r["rows"] if x["strategies"] == kind]
        line, = ax.plot([x["k"] for x in rows],
                        [x["exploitability"] for x in rows], style,
                        label=f"{kind}, blueprint {r['blueprint_iterations']}")
        ax.axhline(r["blueprint_exploitability"], color=line.get_color(),
                   lw=0.6, ls=":")
      ax.axhline(r["frozen_exploitability"], color="k", lw=0.6)
    ax.set_yscale("log")
    ax.set_xlabel("k (continuation strategies)")
    ax.set_ylabel("exploitability (NashConv / 2)")
    frontier = results[[x["game"] for x in results].index(name)]["frontier"]
    ax.set_title(f"{name}, frontier {frontier}\n(dotted: blueprint; black: "
                 "frozen-blueprint full solve)", fontsize=9)
    ax.legend(fontsize=7)
  fig.tight_layout()
  fig.savefig(path, dpi=110)


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  try:
    sizes = [int(x) for x in _BLUEPRINT_ITERATIONS.value.split(",")]
  except ValueError:
    raise app.UsageError("--blueprint_iterations: comma-separated integers, "
                         f"got {_BLUEPRINT_ITERATIONS.value!r}") from None
  if _OUT.value:
    os.makedirs(_OUT.value, exist_ok=True)
  results, bots = [], []
  for name in [g for g in _GAMES.value.split(";") if g]:
    game = pyspiel.load_game(name)
    try:
      dl.check_game(game)
    except ValueError as e:
      raise app.UsageError(str(e)) from None
    config = frontier_of(game, _DEPTH.value)
    config = dl.DLSConfig(frontier=config.frontier, depth=config.depth,
                          iterations=_ITERATIONS.value)
    for size in sizes:
      blueprint = dl.compute_blueprint(game, size)
      entry = {
          "game": name, "frontier": config.frontier,
          "depth": config.depth if config.frontier == "depth" else None,
          "blueprint_iterations": size,
          "blueprint_exploitability": dl.exploitability(
              game, dl.policy_dict(blueprint, game)),
          "frozen_exploitability": frozen_exploitability(game, blueprint,
                                                         config),
          "rows": []}
      print(f"{name} (frontier {config.frontier}), blueprint {size}: "
            f"{entry['blueprint_exploitability']:.6f}, frozen-blueprint "
            f"solve {entry['frozen_exploitability']:.6f}", file=sys.stderr,
            flush=True)
      for kind in dl.STRATEGY_SETS:
        entry["rows"] += sweep(game, blueprint, config, kind, _MAX_K.value)
      results.append(entry)
    for spec in [x for x in _BOT_PARAMS.value.split(";") if x]:
      params = dict(kv.split("=", 1) for kv in spec.split(","))
      params.update(frontier=config.frontier, depth=config.depth)
      try:
        row = ev.dls_exploitability(game, params)
      except ValueError as e:
        raise app.UsageError(str(e)) from None
      bots.append(row)
      print(f"{name}: dls({spec}) exploitability "
            f"{row['exploitability']:.6f} ({row['solves']} solves, "
            f"{row['seconds']:.1f} s)", file=sys.stderr, flush=True)
  summary = {"sweep": results, "bots": bots}
  if _OUT.value:
    plot(results, os.path.join(_OUT.value, "depth_limited_k.png"))
  if _ROUND_ROBIN_GAMES.value > 0:
    rr = tournament.round_robin("leduc_poker", _BOTS.value,
                                games_per_pair=_ROUND_ROBIN_GAMES.value)
    text = tournament.format_table(rr)
    print(text)
    summary["round_robin"] = {k: v for k, v in rr.items() if k != "games"}
    if _OUT.value:
      with open(os.path.join(_OUT.value, "round_robin_table.txt"), "w") as f:
        f.write(text + "\n")
      with open(os.path.join(_OUT.value, "round_robin.json"), "w") as f:
        json.dump(rr, f)
  for row in bots:
    print(f"{row['game']}: dls bot {row['params']}: exploitability "
          f"{row['exploitability']:.6f}")
  for r in results:
    print(f"{r['game']} blueprint {r['blueprint_iterations']} "
          f"({r['blueprint_exploitability']:.6f}; frozen "
          f"{r['frozen_exploitability']:.6f}):")
    for x in r["rows"]:
      print(f"  {x['strategies']:15s} k={x['k']}: {x['exploitability']:.6f}")
  if _JSON.value:
    print(json.dumps(summary))


if __name__ == "__main__":
  app.run(main)
