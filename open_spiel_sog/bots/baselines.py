"""OpenSpiel's own agents, registered in its bot registry under plain names.

OpenSpiel 2.0.2's C++ bot registry only holds "fixed_action_preference",
"uniform_random" and "uniform_restricted_actions"; its search and CFR agents
are classes to construct by hand. `register()` adds three of them, so that
round-robins (or anything else that loads bots by name) can name them (the
searches here, the CFR+ policy in `cfr_policy`):

    from open_spiel_sog.bots import baselines
    baselines.register()
    bot = pyspiel.load_bot("mcts", game, player, {"simulations": 100})
    bot = pyspiel.load_bot("ismcts(simulations=500,seed=3)", game, player)
    bot = pyspiel.load_bot("cfr_policy", game, player, {"iterations": 200})

"uniform_random" is OpenSpiel's own (parameter: seed) and is not registered
again.

Bots and their parameters (all optional):

  mcts: OpenSpiel's Python `open_spiel.python.algorithms.mcts.MCTSBot` with a
    `RandomRolloutEvaluator`; plays the most visited action (its policy is
    that action with probability 1). Perfect-information games with
    sequential moves and terminal rewards only (any number of players,
    chance allowed); loading it for another game raises ValueError. With
    time_limit > 0 it is OpenSpiel's C++ `pyspiel.MCTSBot` instead (with
    `pyspiel.RandomRolloutEvaluator`; on connect_four about 20 times as many
    simulations per second), which searches for time_limit seconds per move
    by its own clock (`max_wall_clock_time`).
      simulations (1000): MCTS simulations per move; ignored with
        time_limit > 0 (OpenSpiel's C++ search then runs by time alone, and
        a count given beside time_limit does not cap it).
      uct_c (2.0): UCT exploration constant.
      rollouts (1): random rollouts per leaf evaluation.
      solve (True): back up proven (solved) values.
      backend ("auto"): "cpp" runs OpenSpiel's C++ MCTSBot for
        `simulations` without a time limit too (the ladder of
        benchmarks/learning_curve.py), "python" refuses time_limit, "auto"
        is C++ with time_limit and Python without.
      time_limit (0.0): seconds per move (0: off). One C++ search per move
        that starts simulations until time_limit seconds have passed (it
        stops earlier once the root is solved), then plays the most visited
        action; reading the chosen child out of the C++ tree adds about 2%.
        The bot's `simulations_run` and `search_seconds` give the latest
        search's simulations and seconds. The tree is pruned (OpenSpiel's
        garbage collection of rarely visited nodes) past about
        MCTS_CPP_MAX_MEMORY_MB megabytes. If the time runs out before the
        root is expanded (under 2 simulations), the move is a uniformly
        random legal action. Not reproducible from the seed (the number of
        simulations depends on the machine). Not for Python games
        (python_tic_tac_toe, ...: OpenSpiel's C++ MCTSBot.step crashes on
        them, and its search would call Python at every state): ValueError.
      seed (0): seed of the search and rollouts.

  ismcts: OpenSpiel's information-set MCTS with random rollouts; the bot
    samples its action from the final policy. By default (backend "auto"
    with child_selection "ucb") it is the C++ `pyspiel.ISMCTSBot` with
    `pyspiel.RandomRolloutEvaluator`, returned as is. OpenSpiel's C++ ISMCTS
    has no PUCT, so child_selection "puct" uses OpenSpiel's Python port,
    `open_spiel.python.algorithms.ismcts.ISMCTSBot` (about 30 times slower;
    with random rollouts its prior is uniform). Caveat: the C++ bot is not
    reproducible from its seed (in open_spiel 2.0.2 its choices depend on
    the iteration order of absl hash maps, which varies between bot
    instances); backend "python" gives seed-reproducible games. Python
    games (python_scotland_yard, ...) always use the Python port: the C++ bot cannot
    call a Python state's resample_from_infostate.
    Imperfect-information sequential games. Where the game's states do not
    implement `resample_from_infostate` (liars_dice, dark_hex, phantom_ttt,
    ...), the Python port samples its worlds from the player's infostate in
    its public state (`PublicStateResampler`: in proportion to chance reach;
    public states past 300 histories are sampled). For perfect-information
    games use mcts.
      simulations (-1: auto): simulations per move; -1 is 1000 without
        time_limit and no cap with it (the search runs by time alone). A
        count given with time_limit caps the search: it stops at whichever
        comes first.
      uct_c (2.0): exploration constant.
      rollouts (1): random rollouts per leaf evaluation.
      max_world_samples (-1): states sampled from the infostate per search
        (-1: a fresh sample every simulation).
      final_policy ("max_visit_count"): "max_visit_count",
        "normalized_visit_count" or "max_value"; the bot samples its action
        from this policy.
      use_observation_string (False): key nodes by observation strings
        instead of information-state strings.
      allow_inconsistent_action_sets (False): allow an infostate's states to
        have different legal actions.
      child_selection ("ucb"): "ucb" (alias "uct") or "puct".
      time_limit (0.0): seconds per move (0: off, finite); the search stops
        at the first simulation that would start past it (or at
        `simulations`, where given). Runs OpenSpiel's Python port (backend
        auto or python): the C++ bot has no time limit. The bot's
        `simulations_run` gives the latest search's simulations.
      backend ("auto"): "cpp" (C++; UCB only), "python" (OpenSpiel's Python
        port; reproducible) or "auto" (cpp for ucb, python for puct).
      seed (0): seed of the search and rollouts.

  cfr_policy: a CFR+ average policy (`open_spiel_sog.bots.cfr_policy`, whose
    docstring gives its parameters).

Unknown parameters, values of the wrong type and out-of-range values raise
ValueError naming the bot, the parameter and the supported ones. If a future
OpenSpiel registers one of these names itself, `register()` leaves
OpenSpiel's bot in place (the registry cannot replace it) and warns.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import threading
import time
from typing import Any, Iterator, Mapping
import warnings

import numpy as np
from open_spiel.python.algorithms import ismcts as os_ismcts
from open_spiel.python.algorithms import mcts as os_mcts
import pyspiel

from open_spiel_sog.bots import cfr_policy
from open_spiel_sog.bots import common

MCTS_DEFAULTS: dict[str, Any] = {
    "simulations": 1000,
    "uct_c": 2.0,
    "rollouts": 1,
    "solve": True,
    "time_limit": 0.0,
    "backend": "auto",
    "seed": 0,
}

_MCTS_BACKENDS = ("auto", "cpp", "python")

# The cap of a time-limited ismcts search given no simulations: out of
# reach, so the clock stops it.
_UNCAPPED_SIMULATIONS = 10**9

# The C++ mcts (time_limit > 0) prunes its tree past this many megabytes.
MCTS_CPP_MAX_MEMORY_MB = 1000

ISMCTS_DEFAULTS: dict[str, Any] = {
    "simulations": -1,  # auto: ISMCTS_SIMULATIONS, or time alone
    "uct_c": 2.0,
    "rollouts": 1,
    "max_world_samples": -1,
    "final_policy": "max_visit_count",
    "use_observation_string": False,
    "allow_inconsistent_action_sets": False,
    "child_selection": "ucb",
    "backend": "auto",
    "time_limit": 0.0,
    "seed": 0,
}

# ismcts's simulations=-1 (auto): the count without a time limit.
ISMCTS_SIMULATIONS = 1000

_FINAL_POLICIES = ("max_visit_count", "normalized_visit_count", "max_value")
_CHILD_SELECTIONS = ("ucb", "uct", "puct")
_ISMCTS_BACKENDS = ("auto", "cpp", "python")

BOT_NAMES = ("mcts", "ismcts", "cfr_policy")


# ---------------------------------------------------------------------------
# mcts.


def _mcts_unsupported_reason(game: pyspiel.Game) -> str | None:
  """Why OpenSpiel's MCTSBot cannot play `game`, or None if it can."""
  game_type = game.get_type()
  if game_type.information != (
      pyspiel.GameType.Information.PERFECT_INFORMATION):
    return (f"{game} is not a perfect-information game (use ismcts or "
            "cfr_policy)")
  if game_type.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
    return f"{game} does not have sequential moves"
  if game_type.reward_model != pyspiel.GameType.RewardModel.TERMINAL:
    return f"{game} does not have terminal rewards only"
  return None


