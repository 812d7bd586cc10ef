"""The memory guard of public-state expansions (DESIGN.md section 3).

Histories can be large (a gin_rummy state takes about 50 KB), so counts of
histories alone do not bound an expansion's memory: `MemoryGuard` reads the
process's resident memory as children are built and stops an expansion that
takes it past the budget (`ObserverConfig.max_memory_bytes`).
"""

from __future__ import annotations

import os

import pyspiel

from open_spiel_sog.public_state.state import PublicState

# Memory is read (MemoryGuard.check) every this many child histories built.
_MEMORY_CHECK_EVERY = 1024


def resident_memory() -> int | None:
  """This process's resident memory in bytes (Linux), or None."""
  try:
    with open("/proc/self/statm", encoding="ascii") as f:
      return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
  except (OSError, ValueError, IndexError):
    return None


def physical_memory() -> int | None:
  """The machine's physical memory in bytes, or None."""
  try:
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
  except (OSError, ValueError, AttributeError):
    return None


class MemoryGuard:
  """Raises ValueError when expansions take the process past its memory
  budget: max_memory_bytes, or (0) half the machine's physical memory."""

  def __init__(self, game: pyspiel.Game, max_memory_bytes: int):
    self.game = game
    budget = max_memory_bytes
    if not budget:
      physical = physical_memory()
      budget = physical // 2 if physical else 0
    self.budget = budget or None
    self._unchecked_children = 0  # built since memory was last read

  def building(self, ps: PublicState, built: int) -> None:
    """Called before each child of `ps` is built (`built` built so far):
    reads memory every _MEMORY_CHECK_EVERY children."""
    if built % _MEMORY_CHECK_EVERY == _MEMORY_CHECK_EVERY - 1:
      self.check(ps, built)

  def built(self, ps: PublicState, built: int) -> None:
    """Called once `built` children of `ps` are built. Memory is read every
    _MEMORY_CHECK_EVERY children built, over all expansions (reading it
    takes longer than a small expansion)."""
    self._unchecked_children += built
    if self._unchecked_children >= _MEMORY_CHECK_EVERY:
      self.check(ps, built)

  def check(self, ps: PublicState, built: int) -> None:
    """Raises ValueError when the process holds more memory than allowed."""
    self._unchecked_children = 0
    if self.budget is None:
      return
    rss = resident_memory()
    if rss is not None and rss > self.budget:
      raise ValueError(
          f"{self.game}: expanding the public state at depth {ps.depth} "
          f"({len(ps.histories)} histories; {built} children built) took "
          f"this process past {self.budget / 2**30:.1f} GiB of "
          "memory; the game is too large for exact public states (raise "
          "ObserverConfig.max_memory_bytes if you have the memory)")
