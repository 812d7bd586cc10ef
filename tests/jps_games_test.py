"""Collaborative games of joint policy search (`games/jps_games.py`).

jps_comm, simple_bidding and mini_bridge (Tian, Gong and Jiang 2020), checked
against the paper's state counts, OpenSpiel's own tools (game strings,
`get_all_states`, `random_sim_test`, `make_observation`, `TabularPolicy` and
`expected_game_score`) and hand-computed values of simple joint policies.
"""

import fractions
import itertools
import pickle
import random

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import expected_game_score
from open_spiel.python.algorithms import get_all_states
from open_spiel.python.observation import make_observation

import open_spiel_sog  # pylint: disable=unused-import  (registers the games)
from open_spiel_sog.games import jps_games

# The paper's #States column (histories: root, decision and terminal nodes).
PAPER_STATES = {
    "jps_comm(length=3)": 633,
    "simple_bidding(n=4)": 241,
    "simple_bidding(n=8)": 1985,
    "mini_bridge(n=3)": 4081,
    "mini_bridge(n=4)": 25576,
}
SMALL = ["jps_comm(length=3)", "simple_bidding(n=4)", "mini_bridge(n=3)"]
# Small configurations too, to catch edge cases of the parameters.
EXTRA = ["jps_comm(length=1)", "simple_bidding(n=2)", "mini_bridge(n=1)"]

PUBLIC = pyspiel.IIGObservationType(
    public_info=True, perfect_recall=True,
    private_info=pyspiel.PrivateInfoType.NONE)


def walk(state):
  """Every history below `state` (depth first, `state` included)."""
  yield state
  if state.is_terminal():
    return
  if state.is_chance_node():
    actions = [a for a, _ in state.chance_outcomes()]
  else:
    actions = state.legal_actions()
  for action in actions:
    yield from walk(state.child(action))


def histories(game_string):
  return list(walk(pyspiel.load_game(game_string).new_initial_state()))


def private_numbers(state):
  """(s1, s2) from the deal, the first action of the history."""
  game = state.get_game()
  rules = game.rules
  return rules.deal(state.history()[0])


def public_actions(state):
  return tuple(state.history()[1:])


# --- Loading and game attributes ----------------------------------------------


def test_importing_the_package_registers_the_games():
  names = pyspiel.registered_names()
  for name in ("jps_comm", "simple_bidding", "mini_bridge"):
    assert name in names


@pytest.mark.parametrize("game_string,default", [
    ("jps_comm", "jps_comm(length=3)"),
    ("simple_bidding", "simple_bidding(n=4)"),
    ("mini_bridge", "mini_bridge(n=3)"),
])
def test_load_with_defaults(game_string, default):
  game = pyspiel.load_game(game_string)
  assert str(game) == default
  assert str(pyspiel.load_game(default)) == default
  game_type = game.get_type()
  assert game_type.utility == pyspiel.GameType.Utility.IDENTICAL
  assert game_type.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
  assert (game_type.chance_mode ==
          pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC)
  assert (game_type.information ==
          pyspiel.GameType.Information.IMPERFECT_INFORMATION)
  assert game_type.provides_information_state_string
  assert game_type.provides_observation_string
  assert game.num_players() == 2


@pytest.mark.parametrize("game_string,actions,chance,length,lo,hi", [
    # 2^L guesses; L signals and a guess.
    ("jps_comm(length=3)", 8, 8, 4, 0.0, 1.0),
    ("jps_comm(length=1)", 2, 2, 2, 0.0, 1.0),
    # Pass and bids 1, 2, 4; every bid and the closing pass.
    ("simple_bidding(n=4)", 4, 16, 4, 0.0, 4.0),
    ("simple_bidding(n=8)", 5, 64, 5, 0.0, 8.0),
    ("simple_bidding(n=2)", 3, 4, 3, 0.0, 2.0),
    # Pass and 1H..NS; opening pass, every bid, closing pass.
    ("mini_bridge(n=3)", 7, 16, 8, -1.0, 4.0),
    ("mini_bridge(n=4)", 9, 25, 10, -1.0, 8.0),
    ("mini_bridge(n=1)", 3, 4, 4, -1.0, 1.0),
])
def test_game_info(game_string, actions, chance, length, lo, hi):
  game = pyspiel.load_game(game_string)
  assert game.num_distinct_actions() == actions
  assert game.max_chance_outcomes() == chance
  assert game.max_game_length() == length
  assert game.min_utility() == lo
  assert game.max_utility() == hi


