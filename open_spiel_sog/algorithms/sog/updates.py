"""GT-CFR's regret-update phase (Algorithm 1 of the SoG paper; DESIGN.md
sections 4 and 5): public-tree CFR+ on the search tree as it is now.

Per player, one down pass (the reach of every sequence) and one up pass
(counterfactual values from the terminals and the leaves), then regret
matching+ and an average weighted by a power of the update's number
(`GTCFRConfig.averaging_power`). Alternating updates by default, both
players from the same reaches as an option. The passes are
`cfr.growing_passes`; where the shim is built, an update whose every value
is a fixed sum over histories runs as one C++ call (`cfr_fixed_update`),
and one whose leaves a network values as two (`network_updates`), with the
numbers of the passes called one by one.

Re-solving needs the opponent's counterfactual values averaged over the
iterates (`EntryValueAverages`), and the gadget's range moves with each of
its player's updates (`gadget.GadgetSolver`).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from open_spiel_sog.algorithms.cfr import growing_passes
from open_spiel_sog.algorithms.cfr import CompiledSequences
from open_spiel_sog.algorithms.sog.gadget import GadgetSolver
from open_spiel_sog.algorithms.sog.leaf_values import Compiled
from open_spiel_sog.algorithms.sog.leaf_values import LeafValues
from open_spiel_sog.algorithms.sog.network_updates import NetworkUpdates
from open_spiel_sog.algorithms.sog.search_tree import SearchTree
from open_spiel_sog.utils.growing_array import GrowingArray


class EntryValueAverages:
  """Per player, the weighted sum over updates of each entry's
  counterfactual value and the sum of the weights (what re-solving's
  gadget reads: the values averaged over the iterates)."""

  def __init__(self):
    self.sums = [np.zeros(0), np.zeros(0)]
    self.weights = [np.zeros(0), np.zeros(0)]
    self._grown = [(GrowingArray(np.float64), GrowingArray(np.float64))
                   for _ in range(2)]

  def arrays(self, p: int, num_entries: int
             ) -> tuple[np.ndarray, np.ndarray]:
    """p's (sums, weights), grown with zeros to `num_entries`."""
    total, count = self.sums[p], self.weights[p]
    if len(total) < num_entries:
      grown = self._grown[p]
      for g in grown:
        g.fill(0.0, num_entries - g.n)
      total, count = grown[0].view(), grown[1].view()
      self.sums[p], self.weights[p] = total, count
    return total, count

  def add(self, p: int, num_entries: int, entry_values: np.ndarray,
          weight: float) -> None:
    """Adds p's entry values [num_entries] of an update with `weight`."""
    total, count = self.arrays(p, num_entries)
    total += weight * entry_values
    count += weight

  def replace(self, p: int, values: np.ndarray) -> None:
    """In place: p's entry `values` replaced by their averages where
    tracked."""
    total, count = self.sums[p], self.weights[p]
    tracked = np.zeros(len(values), dtype=bool)
    tracked[:len(count)] = count > 0
    values[tracked] = total[tracked[:len(total)]] / count[tracked[:len(count)]]


