"""A sliding-window replay buffer of encoded examples (either input)."""

from __future__ import annotations

import numpy as np

from open_spiel_sog.algorithms.sog.cvpn import Batch
from open_spiel_sog.algorithms.sog.cvpn import TokenBatch


class ReplayBuffer:
  """Keeps the latest `capacity` examples and samples uniform minibatches
  from them: slot examples in a ring over preallocated arrays, token
  examples (each of its own size) in a ring of per-example arrays, their
  tokens kept in float16 (the tensors are mostly 0/1 planes)."""

  def __init__(self, capacity: int):
    if capacity < 1:
      raise ValueError(f"replay buffer capacity must be >= 1, got {capacity}")
    self.capacity = capacity
    self._arrays: dict[str, np.ndarray] | None = None
    self._examples: list | None = None
    self.size = 0
    self.added = 0  # examples ever added
    self._next = 0

  def __len__(self) -> int:
    return self.size

  def add(self, batch) -> None:
    n = len(batch)
    if n == 0:
      return
    if isinstance(batch, TokenBatch):
      if self._examples is None:
        self._examples = []
      for ex in batch.examples():
        ex = dict(ex)
        ex["tokens"] = ex["tokens"].astype(np.float16)
        if len(self._examples) < self.capacity:
          self._examples.append(ex)
        else:
          self._examples[self._next] = ex
        self._next = (self._next + 1) % self.capacity
      self.size = len(self._examples)
      self.added += n
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

  def sample(self, batch_size: int, rng: np.random.Generator):
    if self.size == 0:
      raise ValueError("cannot sample from an empty replay buffer")
    index = rng.integers(self.size, size=batch_size)
    if self._examples is not None:
      return TokenBatch.stack([self._examples[i] for i in index])
    return Batch(*(self._arrays[f][index] for f in Batch.FIELDS))
