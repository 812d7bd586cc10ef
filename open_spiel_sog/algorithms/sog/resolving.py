"""Continual re-solving from one player's perspective (DESIGN.md section 6).

After each search the resolver keeps the search's summaries: at every public
state of its tree, both players' ranges and counterfactual values. To search
at a public state S, it finds S_prev, the deepest public state on the path to
S that the previous tree holds, and runs GT-CFR from S_prev over a single
branch S_prev -> S (off-branch children are leaves), growing only under S,
with the re-solving gadget for the opponent at S_prev: the resolver's own
range there is fixed to its summary range, and the opponent chooses, per
infostate, to terminate with its stored counterfactual value or to follow
into the subgame; the follow probabilities, mixed alpha * follow +
(1 - alpha) * r_prev with the opponent's previous range, are its range.

The first search (no summaries, or none on S's path) starts at the game's
root with the prior ranges (all ones) and no gadget.
"""

from __future__ import annotations

import dataclasses
from typing import Mapping

import numpy as np

from open_spiel_sog.algorithms.sog import gt_cfr
from open_spiel_sog.algorithms.sog.gadget import Gadget
from open_spiel_sog.algorithms.sog.value_functions import ValueFunction
from open_spiel_sog.public_state import PublicState
from open_spiel_sog.public_state import PublicStateObserver


@dataclasses.dataclass(frozen=True)
class ResolveConfig:
  """Options of continual re-solving.

  Attributes:
    search: the GT-CFR options of every search.
    alpha: weight of the gadget's follow probabilities in the opponent's
      range (the rest is the opponent's range from the previous search).
  """
  search: gt_cfr.GTCFRConfig = gt_cfr.GTCFRConfig()
  alpha: float = 0.5


class Resolver:
  """Continual re-solving for `player`: call `search(ps)` at each public
  state in order of play (own decisions, and the opponent's to keep the
  summaries current); `reset()` at the start of a game."""

  def __init__(self, observer: PublicStateObserver, player: int,
               value_fn: ValueFunction, config: ResolveConfig | None = None,
               rng: np.random.Generator | None = None):
    if player not in (0, 1):
      raise ValueError(f"player must be 0 or 1, got {player}")
    self.observer = observer
    self.player = player
    self.value_fn = value_fn
    self.config = config or ResolveConfig()
    if not 0.0 <= self.config.alpha <= 1.0:
      raise ValueError(f"alpha must be in [0, 1], got {self.config.alpha}")
    self.rng = rng or np.random.default_rng()
    self.summaries: Mapping[int, gt_cfr.Summary] | None = None
    self.last_result: gt_cfr.SearchResult | None = None

  def reset(self) -> None:
    self.summaries = None
    self.last_result = None

  def set_summaries(self, summaries: Mapping[int, gt_cfr.Summary] | None
                    ) -> None:
    """Conditions the next search on another search's summaries."""
    self.summaries = summaries

  def previous_public_state(self, ps: PublicState) -> PublicState | None:
    """S_prev: the deepest public state on the path to `ps` in the previous
    search tree with a positive own range (None if there is none)."""
    if not self.summaries:
      return None
    node = ps
    while node is not None:
      summary = self.summaries.get(node.id)
      if summary is not None and summary.ranges[self.player].sum() > 0:
        return node
      node = node.parent
    return None

  def search(self, ps: PublicState,
             deadline: float | None = None) -> gt_cfr.SearchResult:
    """Re-solves at `ps` (a decision public state) and keeps the summaries;
    `deadline` (a `time.monotonic()` time) stops the search early."""
    if ps.observer is not self.observer:
      raise ValueError("the public state belongs to another observer")
    if not ps.is_player_node():
      raise ValueError(f"searches run at decision nodes; {ps.describe()} is "
                       "a chance or terminal node")
    i, o = self.player, 1 - self.player
    gadget = None
    if self.observer.source == "perfect_information":
      # The public state is the state: its subgame is a game of its own,
      # solved from it (no gadget, no branch from an earlier search).
      prev = None
      start = ps
    else:
      prev = self.previous_public_state(ps)
      # The root, or where a pruned observer's whole subtree begins.
      start = self.observer.search_floor()
    if prev is None:
      ranges = [np.ones(start.num_infostates(p)) for p in range(2)]
    else:
      start = prev
      summary = self.summaries[prev.id]
      own = summary.ranges[i]
      scale = own.sum()
      ranges = [None, None]
      ranges[i] = own / scale
      ranges[o] = np.ones(start.num_infostates(o))
      gadget = Gadget(player=o, values=summary.values[o] / scale,
                      prev_range=summary.ranges[o], alpha=self.config.alpha)
    branch = [ps]
    while branch[-1] is not start:
      parent = branch[-1].parent
      if parent is None:
        raise ValueError(f"{start.describe()} is not an ancestor of "
                         f"{ps.describe()}")
      branch.append(parent)
    branch.reverse()
    # The opponent's values averaged over the iterates are what the next
    # search's gadget needs; a perfect-information search has no next
    # gadget (each starts at its state), so it tracks none.
    value_players = (() if self.observer.source == "perfect_information"
                     else (o,))
    result = gt_cfr.GTCFR(start, self.value_fn, self.config.search,
                          ranges=ranges, gadget=gadget, branch=branch,
                          rng=self.rng,
                          value_players=value_players).run(deadline)
    self.summaries = result.summaries
    self.last_result = result
    return result
