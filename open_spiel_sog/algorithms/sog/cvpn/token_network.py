"""The token CVPN (`TokenCVPN`, DESIGN.md section 14): the network of
`algorithms.networks.tokens` on `TokenEncoder`'s inputs, with the same
interface as the slot network (`CVPN`): parameters, training steps,
checkpoints and batched inference, and its value function
(`TokenValueFunction`).

Inference runs the jitted network on the host, batches padded to
power-of-two sizes (queries, tokens and histories), so each size compiles
once.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from open_spiel_sog.algorithms.networks import NetworkConfig
from open_spiel_sog.algorithms.networks import learning_rate_schedule
from open_spiel_sog.algorithms.networks.tokens import TokenNetwork
from open_spiel_sog.algorithms.sog import value_functions
from open_spiel_sog.algorithms.sog.cvpn.tokens import TokenBatch
from open_spiel_sog.algorithms.sog.cvpn.tokens import TokenEncoder

_MIN_QUERIES = 8
_MAX_QUERIES = 512


class TokenCVPN:
  """The token network for one game: parameters, optimiser, inference."""

  def __init__(self, encoder: TokenEncoder,
               config: NetworkConfig | None = None):
    self.encoder = encoder
    self.config = config or NetworkConfig(input="tokens")
    self.config.validate()
    self._network = TokenNetwork(self.config, encoder.tensor_shape,
                                 encoder.token_size, encoder.public_size,
                                 encoder.num_actions)
    self.params = None
    self.opt_state = None
    self.step = 0
    self.metadata: dict[str, Any] = {}
    self.read_only = False

  # --- Parameters ------------------------------------------------------------

  def init(self, seed: int = 0) -> None:
    self.params, self.opt_state = self._network.init(seed)
    self.step = 0

  def param_shapes(self):
    return self._network.param_shapes()

  def _check_writable(self, what: str) -> None:
    if self.read_only:
      raise ValueError(
          f"cvpn: cannot {what}: this network is shared by every bot of the "
          "process that loads its checkpoint (cvpn.shared_network); load a "
          "private copy with cvpn.load_checkpoint to train or change it")

  def _check_params(self) -> None:
    if self.params is None:
      raise ValueError("cvpn: parameters are not initialised (call init or "
                       "load a checkpoint)")

  def set_params(self, params) -> None:
    self._check_writable("set its parameters")
    self.params = params

  def learning_rate(self, step: int | None = None) -> float:
    return float(learning_rate_schedule(self.config)(
        self.step if step is None else step))

  # --- Training --------------------------------------------------------------

  @staticmethod
  def _training_dict(batch: TokenBatch) -> dict[str, np.ndarray]:
    return {f: batch.arrays[f] for f in TokenBatch.FIELDS}

  def train_step(self, batch: TokenBatch) -> dict[str, float]:
    """One optimiser step on `batch`; returns its losses (before it)."""
    self._check_params()
    self._check_writable("train it")
    self.params, self.opt_state, metrics = self._network.update(
        self.params, self.opt_state, self._training_dict(batch))
    self.step += 1
    return {k: float(v) for k, v in metrics.items()}

  def loss(self, batch: TokenBatch) -> dict[str, float]:
    self._check_params()
    _, metrics = self._network.loss(self.params, self._training_dict(batch))
    return {k: float(v) for k, v in metrics.items()}

  # --- Inference -------------------------------------------------------------

  def predict(self, batch: TokenBatch) -> tuple[np.ndarray, np.ndarray]:
    """(expected values [B, N] in utility-scale units, prior [B, N, A]) of
    an encoded batch, in chunks padded to power-of-two query counts."""
    self._check_params()
    fields = self._network.FIELDS
    n = len(batch)
    out_v, out_p = [], []
    for lo in range(0, max(n, 1), _MAX_QUERIES):
      hi = min(lo + _MAX_QUERIES, n)
      m = hi - lo
      size = _MIN_QUERIES
      while size < m:
        size *= 2
      inputs = {}
      for f in fields + ("legal",):
        a = batch.arrays[f][lo:hi]
        if size != m:
          a = np.concatenate([a, np.zeros((size - m,) + a.shape[1:],
                                          a.dtype)])
        inputs[f] = a
      legal = inputs.pop("legal")
      v, p = self._network.predict(self.params, inputs, legal)
      out_v.append(np.asarray(v)[:m])
      out_p.append(np.asarray(p)[:m])
    return np.concatenate(out_v), np.concatenate(out_p)

  def evaluate_batch(self, queries: Sequence[value_functions.Query]
                     ) -> list[value_functions.Evaluation]:
    """Evaluations of `queries` in the units GT-CFR uses."""
    if not queries:
      return []
    enc = self.encoder
    batch = enc.encode(queries)
    ev, prior = self.predict(batch)
    out = []
    for i, q in enumerate(queries):
      ps = q.public_state
      v0, v1 = enc.decode(batch, ev, i)
      policy = None
      if ps.is_player_node():
        n0 = ps.num_infostates(0)
        rows = (slice(0, n0) if ps.current_player() == 0 else
                slice(n0, n0 + ps.num_infostates(1)))
        policy = prior[i, rows].astype(np.float64)
        policy /= policy.sum(axis=1, keepdims=True)
      out.append(value_functions.Evaluation(values=(v0, v1), policy=policy))
    return out


class TokenValueFunction(value_functions.ValueFunction):
  """GT-CFR leaf values and priors from a token CVPN: one batched network
  call per evaluation, on exact or sampled public states."""

  name = "cvpn"
  # The sog bot may shrink public states to fit its time (sampled public
  # states are inputs like any other).
  accepts_sampled_public_states = True

  def __init__(self, net: TokenCVPN):
    self.net = net

  def forget(self, observer, ids) -> None:
    self.net.encoder.forget(observer, ids)

  def evaluate(self, queries):
    return self.net.evaluate_batch(queries)
