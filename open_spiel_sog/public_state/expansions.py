"""Exact expansions shared by every observer of the process (DESIGN.md
section 3).

`ExpansionCache` keeps the children of exact public states, keyed by
`PublicState.content_key`, so that a fresh observer of the same game and
sources reuses them instead of building, keying and partitioning the same
child histories again. `EXPANSIONS` is the process's cache; the observer
reads it from this module at each expansion (tests put a cache of their own
in its place).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

# Exact expansions are kept process-wide, up to this many child histories in
# all (see `ExpansionCache`).
EXPANSION_CACHE_HISTORIES = 20_000


class Expansion(NamedTuple):
  """The children of one exact public state, as
  `PublicStateObserver._expand` builds them before grouping is turned into
  public states (nothing here depends on sampling, the searcher or the
  observer's own state)."""
  children: tuple  # [C] pyspiel.State, never mutated (users clone)
  reach: np.ndarray  # [C] chance reach
  parent_history: np.ndarray  # [C]
  parent_action: np.ndarray  # [C]
  keys: list  # [2][C] infostate keys
  groups: list  # [(label, [C'] member indices)] in the order built
  # label -> `PublicState.derived` of the group's public state when built
  # whole (filled as they are built).
  derived: dict
  # label -> (member indices, chance reach, parent history, parent action,
  # histories) of a group built whole (filled as they are built).
  parts: dict


class ExpansionCache:
  """Exact expansions of public states, shared by every observer in the
  process, keyed by `PublicState.content_key` (the game, the observer's
  sources and the labels on the path from the root).

  A fresh bot (a tournament's, a training actor's next search, each seed of
  a benchmark) would otherwise rebuild, key and partition the same child
  histories again: 28 of 130 ms of a Leduc SoG(100, 1) decision. Only
  expansions that sampled nothing are kept, and reusing one gives the public
  states, ids aside, that building it again would (sampling below them draws
  from the same children in the same order). Bounded by
  `max_histories` child histories in all; the oldest entries go first."""

  def __init__(self, max_histories: int = EXPANSION_CACHE_HISTORIES):
    self.max_histories = max_histories
    self._entries: dict[tuple, Expansion] = {}
    self._histories = 0
    self.hits = 0
    self.misses = 0

  def get(self, key: tuple | None) -> Expansion | None:
    entry = None if key is None else self._entries.get(key)
    if key is not None:
      if entry is None:
        self.misses += 1
      else:
        self.hits += 1
    return entry

  def put(self, key: tuple, entry: Expansion) -> None:
    size = len(entry.children)
    if size > self.max_histories:
      return
    while self._entries and self._histories + size > self.max_histories:
      oldest = next(iter(self._entries))
      self._histories -= len(self._entries.pop(oldest).children)
    self._entries[key] = entry
    self._histories += size

  def clear(self) -> None:
    self._entries.clear()
    self._histories = 0
    self.hits = self.misses = 0

  def __len__(self) -> int:
    return len(self._entries)


EXPANSIONS = ExpansionCache()
