"""Many leaf subgames solved at once to a tolerance (the exact value function).

A GT-CFR search queries every leaf of its tree at each update, and the exact
value function must solve each query until the leaf subgame's exploitability
under the queried ranges is within a tolerance. Leaf subgames are small, so
solving them one by one costs mostly numpy's per-call overhead. Here the
subgames of one batch are laid side by side as one forest, compiled into the
same sequence arrays PublicTreeCFR uses (`public_state/tree.py`: roots first,
rows level by level), and one CFR+ iteration is one set of reach and value
passes over all of them (PublicTreeCFR's own iterations, `SequenceCFR`, with
one group of rows per subgame). Each subgame is checked
(`LeafSolution.exploitability`) after 0, 1, 3, 7, 15 and then every 16
iterations, and frozen as soon as it is within the tolerance: its regrets
and average stop changing, so the profile it returns is the one that passed,
the same profile it would reach solved alone.

Warm starts: each public state keeps its regrets and average between batches.
A query first checks the kept profile under its new ranges; a subgame that
fails keeps its regrets and averages afresh (an average built under other
ranges moves too slowly: iteration t weighs t). Each player's range is scaled
to sum 1 for the solve (the equilibrium does not change; the kept regrets
stay in the units of the next query) and the values are scaled back.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np

from open_spiel_sog.algorithms.cfr import best_actions
from open_spiel_sog.algorithms.cfr import CFRConfig
from open_spiel_sog.algorithms.cfr import reach_pass
from open_spiel_sog.algorithms.cfr import SequenceCFR
from open_spiel_sog.algorithms.cfr import value_pass
from open_spiel_sog.public_state import PublicState
from open_spiel_sog.public_state import PlayerArrays
from open_spiel_sog.public_state import PublicTree


@dataclasses.dataclass
class LeafState:
  """What a public state's subgame keeps between queries (warm start).

  Attributes:
    tree: the compiled subtree under the public state.
    regrets: per player, [rows, A] regrets (None before the first solve).
    average: per player, [rows, A] average-policy numerators.
    iteration: iterations since the average was last restarted (the linear
      averaging weight of the next one is iteration + 1).
  """
  tree: PublicTree
  regrets: list[np.ndarray | None] = dataclasses.field(
      default_factory=lambda: [None, None])
  average: list[np.ndarray | None] = dataclasses.field(
      default_factory=lambda: [None, None])
  iteration: int = 0


@dataclasses.dataclass(frozen=True)
class LeafSolution:
  """One query's solution.

  Attributes:
    values: (v0, v1) counterfactual values of each player's infostates at the
      public state, in the query's units, under the subgame's profile: the
      average profile, completed by a counterfactual best response to the
      opponent's average wherever a player's own reach is zero.
    exploitability: NashConv / 2 of that profile in the subgame under the
      query's ranges, divided by the ranges' reach mass (sum over histories
      of chance reach * r0 * r1; 0 when that is 0), in utility units.
    iterations: CFR+ iterations run for this query.
    capped: whether the query stopped at the iteration cap.
    root_policy: [n_q, A] the profile's policy of the acting player's
      infostates at the public state (rows in infostate order, columns the
      positions of `root_actions`), or None at chance nodes.
    root_actions: [n_q, A] action ids of those columns (-1 where padded).
    profile: {information_state_string: [(action, probability), ...]} of
      the whole subgame, when asked for (`solve(..., profiles=True)`).
  """
  values: tuple[np.ndarray, np.ndarray]
  exploitability: float
  iterations: int
  capped: bool
  root_policy: np.ndarray | None
  root_actions: np.ndarray | None
  profile: dict[str, list[tuple[int, float]]] | None = None


@dataclasses.dataclass(frozen=True)
class _ForestPlayer:
  """One player's sequence arrays over a forest of subgames.

  `arrays` is a PlayerArrays over all subgames (its entry fields are empty:
  a forest has no public states of its own); the rest maps each subgame's
  own numbering into it."""
  arrays: PlayerArrays
  row_leaf: np.ndarray  # [rows] subgame of each row
  root_leaf: np.ndarray  # [R] subgame of each root sequence
  root_start: np.ndarray  # [K + 1] subgame k's roots are [start[k], start[k+1])
  new_rows: tuple[np.ndarray, ...]  # per subgame: [rows_k] its rows here
  seq_maps: tuple[np.ndarray, ...]  # per subgame: [S_k] its sequences here


def _assemble_player(trees: Sequence[PublicTree], p: int) -> _ForestPlayer:
  parts = [t.players[p] for t in trees]
  num_root = np.asarray([a.num_root for a in parts], dtype=np.int64)
  root_start = np.concatenate([[0], np.cumsum(num_root)])
  total_root = int(root_start[-1])
  width = max(a.max_actions for a in parts)
  row_counts = np.asarray([a.num_rows for a in parts], dtype=np.int64)
  row_start = np.concatenate([[0], np.cumsum(row_counts)])
  num_rows = int(row_start[-1])
  levels = np.concatenate(
      [np.repeat(np.arange(a.num_levels), np.diff(a.level_bounds))
       for a in parts]).astype(np.int64)
  # Forest rows: level by level, then subgame by subgame (stable).
  order = np.argsort(levels, kind="stable")
  new_of_old = np.empty(num_rows, dtype=np.int64)
  new_of_old[order] = np.arange(num_rows)
  num_levels = max(a.num_levels for a in parts)
  level_bounds = np.searchsorted(levels[order], np.arange(num_levels + 1))
  row_parent_seq = np.empty(num_rows, dtype=np.int64)
  legal_mask = np.zeros((num_rows, width), dtype=bool)
  row_actions = np.full((num_rows, width), -1, dtype=np.int64)
  new_rows, seq_maps = [], []
  for k, a in enumerate(parts):
    rows = new_of_old[row_start[k]:row_start[k + 1]]
    row_seqs = (total_root + rows[:, None] * width +
                np.arange(a.max_actions)[None, :]).reshape(-1)
    seq_map = np.concatenate([root_start[k] + np.arange(a.num_root),
                              row_seqs]).astype(np.int64)
    row_parent_seq[rows] = seq_map[a.row_parent_seq]
    legal_mask[rows, :a.max_actions] = a.legal_mask
    row_actions[rows, :a.max_actions] = a.row_actions
    new_rows.append(rows)
    seq_maps.append(seq_map)
  level_order, level_parents, level_starts = [], [], []
  for l in range(num_levels):
    parents = row_parent_seq[level_bounds[l]:level_bounds[l + 1]]
    perm = np.argsort(parents, kind="stable")
    unique, starts = np.unique(parents[perm], return_index=True)
    level_order.append(perm)
    level_parents.append(unique)
    level_starts.append(starts)
  empty = np.zeros(0, dtype=np.int64)
  arrays = PlayerArrays(
      num_root=total_root, num_rows=num_rows, max_actions=width,
      row_parent_seq=row_parent_seq,
      level_bounds=level_bounds.astype(np.int64), legal_mask=legal_mask,
      row_actions=row_actions, row_public_state=empty, row_infostate=empty,
      row_infostate_string=(), level_order=tuple(level_order),
      level_parents=tuple(level_parents), level_starts=tuple(level_starts),
      entry_public_state=empty, entry_infostate=empty, entry_seq=empty,
      entry_start=np.zeros(1, dtype=np.int64))
  row_leaf = np.repeat(np.arange(len(parts)), row_counts)[order]
  return _ForestPlayer(
      arrays=arrays, row_leaf=row_leaf,
      root_leaf=np.repeat(np.arange(len(parts)), num_root),
      root_start=root_start, new_rows=tuple(new_rows),
      seq_maps=tuple(seq_maps))


class Forest:
  """The subgames under a list of public states as one set of arrays."""

  def __init__(self, public_states: Sequence[PublicState],
               trees: Sequence[PublicTree]):
    self.public_states = list(public_states)
    self.trees = list(trees)
    self.players = (_assemble_player(trees, 0), _assemble_player(trees, 1))
    # Terminal payoffs: one sparse matrix over the forest's sequence pairs.
    s0, s1, w = [], [], []
    for k, tree in enumerate(trees):
      t = tree.terminals
      s0.append(self.players[0].seq_maps[k][t.seq0])
      s1.append(self.players[1].seq_maps[k][t.seq1])
      w.append(t.weight)
    self.terminal_seqs = (np.concatenate(s0), np.concatenate(s1))
    self.terminal_weight = np.concatenate(w)
    # The root histories, for each subgame's reach mass.
    self.history_leaf = np.concatenate(
        [np.full(len(ps.histories), k) for k, ps in enumerate(public_states)])
    self.history_chance = np.concatenate(
        [ps.chance_reach for ps in public_states])
    self.history_root = tuple(
        np.concatenate([self.players[p].root_start[k] +
                        ps.history_infostate[p]
                        for k, ps in enumerate(public_states)])
        for p in range(2))
    # The acting player's rows at each public state, in infostate order.
    self.root_rows = []
    for k, (ps, tree) in enumerate(zip(public_states, trees)):
      if not ps.is_player_node():
        self.root_rows.append(None)
        continue
      q = ps.current_player()
      a = tree.players[q]
      rows = np.nonzero(a.row_public_state == ps.id)[0]
      rows = rows[np.argsort(a.row_infostate[rows])]
      self.root_rows.append(self.players[q].new_rows[k][rows])

  def __len__(self) -> int:
    return len(self.public_states)


def _start(forest: Forest, states: Sequence[LeafState],
           ranges: Sequence[Sequence[np.ndarray]],
           config: CFRConfig) -> SequenceCFR:
  """CFR+ over the forest, each subgame from its warm state."""
  cfr = SequenceCFR(
      [fp.arrays for fp in forest.players], forest.terminal_seqs,
      forest.terminal_weight,
      [np.concatenate([r[p] for r in ranges]) for p in range(2)], config,
      row_groups=[fp.row_leaf for fp in forest.players],
      num_groups=len(forest))
  if any(s.regrets[0] is not None for s in states):
    regrets, average = [], []
    for p in range(2):
      fp = forest.players[p]
      regrets.append(np.zeros_like(cfr.regrets[p]))
      average.append(np.zeros_like(cfr.average[p]))
      for leaf, state in enumerate(states):
        if state.regrets[p] is not None:
          width = state.regrets[p].shape[1]
          regrets[p][fp.new_rows[leaf], :width] = state.regrets[p]
          average[p][fp.new_rows[leaf], :width] = state.average[p]
    cfr.set_regrets(regrets, average)
  cfr.group_iteration[:] = [s.iteration for s in states]
  return cfr


def _solution(forest: Forest, cfr: SequenceCFR):
  """(completed profile [rows, A] per player, root values [R] per player,
  exploitability [K]) of the average profile (see LeafSolution)."""
  average = [cfr.average_policy(p) for p in range(2)]
  reaches = [reach_pass(fp.arrays, average[p], cfr.ranges[p],
                        np.zeros(fp.arrays.num_sequences))
             for p, fp in enumerate(forest.players)]
  k = len(forest)
  nash_conv = np.zeros(k)
  policies, values = [], []
  for p, fp in enumerate(forest.players):
    a = fp.arrays
    direct = cfr.direct_values(p, reaches[1 - p])
    # The best response to the opponent's average everywhere ...
    br_seq, _ = value_pass(a, average[p], direct.copy(),
                           respond=np.ones(a.num_rows, dtype=bool))
    nash_conv += np.bincount(fp.root_leaf, minlength=k,
                             weights=cfr.ranges[p] * br_seq[:a.num_root])
    # ... and the average, completed by it where p's own reach is zero.
    unreached = reaches[p][a.row_parent_seq] <= 0.0
    seq, _ = value_pass(a, average[p], direct, respond=unreached)
    values.append(seq[:a.num_root].copy())
    policies.append(np.where(unreached[:, None], best_actions(a, br_seq),
                             average[p]))
  mass = np.bincount(
      forest.history_leaf, minlength=k,
      weights=forest.history_chance * cfr.ranges[0][forest.history_root[0]] *
      cfr.ranges[1][forest.history_root[1]])
  exploitability = np.where(
      mass > 0, np.maximum(nash_conv, 0.0) / 2 / np.where(mass > 0, mass, 1),
      0.0)
  return policies, values, exploitability


def _store(forest: Forest, cfr: SequenceCFR,
           states: Sequence[LeafState]) -> None:
  """Writes each subgame's regrets, average and iteration back."""
  for leaf, state in enumerate(states):
    for p, fp in enumerate(forest.players):
      width = state.tree.players[p].max_actions
      rows = fp.new_rows[leaf]
      state.regrets[p] = cfr.regrets[p][rows, :width]
      state.average[p] = cfr.average[p][rows, :width]
    state.iteration = int(cfr.group_iteration[leaf])


