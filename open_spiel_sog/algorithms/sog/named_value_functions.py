"""The value functions that need no network, by name (a bot's
`value_function` parameter)."""

from __future__ import annotations

import pyspiel

from open_spiel_sog.algorithms.sog.exact_values import ExactValueFunction
from open_spiel_sog.algorithms.sog.rollout_values import RolloutValueFunction
from open_spiel_sog.algorithms.sog.value_functions import ValueFunction


VALUE_FUNCTIONS = ("exact", "rollout")


def make_value_function(name: str, game: pyspiel.Game, **kwargs) -> ValueFunction:
  """A value function by name ('exact' or 'rollout')."""
  if name == "exact":
    return ExactValueFunction(game, **kwargs)
  if name == "rollout":
    return RolloutValueFunction(game, **kwargs)
  raise ValueError(f"unknown value function {name!r}; supported: "
                   f"{', '.join(map(repr, VALUE_FUNCTIONS))}")
