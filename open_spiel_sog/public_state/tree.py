"""The public tree compiled into arrays for vectorized CFR (DESIGN.md section 4).

Everything CFR needs lives at the infostate level. For each player p the tree
is compiled into p's *sequence* structure:

* a root sequence for each of p's infostates at the tree's root public state
  (its reach is p's given range there);
* a row for each of p's decision infostates (p acts in that public state),
  with one sequence per legal action: flat sequence index
  ``num_root + row * max_actions + action_position``;
* each row's parent sequence: the last sequence of p's own on the path
  (p's range at the row is that sequence's reach).

Rows are numbered level by level, where a row's level is the number of p's own
actions before it, so each level is a contiguous block of rows and a CFR pass
is a few numpy gathers/scatters per level, never a Python loop over nodes.

Every (public state, infostate of p) pair is an *entry*; each entry knows the
sequence whose reach is its range. Terminal public states become one sparse
payoff matrix over sequence pairs, the sum of the per-public-state matrices
M[s0, s1] = sum_z chance_reach(z) * u0(z): then v0 = M r1 and v1 = -M^T r0.
Frontier (unexpanded) public states are listed for a value function to value.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from open_spiel_sog.public_state.state import PublicState


@dataclasses.dataclass(frozen=True)
class PlayerArrays:
  """One player's sequence structure over a public tree."""
  num_root: int  # R: p's infostates at the tree root (root sequences)
  num_rows: int  # p's decision infostates in the tree
  max_actions: int  # A: widest row
  row_parent_seq: np.ndarray  # [rows] int64, flat index of the parent sequence
  level_bounds: np.ndarray  # [L + 1] rows of level l are [b[l], b[l+1])
  legal_mask: np.ndarray  # [rows, A] bool
  row_actions: np.ndarray  # [rows, A] int64 action ids, -1 where padded
  row_public_state: np.ndarray  # [rows] int64 public state id
  row_infostate: np.ndarray  # [rows] int64 infostate index in that state
  row_infostate_string: tuple[str, ...]  # [rows]
  # Up-pass segment sums: per level, rows sorted by parent sequence.
  level_order: tuple[np.ndarray, ...]  # per level: row permutation (offset)
  level_parents: tuple[np.ndarray, ...]  # per level: unique parent seqs
  level_starts: tuple[np.ndarray, ...]  # per level: reduceat starts
  entry_public_state: np.ndarray  # [E] int64
  entry_infostate: np.ndarray  # [E] int64
  entry_seq: np.ndarray  # [E] int64 flat sequence giving the entry's range
  # Entries of the i-th public state of the tree (in infostate order) are
  # [entry_start[i], entry_start[i + 1]).
  entry_start: np.ndarray  # [N + 1] int64

  @property
  def num_sequences(self) -> int:
    return self.num_root + self.num_rows * self.max_actions

  @property
  def num_levels(self) -> int:
    return len(self.level_bounds) - 1

  @functools.cached_property
  def level_rows(self) -> list[slice]:
    """The rows of each level, shallowest first (the passes' grouping,
    as `cfr.CompiledSequences.level_rows` gives a growing tree's)."""
    bounds = self.level_bounds
    return [slice(bounds[l], bounds[l + 1]) for l in range(self.num_levels)]


@dataclasses.dataclass(frozen=True)
class TerminalArrays:
  """All terminal public states as one sparse sequence-pair payoff matrix."""
  seq0: np.ndarray  # [K] int64 player 0's sequence
  seq1: np.ndarray  # [K] int64 player 1's sequence
  weight: np.ndarray  # [K] float64 sum of chance_reach * u0 over the pair


