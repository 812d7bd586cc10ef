"""GT-CFR's expansion phase (Algorithm 1 of the SoG paper; DESIGN.md
section 5): simulations that grow the search tree.

A simulation samples a history at the growth root from the current
beliefs, then descends: chance samples its outcome; a decision samples from
pi_select = 1/2 pi_PUCT + 1/2 pi_CFR-average at the acting player's
infostate (`Growth.select`). PUCT uses the infostate's counterfactual
action values divided by its counterfactual reach (so they read as expected
utilities), the prior from the value function, visit counts per infostate
and, within one expansion phase, virtual losses. When the walk reaches a
leaf, the leaf gets its top-k children by prior (k=0: all children); when it
picks an action whose child is not in the tree, that child is added. A walk
that ends at a terminal public state already in the tree adds nothing and
is drawn again, up to `GTCFRConfig.walks_per_simulation` walks (1: the
paper's pseudocode, where such a walk spends a simulation); subtrees found
complete are marked closed, and once the growth root's is, the simulations
left walk nothing.
"""

from __future__ import annotations

import collections
import math
import time

import numpy as np

from open_spiel_sog.algorithms.cfr import CompiledSequences
from open_spiel_sog.algorithms.cfr import growing_passes
from open_spiel_sog.algorithms.sog.leaf_values import LeafTiming
from open_spiel_sog.algorithms.sog.search_tree import SearchNode
from open_spiel_sog.algorithms.sog.search_tree import SearchTree
from open_spiel_sog.algorithms.sog.updates import RegretUpdates
from open_spiel_sog.public_state import CHANCE
from open_spiel_sog.public_state import TERMINAL
from open_spiel_sog.utils import draws

_EMPTY = np.zeros(0)
_ONE = np.ones(1)

# Under a deadline, an expansion whose new leaves would take more than this
# share of the time left is skipped (yacht: a chance node of 7,776 rolls).
EXPAND_SHARE = 0.1


class InOrderNormalisers:
  """`Growth.row_normalisers` of one player whose rows have one history
  each, at the row's own index: each row's product computed when read (a
  walk reads a few; the same numbers as the bincount over all rows)."""

  __slots__ = ("chance", "opp", "opp_reach", "opp_seq", "n")

  def __init__(self, c: CompiledSequences, opp_reach: np.ndarray,
               opp_seq: np.ndarray, n: int):
    self.chance, self.opp = c.history_chance, c.history_opponent_entry
    self.opp_reach, self.opp_seq, self.n = opp_reach, opp_seq, n

  def __len__(self) -> int:
    return self.n

  def __getitem__(self, row: int):
    return self.chance[row] * self.opp_reach[self.opp_seq[self.opp[row]]]


