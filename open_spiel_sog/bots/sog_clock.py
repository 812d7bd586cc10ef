"""The garbage a time-limited sog decision leaves to collect
(`GarbageCollection`): collected before each decision's searches, inside
its time, with Python's automatic full collections paused while it
searches."""

from __future__ import annotations

import contextlib
import gc
import time

from open_spiel_sog.utils import notices

class GarbageCollection:
  """Python's cyclic garbage (the public states pruned since the last
  search, with their states), collected inside each time-limited decision
  before its searches. Left to the automatic collector, it piles up over
  decisions and is freed all at once whenever a collection falls, inside
  some later search (gin_rummy: collections of 1.2-1.4 s freeing 23,000-
  33,000 objects, time-limited decisions of 2.4 s at time_limit=1);
  collected at every decision, it takes tens of milliseconds.

  A full collection walks the whole process's heap, not only what the bot
  left: in a large heap (a test suite's, a notebook's) it can take longer
  than the limit itself (a process holding a network: 70-150 ms of a 0.5 s
  move). The anchored subgame keeps its tree in C++ or in the Python
  engine's index arrays and leaves no cyclic garbage (full collections
  after each move of London and phantom_ttt games found none), so it
  collects only the young generations (`full` False, about a
  millisecond). So a collection is timed when the bot is built and at
  each decision, and once one takes more than `SHARE` of the limit the bot
  leaves collection to Python's collector (with a notice), whose full
  collections become rare as the heap grows.

  Either way the automatic collector's full collections are paused while
  a time-limited decision searches (`decision()`): in goofspiel's heap,
  once the bot had left collection to it, a full collection of 0.35 s fell
  inside a search and the decision took 1.32 s at time_limit=1. (Pausing
  every collection instead left the decision's young objects to one
  collection of 20-50 ms after the search, past the deadline.)"""

  SHARE = 0.25

  def __init__(self, time_limit: float, full: bool = True):
    self._limit = time_limit
    self.seconds = 0.0  # the latest full collection's
    self.enabled = bool(time_limit)
    self.full = full  # False: the young generations only
    self.before_search()

  # The collector's third threshold while paused: generation-1 collections
  # before a full one, a count never reached in practice.
  _NO_FULL = 1 << 30

  @contextlib.contextmanager
  def decision(self):
    """A time-limited decision's searches: the garbage collected first
    (`before_search`), then Python's automatic full collections paused
    until they end (its young-generation collections go on, a fraction of
    a millisecond each, inside the searches' timing; without a time limit
    nothing changes)."""
    self.before_search()
    thresholds = gc.get_threshold()
    pause = bool(self._limit) and thresholds[2] < self._NO_FULL
    if pause:
      gc.set_threshold(thresholds[0], thresholds[1], self._NO_FULL)
    try:
      yield
    finally:
      if pause:
        gc.set_threshold(*thresholds)

  def before_search(self) -> None:
    if not self.enabled or not gc.isenabled():
      return
    if not self.full:
      gc.collect(1)
      return
    start = time.monotonic()
    gc.collect()
    self.seconds = time.monotonic() - start
    if self.seconds > self.SHARE * self._limit:
      self.enabled = False
      notices.notice(
          "collector", "",
          f"sog: a full garbage collection took {self.seconds:.2f} s, more "
          f"than {self.SHARE:g} of time_limit={self._limit:g}; leaving "
          "collection to Python's collector")
