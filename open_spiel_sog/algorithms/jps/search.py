"""Joint policy search (Algorithm 1) over `GameArrays`: the policy-change
densities of Theorem 1, the depth-first search over chains of infostates,
its brute-force baseline, and runs from CFR or uniform starts."""

from __future__ import annotations

import dataclasses
import time
from typing import Sequence

import numpy as np
import pyspiel
from open_spiel.python import policy as os_policy

from open_spiel_sog.algorithms.jps.cfr_baseline import cfr
from open_spiel_sog.algorithms.jps.game_arrays import GameArrays


@dataclasses.dataclass(frozen=True)
class JPSConfig:
  """Options of joint policy search.

  Attributes:
    depth: the most infosets one change may hold (a chain I_1 -> I_2 ...;
      0: as deep as the game goes): the chain's length, as the authors'
      code's max_depth (Algorithm 1's "d >= D: return 0" with d counted
      from 1 would read as D - 1).
    max_iterations: changes accepted at most (each one re-runs the passes).
    samples: 0 for the exact densities; else the sample-based variant,
      with this many histories (uniform, with replacement) per candidate
      infoset.
    tolerance: gains at or below this are not changes.
    seed: seed of the samples.
  """
  depth: int = 0
  max_iterations: int = 10_000
  samples: int = 0
  tolerance: float = 1e-12
  seed: int = 0


@dataclasses.dataclass
class JPSResult:
  """What a run of JPS returns.

  Attributes:
    policy: the final joint policy (OpenSpiel TabularPolicy).
    probs: [N, A] the same over `GameArrays` infosets.
    values: the value trace: the start, then after each accepted change.
    changes: each accepted change as [(infoset key, action), ...].
    sweeps: passes over the first infosets.
    seconds: wall time.
  """
  policy: os_policy.TabularPolicy
  probs: np.ndarray
  values: list[float]
  changes: list[list[tuple[str, int]]]
  sweeps: int
  seconds: float


