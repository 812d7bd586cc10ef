"""Depth-limited solving judged by OpenSpiel's exploitability and best
responses: the paper's section 2 example, Proposition 1 and Leduc."""

import numpy as np
import pyspiel
import pytest

from open_spiel_sog.algorithms import dls as dl
from open_spiel_sog.algorithms.cfr import reach_pass
from open_spiel_sog.algorithms.dls import policies as dl_policies
from open_spiel_sog.games import efg


@pytest.fixture(scope="module")
def leduc():
  game = pyspiel.load_game("leduc_poker")
  return game, {n: dl.compute_blueprint(game, n) for n in (100, 1000)}


def _probs(table, key):
  return np.asarray([p for _, p in table[key]])


def _nash_conv(game, blueprint, *tables):
  table = dl.policy_dict(blueprint, game)
  for t in tables:
    table.update(t)
  return 2 * dl.exploitability(game, table)


def test_rps_plus_needs_the_opponents_choice():
  game = efg.load_game("rps_plus")
  blueprint = dl.compute_blueprint(game, 1000)
  config = dl.DLSConfig(frontier="depth", depth=1, iterations=2000)
  # With player 2's three pure strategies below the depth limit: the
  # equilibrium (0.4, 0.4, 0.2).
  solver = dl.DepthLimitedSolver(game, 0, blueprint, config)
  for strategy in dl.pure_strategies(game, solver):
    solver.add_strategy(strategy)
  assert solver.k == 3
  solution = solver.solve()
  (key,) = solution.policy_dict()
  np.testing.assert_allclose(_probs(solution.policy_dict(), key),
                             [0.4, 0.4, 0.2], atol=0.01)
  assert _nash_conv(game, blueprint, solution.policy_dict()) < 0.01
  # With the blueprint's (equilibrium) values only, every leaf looks alike
  # to within the blueprint's error and the solve goes pure: exploitable.
  unsafe = dl.DepthLimitedSolver(game, 0, blueprint, config).solve()
  assert max(_probs(unsafe.policy_dict(), key)) > 0.99
  assert _nash_conv(game, blueprint, unsafe.policy_dict()) > 0.5


@pytest.mark.parametrize("seat,depth", [(0, 3), (1, 4)])
def test_every_pure_continuation_equals_the_frozen_blueprint_solve(seat,
                                                                   depth):
  """Proposition 1: with all of the opponent's pure continuation strategies,
  the depth-limited trunk strategy is the full game's solution with the
  searcher held to the blueprint below the frontier."""
  game = pyspiel.load_game("kuhn_poker")
  blueprint = dl.compute_blueprint(game, 30)  # far from converged
  config = dl.DLSConfig(frontier="depth", depth=depth, iterations=3000)
  solver = dl.DepthLimitedSolver(game, seat, blueprint, config)
  for strategy in dl.pure_strategies(game, solver):
    solver.add_strategy(strategy)
  solution = solver.solve()
  frozen = dl.frozen_blueprint_solve(game, seat, blueprint, config, 3000)
  trunk = solution.policy_dict()
  assert sorted(trunk) == sorted(frozen)
  for key in trunk:
    np.testing.assert_allclose(_probs(trunk, key), _probs(frozen, key),
                               atol=1e-6)

  def best_response_value(table):
    composite = dl.policy_dict(blueprint, game)
    composite.update(table)
    return pyspiel.TabularBestResponse(
        game, 1 - seat, composite).value_from_state(game.new_initial_state())

  # OpenSpiel's best response to either composite gets the same, which is
  # what the augmented game promised the searcher, and less than against
  # the blueprint itself.
  value = best_response_value(trunk)
  assert value == pytest.approx(best_response_value(frozen), abs=1e-9)
  assert -value == pytest.approx(solution.value, abs=1e-3)
  assert value < best_response_value({}) - 1e-3


def test_leduc_converged_blueprint(leduc):
  game, blueprints = leduc
  blueprint = blueprints[1000]
  run = lambda **kw: dl.depth_limited_exploitability(
      game, dl.DLSConfig(frontier="round", **kw),
      blueprint=blueprint)["exploitability"]
  assert run(strategies="bias", k=1) >= 0.3  # unsound
  assert run(strategies="self_generative", k=8) <= 0.001
  assert run(strategies="bias", k=4) <= 0.001


def test_leduc_self_generative_beats_its_blueprint(leduc):
  game, blueprints = leduc
  result = dl.depth_limited_exploitability(
      game, dl.DLSConfig(frontier="round", strategies="self_generative", k=8),
      blueprint=blueprints[100])
  assert result["blueprint_exploitability"] == pytest.approx(0.0134,
                                                             abs=5e-4)
  assert result["exploitability"] <= 0.0125
  assert result["exploitability"] < result["blueprint_exploitability"]
  assert result["frontier_public_states"] == [5, 5]


def test_leaf_values_match_openspiel_expected_values():
  """W_F summed against the blueprint's ranges is the game value when both
  play the blueprint (k=1, frontier at Leduc's public card)."""
  from open_spiel.python.algorithms import expected_game_score
  game = pyspiel.load_game("leduc_poker")
  blueprint = dl.compute_blueprint(game, 50)
  solver = dl.DepthLimitedSolver(game, 0, blueprint,
                                 dl.DLSConfig(frontier="round"))
  solver.add_strategy(blueprint)
  tree = solver.tree
  reach = [reach_pass(tree.players[p],
                      dl_policies._row_policy(tree, p,
                                              blueprint.action_probabilities),
                      np.ones(tree.players[p].num_root),
                      np.zeros(tree.players[p].num_sequences))
           for p in range(2)]
  total = 0.0
  t = tree.terminals
  total += float(np.sum(t.weight * reach[0][t.seq0] * reach[1][t.seq1]))
  for ps_id, w in solver.leaf_values().items():
    (ps,) = [f for f in tree.frontier if f.id == ps_id]
    r0 = reach[0][tree.entry_seqs(0, ps)]
    r1 = reach[1][tree.entry_seqs(1, ps)]
    total += float(r0 @ w[:, :, 0] @ r1)
  expected = expected_game_score.policy_value(game.new_initial_state(),
                                              [blueprint, blueprint])[0]
  assert total == pytest.approx(expected, abs=1e-9)


def test_bad_input_is_named():
  game = pyspiel.load_game("kuhn_poker")
  blueprint = dl.compute_blueprint(game, 10)
  with pytest.raises(ValueError, match="unknown frontier 'rounds'"):
    dl.DLSConfig(frontier="rounds").validate()
  with pytest.raises(ValueError, match="unknown strategies"):
    dl.DepthLimitedSolver(game, 0, blueprint,
                          dl.DLSConfig(strategies="selfgen"))
  with pytest.raises(ValueError, match="k must be >= 1"):
    dl.DLSConfig(k=0).validate()
  with pytest.raises(ValueError, match="searcher must be 0 or 1"):
    dl.DepthLimitedSolver(game, 2, blueprint)
  with pytest.raises(ValueError, match="simultaneous moves"):
    dl.check_game(pyspiel.load_game("goofspiel"))
  with pytest.raises(ValueError, match="gadget values have shape"):
    dl.DepthLimitedSolver(game, 0, blueprint, gadget_values=np.zeros(7))
