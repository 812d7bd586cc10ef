"""A sliding-window replay buffer of encoded examples."""

from __future__ import annotations

import numpy as np

from open_spiel_sog.algorithms.sog.cvpn import Batch


class ReplayBuffer:
  """Keeps the latest `capacity` examples (a ring over preallocated arrays)
  and samples uniform minibatches from them."""

  def __init__(self, capacity: int):
    if capacity < 1:
      raise ValueError(f"replay buffer capacity must be >= 1, got {capacity}")
    self.capacity = capacity
    self._arrays: dict[str, np.ndarray] | None = None
    self.size = 0
    self.added = 0  # examples ever added
    self._next = 0

  def __len__(self) -> int:
    return self.size

  def add(self, batch: Batch) -> None:
    n = len(batch)
    if n == 0:
      return
    if self._arrays is None:
      self._arrays = {
          f: np.zeros((self.capacity,) + getattr(batch, f).shape[1:],
                      dtype=getattr(batch, f).dtype) for f in Batch.FIELDS}
    if n > self.capacity:
      batch = batch.take(slice(n - self.capacity, n))
      n = self.capacity
    index = (self._next + np.arange(n)) % self.capacity
    for f in Batch.FIELDS:
      self._arrays[f][index] = getattr(batch, f)
    self._next = int((self._next + n) % self.capacity)
    self.size = min(self.size + n, self.capacity)
    self.added += n

  def sample(self, batch_size: int, rng: np.random.Generator) -> Batch:
    if self.size == 0:
      raise ValueError("cannot sample from an empty replay buffer")
    index = rng.integers(self.size, size=batch_size)
    return Batch(*(self._arrays[f][index] for f in Batch.FIELDS))