def _mcts_factory(game: pyspiel.Game, player: int,
                  params: Mapping[str, Any]) -> pyspiel.Bot:
  """Returns a new OpenSpiel MCTSBot (see the module docstring)."""
  values = common.parse_seeded_params("mcts", params, MCTS_DEFAULTS)
  for name in ("simulations", "rollouts"):
    common.check_at_least("mcts", values, name, 1)
  common.check_at_least("mcts", values, "uct_c", 0.0)
  common.check_at_least("mcts", values, "time_limit", 0.0)
  if math.isinf(values["time_limit"]):
    raise ValueError("mcts: time_limit must be finite (seconds per move, 0: "
                     "off), got inf")
  reason = _mcts_unsupported_reason(game)
  if reason:
    raise ValueError(f"mcts plays perfect-information sequential games with "
                     f"terminal rewards only: {reason}")
  if values["time_limit"] > 0 and is_python_game(game):
    raise ValueError(
        f"mcts: time_limit runs OpenSpiel's C++ MCTSBot, which cannot play "
        f"{game.get_type().short_name} (a Python game); time_limit is "
        "supported for OpenSpiel's C++ games only (use simulations without "
        "time_limit for Python games)")
  if values["backend"] not in _MCTS_BACKENDS:
    raise ValueError(f"mcts: unknown backend {values['backend']!r}; "
                     f"supported: {', '.join(map(repr, _MCTS_BACKENDS))}")
  if values["backend"] == "python" and values["time_limit"] > 0:
    raise ValueError("mcts: time_limit runs OpenSpiel's C++ MCTSBot; "
                     "backend=python takes simulations only")
  if values["backend"] == "cpp" and is_python_game(game):
    raise ValueError(f"mcts: backend=cpp cannot play "
                     f"{game.get_type().short_name} (a Python game)")
  common.check_player("mcts", game, player)
  if values["time_limit"] > 0 or values["backend"] == "cpp":
    return _TimedMCTSBot(game, values)
  rng = np.random.RandomState(values["seed"])
  evaluator = os_mcts.RandomRolloutEvaluator(
      n_rollouts=values["rollouts"], random_state=rng)
  return os_mcts.MCTSBot(game, uct_c=values["uct_c"],
                         max_simulations=values["simulations"],
                         evaluator=evaluator, solve=values["solve"],
                         random_state=rng)


