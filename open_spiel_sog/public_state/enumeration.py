"""How far a game's exact public states enumerate (`enumeration_limit`): a
breadth-first walk bounded by counts, never by the clock, so that every
machine and every process gets the same answer. The sog bot reads it to
choose its subgame (`needs_anchored`), the trainer to choose the network's
input (`TrainConfig.with_input_resolved`).
"""

from __future__ import annotations

import pyspiel

from open_spiel_sog.public_state.config import ObserverConfig
from open_spiel_sog.public_state.observer import PublicStateObserver

# What stops the walk ("" where it ends within its budget).
WITHIN = ""
PUBLIC_STATES = "public_states"  # the budget of public states is spent
HISTORIES = "histories"  # the budget of histories is spent
LARGE = "large_public_state"  # a public state past max_histories


def enumeration_limit(game: pyspiel.Game, *, max_public_states: int,
                      max_histories_walked: int,
                      max_histories: int = 0) -> str:
  """What stops a breadth-first walk of `game`'s exact public states:
  WITHIN where the walk ends first; PUBLIC_STATES once it has walked
  `max_public_states` of them, HISTORIES once they hold
  `max_histories_walked` histories in all; LARGE where a public state holds
  more than `max_histories` histories (0: the observer's own bound) or is
  too large to build exactly (raised as soon as it is built)."""
  bound = max_histories or ObserverConfig.max_histories_per_public_state
  observer = PublicStateObserver(game, ObserverConfig(
      max_histories_per_public_state=bound))
  walked = 0
  try:
    for count, ps in enumerate(observer.walk(), start=1):
      walked += len(ps.histories)
      if count >= max_public_states:
        return PUBLIC_STATES
      if walked >= max_histories_walked:
        return HISTORIES
  except ValueError:  # past the bound per public state, or too large
    return LARGE
  finally:
    observer.restart()
  return WITHIN
