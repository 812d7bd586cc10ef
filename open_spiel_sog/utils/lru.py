"""A mapping that keeps only its most recently used entries.

Module-level caches of whole policies or public trees (a table opponent's
policy, a CFR+ solution, a game's public tree) grow with every game a
process meets: a tournament or the test suite meets many. This bounds them.
"""

from __future__ import annotations

import collections
from typing import Any, Hashable


class LRUCache:
  """At most `max_entries` entries; `get` and `put` make an entry the most
  recent, and `put` drops the least recent ones beyond the bound. Not
  thread-safe: callers that share one across threads hold their own lock."""

  def __init__(self, max_entries: int):
    if max_entries < 1:
      raise ValueError(f"LRUCache: max_entries must be >= 1, got "
                       f"{max_entries}")
    self.max_entries = max_entries
    self._entries: collections.OrderedDict = collections.OrderedDict()

  def get(self, key: Hashable, default: Any = None) -> Any:
    if key not in self._entries:
      return default
    self._entries.move_to_end(key)
    return self._entries[key]

  def put(self, key: Hashable, value: Any) -> None:
    self._entries[key] = value
    self._entries.move_to_end(key)
    while len(self._entries) > self.max_entries:
      self._entries.popitem(last=False)

  def clear(self) -> None:
    self._entries.clear()

  def keys(self) -> list:
    """The keys, least recently used first."""
    return list(self._entries)

  def __contains__(self, key: Hashable) -> bool:
    return key in self._entries

  def __len__(self) -> int:
    return len(self._entries)
