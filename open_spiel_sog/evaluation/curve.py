r"""A training run's learning curve, one snapshot at a time: SoG with the
snapshot's network against the recipe's baseline at equal time, in
duplicate seats; each point is appended to a CSV and the PNG redrawn.
`examples/train.py` runs it after every snapshot, in a process of its own
(`--curve_games`), so that training keeps its cores.

  python -m open_spiel_sog.evaluation.curve --game=connect_four \
      --snapshot=runs/connect_four/snapshots/min_010.npz \
      --opponent='mcts(time_limit={t},seed={seed})' --time_limit=0.5 \
      --games=20 --csv=runs/connect_four/curve.csv \
      --png=runs/connect_four/curve.png

Games 2k and 2k + 1 share seed k: SoG in seat 0, then in seat 1, chance
drawn alike. SoG is `sog(checkpoint=SNAPSHOT, time_limit=T, seed=k)` with a
simulation cap out of reach, so that the time decides; '{t}' in the
opponent stands for T and '{seed}' for k. A point's score is SoG's (wins +
draws / 2) / games with its 95% Wilson interval, and each seat's score
beside it.
"""

from __future__ import annotations

import csv
import os
import re
import sys

import pyspiel

from open_spiel_sog.evaluation import tournament

# The recipe's baseline: OpenSpiel's MCTS where the game is of perfect
# information, IS-MCTS otherwise.
OPPONENTS = {"perfect_information": "mcts(time_limit={t},seed={seed})",
             "fog_of_war": "ismcts(time_limit={t},seed={seed})"}
FIELDS = ("minutes", "opponent", "time_limit", "games", "wins", "draws",
          "losses", "score", "score_low", "score_high", "seat0_score",
          "seat1_score", "snapshot")


def snapshot_minutes(path: str) -> int:
  """The training minute a snapshot's name (min_MMM.npz) gives."""
  named = re.fullmatch(r"min_(\d+)\.npz", os.path.basename(path))
  if not named:
    raise ValueError(f"curve: {path!r} is not a run's snapshot "
                     "(snapshots/min_MMM.npz)")
  return int(named.group(1))


def point(game: pyspiel.Game | str, snapshot: str, opponent: str,
          time_limit: float, games: int) -> dict:
  """SoG with `snapshot` against `opponent` over `games` games in duplicate
  seats (see the module docstring): one row of FIELDS."""
  import open_spiel_sog  # pylint: disable=g-import-not-at-top,unused-import  (registers sog)
  if isinstance(game, str):
    game = pyspiel.load_game(game)
  if time_limit <= 0:
    raise ValueError(f"curve: time_limit must be > 0, got {time_limit}")
  text = opponent.replace("{t}", f"{time_limit:g}")
  sog = lambda seat, k: pyspiel.load_bot("sog", game, seat, {
      "checkpoint": snapshot, "time_limit": time_limit, "seed": k,
      "simulations": 1_000_000})
  other = lambda seat, k: tournament.load_bot(
      game, tournament.parse_bot(text.replace("{seed}", str(k)), "curve"),
      seat, "curve")
  match = tournament.duplicate_match(game, sog, other, games, label="curve")
  low, high = match["score_95"]
  return {"minutes": snapshot_minutes(snapshot),
          "opponent": text.replace(",seed={seed}", ""),
          "time_limit": time_limit, "games": match["games"],
          "wins": match["wins"], "draws": match["draws"],
          "losses": match["losses"], "score": round(match["score"], 4),
          "score_low": round(low, 4), "score_high": round(high, 4),
          "seat0_score": round(match["seat_scores"][0], 4),
          "seat1_score": round(match["seat_scores"][1], 4),
          "snapshot": snapshot}


def read(path: str) -> list[dict]:
  """The points of a curve CSV (none where it does not exist)."""
  if not os.path.exists(path):
    return []
  with open(path, newline="") as f:
    return list(csv.DictReader(f))


