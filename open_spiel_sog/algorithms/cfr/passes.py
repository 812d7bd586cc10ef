"""The CFR+ passes over a player's sequences (DESIGN.md section 4).

A player's sequences are its root infostates (`num_root` of them, whose
reach is the player's range at the root) and, for each row (a decision
infostate of the player), one sequence per action: flat index
``num_root + row * width + slot``. Each row hangs below a parent sequence
(the player's last own action before it). Rows are grouped in levels (the
number of the player's own actions before them), so that a pass is a few
numpy gathers and scatters per level, never a Python loop over nodes.

Two layouts hold such sequences, and both go through the passes here:

* `public_state.PlayerArrays`, a whole public tree compiled at once (the
  exact solver, the leaf solver, depth-limited solving): its rows are
  numbered level by level, so a level is a slice, and each level's row
  values reach their parents by segment sums (`level_order`,
  `level_starts`).
* `growing.CompiledSequences`, GT-CFR's tree grown by appending: a level is
  an index array, and row values reach their parents by `np.bincount`. Its
  passes also run in the C++ shim (`growing_passes`).

Regret matching+ is here once for all of them (and for joint policy
search's CFR baseline).
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from open_spiel_sog.public_state import PlayerArrays

# `add_to_parents(level, rows, row_values, seq_values)`: adds the values of
# a level's rows to their parent sequences, in place.
AddToParents = Callable[[int, object, np.ndarray, np.ndarray], None]


def regret_matching(regrets: np.ndarray, uniform: np.ndarray) -> np.ndarray:
  """Regret matching+ policy of [rows, A] regrets (`uniform` where no
  regret is positive)."""
  positive = np.maximum(regrets, 0.0)
  total = positive.sum(axis=1, keepdims=True)
  return np.where(total > 0.0, positive / np.where(total > 0.0, total, 1.0),
                  uniform)


def masked_regret_matching(regrets: np.ndarray, active: np.ndarray
                           ) -> np.ndarray:
  """Regret matching+ over the `active` actions of each row of [rows, A]
  regrets (uniform over them where none has positive regret; 0 elsewhere)."""
  count = active.sum(axis=1, keepdims=True)
  uniform = np.where(active, 1.0 / np.maximum(count, 1), 0.0)
  return regret_matching(np.where(active, regrets, 0.0), uniform)


def sequence_reach(num_root: int, num_rows: int, width: int,
                   row_parent_seq: np.ndarray, level_rows: Sequence,
                   policy: np.ndarray, root_range: np.ndarray,
                   out: np.ndarray) -> np.ndarray:
  """Fills `out` [S] with each sequence's reach under `policy` [rows, A]
  from `root_range` [num_root]; `level_rows`: the rows of each level,
  shallowest first (slices or index arrays)."""
  out[:num_root] = root_range
  seq_reach = out[num_root:].reshape(num_rows, width)
  for rows in level_rows:
    seq_reach[rows] = out[row_parent_seq[rows], None] * policy[rows]
  return out


def sequence_values(num_root: int, num_rows: int, width: int,
                    level_rows: Sequence, policy: np.ndarray,
                    direct: np.ndarray, add_to_parents: AddToParents,
                    respond: np.ndarray | None = None,
                    legal_mask: np.ndarray | None = None
                    ) -> tuple[np.ndarray, np.ndarray]:
  """Counterfactual values of every sequence and every row, deepest level
  first: a row's value is its actions' values under `policy` (or, at the
  rows `respond` marks, the best legal action's, by `legal_mask`), added to
  its parent sequence by `add_to_parents`. `direct` [S] (the values that
  land on each sequence) is consumed. Returns (seq_values [S], row_values
  [rows])."""
  seq_values = direct
  action_values = seq_values[num_root:].reshape(num_rows, width)
  row_values = np.zeros(num_rows)
  for level in reversed(range(len(level_rows))):
    rows = level_rows[level]
    v = np.einsum("ij,ij->i", action_values[rows], policy[rows])
    if respond is not None and respond[rows].any():
      best = np.where(legal_mask[rows], action_values[rows],
                      -np.inf).max(axis=1)
      v = np.where(respond[rows], best, v)
    row_values[rows] = v
    add_to_parents(level, rows, v, seq_values)
  return seq_values, row_values


# --- A whole public tree's arrays (public_state.PlayerArrays) ----------------


def reach_pass(arrays: PlayerArrays, policy: np.ndarray,
               root_range: np.ndarray, out: np.ndarray) -> np.ndarray:
  """Fills `out` [S] with each sequence's reach under `policy` [rows, A]."""
  return sequence_reach(arrays.num_root, arrays.num_rows, arrays.max_actions,
                        arrays.row_parent_seq, arrays.level_rows, policy,
                        root_range, out)


def value_pass(arrays: PlayerArrays, policy: np.ndarray,
               direct: np.ndarray, respond: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
  """Counterfactual values of every sequence and every row.

  Args:
    arrays: the player's sequence structure.
    policy: [rows, A] the player's policy.
    direct: [S] values that land directly on each sequence (terminal payoffs
      weighted by the opponent's reach, frontier values). Consumed in place.
    respond: [rows] bool, rows where the player plays a counterfactual best
      response (the legal action of highest value, `best_actions`) instead
      of `policy`.

  Returns:
    (seq_values [S] (root sequences' entries are the root infostates'
    counterfactual values), row_values [rows]).
  """

  def add_to_parents(level, rows, v, seq_values):
    del rows  # (a level's rows are a slice: v is in row order)
    seq_values[arrays.level_parents[level]] += np.add.reduceat(
        v[arrays.level_order[level]], arrays.level_starts[level])

  return sequence_values(arrays.num_root, arrays.num_rows, arrays.max_actions,
                         arrays.level_rows, policy, direct,
                         add_to_parents, respond, arrays.legal_mask)


def rows_dict(arrays: PlayerArrays, probs: np.ndarray,
              rows: Sequence[int] | np.ndarray | None = None
              ) -> dict[str, list[tuple[int, float]]]:
  """{information_state_string: [(action, probability), ...]} of `probs`
  [rows, A] at `rows` (default: all) of `arrays`."""
  out = {}
  for row in (range(arrays.num_rows) if rows is None else rows):
    k = int(arrays.legal_mask[row].sum())
    out[arrays.row_infostate_string[row]] = list(
        zip(arrays.row_actions[row, :k].tolist(), probs[row, :k].tolist()))
  return out


def best_actions(arrays: PlayerArrays, seq_values: np.ndarray) -> np.ndarray:
  """[rows, A] one-hot of each row's legal action of highest counterfactual
  value (the first on ties), from a value pass's `seq_values`."""
  action_values = seq_values[arrays.num_root:].reshape(arrays.num_rows,
                                                       arrays.max_actions)
  best = np.where(arrays.legal_mask, action_values, -np.inf).argmax(axis=1)
  out = np.zeros((arrays.num_rows, arrays.max_actions))
  out[np.arange(arrays.num_rows), best] = 1.0
  return out
