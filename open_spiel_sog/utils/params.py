"""Parsing of bot and algorithm parameters, for every layer: a dict or
OpenSpiel's parsed string form, checked against a dataclass's defaults with
errors that name the parameter and the supported ones."""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping


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
  elif kind in (int, float):
    if isinstance(value, (int, float)) and not isinstance(value, bool):
      if kind is float:
        return float(value)
      if isinstance(value, int) or value.is_integer():
        return int(value)
    elif isinstance(value, str):
      try:
        return kind(value)
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
  return {f.name: f.default for f in dataclasses.fields(cls)}
