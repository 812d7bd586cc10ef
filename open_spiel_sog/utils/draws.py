"""Draws as numpy's `Generator.choice(n, size, p=probs)` makes them.

choice (with replacement) searches the normalised cumulative sum of `probs`
at `rng.random(size)`; its checks of `probs` cost more than a small draw.
These are its steps without the checks: the same draws from the same stream
(`tests/sog_search_test.py`). GT-CFR draws chance outcomes and root
histories with them, and sampled public states their strata's children.
"""

import numpy as np


def cumulative(probs) -> np.ndarray:
  """choice's normalised cumulative sum of `probs` (float64)."""
  cdf = np.cumsum(probs, dtype=np.float64)
  if not cdf[-1] > 0.0:
    raise ValueError(f"cannot draw from probabilities summing to {cdf[-1]}")
  cdf /= cdf[-1]
  return cdf


def search(cdf: np.ndarray, uniforms):
  """The outcomes (indices) that `cumulative`'s `cdf` gives at `uniforms`,
  one `rng.random()` each (a float, or an array of them)."""
  return cdf.searchsorted(uniforms, side="right")


def draw(rng: np.random.Generator, probs) -> int:
  """`rng.choice(len(probs), p=probs)`: the same outcome, the same stream."""
  return int(search(cumulative(probs), rng.random()))
