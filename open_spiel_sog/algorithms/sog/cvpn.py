"""The counterfactual value-and-policy network (CVPN; DESIGN.md section 7).

f(beta) = (v, p): MLPs over [public features, player 0's normalised range
over slots, player 1's normalised range over slots] that predicts, for every
slot of both players, the counterfactual value of the infostate in that slot
(for the normalised belief, in units of the game's largest absolute utility
divided by the player's number of slots)
and policy logits over the game's actions. The prior is the acting player's
softmax over legal actions at temperature `prior_temperature`.

This is the only module that calls `hk.transform`. Everything network-shaped
lives here: the encoding of queries and targets into fixed-width arrays
(`Encoder`), the network and its losses (`CVPN`), inference (`CVPN.predict`:
the same layers in numpy on the host, which is faster than a jitted call for
the small batches a search asks for; `CVPN.predict_jitted` pads to
power-of-two buckets, one compile per bucket), checkpoints (`save_checkpoint` / `load_checkpoint`) and the value
function GT-CFR and the sog bot use (`CVPNValueFunction`).

Losses: Huber on values (masked to the slots present in the public state),
cross-entropy on the acting player's policy (masked to present slots and legal
actions), weighted by `value_weight` and `policy_weight`. Learning rate:
alpha_t = alpha_0 * d^(t / T_decay) (Table S2), Adam or SGD with momentum.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import weakref
import zipfile
from typing import Any, Mapping, Sequence

import numpy as np
import pyspiel

from open_spiel_sog.algorithms.sog import value_functions
from open_spiel_sog.public_state import EXPANSIONS
from open_spiel_sog.public_state import PublicFeatures
from open_spiel_sog.public_state import SlotTable
from open_spiel_sog.public_state import public_action_mask
from open_spiel_sog.public_state import PublicState
from open_spiel_sog.public_state import PublicStateObserver

CHECKPOINT_FORMAT = "open_spiel_sog.cvpn/1"
OPTIMIZERS = ("adam", "sgd")
_MIN_BUCKET = 8


@dataclasses.dataclass(frozen=True)
class NetworkConfig:
  """The CVPN and its optimiser (Table S2 names in brackets).

  Attributes:
    hidden: widths of the value MLP's hidden layers.
    policy_hidden: widths of the policy MLP's hidden layers. The policy has
      its own torso: the cross-entropy to mixed targets never falls below
      their entropy, and through a shared torso its gradients swamp the
      value loss (on Leduc queries: 0.10 chips mean value error with a shared
      torso and policy weight 0.1, 0.006 with the value loss alone).
    optimizer: "adam" or "sgd" (SGD with momentum 0.9).
    learning_rate: initial learning rate [alpha_init].
    lr_decay_rate: [d]; the rate is alpha_init * d^(step / lr_decay_steps).
    lr_decay_steps: [T_decay].
    value_weight: weight of the Huber value loss [w_v].
    policy_weight: weight of the policy cross-entropy [w_p].
    huber_delta: the Huber loss's delta (values are in units of the largest
      absolute utility, so 1 is the whole payoff scale).
    prior_temperature: softmax temperature of the prior policy [T_prior].
    weight_decay: L2 penalty on the weights (0 disables it).
  """
  hidden: tuple[int, ...] = (256, 256, 256)
  policy_hidden: tuple[int, ...] = (64, 64)
  optimizer: str = "adam"
  learning_rate: float = 1e-3
  lr_decay_rate: float = 0.5
  lr_decay_steps: int = 20000
  value_weight: float = 1.0
  policy_weight: float = 0.1
  huber_delta: float = 1.0
  prior_temperature: float = 1.0
  weight_decay: float = 0.0

  def validate(self) -> None:
    for name in ("hidden", "policy_hidden"):
      widths = getattr(self, name)
      if not widths or any(int(h) < 1 for h in widths):
        raise ValueError(f"cvpn: {name} must be positive widths, got "
                         f"{widths}")
    if self.optimizer not in OPTIMIZERS:
      raise ValueError(f"cvpn: unknown optimizer {self.optimizer!r}; "
                       f"supported: {', '.join(map(repr, OPTIMIZERS))}")
    if not self.learning_rate > 0:
      raise ValueError(f"cvpn: learning_rate must be > 0, got "
                       f"{self.learning_rate}")
    if not 0 < self.lr_decay_rate <= 1:
      raise ValueError(f"cvpn: lr_decay_rate must be in (0, 1], got "
                       f"{self.lr_decay_rate}")
    if self.lr_decay_steps < 1:
      raise ValueError(f"cvpn: lr_decay_steps must be >= 1, got "
                       f"{self.lr_decay_steps}")
    if self.value_weight < 0 or self.policy_weight < 0:
      raise ValueError("cvpn: loss weights must be >= 0")
    if not self.huber_delta > 0 or not self.prior_temperature > 0:
      raise ValueError("cvpn: huber_delta and prior_temperature must be > 0")
    if self.weight_decay < 0:
      raise ValueError("cvpn: weight_decay must be >= 0")

  def to_json(self) -> dict[str, Any]:
    return settings_to_json(self)

  @classmethod
  def from_json(cls, d: dict[str, Any]) -> "NetworkConfig":
    return settings_from_json(cls, d, "cvpn: unknown network setting(s)")


_WIDTHS = ("hidden", "policy_hidden")


def settings_to_json(settings) -> dict[str, Any]:
  """A settings dataclass as JSON (layer widths as lists)."""
  d = dataclasses.asdict(settings)
  for name in _WIDTHS:
    if name in d:
      d[name] = list(d[name])
  return d


def settings_from_json(cls, d: Mapping[str, Any], unknown_message: str):
  """The validated settings dataclass `cls` from `settings_to_json`'s
  output; unknown keys raise ValueError(`unknown_message` ...)."""
  fields = {f.name for f in dataclasses.fields(cls)}
  unknown = sorted(set(d) - fields)
  if unknown:
    raise ValueError(f"{unknown_message} {unknown}; supported: "
                     f"{sorted(fields)}")
  d = dict(d)
  for name in _WIDTHS:
    if name in d:
      d[name] = tuple(int(h) for h in d[name])
  config = cls(**d)
  config.validate()
  return config


# --- Encoding ---------------------------------------------------------------


@dataclasses.dataclass
class Batch:
  """Fixed-width arrays of B examples; rows [P] = player 0's slots, then
  player 1's.

  Attributes:
    inputs: [B, D] features, then the two normalised ranges over slots.
    value_target: [B, P] normalised counterfactual values / value unit.
    value_mask: [B, P] 1 where the slot is present in the public state.
    policy_target: [B, P, A] target policy (rows of the acting player).
    policy_mask: [B, P] 1 where a policy target is given.
    legal: [B, P, A] 1 on legal actions of the acting player's slots.
    scales: [B, 2] per example, the factors that turn each player's
      normalised values back into counterfactual values (set by
      `Encoder.encode`; not part of training batches).
  """
  inputs: np.ndarray
  value_target: np.ndarray
  value_mask: np.ndarray
  policy_target: np.ndarray
  policy_mask: np.ndarray
  legal: np.ndarray
  scales: np.ndarray | None = None

  FIELDS = ("inputs", "value_target", "value_mask", "policy_target",
            "policy_mask", "legal")

  def __len__(self) -> int:
    return self.inputs.shape[0]

  @classmethod
  def concatenate(cls, batches: Sequence["Batch"]) -> "Batch":
    return cls(*(np.concatenate([getattr(b, f) for b in batches])
                 for f in cls.FIELDS))

  def take(self, index) -> "Batch":
    return Batch(*(getattr(self, f)[index] for f in self.FIELDS))

  def as_dict(self) -> dict[str, np.ndarray]:
    """The training fields by name (what the jitted steps and the training
    workers' messages carry); `from_dict` inverts it."""
    return {f: getattr(self, f) for f in self.FIELDS}

  @classmethod
  def from_dict(cls, arrays: dict[str, np.ndarray]) -> "Batch":
    return cls(*(arrays[f] for f in cls.FIELDS))


# What the encoder keeps per public state.
_Static = value_functions.NetworkPart


class Encoder:
  """Turns public belief states and targets into fixed-width arrays.

  The input is the public state's features, a one-hot of who acts (player 0,
  player 1, chance) and each player's range normalised to sum 1, scattered
  into its slots (`SlotTable`). Per-public-state parts are cached.
  """

  MAX_SHARED = 20_000  # exact public states' parts kept by content

  def __init__(self, observer: PublicStateObserver):
    self.observer = observer
    self.game = observer.game
    self.features = PublicFeatures(observer)
    self.slots = SlotTable(observer)
    self.num_slots = (self.slots.num_slots(0), self.slots.num_slots(1))
    self.num_rows = sum(self.num_slots)
    self.num_actions = self.game.num_distinct_actions()
    self.input_size = self.features.size + 3 + self.num_rows
    self.utility_scale = float(max(abs(self.game.max_utility()),
                                   abs(self.game.min_utility()))) or 1.0
    # The network's value unit per player: normalised values are about an
    # infostate's expected utility divided by the number of infostates, so
    # they are taken in units of utility_scale / num_slots, which puts the
    # targets near [-1, 1] (on Leduc queries this cut the held-out error
    # from 0.065 to 0.044 chips with the same data).
    self.value_unit = np.asarray(
        [self.utility_scale / n for n in self.num_slots])
    # Per observer (public-state ids are per observer), forgotten with it.
    self._cache = weakref.WeakKeyDictionary()
    # Exact public states' parts by content (PublicState.content_key), for
    # every observer the encoder serves (a fresh bot's search meets the
    # public states an earlier one encoded); cleared when full.
    self._shared: dict[tuple, _Static] = {}

  def spec(self) -> dict[str, Any]:
    """What a checkpoint must agree with to be used for this game."""
    return {"input_size": self.input_size, "num_slots": list(self.num_slots),
            "num_actions": self.num_actions,
            "utility_scale": self.utility_scale,
            "value_unit": self.value_unit.tolist()}

  def clear_shared(self) -> None:
    """Drops the parts kept by content (`clear_shared_caches`)."""
    self._shared.clear()

  def forget(self, observer, ids) -> None:
    """Drops the cached parts of public states `ids` of `observer`."""
    per_observer = self._cache.get(observer)
    if per_observer:
      for i in ids:
        per_observer.pop(i, None)

  def _per_observer(self, observer) -> dict:
    """The parts kept for `observer`'s public states, by id."""
    per_observer = self._cache.get(observer)
    if per_observer is None:
      per_observer = self._cache[observer] = {}
    return per_observer

  def _static(self, ps: PublicState) -> _Static:
    per_observer = self._per_observer(ps.observer)
    cached = per_observer.get(ps.id)
    if cached is None:
      content = ps.content_key
      if content is not None:
        cached = self._shared.get(content)
        if cached is None:
          if len(self._shared) >= self.MAX_SHARED:
            self._shared.clear()
          cached = self._shared[content] = self._build_static(ps)
      else:
        cached = self._build_static(ps)
      per_observer[ps.id] = cached
    return cached

  def _build_static(self, ps: PublicState) -> _Static:
    """The per-public-state parts of `ps`'s encoding."""
    head = np.zeros(self.features.size + 3, dtype=np.float32)
    head[:self.features.size] = self.features(ps)
    who = ps.current_player()
    head[self.features.size + (who if who in (0, 1) else 2)] = 1.0
    mask = public_action_mask(ps) if len(ps.histories) > 1 else None
    rows = (self.slots.slots(ps, 0, mask),
            self.num_slots[0] + self.slots.slots(ps, 1, mask))
    legal = None
    if ps.is_player_node():
      q = ps.current_player()
      legal = np.zeros((len(rows[q]), self.num_actions), dtype=np.float32)
      for j in range(len(rows[q])):
        legal[j, ps.legal_actions(j)] = 1.0
    chance = float(ps.chance_reach.sum())
    acting = None if legal is None else (rows[ps.current_player()], legal)
    return _Static(head, rows[0], rows[1], chance, acting)

  def statics(self, public_states: Sequence[PublicState]) -> list[_Static]:
    """`_static` of each of `public_states`, with the lookup of one
    observer's parts done once."""
    out = []
    observer = per_observer = None
    for ps in public_states:
      if ps.observer is not observer:
        observer = ps.observer
        per_observer = self._per_observer(observer)
      cached = per_observer.get(ps.id)
      out.append(cached if cached is not None else self._static(ps))
    return out

  def rows(self, ps: PublicState) -> tuple[np.ndarray, np.ndarray]:
    """The rows [n_p] of each player's infostates of `ps`."""
    return self._static(ps).rows

  def encode(self, queries: Sequence[value_functions.Query],
             values: Sequence[Sequence[np.ndarray]] | None = None,
             policies: Sequence[np.ndarray | None] | None = None) -> Batch:
    """A Batch for `queries`; with targets when `values` (true, unnormalised
    counterfactual values per player, as a value function returns them)
    and/or `policies` ([n_q, A] of the acting player) are given."""
    n = len(queries)
    b = Batch(
        inputs=np.zeros((n, self.input_size), dtype=np.float32),
        value_target=np.zeros((n, self.num_rows), dtype=np.float32),
        value_mask=np.zeros((n, self.num_rows), dtype=np.float32),
        policy_target=np.zeros((n, self.num_rows, self.num_actions),
                               dtype=np.float32),
        policy_mask=np.zeros((n, self.num_rows), dtype=np.float32),
        legal=np.zeros((n, self.num_rows, self.num_actions),
                       dtype=np.float32))
    offset = self.features.size + 3
    b.scales = np.zeros((n, 2))
    for i, q in enumerate(queries):
      ps = q.public_state
      static = self._static(ps)
      head, rows, legal = static.head, static.rows, static.legal
      normalised, _, scale = value_functions.normalise_beliefs(ps, q.ranges)
      b.scales[i] = scale
      b.inputs[i, :offset] = head
      for p in range(2):
        b.inputs[i, offset + rows[p]] = normalised[p]
        b.value_mask[i, rows[p]] = 1.0
        if values is not None:
          s = scale[p] * self.value_unit[p]
          if s > 0:
            b.value_target[i, rows[p]] = np.asarray(values[i][p]) / s
          else:  # no opponent mass: nothing to learn about these values
            b.value_mask[i, rows[p]] = 0.0
      if legal is not None:
        r = rows[ps.current_player()]
        b.legal[i, r] = legal
        if policies is not None and policies[i] is not None:
          b.policy_target[i, r] = policies[i]
          b.policy_mask[i, r] = 1.0
    if values is None:
      b.value_mask[:] = 0.0
    return b


# --- The network ------------------------------------------------------------


def _learning_rate(config: NetworkConfig):
  import optax  # pylint: disable=g-import-not-at-top
  return optax.exponential_decay(
      init_value=config.learning_rate, transition_steps=config.lr_decay_steps,
      decay_rate=config.lr_decay_rate)


def _optimizer(config: NetworkConfig):
  import optax  # pylint: disable=g-import-not-at-top
  schedule = _learning_rate(config)
  if config.optimizer == "adam":
    return optax.adam(schedule)
  return optax.sgd(schedule, momentum=0.9)


def _bucket(n: int) -> int:
  size = _MIN_BUCKET
  while size < n:
    size *= 2
  return size


def _jit_functions(net, optimizer, cfg: NetworkConfig, terms):
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
    values, logits = net.apply(params, batch["inputs"])
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


def _cross_entropy(logits, legal, target):
  """Per-example cross-entropy of `target` against the softmax of `logits`
  over legal actions (the last axis)."""
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  logp = jax.nn.log_softmax(jnp.where(legal > 0, logits, -1e9), axis=-1)
  return -jnp.sum(target * jnp.where(legal > 0, logp, 0.0), axis=-1)


def _masked_softmax(logits: np.ndarray, legal: np.ndarray,
                    temperature: float) -> np.ndarray:
  """The softmax over the last axis of `logits` / `temperature` where
  `legal` > 0 (0 elsewhere), as the jitted `predict` computes it."""
  logits = np.where(legal > 0, logits / np.float32(temperature),
                    np.float32(-1e9))
  e = np.exp(logits - logits.max(axis=-1, keepdims=True))
  return e / e.sum(axis=-1, keepdims=True)


def _padded_predict(predict, params, inputs: np.ndarray, legal: np.ndarray,
                    max_bucket: int) -> tuple[np.ndarray, np.ndarray]:
  """`predict` over the rows of `inputs` in chunks of at most `max_bucket`,
  each padded to a power-of-two size, so each size compiles once."""
  n = inputs.shape[0]
  out_v, out_p = [], []
  for lo in range(0, max(n, 1), max_bucket):
    chunk = inputs[lo:lo + max_bucket]
    chunk_legal = legal[lo:lo + max_bucket]
    m = chunk.shape[0]
    size = _bucket(m)
    if size != m:
      chunk = np.concatenate(
          [chunk, np.zeros((size - m,) + chunk.shape[1:], chunk.dtype)])
      chunk_legal = np.concatenate(
          [chunk_legal,
           np.zeros((size - m,) + chunk_legal.shape[1:], chunk_legal.dtype)])
    v, p = predict(params, chunk, chunk_legal)
    out_v.append(np.asarray(v)[:m])
    out_p.append(np.asarray(p)[:m])
  return np.concatenate(out_v), np.concatenate(out_p)


class CVPN:
  """The network for one game: parameters, optimiser, losses, inference."""

  MAX_BUCKET = 4096

  def __init__(self, encoder: Encoder, config: NetworkConfig | None = None):
    import haiku as hk  # pylint: disable=g-import-not-at-top
    import jax  # pylint: disable=g-import-not-at-top
    import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
    import optax  # pylint: disable=g-import-not-at-top

    self.encoder = encoder
    self.config = config or NetworkConfig()
    self.config.validate()
    rows, actions = encoder.num_rows, encoder.num_actions
    hidden = tuple(int(h) for h in self.config.hidden)
    policy_hidden = tuple(int(h) for h in self.config.policy_hidden)

    def forward(inputs):
      torso = hk.nets.MLP(hidden, activate_final=True, name="torso")(inputs)
      values = hk.Linear(rows, name="value")(torso)
      policy_torso = hk.nets.MLP(policy_hidden, activate_final=True,
                                 name="policy_torso")(inputs)
      logits = hk.Linear(rows * actions, name="policy")(policy_torso)
      return values, logits.reshape(inputs.shape[:-1] + (rows, actions))

    self._net = hk.without_apply_rng(hk.transform(forward))
    self._optimizer = _optimizer(self.config)
    cfg = self.config

    def terms(values, logits, batch):
      err = values - batch["value_target"]
      huber = optax.losses.huber_loss(err, delta=cfg.huber_delta)
      vmask = batch["value_mask"]
      value_loss = jnp.sum(huber * vmask) / jnp.maximum(jnp.sum(vmask), 1.0)
      ce = _cross_entropy(logits, batch["legal"], batch["policy_target"])
      pmask = batch["policy_mask"]
      policy_loss = jnp.sum(ce * pmask) / jnp.maximum(jnp.sum(pmask), 1.0)
      return value_loss, policy_loss

    self._jax = jax
    self._update, self._loss, self._predict = _jit_functions(
        self._net, self._optimizer, cfg, terms)
    # `forward`'s layers by parameter name, for inference on the host
    # (`predict_values`, `predict_prior`).
    self._layers = {
        "value": [f"torso/~/linear_{i}" for i in range(len(hidden))] +
                 ["value"],
        "policy": [f"policy_torso/~/linear_{i}"
                   for i in range(len(policy_hidden))] + ["policy"]}
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
    jax = self._jax
    dummy = np.zeros((1, self.encoder.input_size), dtype=np.float32)
    self.params = self._net.init(jax.random.PRNGKey(seed), dummy)
    self.opt_state = self._optimizer.init(self.params)
    self.step = 0

  def param_shapes(self):
    """The parameter tree's shapes and dtypes (jax.ShapeDtypeStruct leaves),
    without computing any parameters: a template for `_unflatten` in
    processes that receive their parameters (the training workers), where
    `init` would cost seconds of op-by-op compilation."""
    jax = self._jax
    dummy = np.zeros((1, self.encoder.input_size), dtype=np.float32)
    return jax.eval_shape(self._net.init, jax.random.PRNGKey(0), dummy)

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
    return float(_learning_rate(self.config)(self.step if step is None
                                             else step))

  # --- Training --------------------------------------------------------------

  def train_step(self, batch: Batch) -> dict[str, float]:
    """One optimiser step on `batch`; returns its losses (before the step)."""
    if self.params is None:
      raise ValueError("cvpn: parameters are not initialised (call init or "
                       "load a checkpoint)")
    self._check_writable("train it")
    self.params, self.opt_state, metrics = self._update(
        self.params, self.opt_state, batch.as_dict())
    self.step += 1
    return {k: float(v) for k, v in metrics.items()}

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
    return _padded_predict(self._predict, self.params, inputs, legal,
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
    return _masked_softmax(logits.reshape(legal.shape), legal,
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


# --- Checkpoints ------------------------------------------------------------


class CheckpointError(ValueError):
  """A checkpoint that cannot be used (missing, corrupt, another game)."""


def _flatten(tree, prefix: str) -> dict[str, np.ndarray]:
  import jax  # pylint: disable=g-import-not-at-top
  leaves = jax.tree_util.tree_leaves(tree)
  return {f"{prefix}/{i:05d}": np.asarray(x) for i, x in enumerate(leaves)}


def _unflatten(template, arrays: dict[str, np.ndarray], prefix: str, path):
  import jax  # pylint: disable=g-import-not-at-top
  leaves, treedef = jax.tree_util.tree_flatten(template)
  keys = sorted(k for k in arrays if k.startswith(prefix + "/"))
  if len(keys) != len(leaves):
    raise CheckpointError(
        f"{path}: {prefix} has {len(keys)} arrays, the network expects "
        f"{len(leaves)} (was it written with other network settings?)")
  loaded = []
  for k, leaf in zip(keys, leaves):
    a = arrays[k]
    shape = tuple(leaf.shape)  # arrays, or jax.ShapeDtypeStruct templates
    if a.shape != shape:
      raise CheckpointError(f"{path}: {k} has shape {a.shape}, the network "
                            f"expects {shape}")
    loaded.append(a)
  return jax.tree_util.tree_unflatten(treedef, loaded)


def _write_npz(path: str, meta: dict[str, Any], params, opt_state) -> None:
  """Writes params (and opt_state unless None) with the JSON `meta` to
  `path` (.npz), atomically."""
  arrays = _flatten(params, "params")
  if opt_state is not None:
    arrays.update(_flatten(opt_state, "opt_state"))
  arrays["__meta__"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
  directory = os.path.dirname(os.path.abspath(path))
  os.makedirs(directory, exist_ok=True)
  tmp = f"{path}.tmp{os.getpid()}"
  with open(tmp, "wb") as f:
    np.savez(f, **arrays)
  os.replace(tmp, path)


def _read_npz(path: str, fmt: str, kind: str
              ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
  """(metadata, arrays) of a `kind` checkpoint in format `fmt`, with clear
  errors."""
  if not os.path.exists(path):
    raise CheckpointError(f"{kind} checkpoint {path!r} does not exist")
  try:
    with open(path, "rb") as f:
      data = f.read()
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
      arrays = {k: z[k] for k in z.files}
  except (OSError, ValueError, zipfile.BadZipFile, EOFError) as e:
    raise CheckpointError(f"{path!r} is not a readable {kind} checkpoint "
                          f"(corrupt or not an .npz file): {e}") from None
  if "__meta__" not in arrays:
    raise CheckpointError(f"{path!r} is not a {kind} checkpoint (no metadata)")
  try:
    meta = json.loads(arrays.pop("__meta__").tobytes().decode())
  except (ValueError, UnicodeDecodeError) as e:
    raise CheckpointError(f"{path!r}: corrupt checkpoint metadata: {e}"
                          ) from None
  if not isinstance(meta, dict) or meta.get("format") != fmt:
    found = meta.get("format") if isinstance(meta, dict) else None
    raise CheckpointError(f"{path!r}: unsupported checkpoint format "
                          f"{found!r}; supported: {fmt!r}")
  return meta, arrays


def save_checkpoint(path: str, net: CVPN, *, game: pyspiel.Game | str,
                    extra: dict[str, Any] | None = None,
                    include_optimizer: bool = True) -> None:
  """Writes params, optimiser state, step, network config, game string and
  `extra` (e.g. the training config) to `path` (.npz), atomically."""
  if net.params is None:
    raise ValueError("cvpn: nothing to save, the network has no parameters")
  if isinstance(game, str):
    game = pyspiel.load_game(game)
  include_optimizer = include_optimizer and net.opt_state is not None
  meta = {"format": CHECKPOINT_FORMAT, "game": str(game), "step": net.step,
          "network": net.config.to_json(), "spec": net.encoder.spec(),
          "extra": extra or {}, "has_optimizer": bool(include_optimizer)}
  _write_npz(path, meta, net.params,
             net.opt_state if include_optimizer else None)


def same_game(name: str, game: pyspiel.Game) -> bool:
  """Whether the game string `name` (a checkpoint's) loads `game`, defaults
  included: "liars_dice()" is liars_dice(numdice=1,dice_sides=6)."""
  if name == str(game):
    return True
  try:
    other = pyspiel.load_game(name)
  except pyspiel.SpielError:
    return False
  return (other.get_type().short_name == game.get_type().short_name and
          other.get_parameters() == game.get_parameters())


def read_checkpoint(path: str) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
  """(metadata, arrays) of a checkpoint file, with clear errors."""
  return _read_npz(path, CHECKPOINT_FORMAT, "cvpn")


def load_checkpoint(path: str, game: pyspiel.Game | str,
                    encoder: Encoder | None = None) -> CVPN:
  """The network stored at `path`, checked against `game`."""
  meta, arrays = read_checkpoint(path)
  game = pyspiel.load_game(game) if isinstance(game, str) else game
  if not same_game(meta["game"], game):
    raise CheckpointError(
        f"checkpoint {path!r} was trained for {meta['game']}, not {game}")
  if encoder is None:
    observer = PublicStateObserver(game)
    encoder = Encoder(observer)
    # The slots were read off the whole public tree (8,193 public states in
    # liars_dice): the network's own observer keeps only the root, or a
    # network shared for the process's life would keep the tree with it.
    observer.restart()
  if meta["spec"] != encoder.spec():
    raise CheckpointError(f"checkpoint {path!r} expects inputs/outputs "
                          f"{meta['spec']}, {game} has {encoder.spec()}")
  try:
    config = NetworkConfig.from_json(meta["network"])
  except (ValueError, TypeError) as e:
    raise CheckpointError(f"{path!r}: bad network settings: {e}") from None
  net = CVPN(encoder, config)
  net.init(0)
  net.params = _unflatten(net.params, arrays, "params", path)
  if meta.get("has_optimizer"):
    net.opt_state = _unflatten(net.opt_state, arrays, "opt_state", path)
  net.step = int(meta["step"])
  net.metadata = meta
  return net


def average_checkpoints(paths: Sequence[str],
                        game: pyspiel.Game | str | None = None) -> CVPN:
  """The network whose parameters are the mean of the checkpoints' parameters.

  Stochastic weight averaging (Izmailov et al., 2018) over the periodic
  checkpoints of one run (`train.py --keep_checkpoints`): averaging the
  iterates of the last part of training smooths out the noise of the
  minibatch updates. All checkpoints must be for the same game (`game`, if
  given) and have the same network settings. The result carries no optimiser
  state (it is for inference, not for resuming); its step is the last one
  and its metadata lists the averaged steps.
  """
  if not paths:
    raise CheckpointError("average_checkpoints: no checkpoints given")
  import jax  # pylint: disable=g-import-not-at-top
  metas = [read_checkpoint(p)[0] for p in paths]
  if game is None:
    game = metas[0]["game"]
  nets = []
  for path, meta in zip(paths, metas):
    if meta["network"] != metas[0]["network"]:
      raise CheckpointError(
          f"cannot average {path!r} with {paths[0]!r}: network settings "
          f"{meta['network']} differ from {metas[0]['network']}")
    nets.append(load_checkpoint(path, game))
  order = sorted(range(len(nets)), key=lambda i: nets[i].step)
  out = nets[order[-1]]
  out.params = jax.tree_util.tree_map(
      lambda *xs: np.mean(np.stack([np.asarray(x, np.float64) for x in xs]),
                          axis=0).astype(np.asarray(xs[0]).dtype),
      *[n.params for n in nets])
  out.opt_state = None
  extra = dict(out.metadata.get("extra", {}))
  extra["averaged_steps"] = [nets[i].step for i in order]
  out.metadata = dict(out.metadata, extra=extra, has_optimizer=False)
  return out


# --- Networks shared within a process ---------------------------------------

# (real path, game string) -> (file identity, network)
_SHARED_NETWORKS: dict[tuple[str, str], tuple[tuple[int, ...], CVPN]] = {}


def _file_identity(path: str) -> tuple[int, ...]:
  st = os.stat(path)
  return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


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


def clear_shared_caches() -> None:
  """Forgets what searches share across bots in this process: the exact
  expansions (`public_state.EXPANSIONS`) and the shared networks' encodings of
  exact public states. A search after it builds everything anew (the same
  results, more slowly): `benchmarks/search_speed.py --cold` times that."""
  EXPANSIONS.clear()
  for _, net in _SHARED_NETWORKS.values():
    net.encoder.clear_shared()


def shared_network(path: str, game: pyspiel.Game | str) -> CVPN:
  """The network at `path` for `game`, read and prepared once per process.

  Every bot that loads the same checkpoint file gets the same network object:
  its parameters (on the device, immutable), its encoder and its compiled
  inference functions, so a `pyspiel.load_bot("sog", ...)` after the first
  neither reads the file nor compiles again. The network is read-only
  (`set_params` and `train_step` raise); bots keep their search state and
  caches in their own value functions. The entry is keyed by the file's real
  path and the game, and read again when the file's identity (device, inode,
  size, modification time) changes.
  """
  import jax  # pylint: disable=g-import-not-at-top
  game = pyspiel.load_game(game) if isinstance(game, str) else game
  real = os.path.realpath(path)
  try:
    identity = _file_identity(real)
  except OSError:
    identity = None  # load_checkpoint names the problem
  key = (real, str(game))
  cached = _SHARED_NETWORKS.get(key)
  if cached is not None and identity is not None and cached[0] == identity:
    return cached[1]
  net = load_checkpoint(path, game)
  net.params = jax.device_put(net.params)
  net.opt_state = None
  net.read_only = True
  _SHARED_NETWORKS[key] = (identity or _file_identity(real), net)
  return net


def clear_shared_networks() -> None:
  """Forgets the networks `shared_network` keeps (they are read again)."""
  _SHARED_NETWORKS.clear()


# --- Shipped networks -------------------------------------------------------

# The package's data/ folder (open_spiel_sog/data).
DATA_DIR = os.path.normpath(os.path.join(os.path.dirname(__file__), os.pardir,
                                         os.pardir, "data"))


def shipped_checkpoint_name(game: pyspiel.Game | str) -> str:
  """The file name a shipped network for `game` has in `data/`."""
  name = str(game)
  for c in "()=, ":
    name = name.replace(c, "_")
  return name.strip("_") + ".npz"


_SHIPPED: dict[tuple, list[tuple[str, str]]] = {}


def _shipped() -> list[tuple[str, str]]:
  """(game string, path) of each network in data/; read once per state of
  the directory (names and modification times)."""
  files = sorted(name for name in (os.listdir(DATA_DIR)
                                   if os.path.isdir(DATA_DIR) else [])
                 if name.endswith(".npz"))
  key = tuple((name, os.stat(os.path.join(DATA_DIR, name)).st_mtime_ns)
              for name in files)
  if key not in _SHIPPED:
    out = []
    for name in files:
      path = os.path.join(DATA_DIR, name)
      try:
        meta, _ = read_checkpoint(path)
      except CheckpointError:
        continue
      out.append((meta["game"], path))
    _SHIPPED.clear()
    _SHIPPED[key] = out
  return _SHIPPED[key]


def shipped_games() -> list[str]:
  """The games a network ships for (their load_game strings)."""
  return [name for name, _ in _shipped()]


def shipped_checkpoint(game: pyspiel.Game | str) -> str | None:
  """The path of the shipped network for `game`, or None; a game named
  with its defaults left out ("liars_dice") finds the network shipped for
  the same parameters spelled out."""
  path = os.path.join(DATA_DIR, shipped_checkpoint_name(game))
  if os.path.exists(path):
    return path
  game = pyspiel.load_game(game) if isinstance(game, str) else game
  for name, shipped in _shipped():
    if same_game(name, game):
      return shipped
  return None


# --- The value function -----------------------------------------------------


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
      pi = _masked_softmax(logits, legal_k, net.config.prior_temperature)
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
                      ) -> "CVPNValueFunction":
    """A value function of its own (caches, nothing shared that changes)
    over the process's one read-only copy of the network at `path`."""
    return cls(shared_network(path, game))

  def evaluate(self, queries):
    if not queries:
      return []
    return self.net.evaluate_batch(queries)


# --- ISMCTS-BR's value-and-prior network ------------------------------------

VALUE_PRIOR_FORMAT = "open_spiel_sog.value_prior/1"


class ValuePriorNet:
  """The value-and-prior network of ISMCTS-BR (algorithms/ismcts_br.py).

  One network serves both seats of a two-player game: its input is the
  responder's `information_state_tensor(seat)` followed by a one-hot of the
  seat. Two MLP torsos (`NetworkConfig.hidden` for the value,
  `policy_hidden` for the prior, as in the CVPN) give a scalar value and
  logits over `game.num_distinct_actions()`, masked to the legal actions.

  Values are learned in units of the game's largest absolute utility
  (`utility_scale`), so targets lie in [-1, 1]; `train_step` takes and
  `predict` returns them in the game's own utility units. Loss:
  value_weight * MSE(value, Monte Carlo return; over the examples whose
  `value_mask` is 1) + policy_weight *
  cross-entropy(visit-count policy, prior) + weight_decay * L2. Inference is
  jitted and padded to power-of-two buckets (one compile per bucket).
  `NetworkConfig.huber_delta` is not used (the value loss is the MSE).
  """

  MAX_BUCKET = 4096

  def __init__(self, game: pyspiel.Game | str,
               config: NetworkConfig | None = None):
    import haiku as hk  # pylint: disable=g-import-not-at-top
    import jax  # pylint: disable=g-import-not-at-top
    import jax.numpy as jnp  # pylint: disable=g-import-not-at-top

    if isinstance(game, str):
      game = pyspiel.load_game(game)
    game_type = game.get_type()
    if game.num_players() != 2:
      raise ValueError(f"value-prior network: {game_type.short_name} has "
                       f"{game.num_players()} players, not 2")
    if not game_type.provides_information_state_tensor:
      raise ValueError(f"value-prior network: {game_type.short_name} does not "
                       "provide information_state_tensor, its input")
    self.game = game
    self.config = config or NetworkConfig()
    self.config.validate()
    self.tensor_size = int(game.information_state_tensor_size())
    self.input_size = self.tensor_size + 2
    self.num_actions = int(game.num_distinct_actions())
    self.utility_scale = float(max(abs(game.max_utility()),
                                   abs(game.min_utility()))) or 1.0
    hidden = tuple(int(h) for h in self.config.hidden)
    policy_hidden = tuple(int(h) for h in self.config.policy_hidden)
    actions = self.num_actions

    def forward(inputs):
      torso = hk.nets.MLP(hidden, activate_final=True, name="torso")(inputs)
      value = hk.Linear(1, name="value")(torso)[..., 0]
      policy_torso = hk.nets.MLP(policy_hidden, activate_final=True,
                                 name="policy_torso")(inputs)
      logits = hk.Linear(actions, name="policy")(policy_torso)
      return value, logits

    self._net = hk.without_apply_rng(hk.transform(forward))
    self._optimizer = _optimizer(self.config)

    def terms(value, logits, batch):
      vmask = batch["value_mask"]
      value_loss = (jnp.sum(jnp.square(value - batch["value_target"]) * vmask)
                    / jnp.maximum(jnp.sum(vmask), 1.0))
      ce = _cross_entropy(logits, batch["legal"], batch["policy_target"])
      return value_loss, jnp.mean(ce)

    self._jax = jax
    self._update, self._loss, self._predict = _jit_functions(
        self._net, self._optimizer, self.config, terms)
    self.params = None
    self.opt_state = None
    self.step = 0
    self.metadata: dict[str, Any] = {}

  # --- Encoding --------------------------------------------------------------

  def features(self, state: pyspiel.State, seat: int) -> np.ndarray:
    """[input_size] float32: `seat`'s infostate tensor, then a seat one-hot."""
    x = np.zeros(self.input_size, dtype=np.float32)
    x[:self.tensor_size] = state.information_state_tensor(seat)
    x[self.tensor_size + seat] = 1.0
    return x

  def legal_mask(self, state: pyspiel.State) -> np.ndarray:
    """[num_actions] float32, 1 on the acting player's legal actions."""
    mask = np.zeros(self.num_actions, dtype=np.float32)
    mask[state.legal_actions()] = 1.0
    return mask

  # --- Parameters ------------------------------------------------------------

  def init(self, seed: int = 0) -> None:
    dummy = np.zeros((1, self.input_size), dtype=np.float32)
    self.params = self._net.init(self._jax.random.PRNGKey(seed), dummy)
    self.opt_state = self._optimizer.init(self.params)
    self.step = 0

  def _check_params(self) -> None:
    if self.params is None:
      raise ValueError("value-prior network: parameters are not initialised "
                       "(call init or load a checkpoint)")

  def _batch(self, inputs, legal, value_target, policy_target, value_mask):
    inputs = np.asarray(inputs, dtype=np.float32)
    n = inputs.shape[0] if inputs.ndim == 2 else -1
    shapes = {"inputs": (inputs.shape, (n, self.input_size)),
              "legal": (np.shape(legal), (n, self.num_actions)),
              "value_target": (np.shape(value_target), (n,)),
              "policy_target": (np.shape(policy_target),
                                (n, self.num_actions))}
    if value_mask is None:
      value_mask = np.ones(max(n, 0), dtype=np.float32)
    shapes["value_mask"] = (np.shape(value_mask), (n,))
    for name, (got, want) in shapes.items():
      if n < 1 or tuple(got) != want:
        raise ValueError(f"value-prior network: {name} has shape {got}, "
                         f"expected {want} (B examples, B >= 1)")
    return {"inputs": inputs,
            "legal": np.asarray(legal, dtype=np.float32),
            "value_target": (np.asarray(value_target, dtype=np.float32) /
                             self.utility_scale),
            "policy_target": np.asarray(policy_target, dtype=np.float32),
            "value_mask": np.asarray(value_mask, dtype=np.float32)}

  # --- Training --------------------------------------------------------------

  def train_step(self, inputs: np.ndarray, legal: np.ndarray,
                 value_target: np.ndarray, policy_target: np.ndarray,
                 value_mask: np.ndarray | None = None) -> dict[str, float]:
    """One optimiser step; returns the losses before it.

    Args:
      inputs: [B, input_size] from `features`.
      legal: [B, num_actions] legal-action masks.
      value_target: [B] returns in the game's utility units.
      policy_target: [B, num_actions] target policies (visit counts).
      value_mask: [B] 1 where the value target counts (default: all).
    """
    self._check_params()
    batch = self._batch(inputs, legal, value_target, policy_target,
                        value_mask)
    self.params, self.opt_state, metrics = self._update(
        self.params, self.opt_state, batch)
    self.step += 1
    return {k: float(v) for k, v in metrics.items()}

  def loss(self, inputs, legal, value_target, policy_target, value_mask=None
           ) -> dict[str, float]:
    """The losses on a batch (as `train_step` takes it), without a step."""
    self._check_params()
    _, metrics = self._loss(self.params, self._batch(
        inputs, legal, value_target, policy_target, value_mask))
    return {k: float(v) for k, v in metrics.items()}

  # --- Inference -------------------------------------------------------------

  def predict(self, inputs: np.ndarray, legal: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """(values [B] in the game's utility units, prior [B, num_actions])."""
    self._check_params()
    values, prior = _padded_predict(
        self._predict, self.params, np.asarray(inputs, dtype=np.float32),
        np.asarray(legal, dtype=np.float32), self.MAX_BUCKET)
    return (values.astype(np.float64) * self.utility_scale,
            prior.astype(np.float64))

  # --- Checkpoints -----------------------------------------------------------

  def spec(self) -> dict[str, Any]:
    """What a checkpoint must agree with to be used for this game."""
    return {"input_size": self.input_size, "num_actions": self.num_actions,
            "utility_scale": self.utility_scale}

  def save(self, path: str, *, extra: dict[str, Any] | None = None,
           include_optimizer: bool = True) -> None:
    """Writes params, optimiser state, step, network config, game string and
    `extra` to `path` (.npz, with a JSON metadata array), atomically."""
    self._check_params()
    include_optimizer = include_optimizer and self.opt_state is not None
    meta = {"format": VALUE_PRIOR_FORMAT, "game": str(self.game),
            "step": self.step, "network": self.config.to_json(),
            "spec": self.spec(), "extra": extra or {},
            "has_optimizer": bool(include_optimizer)}
    _write_npz(path, meta, self.params,
               self.opt_state if include_optimizer else None)

  @staticmethod
  def read(path: str) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """(metadata, arrays) of a value-prior checkpoint, with clear errors."""
    return _read_npz(path, VALUE_PRIOR_FORMAT, "value-prior")

  @classmethod
  def load(cls, path: str, game: pyspiel.Game | str) -> "ValuePriorNet":
    """The network stored at `path`, checked against `game`."""
    meta, arrays = cls.read(path)
    game = pyspiel.load_game(game) if isinstance(game, str) else game
    if not same_game(str(meta.get("game")), game):
      raise CheckpointError(f"checkpoint {path!r} was trained for "
                            f"{meta.get('game')}, not {game}")
    try:
      config = NetworkConfig.from_json(meta["network"])
    except (KeyError, ValueError, TypeError) as e:
      raise CheckpointError(f"{path!r}: bad network settings: {e}") from None
    net = cls(game, config)
    if meta.get("spec") != net.spec():
      raise CheckpointError(f"checkpoint {path!r} expects inputs/outputs "
                            f"{meta.get('spec')}, {game} has {net.spec()}")
    net.init(0)
    net.params = _unflatten(net.params, arrays, "params", path)
    if meta.get("has_optimizer"):
      net.opt_state = _unflatten(net.opt_state, arrays, "opt_state", path)
    net.step = int(meta.get("step", 0))
    net.metadata = meta
    return net