class _TimedMCTSBot(pyspiel.Bot):
  """OpenSpiel's C++ MCTSBot searching `time_limit` seconds per move.

  OpenSpiel's C++ `MCTSBot::MCTSearch` checks its own clock before each
  simulation when `max_wall_clock_time` > 0 (and ignores max_simulations),
  so each move is one C++ search, with one tree. The search runs through
  `mcts_search` (which returns the tree, holding the GIL) rather than
  `step` (which releases it): that gives the number of simulations, and
  keeps the move legal when the search ended before expanding the root,
  where the C++ `step` would take the best of no children.
  """

  def __init__(self, game: pyspiel.Game, values: Mapping[str, Any]):
    pyspiel.Bot.__init__(self)
    self.time_limit = values["time_limit"]
    self.uct_c = values["uct_c"]
    self.solve = values["solve"]
    self.simulations_run = 0  # by the latest search
    self.search_seconds = 0.0  # of the latest search, with reading its tree
    self._evaluator = pyspiel.RandomRolloutEvaluator(values["rollouts"],
                                                     values["seed"])
    # With a wall-clock limit the C++ search does not read max_simulations.
    simulations = (common.MAX_SEED if self.time_limit > 0
                   else values["simulations"])
    self._search = pyspiel.MCTSBot(
        game, self._evaluator, values["uct_c"], simulations,
        MCTS_CPP_MAX_MEMORY_MB, values["solve"], values["seed"], False,
        max_wall_clock_time=values["time_limit"])
    self._rng = np.random.RandomState(values["seed"])

  def restart(self):
    pass

  def restart_at(self, state):
    del state

  def inform_action(self, state, player_id, action):
    del state, player_id, action

  def step_with_policy(self, state):
    """The most visited action, with probability 1 (as OpenSpiel's Python
    MCTSBot: INVALID_ACTION at chance nodes)."""
    if state.is_chance_node():
      return [(pyspiel.INVALID_ACTION, 1.0)], pyspiel.INVALID_ACTION
    start = time.perf_counter()
    root = self._search.mcts_search(state)
    self.simulations_run = root.explore_count
    legal_actions = state.legal_actions()
    if root.explore_count >= 2:  # the root's children exist
      action = root.best_child().action  # a copy of that subtree
    else:
      action = legal_actions[self._rng.randint(len(legal_actions))]
    del root
    self.search_seconds = time.perf_counter() - start
    policy = [(a, 1.0 if a == action else 0.0) for a in legal_actions]
    return policy, int(action)

  def step(self, state):
    return self.step_with_policy(state)[1]


