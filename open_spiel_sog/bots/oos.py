"""Online Outcome Sampling as a bot, registered in OpenSpiel as "oos".

    from open_spiel_sog.bots import oos
    oos.register()
    bot = pyspiel.load_bot("oos", game, player, {"simulations": 1000})
    bot = pyspiel.load_bot("oos(simulations=1000,targeting=public_state)",
                           game, player)
    bot = oos.OOSBot(game, player, {"simulations": 1000})

The bot keeps one `OOSSolver` (`open_spiel_sog/algorithms/oos/solver.py`) for
the whole game: at each of its decisions it runs `simulations` iterations from
the game's root, targeted (with probability delta per sample) to its current
information set or public state, and then plays an action sampled from the
solver's average strategy at its information set (uniform if the search never
reached it). The search tree and its regrets carry over from one decision to
the next, as OOS intends; `restart()` / `restart_at(state)` start a fresh
solver (the random stream continues), and so does a state whose history does
not extend the one of the bot's previous decision (a new game reached without
a restart). The bot needs no information about the opponent's moves:
`inform_action` does nothing.

Parameters (all optional; see `OOSConfig` for their meaning):
  simulations (1000), delta (0.9), epsilon (0.6), gamma (0.01),
  targeting ("infostate" | "public_state" | "none"), target_compensation
  (true), playout ("uniform" | "current"), seed (0).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

import numpy as np
import pyspiel

from open_spiel_sog.algorithms import oos

OOSConfig = oos.OOSConfig


class OOSBot(pyspiel.Bot):
  """Plays by Online Outcome Sampling (see the module docstring)."""

  def __init__(self, game: pyspiel.Game, player: int,
               config: OOSConfig | Mapping[str, Any] | None = None):
    pyspiel.Bot.__init__(self)
    if not isinstance(config, OOSConfig):
      config = OOSConfig.from_params(config)
    else:
      config.validate()
    oos.validate_game(game)
    if player not in (0, 1):
      raise ValueError(f"oos: player must be 0 or 1, got {player}")
    self.config = config
    self._game = game
    self._player = player
    # Different, reproducible streams for the two seats and for the search
    # and the choice of actions.
    seeds = np.random.SeedSequence([config.seed, player]).generate_state(2)
    self._rng = np.random.default_rng(int(seeds[0]))
    self.solver = oos.OOSSolver(
        game, dataclasses.replace(config, seed=int(seeds[1])))
    self._last_history: list[int] | None = None

  @property
  def player(self) -> int:
    return self._player

  # --- pyspiel.Bot -----------------------------------------------------------

  def restart(self):
    self.solver.reset()
    self._last_history = None

  def restart_at(self, state):
    del state
    self.restart()

  def provides_policy(self):
    return True

  def inform_action(self, state, player_id, action):
    del state, player_id, action  # OOS searches from the root every time.

  def step_with_policy(self, state):
    policy = self._policy(state)
    probs = np.asarray([p for _, p in policy])
    action = policy[int(self._rng.choice(len(policy), p=probs / probs.sum()))]
    return policy, action[0]

  def step(self, state):
    return self.step_with_policy(state)[1]

  def get_policy(self, state):
    return self._policy(state)

  # --- Internals -------------------------------------------------------------

  def _policy(self, state) -> list[tuple[int, float]]:
    """Searches at `state` and returns the average strategy there."""
    if state.is_terminal():
      raise ValueError("oos: step called on a terminal state")
    if state.current_player() != self._player:
      raise ValueError(f"oos: step called for player {self._player} at a "
                       f"state where player {state.current_player()} acts")
    history = state.history()
    last = self._last_history
    if last is not None and history[:len(last)] != last:
      self.solver.reset()  # a new game without restart()
    self._last_history = history
    self.solver.run(self.config.simulations, target_state=state,
                    player=self._player)
    legal = state.legal_actions()
    policy = self.solver.infostate_policy(state.information_state_string(),
                                          legal)
    return [(a, float(policy.get(a, 0.0))) for a in legal]


def _factory(game: pyspiel.Game, player: int, params: dict) -> pyspiel.Bot:
  return OOSBot(game, player, OOSConfig.from_params(params))


def _can_play(game: pyspiel.Game, player: int) -> bool:
  try:
    oos.validate_game(game)
  except ValueError:
    return False
  return player in (0, 1)


def register() -> None:
  """Registers "oos" in OpenSpiel's bot registry (idempotent)."""
  from open_spiel_sog import registry  # pylint: disable=g-import-not-at-top
  if "oos" in registry.registered_by_us():
    return
  registry.register_bot("oos", _factory, _can_play)
