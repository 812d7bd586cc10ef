"""The "cfr_policy" baseline: a CFR+ average policy as a bot.

Registered with the other baselines by `baselines.register()`:

    bot = pyspiel.load_bot("cfr_policy", game, player, {"iterations": 200})

It samples its actions from the average policy of `iterations` iterations of
CFR+ (OpenSpiel's C++ `pyspiel.CFRPlusSolver`, much faster than its Python
port). The policy is solved once per (game, iterations) in a process (see
`cfr_plus_average_policy`), so a round-robin does not re-solve for every seat
or game. provides_policy() is True. Sequential games with information-state
strings and explicit (or no) chance whose tree has at most MAX_CFR_HISTORIES
histories (leduc_poker has 9,457: 1000 iterations take about 10 s there; the
solve costs about 1 microsecond per history and iteration).

Parameters (all optional):
  iterations (1000): CFR+ iterations.
  seed (0): seed of the action sampling.

Unknown parameters, values of the wrong type and out-of-range values raise
ValueError naming the bot, the parameter and the supported ones.
"""

from __future__ import annotations

import threading
from typing import Any, Mapping

import numpy as np
import pyspiel

from open_spiel_sog.bots import common
from open_spiel_sog.utils import lru

# Trees larger than this (in histories, terminal ones included) are not
# offered to cfr_policy: its solve time grows with histories * iterations.
MAX_CFR_HISTORIES = 100_000

CFR_POLICY_DEFAULTS: dict[str, Any] = {
    "iterations": 1000,
    "seed": 0,
}

_lock = threading.RLock()  # guards the caches below (not the CFR solves)
_cfr_lock = threading.Lock()  # serialises CFR+ solves

# (game string, iterations) -> {infostate string: [(action, prob), ...]},
# the most recently used few (each is a whole policy).
MAX_CACHED_CFR_POLICIES = 8
_cfr_policies = lru.LRUCache(MAX_CACHED_CFR_POLICIES)
_history_counts: dict[str, int | None] = {}  # None: more than the limit


def _clearly_larger_than(game: pyspiel.Game, limit: int) -> bool:
  """True if random walks show the tree is far larger than `limit`.

  Knuth's estimator: a random walk from the root estimates the number of
  histories as 1 + b1 + b1*b2 + ... (b_i: branching factors on the walk).
  If every one of a few seeded walks estimates more than 1000 * `limit`, the
  game is surely too large, and the exact count (slow for games like chess,
  whose states are costly to expand) is skipped.
  """
  rng = np.random.default_rng(0)
  threshold = 1000 * limit
  for _ in range(8):
    state = game.new_initial_state()
    estimate, width = 1, 1
    while not state.is_terminal() and estimate <= threshold:
      actions = state.legal_actions()
      width *= len(actions)
      estimate += width
      state.apply_action(actions[int(rng.integers(len(actions)))])
    if estimate <= threshold:
      return False
  return True


def count_histories(game: pyspiel.Game,
                    limit: int = MAX_CFR_HISTORIES) -> int | None:
  """Number of histories in sequential `game`'s tree, None if over `limit`.

  Terminal histories count. Counted once per game string (and limit) in a
  process.
  """
  if game.get_type().dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
    raise ValueError(f"count_histories: {game} is not a sequential game")
  key = f"{game}|{limit}"
  with _lock:
    if key in _history_counts:
      return _history_counts[key]
  count = None
  if not _clearly_larger_than(game, limit):
    count = 0
    stack = [game.new_initial_state()]
    while stack:
      state = stack.pop()
      count += 1
      if count > limit:
        count = None
        break
      if not state.is_terminal():
        stack.extend(state.child(a) for a in state.legal_actions())
  with _lock:
    _history_counts[key] = count
  return count


def _cfr_structural_reason(game: pyspiel.Game) -> str | None:
  """Why CFR+ cannot solve `game` whatever its size, or None if it can."""
  game_type = game.get_type()
  if game_type.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
    return f"{game} does not have sequential moves"
  if not game_type.provides_information_state_string:
    return f"{game} provides no information-state strings"
  if game_type.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC:
    return f"{game} has sampled (not explicit) chance"
  return None


