"""Which games the anchored subgame is for (DESIGN.md section 15): those
past the enumeration bound, found by walking their exact public states
(the sog bot's `subgame="auto"`)."""

from __future__ import annotations

import time

import pyspiel

from open_spiel_sog.public_state import ObserverConfig
from open_spiel_sog.public_state import PublicStateObserver

# Answers of `needs_anchored` in this process, by its arguments.
_NEEDED: dict[tuple, bool] = {}


def needs_anchored(game: pyspiel.Game, max_histories: int,
                   max_public_states: int = 2000,
                   seconds: float = 2.0) -> bool:
  """Whether `game` is past the enumeration bound: an imperfect-information
  game with a public state of more than `max_histories` histories (found
  by walking its exact public states breadth first, at most
  `max_public_states` of them for at most `seconds`; a game whose walk
  finds none in that budget, or that completes, stays on public states)."""
  if (not max_histories or game.get_type().information ==
      pyspiel.GameType.Information.PERFECT_INFORMATION or
      game.get_type().short_name == "efg_game"):
    return False
  args = (str(game), max_histories, max_public_states, seconds)
  if args not in _NEEDED:
    _NEEDED[args] = _past_bound(game, max_histories, max_public_states,
                                seconds)
  return _NEEDED[args]


def _past_bound(game: pyspiel.Game, max_histories: int,
                max_public_states: int, seconds: float) -> bool:
  """`needs_anchored`'s walk, uncached."""
  observer = PublicStateObserver(game, ObserverConfig(max_histories=0))
  start = time.monotonic()
  try:
    for count, ps in enumerate(observer.walk()):
      if len(ps.histories) > max_histories:
        return True
      if count >= max_public_states or time.monotonic() - start > seconds:
        return False
  except ValueError:  # too large to build exactly
    return True
  finally:
    observer.restart()
  return False
