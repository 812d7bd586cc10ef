"""scotland_yard_mcts: Nijssen and Winands' MCTS for Scotland Yard
(open_spiel_sog/bots/scotland_yard_mcts.py, its C++ twin
_native/scotland_yard_mcts.h).

Known answers: the possible-location set is the one the game's own
resampling computes from the public record (game.py's `_path_counts`) on
random London games, and holds Mr. X; coalition reduction's rewards and
Mr. X's move filtering are the papers' rules; the bot plays legal complete
games in both roles on every shipped map; a seeded counted search repeats
exactly; and the C++ search gives the Python search's answers (distances,
sets, filtered moves, playout moves, whole searches' visit counts).
"""

import os
import random
import subprocess
import sys

import pyspiel
import pytest

import open_spiel_sog  # pylint: disable=unused-import  (registers the bot)
from open_spiel_sog import _native
from open_spiel_sog.bots import scotland_yard_mcts as sym
from open_spiel_sog.games.scotland_yard import game as game_lib
from open_spiel_sog.games.scotland_yard import maps
from open_spiel_sog.games.scotland_yard.maps import BLACK

SHIM, SHIM_REASON = _native.load_shim()
HAS_CPP = SHIM is not None and hasattr(SHIM, "ScotlandYardMCTS")
BACKENDS = ["python"] + (["cpp"] if HAS_CPP else [])
needs_cpp = pytest.mark.skipif(
    not HAS_CPP, reason=f"no C++ ScotlandYardMCTS: {SHIM_REASON}")


def _random_games(game_string, num_games, seed):
  """(state, rules) at every decision of `num_games` uniformly random games
  of the Python game."""
  game = pyspiel.load_game(game_string)
  rng = random.Random(seed)
  for _ in range(num_games):
    state = game.new_initial_state()
    while not state.is_terminal():
      if not state.is_chance_node():
        yield state
      if state.is_chance_node():
        action = rng.choice([a for a, _ in state.chance_outcomes()])
      else:
        action = rng.choice(state.legal_actions())
      state.apply_action(action)


def _python_engine(game_string):
  return sym.engine(pyspiel.load_game(game_string), "python")


# --- The possible-location set ----------------------------------------------


@pytest.mark.parametrize("game_string, num_games", [
    ("python_scotland_yard(map=london)", 6),
    ("python_scotland_yard(map=london,reveal_rounds=none,mrx_double=4)", 6),
    ("python_scotland_yard(map=wheel,mrx_start=1/4/8)", 40),
])
def test_possible_locations_are_the_travel_logs(game_string, num_games):
  engine = _python_engine(game_string)
  checked = 0
  for state in _random_games(game_string, num_games, seed=1):
    rules = state.rules
    at_mrx = state.current_player() == 0
    layers = game_lib._path_counts(rules, state.events, rules.mrx_start,  # pylint: disable=protected-access
                                   at_mrx)
    expected = sorted(layers[-1][0])
    got = engine.possible_locations(list(state.history()))
    assert got == expected, (state.history(), got, expected)
    assert state.mrx in got
    checked += 1
  assert checked > 100


# --- Coalition reduction and move filtering ---------------------------------


def test_coalition_reduction_rewards():
  # Thesis 7.3.3: the catcher scores 1, the other detectives 1 - r, Mr. X 0.
  assert sym.rewards(sym.CAUGHT, 2, 5, 0.4) == [0.0, 0.6, 0.6, 1.0, 0.6, 0.6]
  assert sym.rewards(sym.CAUGHT, 0, 2, 0.0) == [0.0, 1.0, 1.0]
  # r = 1: no coalition, only the catcher is rewarded.
  assert sym.rewards(sym.CAUGHT, 1, 3, 1.0) == [0.0, 0.0, 1.0, 0.0]
  # Mr. X wins: he scores 1, every detective 0.
  for outcome in (sym.SURVIVED, sym.DETECTIVES_STUCK):
    assert sym.rewards(outcome, -1, 5, 0.4) == [1.0] + [0.0] * 5
  # Mr. X cannot move: nobody caught him, the coalition won.
  assert sym.rewards(sym.MRX_STUCK, -1, 2, 0.4) == [0.0, 1.0, 1.0]


