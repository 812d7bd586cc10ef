"""A subgame tree of histories, grown by histories and solved by CFR+
(DESIGN.md section 15).

The anchored subgame (`search.py`) is not a tree of public states: its nodes
are histories, a chosen leaf gets all its children, and a player's
infostates are the groups of the tree's histories that share its key
(`public_state.HistoryKeys`) below the same own sequence. Each player's
infostates are rows of a sequence layout (`algorithms/cfr/passes.py`:
root sequences, then ``num_root + row * width + slot``), so that a CFR+
iteration is a few numpy passes over levels, never a Python walk of nodes.

The root is a chance node over root histories. With the Resolve gadget
(`add_gadget`) the opponent first picks, for each of its root infostates
J, to enter (chance then picks one of J's histories) or to take J's
alternative value; without one, chance picks the root histories directly.

Vocabulary:
* node: a history in the tree; a leaf has no children yet (valued by
  rollouts) or is terminal (valued by its returns).
* row: a player's infostate where it acts, with its legal actions as slots;
  its parent sequence is the player's previous (row, slot) on the path, or
  a root sequence.

One module, past 600 lines: growth, the gadget, the compiled CFR+ layout
and the network hook (`pending_leaves`, `set_leaf_values`, `leaf_data`)
all read and write the same node arrays, and it is the Python twin of the
native engine's one class (`native_tree.py`), which tests hold it to.
"""

from __future__ import annotations

import time

import numpy as np
import pyspiel

from open_spiel_sog.algorithms.cfr import passes
from open_spiel_sog.algorithms.sog import rollout_values
from open_spiel_sog.public_state import CHANCE
from open_spiel_sog.public_state import HistoryKeys
from open_spiel_sog.public_state import TERMINAL
from open_spiel_sog.public_state.features import action_matrix

ROOT = -1  # a sequence's row when it is a root sequence


class Rows:
  """One player's rows (infostates where it acts), in the order made."""

  def __init__(self):
    self.index: dict[tuple, int] = {}  # (key, parent row, parent slot) -> row
    self.key: list[str] = []
    self.parent: list[tuple[int, int]] = []  # (row or ROOT, slot)
    self.actions: list[list[int]] = []
    self.level: list[int] = []
    self.frozen: list[np.ndarray | None] = []  # a fixed policy, or None
    self.width = 1
    self.regrets = np.zeros((0, 1))
    self.cumulative = np.zeros((0, 1))
    self.current = np.zeros((0, 1))  # the latest iteration's policy
    self.last = np.zeros((0, 1))  # the latest instantaneous regrets

  def __len__(self) -> int:
    return len(self.key)

  def find(self, key: str, parent: tuple[int, int]) -> int:
    return self.index.get((key, parent[0], parent[1]), -1)

  def add(self, key: str, parent: tuple[int, int], actions: list[int],
          frozen: np.ndarray | None = None,
          regrets: np.ndarray | None = None) -> int:
    row = len(self.key)
    self.index[(key, parent[0], parent[1])] = row
    self.key.append(key)
    self.parent.append(parent)
    self.actions.append(list(actions))
    self.level.append(0 if parent[0] == ROOT else self.level[parent[0]] + 1)
    self.frozen.append(frozen)
    width = max(self.width, len(actions))
    rows = len(self.key)
    if width > self.width or rows > len(self.regrets):
      capacity = max(rows, 2 * len(self.regrets), 64)
      for name in ("regrets", "cumulative", "current", "last"):
        old = getattr(self, name)
        new = np.zeros((capacity, width))
        new[:old.shape[0], :old.shape[1]] = old
        setattr(self, name, new)
      self.width = width
    k = len(actions)
    self.current[row, :k] = 1.0 / k if frozen is None else frozen
    if regrets is not None and len(regrets) == k:
      self.regrets[row, :k] = regrets
    return row

  def sequence(self, parent: tuple[int, int], num_root: int) -> int:
    """The flat index of sequence (row, slot) (ROOT: a root sequence)."""
    row, slot = parent
    return slot if row == ROOT else num_root + row * self.width + slot

  def average(self, row: int) -> np.ndarray:
    """The average policy of `row` over its legal actions."""
    k = len(self.actions[row])
    if self.frozen[row] is not None:
      return self.frozen[row]
    total = self.cumulative[row, :k].sum()
    if total <= 0:
      return np.full(k, 1.0 / k)
    return self.cumulative[row, :k] / total


