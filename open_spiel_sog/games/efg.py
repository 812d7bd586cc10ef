"""Small games shipped as Gambit EFG files (OpenSpiel's `load_efg_game`).

  rps_plus: rock-paper-scissors+ as a two-step game (player 2 does not see
    player 1's move); a win or loss with scissors counts 2. Its equilibrium
    is (0.4, 0.4, 0.2) for both. Depth-limited solving's motivating example
    (Brown, Sandholm and Amos 2018, section 2).

    game = efg.load_game("rps_plus")   # any other name: pyspiel.load_game
"""

from __future__ import annotations

import functools
import os

import pyspiel

_DIR = os.path.dirname(os.path.abspath(__file__))


def shipped() -> list[str]:
  """Names of the shipped EFG games."""
  return sorted(f[:-4] for f in os.listdir(_DIR) if f.endswith(".efg"))


@functools.lru_cache(maxsize=None)
def _load_efg(name: str) -> pyspiel.Game:
  with open(os.path.join(_DIR, name + ".efg")) as f:
    return pyspiel.load_efg_game(f.read())


def load_game(name: str) -> pyspiel.Game:
  """A shipped EFG game by name, else `pyspiel.load_game(name)`."""
  if name in shipped():
    return _load_efg(name)
  return pyspiel.load_game(name)
