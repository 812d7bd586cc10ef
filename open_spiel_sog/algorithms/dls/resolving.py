"""Nested depth-limited solving: re-solving from the deepest trunk public
state on the way to each decision (the dls bot's engine)."""

from __future__ import annotations

import numpy as np

from open_spiel_sog.algorithms.dls.solver import DepthLimitedSolver
from open_spiel_sog.algorithms.dls.trunk import _descends
from open_spiel_sog.public_state import PublicState


class DepthLimitedResolver:
  """Nested depth-limited solving for one player (the dls bot's engine).

  The first subgame is `root_solver`'s (the game's root, its continuation
  set built and solved). At each later decision at public state S, the
  player re-solves from S_prev, the deepest public state on the way to S
  that the previous solve's trunk holds with a positive own range (S itself
  while play stays in that trunk, the frontier public state past it): its
  range there is the previous solution's, and the opponent gets the
  re-solving gadget with its counterfactual values there. The continuation
  set stays the root's (whole-game policies).
  """

  def __init__(self, root_solver: DepthLimitedSolver):
    if root_solver.solution is None:
      raise ValueError("the root solver has not solved yet")
    self.root_solver = root_solver
    self.player = root_solver.searcher
    self.solves = 0

  def resolve(self, ps: PublicState,
              previous: DepthLimitedSolver | None) -> DepthLimitedSolver:
    """The solver whose solution plays at `ps` (a decision public state
    of this player), given the one that played this player's previous
    decision in this game (None at its first)."""
    if not ps.is_player_node() or ps.current_player() != self.player:
      raise ValueError(f"{ps.describe()} is not a decision of player "
                       f"{self.player}")
    if previous is None or not _descends(ps, previous.root):
      previous = self.root_solver
    start = previous.resolve_root(ps)
    if start is previous.root:
      return previous
    ranges, values = previous.summary(start)
    i, o = self.player, 1 - self.player
    scale = ranges[i].sum()
    new_ranges = [None, None]
    new_ranges[i] = ranges[i] / scale
    new_ranges[o] = np.ones(start.num_infostates(o))
    root = self.root_solver
    solver = DepthLimitedSolver(root.game, i, root.blueprint, root.config,
                                root=start, ranges=new_ranges,
                                gadget_values=values[o] / scale)
    for strategy in root.strategies:
      solver.add_strategy(strategy)
    solver.solve()
    self.solves += 1
    return solver