@pytest.mark.parametrize("game_string", SMALL + EXTRA)
def test_game_info_is_tight(game_string):
  """Utilities lie in [min, max] and reach both; the longest game has
  max_game_length decisions; the chance node has max_chance_outcomes."""
  game = pyspiel.load_game(game_string)
  states = histories(game_string)
  terminals = [s for s in states if s.is_terminal()]
  values = {s.returns()[0] for s in terminals}
  assert min(values) == game.min_utility()
  assert max(values) == game.max_utility()
  assert max(len(s.history()) - 1 for s in terminals) == game.max_game_length()
  root = game.new_initial_state()
  assert len(root.chance_outcomes()) == game.max_chance_outcomes()
  assert sum(p for _, p in root.chance_outcomes()) == pytest.approx(1.0)
  # One chance node, at the root.
  assert sum(s.is_chance_node() for s in states) == 1
  used = {a for s in states if not s.is_chance_node()
          for a in s.legal_actions()}
  assert used == set(range(game.num_distinct_actions()))


# --- State counts -------------------------------------------------------------


@pytest.mark.parametrize("game_string,expected", PAPER_STATES.items())
def test_number_of_histories_is_the_papers(game_string, expected):
  assert len(histories(game_string)) == expected


@pytest.mark.parametrize("game_string,expected", PAPER_STATES.items())
def test_get_all_states_agrees(game_string, expected):
  game = pyspiel.load_game(game_string)
  states = get_all_states.get_all_states(
      game, include_terminals=True, include_chance_states=True)
  assert len(states) == expected


# --- Utilities ----------------------------------------------------------------


@pytest.mark.parametrize("game_string", SMALL + EXTRA)
def test_utilities_are_identical(game_string):
  for state in histories(game_string):
    returns = state.returns()
    assert returns[0] == returns[1]
    if not state.is_terminal():
      assert returns == [0.0, 0.0]
    assert state.rewards() == returns


def rule_value(game_string, s1, s2, actions):
  """The reward from the definitions, written independently of the game."""
  game = pyspiel.load_game(game_string)
  params = game.get_parameters()
  name = game.get_type().short_name
  if name == "jps_comm":
    return 1.0 if actions[-1] == s1 else 0.0
  bids = [a for a in actions if a != 0]
  if name == "simple_bidding":
    value = 2**(bids[-1] - 1)
    return float(value) if s1 + s2 >= value else 0.0
  n = params["n"]
  if not bids:
    return 0.0
  k, suit = (bids[-1] + 1) // 2, "HS"[(bids[-1] + 1) % 2]
  if suit == "S" and s1 + s2 >= n + k or suit == "H" and s1 + s2 <= n - k:
    return float(2**(k - 1))
  return -1.0


@pytest.mark.parametrize("game_string", SMALL)
def test_rewards_follow_the_definitions(game_string):
  for state in histories(game_string):
    if state.is_terminal():
      s1, s2 = private_numbers(state)
      assert state.returns()[0] == rule_value(game_string, s1, s2,
                                              public_actions(state))


def play(game, outcome, *actions):
  state = game.new_initial_state()
  state.apply_action(outcome)
  for action in actions:
    assert action in state.legal_actions(), (str(state), action)
    state.apply_action(action)
  return state


def test_mini_bridge_contracts_by_hand():
  game = pyspiel.load_game("mini_bridge(n=3)")
  one_h, one_s, two_h, two_s, three_h, three_s = range(1, 7)

  def deal(s1, s2):
    return s1 * 4 + s2

  # Pass-out.
  assert play(game, deal(3, 3), 0, 0).returns() == [0.0, 0.0]
  # 1S makes with s1 + s2 >= 4, 1H with s1 + s2 <= 2.
  assert play(game, deal(1, 3), one_s, 0).returns() == [1.0, 1.0]
  assert play(game, deal(1, 2), one_s, 0).returns() == [-1.0, -1.0]
  assert play(game, deal(1, 1), 0, one_h, 0).returns() == [1.0, 1.0]
  assert play(game, deal(2, 1), one_h, 0).returns() == [-1.0, -1.0]
  # 2S needs 5, 3S needs 6 (both maximal); 3H needs 0.
  assert play(game, deal(3, 2), one_h, two_s, 0).returns() == [2.0, 2.0]
  assert play(game, deal(3, 3), three_s, 0).returns() == [4.0, 4.0]
  assert play(game, deal(0, 0), 0, three_h, 0).returns() == [4.0, 4.0]
  assert play(game, deal(0, 1), two_h, three_h, 0).returns() == [-1.0, -1.0]
  assert [game.new_initial_state().child(0).action_to_string(a)
          for a in range(7)] == ["Pass", "1H", "1S", "2H", "2S", "3H", "3S"]


