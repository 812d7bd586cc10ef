"""Exact solving and exact exploitability on Scotland Yard, judged by OpenSpiel.

The configuration: the glasses map with 3 rounds and the detectives moved to
stations 3 and 9, where the game is mixed (its value is strictly inside
(-1, 1)), small enough for OpenSpiel's Python best response in about a
second (149 infostates, 517 terminal histories).
"""

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as os_policy
from open_spiel.python.algorithms import expected_game_score
from open_spiel.python.algorithms import exploitability

import open_spiel_sog  # pylint: disable=unused-import (registers the game)
from open_spiel_sog import PublicTreeCFR
from open_spiel_sog.evaluation.exploitability import bot_exploitability
from open_spiel_sog.evaluation.exploitability import bot_policy
from open_spiel_sog.evaluation.exploitability import sog_exploitability

SMALL = "scotland_yard(map=glasses,max_rounds=3,detective_starts=3/9)"


@pytest.fixture(scope="module")
def small():
  return pyspiel.load_game(SMALL)


def _value(game, policy):
  return expected_game_score.policy_value(game.new_initial_state(),
                                          [policy, policy])[0]


def test_public_tree_cfr_solves_the_small_glasses_game(small):
  solver = PublicTreeCFR(small)
  solver.run(1000)
  ours = solver.average_policy()
  ours_expl = exploitability.exploitability(small, ours)
  assert ours_expl < 1e-3

  # OpenSpiel's own CFR+ (C++) on the same Python game, as the reference.
  reference = pyspiel.CFRPlusSolver(small)
  for _ in range(100):
    reference.evaluate_and_update_policy()
  theirs = reference.tabular_average_policy()
  theirs_policy = os_policy.tabular_policy_from_callable(
      small, lambda s: dict(theirs.policy_table()[
          s.information_state_string()]))
  theirs_expl = exploitability.exploitability(small, theirs_policy)
  assert theirs_expl < 0.02
  # Both values lie within 2 x exploitability of the game value.
  v_ours, v_theirs = _value(small, ours), _value(small, theirs_policy)
  assert abs(v_ours - v_theirs) <= 2 * (ours_expl + theirs_expl) + 1e-9
  # Hidden information matters: neither side wins for sure.
  assert -0.9 < v_ours < 0.9


def test_sog_exact_exploitability_on_the_small_glasses_game(small):
  uniform = exploitability.exploitability(
      small, os_policy.UniformRandomPolicy(small))
  assert uniform > 0.8  # 0.896
  result = sog_exploitability(
      small, {"simulations": 50, "value_function": "exact"}, [0])
  # Measured 0.017 (seed 0); the goal at s = 100 is 0.05.
  assert result["max"] < 0.1
  assert result["searches"][0] > 100


def test_bot_exploitability_matches_openspiel_for_uniform_random():
  game = pyspiel.load_game("kuhn_poker")
  result = bot_exploitability(game, "uniform_random", {}, [0])
  expected = exploitability.exploitability(
      game, os_policy.UniformRandomPolicy(game))
  assert result["mean"] == pytest.approx(expected, abs=1e-12)  # 11/24
  assert result["infostates"] == 12


def test_bot_policy_tabulates_ismcts(small):
  bots = [pyspiel.load_bot("ismcts", small, p, {"simulations": 20, "seed": 3})
          for p in range(2)]
  policy = bot_policy(small, bots)
  rows = policy.action_probability_array
  assert np.allclose(rows.sum(axis=1), 1.0)
  # Every probability sits on a legal action.
  assert not np.any(rows[policy.legal_actions_mask == 0] > 0)
  # The tabulated bot is exploitable, and OpenSpiel scores it as such.
  assert exploitability.exploitability(small, policy) > 0.1


def test_bot_exploitability_rejects_sog_and_bots_without_policies(small):
  with pytest.raises(ValueError, match="sog_exploitability"):
    bot_exploitability(small, "sog", {}, [0])
  bots = [pyspiel.make_uniform_random_bot(p, 0) for p in range(2)]

  class NoPolicy(pyspiel.Bot):

    def __init__(self):
      pyspiel.Bot.__init__(self)

    def step(self, state):
      return state.legal_actions()[0]

    def provides_policy(self):
      return False

  with pytest.raises(ValueError, match="does not provide policies"):
    bot_policy(small, [bots[0], NoPolicy()])


def test_sog_plays_the_full_glasses_map_through_evaluate_bots():
  game = pyspiel.load_game("scotland_yard(map=glasses)")
  bots = [pyspiel.load_bot("sog", game, 0,
                           {"simulations": 8, "value_function": "rollout",
                            "rollouts": 2}),
          pyspiel.load_bot("ismcts", game, 1, {"simulations": 50})]
  returns = pyspiel.evaluate_bots(game.new_initial_state(), bots, 7)
  assert tuple(returns) in ((1.0, -1.0), (-1.0, 1.0))
