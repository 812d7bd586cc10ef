"""Policies of depth-limited solving: the blueprint, OpenSpiel policies from
tables and the bias approach's continuation strategies, and a policy read at
the rows of a public tree."""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import pyspiel
from open_spiel.python import policy as os_policy

from open_spiel_sog.algorithms.cfr import CFRConfig
from open_spiel_sog.algorithms.cfr import PublicTreeCFR
from open_spiel_sog.public_state import PublicTree

# A policy as OpenSpiel's `Policy.action_probabilities` returns it.
PolicyFn = Callable[[pyspiel.State, int], dict]


def compute_blueprint(game: pyspiel.Game, iterations: int,
                      config: CFRConfig | None = None
                      ) -> os_policy.TabularPolicy:
  """`PublicTreeCFR(game).run(iterations).average_policy()`."""
  if iterations < 1:
    raise ValueError(f"blueprint iterations must be >= 1, got {iterations}")
  solver = PublicTreeCFR(game, config=config)
  solver.run(iterations)
  return solver.average_policy()


# --- Policies ----------------------------------------------------------------


class DictPolicy(os_policy.Policy):
  """An OpenSpiel policy from {information_state_string: [(action, p)]} (or
  {information_state_string: action} for a pure one); infostates it lacks
  get `default` (another policy) or raise."""

  def __init__(self, game: pyspiel.Game, table: dict,
               default: os_policy.Policy | None = None):
    super().__init__(game, list(range(game.num_players())))
    self.table = table
    self.default = default

  def action_probabilities(self, state, player_id=None):
    player = state.current_player() if player_id is None else player_id
    key = state.information_state_string(player)
    entry = self.table.get(key)
    if entry is None:
      if self.default is None:
        raise KeyError(f"policy has no entry for infostate {key!r}")
      return self.default.action_probabilities(state, player)
    if isinstance(entry, (int, np.integer)):
      return {int(entry): 1.0}
    return {int(a): float(p) for a, p in entry}


class BiasedPolicy(os_policy.Policy):
  """`base` with the probability of `actions` (one action class) scaled by
  `factor` and renormalised (the bias approach's continuation strategy)."""

  def __init__(self, base: os_policy.Policy, actions: Sequence[int],
               factor: float):
    super().__init__(base.game, base.player_ids)
    self.base = base
    self.actions = frozenset(int(a) for a in actions)
    self.factor = float(factor)

  def action_probabilities(self, state, player_id=None):
    probs = self.base.action_probabilities(state, player_id)
    scaled = {a: p * (self.factor if a in self.actions else 1.0)
              for a, p in probs.items()}
    total = sum(scaled.values())
    if not total > 0:
      return probs
    return {a: p / total for a, p in scaled.items()}


def policy_dict(policy: os_policy.Policy, game: pyspiel.Game
                ) -> dict[str, list[tuple[int, float]]]:
  """{information_state_string: [(action, probability)]} of `policy` at
  every decision of the game (a TabularPolicy's table is read directly)."""
  if isinstance(policy, os_policy.TabularPolicy):
    out = {}
    for key, index in policy.state_lookup.items():
      probs = policy.action_probability_array[index]
      legal = np.flatnonzero(policy.legal_actions_mask[index])
      out[key] = [(int(a), float(probs[a])) for a in legal]
    return out
  tabular = os_policy.TabularPolicy(game)
  out = {}
  for key, index in tabular.state_lookup.items():
    state = tabular.states[index]
    probs = policy.action_probabilities(state, state.current_player())
    out[key] = [(int(a), float(probs.get(a, 0.0)))
                for a in state.legal_actions()]
  return out


def _row_policy(tree: PublicTree, player: int, policy: PolicyFn | None
                ) -> np.ndarray:
  """[rows, A] `policy` at each of `player`'s rows of `tree` (read at one
  history of the row's infostate); uniform where `policy` is None."""
  arrays = tree.players[player]
  legal = arrays.legal_mask
  uniform = np.where(legal, 1.0 / np.maximum(legal.sum(1, keepdims=True), 1),
                     0.0)
  if policy is None or arrays.num_rows == 0:
    return uniform
  by_id = {ps.id: ps for ps in tree.public_states}
  out = np.zeros_like(uniform)
  for r in range(arrays.num_rows):
    ps = by_id[int(arrays.row_public_state[r])]
    h = int(np.argmax(ps.history_infostate[player] ==
                      arrays.row_infostate[r]))
    probs = policy(ps.histories[h], player)
    for k, a in enumerate(arrays.row_actions[r]):
      if a >= 0:
        out[r, k] = probs.get(int(a), 0.0)
  total = out.sum(axis=1, keepdims=True)
  if np.any(total <= 0):
    bad = arrays.row_infostate_string[int(np.flatnonzero(total <= 0)[0])]
    raise ValueError(f"policy gives no probability to a legal action at "
                     f"infostate {bad!r}")
  return out / total


def _as_fn(policy: os_policy.Policy | PolicyFn) -> PolicyFn:
  if isinstance(policy, os_policy.Policy):
    return policy.action_probabilities
  return policy


class _FnPolicy(os_policy.Policy):
  """An OpenSpiel policy around an action_probabilities function."""

  def __init__(self, game: pyspiel.Game, fn: PolicyFn):
    super().__init__(game, list(range(game.num_players())))
    self._fn = fn

  def action_probabilities(self, state, player_id=None):
    return self._fn(state, state.current_player() if player_id is None
                    else player_id)