def test_simple_bidding_by_hand():
  game = pyspiel.load_game("simple_bidding(n=4)")

  def deal(s1, s2):
    return s1 * 4 + s2

  assert play(game, deal(0, 0), 1, 0).returns() == [0.0, 0.0]
  assert play(game, deal(0, 1), 1, 0).returns() == [1.0, 1.0]
  assert play(game, deal(1, 2), 1, 2, 0).returns() == [2.0, 2.0]
  assert play(game, deal(1, 2), 3, 0).returns() == [0.0, 0.0]
  assert play(game, deal(3, 1), 2, 3, 0).returns() == [4.0, 4.0]
  assert [game.new_initial_state().child(0).action_to_string(a)
          for a in range(4)] == ["Pass", "1", "2", "4"]


def test_jps_comm_by_hand():
  game = pyspiel.load_game("jps_comm(length=3)")
  assert play(game, 5, 1, 0, 1, 5).returns() == [1.0, 1.0]
  assert play(game, 5, 1, 0, 1, 4).returns() == [0.0, 0.0]
  assert play(game, 5, 0, 0, 0, 5).returns() == [1.0, 1.0]


# --- Rules of the bidding -----------------------------------------------------


def test_simple_bidding_legal_actions():
  game = pyspiel.load_game("simple_bidding(n=4)")
  state = game.new_initial_state()
  assert state.is_chance_node()
  state.apply_action(0)
  assert state.current_player() == 0
  assert state.legal_actions() == [1, 2, 3]  # must open
  state.apply_action(1)
  assert state.current_player() == 1
  assert state.legal_actions() == [0, 2, 3]
  state.apply_action(3)  # the highest bid
  assert state.current_player() == 0
  assert state.legal_actions() == [0]
  state.apply_action(0)
  assert state.is_terminal()


def test_mini_bridge_legal_actions():
  game = pyspiel.load_game("mini_bridge(n=3)")
  state = game.new_initial_state()
  state.apply_action(5)
  assert state.legal_actions() == list(range(7))  # may pass
  state.apply_action(0)
  assert not state.is_terminal()
  assert state.current_player() == 1
  assert state.legal_actions() == list(range(7))
  state.apply_action(4)  # 2S
  assert state.current_player() == 0
  assert state.legal_actions() == [0, 5, 6]
  state.apply_action(0)
  assert state.is_terminal()
  # After the highest bid, only Pass.
  state = play(game, 5, 6)
  assert state.current_player() == 1 and state.legal_actions() == [0]
  # The opening pass and the pass-out.
  state = play(game, 5, 0, 0)
  assert state.is_terminal()


def test_jps_comm_legal_actions():
  game = pyspiel.load_game("jps_comm(length=3)")
  state = game.new_initial_state()
  assert [p for _, p in state.chance_outcomes()] == pytest.approx([1 / 8] * 8)
  state.apply_action(6)
  for _ in range(3):
    assert state.current_player() == 0
    assert state.legal_actions() == [0, 1]
    state.apply_action(1)
  assert state.current_player() == 1
  assert state.legal_actions() == list(range(8))
  state.apply_action(6)
  assert state.is_terminal()


# --- Information -------------------------------------------------------------


@pytest.mark.parametrize("game_string", SMALL + EXTRA)
def test_information_state_strings_have_perfect_recall(game_string):
  """Two histories share a player's infostate string exactly when they share
  that player's private number and the public actions."""
  states = [s for s in histories(game_string) if not s.is_chance_node()]
  for player in (0, 1):
    key_to_string = {}
    string_to_key = {}
    for state in states:
      own = private_numbers(state)[player]
      key = (own, public_actions(state))
      string = state.information_state_string(player)
      assert key_to_string.setdefault(key, string) == string
      assert string_to_key.setdefault(string, key) == key


@pytest.mark.parametrize("game_string", SMALL + EXTRA)
def test_public_observer_shows_the_public_actions_only(game_string):
  game = pyspiel.load_game(game_string)
  observer = make_observation(game, PUBLIC)
  string_to_actions = {}
  for state in histories(game_string):
    if state.is_chance_node():
      continue
    string = observer.string_from(state, 0)
    assert observer.string_from(state, 1) == string
    assert "s=" not in string
    actions = public_actions(state)
    assert string_to_actions.setdefault(string, actions) == actions
    observer.set_from(state, 0)
    tensor = observer.tensor.copy()
    observer.set_from(state, 1)
    np.testing.assert_array_equal(observer.tensor, tensor)


