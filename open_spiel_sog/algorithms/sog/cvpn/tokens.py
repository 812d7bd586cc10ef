"""The token CVPN's encoding (DESIGN.md section 14): public belief states,
exact or sampled, to one token per infostate plus one public token and one
pair per history (`TokenEncoder`, `TokenBatch`), with no walk of the game.

An infostate's token is its own tensor: OpenSpiel's
`information_state_tensor` where the game has one, else its owner's
`observation_tensor`, else a hashed encoding of its key (the information
state string or the action-observation history the observer uses); then
its player, whether it acts, its normalised range r and log r, and log of
its reach mass. The public token is the public state's features
(`PublicFeatures`, or a hashed encoding of the public observations where
those are too wide), who acts, its sizes, and the log of the ranges' and
chance's masses.

Values: the network predicts each infostate's expected value EV (in units of
the game's largest absolute utility); its counterfactual value for the
normalised belief is EV times its reach mass M_k = sum over its histories of
the normalised chance reach times the opponent's normalised range, and the
true counterfactual value that times ||r_opp|| * C (`value_functions`'s
convention). Value targets are the solver's counterfactual values divided
the same way, masked where M_k is 0.
"""

from __future__ import annotations

import dataclasses
import math
import re
import weakref
import zlib
from typing import Any, Sequence

import numpy as np
import pyspiel

from open_spiel_sog import games
from open_spiel_sog.algorithms.networks.tokens import INFO_SIZE
from open_spiel_sog.algorithms.sog import value_functions
from open_spiel_sog.public_state import PublicFeatures
from open_spiel_sog.public_state import PublicState
from open_spiel_sog.public_state import PublicStateObserver

# The widest tensor a token may carry, and the widest public features used
# as they are (wider ones are hashed to HASH_SIZE).
MAX_TOKEN_SIZE = 1 << 15
MAX_PUBLIC_SIZE = 4096
HASH_SIZE = 512
EXTRA_PUBLIC = 10  # who acts (3), 0, 3 sizes, 3 masses
_SPLIT = re.compile(r"[\s,;:|()\[\]{}=]+")


def _hashed(text: str, size: int = HASH_SIZE) -> np.ndarray:
  """A bag of (position, word) pairs of `text`, hashed into `size` bins."""
  out = np.zeros(size, dtype=np.float32)
  for i, word in enumerate(w for w in _SPLIT.split(text) if w):
    out[zlib.crc32(f"{i}:{word}".encode()) % size] = 1.0
  return out


def log_feature(x) -> np.ndarray:
  """log(x) / 10 clipped at -3 (what the network reads of a mass)."""
  return np.maximum(np.log(np.maximum(x, 1e-30)) / 10.0, -3.0)


def tensor_source(game: pyspiel.Game) -> tuple[str, tuple[int, ...]]:
  """(where infostate tokens come from, the tensor's shape): the game's
  own compact encoding where it declares one (`games.compact_encoding`:
  Scotland Yard's Table S1, in either twin), else the information state tensor, the observation tensor or the
  hashed key."""
  compact = games.compact_encoding(game)
  if compact is not None:
    return "compact", tuple(int(d) for d in compact[0])
  t = game.get_type()
  if t.provides_information_state_tensor:
    return "information_state_tensor", tuple(
        game.information_state_tensor_shape())
  if t.provides_observation_tensor:
    return "observation_tensor", tuple(game.observation_tensor_shape())
  return "hashed", (HASH_SIZE,)


def encoding_problem(game: pyspiel.Game) -> str | None:
  """Why the token input cannot encode `game` (one line), or None."""
  source, shape = tensor_source(game)
  size = math.prod(shape)
  if size > MAX_TOKEN_SIZE:
    return (f"cvpn: the token input cannot encode {game}: its "
            f"{source} has {size} entries, more than the {MAX_TOKEN_SIZE} a "
            "token may carry")
  if size == 0:
    return (f"cvpn: the token input cannot encode {game}: its {source} is "
            "empty")
  return None


@dataclasses.dataclass
class _Static:
  """What the encoder keeps per public state."""
  tokens: np.ndarray  # [N, T] float32: player 0's infostates, then 1's
  player: np.ndarray  # [N] int32
  acting: np.ndarray  # [N] float32
  hist: np.ndarray  # [H, 2] int32: each history's two tokens
  weight: np.ndarray  # [H] float64: chance reach / C
  public: np.ndarray  # [P] float32, without the masses
  sizes: tuple[int, int]
  chance: float  # C
  legal: np.ndarray | None  # [n_q, A] float32 of the acting player


# Training fields (what the learner's steps read), in order.
FIELDS = ("tokens", "info", "player", "mask", "range", "public", "hist",
          "weight", "value_target", "value_mask", "policy_target",
          "policy_mask", "legal")
