r"""Ships a trained network into open_spiel_sog/data/ with its model card.

    python tools/ship_network.py --snapshot=runs/othello/snapshots/min_080.npz \
      --command='examples/train.py --game=othello --minutes=80' \
      --machine='2-core development machine (2 actor processes), 2026-12-07' \
      --match='benchmarks/results/networks/othello_vs_mcts.json' \
      --match='benchmarks/results/networks/othello_curve.csv:80'

The checkpoint is written without its optimiser state under the name
`value_function=auto` looks for (`cvpn.shipped_checkpoint_name`); its
metadata's `extra.model_card` holds the command, the training minutes,
games and examples the run recorded, the machine, and each match: a
benchmarks/head_to_head.py JSON (its `row`, or the
first of its --json list) or a learning-curve CSV
row (`FILE:MINUTES`, the snapshot's minutes). Files over 10 MB are refused.
"""

import csv
import json
import os
import sys

from absl import app
from absl import flags

from open_spiel_sog.algorithms.sog import cvpn
from open_spiel_sog.algorithms.training import recipes

_SNAPSHOT = flags.DEFINE_string("snapshot", None, "The checkpoint to ship.")
_COMMAND = flags.DEFINE_string("command", None, "The command that trained it.")
_MACHINE = flags.DEFINE_string("machine", None, "Where it was trained.")
_MATCH = flags.DEFINE_multi_string(
    "match", [], "A match's results: a head_to_head JSON, or CSV:MINUTES.")
_OUT_DIR = flags.DEFINE_string("out_dir", cvpn.DATA_DIR, "Where to write it.")

MAX_BYTES = 10 * 1024 * 1024


def _score(wins, draws, losses, low, high, seats, **rest):
  games = wins + draws + losses
  return dict(games=games, wins=wins, draws=draws, losses=losses,
              score=round((wins + draws / 2) / games, 3),
              score_95=[round(low, 3), round(high, 3)],
              seat_scores=[round(s, 3) for s in seats], **rest)


def match(spec: str) -> dict:
  """A model card's match from a results file (see the module doc)."""
  if ".csv:" in spec:
    path, minutes = spec.rsplit(":", 1)
    with open(path) as f:
      rows = [r for r in csv.DictReader(f)
              if float(r["minutes"]) == float(minutes)]
    if not rows:
      raise ValueError(f"{path} has no row at {minutes} minutes")
    r = rows[-1]
    return _score(int(r["wins"]), int(r["draws"]), int(r["losses"]),
                  float(r["score_low"]), float(r["score_high"]),
                  [float(r["seat0_score"]), float(r["seat1_score"])],
                  against=r["opponent"], time_limit=float(r["time_limit"]),
                  results=path)
  path = spec
  with open(path) as f:
    data = json.load(f)
  row = data["row"] if isinstance(data, dict) else data[0]
  seats = [(w + d / 2) / max(w + d + l, 1) for w, d, l in row["by_seat"]]
  against = row["opponent"].replace(",seed={seed}", "")
  return _score(row["wins"], row["draws"], row["losses"], *row["score_95"],
                seats, against=against, time_limit=row["time_limit"],
                results=path)


def main(argv):
  del argv
  for name, holder in (("snapshot", _SNAPSHOT), ("command", _COMMAND),
                       ("machine", _MACHINE)):
    if not holder.value:
      sys.exit(f"ship_network: --{name} is required")
  try:
    meta = recipes.checkpoint_meta(_SNAPSHOT.value)
  except cvpn.CheckpointError as e:
    sys.exit(f"ship_network: {e}")
  game = meta["game"]
  recipe = recipes.get(recipes.recipe_of(meta))
  net = recipe.load_network(_SNAPSHOT.value, game)
  extra = dict(meta.get("extra", {}))
  extra["model_card"] = {
      "command": _COMMAND.value, "minutes": round(extra["minutes"], 1),
      "games": extra["games"], "examples": extra["examples"],
      "machine": _MACHINE.value,
      "matches": []}
  for spec in _MATCH.value:
    try:
      extra["model_card"]["matches"].append(match(spec))
    except (OSError, ValueError, KeyError) as e:
      sys.exit(f"ship_network: --match={spec}: {e}")
  out = os.path.join(_OUT_DIR.value, cvpn.shipped_checkpoint_name(game))
  recipe.save(net, out, game, extra, include_optimizer=False)
  size = os.path.getsize(out)
  if size > MAX_BYTES:
    os.remove(out)
    sys.exit(f"ship_network: {out} would be {size / 2**20:.1f} MB; the zoo "
             f"ships networks under 10 MB")
  print(json.dumps(extra["model_card"], indent=1))
  print(f"wrote {out} ({size / 2**20:.2f} MB)")


if __name__ == "__main__":
  app.run(main)