class Growth:
  """The expansion phase of one search.

  Attributes:
    deadline: a `time.monotonic()` time the search must be done by, or
      None (see `_expansion_fits`).
    simulation_ends: how simulations ended: "terminal" (every walk drawn
      ended at a terminal in the tree), "complete" (the tree under the
      growth root was), "expanded" (a leaf), "added" (a child), "too slow
      to expand" (see `_expansion_fits`), "dropped" (the walked history's
      child missing from a sampled public state).
    redraws: walks drawn again (see `_simulate`).
  """

  def __init__(self, tree: SearchTree, grow_node: SearchNode,
               updates: RegretUpdates, config, rng: np.random.Generator,
               timing: LeafTiming):
    self.tree = tree
    self.grow_node = grow_node
    self.updates = updates
    self.config = config
    self.rng = rng
    self.timing = timing
    game = tree.game
    self.utility_range = float(game.max_utility() - game.min_utility()) or 1.0
    self.deadline: float | None = None
    self.simulation_ends: collections.Counter = collections.Counter()
    self.redraws = 0
    self._zeros = [np.zeros((0, 1)), np.zeros((0, 1))]  # see _no_visits

  def row_normalisers(self, compiled, reaches) -> list:
    """Per player, each row's chance reach times the opponent's reach,
    summed over the row's histories (PUCT's value scale), indexed by row."""
    sides = self.tree.sides
    if sides[0].history_rows_in_order and sides[1].history_rows_in_order:
      return [InOrderNormalisers(compiled[p], reaches[1 - p],
                                  compiled[1 - p].entry_seq, sides[p].num_rows)
              for p in range(2)]
    out = []
    for p in range(2):
      c = compiled[p]
      side = self.tree.sides[p]
      o = 1 - p
      opp_reach = reaches[o][compiled[o].entry_seq[c.history_opponent_entry]]
      out.append(np.bincount(c.history_row,
                             weights=c.history_chance * opp_reach,
                             minlength=side.num_rows))
    return out

  def select(self, p: int, row: int, normaliser: float,
              virtual: np.ndarray) -> int:
    """Samples a slot of `row` from 1/2 PUCT + 1/2 the CFR average policy
    (see the module docstring)."""
    side = self.tree.sides[p]
    k = len(side.row_actions[row])
    kernels = growing_passes.kernels()
    last = self.updates.last_values[p]
    seq_values, row_values, (num_root, width) = (
        (None, None, (0, 1)) if last is None else last)
    if kernels is not None:
      return kernels.cfr_select(
          _EMPTY if seq_values is None else seq_values,
          _EMPTY if seq_values is None else row_values,
          num_root, width, side.active, side.visits, virtual, side.prior,
          side.avg, side.policy, row, k, normaliser, self.utility_range,
          self.config.c_puct, self.config.virtual_loss, self.rng.random())

    active = side.active[row, :k]
    if seq_values is not None and row < len(row_values):
      base = num_root + row * width
      q = seq_values[base:base + k].copy()
      fpu = row_values[row]
      q = np.where(active, q, fpu)
      q = q / normaliser if normaliser > 0 else np.zeros(k)
    else:
      q = np.zeros(k)
    visits = side.visits[row, :k]
    pending = virtual[row, :k]
    u = self.utility_range
    total = visits.sum() + pending.sum()
    score = (q - self.config.virtual_loss * u * pending /
             (1.0 + visits + pending)
             + self.config.c_puct * u * side.prior[row, :k] *
             math.sqrt(total + 1.0) / (1.0 + visits + pending))
    puct = np.zeros(k)
    puct[int(np.argmax(score))] = 1.0
    avg = np.where(active, side.avg[row, :k], 0.0)
    total_avg = avg.sum()
    cfr = avg / total_avg if total_avg > 0 else side.policy[row, :k]
    if cfr.sum() <= 0:
      cfr = active / max(active.sum(), 1)
    select = 0.5 * puct + 0.5 * cfr
    return int(self.rng.choice(k, p=select / select.sum()))

  def _top_k(self, node: SearchNode) -> list[list[int]] | None:
    k = self.config.top_k
    if k == 0 or node.player < 0:
      return None
    ps = node.ps
    q = node.player
    chosen = []
    for j in range(ps.num_infostates(q)):
      legal = ps.legal_actions(j)
      if node.prior is None:
        chosen.append(legal[:k])
        continue
      prior = node.prior[j, legal]
      if k == 1:
        # (The stable sort's first: the first of the largest.)
        chosen.append([legal[int(np.argmax(prior))]])
        continue
      order = np.argsort(-prior, kind="stable")[:k]
      chosen.append([legal[i] for i in order])
    return chosen

  def _no_visits(self, p: int) -> np.ndarray:
    """Zeros in the shape of p's CFR arrays (no pending visits; shared,
    never written)."""
    side = self.tree.sides[p]
    zeros = self._zeros[p]
    if zeros.shape != (side.capacity, side.width):
      zeros = self._zeros[p] = np.zeros((side.capacity, side.width))
    return zeros

  def _simulate(self, beliefs: np.ndarray, normalisers, virtual) -> None:
    """One expansion simulation from the growth root, whose histories are
    sampled with probabilities `beliefs`; `virtual`: the phase's pending
    visits per player ([capacity, width], added to here), or None (a
    phase of one simulation: none).

    A walk that ends at a terminal public state already in the tree adds
    nothing (in Leduc, 41% of a 100-simulation root search's walks did,
    and more in the subgames): it is drawn again, up to
    `config.walks_per_simulation` walks in all, until one adds to the tree,
    and not at all once the tree under the growth root is complete (every
    public state in it)."""
    ends = self.simulation_ends
    for draw in range(self.config.walks_per_simulation):
      if self.grow_node.closed:
        ends["complete"] += 1
        return
      self.redraws += bool(draw)
      walked = self._walk(beliefs, normalisers, virtual)
      if walked is None:
        return
      self._close(walked)
    ends["terminal"] += 1

  def _close(self, walked: list[int]) -> None:
    """Marks as closed the nodes of a walk that ended at a terminal (node
    indices, root first) whose subtrees are complete: expanded, with every
    child in the tree and closed. Stops at the first that is not."""
    nodes = self.tree.nodes
    for index in reversed(walked):
      node = nodes[index]
      if node.closed:
        continue
      if not (node.expanded and
              len(node.children) == len(node.ps.child_sequence()) and
              all(nodes[c].closed for c in node.children.values())):
        return
      node.closed = True

  def _walk(self, beliefs: np.ndarray, normalisers, virtual
            ) -> list[int] | None:
    """One walk of `_simulate`: the visited nodes' indices (the growth root
    first) where it ended at a terminal public state already in the tree,
    else None (it added to the tree, or stopped: see simulation_ends)."""
    tree = self.tree
    nodes, sides, ends = tree.nodes, tree.sides, self.simulation_ends
    node = self.grow_node
    h = 0 if len(beliefs) == 1 else draws.draw(self.rng, beliefs)
    path: list[tuple[int, int, int]] = []  # (player, row, slot)
    walked: list[int] | None = None
    visited: list[int] = []
    while True:
      q = node.player
      visited.append(node.index)
      if q == TERMINAL:
        walked = visited
        break
      if not node.expanded:
        actions = self._top_k(node)
        if self._expansion_fits(node, actions):
          self.timing.timed(tree.expand, node, actions)
          ends["expanded"] += 1
        else:
          ends["too slow to expand"] += 1
        break
      ps = node.ps
      if q == CHANCE:
        outcomes = node.chance_cdfs.get(h)
        if outcomes is None:
          actions, probs = zip(*ps.histories[h].chance_outcomes())
          outcomes = node.chance_cdfs[h] = (actions,
                                            draws.cumulative(probs))
        a = int(outcomes[0][draws.search(outcomes[1], self.rng.random())])
      else:
        rows = node.rows
        row = int(rows[0] if len(rows) == 1 else
                  rows[ps.history_infostate[q][h]])
        side = sides[q]
        norm = normalisers[q]
        norm = norm[row] if row < len(norm) else 0.0
        pending = self._no_visits(q) if virtual is None else virtual[q]
        slot = self.select(q, row, norm, pending)
        a = side.row_actions[row][slot]
        if virtual is not None:
          pending[row, slot] += 1
        path.append((q, row, slot))
      t = node.transition(h, a)
      if t is None:  # a sampled public state dropped this child
        ends["dropped"] += 1
        break
      c, h_child = t
      child = node.children.get(c)
      if child is None:
        self.timing.timed(tree.add_child, node, h, a)
        ends["added"] += 1
        break
      node = nodes[child]
      h = h_child
    for q, row, slot in path:
      sides[q].visits[row, slot] += 1
    return walked

  def _expansion_fits(self, node: SearchNode, actions) -> bool:
    """False under a deadline where the leaves expanding `node` would add
    (`actions`: see SearchTree.expand) would take more than EXPAND_SHARE
    of the time left, timed per leaf added in this search; the simulation
    then stops at `node`, which stays a leaf."""
    seconds, leaves = self.timing.seconds, self.timing.leaves
    if self.deadline is None or not leaves:
      return True
    ps = node.ps
    if ps.children_expanded or ps.observer.source == "perfect_information":
      count = len(ps.child_sequence())  # built already, or lazily
    else:
      # Counting would build them (gin_rummy: 1.85 s, with 0.03 s left):
      # the one leaf an expansion adds at least must fit.
      count = 1
    if actions is not None:
      count = min(count, sum(len(a) for a in actions))
    left = self.deadline - time.monotonic()
    return count * seconds / leaves <= EXPAND_SHARE * max(left, 0.0)

  def run(self, count: int) -> None:
    """Runs `count` expansion simulations (one phase)."""
    tree = self.tree
    compiled = tree.compiled()
    reaches = self.updates.reaches
    if reaches is None:
      reaches = self.updates.current_reaches(compiled)
      self.updates.reaches = reaches
    normalisers = self.row_normalisers(compiled, reaches)
    # Beliefs at the growth root (fixed for the phase): chance reach times
    # both players' reach of each history, or chance alone if that is zero.
    node = self.grow_node
    ps = node.ps
    if len(ps.histories) == 1:
      beliefs = _ONE
    else:
      beliefs = ps.chance_reach.copy()
      for p in range(2):
        lo = node.entry_start[p]
        entries = lo + ps.history_infostate[p]
        beliefs *= reaches[p][compiled[p].entry_seq[entries]]
      if not beliefs.sum() > 0:
        beliefs = ps.chance_reach.copy()
      beliefs /= beliefs.sum()
    if count == 1:
      # (Virtual losses only steer the later simulations of a phase.)
      self._simulate(beliefs, normalisers, None)
      return
    virtual = [np.zeros((s.capacity, s.width)) for s in tree.sides]
    for _ in range(count):
      # Growth may add rows: keep the virtual-loss arrays in shape.
      for p in range(2):
        s = tree.sides[p]
        if virtual[p].shape != (s.capacity, s.width):
          grown = np.zeros((s.capacity, s.width))
          grown[:virtual[p].shape[0], :virtual[p].shape[1]] = virtual[p]
          virtual[p] = grown
      self._simulate(beliefs, normalisers, virtual)