# Checks come after 0, 1, 2, 4, ... iterations, then every 16: a check costs
# about one iteration, and on Leduc's leaves unbounded doubling ran about a
# quarter more iterations than needed.
_MAX_CHECK_INTERVAL = 16


def solve(forest: Forest, states: Sequence[LeafState],
          ranges: Sequence[Sequence[np.ndarray]], *, tolerance: float,
          max_iterations: int, config: CFRConfig | None = None,
          profiles: bool = False) -> list[LeafSolution]:
  """Solves every subgame of `forest` under its ranges to `tolerance`.

  Args:
    forest: the subgames.
    states: each subgame's warm state (updated in place).
    ranges: each subgame's (r0, r1), in the query's units.
    tolerance: the exploitability (utility units, conditional on reaching the
      subgame) each subgame's profile must reach.
    max_iterations: iterations after which a subgame stops where it is.
    config: CFR+ options (PublicTreeCFR's).
    profiles: also return each subgame's whole profile as a dict.

  Returns:
    One LeafSolution per subgame.
  """
  config = config or CFRConfig()
  norms, scaled = [], []
  for r in ranges:
    r = [np.asarray(x, dtype=np.float64) for x in r]
    n = [float(x.sum()) or 1.0 for x in r]
    norms.append(n)
    scaled.append([x / m for x, m in zip(r, n)])
  cfr = _start(forest, states, scaled, config)
  k = len(forest)
  iterations = np.zeros(k, dtype=np.int64)
  policies, values, exploitability = _solution(forest, cfr)
  passed = exploitability <= tolerance
  cfr.restart_average(~passed & (cfr.group_iteration > 0))
  cfr.active = ~passed
  run, step = 0, 1
  while cfr.active.any() and run < max_iterations:
    step = min(step, max_iterations - run)
    cfr.run(step)
    iterations[cfr.active] += step
    run += step
    step = min(2 * step, _MAX_CHECK_INTERVAL)
    policies, values, exploitability = _solution(forest, cfr)
    cfr.active &= exploitability > tolerance
  capped = cfr.active.copy()
  _store(forest, cfr, states)
  out = []
  for leaf in range(k):
    leaf_values = []
    for p in range(2):
      fp = forest.players[p]
      lo, hi = fp.root_start[leaf], fp.root_start[leaf + 1]
      leaf_values.append(values[p][lo:hi] * norms[leaf][1 - p])
    root_policy = root_actions = None
    rows = forest.root_rows[leaf]
    if rows is not None:
      q = forest.public_states[leaf].current_player()
      root_policy = policies[q][rows]
      root_actions = forest.players[q].arrays.row_actions[rows]
    profile = None
    if profiles:
      profile = _profile(forest, leaf, policies)
    out.append(LeafSolution(
        values=(leaf_values[0], leaf_values[1]),
        exploitability=float(exploitability[leaf]),
        iterations=int(iterations[leaf]), capped=bool(capped[leaf]),
        root_policy=root_policy, root_actions=root_actions, profile=profile))
  return out


def _profile(forest: Forest, leaf: int, policies) -> dict:
  out = {}
  for p in range(2):
    own = forest.trees[leaf].players[p]
    rows = forest.players[p].new_rows[leaf]
    for i, infostate in enumerate(own.row_infostate_string):
      k = int(own.legal_mask[i].sum())
      out[infostate] = list(zip(own.row_actions[i, :k].tolist(),
                                policies[p][rows[i], :k].tolist()))
  return out