@pytest.mark.parametrize("game_string", SMALL)
def test_information_state_tensors_match_strings(game_string):
  """The infostate tensor tells apart exactly the infostates the string
  does, for each player."""
  states = [s for s in histories(game_string) if not s.is_chance_node()]
  game = pyspiel.load_game(game_string)
  size = game.information_state_tensor_size()
  for player in (0, 1):
    string_to_tensor = {}
    tensor_to_string = {}
    for state in states:
      tensor = tuple(state.information_state_tensor(player))
      assert len(tensor) == size
      string = state.information_state_string(player)
      assert string_to_tensor.setdefault(string, tensor) == tensor
      assert tensor_to_string.setdefault(tensor, string) == string


def test_strings_read_as_documented():
  game = pyspiel.load_game("simple_bidding(n=4)")
  state = play(game, 3 * 4 + 1, 1, 2)
  assert state.information_state_string(0) == "p0 s=3 bids: 1 2"
  assert state.information_state_string(1) == "p1 s=1 bids: 1 2"
  assert make_observation(game, PUBLIC).string_from(state, 0) == "bids: 1 2"
  assert state.observation_string(1) == "p1 s=1 bid: 2"
  state.apply_action(0)
  assert state.observation_string(0) == "p0 s=3 bid: 2 Pass"
  assert str(state) == "s1=3 s2=1 bids: 1 2 Pass"
  assert play(game, 0).information_state_string(1) == "p1 s=0 bids: -"

  game = pyspiel.load_game("mini_bridge(n=3)")
  state = play(game, 2 * 4 + 3, 0, 2)
  assert state.information_state_string(0) == "p0 s=2 bids: Pass 1S"
  assert state.information_state_string(1) == "p1 s=3 bids: Pass 1S"

  game = pyspiel.load_game("jps_comm(length=3)")
  state = play(game, 5, 1, 0)
  assert state.information_state_string(0) == "p0 s=5 signals: 1 0"
  assert state.information_state_string(1) == "p1 signals: 1 0"
  state = play(game, 5, 1, 0, 1, 4)
  assert make_observation(game, PUBLIC).string_from(state, 1) == (
      "signals: 1 0 1 guess: 4")
  assert state.action_to_string(0, 1) == "signal 1"
  assert state.action_to_string(1, 4) == "guess 4"
  assert game.new_initial_state().action_to_string(
      pyspiel.PlayerId.CHANCE, 5) == "Deal s1=5"


def test_private_numbers_are_seen_by_their_owner_only():
  game = pyspiel.load_game("mini_bridge(n=3)")
  for s1, s2 in itertools.product(range(4), repeat=2):
    state = play(game, s1 * 4 + s2, 1)
    assert f"s={s1}" in state.information_state_string(0)
    assert f"s={s2}" in state.information_state_string(1)
    other = play(game, s1 * 4 + (s2 + 1) % 4, 1)
    assert (other.information_state_string(0) ==
            state.information_state_string(0))
    assert (other.information_state_string(1) !=
            state.information_state_string(1))


@pytest.mark.parametrize("game_string", SMALL)
def test_resample_from_infostate_keeps_the_infostate(game_string):
  rng = random.Random(7)
  states = [s for s in histories(game_string)
            if not s.is_chance_node() and not s.is_terminal()]
  for state in rng.sample(states, 30):
    for player in (0, 1):
      sample = state.resample_from_infostate(player, rng.random)
      assert (sample.information_state_string(player) ==
              state.information_state_string(player))


# --- OpenSpiel's tools --------------------------------------------------------


@pytest.mark.parametrize("game_string", SMALL + EXTRA + ["mini_bridge(n=4)"])
def test_random_sim(game_string):
  game = pyspiel.load_game(game_string)
  pyspiel.random_sim_test(game, num_sims=20, serialize=True, verbose=False)


@pytest.mark.parametrize("game_string", SMALL)
def test_pickle(game_string):
  game = pyspiel.load_game(game_string)
  assert str(pickle.loads(pickle.dumps(game))) == game_string
  state = play(game, 3, 1)
  clone = pickle.loads(pickle.dumps(state))
  assert clone.history() == state.history()
  assert str(clone) == str(state)


# --- Values of joint policies -------------------------------------------------


def joint_policy(game, choose):
  """A deterministic TabularPolicy: `choose(state)` is the action taken."""
  policy = policy_lib.TabularPolicy(game)
  for key, index in policy.state_lookup.items():
    state = policy.states[index]
    action = choose(state)
    assert action in state.legal_actions(), (key, action)
    policy.action_probability_array[index] = 0.0
    policy.action_probability_array[index, action] = 1.0
  return policy


