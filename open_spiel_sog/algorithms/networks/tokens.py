"""The token CVPN's network in Haiku (DESIGN.md section 14): infostate
tokens, history pairs, per-infostate expected values and policy logits.

Inputs (one public belief state per example, padded; `TokenNetwork.FIELDS`):

  tokens   [B, N, T] each infostate's own tensor (see the encoder)
  info     [B, N, K] its player (one-hot), whether it acts, its normalised
           range r, log r, and log of its reach mass (below)
  player   [B, N] int32 its player (0 or 1)
  mask     [B, N] 1 on real tokens, 0 on padding
  range    [B, N] r, the owner's normalised range
  public   [B, P] the public token: the public state's features and masses
  hist     [B, Hh, 2] int32 per history, its two infostates' tokens
  weight   [B, Hh] per history, its chance reach normalised within the
           public state (0 on padding)

The network:

  e_k = MLP([trunk(tokens_k), info_k])      trunk: 3x3 convolutions for
                                            board tensors, else a layer
  g   = MLP(public)
  m_p = sum over p's tokens of r_k e_k      range-weighted pooling
  c   = MLP([g, m_0, m_1])                  the belief's summary
  z_h = MLP([e_I0(h), e_I1(h), c, log w_h]) one token per history: the pair
  u_h = Linear(z_h)                         of infostates it joins
  EV0(k) = sum_{h in k} w_h r1(I1(h)) u_h / sum_{h in k} w_h r1(I1(h))
  EV1(l) = -(the same over l's histories, weighted by r0)

Each history pairs an infostate with an opponent infostate it is compatible
with, so the values see card removal and hidden stones exactly (the
"history tokens" of DESIGN.md section 14); the sample's histories are the
public state's, exact or sampled. The counterfactual value of k is EV(k)
times its reach mass sum_{h in k} w_h r_opp(h) (the encoder's), so the two
players' values add to zero under any belief by construction (the zero-sum
correction of DeepStack, exactly). A perfect-information public state has
one history and one token per player: u is AlphaZero's value. Policy: the
acting player's tokens get logits MLP([e_k, a_k, c]) with a_k the weighted
mean of z over k's histories.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from open_spiel_sog.algorithms.networks.mlp import cross_entropy
from open_spiel_sog.algorithms.networks.mlp import jit_functions
from open_spiel_sog.algorithms.networks.mlp import optimizer as make_optimizer
from open_spiel_sog.algorithms.networks.mlp import transform
from open_spiel_sog.algorithms.networks.settings import NetworkConfig

INFO_SIZE = 6  # player one-hot (2), acting, r, log r, log mass


def _segment_mean(values, index, weights, num):
  """Per segment: sum of weights * values / sum of weights (0 where the
  weights are 0). values [M, ...], index [M], weights [M]."""
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  w = weights.reshape(weights.shape + (1,) * (values.ndim - 1))
  total = jax.ops.segment_sum(values * w, index, num_segments=num)
  norm = jax.ops.segment_sum(weights, index, num_segments=num)
  norm = norm.reshape(norm.shape + (1,) * (values.ndim - 1))
  return jnp.where(norm > 0, total / jnp.where(norm > 0, norm, 1.0), 0.0), norm


class TokenNetwork:
  """The transformed token network, its optimiser and jitted functions.

  Attributes:
    net: the transformed network: apply(params, inputs) -> (ev [B, N],
      logits [B, N, A]), `inputs` a dict of `FIELDS`.
    update, loss: jitted, as `TwoHeadedMLP`'s (batches are dicts of
      `FIELDS` and the targets).
    predict: jitted (params, inputs, legal) -> (ev, prior at
      `prior_temperature` over legal actions).
  """

  FIELDS = ("tokens", "info", "player", "mask", "range", "public", "hist",
            "weight")

  def __init__(self, config: NetworkConfig, tensor_shape: tuple[int, ...],
               token_size: int, public_size: int, num_actions: int):
    import jax  # pylint: disable=g-import-not-at-top
    import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
    import haiku as hk  # pylint: disable=g-import-not-at-top
    import optax  # pylint: disable=g-import-not-at-top

    cfg = config
    width = int(cfg.token_width)
    hidden = tuple(int(h) for h in cfg.hidden)
    policy_hidden = tuple(int(h) for h in cfg.policy_hidden)
    board = len(tensor_shape) == 3 and tensor_shape[1] > 1 and (
        tensor_shape[2] > 1) and math.prod(tensor_shape) == token_size
    self.board = board
    self.tensor_shape = tuple(tensor_shape)
    self.conv_channels = tuple(cfg.conv_channels)
    self.token_size = token_size
    self.public_size = public_size
    self.num_actions = num_actions

    def trunk(tokens):
      b, n = tokens.shape[:2]
      if board:
        c, h, w = tensor_shape
        x = tokens.reshape(b * n, c, h, w).transpose(0, 2, 3, 1)
        for i, channels in enumerate(cfg.conv_channels):
          x = jax.nn.relu(hk.Conv2D(int(channels), 3, name=f"conv_{i}")(x))
        x = x.reshape(b, n, -1)
      else:
        x = tokens
      return jax.nn.relu(hk.Linear(width, name="trunk")(x))

    def forward(inputs):
      tokens, info = inputs["tokens"], inputs["info"]
      mask, rng = inputs["mask"], inputs["range"]
      player = inputs["player"]
      hist, weight = inputs["hist"], inputs["weight"]
      b, n = mask.shape
      hh = weight.shape[1]
      e = hk.nets.MLP((width, width), activate_final=True, name="embed")(
          jnp.concatenate([trunk(tokens), info], axis=-1))
      e = e * mask[..., None]
      g = hk.nets.MLP((width,), activate_final=True, name="public")(
          inputs["public"])
      pooled = [jnp.sum(e * (rng * (player == p))[..., None], axis=1)
                for p in range(2)]
      c = hk.nets.MLP((width,), activate_final=True, name="context")(
          jnp.concatenate([g] + pooled, axis=-1))
      # History tokens: the pair of infostates each history joins.
      flat = (jnp.arange(b)[:, None] * n + hist.transpose(2, 0, 1))  # [2,B,Hh]
      e_flat = e.reshape(b * n, width)
      e0, e1 = e_flat[flat[0]], e_flat[flat[1]]
      logw = jnp.log(jnp.maximum(weight, 1e-12))[..., None] / 10.0
      z = hk.nets.MLP(hidden, activate_final=True, name="history")(
          jnp.concatenate(
              [e0, e1, jnp.broadcast_to(c[:, None], (b, hh, width)), logw],
              axis=-1))
      u = hk.Linear(1, name="value")(z)[..., 0]  # player 0's, per history
      r_flat = rng.reshape(-1)
      out_ev = jnp.zeros(b * n)
      out_a = jnp.zeros((b * n, z.shape[-1]))
      for p in range(2):
        own = flat[p].reshape(-1)
        opp_range = r_flat[flat[1 - p].reshape(-1)]
        w = weight.reshape(-1)
        omega = w * opp_range
        sign = 1.0 if p == 0 else -1.0
        ev, norm = _segment_mean(sign * u.reshape(-1), own, omega, b * n)
        # Where the opponent's range gives an infostate no mass, its value
        # is the chance-weighted mean (its counterfactual value is 0).
        ev_w, _ = _segment_mean(sign * u.reshape(-1), own, w, b * n)
        ev = jnp.where(norm > 0, ev, ev_w)
        a, _ = _segment_mean(z.reshape(-1, z.shape[-1]), own, w * (
            opp_range + 1e-3), b * n)
        is_p = (player.reshape(-1) == p)
        out_ev = jnp.where(is_p, ev, out_ev)
        out_a = jnp.where(is_p[:, None], a, out_a)
      ev = out_ev.reshape(b, n) * mask
      a = out_a.reshape(b, n, -1)
      logits = hk.nets.MLP(policy_hidden, activate_final=True,
                           name="policy_torso")(
          jnp.concatenate([e, a, jnp.broadcast_to(c[:, None], (b, n, width))],
                          axis=-1))
      logits = hk.Linear(num_actions, name="policy")(logits)
      return ev, logits

    self.net = transform(forward)
    self.optimizer = make_optimizer(cfg)

    def terms(ev, logits, batch):
      err = ev - batch["value_target"]
      huber = optax.losses.huber_loss(err, delta=cfg.huber_delta)
      vmask = batch["value_mask"]
      value_loss = jnp.sum(huber * vmask) / jnp.maximum(jnp.sum(vmask), 1.0)
      ce = cross_entropy(logits, batch["legal"], batch["policy_target"])
      pmask = batch["policy_mask"]
      policy_loss = jnp.sum(ce * pmask) / jnp.maximum(jnp.sum(pmask), 1.0)
      return value_loss, policy_loss

    # The optimiser step, loss and predict are the MLP's (`jit_functions`),
    # on the batch's fields.
    self.update, self.loss, self.predict = jit_functions(
        self.net, self.optimizer, cfg, terms, inputs_of=lambda batch: batch)
    self._jax = jax

  def dummy(self) -> dict[str, np.ndarray]:
    """A one-example input of one token per player and one history."""
    return {
        "tokens": np.zeros((1, 2, self.token_size), np.float32),
        "info": np.zeros((1, 2, INFO_SIZE), np.float32),
        "player": np.asarray([[0, 1]], np.int32),
        "mask": np.ones((1, 2), np.float32),
        "range": np.ones((1, 2), np.float32),
        "public": np.zeros((1, self.public_size), np.float32),
        "hist": np.asarray([[[0, 1]]], np.int32),
        "weight": np.ones((1, 1), np.float32)}

  def init(self, seed: int) -> tuple[Any, Any]:
    # Jitted: Haiku's initialisers op by op are ~130 small compilations
    # (21 s of a connect_four trainer's 23 s start-up).
    jax = self._jax
    params = jax.jit(self.net.init)(jax.random.PRNGKey(seed), self.dummy())
    return params, jax.jit(self.optimizer.init)(params)

  def param_shapes(self):
    jax = self._jax
    return jax.eval_shape(self.net.init, jax.random.PRNGKey(0), self.dummy())


# --- Inference on the host ---------------------------------------------------
#
# GT-CFR asks for a few dozen leaves at a time, hundreds of times a search,
# with sizes that change as the tree grows: a jitted call would compile once
# per new padded size (seconds each, longer than a time-limited move), so a
# search runs the same layers in numpy (`HostTokenNetwork`); the tests check
# it against the jitted network.


def _relu(x: np.ndarray) -> np.ndarray:
  return np.maximum(x, 0.0, out=x)


class HostTokenNetwork:
  """The token network's forward pass in numpy, on one parameter tree
  (host copies made once). `values(inputs)` gives the expected values and
  keeps what `logits(k, rows)` needs to compute one query's policy logits
  on demand."""

  def __init__(self, params, network: TokenNetwork, conv_channels):
    self.p = {name: {k: np.asarray(v, dtype=np.float32)
                     for k, v in layer.items()}
              for name, layer in params.items()}
    self.board = network.board
    self.tensor_shape = network.tensor_shape
    self.conv = len(conv_channels)
    self._last = None

  def _linear(self, name: str, x: np.ndarray) -> np.ndarray:
    layer = self.p[name]
    out = x @ layer["w"]
    out += layer["b"]
    return out

  def _mlp(self, name: str, x: np.ndarray) -> np.ndarray:
    i = 0
    while f"{name}/~/linear_{i}" in self.p:
      x = _relu(self._linear(f"{name}/~/linear_{i}", x))
      i += 1
    return x

  def _trunk(self, tokens: np.ndarray) -> np.ndarray:
    if not self.board:
      return _relu(self._linear("trunk", tokens))
    b, n = tokens.shape[:2]
    c, h, w = self.tensor_shape
    x = tokens.reshape(b * n, c, h, w).transpose(0, 2, 3, 1)
    for i in range(self.conv):
      layer = self.p[f"conv_{i}"]
      kh, kw = layer["w"].shape[:2]
      padded = np.pad(x, ((0, 0), (kh // 2, kh // 2), (kw // 2, kw // 2),
                          (0, 0)))
      patches = np.concatenate(
          [padded[:, dy:dy + h, dx:dx + w, :]
           for dy in range(kh) for dx in range(kw)], axis=-1)
      x = _relu(patches @ layer["w"].reshape(-1, layer["w"].shape[-1]) +
                layer["b"])
    return _relu(self._linear("trunk", x.reshape(b, n, -1)))

  def history_values(self, inputs: dict[str, np.ndarray],
                     sizes: np.ndarray | None = None) -> np.ndarray:
    """Each history's value u_h [B, Hh] (player 0's, utility-scale units):
    the anchored subgame's leaf values (DESIGN.md section 17). `sizes`
    [B]: each group's histories, the rest of its Hh padding, left out of
    the work (their values 0)."""
    u, _, _, _ = self._histories(inputs, sizes)
    return u.reshape(inputs["weight"].shape)

  def _histories(self, inputs: dict[str, np.ndarray],
                 sizes: np.ndarray | None = None):
    """(u [B * Hh], embeddings e, context c, history features z; z None
    where `sizes` left the padding out). The per-token layers run on the
    unmasked tokens only (a phase's groups are padded to the largest: in
    phantom_ttt, 57% of the cells are tokens, 46% histories)."""
    tokens, info = inputs["tokens"], inputs["info"]
    mask, rng = inputs["mask"], inputs["range"]
    player = inputs["player"]
    hist, weight = inputs["hist"], inputs["weight"]
    b, n = mask.shape
    hh = weight.shape[1]
    real = mask.reshape(-1) > 0
    e_real = self._mlp("embed", np.concatenate(
        [self._trunk(tokens.reshape(1, b * n, -1)[:, real])[0],
         info.reshape(b * n, -1)[real]], axis=-1).astype(np.float32))
    width = e_real.shape[-1]
    e = np.zeros((b * n, width), np.float32)
    e[real] = e_real * mask.reshape(-1)[real, None]
    e = e.reshape(b, n, width)
    g = self._mlp("public", inputs["public"].astype(np.float32))
    pooled = [np.einsum("bn,bnd->bd", rng * (player == p), e)
              for p in range(2)]
    c = self._mlp("context", np.concatenate([g] + pooled, axis=-1))
    flat = np.arange(b)[:, None] * n + hist.transpose(2, 0, 1)  # [2, B, Hh]
    e_flat = e.reshape(b * n, width)
    logw = np.log(np.maximum(weight, 1e-12))[..., None] / 10.0
    if sizes is not None:
      rows = np.arange(hh)[None, :] < np.asarray(sizes)[:, None]  # [B, Hh]
      z = self._mlp("history", np.concatenate(
          [e_flat[flat[0][rows]], e_flat[flat[1][rows]],
           c[np.nonzero(rows)[0]], logw[rows].astype(np.float32)], axis=-1))
      u = np.zeros(b * hh)
      u[rows.reshape(-1)] = self._linear("value", z)[:, 0]
      return u, e, c, None
    z = self._mlp("history", np.concatenate(
        [e_flat[flat[0]], e_flat[flat[1]],
         np.broadcast_to(c[:, None], (b, hh, width)),
         logw.astype(np.float32)], axis=-1))
    u = self._linear("value", z)[..., 0].reshape(-1).astype(np.float64)
    return u, e, c, z

  def values(self, inputs: dict[str, np.ndarray]) -> np.ndarray:
    """The expected values [B, N] (utility-scale units) of `inputs`."""
    rng, player = inputs["range"], inputs["player"]
    mask, hist, weight = inputs["mask"], inputs["hist"], inputs["weight"]
    b, n = mask.shape
    hh = weight.shape[1]
    u, e, c, z = self._histories(inputs)
    flat = np.arange(b)[:, None] * n + hist.transpose(2, 0, 1)  # [2, B, Hh]
    w = weight.reshape(-1).astype(np.float64)
    r_flat = rng.reshape(-1).astype(np.float64)
    cells = b * n
    ev = np.zeros(cells)
    own_all, omega_all = [], []
    for p in range(2):
      own = flat[p].reshape(-1)
      omega = w * r_flat[flat[1 - p].reshape(-1)]
      sign = 1.0 if p == 0 else -1.0
      norm = np.bincount(own, weights=omega, minlength=cells)
      total = np.bincount(own, weights=omega * u, minlength=cells)
      norm_w = np.bincount(own, weights=w, minlength=cells)
      total_w = np.bincount(own, weights=w * u, minlength=cells)
      mean = np.where(norm > 0, total / np.where(norm > 0, norm, 1.0),
                      np.where(norm_w > 0,
                               total_w / np.where(norm_w > 0, norm_w, 1.0),
                               0.0))
      is_p = player.reshape(-1) == p
      ev = np.where(is_p, sign * mean, ev)
      own_all.append(own)
      omega_all.append(w * (r_flat[flat[1 - p].reshape(-1)] + 1e-3))
    self._last = (e, c, z.reshape(b * hh, -1), own_all, omega_all, player, n)
    return (ev.reshape(b, n) * mask).astype(np.float32)

  def logits(self, k: int, rows: slice) -> np.ndarray:
    """Policy logits [len(rows), A] of query k's tokens `rows`, from the
    last `values` call."""
    e, c, z, own_all, omega_all, player, n = self._last
    tokens = np.arange(n)[rows]
    p = int(player[k, tokens[0]])
    cells = k * n + tokens
    own, omega = own_all[p], omega_all[p]
    pick = np.isin(own, cells)
    index = np.searchsorted(cells, own[pick])
    width = z.shape[1]
    a = np.zeros((len(cells), width))
    norm = np.zeros(len(cells))
    np.add.at(a, index, z[pick] * omega[pick][:, None])
    np.add.at(norm, index, omega[pick])
    a = np.where(norm[:, None] > 0, a / np.where(norm > 0, norm, 1.0)[:, None],
                 0.0).astype(np.float32)
    x = np.concatenate(
        [e[k, tokens], a, np.broadcast_to(c[k], (len(tokens), c.shape[1]))],
        axis=-1)
    return self._linear("policy", self._mlp("policy_torso", x))
