"""Progress bars for long runs: tqdm when installed, a plain stderr line else."""

from __future__ import annotations

import sys
import time
from typing import Any


class _PlainBar:
  """A minimal tqdm stand-in that prints at most once a second."""

  def __init__(self, total: int | None, desc: str, disable: bool):
    self.total, self.desc, self.disable = total, desc, disable
    self.n = 0
    self._postfix = ""
    self._last = 0.0

  def update(self, n: int = 1) -> None:
    self.n += n
    now = time.monotonic()
    done = self.total is not None and self.n >= self.total
    if not self.disable and (now - self._last >= 1.0 or done):
      self._last = now
      of = "" if self.total is None else f"/{self.total}"
      print(f"\r{self.desc}: {self.n}{of} {self._postfix}",
            end="", file=sys.stderr, flush=True)

  def set_postfix_str(self, text: str) -> None:
    self._postfix = text

  def close(self) -> None:
    if not self.disable:
      print(file=sys.stderr)

  def __enter__(self) -> "_PlainBar":
    return self

  def __exit__(self, *exc: Any) -> None:
    self.close()


def progress_bar(total: int | None, desc: str, disable: bool = False):
  """A progress bar over `total` steps (None: a count without a total),
  written to stderr."""
  try:
    import tqdm  # pylint: disable=g-import-not-at-top
  except ImportError:
    return _PlainBar(total, desc, disable)
  return tqdm.tqdm(total=total, desc=desc, disable=disable, file=sys.stderr,
                   dynamic_ncols=True)
