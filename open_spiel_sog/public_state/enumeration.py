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
  WITHIN where the walk ends first; PUBLIC_STATES once it has built
  `max_public_states` of them (walked or waiting their turn), HISTORIES once they hold
  `max_histories_walked` histories in all; LARGE where a public state holds
  more than `max_histories` histories (0: the observer's own bound) or is
  too large to build exactly (raised as soon as it is built)."""
  bound = max_histories or ObserverConfig.max_histories_per_public_state
  observer = PublicStateObserver(game, ObserverConfig(
      max_histories_per_public_state=bound))
  # Breadth first, counting the public states built, not only those
  # walked: a level's children wait in memory for their turn, and a game
  # whose nodes have thousands of children (oshi_zumo's bids, yacht's
  # dice) would hold millions of them before the walk reached its budget.
  queue = [observer.root()]
  built = 1
  walked = 0
  try:
    while queue:
      level = []
      for ps in queue:
        walked += len(ps.histories)
        if walked >= max_histories_walked:
          return HISTORIES
        if built >= max_public_states:
          return PUBLIC_STATES
        children = ps.children()
        built += len(children)
        level.extend(children)
      queue = level
    if built >= max_public_states:
      return PUBLIC_STATES
  except ValueError:  # past the bound per public state, or too large
    return LARGE
  finally:
    observer.restart()
  return WITHIN
