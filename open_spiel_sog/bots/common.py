"""What the package's bots share: parameter parsing (from `utils.params`)
and a stateless base."""

from __future__ import annotations

import pyspiel

from open_spiel_sog.utils.params import dataclass_defaults  # pylint: disable=unused-import  (re-exported)
from open_spiel_sog.utils.params import parse_params  # pylint: disable=unused-import


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
