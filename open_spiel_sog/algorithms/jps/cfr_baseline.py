"""The CFR baseline of joint policy search (the paper's CFR1k, as the JPS
authors' code runs it) on `GameArrays`."""

from __future__ import annotations

import numpy as np

from open_spiel_sog.algorithms.cfr import regret_matching
from open_spiel_sog.algorithms.jps.game_arrays import GameArrays


def cfr(arrays: GameArrays, iterations: int, seed: int | None = None,
        alternating: bool = False, explore: float = 0.01,
        average: bool = True) -> np.ndarray:
  """The CFR baseline, as the JPS authors' code runs it: [N, A] vanilla CFR
  (regret matching, simultaneous updates, or `alternating`; each player's
  counterfactual values weigh the shared payoff by chance's and the
  partner's reach) after `iterations`. Both players maximise the one payoff.

  Args:
    arrays: the game.
    iterations: CFR iterations.
    seed: the random initial policy (each action's weight uniform in [0, 1),
      normalised) and the exploration noise; None: a uniform start (and
      the noise of seed 0, so that every run is reproducible).
    alternating: alternating instead of simultaneous updates.
    explore: where an infoset has no positive regret, regret matching's
      uniform policy plus Gaussian noise of this deviation per action,
      clipped at 0 and normalised (0: plain uniform).
    average: return the average policy (weighted by own reach); False: the
      last iterate (the authors start JPS from it).
  """
  a = arrays
  if iterations < 1:
    raise ValueError(f"CFR iterations must be >= 1, got {iterations}")
  if explore < 0:
    raise ValueError(f"explore must be >= 0, got {explore}")
  uniform = a.legal / a.iset_num_actions[:, None]
  rng = np.random.default_rng(0 if seed is None else seed)
  if seed is None:
    current = uniform.copy()
  else:
    current = np.where(a.legal, rng.random(a.legal.shape), 0.0)
    current /= current.sum(axis=1, keepdims=True)

  def matching(regrets):
    out = regret_matching(regrets, uniform)
    if explore > 0:
      flat = ~np.any((regrets > 0) & a.legal, axis=1)
      if flat.any():
        noisy = np.where(a.legal[flat], uniform[flat] + rng.normal(
            0.0, explore, uniform[flat].shape), 0.0)
        noisy = np.maximum(noisy, 0.0)
        total = noisy.sum(axis=1, keepdims=True)
        out[flat] = np.where(total > 0, noisy / np.where(total > 0, total, 1),
                             uniform[flat])
    return out

  regrets = np.zeros_like(current)
  averaged = np.zeros_like(current)
  owner = np.full(a.num_histories, -1)
  owner[a.dec_hist] = a.iset_player[a.infoset[a.dec_hist]]
  # Whose decision each edge leaves (-1: chance, and the root).
  edge_owner = np.where(a.parent >= 0, owner[np.maximum(a.parent, 0)], -1)
  # Per player: its decision histories grouped by infoset (iset_hist order)
  # and the segment starts of the infosets that have any.
  groups = []
  for p in range(2):
    hs = a.iset_hist[a.iset_player[a.infoset[a.iset_hist]] == p]
    isets, starts = np.unique(a.infoset[hs], return_index=True)
    groups.append((hs, a.dec_index[hs], isets, starts))
  for _ in range(iterations):
    for p in range(2):
      if p == 0 or alternating:
        edge = a.edge_probs(current)
        v = a.values(edge)
        q_all = a.child_values(v)
      hs, rows, isets, starts = groups[p]
      if not len(hs):
        continue
      mine = edge_owner == p
      counterfactual = a.reach(np.where(mine, 1.0, edge))
      own = a.reach(np.where(mine, edge, 1.0))
      instant = counterfactual[hs][:, None] * (q_all[rows] - v[hs][:, None])
      regrets[isets] += np.where(a.legal[isets],
                                 np.add.reduceat(instant, starts, axis=0), 0.0)
      # (Own reach is the same at every history of an infoset.)
      averaged[isets] += own[hs[starts]][:, None] * current[isets]
      if alternating:
        current = matching(regrets)
    if not alternating:
      current = matching(regrets)
  if not average:
    return current
  total = averaged.sum(axis=1, keepdims=True)
  return np.where(total > 0, averaged / np.where(total > 0, total, 1.0),
                  uniform)
