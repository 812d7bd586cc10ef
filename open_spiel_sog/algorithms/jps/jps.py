"""Joint policy search for common-payoff games (DESIGN.md section 13).

Tian, Gong and Jiang, "Joint Policy Search for Multi-agent Collaboration
with Imperfect Information" (NeurIPS 2020). For a two-player game whose
players share one payoff (OpenSpiel's IDENTICAL utility), JPS improves a
joint policy sigma by one-hot changes at chains of infostates
I_1 -> I_2 in succ(I_1, a_1) -> ... (at most `depth` of them), scoring every
candidate by Theorem 1's policy-change density instead of re-evaluating the
game:

  v(sigma') - v(sigma) = sum over changed I of sum over h in I of rho(h),
  rho(h) = pi^sigma'(h) * (sum_a sigma'(I, a) v^sigma(h a) - v^sigma(h)),

with pi the total reach (chance and both players) and v^sigma the values of
the current policy: one top-down pass of reach and one bottom-up pass of
values per iteration (vectorised per depth), then a depth-first search over
chains (Algorithm 1) whose candidates at each step are scored together.
pi^sigma'(h) is the product of the edge probabilities on h's path with the
changed infostates' one-hot choices in place (back-tracing to the root), so
a policy with zeros never divides. The best positive chain is applied; the
value never falls (Theorem 2).

The game is enumerated into flat history arrays (`GameArrays`), so this is
for games of up to a few hundred thousand histories (the paper's tabular
games). `samples` > 0 is the sample-based variant (the paper's Table 2):
each candidate infostate's density is estimated from that many of its
histories drawn uniformly with replacement; it loses Theorem 2's guarantee,
so the best policy seen is kept. `cfr` is the CFR baseline the paper starts
from (CFR1k): vanilla CFR with simultaneous regret-matching updates from a
random initial policy, on the same arrays.
"""

from __future__ import annotations

import collections
import dataclasses
import time
from typing import Sequence

import numpy as np
import pyspiel
from open_spiel.python import policy as os_policy

from open_spiel_sog.algorithms.cfr import regret_matching

_CHANCE, _DECISION, _TERMINAL = 0, 1, 2


def check_game(game: pyspiel.Game) -> None:
  """ValueError unless `game` is a two-player common-payoff sequential game
  with explicit chance and infostate strings."""
  t = game.get_type()
  problems = []
  if game.num_players() != 2:
    problems.append(f"{game.num_players()} players")
  if t.utility != pyspiel.GameType.Utility.IDENTICAL:
    problems.append(f"utility {t.utility.name} (JPS needs IDENTICAL: one "
                    "payoff shared by both players)")
  if t.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
    problems.append("simultaneous moves")
  if t.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC:
    problems.append("sampled chance")
  if not t.provides_information_state_string:
    problems.append("no information_state_string")
  if problems:
    raise ValueError(f"joint policy search needs a two-player common-payoff "
                     f"sequential game with infostate strings; {t.short_name} "
                     f"has {', '.join(problems)}")


