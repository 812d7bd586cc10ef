"""Sampled public states: stratified draws and their time budget (DESIGN.md
section 3).

With `ObserverConfig.max_histories` = n > 0, a public state that would hold
more than n histories is a sample: n draws, with replacement and in
proportion to chance reach, from the histories consistent with the public
observations, stratified by the acting player's infostate and action
(`strata_of`). The observer's `Sampler` owns the random stream (seeded by
`ObserverConfig.sample_seed`) and draws (`Sampler.sample`); with a favoured
player (the searcher), FAVOURED_SHARE of a sample's draws are kept for the
histories of its infostate on the true path (`Sampler.sample_favouring`).
Under a time-limited bot's deadline it shrinks the samples to what the time
left affords (`Sampler.affordable_bound`), timed by a running mean of
seconds per child built.
"""

from __future__ import annotations

import time
from typing import Callable

import numpy as np

from open_spiel_sog.public_state.state import PublicState
from open_spiel_sog.utils import draws

# An expansion with more than this many times max_histories children draws
# that many of them before building any.
PRESAMPLE = 4

# Under a deadline, a sampled expansion may spend this share of the time
# left building children; walking to a state, the expansions on the way
# share WALK_SHARE of it.
EXPAND_SHARE = 0.1
WALK_SHARE = 0.3

# The share of a sample's draws kept for the searcher's own infostate on
# the true path (see Sampler.sample_favouring).
FAVOURED_SHARE = 0.5


def strata_of(ps: PublicState, parent_history: np.ndarray,
              parent_action: np.ndarray) -> np.ndarray:
  """The stratum of each child of `ps` for sampling: the acting player's
  infostate and the action (chance nodes: the outcome)."""
  if not ps.is_player_node():
    return np.zeros(len(parent_history), dtype=np.int64)
  acting = ps.history_infostate[ps.current_player()][parent_history]
  return acting * (int(parent_action.max(initial=0)) + 1) + parent_action


