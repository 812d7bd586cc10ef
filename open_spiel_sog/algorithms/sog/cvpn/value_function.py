"""The CVPN as GT-CFR's value function (`CVPNValueFunction`): leaf values and
priors for a search's queries, one batched network call per evaluation. The
packed path (`evaluate_packed`) builds the network's inputs from cached
per-public-state layouts, with the C++ shim's packing where it is usable.
"""

from __future__ import annotations

import numpy as np
import pyspiel

from open_spiel_sog.algorithms.networks import masked_softmax
from open_spiel_sog.algorithms.sog import value_functions
from open_spiel_sog.algorithms.sog.cvpn.network import CVPN
from open_spiel_sog.algorithms.sog.cvpn.shared import shared_network
from open_spiel_sog.algorithms.sog.cvpn.token_network import TokenCVPN
from open_spiel_sog.algorithms.sog.cvpn.token_network import (
    TokenValueFunction)

_PACK_KERNELS = None  # the shim (its cvpn_* packing), or False


def _pack_kernels():
  """The C++ shim where it is usable and packs CVPN queries, else None
  (`evaluate_packed` then does the same arithmetic in numpy)."""
  global _PACK_KERNELS
  if _PACK_KERNELS is None:
    from open_spiel_sog import _native  # pylint: disable=g-import-not-at-top
    shim, _ = _native.load_shim()
    _PACK_KERNELS = shim if hasattr(shim, "cvpn_pack_inputs") else False
  return _PACK_KERNELS or None


class CVPNValueFunction(value_functions.ValueFunction):
  """GT-CFR leaf values and priors from a CVPN (one batched call per
  evaluate)."""

  name = "cvpn"

  def __init__(self, net: CVPN):
    self.net = net
    self._packed_cache: dict = {}

  _MAX_PACKED_CACHE = 256

  def forget(self, observer, ids) -> None:
    self.net.encoder.forget(observer, ids)

  def network_spec(self) -> tuple[int, tuple[float, float]]:
    enc = self.net.encoder
    return enc.input_size, tuple(float(u) for u in enc.value_unit)

  def network_parts(self, public_states):
    return self.net.encoder.statics(public_states)

  def _layout(self, packed: value_functions.PackedQueries
              ) -> value_functions.NetworkLayout:
    """`packed`'s layout (cached under its key)."""
    key = packed.key
    cached = self._packed_cache.get(key) if key is not None else None
    if cached is not None:
      return cached
    cached = value_functions.NetworkLayout.from_parts(
        self.network_parts(packed.public_states), packed.sizes,
        *self.network_spec())
    if key is not None:
      if len(self._packed_cache) >= self._MAX_PACKED_CACHE:
        self._packed_cache.clear()
      self._packed_cache[key] = cached
    return cached

  def network_values(self, layout: value_functions.NetworkLayout,
                     inputs: np.ndarray):
    net = self.net
    enc = net.encoder
    values = net.predict_values(inputs)
    layers = net._host_layers("policy")  # pylint: disable=protected-access
    legal_rows = layout.priors

    def prior(k: int) -> np.ndarray:
      # The policy head of query k alone, when GT-CFR reads it (with the
      # parameters of this call).
      rows, legal_k = legal_rows[k]
      logits = net._mlp(inputs[k:k + 1], layers).reshape(  # pylint: disable=protected-access
          enc.num_rows, enc.num_actions)[rows]
      pi = masked_softmax(logits, legal_k, net.config.prior_temperature)
      pi = pi.astype(np.float64)
      return pi / pi.sum(axis=1, keepdims=True)

    return values, value_functions.LazyPriors(layout.defined, prior,
                                              len(layout.chance))

  def evaluate_packed(self, packed: value_functions.PackedQueries):
    if not len(packed):
      return (np.zeros(0), np.zeros(0)), []
    layout = self._layout(packed)
    ranges = tuple(np.asarray(r, dtype=np.float64) for r in packed.ranges)
    kernels = _pack_kernels()
    if kernels is not None:
      inputs, *scales = kernels.cvpn_pack_inputs(
          layout.heads, *layout.entry_query, *layout.columns, *ranges,
          *layout.sizes, layout.chance, layout.input_size)
    else:
      normalised, scales = value_functions.normalise_packed_beliefs(
          ranges, layout.entry_query, layout.sizes, layout.chance)
      inputs = np.zeros((len(packed), layout.input_size), dtype=np.float32)
      inputs[:, :layout.heads.shape[1]] = layout.heads
      for p in range(2):
        inputs[layout.entry_query[p], layout.columns[p]] = normalised[p]
    values, priors = self.network_values(layout, inputs)
    eq, rows = layout.entry_query, layout.value_rows
    if kernels is not None:
      out = tuple(kernels.cvpn_unpack_values(
          values, eq[p], rows[p], layout.units[p], scales[p])
                  for p in range(2))
    else:
      out = tuple(
          values[eq[p], rows[p]].astype(np.float64) * layout.units[p] *
          scales[p][eq[p]] for p in range(2))
    return out, priors

  @classmethod
  def from_checkpoint(cls, path: str, game: pyspiel.Game
                      ) -> value_functions.ValueFunction:
    """A value function of its own (caches, nothing shared that changes)
    over the process's one read-only copy of the network at `path` (a
    `TokenValueFunction` where the checkpoint has the token input)."""
    return value_function_for(shared_network(path, game))

  def evaluate(self, queries):
    if not queries:
      return []
    return self.net.evaluate_batch(queries)


def value_function_for(net) -> value_functions.ValueFunction:
  """GT-CFR's value function over `net`, either input (`CVPN`: a
  `CVPNValueFunction`; `TokenCVPN`: a `TokenValueFunction`)."""
  if isinstance(net, TokenCVPN):
    return TokenValueFunction(net)
  return CVPNValueFunction(net)
