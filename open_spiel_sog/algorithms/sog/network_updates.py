"""GT-CFR's regret update where a network values the leaves, in two C++
calls (DESIGN.md sections 5 and 7).

With a network value function (`ValueFunction.network_spec`) and the shim's
kernels, one player's update is: `cfr_leaf_inputs` (both players' reaches,
the leaves' ranges and the network's input rows), the network, then
`cfr_network_update` (the leaves' values, the terminals', the propagation
up the tree and the regret update). `NetworkPlan` holds what those calls
read of the tree as it is now; it is rebuilt only when the tree grows.
"""

from __future__ import annotations

from typing import Callable, NamedTuple, Sequence

import numpy as np

from open_spiel_sog.algorithms.cfr import growing_passes
from open_spiel_sog.algorithms.sog.leaf_values import Compiled
from open_spiel_sog.algorithms.sog.leaf_values import LeafValues
from open_spiel_sog.algorithms.sog.search_tree import SearchTree
from open_spiel_sog.algorithms.sog.value_functions import NetworkLayout
from open_spiel_sog.algorithms.sog.value_functions import PackedQueries
from open_spiel_sog.algorithms.sog.value_functions import ValueFunction
from open_spiel_sog.utils.growing_array import GrowingArray

_EMPTY = np.zeros(0)

# `entry_value_sums(p, num_entries)`: p's running (sum, weight) arrays of
# entry values, grown to `num_entries` (see updates.EntryValueAverages).
EntryValueSums = Callable[[int, int], tuple[np.ndarray, np.ndarray]]


class NetworkPlan(NamedTuple):
  """The leaves of one tree shape as `NetworkUpdates.update` reads them."""
  compiled: Compiled
  leaves: list[int]
  key: tuple[int, int]  # LeafValues.key() of this shape
  layout: NetworkLayout
  prior_index: dict[int, int]  # leaf node -> query, where it has a prior
  leaf_args: tuple  # cfr_leaf_inputs' arguments after the root ranges
  update_args: tuple[tuple, tuple]  # per player, cfr_network_update's
  # arguments after the weight


class NetworkArrays:
  """What a network value function reads of the search tree's public
  states (`ValueFunction.network_parts`), per node and per entry, filled
  as nodes become leaves: a tree shape's layout is then a few gathers at
  its leaves, not a pass over them. Only leaves are read: an interior node
  may be one the network cannot encode (a public state between two private
  deals, on the branch from a re-solving search's root), and a node added
  already expanded is never a leaf."""

  def __init__(self, spec: tuple[int, tuple[float, float]]):
    self.spec = spec
    # Per node: its input head [H] (float32), made when H is known.
    self.heads: GrowingArray | None = None
    self.chance = GrowingArray(np.float64)  # per node
    self.acting: list = []  # per node: NetworkPart.acting
    self.filled = GrowingArray(np.bool_)  # per node: its part is in
    # Per entry: value row (-1: not filled).
    self.rows = (GrowingArray(), GrowingArray())

  def fill(self, tree: SearchTree, value_fn: ValueFunction,
           leaves: np.ndarray) -> None:
    """Takes in the nodes added since the last call, and the parts of the
    `leaves` (node indices; never terminal) not filled yet."""
    new = len(tree.nodes) - self.filled.n  # nodes not taken in yet
    if new:
      if self.heads is not None:
        self.heads.fill(0.0, new)
      self.chance.fill(0.0, new)
      self.filled.fill(False, new)
      self.acting.extend([None] * new)
      for p in range(2):
        self.rows[p].fill(-1, tree.sides[p].num_entries - self.rows[p].n)
    for p in range(2):
      if self.rows[p].n != tree.sides[p].num_entries:
        raise AssertionError("network rows out of step with the entries")
    todo = leaves[~self.filled.buf[leaves]]
    if not len(todo):
      return
    nodes = tree.nodes
    parts = value_fn.network_parts([nodes[i].ps for i in todo])
    if self.heads is None:
      self.heads = GrowingArray(np.float32, parts[0].head.shape)
      self.heads.fill(0.0, self.filled.n)
    starts = (tree.node_entry_start[0].buf, tree.node_entry_start[1].buf)
    for i, part in zip(todo.tolist(), parts):
      self.heads.buf[i] = part.head
      self.chance.buf[i] = part.chance
      self.acting[i] = part.acting
      for p in range(2):
        rows = part.rows[p]
        start = int(starts[p][i])
        self.rows[p].buf[start:start + len(rows)] = rows
    self.filled.buf[todo] = True


