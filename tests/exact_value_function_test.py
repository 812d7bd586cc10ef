"""`value_function=exact` is converged: every query's values are those of one
profile whose exploitability in the leaf subgame, under the queried ranges,
is within the tolerance. The judge is written here from pyspiel states alone
(history by history, OpenSpiel's best-response recursion), independent of the
public tree and PublicTreeCFR."""

import collections

import numpy as np
import pyspiel
import pytest

from open_spiel_sog.algorithms.sog import exact_values
from open_spiel_sog.algorithms.sog import value_functions
from open_spiel_sog.public_state import PublicStateObserver


def _judge(ps, ranges, profile):
  """(values (v0, v1), exploitability) of `profile` in the subgame under
  public state `ps` with root ranges `ranges`.

  values: each player's counterfactual values at its root infostates;
  exploitability: NashConv / 2 divided by the root's reach mass
  (sum over histories of chance reach * r0 * r1), in utility units.
  """
  histories = list(ps.histories)
  chance = np.asarray(ps.chance_reach)
  infostate = [np.asarray(ps.history_infostate[p]) for p in range(2)]

  def policy(state):
    return dict(profile[state.information_state_string()])

  memo = {}

  def value(state):  # player 0's expected utility under the profile
    key = state.history_str()
    if key not in memo:
      if state.is_terminal():
        memo[key] = state.returns()[0]
      elif state.is_chance_node():
        memo[key] = sum(p * value(state.child(a))
                        for a, p in state.chance_outcomes())
      else:
        memo[key] = sum(p * value(state.child(a))
                        for a, p in policy(state).items() if p > 0)
    return memo[key]

  u0 = np.asarray([value(h) for h in histories])
  values = []
  for p in range(2):
    sign = 1.0 if p == 0 else -1.0
    weight = chance * ranges[1 - p][infostate[1 - p]] * sign * u0
    values.append(np.bincount(infostate[p], weights=weight,
                              minlength=ps.num_infostates(p)))

  def best_response_value(p):
    # Every infostate of p below the root, with its histories and their
    # counterfactual weight (chance and the opponent's reach, p's excluded).
    infosets = collections.defaultdict(list)

    def gather(state, weight):
      if state.is_terminal() or weight == 0:
        return
      if state.is_chance_node():
        for a, prob in state.chance_outcomes():
          gather(state.child(a), weight * prob)
      elif state.current_player() == p:
        infosets[state.information_state_string()].append((state, weight))
        for a in state.legal_actions():
          gather(state.child(a), weight)
      else:
        for a, prob in policy(state).items():
          gather(state.child(a), weight * prob)

    for i, h in enumerate(histories):
      gather(h, chance[i] * ranges[1 - p][infostate[1 - p][i]])
    best = {}
    br_memo = {}

    def br_value(state):  # p's utility, p best-responding
      key = state.history_str()
      if key in br_memo:
        return br_memo[key]
      if state.is_terminal():
        v = state.returns()[p]
      elif state.is_chance_node():
        v = sum(prob * br_value(state.child(a))
                for a, prob in state.chance_outcomes())
      elif state.current_player() == p:
        v = br_value(state.child(best_action(
            state.information_state_string())))
      else:
        v = sum(prob * br_value(state.child(a))
                for a, prob in policy(state).items() if prob > 0)
      br_memo[key] = v
      return v

    def best_action(info):
      if info not in best:
        states = infosets[info]
        actions = states[0][0].legal_actions()
        q = [sum(w * br_value(s.child(a)) for s, w in states) for a in actions]
        best[info] = actions[int(np.argmax(q))]
      return best[info]

    return sum(chance[i] * ranges[0][infostate[0][i]] *
               ranges[1][infostate[1][i]] * br_value(h)
               for i, h in enumerate(histories))

  mass = float(np.sum(chance * ranges[0][infostate[0]] *
                      ranges[1][infostate[1]]))
  nash_conv = best_response_value(0) + best_response_value(1)
  return (values[0], values[1]), nash_conv / 2 / mass


def _round_two_leaves(game):
  """Leduc public states in round 2: the public card's deal and decisions."""
  observer = PublicStateObserver(game)
  out = []
  for ps in observer.walk():
    if ps.is_terminal():
      continue
    round_two = ps.is_chance_node() and ps.depth > 1 or (
        ps.is_player_node() and "Round: 2" in ps.histories[0].to_string()
        and ps.depth <= 7)
    if round_two:
      out.append(ps)
  return out


@pytest.fixture(scope="module")
def leduc():
  return pyspiel.load_game("leduc_poker")


