"""The CVPN itself (`CVPN`): its two-headed MLP (`networks.TwoHeadedMLP`),
losses, training steps and inference.

Losses: Huber on values (masked to the slots present in the public state),
cross-entropy on the acting player's policy (masked to present slots and legal
actions), weighted by `value_weight` and `policy_weight`. Inference
(`CVPN.predict`) runs the same layers in numpy on the host, which is faster
than a jitted call for the small batches a search asks for;
`CVPN.predict_jitted` pads to power-of-two buckets, one compile per bucket,
as does `CVPN.forward_jitted` (values and logits: the inference service's).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from open_spiel_sog.algorithms.networks import NetworkConfig
from open_spiel_sog.algorithms.networks import TwoHeadedMLP
from open_spiel_sog.algorithms.networks import cross_entropy
from open_spiel_sog.algorithms.networks import learning_rate_schedule
from open_spiel_sog.algorithms.networks import masked_softmax
from open_spiel_sog.algorithms.networks import padded_call
from open_spiel_sog.algorithms.networks import padded_predict
from open_spiel_sog.algorithms.sog import value_functions
from open_spiel_sog.algorithms.sog.cvpn.encoder import Batch
from open_spiel_sog.algorithms.sog.cvpn.encoder import Encoder


class CVPN:
  """The network for one game: parameters, optimiser, losses, inference."""

  MAX_BUCKET = 4096

  def __init__(self, encoder: Encoder, config: NetworkConfig | None = None):
    import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
    import optax  # pylint: disable=g-import-not-at-top

    self.encoder = encoder
    self.config = config or NetworkConfig()
    self.config.validate()
    rows, actions = encoder.num_rows, encoder.num_actions
    cfg = self.config

    def terms(values, logits, batch):
      err = values - batch["value_target"]
      huber = optax.losses.huber_loss(err, delta=cfg.huber_delta)
      vmask = batch["value_mask"]
      value_loss = jnp.sum(huber * vmask) / jnp.maximum(jnp.sum(vmask), 1.0)
      ce = cross_entropy(logits, batch["legal"], batch["policy_target"])
      pmask = batch["policy_mask"]
      policy_loss = jnp.sum(ce * pmask) / jnp.maximum(jnp.sum(pmask), 1.0)
      return value_loss, policy_loss

    # Values [rows], logits [rows, actions] per example.
    self._network = TwoHeadedMLP(cfg, encoder.input_size, (rows,),
                                 (rows, actions), terms)
    self._update = self._network.update
    self._loss = self._network.loss
    self._predict = self._network.predict
    # The layers by parameter name, for inference on the host
    # (`predict_values`, `predict_prior`).
    self._layers = self._network.layers
    self._host: tuple[Any, dict[str, list]] | None = None
    self.params = None
    self.opt_state = None
    self.step = 0
    self.metadata: dict[str, Any] = {}  # a loaded checkpoint's metadata
    # Set on networks shared by bots (`shared_network`): they are never
    # trained or given new parameters.
    self.read_only = False

  # --- Parameters ------------------------------------------------------------

  def init(self, seed: int = 0) -> None:
    self.params, self.opt_state = self._network.init(seed)
    self.step = 0

  def param_shapes(self):
    """The parameter tree's shapes and dtypes (jax.ShapeDtypeStruct leaves),
    without computing any parameters: a template for `unflatten` in
    processes that receive their parameters (the training workers), where
    `init` would cost seconds of op-by-op compilation."""
    return self._network.param_shapes()

  def _check_writable(self, what: str) -> None:
    if self.read_only:
      raise ValueError(
          f"cvpn: cannot {what}: this network is shared by every bot of the "
          "process that loads its checkpoint (cvpn.shared_network); load a "
          "private copy with cvpn.load_checkpoint to train or change it")

  def set_params(self, params) -> None:
    self._check_writable("set its parameters")
    self.params = params

  def learning_rate(self, step: int | None = None) -> float:
    return float(learning_rate_schedule(self.config)(
        self.step if step is None else step))

  # --- Training --------------------------------------------------------------

  def train_step(self, batch: Batch) -> dict[str, float]:
    """One optimiser step on `batch`; returns its losses (before the step)."""
    return {k: float(v) for k, v in self.train_step_async(batch).items()}

  def train_step_async(self, batch: Batch) -> dict[str, Any]:
    """`train_step` without waiting for it: the losses are JAX arrays, read
    when converted (the learner reads them every few steps, so the host
    prepares the next minibatch while this step computes)."""
    if self.params is None:
      raise ValueError("cvpn: parameters are not initialised (call init or "
                       "load a checkpoint)")
    self._check_writable("train it")
    self.params, self.opt_state, metrics = self._update(
        self.params, self.opt_state, batch.as_dict())
    self.step += 1
    return metrics

  def loss(self, batch: Batch) -> dict[str, float]:
    _, metrics = self._loss(self.params, batch.as_dict())
    return {k: float(v) for k, v in metrics.items()}

  # --- Inference -------------------------------------------------------------

  def predict(self, inputs: np.ndarray, legal: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """(values [B, P] in utility-scale units, prior [B, P, A]), computed on
    the host (`predict_values`, `predict_prior`)."""
    return self.predict_values(inputs), self.predict_prior(inputs, legal)

  def predict_jitted(self, inputs: np.ndarray, legal: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    """`predict` by the jitted Haiku network (batches padded to
    power-of-two buckets, so each bucket compiles once): what the host
    computation is checked against."""
    return padded_predict(self._predict, self.params, inputs, legal,
                          self.MAX_BUCKET)

  def forward_jitted(self, inputs: np.ndarray, params=None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """(values [B, P], policy logits [B, P, A]) of `inputs` [B, I] by the
    jitted Haiku network, with `params` (default: the network's; they may
    live on an accelerator), batches padded to power-of-two buckets (each
    bucket compiles once): the inference service's forward pass
    (`training.inference`)."""
    return padded_call(self._network.forward,
                       self.params if params is None else params,
                       (np.asarray(inputs, dtype=np.float32),),
                       self.MAX_BUCKET)

  # GT-CFR asks for the values of a few dozen public states at a time, a
  # few hundred times a search: a jitted call costs about 0.4 ms there
  # (dispatch and transfers), the same layers in numpy on the host half
  # of that (Leduc's network, 30-60 rows).

  def _host_layers(self, head: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """`head`'s (w, b) per layer as host arrays, converted once per
    parameter tree (trees are replaced, never changed in place)."""
    if self.params is None:
      raise ValueError("cvpn: parameters are not initialised (call init or "
                       "load a checkpoint)")
    if self._host is None or self._host[0] is not self.params:
      self._host = (self.params, {
          name: [(np.asarray(self.params[layer]["w"]),
                  np.asarray(self.params[layer]["b"])) for layer in layers]
          for name, layers in self._layers.items()})
    return self._host[1][head]

  @staticmethod
  def _mlp(x: np.ndarray, layers) -> np.ndarray:
    """hk.nets.MLP with activate_final=True (ReLU after every layer but
    the output layer, which is the last of `layers`)."""
    # In place after each product (the same arithmetic, two fewer
    # temporaries per layer: GT-CFR makes ~200 calls of ~40 rows a search).
    for w, b in layers[:-1]:
      x = x @ w
      x += b
      np.maximum(x, 0.0, out=x)
    w, b = layers[-1]
    x = x @ w
    x += b
    return x

  def predict_values(self, inputs: np.ndarray) -> np.ndarray:
    """The value head [B, P] (utility-scale units) of `inputs` [B, I]."""
    return self._mlp(np.asarray(inputs, dtype=np.float32),
                     self._host_layers("value"))

  def predict_prior(self, inputs: np.ndarray, legal: np.ndarray
                    ) -> np.ndarray:
    """The prior [B, P, A] of `inputs` [B, I]: the softmax of the policy
    head at `prior_temperature` over the actions `legal` [B, P, A] marks."""
    logits = self._mlp(np.asarray(inputs, dtype=np.float32),
                       self._host_layers("policy"))
    return masked_softmax(logits.reshape(legal.shape), legal,
                          self.config.prior_temperature)

  def evaluate_batch(self, queries: Sequence[value_functions.Query]
                     ) -> list[value_functions.Evaluation]:
    """Evaluations of `queries` in the units GT-CFR uses."""
    enc = self.encoder
    batch = enc.encode(queries)
    values, prior = self.predict(batch.inputs, batch.legal)
    out = []
    for i, q in enumerate(queries):
      ps = q.public_state
      rows = enc.rows(ps)
      normalised = [values[i, rows[p]] * enc.value_unit[p] for p in range(2)]
      v = value_functions.denormalise_values(normalised, batch.scales[i])
      policy = None
      if ps.is_player_node():
        policy = prior[i, rows[ps.current_player()]].astype(np.float64)
        policy /= policy.sum(axis=1, keepdims=True)
      out.append(value_functions.Evaluation(values=(v[0], v[1]),
                                            policy=policy))
    return out
