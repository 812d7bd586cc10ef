"""The ISMCTS-BR responder as a bot, registered in OpenSpiel as "ismcts_br".

    import open_spiel_sog  # registers "ismcts_br"
    bot = pyspiel.load_bot("ismcts_br", game, player,
                           {"opponent": "always_call",
                            "checkpoint": "/tmp/br_leduc.npz"})

The bot is a best responder to one fixed opponent policy (the SPEC of
`examples/approx_exploitability.py --opponent`: uniform_random, a poker chump,
cfr_plus:N, a saved policy file, or a registered bot such as
`sog(simulations=100)`). At each of its decisions it runs IS-MCTS with the
exact posterior over the opponent's private information under that policy
(`open_spiel_sog.algorithms.ismcts_br`), guided by its trained network, and
plays the most visited action. It exploits that opponent, and only that one:
against anyone else it is just a fixed policy.

Parameters:
  opponent (required): the opponent's SPEC.
  checkpoint: a responder network trained against that opponent
    (`approx_exploitability.py --save=PATH` or `ISMCTSBR.save`). Without one,
    the bot trains a network when it is created (`games` training games;
    this prints a one-line notice and can take minutes).
  games: training games when there is no checkpoint (default 1000).
  simulations: IS-MCTS simulations per decision (default: the checkpoint's
    setting, else 200).
  seed: seed of the searches and of training (default 0).
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any, Mapping

import pyspiel

from open_spiel_sog.bots import common

PARAMETERS = ("opponent", "checkpoint", "games", "simulations", "seed")


@dataclasses.dataclass(frozen=True)
class ISMCTSBRBotConfig:
  """Parameters of the "ismcts_br" bot (see the module docstring)."""
  opponent: str = ""
  checkpoint: str = ""
  games: int = 1000
  simulations: int = 0  # 0: the checkpoint's (or the default) setting
  seed: int = 0

  @classmethod
  def from_params(cls, params: Mapping[str, Any] | None
                  ) -> "ISMCTSBRBotConfig":
    config = cls(**common.parse_params(
        "ismcts_br", params, common.dataclass_defaults(cls)))
    if not config.opponent:
      raise ValueError(
          "ismcts_br: the 'opponent' parameter is required: the SPEC of the "
          "policy to best-respond to (uniform_random, always_fold, "
          "always_call, always_raise, cfr_plus:N, a policy file, or a bot "
          "such as sog(simulations=100))")
    if config.games < 0 or config.simulations < 0:
      raise ValueError("ismcts_br: games and simulations must be >= 0")
    return config


class ISMCTSBRBot(common.StatelessBot):
  """Plays the ISMCTS-BR responder's greedy decisions (see module doc)."""

  def __init__(self, game: pyspiel.Game, player: int,
               config: ISMCTSBRBotConfig | Mapping[str, Any] | None = None):
    common.StatelessBot.__init__(self, player)
    from open_spiel_sog.algorithms import ismcts_br  # pylint: disable=g-import-not-at-top
    if not isinstance(config, ISMCTSBRBotConfig):
      config = ISMCTSBRBotConfig.from_params(config)
    if player not in (0, 1):
      raise ValueError(f"ismcts_br: player must be 0 or 1, got {player}")
    self.config = config
    opponents = {1 - player: ismcts_br.make_opponent(game, config.opponent,
                                                     1 - player)}
    if config.checkpoint:
      self.responder = ismcts_br.ISMCTSBR.from_checkpoint(
          config.checkpoint, game, opponents)
    else:
      settings = dataclasses.replace(ismcts_br.ISMCTSBRConfig(),
                                     games=config.games, seed=config.seed)
      print(f"ismcts_br: no checkpoint; training a responder to "
            f"{config.opponent} for {config.games} games", file=sys.stderr)
      self.responder = ismcts_br.ISMCTSBR(game, opponents, settings)
      self.responder.train(progress=False)
    self._simulations = config.simulations or None

  def _action(self, state) -> int:
    self.check_turn("ismcts_br", state)
    return self.responder.decide(state, self._simulations)

  def step_with_policy(self, state):
    action = self._action(state)
    return [(action, 1.0)], action

  def get_policy(self, state):
    return [(self._action(state), 1.0)]


def _factory(game: pyspiel.Game, player: int, params: dict) -> pyspiel.Bot:
  return ISMCTSBRBot(game, player, ISMCTSBRBotConfig.from_params(params))


def _can_play(game: pyspiel.Game, player: int) -> bool:
  game_type = game.get_type()
  return (player in (0, 1) and game.num_players() == 2 and
          game_type.utility == pyspiel.GameType.Utility.ZERO_SUM and
          game_type.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL and
          game_type.provides_information_state_string and
          game_type.provides_information_state_tensor)


def register() -> None:
  """Registers "ismcts_br" in OpenSpiel's bot registry (idempotent)."""
  from open_spiel_sog import registry  # pylint: disable=g-import-not-at-top
  if "ismcts_br" in registry.registered_by_us():
    return
  registry.register_bot("ismcts_br", _factory, _can_play)
