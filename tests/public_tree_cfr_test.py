"""PublicTreeCFR judged by OpenSpiel: exploitability, game values, policy values."""

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import expected_game_score
from open_spiel.python.algorithms import exploitability

from open_spiel_sog.algorithms.public_tree_cfr import CFRConfig
from open_spiel_sog.algorithms.public_tree_cfr import PublicTreeCFR
from open_spiel_sog.public_state import PublicStateObserver


def test_kuhn_value_and_exploitability():
  game = pyspiel.load_game("kuhn_poker")
  solver = PublicTreeCFR(game)
  solver.run(1000)
  assert solver.expected_value(0) == pytest.approx(-1 / 18, abs=1e-3)
  # The same value from OpenSpiel's own evaluation of our policy.
  policy = solver.average_policy()
  value = expected_game_score.policy_value(game.new_initial_state(),
                                           [policy, policy])
  assert value[0] == pytest.approx(-1 / 18, abs=1e-3)
  assert exploitability.exploitability(game, policy) < 1e-3


def test_leduc_exploitability_after_1000_iterations():
  game = pyspiel.load_game("leduc_poker")
  solver = PublicTreeCFR(game)
  solver.run(1000)
  assert exploitability.exploitability(game, solver.average_policy()) <= 1e-3


def test_liars_dice_exploitability_after_1000_iterations():
  game = pyspiel.load_game("liars_dice(numdice=1,dice_sides=4)")
  solver = PublicTreeCFR(game)
  solver.run(1000)
  assert exploitability.exploitability(game, solver.average_policy()) <= 2e-3


def test_goofspiel_converges():
  game = pyspiel.load_game(
      "turn_based_simultaneous_game(game=goofspiel(num_cards=4,imp_info=True,"
      "points_order=descending))")
  solver = PublicTreeCFR(game)
  solver.run(300)
  assert exploitability.exploitability(game, solver.average_policy()) <= 5e-3


def test_uniform_policy_values_match_openspiel():
  # Before any iteration the current policy is uniform: our root values must
  # be OpenSpiel's values of the uniform policy, to 10 places.
  game = pyspiel.load_game("leduc_poker")
  solver = PublicTreeCFR(game)
  uniform = [solver.current_policy_arrays(p) for p in range(2)]
  v0, v1 = solver.counterfactual_values(uniform)
  expected = expected_game_score.policy_value(
      game.new_initial_state(), [policy_lib.UniformRandomPolicy(game)] * 2)
  assert v0[0] == pytest.approx(expected[0], abs=1e-10)
  assert v1[0] == pytest.approx(expected[1], abs=1e-10)


def _leduc_round_two_public_state(observer):
  """The round-2 decision public state after check-check, public card 3."""
  game = observer.game
  state = game.new_initial_state()
  for a in [0, 5, 1, 1, 3]:  # deal, deal, check, check, public card
    state.apply_action(a)
  ps, _ = observer.public_state_of(state)
  assert ps.current_player() == 0
  return ps


@pytest.mark.parametrize("seed", [0, 1])
def test_subgame_root_values_match_openspiel(seed):
  game = pyspiel.load_game("leduc_poker")
  observer = PublicStateObserver(game)
  root = _leduc_round_two_public_state(observer)
  rng = np.random.default_rng(seed)
  ranges = [rng.uniform(0.05, 1.0, root.num_infostates(p)) for p in range(2)]
  solver = PublicTreeCFR(root=root, ranges=ranges)
  solver.run(100)
  ours = solver.root_counterfactual_values()
  policy = solver.average_policy()
  # OpenSpiel: v_p(I) = sum_{h in I} chance(h) * r_-p(I_-p(h)) * E[u_p | h].
  expected = [np.zeros(root.num_infostates(p)) for p in range(2)]
  for i, (h, c) in enumerate(zip(root.histories, root.chance_reach)):
    values = expected_game_score.policy_value(h, [policy, policy])
    for p in range(2):
      j = root.history_infostate[p, i]
      opponent = root.history_infostate[1 - p, i]
      expected[p][j] += c * ranges[1 - p][opponent] * values[p]
  for p in range(2):
    np.testing.assert_allclose(ours[p], expected[p], atol=1e-6, rtol=0)
    assert root.infostates(p) == solver.tree.root.infostates(p)


def test_subgame_solve_converges_and_is_zero_sum():
  # Longer solves of the same public belief state agree on its value, and the
  # players' root counterfactual values cancel (zero-sum, uniform ranges).
  game = pyspiel.load_game("leduc_poker")
  observer = PublicStateObserver(game)
  root = _leduc_round_two_public_state(observer)
  ranges = [np.ones(root.num_infostates(p)) for p in range(2)]
  short = PublicTreeCFR(root=root, ranges=ranges)
  short.run(200)
  long = PublicTreeCFR(root=root, ranges=ranges)
  long.run(2000)
  # Zero-sum: the players' root values cancel, and the value converges.
  assert (short.root_counterfactual_values()[0].sum() +
          short.root_counterfactual_values()[1].sum()) == pytest.approx(
              0.0, abs=1e-9)
  assert short.expected_value(0) == pytest.approx(long.expected_value(0),
                                                  abs=2e-3)


def test_simultaneous_updates_also_converge():
  game = pyspiel.load_game("kuhn_poker")
  solver = PublicTreeCFR(game, config=CFRConfig(alternating=False))
  solver.run(1000)
  assert exploitability.exploitability(game, solver.average_policy()) < 5e-3


def test_average_policy_dict_covers_every_infostate():
  game = pyspiel.load_game("kuhn_poker")
  solver = PublicTreeCFR(game)
  solver.run(10)
  policy = solver.average_policy_dict()
  assert len(policy) == 12
  for actions_probs in policy.values():
    assert sum(p for _, p in actions_probs) == pytest.approx(1.0)


def test_bad_input_gives_clear_errors():
  observer = PublicStateObserver("leduc_poker")
  root = _leduc_round_two_public_state(observer)
  n0, n1 = root.num_infostates(0), root.num_infostates(1)
  with pytest.raises(ValueError, match="range of player 0 has shape"):
    PublicTreeCFR(root=root, ranges=[np.ones(n0 + 1), np.ones(n1)])
  with pytest.raises(ValueError, match="finite and >= 0"):
    PublicTreeCFR(root=root, ranges=[-np.ones(n0), np.ones(n1)])
  with pytest.raises(ValueError, match="needs a game"):
    PublicTreeCFR()
  with pytest.raises(ValueError, match="belongs to"):
    PublicTreeCFR("kuhn_poker", root=root)
  with pytest.raises(ValueError, match="iterations must be"):
    PublicTreeCFR("kuhn_poker").run(-1)
  with pytest.raises(ValueError, match="two-player"):
    PublicTreeCFR("kuhn_poker(players=3)")
