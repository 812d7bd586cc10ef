"""The C++ Scotland Yard (`_native/scotland_yard.h`) against its Python twin.

`scotland_yard` is the C++ game where the shim loads; `python_scotland_yard`
is the Python game, always. Random games are played on both in lockstep on
every shipped map (and on set-ups that reach the rarer rules), and at every
step the two must agree on the player to move, the legal actions and their
strings, every string and tensor of every observation type (information
state, observation, public with and without recall, all players), the
compact encoding, the state's fields and the returns. Resampling from an
infostate must draw the same history from the same random numbers, and bad
input must fail with the same message.
"""

import os
import pickle
import random
import subprocess
import sys

import numpy as np
import pyspiel
import pytest
from open_spiel.python.observation import make_observation

import open_spiel_sog  # pylint: disable=unused-import  (registers the games)
from open_spiel_sog import games
from open_spiel_sog.algorithms.sog import engine
from open_spiel_sog.algorithms.sog.anchored.search import AnchoredConfig
from open_spiel_sog.algorithms.sog.anchored.search import AnchoredSearch
from open_spiel_sog.games import scotland_yard
from open_spiel_sog.games.scotland_yard import native

pytestmark = pytest.mark.skipif(
    scotland_yard.NATIVE_REASON is not None,
    reason=f"scotland_yard is the Python game: {scotland_yard.NATIVE_REASON}")

# London's default is the classic edition's 18 start cards, dealt to the
# detectives and Mr. X alike. The later edition: 16 detective cards and Mr.
# X's own 13 (FORMER_MRX), which with detective_starts=13/26/29/34/50 is the
# former fixed game (docs/scotland_yard.md, "London's setup").
FORMER_MRX = "mrx_start=35/45/51/71/78/104/106/127/132/146/166/170/172"
LATER_EDITION = ("detective_start_cards=13/26/29/34/50/53/91/94/103/112/117/"
                 "123/138/141/155/174," + FORMER_MRX)

# (parameters, random games): every shipped map, and set-ups that reach
# double moves, black tickets on ferries, handed-over tickets, chance starts,
# stuck players and catches more often. London draws its detectives' starts
# (public chance nodes before Mr. X's hidden one, which skips their stations:
# the default cards are shared); the drawn set-ups below also draw on the
# small maps, deal London's later edition (separate cards) and keep its
# former fixed starts.
SETUPS = [
    ("map=glasses", 30),
    ("map=glasses,max_rounds=3,detective_starts=3/9", 30),
    ("map=islands", 30),
    ("map=islands,detective_taxi=1,detective_bus=0,mrx_black=3", 30),
    ("map=wheel", 30),
    ("map=wheel,reveal_rounds=none,mrx_double=2,mrx_black=3", 30),
    ("map=wheel,mrx_start=1/4/8,tickets_to_mrx=1", 30),
    ("map=london", 3),
    ("map=london,max_rounds=8,tickets_to_mrx=0,mrx_double=4", 4),
    ("map=london,mrx_start=1/,detective_taxi=2,detective_bus=1,"
     "detective_underground=0", 4),
    ("map=london,detective_starts=13/26/29/34/50," + FORMER_MRX, 3),
    ("map=london,detective_start_cards=none,max_rounds=6," + FORMER_MRX, 3),
    ("map=london,mrx_start=13/26/29/34/50/35,max_rounds=6", 6),
    ("map=london,detective_start_cards=1/2/3/4/5/6,mrx_start=1/2/3/4/5/6/7,"
     "detective_taxi=2,max_rounds=6", 6),
    ("map=london,max_rounds=6," + LATER_EDITION, 3),
    ("map=wheel,detective_start_cards=1/2/3/5/6/7/9", 30),
    ("map=wheel,detective_start_cards=2/4/6/8,mrx_start=2/4/6/8,"
     "reveal_rounds=none", 30),
    ("map=glasses,detective_start_cards=1/3/9/11,max_rounds=4", 30),
]