class RegretUpdates:
  """The regret updates of one search.

  Attributes:
    count: updates run so far.
    reaches: [2][S_p] both players' sequence reaches of the latest update
      (None before the first).
    last_values: per player, (sequence values [S], row values [R],
      (num_root, width)) of its latest update: what the expansion phase's
      PUCT reads.
    averages: the tracked players' entry values over the iterates.
  """

  def __init__(self, tree: SearchTree, leaves: LeafValues,
               root_ranges: list[np.ndarray], *, alternating: bool,
               averaging_power: float, value_players: Sequence[int],
               gadget: GadgetSolver | None,
               network_spec: tuple[int, tuple[float, float]] | None):
    self.tree = tree
    self.leaves = leaves
    # The search's root ranges (shared: the gadget's player's entry moves
    # with the gadget).
    self.root_ranges = root_ranges
    self.alternating = alternating
    self.averaging_power = averaging_power
    self.value_players = tuple(value_players)
    self.gadget = gadget
    # Where the value function is a network, updates run through
    # `network` (see `_update`).
    self.network = (None if network_spec is None else
                    NetworkUpdates(tree, leaves.value_fn, leaves,
                                   network_spec))
    self.count = 0
    self.averages = EntryValueAverages()
    self.reaches: list[np.ndarray] | None = None
    self.last_values: list[tuple | None] = [None, None]

  def run(self, count: int) -> None:
    """Runs `count` updates (of both players)."""
    for _ in range(count):
      self.count += 1
      if self.alternating:
        if not self._fused_pair():
          self._update([0])
          self._update([1])
      else:
        self._update([0, 1])

  def current_reaches(self, compiled: Compiled) -> list[np.ndarray]:
    """Each player's sequence reaches under the current policies."""
    return [growing_passes.reach(compiled[p], self.tree.sides[p].policy,
                                 self.root_ranges[p]) for p in range(2)]

  def _weight(self) -> float:
    return float(self.count) ** self.averaging_power

  def _update(self, players: Sequence[int]) -> None:
    """One CFR+ update of `players` from the same reaches."""
    tree = self.tree
    compiled = tree.compiled()
    weight = self._weight()
    sides = tree.sides
    leaves = self.leaves
    fixed = leaves.fixed and leaves.fold_fixed_leaves()
    kernels = growing_passes.kernels()
    if kernels is not None and len(players) == 1 and self._all_fixed(fixed):
      self._fused_update(kernels, compiled, players[0], weight)
      return
    if (kernels is not None and len(players) == 1 and
        self.network is not None and not fixed):
      plan = self.network.plan(compiled, self.value_players,
                               self.averages.arrays)
      if plan is not None:
        self._network_update(kernels, compiled, plan, players[0], weight)
        return
    reaches = self.current_reaches(compiled)
    self.reaches = reaches
    if not fixed:
      leaf, leaf_entries = leaves.values(compiled, reaches, record=True)
    for p in players:
      side, c = sides[p], compiled[p]
      n = side.num_rows
      if fixed:
        # Terminals and folded leaves in one weighted sum per entry, then
        # per sequence.
        entry_values = leaves.fixed_entry_values(compiled, reaches, p)
        direct = np.bincount(c.entry_seq, weights=entry_values,
                             minlength=c.num_seq)
        if p in self.value_players:
          growing_passes.propagate_entry_values(c, side.policy, entry_values)
      else:
        direct = leaves.terminal_values(compiled, reaches, p) + leaf[p]
        if p in self.value_players:
          entry_values = self.entry_values(p, compiled, reaches, side.policy,
                                           leaf_entries[p])
      if p in self.value_players:
        self.averages.add(p, c.num_entries, entry_values, weight)
      seq_values, row_values = growing_passes.values(c, side.policy, direct)
      if n:
        # Average with the policy that produced these values, then regret
        # matching (p's policy is not read again in this update).
        own = reaches[p][c.row_parent_seq]
        growing_passes.regret_update(side, c, seq_values, row_values, own,
                                     weight)
      self._record_values(p, c, seq_values, row_values, weight)

  def _all_fixed(self, fixed: bool) -> bool:
    """Whether every value of an update is a fixed sum over histories:
    the folded leaves' and the terminals' (`fixed`: the leaves are folded),
    or the terminals' alone once a tree whose leaves are queried has none
    left (a network's search of a small subgame expands it whole: most
    updates of Leduc's training)."""
    return fixed or (not self.tree.leaves() and not self.leaves.folded_spans)

  def _fused_update(self, kernels, compiled: Compiled, p: int, weight: float,
                    histories=None) -> None:
    """`_update` of one player where every leaf value is a fixed sum over
    histories, as one C++ call (`cfr_fixed_update`: the same passes, the
    same numbers). `histories`: `LeafValues.fixed_histories(compiled)` if
    known."""
    o = 1 - p
    side, opp, c, co = (self.tree.sides[p], self.tree.sides[o], compiled[p],
                        compiled[o])
    if histories is None:
      histories = self.leaves.fixed_histories(compiled)
    e0, e1, w, s0, s1 = histories
    track = p in self.value_players
    own_reach, opp_reach, seq_values, row_values, entry_values = (
        kernels.cfr_fixed_update(
            c.row_parent_seq, side.policy, side.regrets, side.avg,
            side.active, self.root_ranges[p], c.width, co.row_parent_seq,
            opp.policy, self.root_ranges[o], co.width, e0 if p == 0 else e1,
            s1 if p == 0 else s0, w, 1.0 if p == 0 else -1.0, c.entry_seq,
            track, c.entry_row, c.entry_parent_row, c.entry_parent_slot,
            c.entry_parent, weight))
    self.reaches = ([own_reach, opp_reach] if p == 0 else
                    [opp_reach, own_reach])
    if track:
      self.averages.add(p, c.num_entries, entry_values, weight)
    self._record_values(p, c, seq_values, row_values, weight)

  def _fused_pair(self) -> bool:
    """`_update([0])` then `_update([1])` where both take `_fused_update`
    (every leaf value a fixed sum over histories), with what they share
    done once (the tree does not change between them); False, having
    updated nothing, where they do not."""
    kernels = growing_passes.kernels()
    if kernels is None:
      return False
    compiled = self.tree.compiled()
    leaves = self.leaves
    if not self._all_fixed(leaves.fixed and leaves.fold_fixed_leaves()):
      return False
    weight = self._weight()
    histories = leaves.fixed_histories(compiled)
    self._fused_update(kernels, compiled, 0, weight, histories)
    self._fused_update(kernels, compiled, 1, weight, histories)
    return True

  def _network_update(self, kernels, compiled: Compiled, plan, p: int,
                      weight: float) -> None:
    """`_update` of one player where a network values the leaves
    (`NetworkUpdates.update`)."""
    self.reaches, seq_values, row_values = self.network.update(
        kernels, plan, p, weight, self.root_ranges)
    self._record_values(p, compiled[p], seq_values, row_values, weight)

  def _record_values(self, p: int, c: CompiledSequences,
                     seq_values: np.ndarray, row_values: np.ndarray,
                     weight: float) -> None:
    """After p's update: keeps its sequence and row values (what the
    expansion phase's PUCT reads) and updates the gadget where p has it."""
    self.last_values[p] = (seq_values, row_values, (c.num_root, c.width))
    gadget = self.gadget
    if gadget is not None and gadget.gadget.player == p:
      gadget.update(seq_values[:c.num_root], weight)
      self.root_ranges[p] = gadget.range

  def entry_values(self, p: int, compiled: Compiled, reaches,
                   policy: np.ndarray, leaf: np.ndarray) -> np.ndarray:
    """Counterfactual value of every entry of player p under `policy`, given
    the leaves' values per entry (a pass over public-state depth)."""
    c = compiled[p]
    values = leaf.copy()
    values += self.leaves.terminal_entry_values(compiled, reaches, p)
    growing_passes.propagate_entry_values(c, policy, values)
    return values
