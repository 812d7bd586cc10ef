"""The pipeline's replay ring and the batches it holds, by field name.

Every recipe's examples are named arrays (DESIGN.md section 18): the slot
CVPN's `cvpn.Batch`, a recipe's `FieldBatch` (the policy-value network's
inputs, legal masks and targets) or the token CVPN's `cvpn.TokenBatch`,
whose examples each have their own number of tokens. `ReplayBuffer` keeps
the newest `capacity` examples whatever their fields: fixed-shape fields in
preallocated arrays, variable-shape examples in a ring of per-example
dicts. Batches cross process boundaries as dicts of arrays (`as_dict`,
`from_dict`).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from open_spiel_sog.algorithms.sog.cvpn import Batch
from open_spiel_sog.algorithms.sog.cvpn import TokenBatch

# The key that marks a `FieldBatch` in its `as_dict` form.
_FIELD_BATCH = "__field_batch__"


class FieldBatch:
  """Examples as named arrays sharing their first dimension."""

  def __init__(self, arrays: dict[str, np.ndarray]):
    lengths = {len(a) for a in arrays.values()}
    if len(lengths) > 1:
      raise ValueError(f"FieldBatch: fields of different lengths "
                       f"{ {k: len(a) for k, a in arrays.items()} }")
    self.arrays = dict(arrays)

  def __len__(self) -> int:
    return len(next(iter(self.arrays.values()))) if self.arrays else 0

  def fields(self) -> dict[str, np.ndarray]:
    return self.arrays

  def take(self, index) -> "FieldBatch":
    return FieldBatch({k: a[index] for k, a in self.arrays.items()})

  def as_dict(self) -> dict[str, np.ndarray]:
    return {_FIELD_BATCH: np.zeros(0, np.uint8), **self.arrays}

  @classmethod
  def from_dict(cls, arrays: dict[str, np.ndarray]) -> "FieldBatch":
    return cls({k: v for k, v in arrays.items() if k != _FIELD_BATCH})

  @classmethod
  def concatenate(cls, batches: Sequence["FieldBatch"]) -> "FieldBatch":
    batches = [b for b in batches if len(b)]
    if not batches:
      return cls({})
    return cls({k: np.concatenate([b.arrays[k] for b in batches])
                for k in batches[0].arrays})


def from_dict(arrays: dict[str, np.ndarray]):
  """A batch from its `as_dict` form, whichever kind it is."""
  if _FIELD_BATCH in arrays:
    return FieldBatch.from_dict(arrays)
  if "tokens" in arrays:
    return TokenBatch.from_dict(arrays)
  return Batch.from_dict(arrays)


def _fields(batch) -> dict[str, np.ndarray]:
  if isinstance(batch, FieldBatch):
    return batch.arrays
  return {f: getattr(batch, f) for f in Batch.FIELDS}


def _make(kind, arrays: dict[str, np.ndarray]):
  if kind is FieldBatch:
    return FieldBatch(arrays)
  return Batch(*(arrays[f] for f in Batch.FIELDS))


class ReplayBuffer:
  """Keeps the latest `capacity` examples, in at most `max_bytes` (None: no
  bound), and samples uniform minibatches from them.

  Fixed-shape examples (`Batch`, `FieldBatch`) live in a ring over
  preallocated arrays, one per field; where `capacity` of them would pass
  `max_bytes`, the ring is made smaller when the first batch shows an
  example's size (`note` then says so). Token examples (each of its own
  size) are kept oldest first by their number, their tokens in float16 (the
  tensors are mostly 0/1 planes), and the oldest go while there are more
  than `capacity` or they pass `max_bytes`."""

  def __init__(self, capacity: int, max_bytes: int | None = None):
    if capacity < 1:
      raise ValueError(f"replay buffer capacity must be >= 1, got {capacity}")
    if max_bytes is not None and max_bytes < 1:
      raise ValueError(f"replay buffer max_bytes must be >= 1, got "
                       f"{max_bytes}")
    self.capacity = capacity
    self.max_bytes = max_bytes
    self.note: str | None = None  # (how the memory bound shrank the ring)
    self._arrays: dict[str, np.ndarray] | None = None
    self._kind = None
    # Token examples by number: [self._first, self._first + size).
    self._examples: dict[int, dict[str, np.ndarray]] | None = None
    self._sizes: dict[int, int] = {}
    self._first = 0
    self.nbytes = 0  # bytes of the examples kept
    self.size = 0
    self.added = 0  # examples ever added
    self._next = 0

  def __len__(self) -> int:
    return self.size

  @property
  def at_memory_bound(self) -> bool:
    """Whether the memory bound, not the capacity, sets how many examples
    are kept (a learner waiting for more than that would wait forever)."""
    if self.max_bytes is None or self.size == 0:
      return False
    if self._examples is not None:
      return self.nbytes + self.nbytes / self.size > self.max_bytes
    return self.note is not None and self.size == self.capacity

  def add(self, batch) -> None:
    n = len(batch)
    if n == 0:
      return
    if isinstance(batch, TokenBatch):
      if self._examples is None:
        self._examples = {}
      for ex in batch.examples():
        ex = dict(ex)
        ex["tokens"] = ex["tokens"].astype(np.float16)
        number = self._first + len(self._examples)
        self._examples[number] = ex
        self._sizes[number] = sum(a.nbytes for a in ex.values()
                                  if isinstance(a, np.ndarray))
        self.nbytes += self._sizes[number]
        while len(self._examples) > 1 and (
            len(self._examples) > self.capacity or
            (self.max_bytes is not None and self.nbytes > self.max_bytes)):
          del self._examples[self._first]
          self.nbytes -= self._sizes.pop(self._first)
          self._first += 1
      self.size = len(self._examples)
      self.added += n
      return
    fields = _fields(batch)
    if self._arrays is None:
      self._kind = type(batch)
      example = sum(a[0].nbytes for a in fields.values())
      if (self.max_bytes is not None and
          self.capacity * example > self.max_bytes):
        fit = max(1, self.max_bytes // max(example, 1))
        self.note = (f"replay: {self.capacity:,} examples of {example:,} "
                     f"bytes pass the memory bound of "
                     f"{self.max_bytes / 2**20:,.0f} MB; keeping the newest "
                     f"{fit:,}")
        self.capacity = fit
      self._arrays = {
          f: np.zeros((self.capacity,) + a.shape[1:], dtype=a.dtype)
          for f, a in fields.items()}
      self.nbytes = sum(a.nbytes for a in self._arrays.values())
    if n > self.capacity:
      fields = {f: a[n - self.capacity:] for f, a in fields.items()}
      n = self.capacity
    index = (self._next + np.arange(n)) % self.capacity
    for f, a in self._arrays.items():
      a[index] = fields[f]
    self._next = int((self._next + n) % self.capacity)
    self.size = min(self.size + n, self.capacity)
    self.added += len(batch)

  def sample(self, batch_size: int, rng: np.random.Generator):
    if self.size == 0:
      raise ValueError("cannot sample from an empty replay buffer")
    index = rng.integers(self.size, size=batch_size)
    if self._examples is not None:
      return TokenBatch.stack([self._examples[self._first + i]
                               for i in index])
    return _make(self._kind, {f: a[index] for f, a in self._arrays.items()})