class HistoryTree:
  """The histories of an anchored subgame and both players' rows.

  Attributes:
    game: the game.
    keys: the history keys (`HistoryKeys`).
    rows: [2] each player's `Rows`.
    num_root: [2] root sequences per player (1: each player starts from
      the empty sequence).
    roots: the root histories' nodes.
  """

  def __init__(self, game: pyspiel.Game, keys: HistoryKeys, rollouts: int,
               seed: int, max_moves: int = 0, predictive: bool = False):
    self.game = game
    self.predictive = predictive
    self.keys = keys
    self.rollouts = rollouts
    self.max_moves = max_moves
    self._rng_state = int(seed) & 0x7FFFFFFF
    # Player 0's return in a drawn game: a cut rollout's value.
    self.draw = rollout_values.draw_value(game)
    self.rows = [Rows(), Rows()]
    self.num_root = [1, 1]
    self.roots: list[int] = []
    # Per node.
    self.parent: list[int] = []
    self.action: list[int] = []
    self.slot: list[int] = []  # the action's slot in the parent's outcomes
    self.edge: list[float] = []  # chance probability of the edge (1: a move)
    self.reach: list[float] = []  # chance reach from the root, root weight in
    self.actor: list[int] = []
    self.node_keys: list[tuple[str, str]] = []
    self.seq: list[list[tuple[int, int]]] = [[], []]
    self.value: list[float] = []  # player 0's: returns, or rollouts' mean
    self.children: list[list[int] | None] = []
    self.is_leaf: list[bool] = []
    self.states: list[pyspiel.State | None] = []
    self.row: list[int] = []  # the actor's row once expanded
    self.depth: list[int] = []
    self.origin: list[int] = []  # the root node above
    # Gadget: per opponent root infostate, (row, alternative value, prior).
    self.gadget: list[tuple[int, float, float]] = []
    self.gadget_player = -1
    self._compiled = None
    # From a previous tree: regrets by (player, key), the warm start of
    # rows made with that key.
    self.warm: dict[tuple[int, str], np.ndarray] = {}
    # (player, policies by key, key): that player's rows below root
    # histories where its key is not `key` play those policies (1-KLSS).
    self.freeze: tuple[int, dict[str, np.ndarray], str] | None = None
    self._root_history: dict[int, list[int]] = {}
    self._node_values: np.ndarray | None = None
    self._timed = [0, 0.0]  # children built by `expand`, and its seconds
    # Numpy copies of per-node data (`_mirror_nodes`).
    self._mirrored = 0
    self._expanded: list[int] = []
    self._seq_mirror = np.zeros((0, 4), dtype=np.int64)
    self._reach_mirror = np.zeros(0)
    self._value_mirror = np.zeros(0)
    self._leaf_mirror = np.zeros(0, dtype=bool)
    # Network leaves (the engine's hook): new leaves wait, valued 0, in
    # `pending` until `set_leaf_values`.
    self.network_leaves = False
    self.pending: list[int] = []
    self._key_ids: dict[str, int] = {}

  def __len__(self) -> int:
    return len(self.parent)

  # --- Building -------------------------------------------------------------

  def _rollout_value(self, state: pyspiel.State) -> float:
    value, self._rng_state, _ = rollout_values.random_rollouts(
        state, self.rollouts, self._rng_state, self.max_moves, self.draw)
    return float(value)

  def _add(self, parent: int, action: int, edge: float, reach: float,
           state: pyspiel.State | None, keys: tuple[str, str],
           seqs: tuple[tuple[int, int], tuple[int, int]], actor: int,
           value: float | None, depth: int, origin: int,
           slot: int = -1) -> int:
    n = len(self.parent)
    self.parent.append(parent)
    self.action.append(action)
    self.slot.append(slot)
    self.edge.append(edge)
    self.reach.append(reach)
    self.actor.append(actor)
    self.node_keys.append(keys)
    self.seq[0].append(seqs[0])
    self.seq[1].append(seqs[1])
    if value is None:
      if actor == TERMINAL:
        value = state.returns()[0]
      elif self.network_leaves:
        value = 0.0  # until set_leaf_values
        self.pending.append(n)
      else:
        value = self._rollout_value(state)
    self.value.append(float(value))
    self.children.append(None)
    self.is_leaf.append(True)
    self.states.append(None if actor == TERMINAL else state)
    self.row.append(-1)
    self.depth.append(depth)
    self.origin.append(n if origin < 0 else origin)
    self._compiled = None
    return n

  def add_root(self, state: pyspiel.State, keys: tuple[str, str],
               weight: float, opponent_root: tuple[int, int] = (ROOT, 0),
               value: float | None = None) -> int:
    """A root history of chance weight `weight`; the opponent of the
    gadget starts from `opponent_root` (its J's enter sequence)."""
    actor = TERMINAL if state.is_terminal() else int(state.current_player())
    seqs = [(ROOT, 0), (ROOT, 0)]
    if self.gadget_player >= 0:
      seqs[self.gadget_player] = opponent_root
    n = self._add(-1, -1, weight, weight, state, keys, tuple(seqs), actor,
                  value, 0, -1)
    self.roots.append(n)
    self._root_history[n] = list(state.history())
    return n

  def add_gadget(self, player: int, alternatives: list[float | None],
                 priors: list[float]) -> list[tuple[int, int]]:
    """The Resolve gadget for `player` (the opponent): per root infostate
    J, a row [exit, enter] (or, where the alternative value is None, enter
    only); exit pays J's alternative value (`player`'s), weighted by J's
    prior. Returns each J's enter sequence (for `add_root`)."""
    self.gadget_player = player
    rows = self.rows[player]
    enters = []
    for j, (alt, prior) in enumerate(zip(alternatives, priors)):
      actions = [0, 1] if alt is not None else [1]
      row = rows.add(f"gadget {j}", (ROOT, 0), actions)
      self.gadget.append((row, alt, prior))
      enters.append((row, len(actions) - 1))
    return enters

  def kept_lookup(self, player: int):
    """(q, key) -> the nodes where `player` acts whose player-q key is
    `key`."""
    index: dict[tuple[int, str], list[int]] = {}
    for n in range(len(self)):
      if self.actor[n] == player:
        for q in (0, 1):
          index.setdefault((q, self.node_keys[n][q]), []).append(n)
    return lambda q, key: index.get((q, key), [])

  def near_root_policies(self, levels: int):
    """(player, key, actions, average policy) of the rows at most `levels`
    own actions below the root (one more below a gadget), but the
    gadget's."""
    for p in (0, 1):
      rows = self.rows[p]
      gadget = self.gadget_rows(p)
      deepest = levels + (1 if gadget else 0)
      for r in range(len(rows)):
        if r not in gadget and rows.level[r] <= deepest:
          yield p, rows.key[r], rows.actions[r], rows.average(r)

  def node_policy(self, n: int) -> tuple[list[int], np.ndarray]:
    """The actions and average policy of decision node `n`'s row."""
    rows = self.rows[self.actor[n]]
    return rows.actions[self.row[n]], rows.average(self.row[n])

  def warm_rows(self):
    """(player, key, regrets) of each row but the gadget's: the warm start
    of the next tree's rows made with that key."""
    for p in (0, 1):
      rows = self.rows[p]
      gadget = self.gadget_rows(p)
      for row in range(len(rows)):
        if row not in gadget:
          k = len(rows.actions[row])
          yield p, rows.key[row], rows.regrets[row, :k].copy()

  def set_warm(self, p: int, key: str, regrets: np.ndarray) -> None:
    self.warm[(p, key)] = regrets

  def set_freeze(self, player: int, policies: dict, key: str) -> None:
    self.freeze = (player, policies, key)

  def gadget_rows(self, p: int) -> set[int]:
    """Player p's rows that are gadget entries, not infostates."""
    return ({row for row, _, _ in self.gadget} if p == self.gadget_player
            else set())

  def _row_of(self, n: int, actions: list[int] | None = None) -> int:
    """The row of decision node `n` (made where new, with `actions`, or
    its state's legal actions)."""
    p = self.actor[n]
    rows = self.rows[p]
    key = self.node_keys[n][p]
    parent = self.seq[p][n]
    row = rows.find(key, parent)
    if row < 0:
      if actions is None:
        actions = self.states[n].legal_actions()
      frozen = None
      if self.freeze is not None and p == self.freeze[0] and (
          self.node_keys[self.origin[n]][p] != self.freeze[2]):
        # (1-KLSS: our other selves play last search's policy.)
        known = self.freeze[1].get(key)
        frozen = (known if known is not None and len(known) == len(actions)
                  else np.full(len(actions), 1.0 / len(actions)))
      row = rows.add(key, parent, actions, frozen, self.warm.get((p, key)))
    return row

  def expansion_seconds(self, n: int) -> float:
    """What expanding leaf `n` is expected to take: its children times
    the running mean of seconds per child built (0 before any)."""
    done, seconds = self._timed
    if not done:
      return 0.0
    state = self.states[n]
    count = (len(state.chance_outcomes()) if self.actor[n] == CHANCE else
             len(state.legal_actions()))
    return count * seconds / done

  def record_expansion(self, children: int, seconds: float) -> None:
    """Adds `children` built in `seconds` to the running mean."""
    self._timed[0] += children
    self._timed[1] += seconds

  def child_seconds(self, n: int) -> float:
    """Seconds one child of leaf `n` takes to build as `expand` builds it
    (state, both keys, its rollouts), timed on the first legal action."""
    state = self.states[n]
    a = state.legal_actions()[0]
    begin = time.perf_counter()
    child = state.child(a)
    self.keys.child(self.node_keys[n], state, a, child)
    if not child.is_terminal():
      self._rollout_value(child)
    return time.perf_counter() - begin

  def _child_seqs(self, n: int, row: int, slot: int
                  ) -> tuple[tuple[int, int], tuple[int, int]]:
    """Both players' sequences at the child in `slot` of node `n` (whose
    actor's row is `row`)."""
    seqs = [self.seq[0][n], self.seq[1][n]]
    if self.actor[n] >= 0:
      seqs[self.actor[n]] = (row, slot)
    return seqs[0], seqs[1]

  def row_only(self, n: int) -> None:
    """Makes the row of decision leaf `n` (its infostate, uniform) without
    its children: where even one expansion would not fit the time."""
    self.row[n] = self._row_of(n)

  def expand(self, n: int) -> None:
    """Gives leaf `n` all its children (each valued by rollouts or its
    returns)."""
    begin = time.perf_counter()
    self._expand(n)
    self.record_expansion(len(self.children[n]), time.perf_counter() - begin)

  def _expand(self, n: int) -> None:
    state = self.states[n]
    actor = self.actor[n]
    row = -1
    if actor == CHANCE:
      outcomes = state.chance_outcomes()
    else:
      outcomes = [(a, 1.0) for a in state.legal_actions()]
      row = self._row_of(n)
      self.row[n] = row
    keys = self.node_keys[n]
    kids = []
    for slot, (a, prob) in enumerate(outcomes):
      child = state.child(a)
      kid_actor = (TERMINAL if child.is_terminal() else
                   int(child.current_player()))
      kids.append(self._add(n, a, prob, self.reach[n] * prob, child,
                            self.keys.child(keys, state, a, child),
                            self._child_seqs(n, row, slot), kid_actor, None,
                            self.depth[n] + 1, self.origin[n], slot))
    self.children[n] = kids
    self.is_leaf[n] = False
    self._expanded.append(n)
    self.states[n] = None  # (its children hold what is needed)

  def copy_subtree(self, old: "HistoryTree", n: int, weight: float,
                   opponent_root: tuple[int, int], budget: int) -> int:
    """Adds old tree's node `n` as a root of weight `weight`, with its
    descendants (breadth first, at most `budget` nodes: deeper ones become
    leaves again, valued by the old tree's node values `old.node_values`).
    Returns the nodes added."""
    state = old.history_state(n)
    values = old.node_values
    root = self.add_root(state, old.node_keys[n], weight, opponent_root,
                         value=values[n])
    queue = [(n, root)]
    added = 1
    while queue:
      nxt = []
      for o, m in queue:
        kids = old.children[o]
        if kids is None or added + len(kids) > budget:
          if kids is not None:
            self.states[m] = old.history_state(o)
          continue
        actor = self.actor[m]
        row = -1
        if actor >= 0:
          # (The old row's actions: no state to rebuild for them.)
          row = self._row_of(m, old.rows[actor].actions[old.row[o]])
          self.row[m] = row
        mine = []
        for slot, k in enumerate(kids):
          mine.append(self._add(
              m, old.action[k], old.edge[k], self.reach[m] * old.edge[k],
              old.states[k], old.node_keys[k], self._child_seqs(m, row, slot),
              old.actor[k], values[k], self.depth[m] + 1, self.origin[m],
              slot))
          nxt.append((k, mine[-1]))
        self.children[m] = mine
        self.is_leaf[m] = False
        self._expanded.append(m)
        self.states[m] = None
        added += len(kids)
      queue = nxt
    return added

  def history(self, n: int) -> list[int]:
    """The actions from the game's start to node `n`."""
    actions = []
    while self.parent[n] >= 0:
      actions.append(self.action[n])
      n = self.parent[n]
    return self._root_history[n] + actions[::-1]

  def history_state(self, n: int) -> pyspiel.State:
    """Node `n`'s state (rebuilt from its history where the tree dropped
    it)."""
    if self.states[n] is not None:
      return self.states[n]
    state = self.game.new_initial_state()
    for a in self.history(n):
      state.apply_action(a)
    return state

  # --- Network leaves ----------------------------------------------------------

  def pending_leaves(self) -> list[int]:
    return list(self.pending)

  def set_leaf_values(self, nodes: list[int], values) -> None:
    """Values (player 0's) of leaves `nodes` (the pending ones, or any)."""
    for n, v in zip(nodes, values):
      self.value[n] = float(v)
      if n < self._mirrored:
        self._value_mirror[n] = float(v)
    self.pending = []
    self._compiled = None
    self._node_values = None

  def leaf_data(self, nodes: list[int], states: bool = True,
                tensors: bool = True):
    """The engine's `leaf_data` (`leaf_network.NodeData`), always with
    the nodes' states (the tree holds them; `states` is the native tree's
    choice); without the game's tensors where not `tensors` (a compact
    encoding reads the states, and London's information state tensors
    cost 1 ms each)."""
    del states
    from open_spiel_sog.algorithms.sog.anchored.leaf_network import NodeData  # pylint: disable=g-import-not-at-top
    arrays, _, _ = self.compile()
    reaches = []
    for p in (0, 1):
      a = arrays[p]
      reaches.append(self._reach(p, a, self.rows[p].current[
          :a["rows"], :a["width"]]))
    game = self.game
    info = game.get_type().provides_information_state_tensor
    tensors = tensors and (info or game.get_type().provides_observation_tensor)
    states, keys, rows, seq_reach = [], [], [], []
    for n in nodes:
      state = self.history_state(n)
      states.append(state)
      keys.append([self._key_ids.setdefault(k, len(self._key_ids))
                   for k in self.node_keys[n]])
      row_reach = []
      for p in (0, 1):
        row, slot = self.seq[p][n]
        flat = self._flat(p, np.asarray([row]), np.asarray([slot]))[0]
        row_reach.append(reaches[p][flat])
      seq_reach.append(row_reach)
      if tensors:
        rows.append([state.information_state_tensor(p) if info else
                     state.observation_tensor(p) for p in (0, 1)])
    return NodeData(
        np.asarray(rows, dtype=np.float32).reshape(len(nodes), 2, -1)
        if tensors else None,
        np.asarray(keys, dtype=np.int64).reshape(-1, 2),
        np.asarray([self.reach[n] for n in nodes], dtype=np.float64),
        np.asarray(seq_reach, dtype=np.float64).reshape(-1, 2),
        np.asarray([max(self.actor[n], -1) for n in nodes], dtype=np.int64),
        action_matrix([self.history(n) for n in nodes]), states)

  # --- CFR+ -----------------------------------------------------------------

  def compile(self):
    """The arrays of an iteration (rebuilt, by whole-array operations, after
    the tree grew)."""
    if self._compiled is not None:
      return self._compiled
    leaves = np.nonzero(self._mirror_nodes())[0]
    arrays = []
    for p in (0, 1):
      rows = self.rows[p]
      r = len(rows)
      parents = np.asarray(rows.parent, dtype=np.int64).reshape(-1, 2)
      parent_seq = self._flat(p, parents[:, 0], parents[:, 1])
      level = np.asarray(rows.level, dtype=np.int64)
      levels = [np.nonzero(level == d)[0] for d in range(
          int(level.max(initial=-1)) + 1)]
      counts = np.asarray([len(acts) for acts in rows.actions],
                          dtype=np.int64)
      legal = np.arange(rows.width)[None, :] < counts[:, None]
      frozen = np.asarray([f is not None for f in rows.frozen], dtype=bool)
      seq = self._seq_mirror[:len(self), 2 * p:2 * p + 2][leaves]
      leaf_seq = self._flat(p, seq[:, 0], seq[:, 1])
      arrays.append(dict(parent_seq=parent_seq, levels=levels, legal=legal,
                         frozen=frozen, leaf_seq=leaf_seq, rows=r,
                         width=rows.width,
                         size=self.num_root[p] + r * rows.width))
    reach = self._reach_mirror[leaves]
    value0 = self._value_mirror[leaves]
    if self.gadget:
      g = self.gadget_player
      rows = self.rows[g]
      exits = [(row, alt, prior) for row, alt, prior in self.gadget
               if alt is not None]
      if exits:
        gseq = np.asarray([self.num_root[g] + row * rows.width
                           for row, _, _ in exits], dtype=np.int64)
        other = np.zeros(len(exits), dtype=np.int64)
        arrays[g]["leaf_seq"] = np.concatenate([arrays[g]["leaf_seq"], gseq])
        arrays[1 - g]["leaf_seq"] = np.concatenate(
            [arrays[1 - g]["leaf_seq"], other])
        reach = np.concatenate([reach, [prior for _, _, prior in exits]])
        sign = 1.0 if g == 0 else -1.0
        value0 = np.concatenate([value0, [sign * alt for _, alt, _ in exits]])
    self._compiled = (arrays, reach, value0)
    return self._compiled

  def _mirror_nodes(self) -> np.ndarray:
    """Brings the numpy copies of the nodes' sequences, reaches, values
    and leaf flags up to date (only what changed since the last call);
    returns the leaf flags."""
    n, done = len(self), self._mirrored
    if n > len(self._leaf_mirror):
      capacity = max(n, 2 * len(self._leaf_mirror), 1024)
      seq = np.zeros((capacity, 4), dtype=np.int64)
      seq[:done] = self._seq_mirror[:done]
      self._seq_mirror = seq
      for name in ("_reach_mirror", "_value_mirror", "_leaf_mirror"):
        old = getattr(self, name)
        new = np.zeros(capacity, dtype=old.dtype)
        new[:done] = old[:done]
        setattr(self, name, new)
    if n > done:
      self._seq_mirror[done:n] = np.concatenate(
          [np.asarray(self.seq[0][done:n], dtype=np.int64).reshape(-1, 2),
           np.asarray(self.seq[1][done:n], dtype=np.int64).reshape(-1, 2)],
          axis=1)
      self._reach_mirror[done:n] = self.reach[done:n]
      self._value_mirror[done:n] = self.value[done:n]
      self._leaf_mirror[done:n] = self.is_leaf[done:n]
    if self._expanded:
      self._leaf_mirror[self._expanded] = False
      self._expanded = []
    self._mirrored = n
    return self._leaf_mirror[:n]

  def _flat(self, p: int, row: np.ndarray, slot: np.ndarray) -> np.ndarray:
    """Flat sequence indices of (row, slot) pairs (row ROOT: root
    sequences)."""
    return np.where(row == ROOT, slot,
                    self.num_root[p] + row * self.rows[p].width + slot)

  def _policy(self, p: int, a: dict) -> np.ndarray:
    rows = self.rows[p]
    r = a["rows"]
    regrets = rows.regrets[:r, :a["width"]]
    if self.predictive:  # PCFR+: the next regret predicted by the last
      regrets = regrets + rows.last[:r, :a["width"]]
    policy = passes.masked_regret_matching(regrets, a["legal"])
    if a["frozen"].any():
      policy[a["frozen"]] = rows.current[:r][a["frozen"]]
    return policy

  def _reach(self, p: int, a: dict, policy: np.ndarray) -> np.ndarray:
    out = np.zeros(a["size"])
    return passes.sequence_reach(self.num_root[p], a["rows"], a["width"],
                                 a["parent_seq"], a["levels"], policy,
                                 np.ones(self.num_root[p]), out)

  def _values(self, p: int, a: dict, policy: np.ndarray, direct: np.ndarray):

    def add_to_parents(level, rows, v, seq_values):
      del level
      seq_values += np.bincount(a["parent_seq"][rows], weights=v,
                                minlength=len(seq_values))

    return passes.sequence_values(self.num_root[p], a["rows"], a["width"],
                                  a["levels"], policy, direct, add_to_parents)

  def iterate(self, t: int, power: float = 1.0) -> None:
    """CFR+ iteration `t` (alternating updates; average weighted t^power;
    `predictive`: PCFR+, Farina, Kroer and Sandholm 2021)."""
    self._node_values = None
    arrays, reach, value0 = self.compile()
    # Each row's policy of the latest update (uniform, or frozen, for rows
    # made since), kept in `Rows.current`.
    policies = [self.rows[p].current[:arrays[p]["rows"], :arrays[p]["width"]]
                .copy() for p in (0, 1)]
    reaches = [None, self._reach(1, arrays[1], policies[1])]
    for p in (0, 1):
      a, o = arrays[p], arrays[1 - p]
      other = reaches[1 - p]
      sign = 1.0 if p == 0 else -1.0
      direct = np.bincount(a["leaf_seq"], weights=sign * reach * value0 *
                           other[o["leaf_seq"]], minlength=a["size"])
      seq_values, row_values = self._values(p, a, policies[p], direct)
      r, w = a["rows"], a["width"]
      rows = self.rows[p]
      action_values = seq_values[self.num_root[p]:].reshape(r, w)
      regret = np.where(a["legal"], action_values - row_values[:, None], 0.0)
      regret[a["frozen"]] = 0.0
      rows.regrets[:r, :w] = np.maximum(rows.regrets[:r, :w] + regret, 0.0)
      rows.last[:r, :w] = regret
      own = reaches[p] if reaches[p] is not None else self._reach(
          p, a, policies[p])
      rows.cumulative[:r, :w] += (t ** power) * own[a["parent_seq"], None] * (
          policies[p])
      policies[p] = self._policy(p, a)
      rows.current[:r, :w] = policies[p]
      if p == 0:  # (player 1 updates against player 0's new policy)
        reaches[0] = self._reach(0, a, policies[0])

  # --- Reading the solution --------------------------------------------------

  @property
  def node_values(self) -> np.ndarray:
    """[nodes] player 0's expected return from each node under the average
    profile (leaves: their values)."""
    cached = self._node_values
    if cached is not None and len(cached) == len(self):
      return cached
    n = len(self)
    parent = np.asarray(self.parent, dtype=np.int64)
    slot = np.asarray(self.slot, dtype=np.int64)
    edge = np.asarray(self.edge, dtype=np.float64).copy()
    edge[parent < 0] = 1.0
    averages = []
    for p in (0, 1):
      rows = self.rows[p]
      avg = np.zeros((len(rows), rows.width))
      for i in range(len(rows)):
        k = len(rows.actions[i])
        avg[i, :k] = rows.average(i)
      averages.append(avg)
    parent_actor = np.full(n, CHANCE, dtype=np.int64)
    has_parent = parent >= 0
    parent_actor[has_parent] = np.asarray(self.actor, dtype=np.int64)[
        parent[has_parent]]
    parent_row = np.full(n, -1, dtype=np.int64)
    parent_row[has_parent] = np.asarray(self.row, dtype=np.int64)[
        parent[has_parent]]
    for p in (0, 1):
      mine = np.nonzero(parent_actor == p)[0]
      edge[mine] = averages[p][parent_row[mine], slot[mine]]
    values = np.asarray(self.value, dtype=np.float64).copy()
    interior = np.asarray([kids is not None for kids in self.children])
    values[interior] = 0.0
    depth = np.asarray(self.depth, dtype=np.int64)
    for d in range(int(depth.max(initial=0)), 0, -1):
      idx = np.nonzero(depth == d)[0]
      np.add.at(values, parent[idx], edge[idx] * values[idx])
    self._node_values = values
    return values
