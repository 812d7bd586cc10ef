"""A 1-D (or row-stacked) numpy array grown by appending."""

import numpy as np


class GrowingArray:
  """An array grown by appending, its buffer doubled as needed: `view()`
  is the filled part without a copy (later appends do not change a view
  taken before them).

  Attributes:
    buf: the buffer; `buf[:n]` is filled.
    n: the number of elements appended.
    cap: `len(buf)` (a search makes thousands of appends: reading it here
      is faster).
  """

  __slots__ = ("buf", "n", "cap")

  def __init__(self, dtype=np.int64, row: tuple[int, ...] = ()):
    # (256: a Leduc search's arrays reach hundreds to thousands, and each
    # doubling copies.) `row`: the shape of one element (a 2-d array of
    # rows where it is not empty).
    self.buf = np.zeros((256,) + row, dtype)
    self.n = 0
    self.cap = 256

  def __len__(self) -> int:
    return self.n

  def _grow(self, size: int) -> None:
    grown = np.zeros((max(size, 2 * self.cap),) + self.buf.shape[1:],
                     self.buf.dtype)
    grown[:self.n] = self.buf[:self.n]
    self.buf = grown
    self.cap = len(grown)

  def append(self, value) -> None:
    n = self.n
    if n == self.cap:
      self._grow(n + 1)
    self.buf[n] = value
    self.n = n + 1

  def extend(self, values) -> None:
    n = self.n
    end = n + len(values)
    if end > self.cap:
      self._grow(end)
    self.buf[n:end] = values
    self.n = end

  def fill(self, value, k: int) -> None:
    """Appends `value` k times."""
    n = self.n
    end = n + k
    if end > self.cap:
      self._grow(end)
    self.buf[n:end] = value
    self.n = end

  def view(self) -> np.ndarray:
    return self.buf[:self.n]
