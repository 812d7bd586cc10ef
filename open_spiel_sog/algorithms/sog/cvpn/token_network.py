"""The token CVPN (`TokenCVPN`, DESIGN.md section 14): the network of
`algorithms.networks.tokens` on `TokenEncoder`'s inputs, with the same
interface as the slot network (`CVPN`): parameters, training steps,
checkpoints and batched inference, and its value function
(`TokenValueFunction`).

A search's inference runs the network's layers in numpy on the host
(`HostTokenNetwork`: a jitted call would compile once per new size as the
tree grows); `TokenCVPN.predict` runs the jitted network, batches padded to
power-of-two sizes, so each size compiles once.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pyspiel

from open_spiel_sog.algorithms.networks import NetworkConfig
from open_spiel_sog.algorithms.networks import learning_rate_schedule
from open_spiel_sog.algorithms.networks import masked_softmax
from open_spiel_sog.algorithms.networks.tokens import HostTokenNetwork
from open_spiel_sog.algorithms.networks.tokens import INFO_SIZE
from open_spiel_sog.algorithms.networks.tokens import TokenNetwork
from open_spiel_sog.algorithms.sog import value_functions
from open_spiel_sog.algorithms.sog.cvpn.tokens import TokenBatch
from open_spiel_sog.algorithms.sog.cvpn.tokens import EXTRA_PUBLIC
from open_spiel_sog.algorithms.sog.cvpn.tokens import bucket
from open_spiel_sog.algorithms.sog.cvpn.tokens import log_feature
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
    self._host: tuple[Any, HostTokenNetwork] | None = None

  # --- Parameters ------------------------------------------------------------

  def init(self, seed: int = 0) -> None:
    self.params, self.opt_state = self._network.init(seed)
    self.step = 0

  def param_shapes(self):
    """The parameter tree's shapes and dtypes (jax.ShapeDtypeStruct
    leaves), computed without initialising anything."""
    return self._network.param_shapes()

  def opt_state_shapes(self):
    """The optimiser state's shapes, as `param_shapes`."""
    import jax  # pylint: disable=g-import-not-at-top
    return jax.eval_shape(self._network.optimizer.init, self.param_shapes())

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
    return {k: float(v) for k, v in self.train_step_async(batch).items()}

  def train_step_async(self, batch: TokenBatch) -> dict[str, Any]:
    """`train_step` without waiting for it (see `CVPN.train_step_async`)."""
    self._check_params()
    self._check_writable("train it")
    self.params, self.opt_state, metrics = self._network.update(
        self.params, self.opt_state, self._training_dict(batch))
    self.step += 1
    return metrics

  def loss(self, batch: TokenBatch) -> dict[str, float]:
    self._check_params()
    _, metrics = self._network.loss(self.params, self._training_dict(batch))
    return {k: float(v) for k, v in metrics.items()}

  # --- Inference -------------------------------------------------------------

  def host(self) -> HostTokenNetwork:
    """The network's layers in numpy for the current parameters (copied to
    the host once per parameter tree; trees are replaced, never changed in
    place)."""
    self._check_params()
    if self._host is None or self._host[0] is not self.params:
      self._host = (self.params, HostTokenNetwork(
          self.params, self._network, self.config.conv_channels))
    return self._host[1]

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


class _Layout:
  """A list of public states (GT-CFR's leaves) laid out as the network's
  padded inputs, with what packed ranges scatter into and values gather
  from (cached per `PackedQueries.key`)."""

  def __init__(self, encoder: TokenEncoder, public_states,
               sizes: tuple[np.ndarray, np.ndarray]):
    statics = [encoder.static(ps) for ps in public_states]
    num = len(statics)
    self.num = num
    # No padding: the host network takes any sizes (tokens and histories
    # up to the list's largest).
    self.padded = size = num
    n = self.width = max(sum(st.sizes) for st in statics)
    hh = max(len(st.weight) for st in statics)
    a = encoder.num_actions
    self.tokens = np.zeros((size, n, encoder.token_size), np.float32)
    self.player = np.zeros((size, n), np.int32)
    self.mask = np.zeros((size, n), np.float32)
    self.info = np.zeros((size, n, INFO_SIZE), np.float32)
    self.hist = np.zeros((size, hh, 2), np.int32)
    self.weight = np.zeros((size, hh), np.float32)
    self.public = np.zeros((size, encoder.public_size), np.float32)
    self.legal = np.zeros((size, n, a), np.float32)
    self.chance = np.asarray([st.chance for st in statics])
    self.acting_rows: list = []
    flat = ([], [])
    hist_flat = ([], [])
    hist_w = []
    for q, st in enumerate(statics):
      n0, n1 = st.sizes
      k = n0 + n1
      self.tokens[q, :k] = st.tokens
      self.player[q, :k] = st.player
      self.mask[q, :k] = 1.0
      self.info[q, np.arange(k), st.player] = 1.0
      self.info[q, :k, 2] = st.acting
      h = len(st.weight)
      self.hist[q, :h] = st.hist
      self.weight[q, :h] = st.weight
      self.public[q] = st.public
      flat[0].append(q * n + np.arange(n0))
      flat[1].append(q * n + n0 + np.arange(n1))
      hist_flat[0].append(q * n + st.hist[:, 0])
      hist_flat[1].append(q * n + st.hist[:, 1])
      hist_w.append(st.weight)
      if st.legal is not None:
        rows = (slice(0, n0) if public_states[q].current_player() == 0 else
                slice(n0, k))
        self.legal[q, rows] = st.legal
        self.acting_rows.append(rows)
      else:
        self.acting_rows.append(None)
    self.flat = tuple(np.concatenate(f) if f else np.zeros(0, np.int64)
                      for f in flat)
    self.hist_flat = tuple(np.concatenate(f) for f in hist_flat)
    self.hist_w = np.concatenate(hist_w)
    self.sizes = tuple(np.asarray(s, dtype=np.int64) for s in sizes)
    self.entry_query = tuple(np.repeat(np.arange(num), self.sizes[p])
                             for p in range(2))
    self.defined = [q for q, r in enumerate(self.acting_rows)
                    if r is not None]
    self.extra = encoder.public_size - EXTRA_PUBLIC


