"""Python games registered with OpenSpiel (`pyspiel.register_game`).

Importing `open_spiel_sog` (or this package) registers them; afterwards
`pyspiel.load_game("scotland_yard(map=glasses,max_rounds=3)")` works.

  scotland_yard: Scotland Yard (Mr. X against a team of detectives) on a map
    given as a parameter; shipped maps in `maps/` (`scotland_yard.shipped_maps()`).
    A C++ game of the shim where it loads (the Python twin is always
    `python_scotland_yard`; `scotland_yard/native.py`).
  jps_comm, simple_bidding, mini_bridge: the two-player collaborative
    (common-payoff) games of joint policy search (Tian, Gong and Jiang 2020):
    `pyspiel.load_game("jps_comm(length=3)")`, "simple_bidding(n=4)",
    "mini_bridge(n=3)" (`jps_games.py`).

Small games shipped as EFG files (`efg.load_game("rps_plus")`): see `efg.py`.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pyspiel

from open_spiel_sog.games import efg
from open_spiel_sog.games import jps_games
from open_spiel_sog.games import scotland_yard
from open_spiel_sog.games.jps_games import JPSCommGame
from open_spiel_sog.games.jps_games import MiniBridgeGame
from open_spiel_sog.games.jps_games import SimpleBiddingGame
from open_spiel_sog.games.scotland_yard import ScotlandYardGame



def compact_encoding(game: pyspiel.Game
                     ) -> tuple[list[int], Callable[[pyspiel.State, int],
                                                    np.ndarray]] | None:
  """(shape, tensor(state, player)) of a game's own compact infostate
  encoding: a Python game's `compact_infostate_shape()` and
  `compact_infostate_tensor`, or the C++ scotland_yard's; None where the
  game declares none."""
  found = scotland_yard.native.compact_encoding(game)
  if found is not None:
    return found
  shape = getattr(game, "compact_infostate_shape", None)
  if callable(shape):
    return list(shape()), game.compact_infostate_tensor
  return None


__all__ = [
    "compact_encoding",
    "efg",
    "jps_games",
    "JPSCommGame",
    "MiniBridgeGame",
    "scotland_yard",
    "ScotlandYardGame",
    "SimpleBiddingGame",
]