def _cfr_unsupported_reason(game: pyspiel.Game) -> str | None:
  """Why cfr_policy cannot play `game`, or None if it can."""
  reason = _cfr_structural_reason(game)
  if reason is None and count_histories(game) is None:
    reason = (f"{game} has more than {MAX_CFR_HISTORIES} histories (too "
              "large to solve with CFR+ when the bot is loaded)")
  return reason


def cfr_plus_average_policy(
    game: pyspiel.Game, iterations: int) -> dict[str, list[tuple[int, float]]]:
  """CFR+'s average policy after `iterations` iterations on `game`.

  Solved with OpenSpiel's C++ CFRPlusSolver the first time a (game string,
  iterations) pair is asked for in this process, then cached (the
  MAX_CACHED_CFR_POLICIES most recently used pairs).

  Args:
    game: a game cfr_policy supports (see the module docstring).
    iterations: number of CFR+ iterations, >= 1.

  Returns:
    {information-state string: [(action, probability), ...]} for every
    infostate of every player. Treat it as read-only: it is shared.
  """
  if iterations < 1:
    raise ValueError(f"cfr_policy: iterations must be >= 1, got {iterations}")
  reason = _cfr_structural_reason(game)
  if reason:
    raise ValueError(f"cfr_policy cannot solve {game}: {reason}")
  key = (str(game), int(iterations))
  with _lock:
    cached = _cfr_policies.get(key)
  if cached is not None:
    return cached
  with _cfr_lock:
    with _lock:
      cached = _cfr_policies.get(key)  # solved while we waited?
    if cached is not None:
      return cached
    solver = pyspiel.CFRPlusSolver(game)
    for _ in range(iterations):
      solver.evaluate_and_update_policy()
    table = {
        info_state: [(int(a), float(p)) for a, p in action_probs]
        for info_state, action_probs in
        solver.tabular_average_policy().policy_table().items()
    }
    with _lock:
      _cfr_policies.put(key, table)
    return table


def clear_cfr_cache() -> None:
  """Forgets the cached CFR+ policies and game sizes."""
  with _lock:
    _cfr_policies.clear()
    _history_counts.clear()


class CFRPolicyBot(common.StatelessBot):
  """Samples its actions from a CFR+ average policy (see module doc)."""

  def __init__(self, game: pyspiel.Game, player: int,
               params: Mapping[str, Any] | None = None):
    common.StatelessBot.__init__(self, player)
    values = common.parse_seeded_params("cfr_policy", params,
                                        CFR_POLICY_DEFAULTS)
    common.check_at_least("cfr_policy", values, "iterations", 1)
    reason = _cfr_unsupported_reason(game)
    if reason:
      raise ValueError(f"cfr_policy cannot play {game}: {reason}")
    common.check_player("cfr_policy", game, player)
    self.iterations = values["iterations"]
    self.seed = values["seed"]
    self._rng = np.random.default_rng(self.seed)
    self._table = cfr_plus_average_policy(game, self.iterations)

  def get_policy(self, state):
    self.check_turn("cfr_policy", state)
    info_state = state.information_state_string(self._player)
    policy = self._table.get(info_state)
    if policy is None:
      raise ValueError(f"cfr_policy: infostate {info_state!r} is not in the "
                       "solved policy")
    return list(policy)

  def step_with_policy(self, state):
    policy = self.get_policy(state)
    probs = np.asarray([p for _, p in policy], dtype=np.float64)
    probs = np.maximum(probs, 0.0)
    index = int(self._rng.choice(len(policy), p=probs / probs.sum()))
    return policy, policy[index][0]


def factory(game: pyspiel.Game, player: int,
            params: Mapping[str, Any]) -> pyspiel.Bot:
  """A new CFRPolicyBot (the registry's factory)."""
  return CFRPolicyBot(game, player, params)


def can_play(game: pyspiel.Game, player: int) -> bool:
  """Whether cfr_policy can play `player` in `game` (the registry's)."""
  return (0 <= player < game.num_players() and
          _cfr_unsupported_reason(game) is None)