def _mcts_can_play(game: pyspiel.Game, player: int) -> bool:
  return (_mcts_unsupported_reason(game) is None and
          0 <= player < game.num_players())


# ---------------------------------------------------------------------------
# ismcts.

_lock = threading.RLock()  # guards the cache below and registration
_resample_support: dict[str, bool] = {}  # game string -> probe result


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
  """Silences file descriptor 2, where OpenSpiel prints its C++ errors."""
  try:
    saved = os.dup(2)
  except OSError:
    yield
    return
  try:
    sys.stderr.flush()
    with open(os.devnull, "w") as devnull:
      os.dup2(devnull.fileno(), 2)
    yield
  finally:
    os.dup2(saved, 2)
    os.close(saved)


def _supports_resampling(game: pyspiel.Game) -> bool:
  """True if the game's states implement resample_from_infostate.

  Probed once per game string at the first decision (chance nodes take their
  first outcome).
  """
  key = str(game)
  with _lock:
    if key in _resample_support:
      return _resample_support[key]
    state = game.new_initial_state()
    while state.is_chance_node():
      state.apply_action(state.legal_actions()[0])
    supported = True
    if not state.is_terminal():
      try:
        with _quiet_stderr():
          state.resample_from_infostate(
              state.current_player(),
              pyspiel.UniformProbabilitySampler(0.0, 1.0))
      except Exception:  # pylint: disable=broad-except
        supported = False  # SpielError for C++ games, varies for Python ones
    _resample_support[key] = supported
    return supported


def is_python_game(game: pyspiel.Game) -> bool:
  """True for games implemented in Python (pyspiel.register_game).

  C++ games are of pyspiel.Game or of a class bound in a submodule of
  pyspiel (pyspiel.connect_four.ConnectFourGame, pyspiel.blackjack...).
  """
  module = type(game).__module__
  return module != "pyspiel" and not module.startswith("pyspiel.")


def _ismcts_unsupported_reason(game: pyspiel.Game) -> str | None:
  """Why ISMCTS cannot play `game`, or None if it can."""
  game_type = game.get_type()
  if game_type.information == (
      pyspiel.GameType.Information.PERFECT_INFORMATION):
    return f"{game} is a perfect-information game (use mcts)"
  if game_type.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
    return f"{game} does not have sequential moves"
  if not (game_type.provides_information_state_string or
          game_type.provides_observation_string):
    return f"{game} provides neither information-state nor observation strings"
  return None