def value(game, policy):
  values = expected_game_score.policy_value(game.new_initial_state(),
                                            [policy, policy])
  assert values[0] == pytest.approx(values[1])
  return values[0]


def test_simple_bidding_bid_one_then_pass():
  game = pyspiel.load_game("simple_bidding(n=4)")
  policy = joint_policy(game, lambda s: 1 if not public_actions(s) else 0)
  # P(s1 + s2 >= 1) = 15/16.
  assert value(game, policy) == pytest.approx(15 / 16)


def test_simple_bidding_value_by_enumeration():
  """Player 0 bids its number's best bid, player 1 passes: checked against
  a direct sum over the deals."""
  game = pyspiel.load_game("simple_bidding(n=8)")
  bids = [1, 2, 4, 8]

  def choose(state):
    if public_actions(state):
      return 0
    s1 = private_numbers(state)[0]
    return 1 + max(range(4), key=lambda i: bids[i] * sum(
        s1 + s2 >= bids[i] for s2 in range(8)))

  total = fractions.Fraction(0)
  for s1, s2 in itertools.product(range(8), repeat=2):
    b = bids[choose(play(game, s1 * 8 + s2)) - 1]
    total += fractions.Fraction(b if s1 + s2 >= b else 0, 64)
  assert value(game, joint_policy(game, choose)) == pytest.approx(
      float(total))


def test_mini_bridge_always_pass_is_worth_zero():
  game = pyspiel.load_game("mini_bridge(n=3)")
  policy = joint_policy(game, lambda s: 0)
  assert value(game, policy) == 0.0


def test_mini_bridge_open_one_spade_then_pass():
  game = pyspiel.load_game("mini_bridge(n=3)")
  policy = joint_policy(game, lambda s: 2 if not public_actions(s) else 0)
  # 1S makes when s1 + s2 >= 4: 6 of the 16 deals.
  assert value(game, policy) == pytest.approx((6 - 10) / 16)


@pytest.mark.parametrize("length", [1, 2, 3])
def test_jps_comm_binary_code_is_worth_one(length):
  game = pyspiel.load_game(f"jps_comm(length={length})")

  def choose(state):
    actions = public_actions(state)
    if state.current_player() == 0:
      s1 = private_numbers(state)[0]
      return (s1 >> (length - 1 - len(actions))) & 1  # most significant first
    return int("".join(map(str, actions)), 2)

  assert value(game, joint_policy(game, choose)) == pytest.approx(1.0)
  # Ignoring the signals, player 1 guesses right once in 2^length.
  blind = joint_policy(game, lambda s: 0)
  assert value(game, blind) == pytest.approx(1 / 2**length)


# --- Bad parameters -----------------------------------------------------------


@pytest.mark.parametrize("game_string,match", [
    ("simple_bidding(n=3)", r"simple_bidding: n must be a power of two >= 2"
     r".*got 3"),
    ("simple_bidding(n=1)", r"simple_bidding: n must be a power of two >= 2"),
    ("simple_bidding(n=0)", r"simple_bidding: n must be a power of two >= 2"),
    ("simple_bidding(n=-4)", r"simple_bidding: n must be a power of two"),
    ("jps_comm(length=0)", r"jps_comm: length must be >= 1.*got 0"),
    ("jps_comm(length=-2)", r"jps_comm: length must be >= 1"),
    ("mini_bridge(n=0)", r"mini_bridge: n must be >= 1.*got 0"),
    ("mini_bridge(n=-1)", r"mini_bridge: n must be >= 1"),
])
def test_bad_parameters_raise_a_clear_value_error(game_string, match):
  with pytest.raises(ValueError, match=match) as info:
    pyspiel.load_game(game_string)
  assert not isinstance(info.value, pyspiel.SpielError)
  # pyspiel is still usable afterwards.
  assert pyspiel.load_game("mini_bridge").max_game_length() == 8


def test_unknown_parameter_is_refused():
  # OpenSpiel refuses it before the game's constructor runs.
  with pytest.raises(pyspiel.SpielError, match=r"Unknown parameter 'm'"):
    pyspiel.load_game("mini_bridge(m=3)")
  # The game's own check, for callers that bypass pyspiel.load_game.
  with pytest.raises(ValueError, match=r"unknown parameter\(s\) m; "
                     r"supported: n"):
    jps_games.MiniBridgeGame({"m": 3})
  with pytest.raises(ValueError, match=r"n must be an integer"):
    jps_games.SimpleBiddingGame({"n": "four"})
