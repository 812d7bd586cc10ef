r"""The learning curve of a training run: SoG with each snapshot's network
against OpenSpiel's MCTS (or --opponent), by training minutes.

  python benchmarks/learning_curve.py --game=connect_four \
      --snapshots='runs/connect_four/snapshots/min_*.npz' \
      --ladder=1000,4000,16000 \
      --num_games=20 --json \
      --png=benchmarks/results/networks/connect_four_learning.png

For each snapshot of an `examples/train.py` run (RUN_DIR/snapshots) and
each opponent, `benchmarks/head_to_head.py` plays --num_games games in
duplicate seats:
  - the ladder: SoG at --sog_simulations simulations (no time limit)
    against OpenSpiel's C++ MCTS at N simulations
    (`mcts(simulations=N,backend=cpp)`) for each N of --ladder;
  - with --time_limit T > 0: SoG against --opponent ('{t}' standing for
    T; by default `mcts(time_limit=T)`), both T seconds a move. A
    fog_of_war recipe's run:
    --opponent='sog(time_limit={t},value_function=rollout,seed={seed})'
    or 'ismcts(time_limit={t},seed={seed})', with --ladder= (empty).
A snapshot's minutes are its name's (min_MMM.npz), else its metadata's.
Each point is SoG's score (wins + draws / 2) with its 95% interval; the PNG
draws one line per opponent. Progress goes to stderr; --json prints the
rows last. With --rows=FILE the points already in FILE (same training
minutes and match) are not played again, and each new one is added to it
as it is measured: a slow game's curve can grow while its run trains, one
snapshot at a time.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

from absl import app
from absl import flags

from open_spiel_sog.evaluation import curve

_GAME = flags.DEFINE_string("game", "connect_four", "Game string.")
_SNAPSHOTS = flags.DEFINE_string("snapshots", None, "A glob of the run's "
                                 "snapshots (policy-value checkpoints).",
                                 required=True)
_LADDER = flags.DEFINE_list("ladder", ["1000", "4000", "16000"],
                            "MCTS simulations of the ladder's rungs (empty: "
                            "no ladder).")
_SOG_SIMS = flags.DEFINE_integer("sog_simulations", 1000,
                                 "SoG's simulations on the ladder.")
_TIME_LIMIT = flags.DEFINE_float("time_limit", 0.0, "Seconds a move of the "
                                 "equal-time match against mcts (0: none).")
_OPPONENT = flags.DEFINE_string(
    "opponent", "mcts(time_limit={t},seed={seed})", "The opponent at "
    "--time_limit: a bot string, '{t}' standing for the time limit and "
    "'{seed}' for the game's seed.")
_NUM_GAMES = flags.DEFINE_integer("num_games", 20, "Games per point (even).")
_WORKERS = flags.DEFINE_integer("workers", 2, "Processes playing games.")
_PNG = flags.DEFINE_string("png", "", "Where to draw the curve (matplotlib).")
_ROWS = flags.DEFINE_string(
    "rows", "", "A JSON file of points measured before (the --json list): "
    "points in it are kept and not played again; new ones are added to it "
    "as they are measured (created if missing).")
_JSON = flags.DEFINE_bool("json", False, "Print the rows as JSON last.")

_HEAD_TO_HEAD = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                             "head_to_head.py")


def _minutes(path: str) -> float:
  try:
    return float(curve.snapshot_minutes(path))
  except ValueError:  # (not named min_MMM.npz: its metadata's minutes)
    from open_spiel_sog.algorithms.networks import policy_value  # pylint: disable=g-import-not-at-top
    meta, _ = policy_value.PolicyValueNet.read(path)
    return float(meta.get("extra", {}).get("stats", {}).get("minutes", 0.0))


def _match(snapshot: str, opponent: str, time_limit: float) -> dict:
  params = f"checkpoint={snapshot}"
  if time_limit == 0:
    params += f",simulations={_SOG_SIMS.value}"
  out = subprocess.run(
      [sys.executable, _HEAD_TO_HEAD, f"--game={_GAME.value}",
       f"--time_limit={time_limit}", f"--sog_params={params}",
       f"--opponent={opponent}", f"--num_games={_NUM_GAMES.value}",
       f"--workers={_WORKERS.value}", "--json"],
      capture_output=True, text=True, check=False)
  if out.returncode != 0:
    raise SystemExit(f"learning_curve: head_to_head failed on {snapshot} "
                     f"against {opponent}:\n{out.stderr[-2000:]}")
  return json.loads(out.stdout.strip().splitlines()[-1])[0]


def _plot(rows: list[dict], path: str) -> None:
  """One line per match (`evaluation.curve.plot`)."""
  curve.plot([{"opponent": r["label"], "minutes": r["train_minutes"],
               "score": r["score"], "score_low": r["score_95"][0],
               "score_high": r["score_95"][1],
               "games": r["wins"] + r["draws"] + r["losses"]}
              for r in rows], path, f"{_GAME.value}: SoG with the network")


def _read_rows(path: str) -> list[dict]:
  """The points in --rows (none where the file does not exist yet)."""
  if not os.path.exists(path):
    return []
  try:
    with open(path) as f:
      rows = json.load(f)
  except (OSError, ValueError) as e:
    raise app.UsageError(f"--rows: cannot read {path!r}: {e}") from None
  keys = {"label", "train_minutes", "wins", "draws", "losses", "score",
          "score_95"}
  if not isinstance(rows, list) or not all(
      isinstance(r, dict) and keys <= r.keys() for r in rows):
    raise app.UsageError(
        f"--rows: {path!r} is not a list of this script's points (each "
        f"with {', '.join(sorted(keys))})")
  return rows


def _write_rows(path: str, rows: list[dict]) -> None:
  tmp = path + ".tmp"
  with open(tmp, "w") as f:
    json.dump(rows, f)
  os.replace(tmp, path)


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  snapshots = sorted(glob.glob(_SNAPSHOTS.value), key=_minutes)
  if not snapshots:
    raise app.UsageError(f"--snapshots: no file matches {_SNAPSHOTS.value!r}")
  matches = [(f"SoG({_SOG_SIMS.value} sims) vs MCTS-{n}",
              f"mcts(simulations={int(n)},backend=cpp,seed={{seed}})", 0.0)
             for n in _LADDER.value]
  if _TIME_LIMIT.value > 0:
    t = _TIME_LIMIT.value
    opponent = _OPPONENT.value.replace("{t}", f"{t:g}")
    matches.append((f"vs {opponent.replace(',seed={seed}', '')}, {t:g} s "
                    "each", opponent, t))
  rows = _read_rows(_ROWS.value) if _ROWS.value else []
  known = {(r["train_minutes"], r["label"]) for r in rows}
  for snapshot in snapshots:
    minutes = _minutes(snapshot)
    for label, opponent, time_limit in matches:
      if (minutes, label) in known:
        continue
      row = _match(snapshot, opponent, time_limit)
      row.update(label=label, train_minutes=minutes, snapshot=snapshot)
      rows.append(row)
      if _ROWS.value:
        _write_rows(_ROWS.value, rows)
      print(f"{minutes:6.1f} min | {label} | {row['wins']} / {row['draws']} "
            f"/ {row['losses']} | {row['score']:.3f}", file=sys.stderr,
            flush=True)
  print("| minutes | match | W / D / L | score (95%) |")
  print("|---|---|---|---|")
  rows.sort(key=lambda r: (r["train_minutes"], r["label"]))
  for r in rows:
    print(f"| {r['train_minutes']:.0f} | {r['label']} | {r['wins']} / "
          f"{r['draws']} / {r['losses']} | {r['score']:.3f} "
          f"({r['score_95'][0]:.3f}-{r['score_95'][1]:.3f}) |")
  if _PNG.value:
    _plot(rows, _PNG.value)
  if _JSON.value:
    print(json.dumps(rows))


if __name__ == "__main__":
  app.run(main)
