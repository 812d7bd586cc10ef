"""What the package's stateless bots share."""

from __future__ import annotations

import pyspiel


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

  def step(self, state):
    return self.step_with_policy(state)[1]
