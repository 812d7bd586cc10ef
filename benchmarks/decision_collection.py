r"""What a full garbage collection costs a time-limited anchored decision:
simulations per move with the sog bot's full collection before each search
against the young-generation one it runs now, side by side.

  python benchmarks/decision_collection.py --game="scotland_yard(map=london)" \
      --sog_params=checkpoint=runs/london.npz --time_limit=0.5 --moves=40 --json

Two sog bots (--sog_params, `subgame=anchored` and --time_limit added)
play one game from --seed (chance drawn from it) for --moves moves; their
decisions alternate between a full collection (`gc.collect()`, as the bot
ran on the Python engine before 2026-11-28) and the young generations only
(`gc.collect(1)`, the anchored subgame's way now), each inside the move's
time, as the bot times it. Reported per mode: the median growth
simulations of the anchored search (`AnchoredResult.simulations`), the
median seconds of the collection alone (timed the same way just after the
move) and the decisions counted.
"""

import gc
import json
import random
import statistics
import sys
import time

from absl import app
from absl import flags
import pyspiel

import open_spiel_sog  # pylint: disable=unused-import  (registers "sog")
from open_spiel_sog.bots.sog import SoGConfig

_GAME = flags.DEFINE_string("game", "scotland_yard(map=london)", "Game.")
_PARAMS = flags.DEFINE_string("sog_params", "", "SoG's parameters "
                              "(k=v,...), subgame=anchored added.")
_TIME = flags.DEFINE_float("time_limit", 0.5, "Seconds a move.")
_MOVES = flags.DEFINE_integer("moves", 40, "Decisions played (alternating "
                              "the two modes).")
_SEED = flags.DEFINE_integer("seed", 0, "Seed of chance and the bots.")
_JSON = flags.DEFINE_bool("json", False, "Print a JSON summary, last.")


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  game = pyspiel.load_game(_GAME.value)
  refused = {k: "is this script's own" for k in ("subgame", "time_limit",
                                                  "seed")}
  try:
    params = SoGConfig.params_from_text(_PARAMS.value, refused,
                                        "--sog_params")
  except ValueError as e:
    raise app.UsageError(str(e)) from None
  bots = [pyspiel.load_bot("sog", game, p, {
      **params, "subgame": "anchored", "time_limit": _TIME.value,
      "seed": _SEED.value + p}) for p in (0, 1)]
  rng = random.Random(_SEED.value)
  state = game.new_initial_state()
  rows = {True: [], False: []}
  while not state.is_terminal() and sum(map(len, rows.values())) < (
      _MOVES.value):
    if state.is_chance_node():
      outcomes, probs = zip(*state.chance_outcomes())
      state.apply_action(rng.choices(outcomes, probs)[0])
      continue
    player = state.current_player()
    full = len(rows[True]) <= len(rows[False])
    garbage = bots[player]._garbage  # pylint: disable=protected-access
    garbage.full, garbage.enabled = full, True  # (never left to Python)
    action = bots[player].step(state)
    sims = bots[player].anchored.last_result.simulations
    begin = time.monotonic()
    gc.collect(2 if full else 1)
    rows[full].append((sims, time.monotonic() - begin))
    bots[1 - player].inform_action(state, player, action)
    state.apply_action(action)
  summary = {"game": str(game), "time_limit": _TIME.value,
             "sog_params": _PARAMS.value}
  for full, name in ((True, "full"), (False, "young")):
    summary[name] = {
        "decisions": len(rows[full]),
        "simulations": statistics.median(r[0] for r in rows[full]),
        "collection_seconds": statistics.median(r[1] for r in rows[full])}
    print(f"{name:5s} collection: {summary[name]['decisions']} decisions, "
          f"median {summary[name]['simulations']} simulations, collection "
          f"{1000 * summary[name]['collection_seconds']:.1f} ms",
          file=sys.stderr)
  summary["ratio"] = summary["young"]["simulations"] / max(
      summary["full"]["simulations"], 1)
  if _JSON.value:
    print(json.dumps(summary))


if __name__ == "__main__":
  app.run(main)
