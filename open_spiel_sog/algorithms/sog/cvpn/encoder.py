"""The CVPN's encoding: public belief states (a public state and both
players' ranges) to the network's fixed-width inputs, and their
counterfactual values and policies to its targets (`Encoder`, `Batch`).

Each player's infostates sit in fixed slots (`SlotTable`); values are
normalised by the ranges' mass and taken in units of the game's largest
absolute utility divided by the player's number of slots.
"""

from __future__ import annotations

import dataclasses
import weakref
from typing import Any, Sequence

import numpy as np

from open_spiel_sog.algorithms.sog import value_functions
from open_spiel_sog.public_state import PublicFeatures
from open_spiel_sog.public_state import PublicState
from open_spiel_sog.public_state import PublicStateObserver
from open_spiel_sog.public_state import SlotTable
from open_spiel_sog.public_state import public_action_mask

@dataclasses.dataclass
class Batch:
  """Fixed-width arrays of B examples; rows [P] = player 0's slots, then
  player 1's.

  Attributes:
    inputs: [B, D] features, then the two normalised ranges over slots.
    value_target: [B, P] normalised counterfactual values / value unit.
    value_mask: [B, P] 1 where the slot is present in the public state.
    policy_target: [B, P, A] target policy (rows of the acting player).
    policy_mask: [B, P] 1 where a policy target is given.
    legal: [B, P, A] 1 on legal actions of the acting player's slots.
    scales: [B, 2] per example, the factors that turn each player's
      normalised values back into counterfactual values (set by
      `Encoder.encode`; not part of training batches).
  """
  inputs: np.ndarray
  value_target: np.ndarray
  value_mask: np.ndarray
  policy_target: np.ndarray
  policy_mask: np.ndarray
  legal: np.ndarray
  scales: np.ndarray | None = None

  FIELDS = ("inputs", "value_target", "value_mask", "policy_target",
            "policy_mask", "legal")

  def __len__(self) -> int:
    return self.inputs.shape[0]

  @classmethod
  def concatenate(cls, batches: Sequence["Batch"]) -> "Batch":
    return cls(*(np.concatenate([getattr(b, f) for b in batches])
                 for f in cls.FIELDS))

  def take(self, index) -> "Batch":
    return Batch(*(getattr(self, f)[index] for f in self.FIELDS))

  def as_dict(self) -> dict[str, np.ndarray]:
    """The training fields by name (what the jitted steps and the training
    workers' messages carry); `from_dict` inverts it."""
    return {f: getattr(self, f) for f in self.FIELDS}

  @classmethod
  def from_dict(cls, arrays: dict[str, np.ndarray]) -> "Batch":
    return cls(*(arrays[f] for f in cls.FIELDS))


# What the encoder keeps per public state.
_Static = value_functions.NetworkPart