OBS_TYPES = [
    pyspiel.IIGObservationType(perfect_recall=False),
    pyspiel.IIGObservationType(perfect_recall=True),
    pyspiel.IIGObservationType(
        public_info=True, perfect_recall=False,
        private_info=pyspiel.PrivateInfoType.NONE),
    pyspiel.IIGObservationType(
        public_info=True, perfect_recall=True,
        private_info=pyspiel.PrivateInfoType.NONE),
    pyspiel.IIGObservationType(
        public_info=True, perfect_recall=True,
        private_info=pyspiel.PrivateInfoType.ALL_PLAYERS),
    pyspiel.IIGObservationType(
        public_info=False, perfect_recall=False,
        private_info=pyspiel.PrivateInfoType.SINGLE_PLAYER),
]

VIEW_FIELDS = ("mrx", "detectives", "detective_tickets", "mrx_tickets",
               "doubles", "turn", "placed", "pending", "in_double", "outcome",
               "log", "path")


def twins(params):
  return (pyspiel.load_game(f"scotland_yard({params})"),
          pyspiel.load_game(f"python_scotland_yard({params})"))


def observers(game):
  return [make_observation(game, t) for t in OBS_TYPES]


def check_same_state(cpp, py, cpp_obs, py_obs, compact):
  assert cpp.current_player() == py.current_player()
  assert cpp.is_terminal() == py.is_terminal()
  assert cpp.history() == py.history()
  assert str(cpp) == str(py)
  assert cpp.returns() == py.returns()
  view = native.state_view(cpp)
  for field in VIEW_FIELDS:
    assert tuple(np.ravel(getattr(view, field))) == tuple(
        np.ravel(getattr(py, field))), field
  for player in (0, 1):
    assert (cpp.information_state_string(player) ==
            py.information_state_string(player))
    assert cpp.observation_string(player) == py.observation_string(player)
    np.testing.assert_array_equal(cpp.information_state_tensor(player),
                                  py.information_state_tensor(player))
    np.testing.assert_array_equal(cpp.observation_tensor(player),
                                  py.observation_tensor(player))
    np.testing.assert_array_equal(compact[0](cpp, player),
                                  compact[1](py, player))
    for a, b in zip(cpp_obs, py_obs):
      assert a.string_from(cpp, player) == b.string_from(py, player)
      a.set_from(cpp, player)
      b.set_from(py, player)
      np.testing.assert_array_equal(a.tensor, b.tensor)
  if cpp.is_chance_node():
    assert cpp.chance_outcomes() == py.chance_outcomes()
    assert ([cpp.action_to_string(-1, a) for a, _ in cpp.chance_outcomes()] ==
            [py.action_to_string(-1, a) for a, _ in py.chance_outcomes()])
  elif not cpp.is_terminal():
    player = cpp.current_player()
    assert cpp.legal_actions() == py.legal_actions()
    assert cpp.legal_actions(1 - player) == py.legal_actions(1 - player) == []
    assert ([cpp.action_to_string(player, a) for a in cpp.legal_actions()] ==
            [py.action_to_string(player, a) for a in py.legal_actions()])


def play_twins(params, num_games, seed=0):
  """Random games in lockstep; returns the outcomes seen."""
  cpp_game, py_game = twins(params)
  cpp_obs, py_obs = observers(cpp_game), observers(py_game)
  compact = (games.compact_encoding(cpp_game)[1],
             games.compact_encoding(py_game)[1])
  rng = random.Random(seed)
  outcomes = set()
  for _ in range(num_games):
    cpp, py = cpp_game.new_initial_state(), py_game.new_initial_state()
    while True:
      check_same_state(cpp, py, cpp_obs, py_obs, compact)
      if cpp.is_terminal():
        break
      action = rng.choice(cpp.legal_actions())
      cpp.apply_action(action)
      py.apply_action(action)
    outcomes.add(py.outcome)
  return outcomes


def test_scotland_yard_is_the_cpp_game_and_the_twin_is_python():
  cpp, py = twins("map=glasses")
  assert engine.cpp_game(cpp) and native.is_cpp(cpp)
  assert isinstance(py, scotland_yard.ScotlandYardGame)
  assert not native.is_cpp(py)
  assert engine.native_reason(cpp) is None
  assert engine.native_reason(py) is not None
  assert cpp.get_type().short_name == "scotland_yard"
  assert py.get_type().short_name == "python_scotland_yard"