class JointPolicySearch:
  """Algorithm 1 over a `GameArrays`.

  Example:
    arrays = GameArrays(pyspiel.load_game("tiny_hanabi"))
    result = JointPolicySearch(arrays).run(start_policy)
    result.values[-1]    # the improved joint policy's value
  """

  def __init__(self, arrays: GameArrays, config: JPSConfig | None = None):
    self.arrays = arrays
    self.config = config or JPSConfig()
    if self.config.depth < 0:
      raise ValueError(f"depth must be >= 0, got {self.config.depth}")
    if self.config.samples < 0:
      raise ValueError(f"samples must be >= 0, got {self.config.samples}")
    self._rng = np.random.default_rng(self.config.seed)
    self.evaluations = 0  # candidate (infoset, action) densities computed

  # --- Densities -----------------------------------------------------------

  def _prepare(self, probs: np.ndarray) -> None:
    a = self.arrays
    self.probs = probs
    edge = a.edge_probs(probs)
    self.v = a.values(edge)
    self.pi = a.reach(edge)
    # E[h, k]: the probability of the k-th edge on h's path.
    self._path_edge = np.where(a.path_child >= 0,
                               edge[np.maximum(a.path_child, 0)], 1.0)
    # [decision histories, A]: v(h a) - v(h).
    self._advantage = np.where(
        a.dec_child >= 0, a.child_values(self.v) - self.v[a.dec_hist][:, None],
        0.0)

  def new_reach(self, hs: np.ndarray,
                active: Sequence[tuple[int, int]]) -> np.ndarray:
    """pi^sigma'(h) for histories `hs`, sigma' one-hot at the `active`
    (infoset, slot) pairs: the product of the path's edge probabilities
    with the active infosets' one-hot choices in place."""
    factors = self._path_edge[hs]
    if active:
      isets = self.arrays.path_iset[hs]
      slots = self.arrays.path_slot[hs]
      for iset, slot in active:
        on = isets == iset
        if on.any():
          factors = np.where(on, (slots == slot).astype(np.float64), factors)
    return factors.prod(axis=1)

  def densities(self, isets: np.ndarray,
                active: Sequence[tuple[int, int]]) -> np.ndarray:
    """[len(isets), A] J(I, a) = sum over h in I of rho(h) with sigma'
    one-hot at a in I (and at the `active` pairs upstream); -inf at illegal
    slots."""
    a = self.arrays
    starts, ends = a.iset_start[isets], a.iset_start[isets + 1]
    if self.config.samples:
      k = self.config.samples
      size = ends - starts
      picks = starts[:, None] + (self._rng.random((len(isets), k)) *
                                 size[:, None]).astype(np.int64)
      hs = a.iset_hist[picks.reshape(-1)]
      weight = np.repeat(size / k, k)
      seg = np.arange(len(isets)) * k
    else:
      counts = ends - starts
      hs = a.iset_hist[np.concatenate(
          [np.arange(s, e) for s, e in zip(starts, ends)])]
      weight = 1.0
      seg = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rho = ((self.new_reach(hs, active) * weight)[:, None] *
           self._advantage[a.dec_index[hs]])
    self.evaluations += rho.shape[0]
    out = np.add.reduceat(rho, seg, axis=0)
    return np.where(a.legal[isets], out, -np.inf)

  # --- Search --------------------------------------------------------------

  def search(self, candidates: np.ndarray, depth_left: int,
             active: list[tuple[int, int]]
             ) -> tuple[float, list[tuple[int, int]]]:
    """Algorithm 1's JPS(sigma, candidates, d): the best gain of a chain
    through one of `candidates` (0 and no chain if none gains), given the
    `active` chain above."""
    best, chain = 0.0, []
    if depth_left <= 0 or len(candidates) == 0:
      return best, chain
    dens = self.densities(candidates, active)
    for ci, iset in enumerate(candidates):
      for sl in range(self.arrays.iset_num_actions[iset]):
        pair = (int(iset), sl)
        gain = float(dens[ci, sl])
        if depth_left > 1:
          below, rest = self.search(self.arrays.succ(*pair), depth_left - 1,
                                    active + [pair])
        else:
          below, rest = 0.0, []
        if gain + below > best + self.config.tolerance:
          best, chain = gain + below, [pair] + rest
    return best, chain

  def run(self, policy: os_policy.Policy | np.ndarray | None = None,
          progress=None) -> JPSResult:
    """Improves `policy` (an OpenSpiel policy, [N, A] arrays, or None for
    uniform) until a sweep over every infoset as I_1 finds no gain, or
    `max_iterations` changes."""
    a = self.arrays
    start = time.perf_counter()
    probs = (np.asarray(policy, dtype=np.float64).copy()
             if isinstance(policy, np.ndarray) else a.policy_arrays(policy))
    if probs.shape != (a.num_infosets, a.max_actions):
      raise ValueError(f"policy arrays have shape {probs.shape}, expected "
                       f"{(a.num_infosets, a.max_actions)}")
    depth = self.config.depth or int(a.depth.max())
    self._prepare(probs)
    values = [float(self.v[0])]
    best_value, best_probs = values[0], probs.copy()
    changes = []
    # First infosets in top-down order (by their shallowest history).
    order = np.argsort(a.depth[a.iset_hist[a.iset_start[:-1]]],
                       kind="stable")
    sweeps = 0
    while len(changes) < self.config.max_iterations:
      sweeps += 1
      improved = False
      for first in order:
        gain, chain = self.search(np.asarray([first]), depth, [])
        if not chain:
          continue
        for iset, sl in chain:
          probs[iset] = 0.0
          probs[iset, sl] = 1.0
        self._prepare(probs)
        values.append(float(self.v[0]))
        changes.append([(a.iset_keys[i], int(a.iset_actions[i, s]))
                        for i, s in chain])
        if values[-1] > best_value:
          best_value, best_probs = values[-1], probs.copy()
        improved = True
        if progress is not None:
          progress(len(changes), values[-1])
        if len(changes) >= self.config.max_iterations:
          break
      if not improved:
        break
    if self.config.samples:
      probs = best_probs
    return JPSResult(policy=a.tabular_policy(probs), probs=probs,
                     values=values, changes=changes, sweeps=sweeps,
                     seconds=time.perf_counter() - start)


