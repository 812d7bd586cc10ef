"""GT-CFR's search tree (DESIGN.md sections 4 and 5): public states held as
nodes, and per player the sequences, rows and CFR state of
`cfr.PlayerSequences`, grown by appending as the search adds public states.

A node is interior once expanded: the acting player's rows are made then
(`_make_rows`), and an action of a row becomes active once its children are
in the tree (`_update_active`), after which regret matching runs over the
active actions only. Terminal nodes add their histories' payoffs to the
terminal arrays; the other nodes without children are the leaves that a
value function values.
"""

from __future__ import annotations

import itertools
from typing import Sequence

import numpy as np

from open_spiel_sog.algorithms.cfr import CompiledSequences
from open_spiel_sog.algorithms.cfr import PlayerSequences
from open_spiel_sog.algorithms.cfr.growing_passes import rematch_rows
from open_spiel_sog.public_state import LazyChildren
from open_spiel_sog.public_state import PublicState
from open_spiel_sog.public_state import TERMINAL
from open_spiel_sog.utils.growing_array import GrowingArray


class SearchNode:
  """One public state of the search tree."""

  __slots__ = ("ps", "index", "parent", "depth", "player", "entry_start",
               "rows", "expanded", "children", "_prior", "_latest",
               "transitions", "_infostate_histories", "chance_cdfs",
               "closed", "_positions")

  def __init__(self, ps: PublicState, index: int, parent: int, depth: int,
               latest: list | None = None):
    self.ps = ps
    self.index = index
    self.parent = parent
    self.depth = depth
    self.player = ps.current_player()
    # Whether every public state under this one is in the tree (terminals;
    # others are marked by Growth._close when a walk finds them complete).
    self.closed = self.player == TERMINAL
    self.entry_start = [0, 0]
    self.rows: np.ndarray | None = None  # acting player's rows (interior)
    self.expanded = False
    self.children: dict[int, int] = {}  # index in ps.child_sequence() -> node
    # [n_q, num_actions], a prior given to this node.
    self._prior: np.ndarray | None = None
    # The tree's [LazyPriors, {node index: query}] of its latest value call
    # (SearchTree.latest_priors), shared by its nodes.
    self._latest = latest if latest is not None else [None, None]
    self.transitions: dict[tuple[int, int], tuple[int, int]] | None = None
    # Perfect information: action -> index in ps.child_sequence() (the
    # LazyChildren's, whose order `children()` keeps), once looked up.
    self._positions: dict[int, int] | None = None
    self._infostate_histories: list[list[int]] | None = None
    # At a chance node: history -> (outcomes, their normalised cumulative
    # probabilities), as simulations draw them.
    self.chance_cdfs: dict[int, tuple] = {}

  @property
  def prior(self) -> np.ndarray | None:
    """The latest prior [n_q, num_actions] of the acting player (None:
    none yet): the latest value call's, computed when first read, where
    this node was one of its leaves; else the one given."""
    priors, where = self._latest
    if where is not None:
      k = where.get(self.index)
      if k is not None:
        return priors[k]
    return self._prior

  @prior.setter
  def prior(self, value: np.ndarray | None) -> None:
    self._prior = value

  def infostate_histories(self) -> list[list[int]]:
    """The acting player's histories per infostate (cached)."""
    if self._infostate_histories is None:
      out = [[] for _ in range(self.ps.num_infostates(self.player))]
      for h, j in enumerate(self.ps.history_infostate[self.player].tolist()):
        out[j].append(h)
      self._infostate_histories = out
    return self._infostate_histories

  def transition(self, history: int, action: int) -> tuple[int, int] | None:
    """(index in ps.child_sequence(), history index there) reached by `action`,
    or None where a sampled public state dropped that child."""
    positions = self._positions
    if positions is not None:
      c = positions.get(action) if history == 0 else None
      return None if c is None else (c, 0)
    if self.transitions is None:
      children = self.ps.child_sequence()
      if isinstance(children, LazyChildren):
        self._positions = children.positions()
        c = children.position(history, action)
        return None if c is None else (c, 0)
      table = {}
      for c, child in enumerate(children):
        table.update(zip(
            zip(child.parent_history.tolist(), child.parent_action.tolist()),
            zip(itertools.repeat(c), itertools.count())))
      self.transitions = table
    return self.transitions.get((history, action))


