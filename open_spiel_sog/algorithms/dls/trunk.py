"""The trunk and its leaves (depth-limited solving, DESIGN.md section 12).

The trunk is the public tree from a subgame's root down to the frontier;
below each frontier public state, `_Frontier` holds the subtree that gives
the leaf values W_F of each opponent continuation, and `_leaves` lays the
trunk's leaf pairs out for the augmented CFR.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from open_spiel_sog.algorithms.cfr import reach_pass
from open_spiel_sog.algorithms.dls.policies import PolicyFn
from open_spiel_sog.algorithms.dls.policies import _row_policy
from open_spiel_sog.public_state import PublicState
from open_spiel_sog.public_state import PlayerArrays
from open_spiel_sog.public_state import PublicTree

FRONTIERS = ("round", "depth")


def _root_ancestors(arrays: PlayerArrays) -> np.ndarray:
  """[S] the root sequence (root infostate) above each sequence."""
  anc = np.zeros(arrays.num_sequences, dtype=np.int64)
  anc[:arrays.num_root] = np.arange(arrays.num_root)
  rows = anc[arrays.num_root:].reshape(arrays.num_rows, arrays.max_actions)
  bounds = arrays.level_bounds
  for l in range(arrays.num_levels):
    lo, hi = bounds[l], bounds[l + 1]
    rows[lo:hi] = anc[arrays.row_parent_seq[lo:hi], None]
  return anc


def trunk_public_states(root: PublicState, frontier: str, depth: int
                        ) -> list[PublicState]:
  """The public states from `root` down to the frontier, breadth first
  (frontier states included, unexpanded)."""
  if frontier not in FRONTIERS:
    raise ValueError(f"unknown frontier {frontier!r}; supported: "
                     f"{', '.join(map(repr, FRONTIERS))}")
  out, queue = [], [root]
  while queue:
    ps = queue.pop(0)
    out.append(ps)
    if ps.is_terminal():
      continue
    if ps is not root and _at_frontier(ps, root, frontier, depth):
      continue
    queue.extend(ps.children())
  return out


def _at_frontier(ps: PublicState, root: PublicState, frontier: str,
                 depth: int) -> bool:
  if frontier == "depth":
    return ps.depth - root.depth >= depth
  return ps.is_chance_node() and ps.after_a_decision()


class _Frontier:
  """One frontier public state's subtree: leaf values per continuation."""

  def __init__(self, ps: PublicState, searcher: int,
               blueprint: PolicyFn):
    self.ps = ps
    self.searcher = searcher
    tree = PublicTree.from_subtree(ps)
    if tree.frontier:
      raise ValueError(f"the subtree below {ps.describe()} is too large to "
                       "enumerate for its leaf values")
    self.tree = tree
    s, o = searcher, 1 - searcher
    t = tree.terminals
    seqs = (t.seq0, t.seq1)
    self._seq_o = seqs[o]
    reach_s = reach_pass(tree.players[s], _row_policy(tree, s, blueprint),
                         np.ones(tree.players[s].num_root),
                         np.zeros(tree.players[s].num_sequences))
    sign = 1.0 if s == 0 else -1.0
    self._weight = sign * t.weight * reach_s[seqs[s]]
    self.shape = (ps.num_infostates(s), ps.num_infostates(o))
    self._pair = (_root_ancestors(tree.players[s])[seqs[s]] * self.shape[1] +
                  _root_ancestors(tree.players[o])[seqs[o]])

  def values(self, strategy: PolicyFn) -> np.ndarray:
    """[n_searcher, n_opponent] W_F[a, b] for one opponent continuation."""
    o = 1 - self.searcher
    arrays = self.tree.players[o]
    reach_o = reach_pass(arrays, _row_policy(self.tree, o, strategy),
                         np.ones(arrays.num_root),
                         np.zeros(arrays.num_sequences))
    w = np.bincount(self._pair, weights=self._weight * reach_o[self._seq_o],
                    minlength=self.shape[0] * self.shape[1])
    return w.reshape(self.shape)


@dataclasses.dataclass
class _Leaves:
  """The trunk's leaf pairs, grouped by the opponent's leaf infostate."""
  row_seq: np.ndarray  # [L] the opponent's trunk sequence of leaf row l
  pair_row: np.ndarray  # [P] leaf row of each pair (sorted)
  pair_seq_s: np.ndarray  # [P] searcher's trunk sequence
  pair_seq_o: np.ndarray  # [P] opponent's trunk sequence
  values: np.ndarray  # [P, k] searcher's utility times chance reach
  row_starts: np.ndarray  # rows that have pairs: start of each in pairs
  rows_with_pairs: np.ndarray
  row_public_state: np.ndarray  # [L] the leaf row's frontier public state
  row_infostate: np.ndarray  # [L] the opponent's infostate index there

  @property
  def num_rows(self) -> int:
    return len(self.row_seq)


def _leaves(tree: PublicTree, searcher: int,
            values: dict[int, np.ndarray]) -> _Leaves:
  """The leaf arrays of `tree` from {frontier id: [n_s, n_o, k] values}."""
  o = 1 - searcher
  row_seq, row_ps, row_inf = [], [], []
  pair_row, pair_s, pair_o, pair_w = [], [], [], []
  k = next(iter(values.values())).shape[2] if values else 1
  first = 0
  for ps in tree.frontier:
    w = values[ps.id]
    seq_s = tree.entry_seqs(searcher, ps)
    seq_o = tree.entry_seqs(o, ps)
    row_seq.append(seq_o)
    row_ps.append(np.full(len(seq_o), ps.id))
    row_inf.append(np.arange(len(seq_o)))
    b, a = np.nonzero(np.any(w != 0.0, axis=2).T)  # sorted by b
    pair_row.append(first + b)
    pair_s.append(seq_s[a])
    pair_o.append(seq_o[b])
    pair_w.append(w[a, b, :])
    first += len(seq_o)
  cat = lambda xs, dt: (np.concatenate(xs).astype(dt) if xs else
                        np.zeros(0, dt))
  rows = cat(pair_row, np.int64)
  uniq, starts = np.unique(rows, return_index=True)
  return _Leaves(row_seq=cat(row_seq, np.int64), pair_row=rows,
                 pair_seq_s=cat(pair_s, np.int64),
                 pair_seq_o=cat(pair_o, np.int64),
                 values=(np.concatenate(pair_w) if pair_w else
                         np.zeros((0, k))),
                 row_starts=starts, rows_with_pairs=uniq,
                 row_public_state=cat(row_ps, np.int64),
                 row_infostate=cat(row_inf, np.int64))


def _descends(ps: PublicState, ancestor: PublicState) -> bool:
  node = ps
  while node is not None:
    if node is ancestor:
      return True
    node = node.parent
  return False
