"""Which path the sog bot searches a game on (DESIGN.md sections 15 and
16): public states with GT-CFR (the default), the anchored subgame past the
enumeration bound, or the native engine's tree of histories for
perfect-information games of C++ states. Each function refuses, in one
line naming why, an `engine` or `subgame` that cannot run where it was
asked for."""

from __future__ import annotations

from typing import Any

import pyspiel

from open_spiel_sog.algorithms.sog import anchored
from open_spiel_sog.algorithms.sog import engine as engine_lib
from open_spiel_sog.algorithms.sog import rollout_values
from open_spiel_sog.bots import sog_values
from open_spiel_sog.bots.sog_config import SoGConfig


def anchored_reason(config: SoGConfig, game: pyspiel.Game) -> str | None:
  """Why the bot searches `game` through the anchored subgame (None: it
  searches public states): asked for, a network trained on it, or public
  states past `max_histories`."""
  trained_on = (sog_values.network_for_anchored(config, game)
                if config.subgame == "auto" else None)
  if config.subgame == "anchored":
    return "subgame='anchored'"
  if trained_on:
    return f"its network {trained_on!r} was trained on it"
  if config.subgame == "auto" and anchored.needs_anchored(
      game, config.max_histories):
    return f"its public states pass max_histories={config.max_histories}"
  return None


def native_anchored(config: SoGConfig, game: pyspiel.Game) -> bool:
  """Whether the anchored subgame's tree lives on the native engine (see
  SoGConfig.engine); refuses engine=native, naming why, where it cannot."""
  if config.engine == "python":
    return False
  reason = engine_lib.native_reason(game)
  if reason is not None and config.engine == "native":
    raise ValueError(f"sog: engine=native cannot search {game}: {reason}")
  return reason is None


def native_search(config: SoGConfig, game: pyspiel.Game, policy_value: Any,
                  value_fn: Any, is_anchored: bool
                  ) -> engine_lib.PerfectInformationSearch | None:
  """The native engine's search where `engine` picks it (see SoGConfig),
  else None; refuses engine=native, naming why, where it cannot run.
  `policy_value` and `value_fn` are the bot's (`sog_values`);
  `is_anchored`: the anchored subgame picked its engine already."""
  if policy_value is not None:
    reason = engine_lib.native_reason(game)
    if reason is not None or config.engine == "python":
      raise ValueError(
          f"sog: the policy-value network of {game} searches on the native "
          f"engine, which cannot run here: "
          f"{reason or 'engine=python was asked for'}")
  elif config.engine == "python" or is_anchored:
    return None
  elif not sog_values.perfect_information(game):
    reason = ("the native engine searches perfect-information games; "
              "this one is searched over public states")
  else:
    reason = engine_lib.native_reason(game)
    if reason is None and not isinstance(
        value_fn, rollout_values.RolloutValueFunction):
      reason = ("the native engine values leaves by rollouts or a "
                "policy-value network (value_function=rollout, a "
                "policy-value checkpoint, or engine=python for this value "
                "function)")
  if reason is not None:
    if config.engine == "native":
      raise ValueError(f"sog: engine=native cannot search {game}: {reason}")
    return None
  c = config.expansions_per_update
  return engine_lib.PerfectInformationSearch(
      game, simulations=config.search_simulations,
      expansions_per_update=engine_lib.PACED if c == -1 else c,
      rollouts=config.rollouts, c_puct=config.c_puct, seed=config.seed,
      averaging_power=config.averaging_power,
      puct_values=config.puct_values, network=policy_value,
      leaf_batch=(config.leaf_batch if config.leaf_batch > 0 else
                  8 if config.time_limit else 1))
