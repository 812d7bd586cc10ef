"""Joint policy search judged by OpenSpiel's policy values and by brute force:
Theorems 1 and 2 of the paper and its tabular games."""

import itertools

import numpy as np
from open_spiel.python.algorithms import expected_game_score
import pyspiel
import pytest

import open_spiel_sog  # registers the paper's games  # pylint: disable=unused-import
from open_spiel_sog.algorithms import jps

GAMES = ("tiny_hanabi", "jps_comm(length=3)", "simple_bidding(n=4)")


@pytest.fixture(scope="module")
def arrays():
  return {name: jps.GameArrays(pyspiel.load_game(name)) for name in
          GAMES + ("mini_bridge(n=3)",)}


def _random_policy(a, rng, zeros=False):
  probs = np.where(a.legal, rng.random(a.legal.shape), 0.0)
  if zeros:  # some pure rows (a purified policy's zeros)
    pure = rng.random(a.num_infosets) < 0.5
    probs[pure] = jps.purify(a, probs)[pure]
  return probs / probs.sum(axis=1, keepdims=True)


def _openspiel_value(a, probs):
  policy = a.tabular_policy(probs)
  return expected_game_score.policy_value(a.game.new_initial_state(),
                                          [policy, policy])[0]


@pytest.mark.parametrize("name", GAMES)
def test_density_sum_is_the_value_difference(arrays, name):
  """Theorem 1 on random pairs of mixed policies (changed on a random
  subset of infosets, some rows pure)."""
  a = arrays[name]
  rng = np.random.default_rng(0)
  for trial in range(10):
    old = _random_policy(a, rng, zeros=trial % 2 == 1)
    new = old.copy()
    changed = rng.random(a.num_infosets) < 0.3
    new[changed] = _random_policy(a, rng, zeros=trial % 3 == 0)[changed]
    direct = _openspiel_value(a, new) - _openspiel_value(a, old)
    assert jps.policy_change(a, old, new) == pytest.approx(direct, abs=1e-9)


@pytest.mark.parametrize("name", GAMES)
def test_search_densities_match_the_changed_policy(arrays, name):
  """The search's chain scores (back-traced reach, one-hot changes on a
  policy with zeros) are the value differences of the changed policies."""
  a = arrays[name]
  rng = np.random.default_rng(1)
  search = jps.JointPolicySearch(a)
  for _ in range(10):
    probs = _random_policy(a, rng, zeros=True)
    search._prepare(probs)  # pylint: disable=protected-access
    first = int(rng.integers(a.num_infosets))
    chain = [(first, int(rng.integers(a.iset_num_actions[first])))]
    nxt = a.succ(*chain[0])
    if len(nxt):
      second = int(rng.choice(nxt))
      chain.append((second, int(rng.integers(a.iset_num_actions[second]))))
    total = 0.0
    for k, (iset, sl) in enumerate(chain):
      total += search.densities(np.asarray([iset]), chain[:k])[0, sl]
    new = probs.copy()
    for iset, sl in chain:
      new[iset] = 0.0
      new[iset, sl] = 1.0
    assert total == pytest.approx(a.value(new) - a.value(probs), abs=1e-9)


@pytest.mark.parametrize("name", GAMES + ("mini_bridge(n=3)",))
def test_no_change_lowers_the_value(arrays, name):
  """Theorem 2, from CFR starts (purified, and CFR's last iterate mixed as
  JPS takes it) and from uniform; OpenSpiel agrees on the final value."""
  a = arrays[name]
  last = jps.cfr(a, 200, seed=3, average=False)
  assert np.allclose(last.sum(axis=1), 1.0) and not np.any(last[~a.legal])
  for start in (jps.purify(a, jps.cfr(a, 200, seed=3)), last, None):
    result = jps.JointPolicySearch(a, jps.JPSConfig(depth=3)).run(start)
    assert all(b > x for x, b in zip(result.values, result.values[1:]))
    assert _openspiel_value(a, result.probs) == pytest.approx(
        result.values[-1], abs=1e-9)


def test_tiny_hanabi(arrays):
  a = arrays["tiny_hanabi"]
  # The optimum by brute force over every pure joint policy.
  best = 0.0
  for choice in itertools.product(*(range(n) for n in a.iset_num_actions)):
    probs = np.zeros((a.num_infosets, a.max_actions))
    probs[np.arange(a.num_infosets), choice] = 1.0
    best = max(best, a.value(probs))
  assert best == pytest.approx(10.0)
  finals = [jps.JointPolicySearch(a).run(
      jps.cfr(a, 1000, seed, average=False)).values[-1] for seed in range(20)]
  assert np.mean(finals) >= 9.2  # the paper: 9.50 over 1,000 seeds
  assert max(finals) == pytest.approx(best)


def test_comm_reaches_one_from_every_start(arrays):
  a = arrays["jps_comm(length=3)"]
  starts = [None] + [jps.cfr(a, 1000, seed, average=False)
                     for seed in range(5)]
  for start in starts:
    assert jps.JointPolicySearch(a).run(start).values[-1] == pytest.approx(1)


def test_simple_bidding_reaches_the_best_known(arrays):
  a = arrays["simple_bidding(n=4)"]
  finals = [jps.JointPolicySearch(a).run(
      jps.cfr(a, 1000, seed, average=False)).values[-1] for seed in range(10)]
  assert max(finals) == pytest.approx(2.25)


def test_sampled_variant_keeps_its_best_policy(arrays):
  a = arrays["simple_bidding(n=4)"]
  start = jps.purify(a, jps.cfr(a, 200, seed=0))
  result = jps.JointPolicySearch(
      a, jps.JPSConfig(samples=2, max_iterations=30, seed=0)).run(start)
  assert a.value(result.probs) == pytest.approx(max(result.values))
  assert a.value(result.probs) >= result.values[0]


def test_bad_input_is_named():
  with pytest.raises(ValueError, match="IDENTICAL"):
    jps.GameArrays(pyspiel.load_game("kuhn_poker"))
  with pytest.raises(ValueError, match="3 players"):
    jps.GameArrays(pyspiel.load_game("kuhn_poker(players=3)"))
  a = jps.GameArrays(pyspiel.load_game("tiny_hanabi"))
  with pytest.raises(ValueError, match="depth must be >= 0"):
    jps.JointPolicySearch(a, jps.JPSConfig(depth=-1))
  with pytest.raises(ValueError, match="policy arrays have shape"):
    jps.JointPolicySearch(a).run(np.zeros((3, 3)))
  with pytest.raises(ValueError, match="explore must be >= 0"):
    jps.cfr(a, 10, seed=0, explore=-0.1)


def test_common_payoff_public_trees_only_where_asked():
  from open_spiel_sog.algorithms.cfr import PublicTreeCFR
  from open_spiel_sog.public_state import PublicStateObserver
  from open_spiel_sog.public_state import ObserverConfig
  game = pyspiel.load_game("jps_comm(length=3)")
  with pytest.raises(ValueError, match="ObserverConfig.common_payoff=True"):
    PublicStateObserver(game)
  observer = PublicStateObserver(game, ObserverConfig(common_payoff=True))
  tree = observer.full_tree()
  # The deal, player 0's first signal, 2 + 4 + 8 states after its signals
  # and 8 x 8 ends (signals, guess).
  assert len(tree) == 80
  assert sum(len(ps.histories) for ps in tree.public_states) == 633
  with pytest.raises(ValueError, match="common-payoff"):
    PublicTreeCFR(root=observer.root())
