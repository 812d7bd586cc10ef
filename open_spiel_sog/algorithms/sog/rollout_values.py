"""The rollout value function: Monte Carlo values of uniform-random play
(DESIGN.md section 7), and the random rollouts it plays (in C++ through the
shim for OpenSpiel's C++ games, in Python otherwise, number for number)."""

from __future__ import annotations

import time
from typing import Sequence

import numpy as np
import pyspiel

from open_spiel_sog.algorithms.sog.value_functions import Evaluation
from open_spiel_sog.algorithms.sog.value_functions import history_values_to_counterfactual
from open_spiel_sog.algorithms.sog.value_functions import PackedQueries
from open_spiel_sog.algorithms.sog.value_functions import Query
from open_spiel_sog.algorithms.sog.value_functions import uniform_policy
from open_spiel_sog.algorithms.sog.value_functions import ValueFunction
from open_spiel_sog.public_state import PublicState


_MASK64 = (1 << 64) - 1


def _splitmix64(state: int) -> tuple[int, int]:
  """(next SplitMix64 output, next state): the generator of the shim's
  `random_rollouts` (open_spiel_sog/_native/shim.cc), in Python."""
  state = (state + 0x9E3779B97F4A7C15) & _MASK64
  z = state
  z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
  z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
  return z ^ (z >> 31), state


def python_random_rollouts(state: pyspiel.State, num_rollouts: int,
                           rng_state: int, max_moves: int = 0,
                           truncated_value: float = 0.0
                           ) -> tuple[float, int, int]:
  """`random_rollouts` in Python (the same games, number for number)."""
  total = 0.0
  moves = 0
  for _ in range(num_rollouts):
    s = state.clone()
    played = 0
    while not s.is_terminal():
      if max_moves > 0 and played == max_moves:
        break
      played += 1
      if s.is_chance_node():
        z, rng_state = _splitmix64(rng_state)
        u = (z >> 11) * 2.0**-53
        outcomes = s.chance_outcomes()
        chosen = outcomes[-1][0]
        cumulative = 0.0
        for action, probability in outcomes:
          cumulative += probability
          if u < cumulative:
            chosen = action
            break
        s.apply_action(chosen)
      else:
        legal = s.legal_actions()
        if not legal:
          raise ValueError("a non-terminal state has no legal actions: "
                           f"{s}")
        z, rng_state = _splitmix64(rng_state)
        s.apply_action(legal[z % len(legal)])
    total += s.returns()[0] if s.is_terminal() else truncated_value
    moves += played
  return total / num_rollouts, rng_state, moves


_native_rollouts = None  # the shim's random_rollouts, once looked up
_ONE_INDEX = np.zeros(1, dtype=np.int64)  # a one-history public state's index
_ONE_INDEX.setflags(write=False)


def random_rollouts(state: pyspiel.State, num_rollouts: int,
                    rng_state: int, max_moves: int = 0,
                    truncated_value: float = 0.0) -> tuple[float, int, int]:
  """(player 0's mean return over `num_rollouts` games played from `state`
  with uniformly random actions and sampled chance, the generator's next
  state, the actions played in all). With `max_moves` > 0 a game still
  running after that many actions (chance outcomes included) stops and
  scores `truncated_value`. In C++ (the shim) for C++ games, in Python
  otherwise; both give the same numbers."""
  global _native_rollouts
  if _native_rollouts is None:
    from open_spiel_sog import _native  # pylint: disable=g-import-not-at-top
    shim, _ = _native.load_shim()
    _native_rollouts = getattr(shim, "random_rollouts", False)
  module = type(state).__module__
  if _native_rollouts and (module == "pyspiel" or
                           module.startswith("pyspiel.")):
    return _native_rollouts(state, num_rollouts, rng_state, max_moves,
                            truncated_value)
  return python_random_rollouts(state, num_rollouts, rng_state, max_moves,
                                truncated_value)


def fit_rollouts(seconds_per_rollout: float, moves_per_rollout: float,
                 allowed: float, wanted: int, leaves: int = 1
                 ) -> tuple[int, int]:
  """(rollouts per leaf, max moves: 0 for uncut) so that one rollout per
  leaf of `leaves` takes at most `allowed` seconds: fewer rollouts than
  `wanted` (at least 1), then, where even one each does not fit, rollouts
  cut after the actions that do (a cut rollout scores a draw)."""
  fit = int(allowed / max(seconds_per_rollout * leaves, 1e-12))
  rollouts = max(1, min(wanted, fit))
  max_moves = 0
  if fit < 1 and moves_per_rollout > 0:
    per_move = seconds_per_rollout / moves_per_rollout
    max_moves = max(1, int(allowed / (per_move * leaves)))
  return rollouts, max_moves