def _ismcts_factory(game: pyspiel.Game, player: int,
                    params: Mapping[str, Any]) -> pyspiel.Bot:
  """Returns a new OpenSpiel ISMCTSBot (see the module docstring)."""
  values = common.parse_seeded_params("ismcts", params, ISMCTS_DEFAULTS)
  if not (values["simulations"] >= 1 or values["simulations"] == -1):
    raise ValueError(
        "ismcts: simulations must be >= 1 (a count; with time_limit, a cap) "
        f"or -1 (auto: {ISMCTS_SIMULATIONS} without time_limit, time alone "
        f"with it), got {values['simulations']}")
  common.check_at_least("ismcts", values, "rollouts", 1)
  common.check_at_least("ismcts", values, "uct_c", 0.0)
  common.check_at_least("ismcts", values, "time_limit", 0.0)
  if math.isinf(values["time_limit"]):
    raise ValueError("ismcts: time_limit must be finite (seconds per move, "
                     "0: off), got inf")
  timed = values["time_limit"] > 0
  if values["simulations"] == -1:
    values = dict(values, simulations=(
        _UNCAPPED_SIMULATIONS if timed else ISMCTS_SIMULATIONS))
  if values["max_world_samples"] == 0 or values["max_world_samples"] < -1:
    raise ValueError("ismcts: max_world_samples must be -1 (unlimited) or "
                     f">= 1, got {values['max_world_samples']}")
  final_policy = values["final_policy"].lower()
  if final_policy not in _FINAL_POLICIES:
    raise ValueError(f"ismcts: unknown final_policy {final_policy!r}; "
                     f"supported: {', '.join(map(repr, _FINAL_POLICIES))}")
  child_selection = values["child_selection"].lower()
  if child_selection not in _CHILD_SELECTIONS:
    raise ValueError(f"ismcts: unknown child_selection {child_selection!r}; "
                     f"supported: {', '.join(map(repr, _CHILD_SELECTIONS))}")
  backend = values["backend"].lower()
  if backend not in _ISMCTS_BACKENDS:
    raise ValueError(f"ismcts: unknown backend {backend!r}; supported: "
                     f"{', '.join(map(repr, _ISMCTS_BACKENDS))}")
  python_game = is_python_game(game)
  if backend == "auto":
    backend = ("python" if child_selection == "puct" or python_game or timed
               else "cpp")
  elif backend == "cpp" and timed:
    raise ValueError("ismcts: OpenSpiel's C++ ISMCTS has no time limit; use "
                     "backend=python (or auto) with time_limit")
  elif backend == "cpp" and child_selection == "puct":
    raise ValueError("ismcts: OpenSpiel's C++ ISMCTS has no PUCT child "
                     "selection; use backend=python (or auto) with "
                     "child_selection=puct")
  elif backend == "cpp" and python_game:
    raise ValueError(
        f"ismcts: {game.get_type().short_name} is a Python game; OpenSpiel's "
        "C++ ISMCTS cannot call its resample_from_infostate. Use "
        "backend=python (or auto)")
  reason = _ismcts_unsupported_reason(game)
  if reason:
    raise ValueError("ismcts plays imperfect-information sequential games "
                     f"only: {reason}")
  resampler = None
  if not _supports_resampling(game):
    if values["backend"].lower() == "cpp":
      raise ValueError(
          f"ismcts: {game}'s states do not implement resample_from_infostate, "
          "which OpenSpiel's C++ ISMCTS needs; use backend=python (or auto), "
          "which samples worlds from public states")
    backend = "python"
    resampler = PublicStateResampler(game, values["seed"])
  game_type = game.get_type()
  if values["use_observation_string"]:
    if not game_type.provides_observation_string:
      raise ValueError(f"ismcts: use_observation_string=True but {game} "
                       "provides no observation strings")
  elif not game_type.provides_information_state_string:
    raise ValueError(f"ismcts: {game} provides no information-state strings; "
                     "pass use_observation_string=True")
  common.check_player("ismcts", game, player)

  if backend == "python":
    bot = _python_ismcts(game, values, final_policy, child_selection)
    if resampler is not None:
      bot.set_resampler(resampler)
    return bot
  cpp_final = {
      "max_visit_count": pyspiel.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
      "normalized_visit_count":
          pyspiel.ISMCTSFinalPolicyType.NORMALIZED_VISIT_COUNT,
      "max_value": pyspiel.ISMCTSFinalPolicyType.MAX_VALUE,
  }[final_policy]
  evaluator = pyspiel.RandomRolloutEvaluator(values["rollouts"],
                                             values["seed"])
  return pyspiel.ISMCTSBot(values["seed"], evaluator, values["uct_c"],
                           values["simulations"], values["max_world_samples"],
                           cpp_final, values["use_observation_string"],
                           values["allow_inconsistent_action_sets"])


