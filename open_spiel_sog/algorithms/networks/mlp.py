"""The two-headed MLP both networks are, in Haiku: the CVPN
(`algorithms/sog/cvpn`) and ISMCTS-BR's value-and-prior network
(`algorithms/ismcts_br/value_prior.py`).

This is the only module that calls `hk.transform` (dm-haiku is in
maintenance mode: one module to port); the token CVPN's network
(`tokens.py`) is transformed here too (`transform`). `TwoHeadedMLP`
holds the transformed network, its optimiser (Adam or SGD with momentum,
learning rate alpha_t = alpha_0 * d^(t / T_decay), Table S2) and the jitted
update, loss and predict; each network gives its own loss terms. With a
board shape its heads read a residual convolutional torso
(`residual_torso`, the policy-value network's torso "conv"). Around it: the
cross-entropy over legal actions, the masked softmax of the prior as the
host computes it, and inference padded to power-of-two buckets (one compile
per bucket). jax, haiku and optax are imported inside the functions, so
importing the package imports none of them.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from open_spiel_sog.algorithms.networks.settings import NetworkConfig

_MIN_BUCKET = 8
# The channels of each head's 1x1 convolution over the residual torso
# (AlphaZero's policy head's), flattened into the head's MLP.
HEAD_CHANNELS = 2


def learning_rate_schedule(config: NetworkConfig):
  """alpha_t = learning_rate * lr_decay_rate^(t / lr_decay_steps) (optax)."""
  import optax  # pylint: disable=g-import-not-at-top
  return optax.exponential_decay(
      init_value=config.learning_rate, transition_steps=config.lr_decay_steps,
      decay_rate=config.lr_decay_rate)


def transform(forward):
  """`forward` (a function that builds Haiku modules) as a transformed
  network whose apply takes no random key: the package's one
  `hk.transform`."""
  import haiku as hk  # pylint: disable=g-import-not-at-top
  return hk.without_apply_rng(hk.transform(forward))


def optimizer(config: NetworkConfig):
  """The optax optimiser of `config` (Adam, or SGD with momentum 0.9) on
  `learning_rate_schedule`."""
  return _optimizer(config)


def _optimizer(config: NetworkConfig):
  import optax  # pylint: disable=g-import-not-at-top
  schedule = learning_rate_schedule(config)
  if config.optimizer == "adam":
    return optax.adam(schedule)
  return optax.sgd(schedule, momentum=0.9)


def residual_torso(inputs, board: tuple[int, int, int], channels: int,
                   blocks: int):
  """The (value, policy) heads' inputs, [B, H * W * HEAD_CHANNELS] each,
  from rows `inputs` [B, C * H * W] read as boards `board` = (C, H, W): a
  3x3 convolution to `channels` and ReLU (the stem), `blocks` residual
  blocks x = relu(x + conv(relu(conv(x)))), then each head's 1x1
  convolution to HEAD_CHANNELS and ReLU, flattened cell by cell. The
  convolutions are Haiku's (NHWC, "SAME" padding, biases); call it inside
  a transformed function."""
  import haiku as hk  # pylint: disable=g-import-not-at-top
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  x = jnp.moveaxis(inputs.reshape((-1,) + tuple(board)), 1, -1)
  x = jax.nn.relu(hk.Conv2D(channels, 3, name="conv_stem")(x))
  for i in range(blocks):
    y = jax.nn.relu(hk.Conv2D(channels, 3, name=f"res_{i}_a")(x))
    x = jax.nn.relu(x + hk.Conv2D(channels, 3, name=f"res_{i}_b")(y))
  return tuple(
      jax.nn.relu(hk.Conv2D(HEAD_CHANNELS, 1, name=f"{head}_reduce")(x)
                  ).reshape(x.shape[0], -1) for head in ("value", "policy"))


def _bucket(n: int) -> int:
  size = _MIN_BUCKET
  while size < n:
    size *= 2
  return size


def jit_functions(net, optimizer, cfg: NetworkConfig, terms,
                  inputs_of=lambda batch: batch["inputs"]):
  """Jitted (update, loss, predict) of a Haiku network whose apply gives
  (values, logits).

  `terms(values, logits, batch)` gives its (value_loss, policy_loss); the
  loss is value_weight * value_loss + policy_weight * policy_loss (+
  weight_decay * L2). `predict(params, inputs, legal)` gives (values, the
  softmax of the logits at `prior_temperature` over legal actions).
  """
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  import optax  # pylint: disable=g-import-not-at-top

  def loss_fn(params, batch):
    values, logits = net.apply(params, inputs_of(batch))
    value_loss, policy_loss = terms(values, logits, batch)
    loss = cfg.value_weight * value_loss + cfg.policy_weight * policy_loss
    if cfg.weight_decay:
      loss += cfg.weight_decay * sum(
          jnp.sum(jnp.square(w)) for w in jax.tree_util.tree_leaves(params))
    return loss, {"loss": loss, "value_loss": value_loss,
                  "policy_loss": policy_loss}

  def update(params, opt_state, batch):
    grads, metrics = jax.grad(loss_fn, has_aux=True)(params, batch)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, metrics

  def predict(params, inputs, legal):
    values, logits = net.apply(params, inputs)
    prior = jax.nn.softmax(
        jnp.where(legal > 0, logits / cfg.prior_temperature, -1e9), axis=-1)
    return values, prior

  return jax.jit(update), jax.jit(loss_fn), jax.jit(predict)


class TwoHeadedMLP:
  """A value head and a policy head, each on its own MLP torso over the same
  inputs, with the optimiser and the jitted functions of `config`.

  values = Linear(value_shape)(torso(inputs)) and logits =
  Linear(policy_shape)(policy_torso(inputs)), the torsos `hk.nets.MLP`s of
  widths `config.hidden` and `config.policy_hidden` with a ReLU after every
  layer. A value_shape of () gives one scalar per example. With `board`
  (C, H, W), the MLPs read `residual_torso`'s outputs instead of the inputs
  (`config.res_channels`, `config.res_blocks`).

  Attributes:
    net: the transformed network (its apply takes no random key).
    optimizer: the optax optimiser.
    update: jitted (params, opt_state, batch) -> (params, opt_state, losses).
    loss: jitted (params, batch) -> (loss, losses).
    predict: jitted (params, inputs, legal) -> (values, prior): the prior is
      the softmax of the logits at `prior_temperature` over legal actions.
    forward: jitted (params, inputs) -> (values, logits).
    layers: {"value": [...], "policy": [...]}: each head's parameter names
      (its torso's layers, then its output layer), for inference on the host;
      with `board` also "conv" (the stem, then each block's two
      convolutions) and "reduce" (the value and the policy head's 1x1
      convolutions).
  """

  def __init__(self, config: NetworkConfig, input_size: int,
               value_shape: tuple[int, ...], policy_shape: tuple[int, ...],
               terms: Callable[[Any, Any, dict], tuple[Any, Any]],
               board: tuple[int, int, int] | None = None):
    """`terms(values, logits, batch)` gives the (value_loss, policy_loss) of
    a batch (see `jit_functions`)."""
    import haiku as hk  # pylint: disable=g-import-not-at-top
    import jax  # pylint: disable=g-import-not-at-top

    self.input_size = input_size
    hidden = tuple(int(h) for h in config.hidden)
    policy_hidden = tuple(int(h) for h in config.policy_hidden)
    value_size = math.prod(value_shape)
    policy_size = math.prod(policy_shape)

    def forward(inputs):
      value_in = policy_in = inputs
      if board:
        value_in, policy_in = residual_torso(
            inputs, board, config.res_channels, config.res_blocks)
      torso = hk.nets.MLP(hidden, activate_final=True, name="torso")(value_in)
      values = hk.Linear(value_size, name="value")(torso)
      if not value_shape:  # one scalar per example
        values = values[..., 0]
      policy_torso = hk.nets.MLP(policy_hidden, activate_final=True,
                                 name="policy_torso")(policy_in)
      logits = hk.Linear(policy_size, name="policy")(policy_torso)
      if len(policy_shape) > 1:
        logits = logits.reshape(inputs.shape[:-1] + policy_shape)
      return values, logits

    self.net = transform(forward)
    self.optimizer = _optimizer(config)
    self.update, self.loss, self.predict = jit_functions(
        self.net, self.optimizer, config, terms)
    # The jitted apply: (params, inputs) -> (values, logits), for batched
    # inference that returns the logits (`training.inference`).
    self.forward = jax.jit(self.net.apply)
    # `forward`'s layers by parameter name.
    self.layers = {
        "value": [f"torso/~/linear_{i}" for i in range(len(hidden))] +
                 ["value"],
        "policy": [f"policy_torso/~/linear_{i}"
                   for i in range(len(policy_hidden))] + ["policy"]}
    if board:
      self.layers["conv"] = ["conv_stem"] + [
          f"res_{i}_{ab}" for i in range(config.res_blocks) for ab in "ab"]
      self.layers["reduce"] = ["value_reduce", "policy_reduce"]
    self._jax = jax

  def init(self, seed: int) -> tuple[Any, Any]:
    """Fresh (params, opt_state), the parameters drawn from `seed`."""
    dummy = np.zeros((1, self.input_size), dtype=np.float32)
    params = self.net.init(self._jax.random.PRNGKey(seed), dummy)
    return params, self.optimizer.init(params)

  def param_shapes(self):
    """The parameter tree's shapes and dtypes (jax.ShapeDtypeStruct
    leaves), without computing any parameters."""
    jax = self._jax
    dummy = np.zeros((1, self.input_size), dtype=np.float32)
    return jax.eval_shape(self.net.init, jax.random.PRNGKey(0), dummy)


def cross_entropy(logits, legal, target):
  """Per-example cross-entropy of `target` against the softmax of `logits`
  over legal actions (the last axis)."""
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  logp = jax.nn.log_softmax(jnp.where(legal > 0, logits, -1e9), axis=-1)
  return -jnp.sum(target * jnp.where(legal > 0, logp, 0.0), axis=-1)


def masked_softmax(logits: np.ndarray, legal: np.ndarray,
                   temperature: float) -> np.ndarray:
  """The softmax over the last axis of `logits` / `temperature` where
  `legal` > 0 (0 elsewhere), as the jitted `predict` computes it."""
  logits = np.where(legal > 0, logits / np.float32(temperature),
                    np.float32(-1e9))
  e = np.exp(logits - logits.max(axis=-1, keepdims=True))
  return e / e.sum(axis=-1, keepdims=True)


def padded_call(fn, params, arrays: tuple[np.ndarray, ...],
                max_bucket: int) -> tuple[np.ndarray, ...]:
  """`fn(params, *arrays)` (a jitted function giving a tuple of arrays) over
  the rows of `arrays` in chunks of at most `max_bucket`, each padded to a
  power-of-two size, so each size compiles once; its outputs, unpadded and
  concatenated."""
  n = arrays[0].shape[0]
  outs = None
  for lo in range(0, max(n, 1), max_bucket):
    chunk = [a[lo:lo + max_bucket] for a in arrays]
    m = chunk[0].shape[0]
    size = _bucket(m)
    if size != m:
      chunk = [np.concatenate([c, np.zeros((size - m,) + c.shape[1:],
                                           c.dtype)]) for c in chunk]
    out = fn(params, *chunk)
    if outs is None:
      outs = [[] for _ in out]
    for acc, o in zip(outs, out):
      acc.append(np.asarray(o)[:m])
  return tuple(np.concatenate(acc) for acc in outs)


def padded_predict(predict, params, inputs: np.ndarray, legal: np.ndarray,
                   max_bucket: int) -> tuple[np.ndarray, np.ndarray]:
  """`predict` over the rows of `inputs` in chunks of at most `max_bucket`,
  each padded to a power-of-two size, so each size compiles once."""
  return padded_call(predict, params, (inputs, legal), max_bucket)