# Per token and per history (the fields padded along their second axis).
_PER_TOKEN = ("tokens", "info", "player", "mask", "range", "value_target",
              "value_mask", "policy_target", "policy_mask", "legal")
_PER_HISTORY = ("hist", "weight")
_DTYPES = {"player": np.int32, "hist": np.int32}


def bucket(n: int, least: int = 2) -> int:
  """The smallest power of two times `least` that is at least `n`."""
  size = least
  while size < n:
    size *= 2
  return size


class TokenBatch:
  """Examples of the token input, padded to common sizes.

  Each field of FIELDS is an array with the examples on axis 0; per-token
  fields have N (padded) on axis 1, per-history fields Hh. `counts` [B, 2]
  holds each example's real tokens and histories. Set by
  `TokenEncoder.encode` (not part of training batches): `mass` [B, N], each
  token's reach mass M_k, and `scales` [B, 2], each player's ||r_opp|| * C.
  """

  FIELDS = FIELDS

  def __init__(self, arrays: dict[str, np.ndarray], counts: np.ndarray,
               mass: np.ndarray | None = None,
               scales: np.ndarray | None = None):
    self.arrays = arrays
    self.counts = np.asarray(counts, dtype=np.int64).reshape(-1, 2)
    self.mass = mass
    self.scales = scales

  def __len__(self) -> int:
    return len(self.counts)

  def __getattr__(self, name):
    arrays = self.__dict__.get("arrays")
    if arrays is not None and name in arrays:
      return arrays[name]
    raise AttributeError(name)

  def as_dict(self) -> dict[str, np.ndarray]:
    """The training fields and counts by name (what the jitted steps and the
    workers' messages carry); `from_dict` inverts it."""
    out = dict(self.arrays)
    out["counts"] = self.counts
    return out

  @classmethod
  def from_dict(cls, arrays: dict[str, np.ndarray]) -> "TokenBatch":
    arrays = dict(arrays)
    counts = arrays.pop("counts")
    return cls(arrays, counts)

  def examples(self) -> list[dict[str, np.ndarray]]:
    """Each example's fields, cut to its real tokens and histories."""
    out = []
    for i, (n, h) in enumerate(self.counts.tolist()):
      ex = {}
      for f in FIELDS:
        a = self.arrays[f][i]
        if f in _PER_TOKEN:
          a = a[:n]
        elif f in _PER_HISTORY:
          a = a[:h]
        ex[f] = a
      out.append(ex)
    return out

  @classmethod
  def stack(cls, examples: Sequence[dict[str, np.ndarray]]) -> "TokenBatch":
    """Examples (as `examples` gives them) padded to power-of-two sizes."""
    counts = np.asarray([[len(e["player"]), len(e["weight"])]
                         for e in examples], dtype=np.int64).reshape(-1, 2)
    n = bucket(int(counts[:, 0].max(initial=1)))
    h = bucket(int(counts[:, 1].max(initial=1)), 1)
    arrays = {}
    for f in FIELDS:
      first = examples[0][f]
      if f in _PER_TOKEN:
        shape = (len(examples), n) + first.shape[1:]
      elif f in _PER_HISTORY:
        shape = (len(examples), h) + first.shape[1:]
      else:
        shape = (len(examples),) + first.shape
      out = np.zeros(shape, dtype=_DTYPES.get(f, np.float32))
      for i, e in enumerate(examples):
        a = e[f]
        out[(i,) + tuple(slice(0, s) for s in a.shape)] = a
      arrays[f] = out
    return cls(arrays, counts)

  @classmethod
  def concatenate(cls, batches: Sequence["TokenBatch"]) -> "TokenBatch":
    return cls.stack([e for b in batches for e in b.examples()])

  def take(self, index) -> "TokenBatch":
    examples = self.examples()
    picked = np.arange(len(examples))[index]
    return TokenBatch.stack([examples[i] for i in np.atleast_1d(picked)])