class PublicTree:
  """A set of public states closed under parents, plus its compiled arrays.

  Attributes:
    root: the root public state (a game root or any public state).
    public_states: the public states, breadth first (root first).
    frontier: the non-terminal public states whose children are not in the
      tree (values come from a value function).
  """

  def __init__(self, root: PublicState, public_states: list[PublicState]):
    self.root = root
    self.public_states = public_states
    self.game = root.observer.game
    ids = {ps.id for ps in public_states}
    self.frontier = [
        ps for ps in public_states
        if not ps.is_terminal() and not (
            ps.children_expanded and ps.children()
            and all(c.id in ids for c in ps.children()))
    ]
    self._frontier_ids = {ps.id for ps in self.frontier}
    self._position = {ps.id: i for i, ps in enumerate(public_states)}
    self.players = (self._compile_player(0), self._compile_player(1))
    self.terminals = self._compile_terminals()

  @classmethod
  def from_subtree(cls, root: PublicState) -> "PublicTree":
    """The whole subtree under `root` (bounded by the observer's limit)."""
    return cls(root, list(root.observer.walk(root)))

  def __len__(self) -> int:
    return len(self.public_states)

  # --- Compilation ---------------------------------------------------------

  def _compile_player(self, p: int) -> PlayerArrays:
    game = self.game
    root = self.root
    num_root = root.num_infostates(p)
    # Sequences before renumbering: ("root", j) -> j; ("row", r, k).
    entry_of: dict[tuple[int, int], int] = {}
    entry_seq: list[tuple] = []
    entry_ps: list[int] = []
    entry_inf: list[int] = []
    rows: list[tuple[int, int]] = []  # (public state id, infostate index)
    row_seq: list[tuple] = []
    row_level: list[int] = []
    row_of: dict[tuple[int, int], int] = {}
    entry_start = [0]

    def seq_level(seq: tuple) -> int:
      return 0 if seq[0] == "root" else row_level[seq[1]] + 1

    for ps in self.public_states:
      n = ps.num_infostates(p)
      if ps is root:
        seqs = [("root", j) for j in range(n)]
      else:
        parent = ps.parent
        acting = parent.current_player() == p
        # The sequence of every history; perfect recall makes it constant
        # over each infostate, which is checked here.
        seqs = [None] * n
        hist_inf = ps.history_infostate[p]
        parent_inf = parent.history_infostate[p][ps.parent_history]
        for i in range(len(ps.histories)):
          j = hist_inf[i]
          pj = int(parent_inf[i])
          if acting:
            r = row_of[(parent.id, pj)]
            k = parent.legal_actions(pj).index(int(ps.parent_action[i]))
            seq = ("row", r, k)
          else:
            seq = entry_seq[entry_of[(parent.id, pj)]]
          if seqs[j] is None:
            seqs[j] = seq
          elif seqs[j] != seq:
            raise ValueError(
                f"{game}: infostate {ps.infostates(p)[j]!r} of player {p} is "
                "reached through different own action sequences; the game "
                "does not have perfect recall, which public-tree CFR needs")
      for j in range(n):
        entry_of[(ps.id, j)] = len(entry_seq)
        entry_seq.append(seqs[j])
        entry_ps.append(ps.id)
        entry_inf.append(j)
      entry_start.append(len(entry_seq))
      if ps.current_player() == p and ps.id not in self._frontier_ids:
        for j in range(n):
          row_of[(ps.id, j)] = len(rows)
          rows.append((ps.id, j))
          row_seq.append(seqs[j])
          row_level.append(seq_level(seqs[j]))

    num_rows = len(rows)
    by_id = {ps.id: ps for ps in self.public_states}
    legal = [by_id[ps_id].legal_actions(j) for ps_id, j in rows]
    max_actions = max([len(a) for a in legal], default=1)
    # Renumber rows level by level (stable within a level).
    order = np.argsort(np.asarray(row_level, dtype=np.int64), kind="stable")
    new_of_old = np.empty(num_rows, dtype=np.int64)
    new_of_old[order] = np.arange(num_rows)

    def flat(seq: tuple) -> int:
      if seq[0] == "root":
        return seq[1]
      return num_root + int(new_of_old[seq[1]]) * max_actions + seq[2]

    row_parent_seq = np.asarray([flat(row_seq[o]) for o in order],
                                dtype=np.int64).reshape(num_rows)
    levels = np.asarray(row_level, dtype=np.int64)[order]
    num_levels = int(levels.max()) + 1 if num_rows else 0
    level_bounds = np.searchsorted(levels, np.arange(num_levels + 1))
    legal_mask = np.zeros((num_rows, max_actions), dtype=bool)
    row_actions = np.full((num_rows, max_actions), -1, dtype=np.int64)
    for new, old in enumerate(order):
      a = legal[old]
      legal_mask[new, :len(a)] = True
      row_actions[new, :len(a)] = a
    level_order, level_parents, level_starts = [], [], []
    for l in range(num_levels):
      lo, hi = level_bounds[l], level_bounds[l + 1]
      parents = row_parent_seq[lo:hi]
      perm = np.argsort(parents, kind="stable")
      uniq, starts = np.unique(parents[perm], return_index=True)
      level_order.append(perm)
      level_parents.append(uniq)
      level_starts.append(starts)
    rows_sorted = [rows[o] for o in order]
    return PlayerArrays(
        num_root=num_root,
        num_rows=num_rows,
        max_actions=max_actions,
        row_parent_seq=row_parent_seq,
        level_bounds=level_bounds.astype(np.int64),
        legal_mask=legal_mask,
        row_actions=row_actions,
        row_public_state=np.asarray([r[0] for r in rows_sorted],
                                    dtype=np.int64).reshape(num_rows),
        row_infostate=np.asarray([r[1] for r in rows_sorted],
                                 dtype=np.int64).reshape(num_rows),
        row_infostate_string=tuple(
            by_id[ps_id].infostates(p)[j] for ps_id, j in rows_sorted),
        level_order=tuple(level_order),
        level_parents=tuple(level_parents),
        level_starts=tuple(level_starts),
        entry_public_state=np.asarray(entry_ps, dtype=np.int64),
        entry_infostate=np.asarray(entry_inf, dtype=np.int64),
        entry_seq=np.asarray([flat(s) for s in entry_seq], dtype=np.int64),
        entry_start=np.asarray(entry_start, dtype=np.int64),
    )

  def entry_seqs(self, player: int, ps: PublicState) -> np.ndarray:
    """[n_p] the flat sequence of each of `player`'s infostates in `ps`."""
    arrays = self.players[player]
    i = self._position[ps.id]
    return arrays.entry_seq[arrays.entry_start[i]:arrays.entry_start[i + 1]]

  def _compile_terminals(self) -> TerminalArrays:
    seq0, seq1, weight = [], [], []
    for ps in self.public_states:
      if not ps.is_terminal():
        continue
      s0 = self.entry_seqs(0, ps)[ps.history_infostate[0]]
      s1 = self.entry_seqs(1, ps)[ps.history_infostate[1]]
      u0 = ps.returns0()
      seq0.append(s0)
      seq1.append(s1)
      weight.append(ps.chance_reach * u0)
    if not seq0:
      empty = np.zeros(0, dtype=np.int64)
      return TerminalArrays(empty, empty, np.zeros(0))
    seq0 = np.concatenate(seq0)
    seq1 = np.concatenate(seq1)
    weight = np.concatenate(weight)
    n1 = self.players[1].num_sequences
    pair, inverse = np.unique(seq0 * n1 + seq1, return_inverse=True)
    summed = np.bincount(inverse.reshape(-1), weights=weight,
                         minlength=len(pair))
    keep = summed != 0.0
    return TerminalArrays(seq0=(pair // n1)[keep], seq1=(pair % n1)[keep],
                          weight=summed[keep])