def test_exact_values_are_a_profile_within_the_tolerance(leduc):
  """Random ranges (some infostates unreached) on Leduc's round-2 leaves,
  queried repeatedly with changing ranges as a search does (warm starts):
  the values are the counterfactual values of the returned profile, and that
  profile's exploitability in the leaf subgame is within the tolerance."""
  value_fn = exact_values.ExactValueFunction(leduc)
  tolerance = value_fn.absolute_tolerance
  assert tolerance == pytest.approx(1e-3 * 26)  # Leduc's utilities: +-13
  rng = np.random.default_rng(7)
  leaves = _round_two_leaves(leduc)
  assert any(ps.is_chance_node() for ps in leaves)
  assert any(ps.is_player_node() for ps in leaves)
  picked = [leaves[i] for i in rng.choice(len(leaves), size=8, replace=False)]
  judged = 0
  for ps in picked:
    base = [rng.uniform(0.05, 1.0, ps.num_infostates(p)) for p in range(2)]
    for p in range(2):
      base[p][rng.integers(ps.num_infostates(p))] = 0.0
    for _ in range(3):
      ranges = [b * np.exp(rng.normal(0.0, 0.3, len(b))) for b in base]
      query = value_functions.Query(ps, (ranges[0], ranges[1]))
      (solution,) = value_fn.solve([query], profiles=True)
      values, exploitability = _judge(ps, ranges, solution.profile)
      for p in range(2):
        np.testing.assert_allclose(solution.values[p], values[p],
                                   rtol=1e-9, atol=1e-12)
      # evaluate() returns the same values: the kept profile passes again.
      (evaluation,) = value_fn.evaluate([query])
      for p in range(2):
        np.testing.assert_array_equal(evaluation.values[p], solution.values[p])
      assert exploitability <= tolerance + 1e-12, (ps.describe(),
                                                   exploitability)
      assert solution.exploitability == pytest.approx(exploitability,
                                                      rel=1e-6, abs=1e-12)
      judged += 1
  assert judged == 24
  assert value_fn.stats["capped"] == 0
  assert value_fn.stats["iterations"] > 0


def test_a_batch_of_leaves_is_solved_as_each_alone(leduc):
  """A search's leaves are solved side by side in one forest: each subgame
  is frozen once within the tolerance, so each profile is the one solving it
  alone gives, and each is judged on its own."""
  rng = np.random.default_rng(3)
  leaves = _round_two_leaves(leduc)
  picked = [leaves[i] for i in rng.choice(len(leaves), size=6, replace=False)]
  queries = [value_functions.Query(
      ps, tuple(rng.uniform(0.0, 1.0, ps.num_infostates(p)) for p in range(2)))
             for ps in picked]
  batch = exact_values.ExactValueFunction(leduc).solve(queries,
                                                       profiles=True)
  for query, solution in zip(queries, batch):
    (alone,) = exact_values.ExactValueFunction(leduc).solve(
        [query], profiles=True)
    assert solution.iterations == alone.iterations
    for p in range(2):
      np.testing.assert_allclose(solution.values[p], alone.values[p],
                                 rtol=1e-12, atol=1e-15)
    values, exploitability = _judge(query.public_state, query.ranges,
                                    solution.profile)
    assert exploitability <= 1e-3 * 26 + 1e-12
    for p in range(2):
      np.testing.assert_allclose(solution.values[p], values[p], rtol=1e-9,
                                 atol=1e-12)


def test_a_tighter_tolerance_gives_a_less_exploitable_profile(leduc):
  ps = _round_two_leaves(leduc)[0]
  ranges = [np.linspace(0.2, 1.0, ps.num_infostates(p)) for p in range(2)]
  query = value_functions.Query(ps, (ranges[0], ranges[1]))
  results = []
  for tolerance in (1e-2, 1e-3, 1e-4):
    value_fn = exact_values.ExactValueFunction(leduc, tolerance=tolerance)
    (solution,) = value_fn.solve([query], profiles=True)
    _, exploitability = _judge(ps, ranges, solution.profile)
    assert exploitability <= tolerance * 26
    results.append((value_fn.stats["iterations"], exploitability))
  iterations = [r[0] for r in results]
  assert iterations[0] < iterations[1] < iterations[2], results


def test_the_iteration_cap_is_reported(leduc):
  ps = _round_two_leaves(leduc)[0]
  ranges = [np.ones(ps.num_infostates(p)) for p in range(2)]
  value_fn = exact_values.ExactValueFunction(leduc, tolerance=1e-9,
                                             max_iterations=5)
  with pytest.warns(RuntimeWarning, match="max_iterations=5"):
    value_fn.evaluate([value_functions.Query(ps, (ranges[0], ranges[1]))])
  assert value_fn.stats == {"queries": 1, "iterations": 5, "capped": 1}


def test_kuhn_values_match_openspiel_game_value():
  """At the root of Kuhn with uniform ranges, the range-weighted values are
  the game value -1/18 (OpenSpiel's known answer) within the tolerance."""
  game = pyspiel.load_game("kuhn_poker")
  root = PublicStateObserver(game).root()
  value_fn = exact_values.ExactValueFunction(game, tolerance=1e-5)
  ranges = (np.ones(root.num_infostates(0)), np.ones(root.num_infostates(1)))
  (evaluation,) = value_fn.evaluate([value_functions.Query(root, ranges)])
  # The root is the deal: one infostate per player, chance reach 1.
  assert float(evaluation.values[0] @ ranges[0]) == pytest.approx(
      -1 / 18, abs=2 * 1e-5 * 4)


@pytest.mark.parametrize("bad", [{"tolerance": 0.0}, {"tolerance": -1.0},
                                 {"max_iterations": 0}])
def test_bad_settings_are_refused(leduc, bad):
  with pytest.raises(ValueError, match="exact value function"):
    exact_values.ExactValueFunction(leduc, **bad)