class TokenEncoder:
  """Turns public belief states (exact or sampled) and their targets into
  token batches (see the module docstring). Per-public-state parts are
  cached per observer (weakly) and dropped by `forget`."""

  input = "tokens"

  def __init__(self, observer: PublicStateObserver):
    self.observer = observer
    self.game = game = observer.game
    problem = encoding_problem(game)
    if problem is not None:
      raise ValueError(problem)
    self.source, self.tensor_shape = tensor_source(game)
    compact = games.compact_encoding(game)
    self._compact = compact[1] if compact is not None else None
    self.token_size = math.prod(self.tensor_shape)
    self.num_actions = game.num_distinct_actions()
    self.utility_scale = float(max(abs(game.max_utility()),
                                   abs(game.min_utility()))) or 1.0
    self._features = None
    try:
      features = PublicFeatures(observer)
      if 0 < features.size <= MAX_PUBLIC_SIZE:
        self._features = features
    except (ValueError, pyspiel.SpielError):
      pass
    self.public_features = (self._features.kind if self._features
                            else "hashed")
    self.public_size = (self._features.size if self._features
                        else HASH_SIZE) + EXTRA_PUBLIC
    self._cache = weakref.WeakKeyDictionary()

  def spec(self) -> dict[str, Any]:
    """What a checkpoint must agree with to be used for this game."""
    return {"input": "tokens", "tensor_source": self.source,
            "tensor_shape": list(self.tensor_shape),
            "public_features": self.public_features,
            "public_size": self.public_size,
            "num_actions": self.num_actions,
            "utility_scale": self.utility_scale}

  def clear_shared(self) -> None:
    """Nothing is shared by content (see `Encoder.clear_shared`)."""

  def forget(self, observer, ids) -> None:
    per_observer = self._cache.get(observer)
    if per_observer:
      for i in ids:
        per_observer.pop(i, None)

  # --- Per public state ------------------------------------------------------

  @property
  def features(self):
    """The public features (`PublicFeatures`), or None where hashed."""
    return self._features

  def state_tensor(self, state: pyspiel.State, player: int) -> np.ndarray:
    """`player`'s infostate token tensor at a history `state` with no public
    state around it (the anchored subgame's: a hashed source hashes the
    game's information state string, else its observation string)."""
    key = None
    if self.source == "hashed":
      key = (state.information_state_string(player)
             if self.game.get_type().provides_information_state_string
             else state.observation_string(player))
    return self._tensor(state, player, key)

  def _tensor(self, state: pyspiel.State, player: int, key) -> np.ndarray:
    if self.source == "compact":
      return np.asarray(self._compact(state, player),
                        np.float32).reshape(-1)
    if self.source == "information_state_tensor":
      return np.asarray(state.information_state_tensor(player), np.float32)
    if self.source == "observation_tensor":
      return np.asarray(state.observation_tensor(player), np.float32)
    return _hashed(key)

  def _public(self, ps: PublicState) -> np.ndarray:
    if self._features is not None:
      head = self._features(ps)
    else:
      keys = []
      node = ps
      while node is not None:
        keys.append(str(node.key))
        node = node.parent
      head = _hashed(" ".join(reversed(keys)))
    extra = np.zeros(EXTRA_PUBLIC, dtype=np.float32)
    who = ps.current_player()
    extra[who if who in (0, 1) else 2] = 1.0
    # extra[3] stays 0: whether the public state is a sample is not an
    # input (a sample that holds every history, in proportion to chance,
    # is the exact public state to the network).
    extra[4] = math.log1p(ps.num_infostates(0)) / 10.0
    extra[5] = math.log1p(ps.num_infostates(1)) / 10.0
    extra[6] = math.log1p(len(ps.histories)) / 10.0
    return np.concatenate([head.astype(np.float32), extra])

  def _build(self, ps: PublicState) -> _Static:
    n0, n1 = ps.num_infostates(0), ps.num_infostates(1)
    tokens = np.zeros((n0 + n1, self.token_size), dtype=np.float32)
    for p, offset in ((0, 0), (1, n0)):
      keys = ps.infostates(p) if self.source == "hashed" else None
      for j, h in enumerate(ps.first_histories(p)):
        try:
          t = self._tensor(ps.histories[h], p, keys[j] if keys else None)
        except pyspiel.SpielError as e:
          raise ValueError(
              f"cvpn: the token input cannot encode {self.game}: its "
              f"{self.source} fails at {ps.describe()}: "
              f"{str(e).splitlines()[0]}") from None
        if t.size != self.token_size:
          raise ValueError(
              f"cvpn: the token input cannot encode {self.game}: its "
              f"{self.source} has {t.size} entries at {ps.describe()}, not "
              f"the {self.token_size} of its declared shape")
        tokens[offset + j] = t
    player = np.concatenate([np.zeros(n0, np.int32), np.ones(n1, np.int32)])
    acting = np.zeros(n0 + n1, dtype=np.float32)
    legal = None
    q = ps.current_player()
    if ps.is_player_node():
      acting[player == q] = 1.0
      nq = (n0, n1)[q]
      legal = np.zeros((nq, self.num_actions), dtype=np.float32)
      for j in range(nq):
        legal[j, ps.legal_actions(j)] = 1.0
    hist = np.stack([ps.history_infostate[0],
                     n0 + ps.history_infostate[1]], axis=1).astype(np.int32)
    chance = float(ps.chance_reach.sum())
    weight = (ps.chance_reach / chance if chance > 0 else
              np.full(len(ps.histories), 1.0 / len(ps.histories)))
    return _Static(tokens, player, acting, hist, weight, self._public(ps),
                   (n0, n1), chance, legal)

  def static(self, ps: PublicState) -> _Static:
    per_observer = self._cache.get(ps.observer)
    if per_observer is None:
      per_observer = self._cache[ps.observer] = {}
    cached = per_observer.get(ps.id)
    if cached is None:
      cached = per_observer[ps.id] = self._build(ps)
    return cached

  # --- Queries ---------------------------------------------------------------

  def encode(self, queries: Sequence[value_functions.Query],
             values: Sequence[Sequence[np.ndarray]] | None = None,
             policies: Sequence[np.ndarray | None] | None = None,
             value_masks: Sequence[Sequence[np.ndarray | None] | None]
             | None = None) -> TokenBatch:
    """A TokenBatch for `queries`; with targets when `values` (true
    counterfactual values per player, as a value function returns them;
    a player's entry may be None: no target) and/or `policies` ([n_q, A] of
    the acting player, or None) are given. `value_masks`: per query, per
    player, the infostates whose values are targets (None: all)."""
    examples, masses, scales = [], [], []
    for i, q in enumerate(queries):
      ps = q.public_state
      st = self.static(ps)
      n0, n1 = st.sizes
      normalised, _, scale = value_functions.normalise_beliefs(ps, q.ranges)
      r = np.concatenate([normalised[0], normalised[1]])
      mass = np.zeros(n0 + n1)
      i0, i1 = st.hist[:, 0], st.hist[:, 1]
      mass[:n0] = np.bincount(i0, weights=st.weight * r[i1], minlength=n0)
      mass[n0:] = np.bincount(i1 - n0, weights=st.weight * r[i0],
                              minlength=n1)
      info = np.zeros((n0 + n1, INFO_SIZE), dtype=np.float32)
      info[np.arange(n0 + n1), st.player] = 1.0
      info[:, 2] = st.acting
      info[:, 3] = r
      info[:, 4] = log_feature(r)
      info[:, 5] = log_feature(mass)
      public = st.public.copy()
      extra = len(public) - EXTRA_PUBLIC
      norms = [float(np.sum(q.ranges[p])) for p in range(2)]
      public[extra + 7:extra + 10] = log_feature(
          np.asarray(norms + [st.chance]))
      n = n0 + n1
      a = self.num_actions
      ex = {"tokens": st.tokens, "info": info, "player": st.player,
            "mask": np.ones(n, np.float32), "range": r.astype(np.float32),
            "public": public, "hist": st.hist,
            "weight": st.weight.astype(np.float32),
            "value_target": np.zeros(n, np.float32),
            "value_mask": np.zeros(n, np.float32),
            "policy_target": np.zeros((n, a), np.float32),
            "policy_mask": np.zeros(n, np.float32),
            "legal": np.zeros((n, a), np.float32)}
      rows = (slice(0, n0), slice(n0, n))
      if st.legal is not None:
        qp = ps.current_player()
        ex["legal"][rows[qp]] = st.legal
        if policies is not None and policies[i] is not None:
          ex["policy_target"][rows[qp]] = policies[i]
          ex["policy_mask"][rows[qp]] = 1.0
      if values is not None:
        for p in range(2):
          if values[i][p] is None:
            continue
          denom = mass[rows[p]] * scale[p] * self.utility_scale
          ok = denom > 0
          if value_masks is not None and value_masks[i] is not None and (
              value_masks[i][p] is not None):
            ok &= np.asarray(value_masks[i][p], dtype=bool)
          v = np.asarray(values[i][p], dtype=np.float64)
          ex["value_target"][rows[p]] = np.where(
              ok, v / np.where(ok, denom, 1.0), 0.0)
          ex["value_mask"][rows[p]] = ok
      examples.append(ex)
      masses.append(mass)
      scales.append(scale)
    batch = TokenBatch.stack(examples)
    width = batch.arrays["mask"].shape[1]
    batch.mass = np.zeros((len(examples), width))
    for i, m in enumerate(masses):
      batch.mass[i, :len(m)] = m
    batch.scales = np.asarray(scales, dtype=np.float64).reshape(-1, 2)
    return batch

  def decode(self, batch: TokenBatch, ev: np.ndarray, i: int
             ) -> tuple[np.ndarray, np.ndarray]:
    """Query i's true counterfactual values (v0, v1) from the network's
    expected values `ev` [B, N]."""
    n0, n1 = (int(batch.counts[i, 0] - np.sum(batch.player[i, :batch.counts[
        i, 0]])), int(np.sum(batch.player[i, :batch.counts[i, 0]])))
    cfv = (np.asarray(ev[i, :n0 + n1], dtype=np.float64) *
           self.utility_scale * batch.mass[i, :n0 + n1])
    return cfv[:n0] * batch.scales[i, 0], cfv[n0:] * batch.scales[i, 1]