@pytest.mark.parametrize("params,num_games", SETUPS)
def test_random_games_agree_move_by_move(params, num_games):
  play_twins(params, num_games)


def test_random_games_reach_every_outcome():
  outcomes = set()
  for params, num_games in SETUPS:
    outcomes |= play_twins(params, num_games, seed=1)
  assert outcomes == {1, 2, 3, 4}  # caught, Mr. X stuck, survived, D stuck


@pytest.mark.parametrize("params", [
    "map=glasses", "map=wheel", "map=islands", "map=london",
    "map=london,max_rounds=5,mrx_start=35/45/51/",
    "map=london,detective_starts=13/26/29/34/50," + FORMER_MRX,
    "map=london,mrx_start=35/", "map=london,detective_start_cards=none," +
    FORMER_MRX, "map=london," + LATER_EDITION,
    "map=wheel,detective_start_cards=1/2/3/5/"])
def test_game_attributes_agree(params):
  cpp, py = twins(params)
  for method in ("num_distinct_actions", "max_chance_outcomes",
                 "max_game_length", "num_players", "min_utility",
                 "max_utility", "utility_sum", "information_state_tensor_shape",
                 "observation_tensor_shape", "max_chance_nodes_in_history"):
    assert getattr(cpp, method)() == getattr(py, method)(), method
  assert cpp.get_parameters() == py.get_parameters()
  assert str(cpp) == str(py).replace("python_scotland_yard", "scotland_yard")
  assert str(pyspiel.load_game(str(cpp))) == str(cpp)
  cpp_type, py_type = cpp.get_type(), py.get_type()
  for field in ("long_name", "dynamics", "chance_mode", "information",
                "utility", "reward_model", "provides_information_state_string",
                "provides_information_state_tensor",
                "provides_observation_string", "provides_observation_tensor",
                "provides_factored_observation_string",
                "parameter_specification"):
    assert getattr(cpp_type, field) == getattr(py_type, field), field
  assert games.compact_encoding(cpp)[0] == games.compact_encoding(py)[0]


@pytest.mark.parametrize("params", [
    "map=wheel", "map=wheel,mrx_start=1/4/8,reveal_rounds=none",
    "map=london,max_rounds=9", "map=london,max_rounds=9,mrx_start=13/26/35/",
    "map=london,max_rounds=9,detective_starts=13/26/29/34/50," + FORMER_MRX,
    "map=wheel,detective_start_cards=2/4/6/8,mrx_start=2/4/6/8,"
    "reveal_rounds=none"])
def test_resampling_draws_the_same_histories(params):
  cpp_game, py_game = twins(params)
  rng = random.Random(3)
  for game_index in range(8):
    cpp, py = cpp_game.new_initial_state(), py_game.new_initial_state()
    steps = 0
    while not cpp.is_terminal():
      if steps % 3 == 0 and not cpp.is_chance_node():
        for player in (0, 1):
          seed = 100 * game_index + steps + player
          a = cpp.resample_from_infostate(player, random.Random(seed).random)
          b = py.resample_from_infostate(player, random.Random(seed).random)
          assert a.history() == b.history()
          assert (a.information_state_string(player) ==
                  cpp.information_state_string(player))
      action = rng.choice(cpp.legal_actions())
      cpp.apply_action(action)
      py.apply_action(action)
      steps += 1
    a = cpp.resample_from_infostate(1, random.Random(game_index).random)
    b = py.resample_from_infostate(1, random.Random(game_index).random)
    assert a.history() == b.history()


def test_states_serialize_pickle_and_clone():
  game = pyspiel.load_game("scotland_yard(map=london)")
  rng = random.Random(0)
  state = game.new_initial_state()
  for _ in range(8):
    state.apply_action(rng.choice(state.legal_actions()))
  clone = state.clone()
  for copy in (game.deserialize_state(state.serialize()),
               pickle.loads(pickle.dumps(state)), clone):
    assert copy.history() == state.history()
    assert str(copy) == str(state)
    assert (copy.information_state_string(1) ==
            state.information_state_string(1))
  clone.apply_action(clone.legal_actions()[0])
  assert clone.history() != state.history()


