"""Growing-tree CFR (GT-CFR, Algorithm 1 of the SoG paper; DESIGN.md 5).

`search(root, value_fn, config)` grows a public tree from `root` and runs
public-tree CFR+ on it:

    for i in range(s // ceil(c)):            # s = simulations, c = expansions
      run ceil(1 / c) CFR+ updates on the tree    # per update (may be < 1)
      run ceil(c) expansion simulations

Regret update phase: per player, one down pass (reach of every sequence)
and one up pass (counterfactual values) over the player's sequences grouped by
the number of own actions before them, a few numpy gathers/scatters per
level; frontier leaves are valued by the value function in one batched call
per player update; regret matching+ and an average weighted by a power of the
update's number (`GTCFRConfig.averaging_power`: linear by default,
quadratic as an option, better on some games and worse on others). Alternating
updates by default (they measured better; `GTCFRConfig.alternating`), the
paper's simultaneous updates as an option.

Expansion phase: a simulation samples a history at the growth root from the
current beliefs, then descends: chance samples its outcome; a decision samples
from pi_select = 1/2 pi_PUCT + 1/2 pi_CFR-average at the acting player's
infostate. PUCT uses the infostate's counterfactual action values divided by
its counterfactual reach (so they read as expected utilities), the prior from
the value function, visit counts per infostate and, within one expansion
phase, virtual losses. When the walk reaches a leaf, the leaf gets its top-k
children by prior (k=0: all children); when it picks an action whose child is
not in the tree, that child is added. A walk that ends at a terminal public
state already in the tree adds nothing and is drawn again, up to
`GTCFRConfig.walks_per_simulation` walks (1: the paper's pseudocode, where
such a walk spends a simulation); subtrees found complete are marked closed,
and once the growth root's is, the simulations left walk nothing. CFR runs
over expanded actions only.

Re-solving (DESIGN.md 6): the tree can start as a single branch from the
search root to the public state where the tree may grow (`grow_from`), with
off-branch children as leaves, and a gadget at the root for one player: for
each of that player's root infostates, terminate with the stored
counterfactual value or follow into the subgame, whose follow probabilities
give the player's root range, mixed alpha * follow + (1 - alpha) * r_prev.

The tree (structure and CFR state) is arrays grown by appending; no Python
loop over nodes runs in the regret update. Its passes over rows and entries
run in the C++ shim (`_native/cfr_kernels.h`) where it is built, and in numpy
(a few calls per tree level) without it; both give the same numbers.
"""

from __future__ import annotations

import bisect
import collections
import collections.abc
import dataclasses
import functools
import itertools
import math
import time
from typing import NamedTuple, Sequence

import numpy as np

from open_spiel_sog import _native
from open_spiel_sog.algorithms.sog.value_functions import LazyPriors
from open_spiel_sog.algorithms.sog.value_functions import NetworkLayout
from open_spiel_sog.algorithms.sog.value_functions import PackedQueries
from open_spiel_sog.algorithms.sog.value_functions import Query
from open_spiel_sog.algorithms.sog.value_functions import ValueFunction
from open_spiel_sog.public_state import CHANCE
from open_spiel_sog.public_state import LazyChildren
from open_spiel_sog.public_state import PublicState
from open_spiel_sog.public_state import TERMINAL
from open_spiel_sog.utils import draws


