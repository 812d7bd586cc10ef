r"""PublicTreeCFR against OpenSpiel's C++ CFRPlusSolver, side by side.

  python benchmarks/public_tree_cfr_vs_openspiel.py --game=leduc_poker \
      --iterations=1000 --repeats=5

Same game, same iteration count, in one process, alternating between the two
solvers on every repeat so machine noise hits both alike. Reports iterations
per second of each (setup excluded; setup times are reported apart), the
median ratio over repeats, and both exploitabilities (OpenSpiel's C++
`exploitability`, in chips, of each average policy). --json prints the summary
as the last line.
"""

import json
import statistics
import time

from absl import app
from absl import flags
import pyspiel
from open_spiel.python import policy as policy_lib

from open_spiel_sog.algorithms.cfr import PublicTreeCFR

_GAME = flags.DEFINE_string("game", "leduc_poker", "OpenSpiel game string.")
_ITERATIONS = flags.DEFINE_integer("iterations", 1000, "CFR+ iterations.")
_REPEATS = flags.DEFINE_integer("repeats", 5, "Runs of each solver.")
_JSON = flags.DEFINE_bool("json", False, "Print a JSON summary last.")


def _run_openspiel(game, iterations):
  start = time.perf_counter()
  solver = pyspiel.CFRPlusSolver(game)
  setup = time.perf_counter() - start
  start = time.perf_counter()
  for _ in range(iterations):
    solver.evaluate_and_update_policy()
  seconds = time.perf_counter() - start
  return setup, seconds, pyspiel.exploitability(game, solver.average_policy())


def _run_ours(game, iterations):
  start = time.perf_counter()
  solver = PublicTreeCFR(game)
  setup = time.perf_counter() - start
  start = time.perf_counter()
  solver.run(iterations)
  seconds = time.perf_counter() - start
  policy = policy_lib.python_policy_to_pyspiel_policy(solver.average_policy())
  return setup, seconds, pyspiel.exploitability(game, policy)


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  game = pyspiel.load_game(_GAME.value)
  n = _ITERATIONS.value
  rows = []
  for repeat in range(_REPEATS.value):
    theirs = _run_openspiel(game, n)
    ours = _run_ours(game, n)
    row = {
        "repeat": repeat,
        "openspiel_it_per_s": n / theirs[1],
        "ours_it_per_s": n / ours[1],
        "ratio": theirs[1] / ours[1],
        "openspiel_setup_s": theirs[0],
        "ours_setup_s": ours[0],
        "openspiel_exploitability": theirs[2],
        "ours_exploitability": ours[2],
    }
    rows.append(row)
    print(f"repeat {repeat}: OpenSpiel {row['openspiel_it_per_s']:8.1f} it/s"
          f"  ours {row['ours_it_per_s']:8.1f} it/s  ratio "
          f"{row['ratio']:6.2f}x  exploitability OpenSpiel "
          f"{theirs[2]:.6f} ours {ours[2]:.6f}  (setup {theirs[0]:.2f} s / "
          f"{ours[0]:.2f} s)", flush=True)
  summary = {
      "game": _GAME.value,
      "iterations": n,
      "repeats": _REPEATS.value,
      "median_openspiel_it_per_s": statistics.median(
          r["openspiel_it_per_s"] for r in rows),
      "median_ours_it_per_s": statistics.median(
          r["ours_it_per_s"] for r in rows),
      "median_ratio": statistics.median(r["ratio"] for r in rows),
      "openspiel_exploitability": rows[-1]["openspiel_exploitability"],
      "ours_exploitability": rows[-1]["ours_exploitability"],
      "runs": rows,
  }
  print(f"{summary['game']}, {n} iterations, median of {len(rows)}: "
        f"OpenSpiel {summary['median_openspiel_it_per_s']:.1f} it/s, ours "
        f"{summary['median_ours_it_per_s']:.1f} it/s, ratio "
        f"{summary['median_ratio']:.2f}x; exploitability OpenSpiel "
        f"{summary['openspiel_exploitability']:.6f}, ours "
        f"{summary['ours_exploitability']:.6f}")
  if _JSON.value:
    print(json.dumps(summary))


if __name__ == "__main__":
  app.run(main)
