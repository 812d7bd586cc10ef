"""Scotland Yard in C++ (`_native/scotland_yard.h`) beside its Python twin.

`register()` (run when the package is imported) registers the Python game
as ``python_scotland_yard`` and, under ``scotland_yard``, the C++ game where
the shim loads (`_native.load_shim`: built, the supported open_spiel, and
OPEN_SPIEL_SOG_DISABLE_SHIM not 1), else the Python game again (the
fallback). Both take the same parameters and agree move by move: legal
actions, strings, tensors, returns, resampling
(tests/scotland_yard_native_test.py).

The C++ game asks Python for each game's set-up: `game.resolve` reads the
map's JSON and validates the parameters, so a bad map or parameter is the
same one-line ValueError in both games; `cpp_setup` hands the resolved
rules to C++ as plain lists.

Python code that reads a state's fields (beliefs, pictures) or the game's
compact encoding goes through `rules`, `state_view` and `compact_encoding`,
which take either game.
"""

from __future__ import annotations

import ctypes
import functools
import types
from typing import Any, Callable, Mapping

import numpy as np
import pyspiel

from open_spiel_sog._native import load_shim
from open_spiel_sog.games.scotland_yard import game as game_lib
from open_spiel_sog.games.scotland_yard.rules import Rules

SHORT_NAME = "scotland_yard"
PYTHON_NAME = game_lib.PYTHON_NAME


def cpp_setup(rules: Rules) -> dict[str, Any]:
  """The resolved set-up as `_native/scotland_yard.h`'s `Setup` reads it."""
  return {
      "map_name": rules.map.name,
      "labels": list(rules.labels),
      "adjacency": [list(a) for a in rules.adjacency],
      "mrx_start": list(rules.mrx_start),
      "detective_starts": list(rules.detective_starts),
      "detective_start_cards": list(rules.detective_start_cards),
      "num_detectives": rules.num_detectives,
      "detective_tickets": list(rules.detective_tickets),
      "mrx_tickets": list(rules.mrx_tickets),
      "doubles": rules.doubles,
      "max_rounds": rules.max_rounds,
      "reveal_rounds": sorted(rules.reveal_rounds),
      "tickets_to_mrx": bool(rules.tickets_to_mrx),
  }


def _resolve_for_cpp(params: Mapping[str, Any]
                     ) -> tuple[dict[str, Any], dict[str, Any]]:
  """The C++ creator's call: (the game's parameters, its set-up)."""
  params, rules = game_lib.resolve(dict(params))
  return params, cpp_setup(rules)


def _fallback_game(params: Mapping[str, Any] | None = None
                   ) -> game_lib.ScotlandYardGame:
  return game_lib.ScotlandYardGame(params, SHORT_NAME)


def register() -> str | None:
  """Registers both names (once a process). Returns None where
  ``scotland_yard`` is the C++ game, else why it is the Python one."""
  names = set(pyspiel.registered_names())
  if PYTHON_NAME not in names:
    pyspiel.register_game(game_lib.game_type(PYTHON_NAME),
                          game_lib.ScotlandYardGame)
  if SHORT_NAME in names:
    return None if is_cpp(pyspiel.load_game(SHORT_NAME)) else (
        "scotland_yard was registered as the Python game")
  shim, reason = load_shim()
  if shim is not None and not hasattr(shim, "register_scotland_yard"):
    shim, reason = None, ("the C++ shim was built without Scotland Yard; "
                          "rebuild it")
  if shim is None:
    # OpenSpiel's C++ registry keeps the factory until its static map is
    # destroyed, after Python has finalized; if the registry's reference were
    # the last one, dropping it then would crash the exit ("PyThreadState_Get:
    # ... GIL is released"), so one reference is leaked on purpose (as the
    # shim does with bot factories).
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(_fallback_game))
    pyspiel.register_game(game_lib.game_type(SHORT_NAME), _fallback_game)
    return reason
  shim.register_scotland_yard(SHORT_NAME, dict(game_lib.DEFAULT_PARAMS),
                              _resolve_for_cpp)
  return None


def is_cpp(game_or_state: pyspiel.Game | pyspiel.State) -> bool:
  """Whether this is the C++ game (or one of its states)."""
  return (type(game_or_state).__module__.split(".")[0] == "pyspiel" and
          _game(game_or_state).get_type().short_name == SHORT_NAME)


def _game(game_or_state) -> pyspiel.Game:
  if isinstance(game_or_state, pyspiel.State):
    return game_or_state.get_game()
  return game_or_state


@functools.lru_cache(maxsize=64)
def _rules_of(game_string: str) -> Rules:
  params = pyspiel.game_parameters_from_string(game_string)
  params.pop("name", None)
  return game_lib.resolve(params)[1]


def rules(game: pyspiel.Game) -> Rules:
  """The game's resolved set-up (`Rules`), for either twin."""
  if isinstance(getattr(game, "rules", None), Rules):
    return game.rules
  return _rules_of(str(game))


def state_view(state: pyspiel.State) -> Any:
  """The state's fields as the Python state holds them (`mrx`,
  `detectives`, `detective_tickets`, `mrx_tickets`, `doubles`, `turn`,
  `placed` (detectives whose drawn start is dealt),
  `pending`, `in_double`, `outcome`, `log`, `path`, `rules`): the state
  itself for the Python game, a read-only copy for the C++ one."""
  if not is_cpp(state):
    return state
  shim, _ = load_shim()
  return types.SimpleNamespace(**shim.scotland_yard_view(state),
                               rules=rules(state.get_game()))


def compact_encoding(game: pyspiel.Game
                     ) -> tuple[list[int], Callable[[pyspiel.State, int],
                                                    np.ndarray]] | None:
  """(shape, tensor(state, player)) of the game's compact infostate
  encoding (Table S1, game.py's `compact_infostate_tensor`) for either
  twin; None for other games."""
  if isinstance(game, game_lib.ScotlandYardGame):
    return game.compact_infostate_shape(), game.compact_infostate_tensor
  if not is_cpp(game):
    return None
  shim, _ = load_shim()
  r = rules(game)
  n, d = r.num_stations, r.num_detectives
  shape = [1 + n + d * n + d * 3 + 5 + (1 + d) + 1 + 1]
  return shape, shim.scotland_yard_compact_tensor