def test_black_ticket_filter_is_the_papers():
  """At every Mr. X decision of random London games: no black ticket in
  the first two rounds, in a surfacing round, or while every possible
  location has taxi edges only, unless only black moves are left; the
  double-move card is never filtered."""
  game_string = "python_scotland_yard(map=london,mrx_black=5)"
  engine = _python_engine(game_string)
  rules = pyspiel.load_game(game_string).rules
  n = rules.num_stations
  taxi_only = {p for p in range(n)
               if all(t == maps.TAXI for _, t in rules.adjacency[p])}
  seen = {"early": 0, "surfacing": 0, "taxi_only": 0, "free": 0}
  for state in _random_games(game_string, 8, seed=2):
    if state.current_player() != 0:
      continue
    history = list(state.history())
    legal = state.legal_actions()
    entry = len(state.log) + 1
    possible = engine.possible_locations(history)
    reasons = {"early": entry <= 2,
               "surfacing": entry in rules.reveal_rounds,
               "taxi_only": all(p in taxi_only for p in possible)}
    non_black = [a for a in legal
                 if a != rules.double_action and a // n != BLACK]
    if any(reasons.values()) and non_black:
      expected = [a for a in legal if a == rules.double_action or
                  a // n != BLACK]
    else:
      expected = legal
    assert engine.legal_actions(history, True) == expected
    assert engine.legal_actions(history, False) == legal
    if any(a // n == BLACK for a in legal if a != rules.double_action):
      for reason, holds in reasons.items():
        seen[reason] += holds
      seen["free"] += not any(reasons.values())
  assert all(seen.values()), seen


# --- The bot ----------------------------------------------------------------


def _play(game, bots, seed):
  state = game.new_initial_state()
  rng = random.Random(seed)
  while not state.is_terminal():
    if state.is_chance_node():
      state.apply_action(rng.choice([a for a, _ in state.chance_outcomes()]))
      continue
    bot = bots[state.current_player()]
    policy, action = bot.step_with_policy(state)
    assert action in state.legal_actions()
    assert abs(sum(p for _, p in policy) - 1.0) < 1e-9
    state.apply_action(action)
  return state


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("map_name", maps.shipped_maps())
def test_plays_legal_games_in_both_roles(map_name, backend):
  prefix = "python_" if backend == "python" else ""
  game = pyspiel.load_game(f"{prefix}scotland_yard(map={map_name})")
  playouts = 20 if map_name == "london" and backend == "python" else 200
  bots = [pyspiel.load_bot(sym.NAME, game, player,
                           {"playouts": playouts, "seed": player,
                            "backend": backend})
          for player in range(2)]
  final = _play(game, bots, seed=3)
  assert sorted(final.returns()) == [-1.0, 1.0]


def test_registered_and_refuses_other_games():
  assert pyspiel.is_bot_registered(sym.NAME)
  game = pyspiel.load_game("scotland_yard(map=glasses)")
  assert sym.NAME in pyspiel.bots_that_can_play_game(game)
  kuhn = pyspiel.load_game("kuhn_poker")
  assert sym.NAME not in pyspiel.bots_that_can_play_game(kuhn)
  with pytest.raises(ValueError) as e:
    pyspiel.load_bot(sym.NAME, kuhn, 0, {})
  assert str(e.value) == ("scotland_yard_mcts plays scotland_yard and "
                          "python_scotland_yard only, got kuhn_poker")


@pytest.mark.parametrize("params, message", [
    ({"playouts": 0}, "playouts must be >= 1 or -1"),
    ({"coalition_reduction": 1.5}, "coalition_reduction (r) must be in"),
    ({"epsilon": 2.0}, "epsilon must be in [0, 1] or -1"),
    ({"uct_c": -1.0}, "uct_c must be finite and >= 0"),
    ({"time_limit": -1.0}, "time_limit must be finite and >= 0"),
    ({"backend": "gpu"}, "unknown backend 'gpu'"),
    ({"mrx_search_detectives": "x"}, "mrx_search_detectives must be"),
    ({"location_categorisation": True}, "unknown parameter(s)"),
    ({"black_ticket_filter": "maybe"}, "must be of type bool"),
    ({"seed": -1}, "seed must be in"),
])
def test_bad_parameters_give_one_clear_line(params, message):
  game = pyspiel.load_game("scotland_yard(map=glasses)")
  with pytest.raises(ValueError) as e:
    pyspiel.load_bot(sym.NAME, game, 0, params)
  text = str(e.value)
  assert text.startswith(sym.NAME) and message in text and "\n" not in text


@pytest.mark.parametrize("backend", BACKENDS)
def test_seeded_counted_search_repeats(backend):
  prefix = "python_" if backend == "python" else ""
  game = pyspiel.load_game(f"{prefix}scotland_yard(map=london)")
  playouts = 30 if backend == "python" else 500

  def actions(seed):
    bots = [pyspiel.load_bot(sym.NAME, game, p, {
        "playouts": playouts, "seed": seed, "backend": backend})
            for p in range(2)]
    state = game.new_initial_state()
    rng = random.Random(4)
    out = []
    while not state.is_terminal() and len(out) < 12:
      if state.is_chance_node():
        state.apply_action(rng.choice([a for a, _ in
                                       state.chance_outcomes()]))
        continue
      bot = bots[state.current_player()]
      action = bot.step(state)
      out.append((action, tuple(sorted(bot.last_search["visits"].items()))))
      state.apply_action(action)
    return out

  first = actions(7)
  assert first == actions(7)
  assert first != actions(8)


# --- The C++ twin -----------------------------------------------------------


def _engines(map_name):
  game = pyspiel.load_game(f"scotland_yard(map={map_name})")
  return sym.engine(game, "python"), sym.engine(game, "cpp")


@needs_cpp
@pytest.mark.parametrize("map_name", maps.shipped_maps())
def test_cpp_agrees_on_distances_sets_and_filtered_moves(map_name):
  python, cpp = _engines(map_name)
  assert cpp.distances() == python.distances()
  checked = 0
  for state in _random_games(f"python_scotland_yard(map={map_name})",
                             4 if map_name == "london" else 20, seed=5):
    history = list(state.history())
    assert cpp.possible_locations(history) == python.possible_locations(
        history)
    for black_filter in (True, False):
      assert cpp.legal_actions(history, black_filter) == (
          python.legal_actions(history, black_filter))
    assert python.legal_actions(history, False) == state.legal_actions()
    checked += 1
  assert checked > 40


@needs_cpp
def test_cpp_agrees_on_playout_moves():
  python, cpp = _engines("london")
  game = pyspiel.load_game("python_scotland_yard(map=london)")
  config = sym.Config(sym._parse({"epsilon": 0.3})).as_dict()  # pylint: disable=protected-access
  checked = 0
  for state in _random_games("python_scotland_yard(map=london)", 3, seed=6):
    history = list(state.history())
    for rng_state in (1, 2**63 + 5, 12345):
      locations = python.possible_locations(history)
      mrx = locations[rng_state % len(locations)] if (
          state.current_player() == 1) else state.mrx
      for searcher in (0, 1):  # MTD detectives in Mr. X's search, else CAL
        got = cpp.playout_action(history, mrx, searcher, config, rng_state)
        assert tuple(got) == python.playout_action(history, mrx, searcher,
                                                   config, rng_state)
        checked += 1
  assert checked > 100
  del game


@needs_cpp
@pytest.mark.parametrize("params", [
    {},
    {"location_categorization": False, "black_ticket_filter": False,
     "progressive_history": 0.0, "coalition_reduction": 0.0},
    {"epsilon": 1.0, "coalition_reduction": 0.4},
    {"mrx_search_detectives": "cal", "epsilon": 0.0},
])
def test_cpp_search_is_the_python_search(params):
  """Whole searches: the same seed and playout count give the same root
  visit counts, move and generator state in both languages."""
  python, cpp = _engines("london")
  config = sym.Config(sym._parse(dict(params, playouts=150))).as_dict()  # pylint: disable=protected-access
  checked = 0
  for state in _random_games("python_scotland_yard(map=london)", 2, seed=7):
    if len(state.history()) % 9:
      continue
    history = list(state.history())
    player = state.current_player()
    a = python.search(history, player, config, 99)
    b = cpp.search(history, player, config, 99)
    for key in ("action", "visits", "playouts", "rng_state"):
      assert a[key] == b[key], key
    checked += 1
  assert checked >= 3


def test_time_limited_search_plays():
  game = pyspiel.load_game("scotland_yard(map=london)")
  bot = pyspiel.load_bot(sym.NAME, game, 0, {"time_limit": 0.05})
  state = game.new_initial_state()
  while state.is_chance_node():
    state.apply_action(state.legal_actions()[0])
  action = bot.step(state)
  assert action in state.legal_actions()
  assert bot.last_search["playouts"] >= 1
  assert bot.last_search["seconds"] < 1.0


def test_falls_back_to_python_without_the_shim():
  script = (
      "import pyspiel, open_spiel_sog\n"
      "from open_spiel_sog.bots import scotland_yard_mcts as sym\n"
      "g = pyspiel.load_game('scotland_yard(map=glasses)')\n"
      "b = pyspiel.load_bot('scotland_yard_mcts', g, 0, {'playouts': 20})\n"
      "s = g.new_initial_state()\n"
      "assert b.step(s) in s.legal_actions()\n"
      "print(type(sym.engine(g)).__name__)\n")
  env = dict(os.environ, OPEN_SPIEL_SOG_DISABLE_SHIM="1")
  proc = subprocess.run([sys.executable, "-W", "ignore", "-c", script],
                        env=env, capture_output=True, text=True, timeout=120)
  assert proc.returncode == 0, proc.stderr
  assert proc.stdout.strip() == "PythonEngine"