class _PythonISMCTSBot(os_ismcts.ISMCTSBot):
  """OpenSpiel's Python ISMCTSBot, with Python-int actions and restarts.

  (Its own step returns numpy integers, it has no restart methods, and it
  resamples worlds with an unseeded sampler; here they come from the bot's
  seeded random state, so games are reproducible.)
  """

  def __init__(self, *args, time_limit: float = 0.0, **kwargs):
    super().__init__(*args, **kwargs)
    self.set_resampler(self._seeded_resample)
    self.time_limit = time_limit
    self.simulations_run = 0  # by the latest search

  def run_search(self, state):
    """OpenSpiel's `ISMCTSBot.run_search`, stopped by `time_limit`."""
    legal_actions = state.legal_actions()
    self.simulations_run = 0 if len(legal_actions) == 1 else (
        self._max_simulations)
    if not self.time_limit:
      return super().run_search(state)
    deadline = time.monotonic() + self.time_limit
    self.reset()
    if len(legal_actions) == 1:
      return [(legal_actions[0], 1.0)]
    self._root_node = self.create_new_node(state)
    n = 0
    # (Until the root has a visit: its first simulation only makes it, and
    # OpenSpiel's final policy needs one.)
    while n < self._max_simulations and (
        self._root_node.total_visits == 0 or time.monotonic() < deadline):
      self.run_simulation(self.sample_root_state(state))
      n += 1
    self.simulations_run = n
    root = self._root_node
    if self._allow_inconsistent_action_sets:
      root = self.filter_illegals(root, legal_actions)
    return self.get_final_policy(state, root)

  def _seeded_resample(self, state, player):
    return state.resample_from_infostate(player, self._random_state.uniform)

  def restart(self):
    self.reset()

  def restart_at(self, state):
    del state
    self.reset()

  def inform_action(self, state, player_id, action):
    del state, player_id, action

  def provides_policy(self):
    return True

  def step(self, state):
    return self.step_with_policy(state)[1]

  def step_with_policy(self, state):
    policy, action = super().step_with_policy(state)
    return [(int(a), float(p)) for a, p in policy], int(action)


