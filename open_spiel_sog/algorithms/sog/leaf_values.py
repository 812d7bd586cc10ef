"""What a GT-CFR regret update reads at the edge of the search tree: the
terminal histories' payoffs and the leaves' values (DESIGN.md sections 4, 5).

Leaves are valued by the value function in one batched call per update
(`LeafValues.values`), whose queries the search may record (`QueryLog`).
Where the value function's leaf values are a fixed sum over the leaf's
histories (`ValueFunction.fixed_history_values`: rollouts), the leaves are
instead folded once into arrays like the terminals' (`fold_fixed_leaves`)
and valued with them in one weighted sum per update. Both give the same
sums; folding is off while queries are recorded.
"""

from __future__ import annotations

import bisect
import collections.abc
import itertools
import time

import numpy as np

from open_spiel_sog.algorithms.cfr import CompiledSequences
from open_spiel_sog.algorithms.sog.search_tree import SearchTree
from open_spiel_sog.algorithms.sog.value_functions import LazyPriors
from open_spiel_sog.algorithms.sog.value_functions import PackedQueries
from open_spiel_sog.algorithms.sog.value_functions import ValueFunction
from open_spiel_sog.utils.growing_array import GrowingArray

_SEARCH_IDS = itertools.count()

# The compiled sequences of both players.
Compiled = tuple[CompiledSequences, CompiledSequences]


class LeafTiming:
  """Seconds spent per leaf added to a search's tree: building it, and
  valuing it where the value function's values are fixed sums (what a
  time-limited search weighs an expansion by)."""

  __slots__ = ("seconds", "leaves")

  def __init__(self):
    self.seconds = 0.0
    self.leaves = 0

  def timed(self, grow, *args) -> None:
    """Calls `grow(*args)` (which returns the number of public states it
    added) and adds its time and leaves."""
    start = time.perf_counter()
    self.leaves += grow(*args)
    self.seconds += time.perf_counter() - start


class QueryLog(collections.abc.Sequence):
  """The leaf queries of a search, stored packed per update; indexing
  builds the Query."""

  def __init__(self):
    self._packs: list[PackedQueries] = []
    self._ends: list[int] = []

  def append(self, packed: PackedQueries) -> None:
    self._packs.append(packed)
    self._ends.append((self._ends[-1] if self._ends else 0) + len(packed))

  def __len__(self) -> int:
    return self._ends[-1] if self._ends else 0

  def __getitem__(self, i):
    if isinstance(i, slice):
      return [self[j] for j in range(*i.indices(len(self)))]
    n = len(self)
    if i < 0:
      i += n
    if not 0 <= i < n:
      raise IndexError(i)
    k = bisect.bisect_right(self._ends, i)
    start = self._ends[k - 1] if k else 0
    return self._packs[k].query(i - start)


