"""One-time notices on stderr: what the package tells a user about a choice
it made for them (no network ships for the game, a garbage collection too
slow for the time limit, rollouts cut to fit it), once per process and
subject, not once per bot.

A script that builds a bot per game prints each notice once. Every notice
prints where the `open_spiel_sog` logger is enabled for DEBUG: absl's
`-v 1` (`--verbosity=1`) on any example, or
`logging.getLogger("open_spiel_sog").setLevel(logging.DEBUG)`.
"""

from __future__ import annotations

import logging
import sys
import threading

_LOGGER = logging.getLogger("open_spiel_sog")
_SEEN: set[tuple[str, str]] = set()
_LOCK = threading.Lock()


def notice(kind: str, subject: str, message: str) -> bool:
  """Prints `message` to stderr unless a notice of `kind` about `subject`
  (a game's string, say) already printed in this process; returns whether
  it printed."""
  key = (kind, subject)
  with _LOCK:
    if key in _SEEN and not _LOGGER.isEnabledFor(logging.DEBUG):
      return False
    _SEEN.add(key)
  print(message, file=sys.stderr, flush=True)
  return True


def forget() -> None:
  """Forgets the notices printed (each prints once more)."""
  with _LOCK:
    _SEEN.clear()
