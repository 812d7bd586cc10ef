"""`check_public_states(game)`: a conformance check for public states.

A buggy public observer must be caught, not trusted. The check walks every
public state of the game (or, when the game is too large to enumerate, the
public states along sampled paths) and raises `ValueError` naming the first
violation of:

1. every infostate of the acting player (information_state_string at a
   decision node) lies in exactly one public state. (A player who does not act
   keeps the same string across events it does not observe, e.g. Kuhn's
   player 1 before and after player 0's card is dealt, so only the acting
   player's infostates are unique to a public state);
2. each non-terminal public state is one connected component of the
   common-knowledge graph (histories joined when some player cannot tell them
   apart). Terminal public states are exempt: at a showdown the players'
   information_state_strings reveal both hands while OpenSpiel's public
   observers (Leduc's, for one) reveal only the payoff; nothing is decided
   after a terminal, so its grouping cannot change play or values;
3. the acting player is the same for all histories of a public state, and
   legal actions agree within each infostate (checked on construction).
"""

from __future__ import annotations

import random

import pyspiel

from open_spiel_sog.public_state.config import ObserverConfig
from open_spiel_sog.public_state.observer import PublicStateObserver
from open_spiel_sog.public_state.observer import PublicTreeTooLarge
from open_spiel_sog.public_state.partition import common_knowledge_components
from open_spiel_sog.public_state.state import PublicState


def _check_connected(ps: PublicState) -> None:
  components = set(common_knowledge_components(ps.history_infostate.tolist()))
  if len(components) > 1:
    raise ValueError(
        f"public state {ps.describe()} of {ps.observer.game} is not a "
        f"connected component of the common-knowledge graph: its histories "
        f"form {len(components)} components, so its public observation "
        "reveals less than the players jointly know (or groups unrelated "
        "histories)")


class _Checker:

  def __init__(self):
    self.owner: dict[tuple[int, str], PublicState] = {}
    self.checked: set[int] = set()

  def check(self, ps: PublicState) -> None:
    if ps.id in self.checked:
      return
    self.checked.add(ps.id)
    if not ps.is_terminal():
      _check_connected(ps)
    p = ps.current_player()
    if p >= 0:
      for infostate in ps.infostates(p):
        other = self.owner.setdefault((p, infostate), ps)
        if other is not ps:
          raise ValueError(
              f"infostate {infostate!r} of player {p} lies in two public "
              f"states of {ps.observer.game}: {other.describe()} and "
              f"{ps.describe()}")


def check_public_states(game: pyspiel.Game | str, *,
                        observer: PublicStateObserver | None = None,
                        max_public_states: int = 20_000,
                        num_sampled_paths: int = 200,
                        seed: int = 0) -> dict[str, int | str]:
  """Validates the public states of `game`; raises ValueError on a violation.

  Args:
    game: the game or its string.
    observer: an observer to check (default: a new one for `game`).
    max_public_states: enumerate the whole public tree when it has at most
      this many public states; otherwise check sampled paths.
    num_sampled_paths: paths to sample when the tree is too large.
    seed: seed of the path sampler.

  Returns:
    A summary: {"mode": "exhaustive"|"sampled", "public_states": checked,
    "source": observer source}.
  """
  if isinstance(game, str):
    game = pyspiel.load_game(game)
  if observer is None:
    observer = PublicStateObserver(
        game, ObserverConfig(max_public_states=max_public_states))
  checker = _Checker()
  mode = "exhaustive"
  try:
    for ps in observer.walk():
      checker.check(ps)
  except PublicTreeTooLarge:
    mode = "sampled"
    checker = _Checker()  # a partial walk would miss owners; start over
    rng = random.Random(seed)
    for _ in range(num_sampled_paths):
      state = game.new_initial_state()
      while True:
        ps, _ = observer.public_state_of(state)
        checker.check(ps)
        if state.is_terminal():
          break
        if state.is_chance_node():
          outcomes, probs = zip(*state.chance_outcomes())
          state.apply_action(rng.choices(outcomes, probs)[0])
        else:
          state.apply_action(rng.choice(state.legal_actions()))
  return {"mode": mode, "public_states": len(checker.checked),
          "source": observer.source}
