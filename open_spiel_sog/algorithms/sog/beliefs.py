"""What a searcher believes at its infostate: a probability over the
histories it cannot tell apart, read from a search.

In a public-state search the histories of the searcher's infostate I are
those of the public state whose searcher infostate is I; each is weighed by
its chance reach times the opponent's range at the opponent's infostate
there (the searcher's own reach is the same across I and cancels):

    P(h | I) = chance(h) * r_opp(J(h)) / sum over h' in I of the same.

In an anchored search the histories are the root's draws of I, weighed the
same way by the chance reach and the opponent's reach under the policies
earlier searches left (`anchored.order2.RootHistory`). Where the public
state is sampled, or the anchored root holds fewer histories than I, the
belief is over that sample (`Belief.exact` is False).
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np
import pyspiel

from open_spiel_sog.public_state import PublicState


@dataclasses.dataclass(frozen=True)
class Belief:
  """A probability over the histories of one player's infostate.

  Attributes:
    player: whose infostate this is.
    histories: the histories (pyspiel.State), in the search's order.
    probabilities: [H] their probabilities (summing to 1).
    exact: whether `histories` are all the infostate's histories (False:
      a sample of them).
  """
  player: int
  histories: tuple[pyspiel.State, ...]
  probabilities: np.ndarray  # [H]
  exact: bool

  def __post_init__(self):
    if len(self.histories) != len(self.probabilities):
      raise ValueError(f"{len(self.histories)} histories but "
                       f"{len(self.probabilities)} probabilities")


def _normalised(weights: np.ndarray) -> np.ndarray:
  total = weights.sum()
  if total > 0:
    return weights / total
  # The opponent's modelled policy gives every history zero reach (play
  # left its support): nothing tells them apart, so uniform.
  return np.full(len(weights), 1.0 / len(weights))


def public_state_belief(ps: PublicState, history: int, player: int,
                        opponent_range: np.ndarray) -> Belief:
  """`player`'s belief at the infostate of `ps.histories[history]`, given
  the opponent's range over its infostates in `ps` ([ps.num_infostates(o)])."""
  opponent = 1 - player
  opponent_range = np.asarray(opponent_range, dtype=np.float64)
  if opponent_range.shape != (ps.num_infostates(opponent),):
    raise ValueError(f"opponent range of shape {opponent_range.shape}; "
                     f"{ps.describe()} has {ps.num_infostates(opponent)} "
                     "opponent infostates")
  own = ps.history_infostate[player]
  members = np.flatnonzero(own == own[history])
  weights = (ps.chance_reach[members] *
             opponent_range[ps.history_infostate[opponent][members]])
  return Belief(player=player,
                histories=tuple(ps.histories[i] for i in members),
                probabilities=_normalised(weights),
                exact=bool(ps.exact))


def weighted_belief(player: int, histories: Sequence[pyspiel.State],
                    weights: Sequence[float], exact: bool) -> Belief:
  """A belief over `histories` in proportion to `weights` (each the
  history's chance reach times the opponent's reach)."""
  return Belief(player=player, histories=tuple(histories),
                probabilities=_normalised(np.asarray(weights,
                                                     dtype=np.float64)),
                exact=exact)