def policy_change(arrays: GameArrays, probs: np.ndarray,
                  new_probs: np.ndarray) -> float:
  """Theorem 1: v(new) - v(old) as the sum of the policy-change density
  over the histories of the infosets where `new_probs` differs from
  `probs` (any mixed policies), from the old policy's values and the new
  one's total reach."""
  a = arrays
  v = a.values(a.edge_probs(probs))
  new_reach = a.reach(a.edge_probs(new_probs))
  changed = np.any(probs != new_probs, axis=1)
  sel = changed[a.infoset[a.dec_hist]]
  hs = a.dec_hist[sel]
  q = a.child_values(v)[sel]
  rho = new_reach[hs] * (np.einsum("ij,ij->i", new_probs[a.infoset[hs]], q)
                         - v[hs])
  return float(rho.sum())


def purify(arrays: GameArrays, probs: np.ndarray) -> np.ndarray:
  """Each infoset's most probable action (the first of equals), one-hot."""
  best = np.where(arrays.legal, probs, -np.inf).argmax(axis=1)
  out = np.zeros_like(probs)
  out[np.arange(len(best)), best] = 1.0
  return out


class BruteForceSearch(JointPolicySearch):
  """Algorithm 1 with each candidate scored by re-evaluating the game (a
  full value pass per candidate) instead of by its density: the baseline of
  the paper's runtime comparison. Same chains, same gains."""

  def densities(self, isets: np.ndarray,
                active: Sequence[tuple[int, int]]) -> np.ndarray:
    a = self.arrays
    probs = self.probs.copy()
    for iset, sl in active:
      probs[iset] = 0.0
      probs[iset, sl] = 1.0
    base = a.value(probs)
    out = np.full((len(isets), a.max_actions), -np.inf)
    for ci, iset in enumerate(isets):
      row = probs[iset].copy()
      for sl in range(a.iset_num_actions[iset]):
        probs[iset] = 0.0
        probs[iset, sl] = 1.0
        out[ci, sl] = a.value(probs) - base
        self.evaluations += 1
      probs[iset] = row
    return out


def search_from_starts(game: pyspiel.Game | str, start: str,
                       cfr_iterations: int, seeds: int, config: JPSConfig,
                       log=None) -> dict:
  """JPS from `seeds` start policies: "cfr" (the paper's CFR1k, as the
  authors' code runs it: `cfr_iterations` of CFR from a random initial
  policy, and JPS from its last iterate as it is, mixed) or "uniform".

  Returns {"game", "start_policy", "cfr_iterations", "depth", "samples",
  "histories", "infosets", "start" (value per seed of the policy JPS
  starts from), "purified" (value per seed of the start purified: the
  paper's CFR1k column), "final", "traces", "start_seconds", "jps_seconds",
  "changes"}.
  """
  if start not in ("cfr", "uniform"):
    raise ValueError(f"unknown start {start!r}; supported: 'cfr', 'uniform'")
  if seeds < 1 or cfr_iterations < 1:
    raise ValueError("seeds and cfr_iterations must be >= 1")
  if isinstance(game, str):
    game = pyspiel.load_game(game)
  arrays = GameArrays(game)
  out = {"game": str(game), "start_policy": start,
         "cfr_iterations": cfr_iterations if start == "cfr" else None,
         "depth": config.depth, "samples": config.samples,
         "histories": arrays.num_histories, "infosets": arrays.num_infosets,
         "start": [], "purified": [], "final": [], "traces": [],
         "start_seconds": [], "jps_seconds": [], "changes": []}
  for seed in range(seeds):
    t = time.perf_counter()
    probs = (cfr(arrays, cfr_iterations, seed, average=False)
             if start == "cfr" else arrays.policy_arrays(None))
    out["start_seconds"].append(time.perf_counter() - t)
    result = JointPolicySearch(
        arrays, dataclasses.replace(config, seed=seed)).run(probs)
    out["start"].append(result.values[0])
    out["purified"].append(arrays.value(purify(arrays, probs)))
    out["final"].append(arrays.value(result.probs))
    out["traces"].append(result.values)
    out["jps_seconds"].append(result.seconds)
    out["changes"].append(len(result.changes))
    if log is not None:
      log(f"seed {seed}: start {result.values[0]:.4f} (purified "
          f"{out['purified'][-1]:.4f}) -> JPS "
          f"{out['final'][-1]:.4f} ({len(result.changes)} changes, "
          f"{result.seconds:.1f} s)")
  return out
