"""Depth-limited solving as a bot, registered in OpenSpiel as "dls".

    import open_spiel_sog  # registers "dls"
    bot = pyspiel.load_bot("dls", game, player, {"k": 4})
    bot = pyspiel.load_bot("dls(strategies=bias,k=4)", game, player)

Nested depth-limited solving (Brown, Sandholm and Amos 2018, section 5;
`algorithms/dls`): the first subgame is the game's root down to
the frontier, solved against the opponent's k continuation strategies; each
later decision re-solves from the public state where play left the previous
subgame's trunk (the current one while it stays inside), with the safe
re-solving gadget for the opponent. The blueprint (CFR+ over the public
tree), the continuation set and the root subgame's solution are computed
once per game, seat and setting in the process and cached.

Parameters (all optional; see `DLSBotConfig`): blueprint_iterations,
frontier, depth, strategies, k, bias_factor, iterations, seed.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

import numpy as np
import pyspiel

from open_spiel_sog.algorithms import dls as dl
from open_spiel_sog.bots import common
from open_spiel_sog.public_state import PublicStateObserver
from open_spiel_sog.utils import lru


@dataclasses.dataclass(frozen=True)
class DLSBotConfig:
  """Parameters of the dls bot.

  Attributes:
    blueprint_iterations: CFR+ iterations (over the whole public tree) of
      the blueprint.
    frontier: "round" (the chance public states that open a new round; a
      game with none is solved to its end) or "depth".
    depth: the frontier's depth below each subgame's root (public
      transitions, chance steps included) when frontier is "depth".
    strategies: the opponent's continuation set, "self_generative" or
      "bias".
    k: continuation strategies (the blueprint counts as one).
    bias_factor: the bias set's scale of the favoured action.
    iterations: CFR+ iterations of each depth-limited solve.
    seed: seed of the bot's action sampling.
  """
  blueprint_iterations: int = 1000
  frontier: str = "round"
  depth: int = 4
  strategies: str = "self_generative"
  k: int = 4
  bias_factor: float = 10.0
  iterations: int = 1000
  seed: int = 0

  @classmethod
  def from_params(cls, params: Mapping[str, Any] | None) -> "DLSBotConfig":
    values = common.parse_params("dls", params,
                                 common.dataclass_defaults(cls))
    config = cls(**values)
    config.validate()
    return config

  def solver_config(self) -> dl.DLSConfig:
    return dl.DLSConfig(frontier=self.frontier, depth=self.depth,
                        strategies=self.strategies, k=self.k,
                        bias_factor=self.bias_factor,
                        iterations=self.iterations)

  def validate(self) -> None:
    if self.blueprint_iterations < 1:
      raise ValueError("dls: blueprint_iterations must be >= 1, got "
                       f"{self.blueprint_iterations}")
    try:
      self.solver_config().validate()
    except ValueError as e:
      raise ValueError(f"dls: {e}") from None


class _GameCaches:
  """What the dls bots of one game share in a process: one observer (every
  resolver's public states are its), the blueprints by iteration count and
  the resolvers by (player, config), each built on first use."""

  def __init__(self, game: pyspiel.Game):
    self.observer = PublicStateObserver(game)
    self.blueprints: dict[int, Any] = {}
    self.resolvers: dict[tuple, dl.DepthLimitedResolver] = {}


# Per process, the games used most recently, least recent first: a game's
# caches go together (a resolver built on an observer that was dropped would
# not know the public states of the one that replaced it), and a bot keeps
# what it took from them. The bound keeps a process that plays many games (a
# tournament, the test suite) from holding every game's public tree.
MAX_CACHED_GAMES = 4
_GAMES = lru.LRUCache(MAX_CACHED_GAMES)


def _game_key(game: pyspiel.Game):
  name = str(game)
  # (EFG games all print as "efg_game()": the object tells them apart; the
  # observer holds the game, so its id is not reused while the entry lives.)
  return (name, id(game)) if name.startswith("efg_game") else name


def _caches_for(game: pyspiel.Game) -> _GameCaches:
  key = _game_key(game)
  caches = _GAMES.get(key)
  if caches is None:
    caches = _GameCaches(game)
    _GAMES.put(key, caches)
  return caches


def observer_for(game: pyspiel.Game) -> PublicStateObserver:
  return _caches_for(game).observer


def blueprint_for(game: pyspiel.Game, iterations: int):
  blueprints = _caches_for(game).blueprints
  if iterations not in blueprints:
    blueprints[iterations] = dl.compute_blueprint(game, iterations)
  return blueprints[iterations]


def resolver_for(game: pyspiel.Game, player: int,
                 config: DLSBotConfig) -> dl.DepthLimitedResolver:
  """The cached engine of `player` (its root subgame solved on first use)."""
  caches = _caches_for(game)
  key = (player, dataclasses.replace(config, seed=0))
  if key not in caches.resolvers:
    solver = dl.DepthLimitedSolver(
        game, player, blueprint_for(game, config.blueprint_iterations),
        config.solver_config(), root=caches.observer.root())
    solver.build_strategies()
    caches.resolvers[key] = dl.DepthLimitedResolver(solver)
  return caches.resolvers[key]


class DLSBot(pyspiel.Bot):
  """Nested depth-limited solving (see the module docstring)."""

  def __init__(self, game: pyspiel.Game, player: int,
               config: DLSBotConfig | Mapping[str, Any] | None = None):
    pyspiel.Bot.__init__(self)
    if not isinstance(config, DLSBotConfig):
      config = DLSBotConfig.from_params(config)
    if player not in (0, 1):
      raise ValueError(f"dls: player must be 0 or 1, got {player}")
    try:
      dl.check_game(game)
    except ValueError as e:
      raise ValueError(f"dls cannot play {game}: {e}") from None
    self.config = config
    self._game = game
    self._player = player
    self._rng = np.random.default_rng(config.seed)
    self._observer = observer_for(game)
    self._resolver: dl.DepthLimitedResolver | None = None
    self._current: dl.DepthLimitedSolver | None = None

  @property
  def player(self) -> int:
    return self._player

  @property
  def resolver(self) -> dl.DepthLimitedResolver:
    if self._resolver is None:
      self._resolver = resolver_for(self._game, self._player, self.config)
    return self._resolver

  def restart(self):
    self._current = None

  def restart_at(self, state):
    del state
    self.restart()

  def provides_policy(self):
    return True

  def inform_action(self, state, player_id, action):
    del state, player_id, action  # the next step reads the state's path

  def inform_actions(self, state, actions):
    del state, actions

  def step_with_policy(self, state):
    policy = self._policy(state)
    actions = list(policy)
    probs = np.asarray([policy[a] for a in actions])
    action = int(actions[self._rng.choice(len(actions),
                                          p=probs / probs.sum())])
    return [(a, float(p)) for a, p in zip(actions, probs)], action

  def step(self, state):
    return self.step_with_policy(state)[1]

  def get_policy(self, state):
    return list(self._policy(state).items())

  def _policy(self, state) -> dict[int, float]:
    if state.is_terminal() or state.current_player() != self._player:
      raise ValueError(
          f"dls: asked to act for player {self._player} at a state where it "
          f"does not act (current player: {state.current_player()})")
    ps, h = self._observer.public_state_of(state)
    self._current = self.resolver.resolve(ps, self._current)
    j = int(ps.history_infostate[self._player][h])
    probs = self._current.solution.policy_at(ps, self._player)[j]
    legal = ps.legal_actions(j)
    return {int(a): float(probs[k]) for k, a in enumerate(legal)}


def _factory(game: pyspiel.Game, player: int, params: dict) -> pyspiel.Bot:
  return DLSBot(game, player, DLSBotConfig.from_params(params))


def _can_play(game: pyspiel.Game, player: int) -> bool:
  try:
    dl.check_game(game)
  except ValueError:
    return False
  return player in (0, 1)


def register() -> None:
  """Registers "dls" in OpenSpiel's bot registry (idempotent)."""
  from open_spiel_sog import registry  # pylint: disable=g-import-not-at-top
  if "dls" in registry.registered_by_us():
    return
  registry.register_bot("dls", _factory, _can_play)