class Sampler:
  """The draws of an observer's sampled public states and their budget.

  Attributes:
    max_histories: `ObserverConfig.max_histories` (0: exact public states).
    rng: the random stream of every draw, seeded by
      `ObserverConfig.sample_seed`.
    deadline: a `time.monotonic()` time a time-limited bot sets while it
      locates and searches: sampled expansions then build fewer children
      (see `affordable_bound`), timed by a running mean of seconds per child
      (`seconds_per_child`).
    expand_budget: (share of the time left, expansions to share it) that
      the next expansion may spend under `deadline`: (EXPAND_SHARE, 1), or
      WALK_SHARE over the expansions still to come on the way to a state.
    favoured_player: the searcher: sampled public states that
      `public_state_of` builds on the way to a state keep FAVOURED_SHARE of
      their draws for the histories in this player's infostate (see
      `sample_favouring`).
    shrink_within_bound: whether, under `deadline`, public states within
      max_histories may be sampled too (shrunk to fit the time): a bot whose
      value function needs exact public states (a network's slots) sets
      False, and then only public states past max_histories shrink.
  """

  def __init__(self, max_histories: int, seed: int,
               perfect_information: bool):
    self.max_histories = max_histories
    # One history a public state: nothing to sample or to budget.
    self._perfect_information = perfect_information
    self.rng = np.random.default_rng(seed)
    self.deadline: float | None = None
    self.seconds_per_child: float | None = None
    self._timed = [0.0, 0]  # seconds, children
    self.expand_budget = (EXPAND_SHARE, 1)
    self.favoured_player: int | None = None
    self.shrink_within_bound = True

  def affordable_bound(self, ps: PublicState,
                       time_one_child: Callable[[PublicState], float]) -> int:
    """max_histories, or, under `deadline` with sampling on, fewer (at
    least 1, the searcher's own history still kept) so that the children
    an expansion builds (at most PRESAMPLE times the bound, each a pyspiel
    child and its strings) take at most the expansion's share of the time
    left: python_liars_poker's observer takes 2 ms a string and deals 20
    chance nodes before the first decision. The first expansion under a
    deadline times one child first (`time_one_child(ps)`: the seconds it
    took to build one child of `ps` as an expansion would)."""
    bound = self.max_histories
    if (not bound or self.deadline is None or ps.is_terminal() or
        self._perfect_information):  # one history a state
      return bound
    if self.seconds_per_child is None:
      self.record_time(time_one_child(ps), 1)
    share, steps = self.expand_budget
    left = max(self.deadline - time.monotonic(), 0.0)
    afford = int(share * left /
                 (steps * PRESAMPLE * max(self.seconds_per_child, 1e-9)))
    return max(1, min(bound, afford))

  def record_time(self, seconds: float, children: int) -> None:
    """Adds `children` built in `seconds` to the running mean (under a
    deadline)."""
    if self.deadline is None or not children:
      return
    self._timed[0] += seconds
    self._timed[1] += children
    self.seconds_per_child = self._timed[0] / self._timed[1]

  def sample(self, idx: np.ndarray, weights: np.ndarray,
             strata: np.ndarray, forced: int, n: int
             ) -> tuple[np.ndarray, np.ndarray]:
    """About `n` draws from the children `idx` in proportion to
    their chance reach `weights` (with replacement; repeats merge), keeping
    child `forced` when it is among them.

    The draws are stratified by `strata` (the acting player's infostate and
    action that led to each child) so that every action of every infostate
    keeps a child, when there are no more strata than draws. Returns the kept
    children (in their original order) and their weights: each draw in a
    stratum carries the stratum's total reach / its draws."""
    labels, inverse = np.unique(strata, return_inverse=True)
    inverse = inverse.reshape(-1)
    totals = np.bincount(inverse, weights=weights, minlength=len(labels))
    if len(labels) > n:
      labels, inverse = labels[:1], np.zeros_like(inverse)
      totals = np.asarray([weights.sum()])
    quota = np.maximum(1, np.round(n * totals / totals.sum())).astype(int)
    counts = np.zeros(len(idx))
    scale = np.zeros(len(idx))
    # Each stratum's members in order (a stable sort by stratum, not a pass
    # over all children per stratum), and its draws as Generator.choice
    # makes them (utils.draws), all strata's uniforms from one random()
    # call, which the stream gives in the same order: the same draws.
    order = np.argsort(inverse, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(
        inverse, minlength=len(labels)))]).tolist()
    uniforms = self.rng.random(int(quota.sum()))
    used = 0
    for s in range(len(labels)):
      members = order[bounds[s]:bounds[s + 1]]
      w = weights[members]
      drawn = draws.search(draws.cumulative(w / w.sum()),
                           uniforms[used:used + quota[s]])
      used += quota[s]
      counts[members] = np.bincount(drawn, minlength=len(members))
      forced_here = np.nonzero(idx[members] == forced)[0]
      if forced_here.size and counts[members[forced_here[0]]] == 0:
        # The searcher's own history is always kept.
        counts[members[forced_here[0]]] = 1.0
      scale[members] = totals[s] / counts[members].sum()
    keep = np.nonzero(counts)[0]
    return idx[keep], counts[keep] * scale[keep]

  def sample_favouring(self, idx: np.ndarray, weights: np.ndarray,
                       strata: np.ndarray, forced: int, n: int,
                       favoured: np.ndarray | None
                       ) -> tuple[np.ndarray, np.ndarray]:
    """`sample`, with FAVOURED_SHARE of the `n` draws kept for the
    children `favoured` marks (those in the searcher's infostate on the true
    path; all of them where they are fewer) and the rest for the others,
    each part weighted to its own chance reach. A sample of the public state
    in proportion to chance reach would hold few of the searcher's own
    histories (4 of 300, median, in phantom_ttt), the true one among them:
    the search would see little of what the searcher cannot tell apart, and
    much of the truth. Neither part depends on what the searcher does not
    know."""
    if favoured is None or favoured.all() or not favoured.any():
      return self.sample(idx, weights, strata, forced, n)
    mine = np.nonzero(favoured)[0]
    rest = np.nonzero(~favoured)[0]
    quota = max(1, int(FAVOURED_SHARE * n))
    if len(mine) <= quota:
      kept, kept_w = idx[mine], weights[mine]
    else:
      kept, kept_w = self.sample(idx[mine], weights[mine], strata[mine],
                                 forced, quota)
    others, others_w = self.sample(idx[rest], weights[rest], strata[rest],
                                   -1, max(1, n - len(kept)))
    both = np.concatenate([kept, others])
    order = np.argsort(both, kind="stable")
    return both[order], np.concatenate([kept_w, others_w])[order]
