r"""The JPS paper's Table 1 (CFR1k and CFR1k+JPS), beside the paper's figures.

  python benchmarks/jps_table1.py --json \
      --out=benchmarks/results/jps/jps_table1.json

Each row: --seeds seeds (--big_seeds for games of more than 10,000
histories) of CFR from a random initial policy (1,000 iterations, as the
authors' code runs it; its last iterate purified is the paper's CFR1k
column), then JPS from that last iterate as it is, mixed, as the authors'
code does (chains of depth 3 where the paper used
D=3: Simple Bidding N=16, Mini-Bridge N=4 and 5; the game's depth
elsewhere). Reports the mean (and best) start and final values, the paper's
CFR1k, CFR1k+JPS and best-known figures, and the wall time. Then the runtime
of one JPS sweep against brute-force evaluation of the same candidates
(`jps.BruteForceSearch`: a full value pass per candidate) from the same
start, median of --repeats, as a ratio (the paper: 4x at Simple Bidding
N=8, 13x at N=16 with D=3). --rows picks rows by game string. --table2
runs the sample-based variant (the paper's Table 2) on the games it names.
"""

import json
import statistics
import sys
import time

from absl import app
from absl import flags
import numpy as np
import pyspiel

import open_spiel_sog  # registers the paper's games  # pylint: disable=unused-import
from open_spiel_sog.algorithms import jps

# (game, depth (0: the game's), paper CFR1k, paper CFR1k+JPS, best known)
ROWS = (
    ("jps_comm(length=3)", 0, 0.89, 1.00, 1.00),
    ("jps_comm(length=5)", 0, 0.85, 1.00, 1.00),
    ("jps_comm(length=6)", 0, 0.85, 1.00, 1.00),
    ("tiny_hanabi", 0, 9.11, 9.50, 10.0),
    ("simple_bidding(n=4)", 0, 2.18, 2.20, 2.25),
    ("simple_bidding(n=8)", 0, 4.96, 5.00, 5.06),
    ("simple_bidding(n=16)", 3, 10.47, 10.56, 10.75),
    ("mini_bridge(n=3)", 0, 1.01, 1.07, 1.13),
    ("mini_bridge(n=4)", 3, 1.62, 1.71, 1.84),
    ("mini_bridge(n=5)", 3, 2.60, 2.74, 2.89),
)
# (game, depth) of the runtime comparison.
SPEED_ROWS = (("simple_bidding(n=8)", 0), ("simple_bidding(n=16)", 3),
              ("jps_comm(length=4)", 0))

_ROWS = flags.DEFINE_string("rows", "", "Semicolon-separated game strings "
                            "of the rows to run (default: all).")
_SEEDS = flags.DEFINE_integer("seeds", 20, "Seeds per row.")
_BIG_SEEDS = flags.DEFINE_integer(
    "big_seeds", 5, "Seeds per row for games of more than 10,000 "
    "histories.")
_CFR_ITERATIONS = flags.DEFINE_integer("cfr_iterations", 1000,
                                       "CFR iterations of the starts.")
_SPEED = flags.DEFINE_bool("speed", True, "Time JPS against brute force.")
_REPEATS = flags.DEFINE_integer("repeats", 3, "Timings per speed row.")
_TABLE2 = flags.DEFINE_string(
    "table2", "", "Semicolon-separated games for the sample-based variant "
    "(the paper's Table 2; CFR1k starts, --seeds seeds, at most "
    "--table2_iterations changes, the best policy kept), e.g. tiny_hanabi.")
_TABLE2_SAMPLES = flags.DEFINE_string(
    "table2_samples", "1,2,5,8,15,20,25,30",
    "Samples per infostate of the --table2 columns.")
_TABLE2_ITERATIONS = flags.DEFINE_integer(
    "table2_iterations", 100, "Changes per seed of the sample-based runs "
    "(the paper: 100 iterations, the best kept).")
_OUT = flags.DEFINE_string("out", "", "Write the JSON summary here.")
_JSON = flags.DEFINE_bool("json", False, "Print a JSON summary last.")


def _log(line: str) -> None:
  print(line, file=sys.stderr, flush=True)