class PublicStateResampler:
  """Samples a world from a player's infostate for OpenSpiel's Python
  ISMCTSBot (`set_resampler`) in games whose states do not implement
  resample_from_infostate (phantom_ttt, dark_hex, ...): a history of the
  player's infostate in the state's public state, in proportion to chance
  reach. Public states past `max_histories` are sampled (see
  `ObserverConfig`), always holding the state's own history, and favour the
  resampling player's infostate (`PublicStateObserver.favoured_player`):
  a sample in proportion to chance reach alone holds a few histories of it
  (4, median, in phantom_ttt), the true one carrying 31% of their weight on
  average, so that a third of the bot's worlds would be the true one."""

  def __init__(self, game: pyspiel.Game, seed: int, max_histories: int = 300):
    # Deferred: bots may use the public-state layer, baselines rarely do.
    from open_spiel_sog.public_state import ObserverConfig  # pylint: disable=g-import-not-at-top
    from open_spiel_sog.public_state import PublicStateObserver  # pylint: disable=g-import-not-at-top
    self.observer = PublicStateObserver(
        game, ObserverConfig(max_histories=max_histories, sample_seed=seed))
    self._rng = np.random.default_rng(seed)
    self._last: tuple | None = None

  def __call__(self, state: pyspiel.State, player: int) -> pyspiel.State:
    key = (tuple(state.history()), player)
    if self._last is None or self._last[0] != key:
      self.observer.favoured_player = player
      ps, h = self.observer.public_state_of(state)
      infostates = ps.history_infostate[player]
      members = np.nonzero(infostates == infostates[h])[0]
      weights = ps.chance_reach[members]
      self._last = (key, ps, members, weights / weights.sum())
    _, ps, members, probs = self._last
    return ps.histories[int(members[self._rng.choice(len(members),
                                                      p=probs)])].clone()


def _python_ismcts(game: pyspiel.Game, values: Mapping[str, Any],
                   final_policy: str, child_selection: str) -> pyspiel.Bot:
  """OpenSpiel's Python ISMCTSBot (seed-reproducible)."""
  py_final = {
      "max_visit_count": os_ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
      "normalized_visit_count":
          os_ismcts.ISMCTSFinalPolicyType.NORMALIZED_VISITED_COUNT,
      "max_value": os_ismcts.ISMCTSFinalPolicyType.MAX_VALUE,
  }[final_policy]
  rng = np.random.RandomState(values["seed"])
  evaluator = os_mcts.RandomRolloutEvaluator(n_rollouts=values["rollouts"],
                                             random_state=rng)
  return _PythonISMCTSBot(
      game, evaluator, values["uct_c"], values["simulations"],
      max_world_samples=values["max_world_samples"], random_state=rng,
      time_limit=values["time_limit"],
      final_policy_type=py_final,
      use_observation_string=values["use_observation_string"],
      allow_inconsistent_action_sets=values["allow_inconsistent_action_sets"],
      child_selection_policy=(os_ismcts.ChildSelectionPolicy.PUCT
                              if child_selection == "puct" else
                              os_ismcts.ChildSelectionPolicy.UCT))


def _ismcts_can_play(game: pyspiel.Game, player: int) -> bool:
  game_type = game.get_type()
  return (_ismcts_unsupported_reason(game) is None and
          game_type.provides_information_state_string and
          0 <= player < game.num_players())


# ---------------------------------------------------------------------------
# Registration.

_FACTORIES = {
    "mcts": (_mcts_factory, _mcts_can_play),
    "ismcts": (_ismcts_factory, _ismcts_can_play),
    "cfr_policy": (cfr_policy.factory, cfr_policy.can_play),
}


def register() -> None:
  """Registers mcts, ismcts and cfr_policy with OpenSpiel (idempotent).

  Names this package registered before are skipped; a name OpenSpiel itself
  registers (none in open_spiel 2.0.2) is left to OpenSpiel, with a
  RuntimeWarning.
  """
  from open_spiel_sog import registry  # pylint: disable=g-import-not-at-top
  with _lock:
    ours = set(registry.registered_by_us())
    for name, (factory, can_play) in _FACTORIES.items():
      if name in ours:
        continue
      if pyspiel.is_bot_registered(name):
        warnings.warn(
            f"open_spiel_sog: OpenSpiel already registers a bot called "
            f"{name!r}; keeping OpenSpiel's (its parameters may differ from "
            "open_spiel_sog.bots.baselines')", RuntimeWarning, stacklevel=2)
        continue
      registry.register_bot(name, factory, can_play)
