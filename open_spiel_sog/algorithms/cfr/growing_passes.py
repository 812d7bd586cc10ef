"""The CFR+ passes over a growing tree's sequences (`growing`), each with
its C++ kernel and its numpy twin side by side behind one call.

The kernels (`_native/cfr_kernels.h`, in the shim where it is built) walk
rows and entries in the order the tree grew; the numpy passes go level by
level (`passes.sequence_reach`, `passes.sequence_values`, the same code as
the whole-tree solvers') and by public-state depth. Both give the same
numbers (tests/cfr_kernels_test.py): the numpy twins are the fallback where
the shim is missing and the reference the kernels are checked against.
"""

from __future__ import annotations

import numpy as np

from open_spiel_sog import _native
from open_spiel_sog.algorithms.cfr.growing import CompiledSequences
from open_spiel_sog.algorithms.cfr.growing import PlayerSequences
from open_spiel_sog.algorithms.cfr.passes import masked_regret_matching
from open_spiel_sog.algorithms.cfr.passes import sequence_reach
from open_spiel_sog.algorithms.cfr.passes import sequence_values

_KERNELS = None  # the shim (its cfr_* passes), or False; see kernels()


def _num_rows(c: CompiledSequences) -> int:
  return (c.num_seq - c.num_root) // max(c.width, 1)


def kernels():
  """The C++ shim where it is usable and has the passes, else None."""
  global _KERNELS
  if _KERNELS is None:
    shim, _ = _native.load_shim()
    _KERNELS = shim if hasattr(shim, "cfr_reach") else False
  return _KERNELS or None


def reach(c: CompiledSequences, policy: np.ndarray, root_range: np.ndarray
          ) -> np.ndarray:
  """The reach of every sequence [S] under `policy`."""
  k = kernels()
  if k is not None:
    return k.cfr_reach(c.row_parent_seq, policy, root_range, c.width)
  return numpy_reach(c, policy, root_range)


def numpy_reach(c: CompiledSequences, policy: np.ndarray,
                root_range: np.ndarray) -> np.ndarray:
  return sequence_reach(c.num_root, _num_rows(c), c.width, c.row_parent_seq,
                        c.level_rows, policy, root_range, np.zeros(c.num_seq))


def values(c: CompiledSequences, policy: np.ndarray, direct: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray]:
  """(sequence values [S], row values [R]); `direct` (float64) is consumed."""
  k = kernels()
  if k is not None:
    row_values = k.cfr_values(c.row_parent_seq, policy, direct, c.num_root,
                              c.width)
    return direct, row_values
  return numpy_values(c, policy, direct)


def numpy_values(c: CompiledSequences, policy: np.ndarray, direct: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:

  def add_to_parents(level, rows, v, seq_values):
    del level
    seq_values += np.bincount(c.row_parent_seq[rows], weights=v,
                              minlength=c.num_seq)

  return sequence_values(c.num_root, _num_rows(c), c.width, c.level_rows,
                         policy, direct, add_to_parents)


def regret_update(side: PlayerSequences, c: CompiledSequences,
                  seq_values: np.ndarray, row_values: np.ndarray,
                  own: np.ndarray, weight: float) -> None:
  """CFR+ on `side`'s rows, in place: the linear average gains weight * own
  reach * policy, regrets gain each active action's advantage (clipped at
  0), and the policy becomes regret matching over the active actions."""
  n = side.num_rows
  k = kernels()
  if k is not None:
    k.cfr_regret_update(side.regrets, side.avg, side.policy, side.active,
                        seq_values, row_values, own, weight, c.num_root, n,
                        c.width)
    return
  numpy_regret_update(side, c, seq_values, row_values, own, weight)


def numpy_regret_update(side: PlayerSequences, c: CompiledSequences,
                        seq_values: np.ndarray, row_values: np.ndarray,
                        own: np.ndarray, weight: float) -> None:
  n = side.num_rows
  action_values = seq_values[c.num_root:].reshape(n, c.width)
  side.avg[:n, :c.width] += (weight * own)[:, None] * side.policy[:n]
  side.regrets[:n] += np.where(side.active[:n],
                               action_values - row_values[:, None], 0.0)
  np.maximum(side.regrets[:n], 0.0, out=side.regrets[:n])
  side.policy[:n] = masked_regret_matching(side.regrets[:n], side.active[:n])


def rematch_rows(side: PlayerSequences, begin: int, end: int) -> None:
  """Regret matching over the active actions of rows [begin, end), in
  place (after their active actions changed)."""
  k = kernels()
  if k is not None:
    k.cfr_regret_matching(side.regrets, side.active, side.policy, begin, end)
  else:
    side.policy[begin:end] = masked_regret_matching(side.regrets[begin:end],
                                                    side.active[begin:end])


def average_policy(side: PlayerSequences) -> np.ndarray:
  """[rows, width] the average policy of `side`'s rows (the current one
  where a row has no average yet)."""
  n = side.num_rows
  avg = np.where(side.active[:n], side.avg[:n], 0.0)
  total = avg.sum(axis=1, keepdims=True)
  current = side.policy[:n]
  return np.where(total > 0.0, avg / np.where(total > 0.0, total, 1.0),
                  current)


def propagate_entry_values(c: CompiledSequences, policy: np.ndarray,
                           values: np.ndarray) -> None:
  """In place: an entry with a row takes its actions' value under `policy`
  (the action values summed from the entries below), and every entry adds
  its value to its parent (to the slot of its own last action, else to the
  parent entry), deepest first."""
  k = kernels()
  if k is not None:
    k.cfr_entry_values(values, c.entry_row, c.entry_parent_row,
                       c.entry_parent_slot, c.entry_parent, policy,
                       len(c.row_entry), c.width)
    return
  numpy_propagate_entry_values(c, policy, values)


def numpy_propagate_entry_values(c: CompiledSequences, policy: np.ndarray,
                                 values: np.ndarray) -> None:
  action_values = np.zeros((max(len(c.row_entry), 1), c.width))
  for rows_d, row_entries, via_row, via_parent in c.depth_groups:
    if rows_d.size:
      values[row_entries] = np.einsum("ij,ij->i", action_values[rows_d],
                                      policy[rows_d])
    if via_row.size:
      np.add.at(action_values, (c.entry_parent_row[via_row],
                                c.entry_parent_slot[via_row]),
                values[via_row])
    if via_parent.size:
      values += np.bincount(c.entry_parent[via_parent],
                            weights=values[via_parent],
                            minlength=c.num_entries)