class LeafValues:
  """The terminal and leaf values of one search's tree.

  Attributes:
    fixed: whether leaves are folded into fixed-history arrays (the value
      function's values are fixed sums and queries are not recorded); it
      turns False where the value function turns out not to have them.
    queries: the leaf queries made by updates (when recorded).
  """

  def __init__(self, tree: SearchTree, value_fn: ValueFunction,
               record_queries: bool, timing: LeafTiming):
    self.tree = tree
    self.value_fn = value_fn
    self.record_queries = record_queries
    self.timing = timing
    self.queries = QueryLog()
    self._uid = next(_SEARCH_IDS)
    self._leaf_entry_cache: dict = {}
    self._terminal_seqs = None  # see terminal_sequences
    self.fixed = (type(value_fn).fixed_history_values
                  is not ValueFunction.fixed_history_values and
                  not record_queries)
    # How far the folded arrays follow the tree's leaf logs (added,
    # expanded).
    self._folded = (0, 0)
    # Terminal histories and those of folded leaves together, in the order
    # they came (see fixed_histories): entries of player 0 and 1, weights,
    # and the flat sequences of those entries under `_together_layout`.
    self._together = (GrowingArray(), GrowingArray(),
                      GrowingArray(np.float64))
    self._together_seqs = (GrowingArray(), GrowingArray())
    self._together_layout = None
    self._together_terminals = 0  # terminal nodes taken in
    self.folded_spans: dict[int, tuple[int, int]] = {}  # node -> span

  # --- Leaves whose values are fixed sums over their histories -------------

  def fold_fixed_leaves(self) -> bool:
    """Brings the fixed-value leaf arrays up to date with the tree's leaves
    (new leaves appended, expanded ones zeroed); False where the value
    function turns out not to have fixed values."""
    tree = self.tree
    added, expanded = len(tree.leaves_added), len(tree.leaves_expanded)
    if self._folded == (added, expanded):
      return True
    e0, e1, w = self._together
    for i in tree.leaves_expanded[self._folded[1]:]:
      span = self.folded_spans.pop(i, None)
      if span is not None:
        w.buf[span[0]:span[1]] = 0.0
    new = [i for i in tree.leaves_added[self._folded[0]:]
           if not tree.nodes[i].expanded]
    start = time.perf_counter()
    for k, i in enumerate(new):
      node = tree.nodes[i]
      fixed = self.value_fn.fixed_history_values(node.ps, len(new) - k)
      if fixed is None:
        self.fixed = False
        return False
      inf0, inf1, weight, prior = fixed
      lo = w.n
      if len(weight) == 1:  # (one history: scalars beat arrays)
        e0.append(node.entry_start[0] + int(inf0[0]))
        e1.append(node.entry_start[1] + int(inf1[0]))
        w.append(weight[0])
      else:
        e0.extend(node.entry_start[0] + inf0)
        e1.extend(node.entry_start[1] + inf1)
        w.extend(weight)
      self.folded_spans[i] = (lo, w.n)
      if prior is not None:
        node.prior = prior
    self.timing.seconds += time.perf_counter() - start
    self._folded = (added, expanded)
    return True

  def fixed_histories(self, compiled: Compiled):
    """The terminal histories and those of folded leaves, together, in the
    order they came into the tree (a leaf later expanded weighs 0): each
    one's entry of player 0 and of player 1, chance reach times player 0's
    value, and the flat sequence of each entry. Kept up to date by
    appending what is new (the sequences are recomputed when a player's
    layout changes)."""
    tree = self.tree
    e0, e1, w = self._together
    self._together_terminals = tree.take_terminals(self._together,
                                                   self._together_terminals)
    n = w.n
    s0, s1 = self._together_seqs
    layout = (compiled[0].width, compiled[0].num_root, compiled[1].width,
              compiled[1].num_root)
    if layout != self._together_layout:
      s0.n = s1.n = 0
      self._together_layout = layout
    if s0.n < n:
      s0.extend(compiled[0].entry_seq[e0.buf[s0.n:n]])
      s1.extend(compiled[1].entry_seq[e1.buf[s1.n:n]])
    return e0.buf[:n], e1.buf[:n], w.buf[:n], s0.buf[:n], s1.buf[:n]

  def fixed_entry_values(self, compiled: Compiled, reaches, p: int
                         ) -> np.ndarray:
    """p's value [E_p] at each entry from its own terminal histories and
    folded leaves (before the pass up the tree), given the opponent's
    reaches: one weighted sum over both kinds of histories."""
    return _entry_payoffs(self.fixed_histories(compiled), compiled, reaches,
                          p)

  def _fixed_leaf_values(self, compiled: Compiled, reaches):
    """`values` from the folded leaves' histories (the same sums, in the
    same order: per entry, then per sequence)."""
    spans = list(self.folded_spans.values())
    index = (np.concatenate([np.arange(lo, hi) for lo, hi in spans]) if spans
             else np.zeros(0, np.int64))
    e0, e1, w = (a.buf[index] for a in self._together)
    r0 = reaches[0][compiled[0].entry_seq[e0]]
    r1 = reaches[1][compiled[1].entry_seq[e1]]
    per_entry = [
        np.bincount(e0, weights=w * r1, minlength=compiled[0].num_entries),
        -np.bincount(e1, weights=w * r0, minlength=compiled[1].num_entries)]
    # Entries that are not at leaves hold exact zeros, which leave the sums
    # unchanged.
    out = [np.bincount(compiled[p].entry_seq, weights=per_entry[p],
                       minlength=compiled[p].num_seq) for p in range(2)]
    return out, per_entry

  # --- Leaves valued by the value function ---------------------------------

  def values(self, compiled: Compiled, reaches, record: bool):
    """The leaves' values for both players (one batched value-function call):
    ([S_p] landing on sequences, [E_p] per entry)."""
    tree = self.tree
    out = [np.zeros(c.num_seq) for c in compiled]
    per_entry = [np.zeros(c.num_entries) for c in compiled]
    leaves = tree.leaves()
    if not leaves:
      return out, per_entry
    if self.fixed and self.fold_fixed_leaves():
      return self._fixed_leaf_values(compiled, reaches)
    entries = [self.entries(p) for p in range(2)]
    seqs = [compiled[p].entry_seq[entries[p]] for p in range(2)]
    packed = PackedQueries([tree.nodes[i].ps for i in leaves],
                           (reaches[0][seqs[0]], reaches[1][seqs[1]]),
                           key=self.key(), sizes=self.sizes())
    values, policies = self.value_fn.evaluate_packed(packed)
    if record and self.record_queries:
      self.queries.append(packed)
    if isinstance(policies, LazyPriors):
      # Each leaf's prior is computed if the leaf is expanded before the
      # next call replaces it.
      tree.latest_priors[:] = (policies,
                               {leaves[k]: k for k in policies.defined})
    else:
      tree.latest_priors[:] = (None, None)
      for i, policy in zip(leaves, policies):
        if policy is not None:
          tree.nodes[i].prior = policy
    for p in range(2):
      out[p] = np.bincount(seqs[p], weights=values[p],
                           minlength=compiled[p].num_seq)
      per_entry[p][entries[p]] = values[p]
    return out, per_entry

  def key(self) -> tuple[int, int]:
    """Names this search's leaves as they are now (value functions cache
    per-list arrays under it): the tree's version changes whenever they
    do."""
    return (self._uid, self.tree.version)

  def sizes(self) -> tuple[np.ndarray, np.ndarray]:
    """Each leaf's entries per player, in leaf order (cached per tree
    shape)."""
    key = (self.key(), "sizes")
    sizes = self._leaf_entry_cache.get(key)
    if sizes is None:
      tree = self.tree
      at = tree.leaves_array()
      sizes = tuple(tree.node_entries[p].buf[at] for p in range(2))
      self._leaf_entry_cache[key] = sizes
    return sizes

  def entries(self, p: int) -> np.ndarray:
    """Entries of p at the leaves, in leaf order (cached per tree shape)."""
    key = (self.key(), p)
    cached = self._leaf_entry_cache.get(key)
    if cached is None:
      tree = self.tree
      at = tree.leaves_array()
      starts = tree.node_entry_start[p].buf[at]
      counts = tree.node_entries[p].buf[at]
      # Each leaf's entries start .. start + count - 1, one after another.
      ends = np.cumsum(counts)
      cached = (np.repeat(starts - (ends - counts), counts) +
                np.arange(int(ends[-1]) if len(ends) else 0))
      self._leaf_entry_cache[key] = cached
    return cached

  # --- Terminals -----------------------------------------------------------

  def terminal_sequences(self, compiled: Compiled):
    """(e0, e1, w) of `SearchTree.terminal_arrays` with each terminal's
    sequence of player 0 and of player 1 under `compiled`, gathered once per
    compilation (they change only when the tree grows)."""
    cached = self._terminal_seqs
    if cached is None or cached[0] is not compiled:
      e0, e1, w = self.tree.terminal_arrays()
      cached = self._terminal_seqs = (compiled, e0, e1, w,
                                      compiled[0].entry_seq[e0],
                                      compiled[1].entry_seq[e1])
    return cached[1:]

  def terminal_values(self, compiled: Compiled, reaches, p: int
                      ) -> np.ndarray:
    _, _, w, s0, s1 = self.terminal_sequences(compiled)
    if p == 0:
      return np.bincount(s0, weights=w * reaches[1][s1],
                         minlength=compiled[0].num_seq)
    return np.bincount(s1, weights=-w * reaches[0][s0],
                       minlength=compiled[1].num_seq)

  def terminal_entry_values(self, compiled: Compiled, reaches, p: int
                            ) -> np.ndarray:
    """p's terminal payoffs [E_p] landing on its entries."""
    return _entry_payoffs(self.terminal_sequences(compiled), compiled,
                          reaches, p)


def _entry_payoffs(histories, compiled: Compiled, reaches, p: int
                   ) -> np.ndarray:
  """p's payoffs [E_p] from `histories` (e0, e1, w, s0, s1: each history's
  entries, chance reach times player 0's value and sequences), weighted by
  the opponent's reach and summed per entry of p."""
  e0, e1, w, s0, s1 = histories
  if p == 0:
    return np.bincount(e0, weights=w * reaches[1][s1],
                       minlength=compiled[0].num_entries)
  return np.bincount(e1, weights=-w * reaches[0][s0],
                     minlength=compiled[1].num_entries)
