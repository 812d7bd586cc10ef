"""Exact beliefs (`Posterior`): the posterior over the histories of the
responder's infostate given the fixed opponent's policy, from the histories
of its public state (`PublicStateObserver`) weighted by their chance and
opponent reaches.
"""

from __future__ import annotations

import numpy as np
import pyspiel

from open_spiel_sog.algorithms.ismcts_br.opponents import Opponent
from open_spiel_sog.algorithms.ismcts_br.opponents import state_player_name
from open_spiel_sog.public_state import PublicStateObserver


class Posterior:
  """Exact beliefs over the histories of the responder's infostates.

  Pr(h | s) is proportional to chance_reach(h) * opponent_reach(h) over the
  histories h of the responder's infostate s (perfect recall: the
  responder's own reach is common to them all).
  """

  def __init__(self, game: pyspiel.Game, opponent: Opponent, responder: int,
               observer: PublicStateObserver | None = None):
    if opponent.player != 1 - responder:
      raise ValueError(f"posterior for responder {responder} needs the "
                       f"opponent in seat {1 - responder}, got seat "
                       f"{opponent.player}")
    self.game = game
    self.opponent = opponent
    self.responder = responder
    self.observer = observer or PublicStateObserver(game)
    self._reach: dict[str, float] = {}
    # infostate -> (histories, normalised probs, cumulative probs)
    self._beliefs: dict[str, tuple[list[pyspiel.State], np.ndarray,
                                   np.ndarray]] = {}
    # Responder infostates the opponent never reaches (see `beliefs`).
    self.unreached: set[str] = set()

  def opponent_reach(self, history: pyspiel.State) -> float:
    """Product of the opponent's action probabilities along `history`."""
    key = history.history_str()
    reach = self._reach.get(key)
    if reach is None:
      reach = 1.0
      state = self.game.new_initial_state()
      for a in history.history():
        if not state.is_chance_node() and (state.current_player() ==
                                           self.opponent.player):
          reach *= self.opponent.probability(state, a)
        state.apply_action(a)
      self._reach[key] = reach
    return reach

  def _entry(self, state: pyspiel.State):
    if state.is_terminal() or state.current_player() != self.responder:
      raise ValueError(f"beliefs of responder {self.responder} asked where "
                       f"{state_player_name(state)} acts")
    key = state.information_state_string(self.responder)
    entry = self._beliefs.get(key)
    if entry is None:
      try:
        ps, index = self.observer.public_state_of(state)
      except ValueError:  # (past max_histories_per_public_state)
        histories, chance = self._infostate_histories(state)
      else:
        infostates = ps.history_infostate[self.responder]
        members = np.nonzero(infostates == infostates[index])[0]
        histories = [ps.histories[i] for i in members]
        chance = ps.chance_reach[members]
      weights = chance * np.asarray([self.opponent_reach(h)
                                     for h in histories])
      if not weights.sum() > 0:
        # The opponent never plays into this infostate (its reach is zero on
        # every history): no posterior exists, and nothing played here can
        # change the value. Fall back to the chance reach so a search still
        # has histories to sample.
        self.unreached.add(key)
        weights = chance
      probs = weights / weights.sum()
      cumulative = np.cumsum(probs)
      cumulative[-1] = 1.0
      entry = self._beliefs[key] = (histories, probs, cumulative)
    return entry

  def _infostate_histories(self, state: pyspiel.State
                           ) -> tuple[list[pyspiel.State], np.ndarray]:
    """The histories of the responder's infostate at `state` and their
    chance reaches, enumerated without public states (phantom_ttt's public
    states pass the observer's bound long before its infostates do): every
    history whose responder infostate matches the true one's at each
    depth (perfect recall: a match at the end implies one on the way)."""
    me = self.responder
    path = self.game.new_initial_state()
    keys = []
    for a in state.history():
      path.apply_action(a)
      keys.append(path.information_state_string(me))
    level = [(self.game.new_initial_state(), 1.0)]
    for key in keys:
      nxt = []
      for s, reach in level:
        outcomes = (s.chance_outcomes() if s.is_chance_node() else
                    [(a, 1.0) for a in s.legal_actions()])
        for a, p in outcomes:
          child = s.child(a)
          if not child.is_terminal() and (
              child.information_state_string(me) == key):
            nxt.append((child, reach * p))
      level = nxt
    return [s for s, _ in level], np.asarray([r for _, r in level])

  def beliefs(self, state: pyspiel.State) -> dict[str, float]:
    """{history_str: Pr(history | responder's infostate at `state`)}."""
    histories, probs, _ = self._entry(state)
    return {h.history_str(): float(p) for h, p in zip(histories, probs)}

  def sample(self, state: pyspiel.State,
             rng: np.random.Generator) -> pyspiel.State:
    """A history of the responder's infostate at `state`, drawn from the
    posterior (a fresh clone)."""
    histories, _, cumulative = self._entry(state)
    i = min(int(np.searchsorted(cumulative, rng.random(), side="right")),
            len(histories) - 1)
    return histories[i].clone()