@pytest.mark.parametrize("game_string,match", [
    ("scotland_yard(map=atlantis)", r"unknown map 'atlantis'; shipped maps"),
    ("scotland_yard(map=glasses,max_rounds=0)", r"max_rounds must be >= 1"),
    ("scotland_yard(map=glasses,detective_starts=1/1/)",
     r"two detectives start on the same station"),
    ("scotland_yard(map=glasses,mrx_start=99/)",
     r"Mr\. X's start '99' is not a station"),
    ("scotland_yard(map=glasses,tickets_to_mrx=3)", r"tickets_to_mrx must be"),
    ("scotland_yard(map=glasses,reveal_rounds=two/)",
     r"reveal_rounds must be round numbers"),
    ("scotland_yard(map=/nowhere/map.json)", r"does not exist"),
    ("scotland_yard(map=london,detective_starts=13/26/29/34/50,"
     "detective_start_cards=13/26/29/34/50/53)", r"exclude each other"),
    ("scotland_yard(map=london,detective_start_cards=13/26/29/34/)",
     r"5 detectives need at least 5 detective_start_cards, got 4"),
    ("scotland_yard(map=london,detective_start_cards=13/13/29/34/50/)",
     r"detective_start_cards lists a station twice"),
    ("scotland_yard(map=london,detective_starts=13/26/29/34/50)",
     r"Mr\. X may start on station 13, where a detective starts"),
    ("scotland_yard(map=london,detective_start_cards=13/26/29/34/200/)",
     r"detective start card .200. is not a station"),
    ("scotland_yard(map=wheel,detective_start_cards=4/8/1/,mrx_start=4/8/)",
     r"the detectives' cards may cover every station of mrx_start"),
])
def test_bad_input_fails_with_the_python_games_message(game_string, match):
  errors = []
  for name in (game_string, "python_" + game_string):
    with pytest.raises(ValueError, match=match) as info:
      pyspiel.load_game(name)
    errors.append(str(info.value))
  assert errors[0] == errors[1]
  assert "\n" not in errors[0]


def test_observation_parameters_are_refused():
  game = pyspiel.load_game("scotland_yard")
  with pytest.raises(pyspiel.SpielError, match="observation parameters"):
    make_observation(game, OBS_TYPES[0], {"x": 1})


def test_native_engine_searches_london():
  game = pyspiel.load_game("scotland_yard(map=london)")
  state = game.new_initial_state()
  rng = random.Random(0)
  while state.current_player() != 1:
    state.apply_action(rng.choice(state.legal_actions()))
  search = AnchoredSearch(game, 1, AnchoredConfig(simulations=200, seed=0),
                          native=True)
  result = search.search(state)
  assert set(result.policy) == set(state.legal_actions())
  assert abs(sum(result.policy.values()) - 1.0) < 1e-6
  assert result.simulations == 200
  # The root holds Mr. X's possible starts (13 stations less the revealed
  # nothing: all 13, each a history).
  assert result.root_histories[0] >= 2


def test_fallback_registers_the_python_game_as_scotland_yard():
  code = ("import pyspiel, open_spiel_sog\n"
          "from open_spiel_sog.games import scotland_yard as sy\n"
          "g = pyspiel.load_game('scotland_yard(map=wheel)')\n"
          "assert isinstance(g, sy.ScotlandYardGame), type(g)\n"
          "assert g.get_type().short_name == 'scotland_yard'\n"
          "assert str(pyspiel.load_game(str(g))) == str(g)\n"
          "assert sy.NATIVE_REASON and 'DISABLE_SHIM' in sy.NATIVE_REASON\n"
          "p = pyspiel.load_game('python_scotland_yard(map=wheel)')\n"
          "assert p.get_type().short_name == 'python_scotland_yard'\n"
          "print('ok')\n")
  env = dict(os.environ, OPEN_SPIEL_SOG_DISABLE_SHIM="1",
             JAX_PLATFORMS="cpu")
  out = subprocess.run([sys.executable, "-c", code], env=env,
                       capture_output=True, text=True, timeout=120,
                       check=False)
  assert out.returncode == 0, out.stderr[-2000:]
  assert out.stdout.strip().endswith("ok")