def speed(game_string: str, depth: int, repeats: int) -> dict:
  """Seconds of one sweep of first infosets (no change applied) by JPS and
  by brute force, from the same start (seed 0's purified CFR average); both
  must find the same best chains."""
  arrays = jps.GameArrays(pyspiel.load_game(game_string))
  probs = jps.purify(arrays, jps.cfr(arrays, 1000, 0))
  depth = depth or int(arrays.depth.max())
  order = np.argsort(arrays.depth[arrays.iset_hist[arrays.iset_start[:-1]]],
                     kind="stable")
  times = {"jps": [], "brute_force": []}
  found = {}
  for _ in range(repeats):
    for name, cls in (("jps", jps.JointPolicySearch),
                      ("brute_force", jps.BruteForceSearch)):
      search = cls(arrays)
      search._prepare(probs)  # pylint: disable=protected-access
      start = time.perf_counter()
      gains = [search.search(np.asarray([first]), depth, [])[0]
               for first in order]
      times[name].append(time.perf_counter() - start)
      found[name] = (gains, search.evaluations)
  same = np.allclose(found["jps"][0], found["brute_force"][0], atol=1e-9)
  out = {"game": game_string, "depth": depth,
         "jps_seconds": statistics.median(times["jps"]),
         "brute_force_seconds": statistics.median(times["brute_force"]),
         "candidates": found["brute_force"][1], "same_gains": bool(same)}
  out["ratio"] = out["brute_force_seconds"] / out["jps_seconds"]
  return out


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  wanted = [r for r in _ROWS.value.split(";") if r]
  rows = [r for r in ROWS if not wanted or r[0] in wanted]
  unknown = set(wanted) - {r[0] for r in ROWS}
  if unknown:
    raise app.UsageError(f"unknown rows {sorted(unknown)}; rows: "
                         f"{'; '.join(r[0] for r in ROWS)}")
  results = []
  for game, depth, paper_cfr, paper_jps, best in rows:
    start = time.perf_counter()
    histories = jps.GameArrays(pyspiel.load_game(game)).num_histories
    seeds = _SEEDS.value if histories <= 10_000 else _BIG_SEEDS.value
    _log(f"{game}: {histories} histories, {seeds} seeds, depth "
         f"{depth or 'full'}")
    out = jps.search_from_starts(game, "cfr", _CFR_ITERATIONS.value, seeds,
                                 jps.JPSConfig(depth=depth), log=_log)
    row = {"game": game, "depth": depth or None, "seeds": seeds,
           "histories": histories, "infosets": out["infosets"],
           "cfr1k": float(np.mean(out["purified"])),
           "cfr1k_best": float(np.max(out["purified"])),
           "cfr1k_unpurified": float(np.mean(out["start"])),
           "cfr1k_jps": float(np.mean(out["final"])),
           "cfr1k_jps_best": float(np.max(out["final"])),
           "paper_cfr1k": paper_cfr, "paper_cfr1k_jps": paper_jps,
           "best_known": best,
           "cfr_seconds": float(np.sum(out["start_seconds"])),
           "jps_seconds": float(np.sum(out["jps_seconds"])),
           "seconds": time.perf_counter() - start}
    results.append(row)
    _log(f"  CFR1k {row['cfr1k']:.3f} (paper {paper_cfr}), CFR1k+JPS "
         f"{row['cfr1k_jps']:.3f} (paper {paper_jps}; best known {best}) in "
         f"{row['seconds']:.0f} s")
  speeds = []
  if _SPEED.value:
    for game, depth in SPEED_ROWS:
      if wanted and game not in wanted:
        continue
      speeds.append(speed(game, depth, _REPEATS.value))
      _log(f"speed {game}: JPS {speeds[-1]['jps_seconds']:.2f} s, brute "
           f"force {speeds[-1]['brute_force_seconds']:.2f} s "
           f"({speeds[-1]['ratio']:.1f}x)")
  table2 = []
  for game in [g for g in _TABLE2.value.split(";") if g]:
    row = {"game": game, "seeds": _SEEDS.value, "samples": {}}
    for k in [int(x) for x in _TABLE2_SAMPLES.value.split(",") if x]:
      out = jps.search_from_starts(
          game, "cfr", _CFR_ITERATIONS.value, _SEEDS.value,
          jps.JPSConfig(samples=k, max_iterations=_TABLE2_ITERATIONS.value))
      row["samples"][k] = float(np.mean(out["final"]))
      _log(f"table 2 {game}: {k} samples per infostate: "
           f"{row['samples'][k]:.3f}")
    table2.append(row)
  print("| game | seeds | CFR1k (paper) | CFR1k+JPS (paper) | best seed | "
        "best known | seconds |")
  print("|---|---|---|---|---|---|---|")
  for r in results:
    print(f"| {r['game']}{' D=3' if r['depth'] else ''} | {r['seeds']} | "
          f"{r['cfr1k']:.3f} ({r['paper_cfr1k']}) | {r['cfr1k_jps']:.3f} "
          f"({r['paper_cfr1k_jps']}) | {r['cfr1k_jps_best']:.3f} | "
          f"{r['best_known']} | {r['seconds']:.0f} |")
  for s in speeds:
    print(f"{s['game']} (depth {s['depth']}): one sweep JPS "
          f"{s['jps_seconds']:.2f} s, brute force "
          f"{s['brute_force_seconds']:.2f} s: {s['ratio']:.1f}x "
          f"(same gains: {s['same_gains']})")
  for row in table2:
    print(f"{row['game']} sample-based JPS from CFR1k ({row['seeds']} "
          "seeds), samples per infostate: " + ", ".join(
              f"{k}: {v:.3f}" for k, v in row["samples"].items()))
  summary = {"rows": results, "speed": speeds, "table2": table2}
  if _OUT.value:
    with open(_OUT.value, "w") as f:
      json.dump(summary, f, indent=1)
  if _JSON.value:
    print(json.dumps(summary))


if __name__ == "__main__":
  app.run(main)
