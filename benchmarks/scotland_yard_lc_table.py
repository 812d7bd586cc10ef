r"""Location categorization's general table for scotland_yard_mcts, measured
in self-play as Nijssen and Winands measure theirs (thesis section 7.2.3,
Table 7.1): at every detectives' decision, each of Mr. X's possible
locations falls in a category c, its minimum distance to a detective (1, 2,
3, 4, 5 or more); n_c counts the possible locations of category c, a_c the
decisions where Mr. X stood on one. The table is w_c = a_c / n_c, the chance
that a possible location of category c is the true one.

    python benchmarks/scotland_yard_lc_table.py --games=100 --playouts=1000

The games are the bot against itself with location categorization off
(uniform determinizations), so the table does not feed on itself. Writes
benchmarks/results/scotland_yard/scotland_yard_lc_table_<date>.json; the bot's
`LC_WEIGHTS` quote it.
"""

import json
import os
import random
import sys
import time

from absl import app
from absl import flags
import pyspiel

import open_spiel_sog  # pylint: disable=unused-import  (registers the bot)
from open_spiel_sog.bots import scotland_yard_mcts as sym
from open_spiel_sog.games.scotland_yard import native

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scotland_yard_games  # pylint: disable=g-import-not-at-top,wrong-import-position

_GAMES = flags.DEFINE_integer("games", 100, "Self-play games.")
_PLAYOUTS = flags.DEFINE_integer("playouts", 1000, "Playouts per move.")
_SEED = flags.DEFINE_integer("seed", 0, "First game's seed.")
_GAME = flags.DEFINE_string("game", "scotland_yard(map=london)", "The game.")
_OUT = flags.DEFINE_string("out", "", "Results file (default: "
                           "benchmarks/results/scotland_yard/"
                           "scotland_yard_lc_table_<date>.json).")


def main(_):
  game = pyspiel.load_game(_GAME.value)
  engine = sym.engine(game)
  dist = engine.distances()
  n_c = [0] * sym.NUM_CATEGORIES
  a_c = [0] * sym.NUM_CATEGORIES
  params = {"playouts": _PLAYOUTS.value, "location_categorization": False}
  start = time.monotonic()
  detective_wins = 0
  for g in range(_GAMES.value):
    seed = _SEED.value + g
    bots = [pyspiel.load_bot(sym.NAME, game, p,
                             dict(params, seed=2 * seed + p))
            for p in range(2)]
    rng = random.Random(seed)
    state = game.new_initial_state()
    while not state.is_terminal():
      if state.is_chance_node():
        state.apply_action(rng.choice([a for a, _ in
                                       state.chance_outcomes()]))
        continue
      if state.current_player() == 1:
        view = native.state_view(state)
        detectives = view.detectives
        for location in engine.possible_locations(list(state.history())):
          c = min(max(min(dist[location][p] for p in detectives), 1),
                  sym.NUM_CATEGORIES) - 1
          n_c[c] += 1
          if location == view.mrx:
            a_c[c] += 1
      state.apply_action(bots[state.current_player()].step(state))
    detective_wins += state.returns()[1] > 0
  weights = [a / n if n else 0.0 for a, n in zip(a_c, n_c)]
  result = scotland_yard_games.header(
      "location categorization's general table (minimum distance, "
      "categories 1, 2, 3, 4, 5+), w_c = a_c / n_c from self-play")
  result.update(game=_GAME.value, games=_GAMES.value,
                playouts=_PLAYOUTS.value, bot_params=params,
                detective_wins=detective_wins, n_c=n_c, a_c=a_c, w_c=weights,
                seconds=round(time.monotonic() - start, 1))
  out = _OUT.value or scotland_yard_games.results_path(
      "scotland_yard_lc_table", result["date"])
  with open(out, "w", encoding="utf-8") as f:
    json.dump(result, f, indent=1)
  print(json.dumps(result, indent=1))


if __name__ == "__main__":
  app.run(main)