class GameArrays:
  """A common-payoff game enumerated breadth first into flat arrays.

  Histories (H, root first, by depth): parent, slot (the parent's action
  position), kind (chance, decision, terminal), infoset (decision nodes;
  -1 otherwise), reward (terminals: the shared payoff), chance_prob (the
  probability of the chance edge into the history; 1 after decisions).
  Decision histories: dec_hist, dec_index (-1 elsewhere) and dec_child
  [decision histories, A] (-1 where none). Infosets (N): player, key, num_actions,
  actions [N, A] (-1 padded), their histories (CSR: iset_start,
  iset_hist). Paths [H, depth]: path_node (the ancestor at each depth),
  path_slot (the action taken there towards the history), path_iset, and
  path_child (where that edge leads).
  """

  def __init__(self, game: pyspiel.Game, max_histories: int = 2_000_000):
    check_game(game)
    self.game = game
    parent, slot, kind, infoset, reward, chance_prob, depth = (
        [], [], [], [], [], [], [])
    children: list[list[int]] = []
    iset_of: dict[str, int] = {}
    iset_player, iset_actions, iset_keys = [], [], []
    queue = collections.deque([(game.new_initial_state(), -1, -1, 1.0, 0)])
    while queue:
      state, par, sl, prob, d = queue.popleft()
      h = len(parent)
      if h >= max_histories:
        raise ValueError(f"{game} has more than {max_histories} histories; "
                         "JPS here enumerates the game")
      parent.append(par)
      slot.append(sl)
      chance_prob.append(prob)
      depth.append(d)
      children.append([])
      if par >= 0:
        children[par].append(h)
      if state.is_terminal():
        kind.append(_TERMINAL)
        infoset.append(-1)
        reward.append(float(state.returns()[0]))
        continue
      reward.append(0.0)
      if state.is_chance_node():
        kind.append(_CHANCE)
        infoset.append(-1)
        for k, (a, p) in enumerate(state.chance_outcomes()):
          queue.append((state.child(a), h, k, float(p), d + 1))
        continue
      kind.append(_DECISION)
      player = state.current_player()
      key = state.information_state_string(player)
      actions = state.legal_actions()
      i = iset_of.get(key)
      if i is None:
        i = iset_of[key] = len(iset_keys)
        iset_keys.append(key)
        iset_player.append(player)
        iset_actions.append(actions)
      elif iset_actions[i] != actions:
        raise ValueError(f"infostate {key!r} has histories with different "
                         "legal actions")
      infoset.append(i)
      for k, a in enumerate(actions):
        queue.append((state.child(a), h, k, 1.0, d + 1))
    self.num_histories = len(parent)
    self.parent = np.asarray(parent, dtype=np.int64)
    self.slot = np.asarray(slot, dtype=np.int64)
    self.kind = np.asarray(kind, dtype=np.int8)
    self.infoset = np.asarray(infoset, dtype=np.int64)
    self.reward = np.asarray(reward)
    self.chance_prob = np.asarray(chance_prob)
    self.depth = np.asarray(depth, dtype=np.int64)
    self.max_actions = max(max((len(c) for c in children), default=1), 1)
    # Children of the decision histories: dec_child[dec_index[h]].
    decisions = np.flatnonzero(self.kind == _DECISION)
    self.dec_hist = decisions
    self.dec_index = np.full(self.num_histories, -1, dtype=np.int64)
    self.dec_index[decisions] = np.arange(len(decisions))
    self.dec_child = np.full((len(decisions), self.max_actions), -1,
                             dtype=np.int64)
    for k, h in enumerate(decisions):
      self.dec_child[k, :len(children[h])] = children[h]
    self.level_bounds = np.searchsorted(self.depth,
                                        np.arange(self.depth.max() + 2))
    self.num_infosets = len(iset_keys)
    self.iset_keys = iset_keys
    self.iset_player = np.asarray(iset_player, dtype=np.int64)
    self.iset_num_actions = np.asarray([len(a) for a in iset_actions],
                                       dtype=np.int64)
    self.iset_actions = np.full((self.num_infosets, self.max_actions), -1,
                                dtype=np.int64)
    for i, a in enumerate(iset_actions):
      self.iset_actions[i, :len(a)] = a
    self.legal = self.iset_actions >= 0
    order = np.argsort(self.infoset[decisions], kind="stable")
    self.iset_hist = decisions[order]
    self.iset_start = np.searchsorted(self.infoset[self.iset_hist],
                                      np.arange(self.num_infosets + 1))
    # Paths: each history's ancestors and the slots taken from them.
    max_depth = int(self.depth.max())
    self.path_node = np.full((self.num_histories, max(max_depth, 1)), -1,
                             dtype=np.int64)
    self.path_slot = np.zeros_like(self.path_node)
    for d in range(1, max_depth + 1):
      lo, hi = self.level_bounds[d], self.level_bounds[d + 1]
      p = self.parent[lo:hi]
      self.path_node[lo:hi, :d - 1] = self.path_node[p, :d - 1]
      self.path_slot[lo:hi, :d - 1] = self.path_slot[p, :d - 1]
      self.path_node[lo:hi, d - 1] = p
      self.path_slot[lo:hi, d - 1] = self.slot[lo:hi]
    self.path_iset = np.where(self.path_node >= 0,
                              self.infoset[np.maximum(self.path_node, 0)], -1)
    # The history the k-th edge of each path leads to (the history itself
    # for the last one): its edge_in is that edge's probability.
    self.path_child = np.full_like(self.path_node, -1)
    if max_depth > 1:
      self.path_child[:, :-1] = self.path_node[:, 1:]
    rows = np.arange(self.num_histories)
    last = self.depth - 1
    ok = last >= 0
    self.path_child[rows[ok], last[ok]] = rows[ok]
    self._succ: dict[tuple[int, int], np.ndarray] = {}
    self._next_decisions = self._first_decisions(children)

  def _first_decisions(self, children: list[list[int]]) -> list[list[int]]:
    """For each history, the first decision nodes at or below it (through
    chance nodes)."""
    out: list[list[int]] = [[] for _ in range(self.num_histories)]
    for h in range(self.num_histories - 1, -1, -1):
      k = self.kind[h]
      if k == _DECISION:
        out[h] = [h]
      elif k == _CHANCE:
        out[h] = [d for c in children[h] for d in out[c]]
    return out

  def histories(self, iset: int) -> np.ndarray:
    return self.iset_hist[self.iset_start[iset]:self.iset_start[iset + 1]]

  def succ(self, iset: int, slot: int) -> np.ndarray:
    """The infosets that come next after `slot` at `iset` (either player's,
    through chance), sorted."""
    key = (iset, slot)
    if key not in self._succ:
      kids = self.dec_child[self.dec_index[self.histories(iset)], slot]
      nodes = [d for c in kids if c >= 0 for d in self._next_decisions[c]]
      self._succ[key] = np.unique(self.infoset[np.asarray(nodes,
                                                          dtype=np.int64)])
    return self._succ[key]

  # --- Policies ------------------------------------------------------------

  def policy_arrays(self, policy: os_policy.Policy | None) -> np.ndarray:
    """[N, A] `policy` at each infoset (read at one of its histories'
    states); uniform where `policy` is None."""
    uniform = self.legal / self.iset_num_actions[:, None]
    if policy is None:
      return uniform
    out = np.zeros((self.num_infosets, self.max_actions))
    if isinstance(policy, os_policy.TabularPolicy):
      for i, key in enumerate(self.iset_keys):
        row = policy.state_lookup.get(key)
        if row is not None:
          probs = policy.action_probability_array[row]
          out[i, :self.iset_num_actions[i]] = probs[
              self.iset_actions[i, :self.iset_num_actions[i]]]
        else:
          out[i] = uniform[i]
      return out
    states = self._states()
    for i in range(self.num_infosets):
      state = states[i]
      probs = policy.action_probabilities(state, state.current_player())
      for k in range(self.iset_num_actions[i]):
        out[i, k] = probs.get(int(self.iset_actions[i, k]), 0.0)
    return out

  def _states(self) -> list[pyspiel.State]:
    """One state per infoset (replayed from the root)."""
    out = []
    for i in range(self.num_infosets):
      h = int(self.histories(i)[0])
      state = self.game.new_initial_state()
      for node, sl in zip(self.path_node[h], self.path_slot[h]):
        if node < 0:
          break
        if self.kind[node] == _CHANCE:
          state.apply_action(state.chance_outcomes()[sl][0])
        else:
          state.apply_action(int(self.iset_actions[self.infoset[node], sl]))
      out.append(state)
    return out

  def tabular_policy(self, probs: np.ndarray) -> os_policy.TabularPolicy:
    """An OpenSpiel TabularPolicy with `probs` at every infoset."""
    policy = os_policy.TabularPolicy(self.game)
    for i, key in enumerate(self.iset_keys):
      row = policy.state_lookup[key]
      policy.action_probability_array[row] = 0.0
      n = self.iset_num_actions[i]
      policy.action_probability_array[row, self.iset_actions[i, :n]] = (
          probs[i, :n])
    return policy

  # --- Passes --------------------------------------------------------------

  def edge_probs(self, probs: np.ndarray) -> np.ndarray:
    """[H] the probability of the edge into each history under `probs`
    (chance's probability after a chance node; 1 at the root)."""
    par = np.maximum(self.parent, 0)
    after_decision = (self.parent >= 0) & (self.kind[par] == _DECISION)
    out = self.chance_prob.copy()
    out[after_decision] = probs[self.infoset[par[after_decision]],
                                self.slot[after_decision]]
    return out

  def reach(self, edge: np.ndarray) -> np.ndarray:
    """[H] total reach (chance and both players), top-down by depth, from
    `edge_probs`."""
    pi = np.zeros(self.num_histories)
    pi[0] = 1.0
    b = self.level_bounds
    for d in range(1, len(b) - 1):
      lo, hi = b[d], b[d + 1]
      pi[lo:hi] = pi[self.parent[lo:hi]] * edge[lo:hi]
    return pi

  def values(self, edge: np.ndarray) -> np.ndarray:
    """[H] expected payoff below each history, bottom-up by depth, from
    `edge_probs`."""
    v = self.reward.copy()
    b = self.level_bounds
    for d in range(len(b) - 2, 0, -1):
      lo, hi = b[d], b[d + 1]
      plo, phi = b[d - 1], b[d]
      v[plo:phi] += np.bincount(self.parent[lo:hi] - plo,
                                weights=edge[lo:hi] * v[lo:hi],
                                minlength=phi - plo)
    return v

  def child_values(self, v: np.ndarray) -> np.ndarray:
    """[decision histories, A] v of each child (0 where none)."""
    kids = self.dec_child
    return np.where(kids >= 0, v[np.maximum(kids, 0)], 0.0)

  def value(self, probs: np.ndarray) -> float:
    """The game value of the joint policy `probs` [N, A]."""
    return float(self.values(self.edge_probs(probs))[0])


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