@dataclasses.dataclass(frozen=True)
class GTCFRConfig:
  """Options of a GT-CFR search.

  Attributes:
    simulations: s, the total number of expansion simulations.
    expansions_per_update: c, expansion simulations per regret-update phase;
      fractional c runs ceil(1/c) CFR updates per phase and one simulation.
      The search runs s // ceil(c) phases (at least one).
    top_k: children added when a simulation reaches a leaf: the k actions
      with the highest prior at each infostate (0 = all children, the
      imperfect-information default; 1 is the perfect-information default).
    c_puct: PUCT exploration constant, in units of the game's utility range.
    virtual_loss: penalty per pending visit within one expansion phase, in
      units of the game's utility range.
    alternating: alternate the players' CFR updates (two value-function
      calls per update) instead of updating both at once (the paper's choice).
    averaging_power: weigh update t by t ** averaging_power in the average
      policy and the averaged values (0: uniform, 1: linear, CFR+'s usual
      weighting, 2: quadratic).
    walks_per_simulation: a simulation's walk that ends at a terminal
      public state already in the tree adds nothing; it is drawn again, up
      to this many walks (1: every walk counts as a simulation, as the
      paper's pseudocode reads; see `GTCFR._simulate`).
    record_queries: keep every leaf query (public state and ranges) made.
  """
  simulations: int = 100
  expansions_per_update: float = 1.0
  top_k: int = 0
  c_puct: float = 1.0
  virtual_loss: float = 1.0
  alternating: bool = True
  averaging_power: float = 1.0
  walks_per_simulation: int = 100
  record_queries: bool = True

  def validate(self) -> None:
    if self.simulations < 0:
      raise ValueError(f"simulations must be >= 0, got {self.simulations}")
    if not self.expansions_per_update > 0:
      raise ValueError("expansions_per_update (c) must be > 0, got "
                       f"{self.expansions_per_update}")
    if self.top_k < 0:
      raise ValueError(f"top_k must be >= 0 (0 = all), got {self.top_k}")
    if not (self.averaging_power >= 0 and math.isfinite(self.averaging_power)):
      raise ValueError("averaging_power must be a number >= 0, got "
                       f"{self.averaging_power}")
    if self.walks_per_simulation < 1:
      raise ValueError("walks_per_simulation must be >= 1, got "
                       f"{self.walks_per_simulation}")

  @property
  def phases(self) -> int:
    return max(1, self.simulations // math.ceil(self.expansions_per_update))

  @property
  def updates_per_phase(self) -> int:
    return math.ceil(1.0 / self.expansions_per_update)

  @property
  def simulations_per_phase(self) -> int:
    return 0 if self.simulations == 0 else math.ceil(self.expansions_per_update)


# Seconds per tree node of `GTCFR.result()` in this process's latest search
# of each game: what a time-limited search reserves for its own result (a
# game not searched yet reserves the most any game took).
_RESULT_SECONDS_PER_NODE: dict[str, float] = {}


# Under a deadline, an expansion whose new leaves would take more than this
# share of the time left is skipped (yacht: a chance node of 7,776 rolls).
_EXPAND_SHARE = 0.1


def _result_seconds_per_node(game: str) -> float:
  seconds = _RESULT_SECONDS_PER_NODE.get(game)
  if seconds is None:
    seconds = max(_RESULT_SECONDS_PER_NODE.values(), default=0.0)
  return seconds


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


@dataclasses.dataclass
class Summary:
  """What a search leaves at one public state of its tree: each player's
  range (reach under the average policy) and counterfactual values (under
  the average profile), in the public state's infostate order."""
  ranges: tuple[np.ndarray, np.ndarray]
  values: tuple[np.ndarray, np.ndarray]


class _Node:
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
    # others are marked by GTCFR._close when a walk finds them complete).
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


class _Grow:
  """A 1-D array grown by appending, its buffer doubled as needed: `view()`
  is the filled part without a copy (later appends do not change a view
  taken before them)."""

  __slots__ = ("buf", "n", "cap")

  def __init__(self, dtype=np.int64, row: tuple[int, ...] = ()):
    # (256: a Leduc search's arrays reach hundreds to thousands, and each
    # doubling copies.) `row`: the shape of one element (a 2-d array of
    # rows where it is not empty).
    self.buf = np.zeros((256,) + row, dtype)
    self.n = 0
    self.cap = 256  # len(buf): a search makes thousands of these calls

  def __len__(self) -> int:
    return self.n

  def _grow(self, size: int) -> None:
    grown = np.zeros((max(size, 2 * self.cap),) + self.buf.shape[1:],
                     self.buf.dtype)
    grown[:self.n] = self.buf[:self.n]
    self.buf = grown
    self.cap = len(grown)

  def append(self, value) -> None:
    n = self.n
    if n == self.cap:
      self._grow(n + 1)
    self.buf[n] = value
    self.n = n + 1

  def extend(self, values) -> None:
    n = self.n
    end = n + len(values)
    if end > self.cap:
      self._grow(end)
    self.buf[n:end] = values
    self.n = end

  def fill(self, value, k: int) -> None:
    """Appends `value` k times."""
    n = self.n
    end = n + k
    if end > self.cap:
      self._grow(end)
    self.buf[n:end] = value
    self.n = end

  def view(self) -> np.ndarray:
    return self.buf[:self.n]


class _Side:
  """One player's entries (public state, infostate) and rows (decisions)."""

  def __init__(self):
    # Entries. seq = (srow, sslot): srow -1 means the root sequence sslot.
    self.e_srow = _Grow()
    self.e_sslot = _Grow()
    self.e_parent = _Grow()
    self.e_prow = _Grow()
    self.e_pslot = _Grow()
    self.e_depth = _Grow()
    self.e_row = _Grow()  # the row of each entry, -1 where none (yet)
    self.num_root = 0
    # Rows (infostates where this player acts, in interior nodes).
    self.r_entry = _Grow()
    self.r_level = _Grow()
    self.r_actions: list[list[int]] = []
    # Histories of each row: (row, opponent entry, chance reach).
    self.rh_row = _Grow()
    self.rh_opp = _Grow()
    self.rh_chance = _Grow(np.float64)
    # True while each row has one history, at the row's own index (one-
    # history nodes only: perfect information).
    self.rh_in_order = True
    # CFR state, [capacity, width].
    self.width = 1
    self.capacity = 0
    self.regrets = np.zeros((0, 1))
    self.policy = np.zeros((0, 1))
    self.avg = np.zeros((0, 1))
    self.active = np.zeros((0, 1), dtype=bool)
    self.legal = np.zeros((0, 1), dtype=bool)
    self.prior = np.zeros((0, 1))
    self.visits = np.zeros((0, 1))

  @property
  def num_rows(self) -> int:
    return len(self.r_entry)

  @property
  def num_entries(self) -> int:
    return len(self.e_srow)

  def ensure(self, rows: int, width: int) -> None:
    """Grows the CFR-state arrays to hold `rows` rows of `width` actions."""
    if rows <= self.capacity and width <= self.width:
      return
    cap = max(rows, 2 * self.capacity, 16) if rows > self.capacity else (
        self.capacity)
    new_width = max(width, self.width)
    n = self.num_rows

    def grow(a, fill=0):
      out = np.full((cap, new_width), fill, dtype=a.dtype)
      out[:a.shape[0], :a.shape[1]] = a
      return out

    self.regrets = grow(self.regrets[:n])
    self.policy = grow(self.policy[:n])
    self.avg = grow(self.avg[:n])
    self.active = grow(self.active[:n], False)
    self.legal = grow(self.legal[:n], False)
    self.prior = grow(self.prior[:n])
    self.visits = grow(self.visits[:n])
    self.capacity = cap
    self.width = new_width


class _InOrderNormalisers:
  """`GTCFR._row_normalisers` of one player whose rows have one history
  each, at the row's own index: each row's product computed when read (a
  walk reads a few; the same numbers as the bincount over all rows)."""

  __slots__ = ("chance", "opp", "opp_reach", "opp_seq", "n")

  def __init__(self, c: "_Compiled", opp_reach: np.ndarray,
               opp_seq: np.ndarray, n: int):
    self.chance, self.opp = c.rh_chance, c.rh_opp
    self.opp_reach, self.opp_seq, self.n = opp_reach, opp_seq, n

  def __len__(self) -> int:
    return self.n

  def __getitem__(self, row: int):
    return self.chance[row] * self.opp_reach[self.opp_seq[self.opp[row]]]


@dataclasses.dataclass
class _Compiled:
  """Arrays of one player derived from the structure (rebuilt on growth)."""
  num_root: int
  width: int
  num_seq: int
  e_seq: np.ndarray  # [E] flat sequence of each entry
  r_parent_seq: np.ndarray  # [R]
  r_level: np.ndarray  # [R] own actions before each row
  rh_row: np.ndarray
  rh_opp: np.ndarray
  rh_chance: np.ndarray
  # Entry-level structure for per-public-state values, by public-state depth
  # (deepest first): (rows at depth d, their entries, entries at d reached by
  # an own action (via a row), the rest (via the parent entry)).
  num_entries: int
  r_entry: np.ndarray
  e_parent: np.ndarray
  e_prow: np.ndarray
  e_pslot: np.ndarray
  entry_row: np.ndarray  # [E] the row of each entry, -1 where none (a view
  # of the side's array: an entry that gains a row later shows it)
  e_depth: np.ndarray  # [E] public-state depth of each entry

  # The numpy passes' groupings (the C++ passes walk rows and entries in
  # the order the tree grew instead).

  @functools.cached_property
  def level_rows(self) -> list[np.ndarray]:
    """Rows by level, shallowest first."""
    levels = self.r_level
    num_levels = int(levels.max()) + 1 if len(levels) else 0
    return [np.nonzero(levels == l)[0] for l in range(num_levels)]

  @functools.cached_property
  def depth_groups(self
                   ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray,
                                   np.ndarray]]:
    """Per public-state depth, deepest first: (rows at depth d, their
    entries, entries at d reached by an own action (via a row), the rest
    (via the parent entry))."""
    e_depth, r_entry, e_prow = self.e_depth, self.r_entry, self.e_prow
    r_depth = e_depth[r_entry] if len(r_entry) else np.zeros(0, np.int64)
    groups = []
    for d in range(int(e_depth.max()), -1, -1):
      rows_d = np.nonzero(r_depth == d)[0]
      at = np.nonzero(e_depth == d)[0] if d > 0 else np.zeros(0, np.int64)
      groups.append((rows_d, r_entry[rows_d], at[e_prow[at] >= 0],
                     at[e_prow[at] < 0]))
    return groups


