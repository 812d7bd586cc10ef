"""How far a value function's values are from solved ones, at fixed beliefs.

The guard of a trained network: at a fixed set of public belief states (PBSs)
of a game, compare a value function's counterfactual values with the exact
value function's (leaf subgames solved to a tight tolerance) and report the
range-weighted error

    error(PBS) = sum_p sum_I r_p(I) * |v_p(I) - v*_p(I)| / (2 Z),

Z = sum over the PBS's histories of chance reach * r0 * r1: the absolute
error of a player's expected utility given the PBS, averaged over the
infostates by their probability and over the two players, in the game's
utility units whatever the scale of the ranges.

The beliefs (`reference_queries`) are what a search sees: the public states
of the game (a seeded sample of them) with each player's range the reach of
its infostates under a CFR+ solution of the whole game, mixed with a little
of the uniform range (so no infostate is out of the range) and multiplied by
seeded log-normal noise (so the beliefs are off the solution's path as a
search's are).
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np
import pyspiel

from open_spiel_sog.algorithms.cfr import PublicTreeCFR
from open_spiel_sog.algorithms.sog import ExactValueFunction
from open_spiel_sog.algorithms.sog import Query
from open_spiel_sog.algorithms.sog import ValueFunction
from open_spiel_sog.public_state import PublicStateObserver


@dataclasses.dataclass(frozen=True)
class BeliefConfig:
  """How `reference_queries` picks the beliefs.

  Attributes:
    count: public states sampled (all non-terminal ones if fewer).
    seed: seed of the sample and of the noise.
    cfr_iterations: CFR+ iterations of the whole-game solution whose reach
      gives the ranges.
    uniform_mix: weight of the uniform range mixed into each range.
    noise: standard deviation of the log-normal factor of each range entry.
  """
  count: int = 64
  seed: int = 0
  cfr_iterations: int = 1000
  uniform_mix: float = 0.1
  noise: float = 0.5


def reference_queries(game: pyspiel.Game | str,
                      config: BeliefConfig = BeliefConfig(), *,
                      observer: PublicStateObserver | None = None
                      ) -> list[Query]:
  """A fixed, seeded set of PBSs of `game` (see module docstring)."""
  if isinstance(game, str):
    game = pyspiel.load_game(game)
  if config.count < 1:
    raise ValueError(f"count must be >= 1, got {config.count}")
  observer = observer or PublicStateObserver(game)
  # One observer for the solve and the walk: its public states are built
  # once (liars_dice with 2 dice of 3 faces: 24,585 of them, 10 s each time).
  solver = PublicTreeCFR(root=observer.root())
  solver.run(config.cfr_iterations)
  solution = solver.average_policy()
  # The public states a search can value: non-terminal, at or below the
  # first decision (a search never has the deal before it as a leaf).
  public_states = [ps for ps in observer.walk()
                   if not ps.is_terminal() and ps.after_a_decision()]
  rng = np.random.default_rng(config.seed)
  if len(public_states) > config.count:
    picked = np.sort(rng.choice(len(public_states), size=config.count,
                                replace=False))
    public_states = [public_states[i] for i in picked]
  queries = []
  for ps in public_states:
    ranges = []
    for p in range(2):
      reach = np.zeros(ps.num_infostates(p))
      for i, h in enumerate(ps.histories):
        reach[ps.history_infostate[p][i]] = _own_reach(h, p, solution)
      mixed = ((1 - config.uniform_mix) * reach + config.uniform_mix)
      ranges.append(mixed * np.exp(rng.normal(0.0, config.noise,
                                              len(mixed))))
    queries.append(Query(ps, (ranges[0], ranges[1])))
  return queries


def _own_reach(state: pyspiel.State, player: int, policy) -> float:
  """The product of `player`'s action probabilities along `state`'s path."""
  game = state.get_game()
  replay = game.new_initial_state()
  reach = 1.0
  for action in state.history():
    if replay.current_player() == player:
      reach *= dict(policy.action_probabilities(replay)).get(action, 0.0)
    replay.apply_action(action)
  return reach


def range_weighted_error(query: Query, values: Sequence[np.ndarray],
                         reference: Sequence[np.ndarray]) -> float:
  """error(PBS) of the module docstring for one query."""
  ps = query.public_state
  r0, r1 = (np.asarray(r, dtype=np.float64) for r in query.ranges)
  inf0, inf1 = ps.history_infostate
  mass = float(np.sum(ps.chance_reach * r0[inf0] * r1[inf1]))
  if mass <= 0:
    return 0.0
  total = sum(float(np.asarray(r, dtype=np.float64) @
                    np.abs(np.asarray(v) - np.asarray(ref)))
              for r, v, ref in zip((r0, r1), values, reference))
  return total / 2 / mass


def value_error(value_fn: ValueFunction, queries: Sequence[Query], *,
                reference: Sequence[Sequence[np.ndarray]] | None = None,
                tolerance: float = 1e-5) -> dict:
  """The range-weighted error of `value_fn` at `queries`.

  Args:
    value_fn: the value function to judge (e.g. a CVPN's).
    queries: the PBSs (`reference_queries`).
    reference: the solved values of each query; default: the exact value
      function's at `tolerance` (a fraction of the utility range).
    tolerance: see `reference`.

  Returns:
    {"mean", "max": the error over queries, "errors": per query,
     "reference": the solved values used}.
  """
  if not queries:
    raise ValueError("value_error needs at least one query")
  if reference is None:
    game = queries[0].public_state.observer.game
    exact = ExactValueFunction(game, tolerance=tolerance, warm_start=False)
    reference = [e.values for e in exact.evaluate(queries)]
  evaluations = value_fn.evaluate(list(queries))
  errors = [range_weighted_error(q, e.values, ref)
            for q, e, ref in zip(queries, evaluations, reference)]
  return {"mean": float(np.mean(errors)), "max": float(np.max(errors)),
          "errors": errors, "reference": reference}
