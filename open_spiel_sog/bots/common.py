"""What the package's bots share: parameter parsing (from `utils.params`),
the checks of the baselines' parameters and a stateless base."""

from __future__ import annotations

from typing import Any, Mapping

import pyspiel

from open_spiel_sog.utils.params import dataclass_defaults  # pylint: disable=unused-import  (re-exported)
from open_spiel_sog.utils.params import parse_params  # pylint: disable=unused-import

# Seeds the baselines take (OpenSpiel's and numpy's seeds are 32-bit).
MAX_SEED = 2**31 - 1


def parse_seeded_params(bot: str, params: Mapping[str, Any] | None,
                        defaults: Mapping[str, Any]) -> dict[str, Any]:
  """Returns `defaults` updated with `params`, type-checked, with a `seed` in
  [0, MAX_SEED].

  Raises:
    ValueError: an unknown parameter or a value of the wrong type, naming the
      bot, the parameter and the supported parameters.
  """
  values = parse_params(bot, params, defaults)
  seed = values.get("seed", 0)
  if not 0 <= seed <= MAX_SEED:
    raise ValueError(f"{bot}: seed must be in [0, {MAX_SEED}], got {seed}")
  return values


def check_at_least(bot: str, values: Mapping[str, Any], name: str,
                   minimum: float) -> None:
  """ValueError naming `bot` unless `values[name]` >= `minimum`."""
  if not values[name] >= minimum:  # also rejects NaN
    raise ValueError(f"{bot}: {name} must be >= {minimum}, got "
                     f"{values[name]}")


def check_player(bot: str, game: pyspiel.Game, player: int) -> None:
  """ValueError naming `bot` unless `player` is one of `game`'s players."""
  if not 0 <= player < game.num_players():
    raise ValueError(f"{bot}: player must be in [0, {game.num_players()}) "
                     f"for {game}, got {player}")


class StatelessBot(pyspiel.Bot):
  """A bot whose decision depends only on the state it is asked about: it
  has nothing to restart and nothing to be told of the other seats' moves.
  Subclasses implement `step_with_policy` (and `get_policy`)."""

  def __init__(self, player: int):
    pyspiel.Bot.__init__(self)
    self._player = player

  @property
  def player(self) -> int:
    return self._player

  def restart(self):
    pass

  def restart_at(self, state):
    del state

  def inform_action(self, state, player_id, action):
    del state, player_id, action

  def provides_policy(self):
    return True

  def check_turn(self, bot: str, state: pyspiel.State) -> None:
    """ValueError naming `bot` unless this bot's player acts at `state`."""
    if state.is_terminal() or state.current_player() != self._player:
      raise ValueError(
          f"{bot}: asked to act for player {self._player} at a state where it "
          f"does not act (current player: {state.current_player()})")

  def step(self, state):
    return self.step_with_policy(state)[1]
