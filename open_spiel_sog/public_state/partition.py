"""The public partition: which child histories share a public state
(DESIGN.md section 3).

`PublicPartition` picks the source of the public observations (`SOURCES`):

* ``perfect_information``: every history is its own public state.
* ``native``: the game's own public observer
  (``IIGObservationType(public_info=True, perfect_recall=True,
  private_info=NONE)``, or the non-recall one, in which case the sequence of
  observations along the path is the key). Children of a public state are
  grouped by their public observation.
* ``derived``: no public observer (liars_dice, turn-based goofspiel, ...). The
  children of a public state are partitioned into common-knowledge components
  with union-find, joining two histories when some player's
  information_state_string is the same for both. In perfect-recall games this
  is exact and the finest public partition possible.

`PublicPartition.labels` then labels the children of a public state; equal
labels share a public state.
"""

from __future__ import annotations

from typing import Sequence

import pyspiel
from open_spiel.python import observation as os_observation

# Where public observations come from (ObserverConfig.source).
SOURCES = ("native", "perfect_information", "derived")


def make_public_observation(game: pyspiel.Game, perfect_recall: bool):
  """The game's public observer (an open_spiel Observation), or None."""
  try:
    obs = os_observation.make_observation(
        game,
        pyspiel.IIGObservationType(public_info=True,
                                   perfect_recall=perfect_recall,
                                   private_info=pyspiel.PrivateInfoType.NONE))
  except (pyspiel.SpielError, RuntimeError, ValueError):
    return None
  if obs is None:
    return None
  # Some games build an observer that only fails when used: probe it.
  try:
    obs.string_from(game.new_initial_state(), 0)
  except (pyspiel.SpielError, RuntimeError, ValueError):
    return None
  return obs


class _UnionFind:
  """Union-find over range(n) with path halving."""

  def __init__(self, n: int):
    self.parent = list(range(n))

  def find(self, i: int) -> int:
    parent = self.parent
    while parent[i] != i:
      parent[i] = parent[parent[i]]
      i = parent[i]
    return i

  def union(self, i: int, j: int) -> None:
    ri, rj = self.find(i), self.find(j)
    if ri != rj:
      self.parent[max(ri, rj)] = min(ri, rj)


def common_knowledge_components(keys: Sequence[Sequence]) -> list[int]:
  """Component label of each history in the common-knowledge graph.

  Args:
    keys: per player, each history's infostate (string or index); two
      histories are joined when some player's keys are equal.

  Returns:
    [H] the smallest history index of each history's component.
  """
  n = len(keys[0])
  uf = _UnionFind(n)
  for player_keys in keys:
    first: dict = {}
    for k, key in enumerate(player_keys):
      j = first.setdefault(key, k)
      if j != k:
        uf.union(j, k)
  return [uf.find(k) for k in range(n)]


class PublicPartition:
  """How an observer groups child histories into public states.

  Attributes:
    source: one of `SOURCES`.
    public_observation: the game's public observer (an open_spiel
      Observation), or None.
    public_observation_has_recall: whether it is the perfect-recall one.
  """

  def __init__(self, game: pyspiel.Game, requested: str):
    """Picks the source `requested` ("auto" or one of `SOURCES`; see
    ObserverConfig.source), checked against what `game` provides."""
    game_type = game.get_type()
    self.public_observation = None
    self.public_observation_has_recall = False
    source = requested
    if source not in ("auto",) + SOURCES:
      raise ValueError(f"unknown public-state source {source!r}; supported: "
                       f"'auto', {', '.join(map(repr, SOURCES))}")
    perfect_information = (game_type.information ==
                           pyspiel.GameType.Information.PERFECT_INFORMATION)
    if source == "native" or (source == "auto" and not perfect_information):
      for recall in (True, False):
        obs = make_public_observation(game, recall)
        if obs is not None:
          self.public_observation = obs
          self.public_observation_has_recall = recall
          break
      if source == "native" and self.public_observation is None:
        raise ValueError(f"{game}: the game has no public observer; use "
                         "source='derived'")
    if source == "auto":
      if perfect_information:
        source = "perfect_information"
      elif self.public_observation is not None:
        source = "native"
      else:
        source = "derived"
    if source == "perfect_information" and not perfect_information:
      raise ValueError(f"{game} is not a perfect-information game")
    self.source = source

  def labels(self, children: list[pyspiel.State], actions: list[int],
             keys: list[list[str]], actors: list[int]) -> list[str]:
    """A label per child history; equal labels share a public state."""
    if self.source == "perfect_information":
      return [str(a) for a in actions]
    if self.source == "native":
      obs = self.public_observation
      labels = [obs.string_from(h, 0) for h in children]
      acting: dict[str, int] = {}
      if all(acting.setdefault(label, actor) == actor
             for label, actor in zip(labels, actors)):
        return labels
      # The game's public observation does not say who acts (kriegspiel):
      # split each group into its common-knowledge components.
      components = common_knowledge_components(keys)
      return [f"{label} #{c}" for label, c in zip(labels, components)]
    # Derived: common-knowledge components.
    labels = common_knowledge_components(keys)
    return [str(label) for label in labels]