def _fill_row(side: _Side, row: int, legal: Sequence[int],
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
    self.nodes: list[_Node] = []
    self.node_of: dict[int, int] = {}  # ps.id -> node index
    self.sides = (_Side(), _Side())
    self.t_e0: list[np.ndarray] = []
    self.t_e1: list[np.ndarray] = []
    self.t_w: list[np.ndarray] = []
    self._compiled: tuple[_Compiled, _Compiled] | None = None
    self._last_compiled: list[_Compiled | None] = [None, None]
    # Each player's flat sequence of every entry and parent sequence of
    # every row, grown with the tree (see _compile).
    self._sequences: list[tuple[_Grow, _Grow] | None] = [None, None]
    self.compilations = 0  # counts compiled()'s rebuilds
    # The leaves (non-terminal nodes without children), by node index, and
    # every node that became one (`leaves_added`) or stopped being one
    # (`leaves_expanded`), in order: consumers catch up from the logs.
    self._leaf_set: dict[int, None] = {}
    self._leaves: list[int] | None = None
    self._leaves_array: np.ndarray | None = None
    # [LazyPriors, {node index: query}] of the latest value call whose
    # priors are computed when read (see _Node.prior), or [None, None].
    self.latest_priors: list = [None, None]
    # Per node and player: its first entry and its number of entries (the
    # player's infostates in its public state).
    self.node_entry_start = (_Grow(), _Grow())
    self.node_entries = (_Grow(), _Grow())
    self.leaves_added: list[int] = []
    self.leaves_expanded: list[int] = []
    # (e0, e1, w) grown from t_e0, t_e1, t_w, and how many of their
    # arrays they hold (see terminal_arrays).
    self._terminals = (_Grow(), _Grow(), _Grow(np.float64))
    self._terminals_taken = 0
    self._add_root(root)

  # --- Structure -------------------------------------------------------------

  def __len__(self) -> int:
    return len(self.nodes)

  def node(self, ps: PublicState) -> _Node | None:
    i = self.node_of.get(ps.id)
    return None if i is None else self.nodes[i]

  def _add_root(self, ps: PublicState) -> None:
    """Adds `ps` as the tree's root (node 0)."""
    node = _Node(ps, 0, -1, 0, self.latest_priors)
    self.nodes.append(node)
    self.node_of[ps.id] = 0
    for p in range(2):
      side = self.sides[p]
      n = ps.num_infostates(p)
      self.node_entry_start[p].append(0)
      self.node_entries[p].append(n)
      side.num_root = n
      side.e_row.fill(-1, n)
      side.e_srow.fill(-1, n)
      side.e_sslot.extend(np.arange(n))
      side.e_parent.fill(-1, n)
      side.e_prow.fill(-1, n)
      side.e_pslot.fill(-1, n)
      side.e_depth.fill(0, n)
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
      node = _Node(ps, len(self.nodes), parent, depth, self.latest_priors)
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
          slots.extend([side.r_actions[row].index(a)
                        for row, a in zip(node_rows, actions)])
      self.node_entry_start[p].extend(starts)
      self.node_entries[p].extend([ps.num_infostates(p) for ps in pss])
      n = len(parent_entries)
      side.e_row.fill(-1, n)
      side.e_parent.extend(parent_entries)
      side.e_depth.fill(depth, n)
      if acting:
        side.e_srow.extend(rows)
        side.e_sslot.extend(slots)
        side.e_prow.extend(rows)
        side.e_pslot.extend(slots)
      else:  # the parent entry's sequence
        at = np.asarray(parent_entries, dtype=np.int64)
        side.e_srow.extend(side.e_srow.buf[at])
        side.e_sslot.extend(side.e_sslot.buf[at])
        side.e_prow.fill(-1, n)
        side.e_pslot.fill(-1, n)
    self._added(nodes)
    return [node.index for node in nodes]

  def _add_only_child(self, ps: PublicState, parent_node: _Node,
                      depth: int) -> int:
    """`_add_children` of a one-history child of a one-history parent (a
    perfect-information search adds one at a time), element by element: the
    same entries, without the lists and arrays of the general case (it was
    a sixth of a connect_four simulation). Each player has one infostate in
    each, the child's below the parent's."""
    node = _Node(ps, len(self.nodes), parent_node.index, depth,
                 self.latest_priors)
    self.nodes.append(node)
    self.node_of[ps.id] = node.index
    action = int(ps.parent_action[0])
    for p in range(2):
      side = self.sides[p]
      start = side.e_srow.n
      base = parent_node.entry_start[p]
      node.entry_start[p] = start
      self.node_entry_start[p].append(start)
      self.node_entries[p].append(1)
      side.e_row.append(-1)
      side.e_parent.append(base)
      side.e_depth.append(depth)
      if parent_node.player == p:
        row = int(parent_node.rows[0])
        slot = side.r_actions[row].index(action)
        side.e_srow.append(row)
        side.e_sslot.append(slot)
        side.e_prow.append(row)
        side.e_pslot.append(slot)
      else:
        side.e_srow.append(side.e_srow.buf[base])
        side.e_sslot.append(side.e_sslot.buf[base])
        side.e_prow.append(-1)
        side.e_pslot.append(-1)
    self._added([node])
    return node.index

  def _added(self, nodes: list[_Node]) -> None:
    """Files new nodes as terminals or leaves."""
    for node in nodes:
      ps = node.ps
      if ps.is_terminal():
        self.t_e0.append(node.entry_start[0] + ps.history_infostate[0])
        self.t_e1.append(node.entry_start[1] + ps.history_infostate[1])
        self.t_w.append(ps.chance_reach * ps.returns0())
      else:
        self._leaf_set[node.index] = None
        self.leaves_added.append(node.index)
        self._leaves = None
    self._compiled = None

  def _make_rows(self, node: _Node) -> None:
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
    srow = side.e_srow.buf[entries]
    levels = np.where(srow < 0, 0, side.r_level.buf[np.maximum(srow, 0)] + 1)
    side.r_entry.extend(entries)
    side.e_row.buf[entries] = node.rows
    side.r_level.extend(levels)
    side.r_actions.extend(legal)
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
      side.rh_row.append(first_row)
      side.rh_opp.append(node.entry_start[o])
      side.rh_chance.append(ps.chance_reach[0])
    else:
      side.rh_row.extend(first_row + ps.history_infostate[q])
      side.rh_in_order = False
      side.rh_opp.extend(node.entry_start[o] + ps.history_infostate[o])
      side.rh_chance.extend(ps.chance_reach)
    self._compiled = None

  def _make_one_row(self, node: _Node) -> None:
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
    srow = int(side.e_srow.buf[entry])
    side.r_entry.append(entry)
    side.e_row.buf[entry] = row
    side.r_level.append(0 if srow < 0 else int(side.r_level.buf[srow]) + 1)
    side.r_actions.append(legal)
    prior = node.prior
    _fill_row(side, row, legal, None if prior is None else prior[0])
    side.rh_row.append(row)
    side.rh_opp.append(node.entry_start[1 - q])
    side.rh_chance.append(ps.chance_reach[0])
    self._compiled = None

  def expand(self, node: _Node, actions: Sequence[Sequence[int]] | None = None
             ) -> int:
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
    if node.player >= 0:
      self._update_active(node, full=len(node.children) == len(children))
    return added

  def add_child(self, node: _Node, history: int, action: int) -> int:
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

  def _update_active(self, node: _Node, full: bool,
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
        side.active[row, :len(side.r_actions[row])] = True
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
        for k, a in enumerate(side.r_actions[row]):
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
    kernels = _kernels()
    for begin, end in spans:
      if kernels is not None:
        kernels.cfr_regret_matching(side.regrets, side.active, side.policy,
                                    begin, end)
      else:
        side.policy[begin:end] = _regret_matching(side.regrets[begin:end],
                                                  side.active[begin:end])

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

  def compiled(self) -> tuple[_Compiled, _Compiled]:
    if self._compiled is None:
      self._compiled = (self._compile(0), self._compile(1))
      self.compilations += 1
    return self._compiled

  def _compile(self, p: int) -> _Compiled:
    """p's arrays: extended from the previous compilation where the layout
    (root sequences, row width) is unchanged, else built anew. (After one
    growth a few entries are new: they are converted in Python, which is
    faster than numpy for a handful.)"""
    side = self.sides[p]
    nr, width, rows = side.num_root, side.width, side.num_rows
    entries = side.e_srow.n
    prev = self._last_compiled[p]
    if prev is None or prev.width != width or prev.num_root != nr:
      prev_entries = prev_rows = 0
      self._sequences[p] = (_Grow(), _Grow())
    else:
      prev_entries, prev_rows = prev.num_entries, len(prev.r_entry)
    e_seq_grown, r_parent_seq_grown = self._sequences[p]
    if entries - prev_entries == 1:  # (a perfect-information search's)
      r, sl = int(side.e_srow.buf[prev_entries]), int(
          side.e_sslot.buf[prev_entries])
      e_seq_grown.append(sl if r < 0 else nr + r * width + sl)
    else:
      srow = side.e_srow.buf[prev_entries:entries]
      sslot = side.e_sslot.buf[prev_entries:entries]
      if entries - prev_entries <= 8:
        e_seq_grown.extend([s if r < 0 else nr + r * width + s
                            for r, s in zip(srow.tolist(), sslot.tolist())])
      else:
        e_seq_grown.extend(np.where(srow < 0, sslot,
                                    nr + srow * width + sslot))
    e_seq = e_seq_grown.buf[:entries]
    r_entry = side.r_entry.buf[:rows]
    if rows - prev_rows == 1:
      r_parent_seq_grown.append(e_seq[r_entry[prev_rows]])
    elif rows > prev_rows:
      r_parent_seq_grown.extend(e_seq[r_entry[prev_rows:]])
    compiled = _Compiled(
        nr, width, nr + rows * width, e_seq, r_parent_seq_grown.buf[:rows],
        side.r_level.buf[:rows], side.rh_row.view(), side.rh_opp.view(),
        side.rh_chance.view(), entries, r_entry,
        side.e_parent.buf[:entries], side.e_prow.buf[:entries],
        side.e_pslot.buf[:entries], side.e_row.buf[:entries],
        side.e_depth.buf[:entries])
    self._last_compiled[p] = compiled
    return compiled

  def terminal_arrays(self):
    """(entry of player 0 [K], entry of player 1 [K], chance_reach * u0 [K])
    over the terminal histories of the tree."""
    self._terminals_taken = self.take_terminals(self._terminals,
                                                self._terminals_taken)
    return tuple(g.view() for g in self._terminals)

  def take_terminals(self, grown: tuple[_Grow, _Grow, _Grow], taken: int
                     ) -> int:
    """Appends the terminal arrays after the first `taken` (t_e0, t_e1, t_w
    in turn) to `grown`; returns how many are taken now."""
    if taken == len(self.t_w):
      return taken
    for g, chunks in zip(grown, (self.t_e0, self.t_e1, self.t_w)):
      for chunk in chunks[taken:]:
        g.extend(chunk)
    return len(self.t_w)


def _regret_matching(regrets: np.ndarray, active: np.ndarray) -> np.ndarray:
  positive = np.where(active, np.maximum(regrets, 0.0), 0.0)
  total = positive.sum(axis=1, keepdims=True)
  count = active.sum(axis=1, keepdims=True)
  uniform = np.where(active, 1.0 / np.maximum(count, 1), 0.0)
  return np.where(total > 0.0, positive / np.where(total > 0.0, total, 1.0),
                  uniform)


_EMPTY = np.zeros(0)
_ONE = np.ones(1)
_KERNELS = None  # the shim (its cfr_* passes), or False; see _kernels()


def _kernels():
  """The C++ shim where it is usable and has the passes, else None."""
  global _KERNELS
  if _KERNELS is None:
    shim, _ = _native.load_shim()
    _KERNELS = shim if hasattr(shim, "cfr_reach") else False
  return _KERNELS or None


def _reach(c: _Compiled, policy: np.ndarray, root_range: np.ndarray
           ) -> np.ndarray:
  """The reach of every sequence [S] under `policy`."""
  kernels = _kernels()
  if kernels is not None:
    return kernels.cfr_reach(c.r_parent_seq, policy, root_range, c.width)
  return _numpy_reach(c, policy, root_range)


def _numpy_reach(c: _Compiled, policy: np.ndarray, root_range: np.ndarray
                 ) -> np.ndarray:
  out = np.zeros(c.num_seq)
  out[:c.num_root] = root_range
  rows = (c.num_seq - c.num_root) // max(c.width, 1)
  seq2d = out[c.num_root:].reshape(rows, c.width)
  for idx in c.level_rows:
    seq2d[idx] = out[c.r_parent_seq[idx], None] * policy[idx]
  return out


def _values(c: _Compiled, policy: np.ndarray, direct: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
  """(sequence values [S], row values [R]); `direct` (float64) is consumed."""
  kernels = _kernels()
  if kernels is not None:
    row_values = kernels.cfr_values(c.r_parent_seq, policy, direct,
                                    c.num_root, c.width)
    return direct, row_values
  return _numpy_values(c, policy, direct)


def _numpy_values(c: _Compiled, policy: np.ndarray, direct: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
  seq = direct
  rows = (c.num_seq - c.num_root) // max(c.width, 1)
  action_values = seq[c.num_root:].reshape(rows, c.width)
  row_values = np.zeros(rows)
  for idx in reversed(c.level_rows):
    v = np.einsum("ij,ij->i", action_values[idx], policy[idx])
    row_values[idx] = v
    seq += np.bincount(c.r_parent_seq[idx], weights=v, minlength=c.num_seq)
  return seq, row_values


_SEARCH_IDS = itertools.count()


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


class _Summaries(collections.abc.Mapping):
  """{public state id: Summary} for every node of a finished search's tree
  (those it had when summarised), each built on first access: a
  perfect-information bot reads none, and building them all took 4% of a
  connect_four decision."""

  def __init__(self, tree: SearchTree, e_seq: Sequence[np.ndarray],
               reaches: Sequence[np.ndarray],
               entry_values: Sequence[np.ndarray]):
    self._nodes = tree.nodes[:]
    self._node_of = dict(tree.node_of)
    self._e_seq = e_seq
    self._reaches = reaches
    self._entry_values = entry_values
    self._built: dict[int, Summary] = {}

  def __getitem__(self, ps_id: int) -> Summary:
    summary = self._built.get(ps_id)
    if summary is None:
      node = self._nodes[self._node_of[ps_id]]
      rs, vs = [], []
      for p in range(2):
        lo = node.entry_start[p]
        hi = lo + node.ps.num_infostates(p)
        rs.append(self._reaches[p][self._e_seq[p][lo:hi]])
        vs.append(self._entry_values[p][lo:hi])
      summary = self._built[ps_id] = Summary(ranges=(rs[0], rs[1]),
                                             values=(vs[0], vs[1]))
    return summary

  def __iter__(self):
    return iter(self._node_of)

  def __len__(self) -> int:
    return len(self._node_of)


@dataclasses.dataclass
class SearchResult:
  """The outcome of one GT-CFR search.

  Attributes:
    tree: the final SearchTree (CFR state included).
    root_values: (v0, v1) counterfactual values at the root infostates under
      the average profile.
    summaries: {public state id: Summary} for every public state of the tree.
    queries: every leaf query made (public state and ranges), in order
      (a QueryLog: a sequence of Query built on access).
    updates: CFR updates run.
    root_ranges: (r0, r1) the final root ranges (the gadget player's is its
      average follow-probability mix).
  """
  tree: SearchTree
  root_values: tuple[np.ndarray, np.ndarray]
  summaries: collections.abc.Mapping[int, Summary]
  queries: "QueryLog"
  updates: int
  root_ranges: tuple[np.ndarray, np.ndarray]

  def policy(self, ps: PublicState) -> list[dict[int, float]]:
    """The average policy of the acting player at each of its infostates in
    `ps` (which must be an interior node of the tree): [{action: prob}]."""
    node = self.tree.node(ps)
    if node is None or node.rows is None:
      raise ValueError(f"public state {ps.describe()} is not an interior "
                       "decision node of the search tree")
    side = self.tree.sides[node.player]
    probs = _average_policy(side)[node.rows]
    return [
        {a: float(probs[i, k]) for k, a in enumerate(side.r_actions[row])}
        for i, row in enumerate(node.rows.tolist())
    ]


def _regret_update(side: _Side, c: _Compiled, seq_values: np.ndarray,
                   row_values: np.ndarray, own: np.ndarray,
                   weight: float) -> None:
  """CFR+ on `side`'s rows, in place: the linear average gains weight * own
  reach * policy, regrets gain each active action's advantage (clipped at
  0), and the policy becomes regret matching over the active actions."""
  n = side.num_rows
  kernels = _kernels()
  if kernels is not None:
    kernels.cfr_regret_update(side.regrets, side.avg, side.policy,
                              side.active, seq_values, row_values, own,
                              weight, c.num_root, n, c.width)
    return
  _numpy_regret_update(side, c, seq_values, row_values, own, weight)


def _numpy_regret_update(side: _Side, c: _Compiled, seq_values: np.ndarray,
                         row_values: np.ndarray, own: np.ndarray,
                         weight: float) -> None:
  n = side.num_rows
  action_values = seq_values[c.num_root:].reshape(n, c.width)
  side.avg[:n, :c.width] += (weight * own)[:, None] * side.policy[:n]
  side.regrets[:n] += np.where(side.active[:n],
                               action_values - row_values[:, None], 0.0)
  np.maximum(side.regrets[:n], 0.0, out=side.regrets[:n])
  side.policy[:n] = _regret_matching(side.regrets[:n], side.active[:n])


def _average_policy(side: _Side) -> np.ndarray:
  n = side.num_rows
  avg = np.where(side.active[:n], side.avg[:n], 0.0)
  total = avg.sum(axis=1, keepdims=True)
  current = side.policy[:n]
  return np.where(total > 0.0, avg / np.where(total > 0.0, total, 1.0),
                  current)


class _NetworkPlan(NamedTuple):
  """The leaves of one tree shape as `GTCFR._network_update` reads them."""
  compiled: tuple[_Compiled, _Compiled]
  leaves: list[int]
  key: tuple[int, int, int]
  layout: NetworkLayout
  prior_index: dict[int, int]  # leaf node -> query, where it has a prior
  leaf_args: tuple  # cfr_leaf_inputs' arguments after the root ranges
  update_args: tuple[tuple, tuple]  # per player, cfr_network_update's
  # arguments after the weight


class _NetworkArrays:
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
    self.heads: _Grow | None = None
    self.chance = _Grow(np.float64)  # per node
    self.acting: list = []  # per node: NetworkPart.acting
    self.filled = _Grow(np.bool_)  # per node: its part is in
    self.rows = (_Grow(), _Grow())  # per entry: value row (-1: not filled)

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
      self.heads = _Grow(np.float32, parts[0].head.shape)
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


class GTCFR:
  """One GT-CFR search (see module docstring). Use `search()` for the common
  case; the class exposes the phases for tests."""

  def __init__(self, root: PublicState, value_fn: ValueFunction,
               config: GTCFRConfig | None = None, *,
               ranges: Sequence[np.ndarray] | None = None,
               gadget: Gadget | None = None,
               branch: Sequence[PublicState] = (),
               rng: np.random.Generator | None = None,
               value_players: Sequence[int] = (0, 1)):
    if root.observer.common_payoff:
      raise ValueError(f"GT-CFR searches two-player zero-sum games; "
                       f"{root.observer.game} is common-payoff")
    self.config = config or GTCFRConfig()
    self.value_players = tuple(value_players)
    self._entry_value_sum = [np.zeros(0), np.zeros(0)]
    self._entry_value_weight = [np.zeros(0), np.zeros(0)]
    self._entry_value_grown = [(_Grow(np.float64), _Grow(np.float64))
                               for _ in range(2)]
    self._leaf_entry_cache: dict = {}
    # Where the value function is a network (`network_spec`), updates run
    # through `_network_update` and `_plan` holds the leaves' layout.
    spec = value_fn.network_spec()
    self._network = None if spec is None else _NetworkArrays(spec)
    self._plan: _NetworkPlan | None = None
    self._terminal_seqs = None  # see _terminal_sequences
    self._uid = next(_SEARCH_IDS)
    self.config.validate()
    self.value_fn = value_fn
    self.rng = rng or np.random.default_rng()
    self.tree = SearchTree(root)
    game = self.tree.game
    self.utility_range = float(game.max_utility() - game.min_utility()) or 1.0
    if ranges is None:
      ranges = [np.ones(root.num_infostates(p)) for p in range(2)]
    self.root_ranges = [np.asarray(r, dtype=np.float64).copy() for r in ranges]
    for p in range(2):
      if self.root_ranges[p].shape != (root.num_infostates(p),):
        raise ValueError(
            f"range of player {p} has shape {self.root_ranges[p].shape}; "
            f"{root.describe()} has {root.num_infostates(p)} infostates")
    self.gadget = gadget
    if gadget is not None:
      o = gadget.player
      n = root.num_infostates(o)
      if np.shape(gadget.values) != (n,):
        raise ValueError(f"gadget values have shape {np.shape(gadget.values)}"
                         f", the root has {n} infostates of player {o}")
      if not 0.0 <= gadget.alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {gadget.alpha}")
      self._g_values = np.asarray(gadget.values, dtype=np.float64)
      self._g_regrets = np.zeros((n, 2))  # follow, terminate
      prev = gadget.prev_range
      if prev is None or not np.any(np.asarray(prev) > 0):
        self._g_prev = np.ones(n)
      else:
        prev = np.asarray(prev, dtype=np.float64)
        self._g_prev = prev / prev.max()
      self._g_follow_sum = np.zeros(n)
      self._g_weight = 0.0
      self._set_gadget_range()
    # The initial tree: the branch to the growth root, with every node on it
    # (and the growth root) expanded fully.
    path = list(branch) or [root]
    if path[0] is not root:
      raise ValueError("the branch must start at the search root")
    for a, b in zip(path, path[1:]):
      if b.parent is not a:
        raise ValueError(f"{b.describe()} is not a child of {a.describe()}")
    grow = path[-1]
    if grow.is_player_node():
      # The growth root's prior, for PUCT there (no beliefs known yet).
      prior_ranges = (self.root_ranges if grow is root else
                      [np.ones(grow.num_infostates(p)) for p in range(2)])
      self._grow_prior = self.value_fn.prior(
          Query(grow, (prior_ranges[0], prior_ranges[1])))
    else:
      self._grow_prior = None
    # Seconds per leaf added (building it, and valuing it where the value
    # function's values are fixed sums): [seconds, leaves].
    self._leaf_timing = [0.0, 0]
    for ps in path:
      node = self.tree.node(ps)
      if ps.is_terminal():
        raise ValueError(f"cannot search from terminal {ps.describe()}")
      if ps is grow:
        node.prior = self._grow_prior
      self._timed_growth(self.tree.expand, node)
    self.grow_node = self.tree.node(path[-1])
    self.updates = 0
    # How simulations ended: "terminal" (every walk drawn ended at a
    # terminal in the tree), "complete" (the tree under the growth root
    # was), "expanded" (a leaf), "added" (a
    # child), "too slow to expand" (see _expansion_fits), "dropped" (the
    # walked history's child missing from a sampled public state).
    self.simulation_ends: collections.Counter = collections.Counter()
    self.redraws = 0  # walks drawn again (see _simulate)
    self.queries = QueryLog()
    # Leaves whose values are a fixed sum over their histories
    # (`ValueFunction.fixed_history_values`: rollouts) are folded into
    # arrays like the terminals' instead of being queried on every update,
    # unless queries are recorded (the arrays give the same sums).
    self._fixed = (type(value_fn).fixed_history_values
                   is not ValueFunction.fixed_history_values and
                   not self.config.record_queries)
    # How far the folded arrays follow the tree's leaf logs (added,
    # expanded).
    self._folded = (0, 0)
    # Terminal histories and those of folded leaves together, in the order
    # they came (see _fixed_histories): entries of player 0 and 1, weights,
    # and the flat sequences of those entries under `_together_layout`.
    self._together = (_Grow(), _Grow(), _Grow(np.float64))
    self._together_seqs = (_Grow(), _Grow())
    self._together_layout = None
    self._together_terminals = 0  # terminal nodes taken in
    self._together_slices: dict[int, tuple[int, int]] = {}  # node -> span
    self._last_seq_values: list[np.ndarray | None] = [None, None]
    self._last_row_values: list[np.ndarray | None] = [None, None]
    self._last_layout: list[tuple[int, int]] = [(0, 1), (0, 1)]
    self._reaches: list[np.ndarray | None] = [None, None]
    self._deadline: float | None = None  # see run()
    self._zeros = [np.zeros((0, 1)), np.zeros((0, 1))]  # see _no_visits

  # --- Gadget ----------------------------------------------------------------

  def _set_gadget_range(self) -> None:
    g = self.gadget
    follow = _regret_matching(self._g_regrets, np.ones_like(self._g_regrets,
                                                            dtype=bool))[:, 0]
    self._g_follow = follow
    self.root_ranges[g.player] = g.alpha * follow + (1 - g.alpha) * self._g_prev

  def _update_gadget(self, follow_values: np.ndarray, weight: float) -> None:
    f = self._g_follow
    t = self._g_values
    mixed = f * follow_values + (1 - f) * t
    self._g_regrets[:, 0] += follow_values - mixed
    self._g_regrets[:, 1] += t - mixed
    np.maximum(self._g_regrets, 0.0, out=self._g_regrets)
    self._g_follow_sum += weight * self.root_ranges[self.gadget.player]
    self._g_weight += weight
    self._set_gadget_range()

  # --- Regret update phase ---------------------------------------------------

  def _fold_fixed_leaves(self) -> bool:
    """Brings the fixed-value leaf arrays up to date with the tree's leaves
    (new leaves appended, expanded ones zeroed); False where the value
    function turns out not to have fixed values."""
    tree = self.tree
    added, expanded = len(tree.leaves_added), len(tree.leaves_expanded)
    if self._folded == (added, expanded):
      return True
    e0, e1, w = self._together
    for i in tree.leaves_expanded[self._folded[1]:]:
      span = self._together_slices.pop(i, None)
      if span is not None:
        w.buf[span[0]:span[1]] = 0.0
    new = [i for i in tree.leaves_added[self._folded[0]:]
           if not tree.nodes[i].expanded]
    start = time.perf_counter()
    for k, i in enumerate(new):
      node = tree.nodes[i]
      fixed = self.value_fn.fixed_history_values(node.ps, len(new) - k)
      if fixed is None:
        self._fixed = False
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
      self._together_slices[i] = (lo, w.n)
      if prior is not None:
        node.prior = prior
    self._leaf_timing[0] += time.perf_counter() - start
    self._folded = (added, expanded)
    return True

  def _fixed_histories(self, compiled):
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
      s0.extend(compiled[0].e_seq[e0.buf[s0.n:n]])
      s1.extend(compiled[1].e_seq[e1.buf[s1.n:n]])
    return e0.buf[:n], e1.buf[:n], w.buf[:n], s0.buf[:n], s1.buf[:n]

  def _fixed_entry_values(self, compiled, reaches, p: int) -> np.ndarray:
    """p's value [E_p] at each entry from its own terminal histories and
    folded leaves (before the pass up the tree), given the opponent's
    reaches: one weighted sum over both kinds of histories."""
    e0, e1, w, s0, s1 = self._fixed_histories(compiled)
    if p == 0:
      return np.bincount(e0, weights=w * reaches[1][s1],
                         minlength=compiled[0].num_entries)
    return np.bincount(e1, weights=-w * reaches[0][s0],
                       minlength=compiled[1].num_entries)

  def _fixed_leaf_values(self, compiled, reaches):
    """`_leaf_values` from the folded leaves' histories (the same sums, in
    the same order: per entry, then per sequence)."""
    spans = list(self._together_slices.values())
    index = (np.concatenate([np.arange(lo, hi) for lo, hi in spans]) if spans
             else np.zeros(0, np.int64))
    e0, e1, w = (a.buf[index] for a in self._together)
    r0 = reaches[0][compiled[0].e_seq[e0]]
    r1 = reaches[1][compiled[1].e_seq[e1]]
    per_entry = [
        np.bincount(e0, weights=w * r1, minlength=compiled[0].num_entries),
        -np.bincount(e1, weights=w * r0, minlength=compiled[1].num_entries)]
    # Entries that are not at leaves hold exact zeros, which leave the sums
    # unchanged.
    out = [np.bincount(compiled[p].e_seq, weights=per_entry[p],
                       minlength=compiled[p].num_seq) for p in range(2)]
    return out, per_entry

  def _leaf_values(self, compiled, reaches, record: bool):
    """The leaves' values for both players (one batched value-function call):
    ([S_p] landing on sequences, [E_p] per entry)."""
    tree = self.tree
    out = [np.zeros(c.num_seq) for c in compiled]
    per_entry = [np.zeros(c.num_entries) for c in compiled]
    leaves = tree.leaves()
    if not leaves:
      return out, per_entry
    if self._fixed and self._fold_fixed_leaves():
      return self._fixed_leaf_values(compiled, reaches)
    entries = [self._leaf_entries(p) for p in range(2)]
    seqs = [compiled[p].e_seq[entries[p]] for p in range(2)]
    key = self._leaf_key()
    sizes = self._leaf_sizes()
    packed = PackedQueries([tree.nodes[i].ps for i in leaves],
                           (reaches[0][seqs[0]], reaches[1][seqs[1]]),
                           key=key, sizes=sizes)
    values, policies = self.value_fn.evaluate_packed(packed)
    if record and self.config.record_queries:
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

  def _leaf_key(self) -> tuple[int, int, int]:
    """Names this search's leaves as they are now: the tree's nodes and
    expansions only grow, and the leaves change only when they do."""
    tree = self.tree
    return (self._uid, len(tree.nodes), len(tree.leaves_expanded))

  def _leaf_sizes(self) -> tuple[np.ndarray, np.ndarray]:
    """Each leaf's entries per player, in leaf order (cached per tree
    shape)."""
    key = (self._leaf_key(), "sizes")
    sizes = self._leaf_entry_cache.get(key)
    if sizes is None:
      tree = self.tree
      at = tree.leaves_array()
      sizes = tuple(tree.node_entries[p].buf[at] for p in range(2))
      self._leaf_entry_cache[key] = sizes
    return sizes

  def _leaf_entries(self, p: int) -> np.ndarray:
    """Entries of p at the leaves, in leaf order (cached per tree shape)."""
    key = (self._leaf_key(), p)
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

  def _terminal_sequences(self, compiled):
    """(e0, e1, w) of `SearchTree.terminal_arrays` with each terminal's
    sequence of player 0 and of player 1 under `compiled`, gathered once per
    compilation (they change only when the tree grows)."""
    cached = self._terminal_seqs
    if cached is None or cached[0] is not compiled:
      e0, e1, w = self.tree.terminal_arrays()
      cached = self._terminal_seqs = (compiled, e0, e1, w,
                                      compiled[0].e_seq[e0],
                                      compiled[1].e_seq[e1])
    return cached[1:]

  def _terminal_values(self, compiled, reaches, p: int) -> np.ndarray:
    _, _, w, s0, s1 = self._terminal_sequences(compiled)
    if p == 0:
      return np.bincount(s0, weights=w * reaches[1][s1],
                         minlength=compiled[0].num_seq)
    return np.bincount(s1, weights=-w * reaches[0][s0],
                       minlength=compiled[1].num_seq)

  def _current_reaches(self, compiled) -> list[np.ndarray]:
    """Each player's sequence reaches under the current policies."""
    return [_reach(compiled[p], self.tree.sides[p].policy, self.root_ranges[p])
            for p in range(2)]

  def _update(self, players: Sequence[int]) -> None:
    """One CFR+ update of `players` from the same reaches."""
    tree = self.tree
    compiled = tree.compiled()
    weight = float(self.updates) ** self.config.averaging_power
    sides = tree.sides
    fixed = self._fixed and self._fold_fixed_leaves()
    kernels = _kernels()
    if kernels is not None and len(players) == 1 and self._all_fixed(fixed):
      self._fused_update(kernels, compiled, players[0], weight)
      return
    if (kernels is not None and len(players) == 1 and
        self._network is not None and not fixed):
      plan = self._network_plan(compiled)
      if plan is not None:
        self._network_update(kernels, compiled, plan, players[0], weight)
        return
    reaches = self._current_reaches(compiled)
    self._reaches = reaches
    if not fixed:
      leaf, leaf_entries = self._leaf_values(compiled, reaches, record=True)
    for p in players:
      side, c = sides[p], compiled[p]
      n = side.num_rows
      if fixed:
        # Terminals and folded leaves in one weighted sum per entry, then
        # per sequence.
        entry_values = self._fixed_entry_values(compiled, reaches, p)
        direct = np.bincount(c.e_seq, weights=entry_values,
                             minlength=c.num_seq)
        if p in self.value_players:
          _propagate_entry_values(c, side.policy, entry_values)
      else:
        direct = self._terminal_values(compiled, reaches, p) + leaf[p]
        if p in self.value_players:
          entry_values = self._entry_values(p, compiled, reaches, side.policy,
                                            leaf_entries[p])
      if p in self.value_players:
        self._track_entry_values(p, c, entry_values, weight)
      seq_values, row_values = _values(c, side.policy, direct)
      if n:
        # Average with the policy that produced these values, then regret
        # matching (p's policy is not read again in this update).
        own = reaches[p][c.r_parent_seq]
        _regret_update(side, c, seq_values, row_values, own, weight)
      self._record_values(p, c, seq_values, row_values, weight)

  def _all_fixed(self, fixed: bool) -> bool:
    """Whether every value of an update is a fixed sum over histories:
    the folded leaves' and the terminals' (`fixed`: the leaves are folded),
    or the terminals' alone once a tree whose leaves are queried has none
    left (a network's search of a small subgame expands it whole: most
    updates of Leduc's training)."""
    return fixed or (not self.tree.leaves() and not self._together_slices)

  def _fused_update(self, kernels, compiled, p: int, weight: float,
                    histories=None) -> None:
    """`_update` of one player where every leaf value is a fixed sum over
    histories, as one C++ call (`cfr_fixed_update`: the same passes, the
    same numbers). `histories`: `_fixed_histories(compiled)` if known."""
    o = 1 - p
    side, opp, c, co = (self.tree.sides[p], self.tree.sides[o], compiled[p],
                        compiled[o])
    if histories is None:
      histories = self._fixed_histories(compiled)
    e0, e1, w, s0, s1 = histories
    track = p in self.value_players
    own_reach, opp_reach, seq_values, row_values, entry_values = (
        kernels.cfr_fixed_update(
            c.r_parent_seq, side.policy, side.regrets, side.avg, side.active,
            self.root_ranges[p], c.width, co.r_parent_seq, opp.policy,
            self.root_ranges[o], co.width, e0 if p == 0 else e1,
            s1 if p == 0 else s0, w, 1.0 if p == 0 else -1.0, c.e_seq, track,
            c.entry_row, c.e_prow, c.e_pslot, c.e_parent, weight))
    self._reaches = ([own_reach, opp_reach] if p == 0 else
                     [opp_reach, own_reach])
    if track:
      self._track_entry_values(p, c, entry_values, weight)
    self._record_values(p, c, seq_values, row_values, weight)

  def _network_plan(self, compiled) -> _NetworkPlan | None:
    """The leaves of the tree as it is now, as `_network_update` reads them
    (cached until the tree grows); None without leaves."""
    tree = self.tree
    leaves = tree.leaves()
    plan = self._plan
    if plan is not None and plan.compiled is compiled and plan.leaves is leaves:
      return plan
    self._plan = None
    if not leaves:
      return None
    arrays = self._network
    at = tree.leaves_array()
    arrays.fill(tree, self.value_fn, at)
    head_width = arrays.heads.buf.shape[1]
    (entries0, entries1, sizes0, sizes1, eq0, eq1, rows0, rows1, columns0,
     columns1, seqs0, seqs1) = _kernels().cfr_leaf_layout(
         at, tree.node_entry_start[0].view(), tree.node_entries[0].view(),
         tree.node_entry_start[1].view(), tree.node_entries[1].view(),
         arrays.rows[0].view(), arrays.rows[1].view(), compiled[0].e_seq,
         compiled[1].e_seq, head_width)
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
    # grows (`_network_update` adds those that change at each update).
    leaf_args = (compiled[0].r_parent_seq, sides[0].policy, compiled[0].width,
                 compiled[1].r_parent_seq, sides[1].policy, compiled[1].width,
                 seqs0, seqs1, layout.heads, eq0, eq1, columns0, columns1,
                 sizes0, sizes1, layout.chance, input_size)
    # (The terminals as `_terminal_sequences` gives them, in the same
    # order, kept up to date by appending.)
    e0, e1, w, s0, s1 = self._fixed_histories(compiled)
    update_args = []
    for p in range(2):
      side, c = sides[p], compiled[p]
      track = p in self.value_players
      total, count = (self._entry_value_sums(p, c.num_entries) if track
                      else (_EMPTY, _EMPTY))
      update_args.append((
          (eq0, eq1)[p], (rows0, rows1)[p], units[p], (entries0, entries1)[p],
          (seqs0, seqs1)[p], (e0, e1)[p], (s0, s1)[p], (s1, s0)[p], w,
          1.0 if p == 0 else -1.0, c.r_parent_seq, side.policy, side.regrets,
          side.avg, side.active, c.num_root, c.width, c.num_entries, track,
          c.entry_row, c.e_prow, c.e_pslot, c.e_parent, total, count))
    self._plan = _NetworkPlan(
        compiled=compiled, leaves=leaves, key=self._leaf_key(),
        layout=layout, prior_index={leaves[k]: k for k in defined},
        leaf_args=leaf_args, update_args=tuple(update_args))
    return self._plan

  def _network_update(self, kernels, compiled, plan: _NetworkPlan, p: int,
                      weight: float) -> None:
    """`_update` of one player where a network values the leaves: the
    passes before the network call in one C++ call (`cfr_leaf_inputs`:
    both reaches, the leaves' ranges and the network's inputs) and those
    after it in another (`cfr_network_update`: the leaves' values, the
    terminals', the propagation, the regret update), with the numbers of
    the passes called one by one."""
    tree = self.tree
    reach0, reach1, inputs, scale0, scale1, range0, range1 = (
        kernels.cfr_leaf_inputs(self.root_ranges[0], self.root_ranges[1],
                                *plan.leaf_args))
    reaches = [reach0, reach1]
    self._reaches = reaches
    values, priors = self.value_fn.network_values(plan.layout, inputs)
    if self.config.record_queries:
      self.queries.append(PackedQueries(
          [tree.nodes[i].ps for i in plan.leaves], (range0, range1),
          key=plan.key, sizes=plan.layout.sizes))
    # Each leaf's prior is computed if the leaf is expanded before the next
    # call replaces it.
    tree.latest_priors[:] = (priors, plan.prior_index)
    seq_values, row_values = kernels.cfr_network_update(
        values, scale0 if p == 0 else scale1, reaches[p], reaches[1 - p],
        weight, *plan.update_args[p])
    self._record_values(p, compiled[p], seq_values, row_values, weight)

  def _record_values(self, p: int, c: _Compiled, seq_values: np.ndarray,
                     row_values: np.ndarray, weight: float) -> None:
    """After p's update: keeps its sequence and row values (what the
    expansion phase's PUCT reads) and updates the gadget where p has it."""
    self._last_seq_values[p] = seq_values
    self._last_row_values[p] = row_values
    self._last_layout[p] = (c.num_root, c.width)
    if self.gadget is not None and self.gadget.player == p:
      self._update_gadget(seq_values[:c.num_root], weight)

  def _track_entry_values(self, p: int, c: _Compiled,
                          entry_values: np.ndarray, weight: float) -> None:
    """Adds p's entry values of this update to their weighted average
    over the iterates (what re-solving's gadget reads)."""
    total, count = self._entry_value_sums(p, c.num_entries)
    total += weight * entry_values
    count += weight

  def _entry_value_sums(self, p: int, num_entries: int
                        ) -> tuple[np.ndarray, np.ndarray]:
    """p's weighted sum of entry values over the updates and the sum of
    their weights, grown with zeros to `num_entries`."""
    total, count = self._entry_value_sum[p], self._entry_value_weight[p]
    if len(total) < num_entries:
      grown = self._entry_value_grown[p]
      for g in grown:
        g.fill(0.0, num_entries - g.n)
      total, count = grown[0].view(), grown[1].view()
      self._entry_value_sum[p], self._entry_value_weight[p] = total, count
    return total, count

  def run_updates(self, count: int) -> None:
    for _ in range(count):
      self.updates += 1
      if self.config.alternating:
        if not self._fused_pair():
          self._update([0])
          self._update([1])
      else:
        self._update([0, 1])

  def _fused_pair(self) -> bool:
    """`_update([0])` then `_update([1])` where both take `_fused_update`
    (every leaf value a fixed sum over histories), with what they share
    done once (the tree does not change between them); False, having
    updated nothing, where they do not."""
    kernels = _kernels()
    if kernels is None:
      return False
    compiled = self.tree.compiled()
    if not self._all_fixed(self._fixed and self._fold_fixed_leaves()):
      return False
    weight = float(self.updates) ** self.config.averaging_power
    histories = self._fixed_histories(compiled)
    self._fused_update(kernels, compiled, 0, weight, histories)
    self._fused_update(kernels, compiled, 1, weight, histories)
    return True

  # --- Expansion phase -------------------------------------------------------

  def _row_normalisers(self, compiled, reaches) -> list:
    """Per player, each row's chance reach times the opponent's reach,
    summed over the row's histories (PUCT's value scale), indexed by row."""
    sides = self.tree.sides
    if sides[0].rh_in_order and sides[1].rh_in_order:
      return [_InOrderNormalisers(compiled[p], reaches[1 - p],
                                  compiled[1 - p].e_seq, sides[p].num_rows)
              for p in range(2)]
    out = []
    for p in range(2):
      c = compiled[p]
      side = self.tree.sides[p]
      o = 1 - p
      opp_reach = reaches[o][compiled[o].e_seq[c.rh_opp]]
      out.append(np.bincount(c.rh_row, weights=c.rh_chance * opp_reach,
                             minlength=side.num_rows))
    return out

  def _select(self, p: int, row: int, normaliser: float,
              virtual: np.ndarray) -> int:
    """Samples a slot of `row` from 1/2 PUCT + 1/2 the CFR average policy
    (see the module docstring)."""
    side = self.tree.sides[p]
    k = len(side.r_actions[row])
    kernels = _kernels()
    if kernels is not None:
      seq_values = self._last_seq_values[p]
      num_root, width = self._last_layout[p]
      return kernels.cfr_select(
          _EMPTY if seq_values is None else seq_values,
          _EMPTY if seq_values is None else self._last_row_values[p],
          num_root, width, side.active, side.visits, virtual, side.prior,
          side.avg, side.policy, row, k, normaliser, self.utility_range,
          self.config.c_puct, self.config.virtual_loss, self.rng.random())

    active = side.active[row, :k]
    seq_values = self._last_seq_values[p]
    if seq_values is not None and row < len(self._last_row_values[p]):
      num_root, width = self._last_layout[p]
      base = num_root + row * width
      q = seq_values[base:base + k].copy()
      fpu = self._last_row_values[p][row]
      q = np.where(active, q, fpu)
      q = q / normaliser if normaliser > 0 else np.zeros(k)
    else:
      q = np.zeros(k)
    visits = side.visits[row, :k]
    pending = virtual[row, :k]
    u = self.utility_range
    total = visits.sum() + pending.sum()
    score = (q - self.config.virtual_loss * u * pending / (1.0 + visits + pending)
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

  def _top_k(self, node: _Node) -> list[list[int]] | None:
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
          self._timed_growth(tree.expand, node, actions)
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
        slot = self._select(q, row, norm, pending)
        a = side.r_actions[row][slot]
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
        self._timed_growth(tree.add_child, node, h, a)
        ends["added"] += 1
        break
      node = nodes[child]
      h = h_child
    for q, row, slot in path:
      sides[q].visits[row, slot] += 1
    return walked

  def _timed_growth(self, grow, *args) -> None:
    """Calls `grow(*args)` (SearchTree.expand or add_child: the public
    states added) and adds its time and leaves to `_leaf_timing`."""
    start = time.perf_counter()
    self._leaf_timing[1] += grow(*args)
    self._leaf_timing[0] += time.perf_counter() - start

  def _expansion_fits(self, node: _Node, actions) -> bool:
    """False under a deadline where the leaves expanding `node` would add
    (`actions`: see SearchTree.expand) would take more than _EXPAND_SHARE
    of the time left, timed per leaf added in this search; the simulation
    then stops at `node`, which stays a leaf."""
    seconds, leaves = self._leaf_timing
    if self._deadline is None or not leaves:
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
    left = self._deadline - time.monotonic()
    return count * seconds / leaves <= _EXPAND_SHARE * max(left, 0.0)

  def run_expansions(self, count: int) -> None:
    tree = self.tree
    compiled = tree.compiled()
    reaches = self._reaches
    if reaches is None:
      reaches = self._current_reaches(compiled)
      self._reaches = reaches
    normalisers = self._row_normalisers(compiled, reaches)
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
        beliefs *= reaches[p][compiled[p].e_seq[lo + ps.history_infostate[p]]]
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

  # --- Results ---------------------------------------------------------------

  def run(self, deadline: float | None = None) -> SearchResult:
    """Runs the search's phases and returns its result.

    Args:
      deadline: a `time.monotonic()` time to be done by, or None. The search
        then stops early (after at least one regret update) when the next
        phase, the final update and `result()` would pass it: the phase and
        the update timed as the latest ones, `result()` by its time per tree
        node in this process's previous search (it summarises every node,
        which costs far more than an update in a large tree). Expansions
        whose new leaves would take more than _EXPAND_SHARE of the time
        left are skipped (see `_expansion_fits`).
    """
    cfg = self.config
    expanded = False
    last_phase = last_update = 0.0
    self._deadline = deadline
    if self._fixed:
      # Value the initial tree's leaves (hive: 282 rollouts) before the
      # phases are timed: the first phase would otherwise stand for every
      # later one, and the search stop at a third of its time.
      self._fold_fixed_leaves()

    per_node = _result_seconds_per_node(str(self.tree.game))

    def finish() -> float:
      """Expected seconds of the final update and `result()`."""
      return last_update + per_node * len(self.tree.nodes)

    for _ in range(cfg.phases):
      start = time.monotonic()
      self.run_updates(cfg.updates_per_phase)
      updated = time.monotonic()
      last_update = (updated - start) / cfg.updates_per_phase
      expanded = False
      if deadline is not None and updated + last_phase + finish() > deadline:
        break
      if cfg.simulations_per_phase:
        self.run_expansions(cfg.simulations_per_phase)
        expanded = True
      last_phase = time.monotonic() - start
      if deadline is not None and (
          time.monotonic() + last_phase + finish() > deadline):
        break
    if expanded:
      # The last expansions are only useful once CFR has seen them.
      self.run_updates(cfg.updates_per_phase)
    start = time.monotonic()
    result = self.result()
    _RESULT_SECONDS_PER_NODE[str(self.tree.game)] = (
        (time.monotonic() - start) / len(self.tree.nodes))
    return result

  def average_root_ranges(self) -> tuple[np.ndarray, np.ndarray]:
    ranges = [r.copy() for r in self.root_ranges]
    if self.gadget is not None and self._g_weight > 0:
      ranges[self.gadget.player] = self._g_follow_sum / self._g_weight
    return ranges[0], ranges[1]

  def result(self) -> SearchResult:
    """Summaries and root values under the average profile."""
    tree = self.tree
    compiled = tree.compiled()
    root_ranges = self.average_root_ranges()
    policies = [_average_policy(s) for s in tree.sides]
    reaches = [_reach(compiled[p], policies[p], root_ranges[p])
               for p in range(2)]
    _, leaf = self._leaf_values(compiled, reaches, record=False)
    entry_values = []
    for p in range(2):
      # Averaged over the iterates where tracked (the self-play values that
      # re-solving needs), else under the average profile.
      values = self._entry_values(p, compiled, reaches, policies[p], leaf[p])
      total, count = self._entry_value_sum[p], self._entry_value_weight[p]
      tracked = np.zeros(len(values), dtype=bool)
      tracked[:len(count)] = count > 0
      values[tracked] = total[tracked[:len(total)]] / count[tracked[:len(count)]]
      entry_values.append(values)
    summaries = _Summaries(tree, [c.e_seq for c in compiled], reaches,
                           entry_values)
    root = summaries[tree.root_ps.id]
    return SearchResult(tree=tree, root_values=root.values,
                        summaries=summaries, queries=self.queries,
                        updates=self.updates, root_ranges=root_ranges)

  def _entry_values(self, p: int, compiled, reaches, policy: np.ndarray,
                    leaf: np.ndarray) -> np.ndarray:
    """Counterfactual value of every entry of player p under `policy`, given
    the leaves' values per entry (a pass over public-state depth)."""
    c = compiled[p]
    values = leaf.copy()
    e0, e1, w, s0, s1 = self._terminal_sequences(compiled)
    if p == 0:
      values += np.bincount(e0, weights=w * reaches[1][s1],
                            minlength=c.num_entries)
    else:
      values += np.bincount(e1, weights=-w * reaches[0][s0],
                            minlength=c.num_entries)
    _propagate_entry_values(c, policy, values)
    return values


def _propagate_entry_values(c: _Compiled, policy: np.ndarray,
                            values: np.ndarray) -> None:
  """In place: an entry with a row takes its actions' value under `policy`
  (the action values summed from the entries below), and every entry adds
  its value to its parent (to the slot of its own last action, else to the
  parent entry), deepest first."""
  kernels = _kernels()
  if kernels is not None:
    kernels.cfr_entry_values(values, c.entry_row, c.e_prow, c.e_pslot,
                             c.e_parent, policy, len(c.r_entry), c.width)
    return
  _numpy_propagate_entry_values(c, policy, values)


def _numpy_propagate_entry_values(c: _Compiled, policy: np.ndarray,
                                  values: np.ndarray) -> None:
  action_values = np.zeros((max(len(c.r_entry), 1), c.width))
  for rows_d, row_entries, via_row, via_parent in c.depth_groups:
    if rows_d.size:
      values[row_entries] = np.einsum("ij,ij->i", action_values[rows_d],
                                      policy[rows_d])
    if via_row.size:
      np.add.at(action_values, (c.e_prow[via_row], c.e_pslot[via_row]),
                values[via_row])
    if via_parent.size:
      values += np.bincount(c.e_parent[via_parent],
                            weights=values[via_parent],
                            minlength=c.num_entries)


def search(root: PublicState, value_fn: ValueFunction,
           config: GTCFRConfig | None = None, *,
           ranges: Sequence[np.ndarray] | None = None,
           gadget: Gadget | None = None,
           branch: Sequence[PublicState] = (),
           rng: np.random.Generator | None = None) -> SearchResult:
  """Runs GT-CFR from `root` (see the module docstring and GTCFR)."""
  return GTCFR(root, value_fn, config, ranges=ranges, gadget=gadget,
               branch=branch, rng=rng).run()
