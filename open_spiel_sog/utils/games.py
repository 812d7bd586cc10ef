"""Loading a game from a user's string, for every layer."""

from __future__ import annotations

import pyspiel


def load_game(text: str, context: str) -> pyspiel.Game:
  """`pyspiel.load_game(text)`; on a bad name or parameter, a one-line
  ValueError that starts with `context` (OpenSpiel's own message lists every
  registered game, which is cut)."""
  try:
    return pyspiel.load_game(text)
  except (pyspiel.SpielError, RuntimeError) as e:
    reason = str(e).split(" Available games are")[0].strip()
    raise ValueError(f"{context}: cannot load game {text!r} ({reason}); "
                     "pyspiel.registered_names() lists the games") from None