class NetworkUpdates:
  """The network updates of one search: its tree's network arrays and the
  plan of the tree as it is now."""

  def __init__(self, tree: SearchTree, value_fn: ValueFunction,
               leaves: LeafValues, spec: tuple[int, tuple[float, float]]):
    self.tree = tree
    self.value_fn = value_fn
    self.leaves = leaves
    self.arrays = NetworkArrays(spec)
    self._plan: NetworkPlan | None = None

  def plan(self, compiled: Compiled, value_players: Sequence[int],
           entry_value_sums: EntryValueSums) -> NetworkPlan | None:
    """The leaves of the tree as it is now, as `update` reads them (cached
    until the tree grows); None without leaves. `value_players` have their
    entry values tracked in `entry_value_sums`."""
    tree = self.tree
    leaves = tree.leaves()
    plan = self._plan
    if plan is not None and plan.compiled is compiled and plan.leaves is leaves:
      return plan
    self._plan = None
    if not leaves:
      return None
    arrays = self.arrays
    at = tree.leaves_array()
    arrays.fill(tree, self.value_fn, at)
    head_width = arrays.heads.buf.shape[1]
    (entries0, entries1, sizes0, sizes1, eq0, eq1, rows0, rows1, columns0,
     columns1, seqs0, seqs1) = growing_passes.kernels().cfr_leaf_layout(
         at, tree.node_entry_start[0].view(), tree.node_entries[0].view(),
         tree.node_entry_start[1].view(), tree.node_entries[1].view(),
         arrays.rows[0].view(), arrays.rows[1].view(), compiled[0].entry_seq,
         compiled[1].entry_seq, head_width)
    priors = [arrays.acting[i] for i in leaves]
    defined = [k for k, a in enumerate(priors) if a is not None]
    input_size, units = arrays.spec
    layout = NetworkLayout(
        heads=arrays.heads.buf[at], entry_query=(eq0, eq1),
        columns=(columns0, columns1), value_rows=(rows0, rows1),
        sizes=(sizes0, sizes1), chance=arrays.chance.buf[at],
        input_size=input_size, units=units, defined=defined, priors=priors)
    sides = tree.sides
    # The arguments of the C++ calls that stay the same until the tree
    # grows (`update` adds those that change at each update).
    leaf_args = (compiled[0].row_parent_seq, sides[0].policy,
                 compiled[0].width, compiled[1].row_parent_seq,
                 sides[1].policy, compiled[1].width, seqs0, seqs1,
                 layout.heads, eq0, eq1, columns0, columns1, sizes0, sizes1,
                 layout.chance, input_size)
    # (The terminals as `LeafValues.terminal_sequences` gives them, in the
    # same order, kept up to date by appending.)
    e0, e1, w, s0, s1 = self.leaves.fixed_histories(compiled)
    update_args = []
    for p in range(2):
      side, c = sides[p], compiled[p]
      track = p in value_players
      total, count = (entry_value_sums(p, c.num_entries) if track
                      else (_EMPTY, _EMPTY))
      update_args.append((
          (eq0, eq1)[p], (rows0, rows1)[p], units[p], (entries0, entries1)[p],
          (seqs0, seqs1)[p], (e0, e1)[p], (s0, s1)[p], (s1, s0)[p], w,
          1.0 if p == 0 else -1.0, c.row_parent_seq, side.policy,
          side.regrets, side.avg, side.active, c.num_root, c.width,
          c.num_entries, track, c.entry_row, c.entry_parent_row,
          c.entry_parent_slot, c.entry_parent, total, count))
    self._plan = NetworkPlan(
        compiled=compiled, leaves=leaves, key=self.leaves.key(),
        layout=layout, prior_index={leaves[k]: k for k in defined},
        leaf_args=leaf_args, update_args=tuple(update_args))
    return self._plan

  def update(self, kernels, plan: NetworkPlan, p: int, weight: float,
             root_ranges: Sequence[np.ndarray]):
    """One update of player p under `plan`: the passes before the network
    call in one C++ call (`cfr_leaf_inputs`: both reaches, the leaves'
    ranges and the network's inputs) and those after it in another
    (`cfr_network_update`: the leaves' values, the terminals', the
    propagation, the regret update), with the numbers of the passes called
    one by one. Returns (both players' reaches, p's sequence values, p's
    row values)."""
    tree = self.tree
    reach0, reach1, inputs, scale0, scale1, range0, range1 = (
        kernels.cfr_leaf_inputs(root_ranges[0], root_ranges[1],
                                *plan.leaf_args))
    reaches = [reach0, reach1]
    values, priors = self.value_fn.network_values(plan.layout, inputs)
    if self.leaves.record_queries:
      self.leaves.queries.append(PackedQueries(
          [tree.nodes[i].ps for i in plan.leaves], (range0, range1),
          key=plan.key, sizes=plan.layout.sizes))
    # Each leaf's prior is computed if the leaf is expanded before the next
    # call replaces it.
    tree.latest_priors[:] = (priors, plan.prior_index)
    seq_values, row_values = kernels.cfr_network_update(
        values, scale0 if p == 0 else scale1, reaches[p], reaches[1 - p],
        weight, *plan.update_args[p])
    return reaches, seq_values, row_values