def draw_value(game: pyspiel.Game) -> float:
  """Player 0's return in a drawn game: 0 in zero-sum games, half the
  utility sum in constant-sum ones, the middle of the utility range
  otherwise."""
  utility = game.get_type().utility
  if utility == pyspiel.GameType.Utility.ZERO_SUM:
    return 0.0
  if utility == pyspiel.GameType.Utility.CONSTANT_SUM:
    return game.utility_sum() / 2.0
  return (game.max_utility() + game.min_utility()) / 2.0


class RolloutValueFunction(ValueFunction):
  """Monte Carlo values of uniform-random play, combined with the ranges.

  For every history of a public state (at most `max_histories`, sampled
  uniformly beyond that and reweighted), `num_rollouts` games are played to
  the end with uniformly random actions and chance sampled from its
  distribution. The per-history mean return does not depend on the ranges,
  so it is computed once per public state; each query then costs two
  weighted sums. The prior is uniform.

  Under a deadline (`deadline`, a `time.monotonic()` time a time-limited
  search sets), a leaf gets fewer rollouts per history, then fewer
  histories (at least one of each), so that the leaves an update values
  take at most `leaf_share` of the time left (timed by
  `seconds_per_rollout`, a running mean of the rollouts played): an update
  cannot stop half way through valuing its new leaves. Where even one
  whole rollout per leaf would not fit, each leaf's one rollout stops after
  the actions that fit (`seconds_per_move`) and scores a draw; such values
  are not cached.
  `max_moves` > 0 (a time-limited bot sets it where even one rollout per
  child is too slow: hive) stops each rollout after that many actions and
  scores it as a draw (`draw_value`).
  """

  name = "rollout"
  leaf_share = 0.1

  def __init__(self, game: pyspiel.Game, *, num_rollouts: int = 8,
               max_histories: int = 512, seed: int = 0):
    if num_rollouts < 1 or max_histories < 1:
      raise ValueError("rollout value function: num_rollouts and "
                       "max_histories must be >= 1")
    self.game = game
    self.num_rollouts = num_rollouts
    self.max_histories = max_histories
    self.num_actions = game.num_distinct_actions()
    self._rng = np.random.default_rng(seed)
    self._rollout_rng = int(seed) & _MASK64
    self._cache: dict[int, tuple[np.ndarray, ...]] = {}
    self._policies: dict[int, np.ndarray | None] = {}
    self._packed_cache: dict = {}
    self.deadline: float | None = None
    self.seconds_per_rollout: float | None = None
    self.seconds_per_move: float | None = None
    self.max_moves = 0
    self.truncated_value = draw_value(game)
    # Seconds and rollouts of those played whole (to `max_moves`), seconds
    # and actions of all.
    self._timed = [0.0, 0, 0.0, 0]

  _MAX_PACKED_CACHE = 256

  def _affordable(self, histories: int, pending: int
                  ) -> tuple[int, int, int]:
    """(histories to sample, rollouts per history, `max_moves` of each
    rollout) for a leaf of `histories`: at most max_histories and
    num_rollouts, and under `deadline` fewer where this leaf and the
    `pending` - 1 others still to value would take more than `leaf_share`
    of the time left: rollouts per history are cut first, then histories
    (at least one of each), and where even one whole rollout per leaf does
    not fit, that rollout stops after the actions that do (timed by
    `seconds_per_move`; at least one) and scores `truncated_value`."""
    bound = min(histories, self.max_histories)
    if self.deadline is None or not self.seconds_per_rollout:
      return bound, self.num_rollouts, self.max_moves
    left = max(self.deadline - time.monotonic(), 0.0)
    afford = int(self.leaf_share * left /
                 (max(pending, 1) * self.seconds_per_rollout))
    if afford >= bound * self.num_rollouts:
      return bound, self.num_rollouts, self.max_moves
    if afford >= bound:
      return bound, afford // bound, self.max_moves
    if afford >= 1 or not self.seconds_per_move:
      return max(1, afford), 1, self.max_moves
    # (kriegspiel: an expansion added 372 leaves with 0.4 s left, and one
    # whole rollout each took 0.62 s.)
    fit = max(1, int(self.leaf_share * left /
                     (max(pending, 1) * self.seconds_per_move)))
    return 1, 1, fit if not self.max_moves else min(fit, self.max_moves)

  def _mean_return(self, state: pyspiel.State, rollouts: int,
                   max_moves: int) -> float:
    """Player 0's mean return over `rollouts` random games from `state`,
    each stopped after `max_moves` actions (0: none) and then scored
    `truncated_value`."""
    start = time.perf_counter()
    mean, self._rollout_rng, moves = random_rollouts(
        state, rollouts, self._rollout_rng, max_moves, self.truncated_value)
    if self.deadline is not None:  # timed where the time is budgeted
      self.record_time(time.perf_counter() - start, rollouts, moves,
                       whole=max_moves == self.max_moves)
    return mean

  def record_time(self, seconds: float, rollouts: int, moves: int,
                  whole: bool = True) -> None:
    """Adds rollouts played in `seconds` (`moves` actions in all) to the
    running means: seconds per move from every rollout, seconds per
    rollout from `whole` ones only (not cut short by the deadline)."""
    if whole:
      self._timed[0] += seconds
      self._timed[1] += rollouts
      self.seconds_per_rollout = self._timed[0] / self._timed[1]
    self._timed[2] += seconds
    self._timed[3] += moves
    if self._timed[3]:
      self.seconds_per_move = self._timed[2] / self._timed[3]

  def _history_values(self, ps: PublicState, pending: int = 1):
    """Per sampled history of `ps` (cached per public state): (its index
    [K], weight times mean u0 [K], its infostate per player [K] and [K],
    chance reach times weight times mean u0 [K]). `pending`: see
    `fixed_history_values`. Values of rollouts that the deadline cut
    shorter than `max_moves` are not cached: a later search values the
    public state again."""
    cached = self._cache.get(ps.id)
    if cached is not None:
      return cached
    n = len(ps.histories)
    bound, rollouts, moves = self._affordable(n, pending)
    if n <= bound:  # every history, weight 1
      index = _ONE_INDEX if n == 1 else np.arange(n)
      weighted_u0 = np.asarray([self._mean_return(h, rollouts, moves)
                                for h in ps.histories])
      cached = (index, weighted_u0, ps.history_infostate[0],
                ps.history_infostate[1], ps.chance_reach * weighted_u0)
    else:
      index = np.sort(self._rng.choice(n, size=bound, replace=False))
      u0 = np.asarray([self._mean_return(ps.histories[i], rollouts, moves)
                       for i in index])
      weighted_u0 = (n / bound) * u0
      cached = (index, weighted_u0, ps.history_infostate[0][index],
                ps.history_infostate[1][index],
                ps.chance_reach[index] * weighted_u0)
    if moves == self.max_moves:
      self._cache[ps.id] = cached
    return cached

  def _policy(self, ps: PublicState) -> np.ndarray | None:
    """The uniform prior at `ps` (one array per public state, shared)."""
    if ps.id not in self._policies:
      policy = uniform_policy(ps, self.num_actions)
      if policy is not None:
        policy.setflags(write=False)
      self._policies[ps.id] = policy
    return self._policies[ps.id]

  def prior(self, query: Query) -> np.ndarray | None:
    return self._policy(query.public_state)  # uniform: no rollouts needed

  def forget(self, observer, ids) -> None:
    # Keyed by id alone: one rollout value function serves one observer.
    del observer
    for i in ids:
      self._cache.pop(i, None)
      self._policies.pop(i, None)

  def fixed_history_values(self, ps: PublicState, pending: int = 1):
    _, _, inf0, inf1, weight = self._history_values(ps, pending)
    # The prior is uniform: None (no [infostates, actions] array per leaf:
    # 4,672 actions in chess).
    return inf0, inf1, weight, None

  def evaluate(self, queries: Sequence[Query]) -> list[Evaluation]:
    out = []
    for q in queries:
      ps = q.public_state
      index, weighted_u0 = self._history_values(ps)[:2]
      values = history_values_to_counterfactual(ps, q.ranges, weighted_u0,
                                                index)
      out.append(Evaluation(values=values, policy=self._policy(ps)))
    return out

  def _packed_arrays(self, packed: PackedQueries):
    """Per history of every query: its entry in the packed v0 and v1, and
    chance reach times mean u0; the priors. Cached under `packed.key`."""
    key = packed.key
    cached = self._packed_cache.get(key) if key is not None else None
    if cached is not None:
      return cached
    pending = sum(ps.id not in self._cache for ps in packed.public_states)
    local = []
    for ps in packed.public_states:
      new = ps.id not in self._cache
      local.append(self._history_values(ps, pending)[2:])
      pending -= new
    counts = np.asarray([len(w) for _, _, w in local], dtype=np.int64)
    entries = []
    for p in range(2):
      offsets = np.concatenate([[0], np.cumsum(packed.sizes[p])])
      inf = (np.concatenate([arrays[p] for arrays in local]) if local
             else np.zeros(0, dtype=np.int64))
      entries.append(inf + np.repeat(offsets[:-1], counts))
      entries.append(int(offsets[-1]))
    weight = (np.concatenate([w for _, _, w in local]) if local
              else np.zeros(0))
    cached = (entries[0], entries[2], weight, (entries[1], entries[3]),
              [self._policy(ps) for ps in packed.public_states])
    if key is not None:
      if len(self._packed_cache) >= self._MAX_PACKED_CACHE:
        self._packed_cache.clear()
      self._packed_cache[key] = cached
    return cached

  def evaluate_packed(self, packed: PackedQueries):
    """`evaluate`'s values for all queries in two weighted sums."""
    e0, e1, weight, (n0, n1), policies = self._packed_arrays(packed)
    r0, r1 = packed.ranges
    v0 = np.bincount(e0, weights=weight * r1[e1], minlength=n0)
    v1 = -np.bincount(e1, weights=weight * r0[e0], minlength=n1)
    return (v0, v1), list(policies)