class TokenValueFunction(value_functions.ValueFunction):
  """GT-CFR leaf values and priors from a token CVPN: one batched network
  call per evaluation, on exact or sampled public states. The leaves of a
  search are laid out once per list (`_Layout`, cached under the packed
  queries' key); each call scatters the ranges in, runs the jitted network
  and gathers the values out with a few numpy operations."""

  name = "cvpn"
  # The sog bot may shrink public states to fit its time (sampled public
  # states are inputs like any other).
  accepts_sampled_public_states = True
  _MAX_LAYOUTS = 256

  def __init__(self, net: TokenCVPN):
    self.net = net
    self._layouts: dict = {}
    game = net.encoder.game
    self._perfect_information = (
        game.get_type().information ==
        pyspiel.GameType.Information.PERFECT_INFORMATION)

  def fixed_history_values(self, ps, pending: int = 1):
    """In a perfect-information game, a leaf's values are those of its one
    history whatever the ranges (both normalise to 1): the network is asked
    once per leaf, with unit ranges, and the search folds the leaf into its
    sums instead of asking again at every update (as it does with
    rollouts). None in other games."""
    del pending
    if not self._perfect_information or len(ps.histories) != 1:
      return None
    one = np.ones(1)
    evaluation = self.evaluate([value_functions.Query(ps, (one, one))])[0]
    index = np.zeros(1, dtype=np.int64)
    return (index, index, np.asarray([evaluation.values[0][0]]),
            evaluation.policy)

  def forget(self, observer, ids) -> None:
    self.net.encoder.forget(observer, ids)
    self._layouts.clear()

  def _layout(self, packed: value_functions.PackedQueries) -> _Layout:
    key = packed.key
    cached = self._layouts.get(key) if key is not None else None
    if cached is None:
      cached = _Layout(self.net.encoder, packed.public_states, packed.sizes)
      if key is not None:
        if len(self._layouts) >= self._MAX_LAYOUTS:
          self._layouts.clear()
        self._layouts[key] = cached
    return cached

  def evaluate_packed(self, packed: value_functions.PackedQueries):
    if not len(packed):
      return (np.zeros(0), np.zeros(0)), []
    net = self.net
    net._check_params()  # pylint: disable=protected-access
    lay = self._layout(packed)
    ranges = tuple(np.asarray(r, dtype=np.float64) for r in packed.ranges)
    normalised, scales = value_functions.normalise_packed_beliefs(
        ranges, lay.entry_query, lay.sizes, lay.chance)
    cells = lay.padded * lay.width
    r = np.zeros(cells)
    r[lay.flat[0]] = normalised[0]
    r[lay.flat[1]] = normalised[1]
    (h0, h1), w = lay.hist_flat, lay.hist_w
    mass = (np.bincount(h0, weights=w * r[h1], minlength=cells) +
            np.bincount(h1, weights=w * r[h0], minlength=cells))
    info = lay.info.copy()
    info[..., 3] = r.reshape(lay.padded, lay.width)
    info[..., 4] = log_feature(info[..., 3])
    info[..., 5] = log_feature(mass.reshape(lay.padded, lay.width))
    info *= lay.mask[..., None]
    public = lay.public.copy()
    norms = [np.bincount(lay.entry_query[p], weights=ranges[p],
                         minlength=lay.num) for p in range(2)]
    public[:lay.num, lay.extra + 7] = log_feature(norms[0])
    public[:lay.num, lay.extra + 8] = log_feature(norms[1])
    public[:lay.num, lay.extra + 9] = log_feature(lay.chance)
    inputs = {"tokens": lay.tokens, "info": info, "player": lay.player,
              "mask": lay.mask, "range": info[..., 3], "public": public,
              "hist": lay.hist, "weight": lay.weight}
    host = net.host()
    ev = host.values(inputs).astype(np.float64).reshape(-1)
    unit = net.encoder.utility_scale
    values = tuple(
        ev[lay.flat[p]] * unit * mass[lay.flat[p]] *
        scales[p][lay.entry_query[p]] for p in range(2))
    rows = lay.acting_rows
    legal = lay.legal
    temperature = net.config.prior_temperature
    last = host._last  # pylint: disable=protected-access

    def compute(k: int) -> np.ndarray:
      # The policy head of query k alone, when GT-CFR reads it (with this
      # call's activations).
      host._last = last  # pylint: disable=protected-access
      pi = masked_softmax(host.logits(k, rows[k]), legal[k, rows[k]],
                          temperature).astype(np.float64)
      return pi / pi.sum(axis=1, keepdims=True)

    return values, value_functions.LazyPriors(lay.defined, compute, lay.num)

  def evaluate(self, queries):
    return self.evaluate_by_packing(queries)