def append(path: str, row: dict) -> None:
  """Adds `row` to the curve CSV at `path` (with a header when new)."""
  new = not os.path.exists(path)
  with open(path, "a", newline="") as f:
    writer = csv.DictWriter(f, fieldnames=FIELDS)
    if new:
      writer.writeheader()
    writer.writerow({k: row[k] for k in FIELDS})


def plot(rows: list[dict], path: str, title: str) -> bool:
  """Draws the points (`minutes`, `score`, `score_low`, `score_high`,
  `games`), one line per `opponent` (its legend), with their 95%
  intervals; False where matplotlib is not installed (the `plot` extra)."""
  try:
    import matplotlib  # pylint: disable=g-import-not-at-top
  except ImportError:
    return False
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
  fig, ax = plt.subplots(figsize=(6.5, 4))
  for opponent in dict.fromkeys(r["opponent"] for r in rows):
    mine = sorted((r for r in rows if r["opponent"] == opponent),
                  key=lambda r: float(r["minutes"]))
    x = [float(r["minutes"]) for r in mine]
    y = [float(r["score"]) for r in mine]
    err = [[s - float(r["score_low"]) for s, r in zip(y, mine)],
           [float(r["score_high"]) - s for s, r in zip(y, mine)]]
    ax.errorbar(x, y, yerr=err, marker="o", capsize=3,
                label=f"{opponent} ({mine[-1]['games']} games a point)")
  ax.axhline(0.5, color="grey", lw=0.8, ls="--")
  ax.set_xlabel("training minutes")
  ax.set_ylabel("SoG's score (95% interval)")
  ax.set_ylim(0, 1)
  ax.set_title(title, fontsize=9)
  ax.legend(fontsize=7)
  ax.grid(True, alpha=0.3)
  fig.tight_layout()
  fig.savefig(path, dpi=100)
  plt.close(fig)
  return True


def main(argv=None) -> int:
  """Measures one snapshot's point (the module docstring's command)."""
  from absl import flags  # pylint: disable=g-import-not-at-top
  from open_spiel_sog.algorithms.training import workers  # pylint: disable=g-import-not-at-top
  defs = flags.FlagValues()
  flags.DEFINE_string("game", None, "Game string.", flag_values=defs)
  flags.DEFINE_string("snapshot", None, "The snapshot (min_MMM.npz).",
                      flag_values=defs)
  flags.DEFINE_string("opponent", OPPONENTS["perfect_information"],
                      "The opponent, a bot string ('{t}': the time limit, "
                      "'{seed}': the game's seed).", flag_values=defs)
  flags.DEFINE_float("time_limit", 0.5, "Seconds a move, each side.",
                     flag_values=defs)
  flags.DEFINE_integer("games", 20, "Games (even: duplicate seats).",
                       flag_values=defs)
  flags.DEFINE_string("csv", None, "The curve's CSV (appended to).",
                      flag_values=defs)
  flags.DEFINE_string("png", "", "Where to redraw the curve.",
                      flag_values=defs)
  flags.DEFINE_bool("with_parent", False, "End when the parent process "
                    "ends (examples/train.py's).", flag_values=defs)
  try:
    defs(argv or sys.argv)
  except flags.Error as e:
    print(f"curve: {e}", file=sys.stderr)
    return 2
  if defs.with_parent:
    workers.die_with_parent()
  if not defs.game or not defs.snapshot or not defs.csv:
    print("curve: --game, --snapshot and --csv are required", file=sys.stderr)
    return 2
  try:
    row = point(defs.game, defs.snapshot, defs.opponent, defs.time_limit,
                defs.games)
  except ValueError as e:
    print(str(e), file=sys.stderr)
    return 2
  append(defs.csv, row)
  if defs.png:
    plot(read(defs.csv), defs.png, f"{defs.game}: SoG with the run's network")
  print(f"curve: min {row['minutes']}: {row['score']:.3f} "
        f"[{row['score_low']:.3f}, {row['score_high']:.3f}] against "
        f"{row['opponent']} ({row['games']} games; seats "
        f"{row['seat0_score']:.3f} / {row['seat1_score']:.3f})")
  return 0


if __name__ == "__main__":
  sys.exit(main())
