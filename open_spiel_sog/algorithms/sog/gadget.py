"""The re-solving gadget (DESIGN.md section 6; DeepStack's and SoG's safe
re-solving): at the root of a re-solving search, each infostate of the
gadget's player chooses to terminate, receiving the counterfactual value
the previous search stored for it, or to follow into the subgame. Its
choice is learned by regret matching+ alongside the search's CFR, and its
follow probabilities give the player's root range, mixed with the range
the previous search held: alpha * follow + (1 - alpha) * previous.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from open_spiel_sog.algorithms.cfr import masked_regret_matching


@dataclasses.dataclass
class Gadget:
  """The re-solving gadget for `player` at the search root.

  Attributes:
    player: the player whose root range the gadget chooses (the opponent of
      the player re-solving).
    values: [n] stored counterfactual values of the player's root infostates
      (the terminate payoffs), on the scale of the search's ranges.
    prev_range: [n] the player's range from the previous search (mixed in
      with weight 1 - alpha, after scaling its maximum to 1), or None.
    alpha: weight of the gadget's follow probabilities.
  """
  player: int
  values: np.ndarray
  prev_range: np.ndarray | None = None
  alpha: float = 0.5


class GadgetSolver:
  """The gadget's follow-or-terminate choice during one search.

  Attributes:
    gadget: what the search was given.
    range: [n] the gadget player's current root range.
  """

  def __init__(self, gadget: Gadget, num_infostates: int):
    n = num_infostates
    if np.shape(gadget.values) != (n,):
      raise ValueError(f"gadget values have shape {np.shape(gadget.values)}"
                       f", the root has {n} infostates of player "
                       f"{gadget.player}")
    if not 0.0 <= gadget.alpha <= 1.0:
      raise ValueError(f"alpha must be in [0, 1], got {gadget.alpha}")
    self.gadget = gadget
    self._values = np.asarray(gadget.values, dtype=np.float64)
    self._regrets = np.zeros((n, 2))  # follow, terminate
    prev = gadget.prev_range
    if prev is None or not np.any(np.asarray(prev) > 0):
      self._prev = np.ones(n)
    else:
      prev = np.asarray(prev, dtype=np.float64)
      self._prev = prev / prev.max()
    self._follow_sum = np.zeros(n)
    self._weight = 0.0
    self._set_range()

  def _set_range(self) -> None:
    g = self.gadget
    follow = masked_regret_matching(
        self._regrets, np.ones_like(self._regrets, dtype=bool))[:, 0]
    self._follow = follow
    self.range = g.alpha * follow + (1 - g.alpha) * self._prev

  def update(self, follow_values: np.ndarray, weight: float) -> None:
    """One regret-matching+ step, given the counterfactual values [n] of
    following into the subgame under the current range; the average range
    gains the current one with `weight`."""
    f = self._follow
    t = self._values
    mixed = f * follow_values + (1 - f) * t
    self._regrets[:, 0] += follow_values - mixed
    self._regrets[:, 1] += t - mixed
    np.maximum(self._regrets, 0.0, out=self._regrets)
    self._follow_sum += weight * self.range
    self._weight += weight
    self._set_range()

  def average_range(self) -> np.ndarray | None:
    """The weighted average of the ranges over the updates (None before
    any)."""
    return self._follow_sum / self._weight if self._weight > 0 else None
