"""What the package's bots share: parameter parsing and a stateless base."""

from __future__ import annotations

from typing import Any, Mapping

import pyspiel


def coerce(bot: str, name: str, value: Any, kind: type) -> Any:
  """A bot parameter's value as `kind` (from a dict or OpenSpiel's string
  form); ValueError naming the bot and the parameter otherwise."""
  if kind is bool:
    if isinstance(value, bool):
      return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
      return value.lower() == "true"
    if isinstance(value, int) and value in (0, 1):
      return bool(value)
  elif kind is int:
    if isinstance(value, int) and not isinstance(value, bool):
      return value
    if isinstance(value, float) and value.is_integer():
      return int(value)
    if isinstance(value, str):
      try:
        return int(value)
      except ValueError:
        pass
  elif kind is float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
      return float(value)
    if isinstance(value, str):
      try:
        return float(value)
      except ValueError:
        pass
  elif kind is str:
    if isinstance(value, str):
      return value
  raise ValueError(f"{bot}: parameter {name!r} must be of type "
                   f"{kind.__name__}, got {value!r}")


def parse_params(bot: str, params: Mapping[str, Any] | None,
                 defaults: Mapping[str, Any]) -> dict[str, Any]:
  """`defaults` updated with `params` (OpenSpiel's "name" key ignored), each
  converted to its default's type. ValueError for an unknown parameter or a
  value of the wrong type, naming the bot, the parameter and the supported
  parameters."""
  params = {k: v for k, v in dict(params or {}).items() if k != "name"}
  unknown = sorted(set(params) - set(defaults))
  supported = ", ".join(sorted(defaults))
  if unknown:
    raise ValueError(f"{bot}: unknown parameter(s) "
                     f"{', '.join(map(repr, unknown))}; supported: {supported}")
  values = dict(defaults)
  for name, value in params.items():
    try:
      values[name] = coerce(bot, name, value, type(defaults[name]))
    except ValueError as e:
      raise ValueError(f"{e}; supported parameters: {supported}") from None
  return values


def dataclass_defaults(cls) -> dict[str, Any]:
  """{field: default} of a dataclass whose fields all have defaults."""
  import dataclasses  # pylint: disable=g-import-not-at-top
  return {f.name: f.default for f in dataclasses.fields(cls)}


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