def _fill_row(side: PlayerSequences, row: int, legal: Sequence[int],
              prior: np.ndarray | None) -> None:
  """Marks `row`'s `legal` actions and sets its prior: `prior` (over all
  actions) restricted to them and renormalised, uniform where it is None or
  sums to 0."""
  k = len(legal)
  side.legal[row, :k] = True
  if prior is not None:
    p = prior[legal]
    total = p.sum()
    side.prior[row, :k] = p / total if total > 0 else 1.0 / k
  else:
    side.prior[row, :k] = 1.0 / k


class SearchTree:
  """A growing public tree with per-player sequence arrays and CFR state."""

  def __init__(self, root: PublicState):
    self.game = root.observer.game
    self.num_actions = self.game.num_distinct_actions()
    self.root_ps = root
    self.nodes: list[SearchNode] = []
    self.node_of: dict[int, int] = {}  # ps.id -> node index
    self.sides = (PlayerSequences(), PlayerSequences())
    self.terminal_entry0: list[np.ndarray] = []
    self.terminal_entry1: list[np.ndarray] = []
    self.terminal_weight: list[np.ndarray] = []
    self._compiled: tuple[CompiledSequences, CompiledSequences] | None = None
    self.compilations = 0  # counts compiled()'s rebuilds
    # The leaves (non-terminal nodes without children), by node index, and
    # every node that became one (`leaves_added`) or stopped being one
    # (`leaves_expanded`), in order: consumers catch up from the logs.
    self._leaf_set: dict[int, None] = {}
    self._leaves: list[int] | None = None
    self._leaves_array: np.ndarray | None = None
    # [LazyPriors, {node index: query}] of the latest value call whose
    # priors are computed when read (see SearchNode.prior), or [None, None].
    self.latest_priors: list = [None, None]
    # Per node and player: its first entry and its number of entries (the
    # player's infostates in its public state).
    self.node_entry_start = (GrowingArray(), GrowingArray())
    self.node_entries = (GrowingArray(), GrowingArray())
    self.leaves_added: list[int] = []
    self.leaves_expanded: list[int] = []
    # Bumped whenever the leaves change (a node added or expanded): what is
    # computed from the leaves is cached under it.
    self.version = 0
    # (e0, e1, w) grown from the terminal_* lists, and how many of their
    # arrays they hold (see terminal_arrays).
    self._terminals = (GrowingArray(), GrowingArray(), GrowingArray(np.float64))
    self._terminals_taken = 0
    self._add_root(root)

  # --- Structure -------------------------------------------------------------

  def __len__(self) -> int:
    return len(self.nodes)

  def node(self, ps: PublicState) -> SearchNode | None:
    i = self.node_of.get(ps.id)
    return None if i is None else self.nodes[i]

  def _add_root(self, ps: PublicState) -> None:
    """Adds `ps` as the tree's root (node 0)."""
    node = SearchNode(ps, 0, -1, 0, self.latest_priors)
    self.nodes.append(node)
    self.node_of[ps.id] = 0
    for p in range(2):
      side = self.sides[p]
      n = ps.num_infostates(p)
      self.node_entry_start[p].append(0)
      self.node_entries[p].append(n)
      side.num_root = n
      side.entry_row.fill(-1, n)
      side.entry_seq_row.fill(-1, n)
      side.entry_seq_slot.extend(np.arange(n))
      side.entry_parent.fill(-1, n)
      side.entry_parent_row.fill(-1, n)
      side.entry_parent_slot.fill(-1, n)
      side.entry_depth.fill(0, n)
    self._added([node])

  def _add_children(self, pss: Sequence[PublicState], parent: int
                    ) -> list[int]:
    """Adds `pss`, children of node `parent`, in order; returns their node
    indices. Each player's entries of all of them are appended at once."""
    if not pss:
      return []
    parent_node = self.nodes[parent]
    depth = parent_node.depth + 1
    if (len(pss) == 1 and len(pss[0].histories) == 1 and
        len(parent_node.ps.histories) == 1):
      return [self._add_only_child(pss[0], parent_node, depth)]
    nodes = []
    for ps in pss:
      node = SearchNode(ps, len(self.nodes), parent, depth, self.latest_priors)
      self.nodes.append(node)
      self.node_of[ps.id] = node.index
      nodes.append(node)
    for p in range(2):
      side = self.sides[p]
      start = side.num_entries
      base = parent_node.entry_start[p]
      acting = parent_node.player == p  # p acted: new sequences (row, slot)
      parent_rows = parent_node.rows.tolist() if acting else None
      parent_entries: list[int] = []
      rows: list[int] = []
      slots: list[int] = []
      starts: list[int] = []
      for node in nodes:
        ps = node.ps
        node.entry_start[p] = start + len(parent_entries)
        starts.append(node.entry_start[p])
        # Each infostate's entry hangs below the parent's entry of its
        # first history (the same for all of them: perfect recall).
        parent_inf, actions = ps.parent_links(p)
        parent_entries.extend([base + j for j in parent_inf])
        if acting:
          node_rows = [parent_rows[j] for j in parent_inf]
          rows.extend(node_rows)
          slots.extend([side.row_actions[row].index(a)
                        for row, a in zip(node_rows, actions)])
      self.node_entry_start[p].extend(starts)
      self.node_entries[p].extend([ps.num_infostates(p) for ps in pss])
      n = len(parent_entries)
      side.entry_row.fill(-1, n)
      side.entry_parent.extend(parent_entries)
      side.entry_depth.fill(depth, n)
      if acting:
        side.entry_seq_row.extend(rows)
        side.entry_seq_slot.extend(slots)
        side.entry_parent_row.extend(rows)
        side.entry_parent_slot.extend(slots)
      else:  # the parent entry's sequence
        at = np.asarray(parent_entries, dtype=np.int64)
        side.entry_seq_row.extend(side.entry_seq_row.buf[at])
        side.entry_seq_slot.extend(side.entry_seq_slot.buf[at])
        side.entry_parent_row.fill(-1, n)
        side.entry_parent_slot.fill(-1, n)
    self._added(nodes)
    return [node.index for node in nodes]

  def _add_only_child(self, ps: PublicState, parent_node: SearchNode,
                      depth: int) -> int:
    """`_add_children` of a one-history child of a one-history parent (a
    perfect-information search adds one at a time), element by element: the
    same entries, without the lists and arrays of the general case (it was
    a sixth of a connect_four simulation). Each player has one infostate in
    each, the child's below the parent's."""
    node = SearchNode(ps, len(self.nodes), parent_node.index, depth,
                 self.latest_priors)
    self.nodes.append(node)
    self.node_of[ps.id] = node.index
    action = int(ps.parent_action[0])
    for p in range(2):
      side = self.sides[p]
      start = side.entry_seq_row.n
      base = parent_node.entry_start[p]
      node.entry_start[p] = start
      self.node_entry_start[p].append(start)
      self.node_entries[p].append(1)
      side.entry_row.append(-1)
      side.entry_parent.append(base)
      side.entry_depth.append(depth)
      if parent_node.player == p:
        row = int(parent_node.rows[0])
        slot = side.row_actions[row].index(action)
        side.entry_seq_row.append(row)
        side.entry_seq_slot.append(slot)
        side.entry_parent_row.append(row)
        side.entry_parent_slot.append(slot)
      else:
        side.entry_seq_row.append(side.entry_seq_row.buf[base])
        side.entry_seq_slot.append(side.entry_seq_slot.buf[base])
        side.entry_parent_row.append(-1)
        side.entry_parent_slot.append(-1)
    self._added([node])
    return node.index

  def _added(self, nodes: list[SearchNode]) -> None:
    """Files new nodes as terminals or leaves."""
    for node in nodes:
      ps = node.ps
      if ps.is_terminal():
        self.terminal_entry0.append(node.entry_start[0] +
                                    ps.history_infostate[0])
        self.terminal_entry1.append(node.entry_start[1] +
                                    ps.history_infostate[1])
        self.terminal_weight.append(ps.chance_reach * ps.returns0())
      else:
        self._leaf_set[node.index] = None
        self.leaves_added.append(node.index)
        self._leaves = None
    self._compiled = None
    self.version += 1

  def _make_rows(self, node: SearchNode) -> None:
    """Creates the acting player's rows when `node` becomes interior."""
    q = node.player
    side = self.sides[q]
    ps = node.ps
    if len(ps.histories) == 1:
      self._make_one_row(node)
      return
    n = ps.num_infostates(q)
    legal = [ps.legal_actions(j) for j in range(n)]
    first_row = side.num_rows
    side.ensure(first_row + n, max(len(a) for a in legal))
    node.rows = np.arange(first_row, first_row + n)
    entries = np.arange(node.entry_start[q], node.entry_start[q] + n)
    # A row's level: one more than its parent sequence's row's (0 below a
    # root sequence).
    srow = side.entry_seq_row.buf[entries]
    levels = np.where(srow < 0, 0, side.row_level.buf[np.maximum(srow, 0)] + 1)
    side.row_entry.extend(entries)
    side.entry_row.buf[entries] = node.rows
    side.row_level.extend(levels)
    side.row_actions.extend(legal)
    # (Rows past num_rows are untouched zeros: `ensure` grows with zeros and
    # nothing writes past the rows made.)
    prior = node.prior
    if all(a == legal[0] for a in legal):
      # The same actions in every row (public actions: Leduc, liar's
      # dice): the rows at once, with the arithmetic of the loop below.
      rows, k = slice(first_row, first_row + n), len(legal[0])
      side.legal[rows, :k] = True
      if prior is not None:
        p = prior[:, legal[0]]
        total = p.sum(axis=1, keepdims=True)
        side.prior[rows, :k] = np.where(
            total > 0, p / np.where(total > 0, total, 1.0), 1.0 / k)
      else:
        side.prior[rows, :k] = 1.0 / k
    else:
      for j in range(n):
        _fill_row(side, first_row + j, legal[j],
                  None if prior is None else prior[j])
    o = 1 - q
    if len(ps.histories) == 1:
      side.history_row.append(first_row)
      side.history_opponent_entry.append(node.entry_start[o])
      side.history_chance.append(ps.chance_reach[0])
    else:
      side.history_row.extend(first_row + ps.history_infostate[q])
      side.history_rows_in_order = False
      side.history_opponent_entry.extend(node.entry_start[o] +
                                         ps.history_infostate[o])
      side.history_chance.extend(ps.chance_reach)
    self._compiled = None

  def _make_one_row(self, node: SearchNode) -> None:
    """`_make_rows` of a one-history node (one row), element by element:
    the same numbers without the general case's arrays."""
    q = node.player
    side = self.sides[q]
    ps = node.ps
    legal = ps.legal_actions(0)
    k = len(legal)
    row = side.num_rows
    side.ensure(row + 1, k)
    node.rows = np.arange(row, row + 1)
    entry = node.entry_start[q]
    srow = int(side.entry_seq_row.buf[entry])
    side.row_entry.append(entry)
    side.entry_row.buf[entry] = row
    side.row_level.append(0 if srow < 0 else int(side.row_level.buf[srow]) + 1)
    side.row_actions.append(legal)
    prior = node.prior
    _fill_row(side, row, legal, None if prior is None else prior[0])
    side.history_row.append(row)
    side.history_opponent_entry.append(node.entry_start[1 - q])
    side.history_chance.append(ps.chance_reach[0])
    self._compiled = None

  def expand(self, node: SearchNode,
             actions: Sequence[Sequence[int]] | None = None) -> int:
    """Adds children of `node`: all of them, or, at a decision node, those
    reached by `actions[j]` (a list of actions per infostate j of the acting
    player). Returns the number of public states added."""
    ps = node.ps
    children = ps.child_sequence()
    if node.player >= 0 and node.rows is None:
      self._make_rows(node)
    wanted: set[int]
    if actions is None or node.player < 0:
      wanted = set(range(len(children)))
    elif isinstance(children, LazyChildren):  # one history
      wanted = {children.position(0, int(a)) for a in actions[0]}
      wanted.discard(None)
    else:
      wanted = set()
      for j, acts in enumerate(actions):
        for h in node.infostate_histories()[j]:
          for a in acts:
            t = node.transition(h, int(a))
            if t is not None:
              wanted.add(t[0])
    new = [c for c in sorted(wanted) if c not in node.children]
    indices = self._add_children([children[c] for c in new], node.index)
    node.children.update(zip(new, indices))
    added = len(new)
    if not node.expanded:
      node.expanded = True
      del self._leaf_set[node.index]
      self.leaves_expanded.append(node.index)
      self._leaves = None
      self.version += 1
    if node.player >= 0:
      self._update_active(node, full=len(node.children) == len(children))
    return added

  def add_child(self, node: SearchNode, history: int, action: int) -> int:
    """Adds the child reached by `action` from `history` (1 if new)."""
    t = node.transition(history, action)
    if t is None or t[0] in node.children:
      return 0
    c = t[0]
    children = node.ps.child_sequence()
    (node.children[c],) = self._add_children([children[c]], node.index)
    if len(node.children) == len(children):
      self._update_active(node, full=True)
    elif isinstance(children, LazyChildren):
      # Perfect information: the new child's action (slot c) alone.
      self._update_active(node, full=False, slot=c)
    else:
      # Only the (infostate, action) pairs that lead into the new child can
      # have changed.
      child = children[c]
      inf = node.ps.history_infostate[node.player]
      pairs = {(int(inf[h]), int(a)) for h, a in zip(
          child.parent_history.tolist(), child.parent_action.tolist())}
      self._update_active(node, full=False, only=pairs)
    return 1

  def _update_active(self, node: SearchNode, full: bool,
                     only: set[tuple[int, int]] | None = None,
                     slot: int | None = None) -> None:
    """Marks the actions of `node`'s rows whose children are in the tree
    as active (`full`: all of them; `only`: a set of (infostate, action)
    pairs, the only ones that may have changed; `slot`: in a perfect-
    information node, the one action whose child was added), and re-runs
    regret matching on the rows concerned."""
    q = node.player
    side = self.sides[q]
    rows = node.rows.tolist()
    if slot is not None:
      side.active[rows[0], slot] = True
      spans = [(rows[0], rows[0] + 1)]
    elif full and not any(child.sampled
                          for child in node.ps.child_sequence()):
      # (Where a child is a sample, an action whose children the sample
      # dropped has none in the tree: the rows are checked one by one
      # below, or such an action would be played with the value 0.)
      for row in rows:
        side.active[row, :len(side.row_actions[row])] = True
      spans = [(rows[0], rows[-1] + 1)]
    elif isinstance(node.ps.child_sequence(), LazyChildren):
      # Perfect information: one history and one row, whose k-th action
      # leads to child k; an action is active once its child is in.
      active = side.active[rows[0]]
      for c in node.children:  # (few: top_k; scalar writes beat a list)
        active[c] = True
      spans = [(rows[0], rows[0] + 1)]
    else:
      infostates = (range(len(rows)) if only is None else
                    sorted({j for j, _ in only}))
      for j in infostates:
        row = rows[j]
        hist = node.infostate_histories()[j]
        for k, a in enumerate(side.row_actions[row]):
          if only is not None and (j, a) not in only:
            continue
          # An action is active once its children are all in the tree (in
          # a sampled public state: those of its children the sample kept,
          # and at least one).
          kept = [t for t in (node.transition(h, a) for h in hist)
                  if t is not None]
          side.active[row, k] = bool(kept) and all(
              t[0] in node.children for t in kept)
      # (A node's rows are consecutive.)
      spans = ([(rows[0], rows[-1] + 1)] if only is None else
               [(rows[j], rows[j] + 1) for j in infostates])
    # Regret matching over the (possibly new) active set.
    for begin, end in spans:
      rematch_rows(side, begin, end)

  def leaves(self) -> list[int]:
    """Non-terminal nodes without children in the tree (valued by the value
    function)."""
    if self._leaves is None:
      self._leaves = list(self._leaf_set)
      self._leaves_array = None
    return self._leaves

  def leaves_array(self) -> np.ndarray:
    """`leaves()` as an int64 array."""
    leaves = self.leaves()
    if self._leaves_array is None:
      self._leaves_array = np.asarray(leaves, dtype=np.int64)
    return self._leaves_array

  # --- Compiled arrays -------------------------------------------------------

  def compiled(self) -> tuple[CompiledSequences, CompiledSequences]:
    if self._compiled is None:
      self._compiled = (self.sides[0].compile(), self.sides[1].compile())
      self.compilations += 1
    return self._compiled

  def terminal_arrays(self):
    """(entry of player 0 [K], entry of player 1 [K], chance_reach * u0 [K])
    over the terminal histories of the tree."""
    self._terminals_taken = self.take_terminals(self._terminals,
                                                self._terminals_taken)
    return tuple(g.view() for g in self._terminals)

  def take_terminals(self, grown: tuple[GrowingArray, GrowingArray,
                                       GrowingArray], taken: int) -> int:
    """Appends the terminal arrays after the first `taken` (terminal_entry0,
    terminal_entry1, terminal_weight in turn) to `grown`; returns how many
    are taken now."""
    if taken == len(self.terminal_weight):
      return taken
    for g, chunks in zip(grown, (self.terminal_entry0, self.terminal_entry1,
                                 self.terminal_weight)):
      for chunk in chunks[taken:]:
        g.extend(chunk)
    return len(self.terminal_weight)
