r"""How well a sampled public state represents the mover's own infostate.

  python benchmarks/sampled_beliefs.py --json

For each game of --games, --num_games games of uniformly random moves
(seeds 0, 1, ...) are located move by move, each decision in its mover's own
`PublicStateObserver` with `max_histories=--max_histories` (the walk of the
sog bot's locate; the bot's searches build more). At every decision whose
public state is sampled, it records how many of the
public state's histories lie in the mover's infostate, and the share of
that infostate's chance weight the true history carries (in the exact game,
one over the infostate's size: the mover cannot tell its histories apart).
Prints, per game, the median and quartiles of the first and the mean and
median of the second; --json adds the rows as one JSON object on the last
line.
"""

import json

from absl import app
from absl import flags
import numpy as np
import pyspiel

from open_spiel_sog.public_state import ObserverConfig
from open_spiel_sog.public_state import PublicStateObserver

_GAMES = flags.DEFINE_string(
    "games", "phantom_ttt;dark_hex(num_rows=3,num_cols=3)",
    "Game strings, separated by ';'.")
_NUM_GAMES = flags.DEFINE_integer("num_games", 30,
                                  "Random games per game string.")
_MAX_HISTORIES = flags.DEFINE_integer(
    "max_histories", 300, "The observer's bound (the sog bot's default).")
_FAVOUR = flags.DEFINE_bool(
    "favour", True, "Each player's observer favours its own infostate "
    "(`PublicStateObserver.favoured_player`, as the sog bot's does); "
    "--nofavour samples in proportion to chance reach alone.")
_JSON = flags.DEFINE_bool("json", False, "Also print the rows as JSON.")


def measure(game: pyspiel.Game, num_games: int, max_histories: int,
            favour: bool) -> dict:
  sizes, shares = [], []
  for seed in range(num_games):
    rng = np.random.default_rng(seed)
    observers = [PublicStateObserver(
        game, ObserverConfig(max_histories=max_histories)) for _ in range(2)]
    for player, observer in enumerate(observers):
      observer.favoured_player = player if favour else None
    state = game.new_initial_state()
    while not state.is_terminal():
      if state.is_chance_node():
        actions, probs = zip(*state.chance_outcomes())
        state.apply_action(int(rng.choice(actions, p=probs)))
        continue
      player = state.current_player()
      ps, h = observers[player].public_state_of(state)
      if ps.sampled:
        mine = ps.history_infostate[player] == ps.history_infostate[player][h]
        sizes.append(int(mine.sum()))
        shares.append(float(ps.chance_reach[h] / ps.chance_reach[mine].sum()))
      state.apply_action(int(rng.choice(state.legal_actions())))
  if not sizes:
    return {"game": str(game), "sampled_decisions": 0}
  return {
      "game": str(game),
      "max_histories": max_histories,
      "favour": favour,
      "sampled_decisions": len(sizes),
      "infostate_histories_median": float(np.median(sizes)),
      "infostate_histories_quartiles": [float(np.percentile(sizes, 25)),
                                        float(np.percentile(sizes, 75))],
      "true_history_share_mean": float(np.mean(shares)),
      "true_history_share_median": float(np.median(shares)),
  }


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  rows = []
  print("| game | sampled decisions | mover's infostate: histories (median, "
        "quartiles) | true history's share of its weight (mean / median) |")
  print("|---|---|---|---|")
  for game_string in filter(None, _GAMES.value.split(";")):
    row = measure(pyspiel.load_game(game_string), _NUM_GAMES.value,
                  _MAX_HISTORIES.value, _FAVOUR.value)
    rows.append(row)
    if not row["sampled_decisions"]:
      print(f"| {row['game']} | 0 | | |")
      continue
    q1, q3 = row["infostate_histories_quartiles"]
    print(f"| {row['game']} | {row['sampled_decisions']} | "
          f"{row['infostate_histories_median']:g} ({q1:g}-{q3:g}) | "
          f"{row['true_history_share_mean']:.2f} / "
          f"{row['true_history_share_median']:.2f} |")
  if _JSON.value:
    print(json.dumps({"rows": rows}))


if __name__ == "__main__":
  app.run(main)
