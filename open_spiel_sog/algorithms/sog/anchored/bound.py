"""Which games the anchored subgame is for (DESIGN.md section 15): those
past the enumeration bound, found by walking their exact public states
(the sog bot's `subgame="auto"`).

The walk is bounded by counts, never by the clock, so that every machine
and every process takes the same path for the same game and parameters.
The default budget (2,000 public states holding 6,000 histories in all:
about 2 seconds for the slowest game here, python_scotland_yard, a Python game)
keeps the path that the walk's former 2-second bound chose on the
development machine for each of the 68 coverage games
(benchmarks/coverage_games.py).
"""

from __future__ import annotations

import pyspiel

from open_spiel_sog.public_state import enumeration

# The walk's budget: public states, and histories over all of them.
MAX_PUBLIC_STATES = 2000
MAX_HISTORIES_WALKED = 6000

# Answers of `needs_anchored` in this process, by its arguments.
_NEEDED: dict[tuple, bool] = {}


def needs_anchored(game: pyspiel.Game, max_histories: int,
                   max_public_states: int = MAX_PUBLIC_STATES,
                   max_histories_walked: int = MAX_HISTORIES_WALKED) -> bool:
  """Whether `game` is past the enumeration bound: an imperfect-information
  game with a public state of more than `max_histories` histories, found
  by walking its exact public states breadth first, at most
  `max_public_states` of them holding at most `max_histories_walked`
  histories in all. A game whose walk finds none within that budget, or
  that completes, stays on public states."""
  if (not max_histories or game.get_type().information ==
      pyspiel.GameType.Information.PERFECT_INFORMATION or
      game.get_type().short_name == "efg_game"):
    return False
  args = (str(game), max_histories, max_public_states, max_histories_walked)
  if args not in _NEEDED:
    _NEEDED[args] = _past_bound(game, max_histories, max_public_states,
                                max_histories_walked)
  return _NEEDED[args]


def _past_bound(game: pyspiel.Game, max_histories: int,
                max_public_states: int, max_histories_walked: int) -> bool:
  """`needs_anchored`'s walk, uncached."""
  return enumeration.enumeration_limit(
      game, max_public_states=max_public_states,
      max_histories_walked=max_histories_walked,
      max_histories=max_histories) == enumeration.LARGE
