"""SoG's detectives search the exact set of Mr. X's possible locations
(issue 72): at London positions of random games, the anchored subgame's
root holds the detectives' infostate's histories, and the stations Mr. X
holds in them are the set the travel log allows, as the scotland_yard_mcts
baseline computes it (which scotland_yard_mcts_test.py holds to the game's
own count of Mr. X's paths). Many paths lead to a few stations: the root
takes one history of each situation first (`order2.consistent_histories`'s
`spread`); before it did, a root of 97 histories held 3 of 10 stations."""

import random

import pyspiel

import open_spiel_sog  # pylint: disable=unused-import  (registers the bots)
from open_spiel_sog.bots import scotland_yard_mcts as sym

LONDON = "scotland_yard(map=london)"


def _mrx_station(python_game, history) -> int:
  state = python_game.new_initial_state()
  for a in history:
    state.apply_action(a)
  return state.mrx


def _detective_positions(game, num_games, seed, every):
  """Every `every`-th detectives' decision of `num_games` uniformly random
  games."""
  rng = random.Random(seed)
  for _ in range(num_games):
    state = game.new_initial_state()
    k = 0
    while not state.is_terminal():
      if state.is_chance_node():
        outcomes = state.chance_outcomes()
        state.apply_action(rng.choices([a for a, _ in outcomes],
                                       [p for _, p in outcomes])[0])
        continue
      if state.current_player() == 1:
        if k % every == 0:
          yield state.clone()
        k += 1
      state.apply_action(rng.choice(state.legal_actions()))


def test_the_anchored_root_is_mr_xs_possible_location_set():
  game = pyspiel.load_game(LONDON)
  python_game = pyspiel.load_game("python_" + LONDON)
  engine = sym.engine(game)
  checked, largest = 0, 0
  for state in _detective_positions(game, num_games=2, seed=0, every=14):
    bot = pyspiel.load_bot("sog", game, 1, {"simulations": 1, "seed": 0})
    bot.step(state)
    search = bot.anchored
    n = search.last_result.root_histories[0]
    stations = {_mrx_station(python_game, r.state.history())
                for r in search.last_root[:n]}
    possible = set(engine.possible_locations(list(state.history())))
    assert len(possible) <= search.config.root_histories  # (they fit)
    assert stations == possible, (state.history(), stations, possible)
    checked += 1
    largest = max(largest, len(possible))
  assert checked >= 5 and largest > 10, (checked, largest)
