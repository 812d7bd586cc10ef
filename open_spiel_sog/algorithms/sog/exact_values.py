"""The exact value function: each query's subgame solved to the end
(DESIGN.md section 7; the test oracle of small games)."""

from __future__ import annotations

import collections
from typing import Sequence
import warnings

import numpy as np
import pyspiel

from open_spiel_sog.algorithms.cfr import CFRConfig
from open_spiel_sog.algorithms.sog import leaf_solver
from open_spiel_sog.algorithms.sog.value_functions import Evaluation
from open_spiel_sog.algorithms.sog.value_functions import history_values_to_counterfactual
from open_spiel_sog.algorithms.sog.value_functions import Query
from open_spiel_sog.algorithms.sog.value_functions import ValueFunction
from open_spiel_sog.public_state import PublicState
from open_spiel_sog.public_state import PublicTree


class ExactValueFunction(ValueFunction):
  """Solves each query's subgame to the end (small games; the test oracle).

  Imperfect information: predictive CFR+ (`CFRConfig.predictive`; `config`
  picks another variant) from the query's ranges until the subgame's own
  exploitability under those ranges (NashConv / 2 of the average profile,
  conditional on reaching the public state) is at most `tolerance` times the
  game's utility range, checked after 0, 1, 3, 7, 15 and then every 16
  iterations. The values
  returned are the counterfactual values of that profile (the average policy,
  completed by best responses where a player's own range is zero), so they
  are the values of one profile whose exploitability is within the
  tolerance. A query that reaches `max_iterations` first returns its profile
  as it stands and is counted in `stats["capped"]` (with a warning the first
  time). The queries of one `evaluate` call (a search's leaves) are solved
  side by side as one forest (`leaf_solver`); each public state keeps its
  compiled subtree and, with `warm_start`, its regrets and average for the
  next query of the same leaf (GT-CFR queries every leaf at each update).
  Perfect information: expectimax values per history, exact for any ranges.
  """

  name = "exact"

  def __init__(self, game: pyspiel.Game, *, tolerance: float = 1e-3,
               max_iterations: int = 10_000, warm_start: bool = True,
               config: CFRConfig | None = None, max_cached: int = 4096):
    if not tolerance > 0 or not np.isfinite(tolerance):
      raise ValueError("exact value function: tolerance must be a positive "
                       f"fraction of the utility range, got {tolerance}")
    if max_iterations < 1:
      raise ValueError("exact value function: max_iterations must be >= 1, "
                       f"got {max_iterations}")
    self.game = game
    self.tolerance = tolerance
    self.utility_range = float(game.max_utility() - game.min_utility()) or 1.0
    self.max_iterations = max_iterations
    self.warm_start = warm_start
    self.config = config or CFRConfig(predictive=True)
    self.max_cached = max_cached
    self.num_actions = game.num_distinct_actions()
    self.perfect_information = (
        game.get_type().information ==
        pyspiel.GameType.Information.PERFECT_INFORMATION)
    # Keyed by (observer, public state id): ids are per observer.
    self._trees: dict[tuple, PublicTree] = {}
    self._states: dict[tuple, leaf_solver.LeafState] = {}
    self._forests: collections.OrderedDict[tuple, leaf_solver.Forest] = (
        collections.OrderedDict())
    self._memo: dict[str, float] = {}
    # Queries solved, CFR+ iterations run over them, queries that hit
    # max_iterations.
    self.stats = {"queries": 0, "iterations": 0, "capped": 0}

  @property
  def absolute_tolerance(self) -> float:
    """The exploitability a query's profile must reach, in utility units."""
    return self.tolerance * self.utility_range

  def reset(self) -> None:
    """Forgets the warm starts (the compiled subtrees are kept)."""
    self._states.clear()

  # Perfect information: expectimax.
  def _history_value(self, state: pyspiel.State) -> float:
    key = state.history_str()
    value = self._memo.get(key)
    if value is not None:
      return value
    if state.is_terminal():
      value = state.returns()[0]
    elif state.is_chance_node():
      value = sum(p * self._history_value(state.child(a))
                  for a, p in state.chance_outcomes())
    else:
      child_values = [self._history_value(state.child(a))
                      for a in state.legal_actions()]
      value = max(child_values) if state.current_player() == 0 else min(
          child_values)
    self._memo[key] = value
    return value

  def _evaluate_perfect_information(self, query: Query) -> Evaluation:
    ps = query.public_state
    u0 = np.asarray([self._history_value(h) for h in ps.histories])
    values = history_values_to_counterfactual(ps, query.ranges, u0)
    policy = None
    if ps.is_player_node():
      q = ps.current_player()
      policy = np.zeros((ps.num_infostates(q), self.num_actions))
      for j in range(ps.num_infostates(q)):
        h = ps.histories[int(np.nonzero(ps.history_infostate[q] == j)[0][0])]
        legal = ps.legal_actions(j)
        child = np.asarray([self._history_value(h.child(a)) for a in legal])
        best = child.max() if q == 0 else child.min()
        hits = np.isclose(child, best)
        policy[j, np.asarray(legal)[hits]] = 1.0 / hits.sum()
    return Evaluation(values=values, policy=policy)

  # Imperfect information: the leaf solver.
  def _forest(self, public_states: Sequence[PublicState]) -> leaf_solver.Forest:
    key = tuple(_key(ps) for ps in public_states)
    forest = self._forests.get(key)
    if forest is not None:
      self._forests.move_to_end(key)
      return forest
    if len(self._trees) + len(public_states) > self.max_cached:
      self._trees.clear()
      self._states.clear()
      self._forests.clear()
    trees = []
    for ps in public_states:
      tree = self._trees.get(_key(ps))
      if tree is None:
        tree = self._trees[_key(ps)] = PublicTree.from_subtree(ps)
      trees.append(tree)
    forest = leaf_solver.Forest(public_states, trees)
    self._forests[key] = forest
    while len(self._forests) > 8:
      self._forests.popitem(last=False)
    return forest

  def solve(self, queries: Sequence[Query], *, profiles: bool = False
            ) -> list[leaf_solver.LeafSolution]:
    """Each query's solution, within the tolerance (or at the iteration cap),
    in the query's units; with `profiles`, each subgame's whole profile too.
    Imperfect-information games only."""
    if not queries:
      return []
    public_states = [q.public_state for q in queries]
    forest = self._forest(public_states)
    states = []
    for ps in public_states:
      state = self._states.get(_key(ps)) if self.warm_start else None
      if state is None:
        state = leaf_solver.LeafState(tree=forest.trees[len(states)])
        if self.warm_start:
          self._states[_key(ps)] = state
      states.append(state)
    solutions = leaf_solver.solve(
        forest, states, [q.ranges for q in queries],
        tolerance=self.absolute_tolerance,
        max_iterations=self.max_iterations, config=self.config,
        profiles=profiles)
    capped = [s for s in solutions if s.capped]
    if capped and not self.stats["capped"]:
      warnings.warn(
          f"exact value function: {len(capped)} quer"
          f"{'y' if len(capped) == 1 else 'ies'} reached max_iterations="
          f"{self.max_iterations} at exploitability up to "
          f"{max(s.exploitability for s in capped):.3g} (tolerance "
          f"{self.absolute_tolerance:.3g}); their values are used as they "
          "stand. stats['capped'] counts such queries.", RuntimeWarning,
          stacklevel=2)
    self.stats["queries"] += len(solutions)
    self.stats["iterations"] += sum(s.iterations for s in solutions)
    self.stats["capped"] += len(capped)
    return solutions

  def _evaluate_imperfect_information(self, queries: Sequence[Query]
                                      ) -> list[Evaluation]:
    out = []
    for query, solution in zip(queries, self.solve(queries)):
      policy = None
      if solution.root_policy is not None:
        valid = solution.root_actions >= 0
        rows = np.nonzero(valid)[0]
        policy = np.zeros((len(solution.root_policy), self.num_actions))
        policy[rows, solution.root_actions[valid]] = (
            solution.root_policy[valid])
      out.append(Evaluation(values=solution.values, policy=policy))
    return out

  def evaluate(self, queries: Sequence[Query]) -> list[Evaluation]:
    if self.perfect_information:
      return [self._evaluate_perfect_information(q) for q in queries]
    return self._evaluate_imperfect_information(queries)


def _key(ps: PublicState) -> tuple:
  return (ps.observer, ps.id)
