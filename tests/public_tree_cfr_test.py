"""PublicTreeCFR judged by OpenSpiel: exploitability, game values, policy values."""

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import expected_game_score
from open_spiel.python.algorithms import exploitability

from open_spiel_sog.algorithms.cfr import CFRConfig
from open_spiel_sog.algorithms.cfr import PublicTreeCFR
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


def _random_policy(histories, rng):
  """{information_state_string: {action: prob}}: a random (Dirichlet(1))
  distribution at every decision infostate below `histories`."""
  table = {}
  stack = list(histories)
  while stack:
    state = stack.pop()
    if state.is_terminal():
      continue
    if state.is_chance_node():
      stack.extend(state.child(a) for a, _ in state.chance_outcomes())
      continue
    key = state.information_state_string()
    if key not in table:
      legal = state.legal_actions()
      table[key] = dict(zip(legal, rng.dirichlet(np.ones(len(legal)))))
    stack.extend(state.child(a) for a in state.legal_actions())
  return table


def _expected_u0(state, table):
  """Player 0's expected return below `state` when both play `table`."""
  if state.is_terminal():
    return state.returns()[0]
  if state.is_chance_node():
    return sum(p * _expected_u0(state.child(a), table)
               for a, p in state.chance_outcomes())
  return sum(p * _expected_u0(state.child(a), table)
             for a, p in table[state.information_state_string()].items())


def _chance_probability(game, history):
  """The product of the chance probabilities along `history`."""
  state, prob = game.new_initial_state(), 1.0
  for a in history:
    if state.is_chance_node():
      prob *= dict(state.chance_outcomes())[a]
    state.apply_action(a)
  return prob


@pytest.mark.parametrize("actions,seed", [
    ([0, 5], 0),  # round 1's first decision: the public card is below it
    ([0, 5, 1, 1, 3], 1),  # round 2, after check-check, public card 3
])
def test_counterfactual_values_of_a_random_profile_match_a_history_walk(
    actions, seed):
  """Root counterfactual values under random ranges and a random profile
  equal v_p(I) = sum over the root histories h in I of chance(h) *
  r_-p(I_-p(h)) * E[u_p | h], walked history by history with pyspiel."""
  game = pyspiel.load_game("leduc_poker")
  observer = PublicStateObserver(game)
  state = game.new_initial_state()
  for a in actions:
    state.apply_action(a)
  root, _ = observer.public_state_of(state)
  rng = np.random.default_rng(seed)
  ranges = [rng.uniform(0.05, 1.0, root.num_infostates(p)) for p in range(2)]
  table = _random_policy(root.histories, rng)
  solver = PublicTreeCFR(root=root, ranges=ranges)
  policies = []
  for p in range(2):
    arrays = solver.tree.players[p]
    policy = np.zeros(arrays.legal_mask.shape)
    for row, infostate in enumerate(arrays.row_infostate_string):
      for k in np.nonzero(arrays.legal_mask[row])[0]:
        policy[row, k] = table[infostate][int(arrays.row_actions[row, k])]
    policies.append(policy)
  ours = solver.counterfactual_values(policies)
  expected = [np.zeros(root.num_infostates(p)) for p in range(2)]
  for h in root.histories:
    weight = _chance_probability(game, h.history()) * _expected_u0(h, table)
    index = [root.infostates(p).index(h.information_state_string(p))
             for p in range(2)]
    expected[0][index[0]] += weight * ranges[1][index[1]]
    expected[1][index[1]] -= weight * ranges[0][index[0]]
  for p in range(2):
    np.testing.assert_allclose(ours[p], expected[p], atol=1e-9, rtol=0)


def test_subgame_solve_converges():
  # Longer solves of the same public belief state agree on its value.
  game = pyspiel.load_game("leduc_poker")
  observer = PublicStateObserver(game)
  root = _leduc_round_two_public_state(observer)
  ranges = [np.ones(root.num_infostates(p)) for p in range(2)]
  short = PublicTreeCFR(root=root, ranges=ranges)
  short.run(200)
  long = PublicTreeCFR(root=root, ranges=ranges)
  long.run(2000)
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