class Encoder:
  """Turns public belief states and targets into fixed-width arrays.

  The input is the public state's features, a one-hot of who acts (player 0,
  player 1, chance) and each player's range normalised to sum 1, scattered
  into its slots (`SlotTable`). Per-public-state parts are cached.
  """

  MAX_SHARED = 20_000  # exact public states' parts kept by content

  def __init__(self, observer: PublicStateObserver):
    self.observer = observer
    self.game = observer.game
    self.features = PublicFeatures(observer)
    self.slots = SlotTable(observer)
    self.num_slots = (self.slots.num_slots(0), self.slots.num_slots(1))
    self.num_rows = sum(self.num_slots)
    self.num_actions = self.game.num_distinct_actions()
    self.input_size = self.features.size + 3 + self.num_rows
    self.utility_scale = float(max(abs(self.game.max_utility()),
                                   abs(self.game.min_utility()))) or 1.0
    # The network's value unit per player: normalised values are about an
    # infostate's expected utility divided by the number of infostates, so
    # they are taken in units of utility_scale / num_slots, which puts the
    # targets near [-1, 1] (on Leduc queries this cut the held-out error
    # from 0.065 to 0.044 chips with the same data).
    self.value_unit = np.asarray(
        [self.utility_scale / n for n in self.num_slots])
    # Per observer (public-state ids are per observer), forgotten with it.
    self._cache = weakref.WeakKeyDictionary()
    # Exact public states' parts by content (PublicState.content_key), for
    # every observer the encoder serves (a fresh bot's search meets the
    # public states an earlier one encoded); cleared when full.
    self._shared: dict[tuple, _Static] = {}

  def spec(self) -> dict[str, Any]:
    """What a checkpoint must agree with to be used for this game."""
    return {"input_size": self.input_size, "num_slots": list(self.num_slots),
            "num_actions": self.num_actions,
            "utility_scale": self.utility_scale,
            "value_unit": self.value_unit.tolist()}

  def clear_shared(self) -> None:
    """Drops the parts kept by content (`clear_shared_caches`)."""
    self._shared.clear()

  def forget(self, observer, ids) -> None:
    """Drops the cached parts of public states `ids` of `observer`."""
    per_observer = self._cache.get(observer)
    if per_observer:
      for i in ids:
        per_observer.pop(i, None)

  def _per_observer(self, observer) -> dict:
    """The parts kept for `observer`'s public states, by id."""
    per_observer = self._cache.get(observer)
    if per_observer is None:
      per_observer = self._cache[observer] = {}
    return per_observer

  def _static(self, ps: PublicState) -> _Static:
    per_observer = self._per_observer(ps.observer)
    cached = per_observer.get(ps.id)
    if cached is None:
      content = ps.content_key
      if content is not None:
        cached = self._shared.get(content)
        if cached is None:
          if len(self._shared) >= self.MAX_SHARED:
            self._shared.clear()
          cached = self._shared[content] = self._build_static(ps)
      else:
        cached = self._build_static(ps)
      per_observer[ps.id] = cached
    return cached

  def _build_static(self, ps: PublicState) -> _Static:
    """The per-public-state parts of `ps`'s encoding."""
    head = np.zeros(self.features.size + 3, dtype=np.float32)
    head[:self.features.size] = self.features(ps)
    who = ps.current_player()
    head[self.features.size + (who if who in (0, 1) else 2)] = 1.0
    mask = public_action_mask(ps) if len(ps.histories) > 1 else None
    rows = (self.slots.slots(ps, 0, mask),
            self.num_slots[0] + self.slots.slots(ps, 1, mask))
    legal = None
    if ps.is_player_node():
      q = ps.current_player()
      legal = np.zeros((len(rows[q]), self.num_actions), dtype=np.float32)
      for j in range(len(rows[q])):
        legal[j, ps.legal_actions(j)] = 1.0
    chance = float(ps.chance_reach.sum())
    acting = None if legal is None else (rows[ps.current_player()], legal)
    return _Static(head, rows[0], rows[1], chance, acting)

  def statics(self, public_states: Sequence[PublicState]) -> list[_Static]:
    """`_static` of each of `public_states`, with the lookup of one
    observer's parts done once."""
    out = []
    observer = per_observer = None
    for ps in public_states:
      if ps.observer is not observer:
        observer = ps.observer
        per_observer = self._per_observer(observer)
      cached = per_observer.get(ps.id)
      out.append(cached if cached is not None else self._static(ps))
    return out

  def rows(self, ps: PublicState) -> tuple[np.ndarray, np.ndarray]:
    """The rows [n_p] of each player's infostates of `ps`."""
    return self._static(ps).rows

  def encode(self, queries: Sequence[value_functions.Query],
             values: Sequence[Sequence[np.ndarray]] | None = None,
             policies: Sequence[np.ndarray | None] | None = None,
             value_masks: Sequence[Sequence[np.ndarray | None] | None]
             | None = None) -> Batch:
    """A Batch for `queries`; with targets when `values` (true, unnormalised
    counterfactual values per player, as a value function returns them; a
    player's entry may be None: no target) and/or `policies` ([n_q, A] of
    the acting player) are given. `value_masks`: per query, per player, the
    infostates whose values are targets (None: all)."""
    n = len(queries)
    b = Batch(
        inputs=np.zeros((n, self.input_size), dtype=np.float32),
        value_target=np.zeros((n, self.num_rows), dtype=np.float32),
        value_mask=np.zeros((n, self.num_rows), dtype=np.float32),
        policy_target=np.zeros((n, self.num_rows, self.num_actions),
                               dtype=np.float32),
        policy_mask=np.zeros((n, self.num_rows), dtype=np.float32),
        legal=np.zeros((n, self.num_rows, self.num_actions),
                       dtype=np.float32))
    offset = self.features.size + 3
    b.scales = np.zeros((n, 2))
    for i, q in enumerate(queries):
      ps = q.public_state
      static = self._static(ps)
      head, rows, legal = static.head, static.rows, static.legal
      normalised, _, scale = value_functions.normalise_beliefs(ps, q.ranges)
      b.scales[i] = scale
      b.inputs[i, :offset] = head
      for p in range(2):
        b.inputs[i, offset + rows[p]] = normalised[p]
        b.value_mask[i, rows[p]] = 1.0
        if values is not None:
          s = scale[p] * self.value_unit[p]
          if s > 0 and values[i][p] is not None:
            b.value_target[i, rows[p]] = np.asarray(values[i][p]) / s
          else:  # no opponent mass (or no target): nothing to learn
            b.value_mask[i, rows[p]] = 0.0
          if value_masks is not None and value_masks[i] is not None and (
              value_masks[i][p] is not None):
            b.value_mask[i, rows[p]] *= np.asarray(value_masks[i][p],
                                                   dtype=np.float32)
      if legal is not None:
        r = rows[ps.current_player()]
        b.legal[i, r] = legal
        if policies is not None and policies[i] is not None:
          b.policy_target[i, r] = policies[i]
          b.policy_mask[i, r] = 1.0
    if values is None:
      b.value_mask[:] = 0.0
    return b
