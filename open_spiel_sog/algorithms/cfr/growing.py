"""A player's sequences in a public tree grown by appending (GT-CFR's
layout; DESIGN.md sections 4 and 5).

A public tree that grows during a search cannot be compiled once, as
`public_state.PublicTree` is: its arrays are appended to as public states
are added, and `PlayerSequences.compile()` extends the previous compilation
where its layout is unchanged.

Vocabulary (one player p):
* entry: a pair (public state, infostate of p), numbered in the order the
  tree grew; its range is the reach of its sequence.
* row: an entry where p acts (an interior decision node's infostate), with
  one sequence per legal action; rows are numbered in the order they were
  made, and a row's level is the number of p's own actions before it.
* sequence: flat index ``num_root + row * width + slot``, or a root
  sequence ``j < num_root`` (p's infostates at the tree's root).
* history of a row: a history of the row's public state lying in the row's
  infostate, with the opponent's entry there and its chance reach (what
  PUCT's counterfactual normalisers sum).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple

import numpy as np

from open_spiel_sog.utils.growing_array import GrowingArray


class DepthGroup(NamedTuple):
  """The entries and rows at one public-state depth, as the numpy entry-value
  pass reads them."""
  rows: np.ndarray  # [R_d] rows whose entries are at depth d
  row_entries: np.ndarray  # [R_d] their entries
  via_row: np.ndarray  # entries at d reached by an own action (via a row)
  via_parent: np.ndarray  # entries at d reached otherwise (the parent entry)


@dataclasses.dataclass
class CompiledSequences:
  """One player's arrays derived from its `PlayerSequences` (rebuilt, or
  extended, after the tree grows)."""
  num_root: int
  width: int
  num_seq: int
  entry_seq: np.ndarray  # [E] flat sequence of each entry
  row_parent_seq: np.ndarray  # [R] flat sequence above each row
  row_level: np.ndarray  # [R] own actions before each row
  history_row: np.ndarray  # [H] each row history's row
  history_opponent_entry: np.ndarray  # [H] the opponent's entry there
  history_chance: np.ndarray  # [H] its chance reach
  num_entries: int
  row_entry: np.ndarray  # [R] each row's entry
  entry_parent: np.ndarray  # [E] the entry above each entry (-1: root)
  entry_parent_row: np.ndarray  # [E] the row whose action leads to the
  # entry (-1: none, reached via entry_parent)
  entry_parent_slot: np.ndarray  # [E] that action's slot (-1: none)
  entry_row: np.ndarray  # [E] the row of each entry, -1 where none (a view
  # of the player's array: an entry that gains a row later shows it)
  entry_depth: np.ndarray  # [E] public-state depth of each entry

  # The numpy passes' groupings (the C++ passes walk rows and entries in
  # the order the tree grew instead).

  @functools.cached_property
  def level_rows(self) -> list[np.ndarray]:
    """Rows by level, shallowest first."""
    levels = self.row_level
    num_levels = int(levels.max()) + 1 if len(levels) else 0
    return [np.nonzero(levels == l)[0] for l in range(num_levels)]

  @functools.cached_property
  def depth_groups(self) -> list[DepthGroup]:
    """Per public-state depth, deepest first."""
    e_depth, r_entry, e_prow = (self.entry_depth, self.row_entry,
                                self.entry_parent_row)
    r_depth = e_depth[r_entry] if len(r_entry) else np.zeros(0, np.int64)
    groups = []
    for d in range(int(e_depth.max()), -1, -1):
      rows_d = np.nonzero(r_depth == d)[0]
      at = np.nonzero(e_depth == d)[0] if d > 0 else np.zeros(0, np.int64)
      groups.append(DepthGroup(rows_d, r_entry[rows_d], at[e_prow[at] >= 0],
                               at[e_prow[at] < 0]))
    return groups


class PlayerSequences:
  """One player's entries and rows (decisions) in a growing public tree,
  with its CFR state.

  Attributes, per entry ([E], appended as public states are added):
    entry_seq_row, entry_seq_slot: the entry's sequence as (row, slot);
      row -1 means the root sequence `slot`.
    entry_parent, entry_parent_row, entry_parent_slot, entry_depth,
      entry_row: as in `CompiledSequences`.
  Per row ([R]):
    row_entry, row_level: as in `CompiledSequences`.
    row_actions: each row's legal actions (a list of lists).
  Per row history ([H]):
    history_row, history_opponent_entry, history_chance: as in
      `CompiledSequences`.
    history_rows_in_order: True while each row has one history, at the
      row's own index (one-history nodes only: perfect information).
  CFR state ([capacity, width], rows past num_rows unused):
    regrets, policy, avg (the average policy's numerators), active (the
    actions whose children are in the tree), legal, prior, visits.
  """

  def __init__(self):
    self.entry_seq_row = GrowingArray()
    self.entry_seq_slot = GrowingArray()
    self.entry_parent = GrowingArray()
    self.entry_parent_row = GrowingArray()
    self.entry_parent_slot = GrowingArray()
    self.entry_depth = GrowingArray()
    self.entry_row = GrowingArray()  # -1 where none (yet)
    self.num_root = 0
    self.row_entry = GrowingArray()
    self.row_level = GrowingArray()
    self.row_actions: list[list[int]] = []
    self.history_row = GrowingArray()
    self.history_opponent_entry = GrowingArray()
    self.history_chance = GrowingArray(np.float64)
    self.history_rows_in_order = True
    self.width = 1
    self.capacity = 0
    self.regrets = np.zeros((0, 1))
    self.policy = np.zeros((0, 1))
    self.avg = np.zeros((0, 1))
    self.active = np.zeros((0, 1), dtype=bool)
    self.legal = np.zeros((0, 1), dtype=bool)
    self.prior = np.zeros((0, 1))
    self.visits = np.zeros((0, 1))
    # The latest compilation and the flat sequence of every entry and
    # parent sequence of every row, grown with it (see `compile`).
    self.last_compiled: CompiledSequences | None = None
    self._sequences: tuple[GrowingArray, GrowingArray] | None = None

  @property
  def num_rows(self) -> int:
    return len(self.row_entry)

  @property
  def num_entries(self) -> int:
    return len(self.entry_seq_row)

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

  def compile(self) -> CompiledSequences:
    """The arrays of the sequences as they are now: extended from the
    previous compilation where the layout (root sequences, row width) is
    unchanged, else built anew. (After one growth a few entries are new:
    they are converted in Python, which is faster than numpy for a
    handful.)"""
    nr, width, rows = self.num_root, self.width, self.num_rows
    entries = self.entry_seq_row.n
    prev = self.last_compiled
    if prev is None or prev.width != width or prev.num_root != nr:
      prev_entries = prev_rows = 0
      self._sequences = (GrowingArray(), GrowingArray())
    else:
      prev_entries, prev_rows = prev.num_entries, len(prev.row_entry)
    e_seq_grown, r_parent_seq_grown = self._sequences
    if entries - prev_entries == 1:  # (a perfect-information search's)
      r, sl = int(self.entry_seq_row.buf[prev_entries]), int(
          self.entry_seq_slot.buf[prev_entries])
      e_seq_grown.append(sl if r < 0 else nr + r * width + sl)
    else:
      srow = self.entry_seq_row.buf[prev_entries:entries]
      sslot = self.entry_seq_slot.buf[prev_entries:entries]
      if entries - prev_entries <= 8:
        e_seq_grown.extend([s if r < 0 else nr + r * width + s
                            for r, s in zip(srow.tolist(), sslot.tolist())])
      else:
        e_seq_grown.extend(np.where(srow < 0, sslot,
                                    nr + srow * width + sslot))
    e_seq = e_seq_grown.buf[:entries]
    r_entry = self.row_entry.buf[:rows]
    if rows - prev_rows == 1:
      r_parent_seq_grown.append(e_seq[r_entry[prev_rows]])
    elif rows > prev_rows:
      r_parent_seq_grown.extend(e_seq[r_entry[prev_rows:]])
    compiled = CompiledSequences(
        nr, width, nr + rows * width, e_seq, r_parent_seq_grown.buf[:rows],
        self.row_level.buf[:rows], self.history_row.view(),
        self.history_opponent_entry.view(), self.history_chance.view(),
        entries, r_entry, self.entry_parent.buf[:entries],
        self.entry_parent_row.buf[:entries],
        self.entry_parent_slot.buf[:entries], self.entry_row.buf[:entries],
        self.entry_depth.buf[:entries])
    self.last_compiled = compiled
    return compiled
