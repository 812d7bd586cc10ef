"""The depth-limited solver (DESIGN.md section 12): the augmented game's CFR+
over the trunk, with the opponent's choice of continuation at the frontier
and, past the game's root, the re-solving gadget; the solver that builds the
continuation set and solves; and the values of a solved profile.

See the package docstring (`open_spiel_sog.algorithms.dls`) for the method.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np
import pyspiel
from open_spiel.python import policy as os_policy

from open_spiel_sog.algorithms.cfr import CFRConfig
from open_spiel_sog.algorithms.cfr import regret_matching
from open_spiel_sog.algorithms.cfr import reach_pass
from open_spiel_sog.algorithms.cfr import rows_dict
from open_spiel_sog.algorithms.cfr import SequenceCFR
from open_spiel_sog.algorithms.cfr import value_pass
from open_spiel_sog.algorithms.dls.policies import BiasedPolicy
from open_spiel_sog.algorithms.dls.policies import DictPolicy
from open_spiel_sog.algorithms.dls.policies import PolicyFn
from open_spiel_sog.algorithms.dls.policies import policy_dict
from open_spiel_sog.algorithms.dls.policies import _as_fn
from open_spiel_sog.algorithms.dls.policies import _FnPolicy
from open_spiel_sog.algorithms.dls.trunk import FRONTIERS
from open_spiel_sog.algorithms.dls.trunk import trunk_public_states
from open_spiel_sog.algorithms.dls.trunk import _descends
from open_spiel_sog.algorithms.dls.trunk import _Frontier
from open_spiel_sog.algorithms.dls.trunk import _Leaves
from open_spiel_sog.algorithms.dls.trunk import _leaves
from open_spiel_sog.public_state import PublicState
from open_spiel_sog.public_state import PublicStateObserver
from open_spiel_sog.public_state import PublicTree

STRATEGY_SETS = ("bias", "self_generative")


@dataclasses.dataclass(frozen=True)
class DLSConfig:
  """Options of depth-limited solving.

  Attributes:
    frontier: "round" (the chance public states that open a new round) or
      "depth" (`depth` public transitions below the subgame's root).
    depth: the frontier's depth when `frontier` is "depth".
    strategies: the opponent's continuation set: "bias" or
      "self_generative".
    k: how many continuation strategies (the blueprint counts as one); the
      bias set holds at most one per action class plus the blueprint.
    bias_factor: the bias set's scale of the favoured action class.
    iterations: CFR+ iterations of each depth-limited solve.
    cfr: the CFR+ options of the solves.
  """
  frontier: str = "round"
  depth: int = 4
  strategies: str = "self_generative"
  k: int = 4
  bias_factor: float = 10.0
  iterations: int = 1000
  cfr: CFRConfig = CFRConfig()

  def validate(self) -> None:
    if self.frontier not in FRONTIERS:
      raise ValueError(f"unknown frontier {self.frontier!r}; supported: "
                       f"{', '.join(map(repr, FRONTIERS))}")
    if self.depth < 1:
      raise ValueError(f"depth must be >= 1, got {self.depth}")
    if self.strategies not in STRATEGY_SETS:
      raise ValueError(f"unknown strategies {self.strategies!r}; supported: "
                       f"{', '.join(map(repr, STRATEGY_SETS))}")
    if self.k < 1:
      raise ValueError(f"k must be >= 1, got {self.k}")
    if not self.bias_factor > 0:
      raise ValueError(f"bias_factor must be > 0, got {self.bias_factor}")
    if self.iterations < 1:
      raise ValueError(f"iterations must be >= 1, got {self.iterations}")


class _DepthLimitedCFR(SequenceCFR):
  """CFR+ over the trunk with the opponent's leaf choice (and, past the
  game's root, the re-solving gadget) as extra regret-matching+ tables."""

  def __init__(self, tree: PublicTree, ranges, config: CFRConfig,
               searcher: int, leaves: _Leaves,
               gadget_values: np.ndarray | None):
    t = tree.terminals
    super().__init__(tree.players, (t.seq0, t.seq1), t.weight, ranges,
                     config)
    self.searcher = searcher
    self.leaves = leaves
    k = leaves.values.shape[1]
    shape = (leaves.num_rows, k)
    self.leaf_regrets = np.zeros(shape)
    self.leaf_uniform = np.full(shape, 1.0 / k)
    self.leaf_policy = self.leaf_uniform.copy()
    self.leaf_average = np.zeros(shape)
    self._leaf_q = np.zeros(shape)
    self._leaf_v = np.zeros(leaves.num_rows)
    self.gadget_values = gadget_values
    if gadget_values is not None:
      self.gadget_regrets = np.zeros((len(gadget_values), 2))
      self.follow_sum = np.zeros(len(gadget_values))
      self.follow_weight = 0.0
      self._set_follow()

  def _set_follow(self) -> None:
    follow = regret_matching(self.gadget_regrets,
                             np.full_like(self.gadget_regrets, 0.5))[:, 0]
    self.ranges[1 - self.searcher] = follow

  def direct_values(self, p: int, opponent_reach: np.ndarray) -> np.ndarray:
    # (float even where the trunk has no terminals: bincount of nothing.)
    v = super().direct_values(p, opponent_reach).astype(np.float64,
                                                          copy=False)
    lv = self.leaves
    if not len(lv.pair_row):
      return v
    if p == self.searcher:
      mixed = np.einsum("ik,ik->i", lv.values, self.leaf_policy[lv.pair_row])
      v += np.bincount(lv.pair_seq_s, weights=mixed *
                       opponent_reach[lv.pair_seq_o], minlength=len(v))
    else:
      q = -opponent_reach[lv.pair_seq_s][:, None] * lv.values
      self._leaf_q[:] = 0.0
      self._leaf_q[lv.rows_with_pairs] = np.add.reduceat(q, lv.row_starts,
                                                         axis=0)
      self._leaf_v = np.einsum("ik,ik->i", self._leaf_q, self.leaf_policy)
      v += np.bincount(lv.row_seq, weights=self._leaf_v, minlength=len(v))
    return v

  def _accumulate_average(self, p: int, rows) -> None:
    super()._accumulate_average(p, rows)
    if p == self.searcher:
      return
    t = float(max(self.group_iteration[0] - self.config.averaging_delay, 0))
    weight = t if self.config.linear_averaging else float(t > 0)
    if self.leaves.num_rows:
      self.leaf_average += (weight * self.reach[p][self.leaves.row_seq]
                            )[:, None] * self.leaf_policy
    if self.gadget_values is not None:
      self.follow_sum += weight * self.ranges[p]
      self.follow_weight += weight

  def _update_regrets(self, p: int, rows) -> np.ndarray:
    seq_values = super()._update_regrets(p, rows)
    if p == self.searcher:
      return seq_values
    if self.leaves.num_rows:
      self.leaf_regrets += self._leaf_q - self._leaf_v[:, None]
      np.maximum(self.leaf_regrets, 0.0, out=self.leaf_regrets)
    if self.gadget_values is not None:
      follow = self.ranges[p]
      cfv = seq_values[:self.arrays[p].num_root]
      mixed = follow * cfv + (1 - follow) * self.gadget_values
      self.gadget_regrets[:, 0] += cfv - mixed
      self.gadget_regrets[:, 1] += self.gadget_values - mixed
      np.maximum(self.gadget_regrets, 0.0, out=self.gadget_regrets)
      self._set_follow()
    return seq_values

  def _new_policy(self, p: int) -> None:
    super()._new_policy(p)
    if p != self.searcher and self.leaves.num_rows:
      self.leaf_policy = regret_matching(self.leaf_regrets,
                                         self.leaf_uniform)

  def leaf_average_policy(self) -> np.ndarray:
    total = self.leaf_average.sum(axis=1, keepdims=True)
    return np.where(total > 0, self.leaf_average / np.where(total > 0, total,
                                                            1.0),
                    self.leaf_uniform)

  def average_follow(self) -> np.ndarray | None:
    if self.gadget_values is None:
      return None
    return self.follow_sum / max(self.follow_weight, 1e-300)


@dataclasses.dataclass
class Solution:
  """A depth-limited solve's result.

  Attributes:
    searcher: the player the trunk strategy is for.
    tree: the trunk (`PublicTree` with the frontier unexpanded).
    policies: ([rows, A], [rows, A]) both players' average trunk policies.
    leaf_policy: [L, k] the opponent's average choice of continuation at
      each frontier infostate.
    ranges: both players' root ranges (the opponent's: its average gadget
      follow probabilities past the game's root).
    value: the searcher's expected value of the augmented game under the
      average profile (counterfactual value summed over its root range).
  """
  searcher: int
  tree: PublicTree
  policies: tuple[np.ndarray, np.ndarray]
  leaf_policy: np.ndarray
  ranges: tuple[np.ndarray, np.ndarray]
  value: float

  def policy_dict(self, player: int | None = None
                  ) -> dict[str, list[tuple[int, float]]]:
    """{information_state_string: [(action, p)]} of `player`'s (default:
    the searcher's) trunk rows."""
    player = self.searcher if player is None else player
    return rows_dict(self.tree.players[player], self.policies[player])

  def policy_at(self, ps: PublicState, player: int) -> np.ndarray:
    """[n, A] `player`'s trunk policy at decision public state `ps` (rows
    in infostate order)."""
    arrays = self.tree.players[player]
    rows = np.flatnonzero(arrays.row_public_state == ps.id)
    order = np.argsort(arrays.row_infostate[rows])
    return self.policies[player][rows[order]]


class DepthLimitedSolver:
  """Depth-limited solving for one searcher from one root public state.

  Example:
    solver = DepthLimitedSolver(game, searcher=0, blueprint=blueprint,
                                config=DLSConfig(frontier="round", k=4))
    solver.build_strategies()            # the bias or self-generative set
    solution = solver.solve()
    trunk = solution.policy_dict()       # the searcher's trunk strategy
  """

  def __init__(self, game: pyspiel.Game, searcher: int,
               blueprint: os_policy.Policy | PolicyFn,
               config: DLSConfig | None = None, *,
               root: PublicState | None = None,
               ranges: Sequence[np.ndarray] | None = None,
               gadget_values: np.ndarray | None = None,
               observer: PublicStateObserver | None = None):
    """Builds the trunk and the frontier subtrees.

    Args:
      game: the game.
      searcher: the player whose trunk strategy is solved for.
      blueprint: the policy both players' continuation values assume for
        the searcher below the frontier (and the first continuation of the
        opponent).
      config: DLSConfig.
      root: the subgame's root public state (default: the game's root).
      ranges: both players' ranges at `root` (default: ones).
      gadget_values: the opponent's stored counterfactual values at its
        root infostates (on the scale of the searcher's range there): the
        re-solving gadget lets the opponent take them instead of entering;
        its root range is then the gadget's follow probabilities.
      observer: the public state observer of `root` (or a new one).
    """
    self.config = config or DLSConfig()
    self.config.validate()
    if searcher not in (0, 1):
      raise ValueError(f"searcher must be 0 or 1, got {searcher}")
    self.game = game
    self.searcher = searcher
    self.blueprint = blueprint
    self._blueprint_fn = _as_fn(blueprint)
    if root is None:
      observer = observer or PublicStateObserver(game)
      root = observer.root()
    self.root = root
    o = 1 - searcher
    if ranges is None:
      ranges = [np.ones(root.num_infostates(p)) for p in range(2)]
    self.ranges = [np.asarray(r, dtype=np.float64) for r in ranges]
    if gadget_values is not None:
      gadget_values = np.asarray(gadget_values, dtype=np.float64)
      if gadget_values.shape != (root.num_infostates(o),):
        raise ValueError(
            f"gadget values have shape {gadget_values.shape}; the root has "
            f"{root.num_infostates(o)} infostates of player {o}")
    self.gadget_values = gadget_values
    self.tree = PublicTree(root, trunk_public_states(
        root, self.config.frontier, self.config.depth))
    self.frontiers = [_Frontier(ps, searcher, self._blueprint_fn)
                      for ps in self.tree.frontier]
    self.strategies: list[PolicyFn] = []
    self._values: list[list[np.ndarray]] = [[] for _ in self.frontiers]
    self.solution: Solution | None = None
    self._reach_of: Solution | None = None  # the solution _reach_cache is of
    self._reach_cache: list[np.ndarray] = []

  @property
  def k(self) -> int:
    return len(self.strategies)

  def add_strategy(self, strategy: os_policy.Policy | PolicyFn) -> None:
    """Adds an opponent continuation strategy (a whole-game policy; only
    its part below the frontier matters)."""
    fn = _as_fn(strategy)
    self.strategies.append(fn)
    for i, f in enumerate(self.frontiers):
      self._values[i].append(f.values(fn))

  def leaf_values(self) -> dict[int, np.ndarray]:
    """{frontier public state id: [n_searcher, n_opponent, k] W}."""
    return {f.ps.id: np.stack(v, axis=2)
            for f, v in zip(self.frontiers, self._values)}

  def solve(self, iterations: int | None = None) -> Solution:
    """Solves the augmented game with the strategies added so far (the
    blueprint alone if none) by CFR+ from scratch."""
    if not self.strategies:
      self.add_strategy(self._blueprint_fn)
    iterations = self.config.iterations if iterations is None else iterations
    leaves = _leaves(self.tree, self.searcher, self.leaf_values())
    cfr = _DepthLimitedCFR(self.tree, [r.copy() for r in self.ranges],
                           self.config.cfr, self.searcher, leaves,
                           self.gadget_values)
    cfr.run(iterations)
    policies = (cfr.average_policy(0), cfr.average_policy(1))
    ranges = [r.copy() for r in self.ranges]
    follow = cfr.average_follow()
    if follow is not None:
      ranges[1 - self.searcher] = follow
    leaf_policy = cfr.leaf_average_policy()
    values = _profile_values(self.tree, leaves, self.searcher, policies,
                             leaf_policy, ranges)
    value = float(values[self.searcher] @ ranges[self.searcher])
    self.solution = Solution(searcher=self.searcher, tree=self.tree,
                             policies=policies, leaf_policy=leaf_policy,
                             ranges=(ranges[0], ranges[1]), value=value)
    self._leaves = leaves
    return self.solution

  def _reaches(self) -> list[np.ndarray]:
    sol = self.solution
    if sol is None:
      raise ValueError("a depth-limited solver has no ranges before a solve")
    if self._reach_of is not sol:
      self._reach_cache = [
          reach_pass(self.tree.players[p], sol.policies[p], sol.ranges[p],
                     np.zeros(self.tree.players[p].num_sequences))
          for p in range(2)]
      self._reach_of = sol
    return self._reach_cache

  def resolve_root(self, ps: PublicState) -> PublicState:
    """The deepest public state on the way to `ps` that the trunk holds
    with a positive range of the searcher (the root at worst)."""
    ids = {x.id for x in self.tree.public_states}
    reach = self._reaches()[self.searcher]
    node = ps
    while node is not None and node is not self.root:
      if node.id in ids and reach[self.tree.entry_seqs(self.searcher,
                                                        node)].sum() > 0:
        return node
      node = node.parent
    if node is None:
      raise ValueError(f"{ps.describe()} is not below the solver's root "
                       f"{self.root.describe()}")
    return self.root

  def summary(self, ps: PublicState
              ) -> tuple[tuple[np.ndarray, np.ndarray],
                         tuple[np.ndarray, np.ndarray]]:
    """Both players' ranges and counterfactual values at trunk public
    state `ps` under the last solution's average profile: the searcher's
    with the opponent on its average policy and continuation choice, the
    opponent's those of its best response to the searcher's trunk strategy
    (best continuation at each frontier infostate). What re-solving from
    `ps` needs: the searcher's range and the opponent's gadget values
    (best-response values, as in CFR-D's re-solving: the opponent's average
    policy is unreliable where its own reach is small)."""
    sol = self.solution
    if sol is None:
      raise ValueError("summary needs a solve first")
    ids = {x.id for x in self.tree.public_states}
    if ps.id not in ids:
      raise ValueError(f"{ps.describe()} is not in the trunk")
    reaches = self._reaches()
    ranges = [reaches[p][self.tree.entry_seqs(p, ps)] for p in range(2)]
    sub = PublicTree(ps, [x for x in self.tree.public_states
                          if _descends(x, ps)])
    policies = []
    for p in range(2):
      full, part = self.tree.players[p], sub.players[p]
      row_of = {(int(a), int(b)): r for r, (a, b) in enumerate(
          zip(full.row_public_state, full.row_infostate))}
      rows = [row_of[(int(a), int(b))] for a, b in zip(
          part.row_public_state, part.row_infostate)]
      policies.append(sol.policies[p][rows] if rows else
                      np.zeros((0, part.max_actions)))
      # (A subtree's rows are at most as wide as the trunk's.)
      policies[p] = policies[p][:, :part.max_actions]
    w = self.leaf_values()
    leaves = _leaves(sub, self.searcher, {f.id: w[f.id] for f in sub.frontier})
    full_leaves = self._leaves
    leaf_of = {(int(a), int(b)): r for r, (a, b) in enumerate(
        zip(full_leaves.row_public_state, full_leaves.row_infostate))}
    leaf_rows = [leaf_of[(int(a), int(b))] for a, b in zip(
        leaves.row_public_state, leaves.row_infostate)]
    leaf_policy = (sol.leaf_policy[leaf_rows] if leaf_rows else
                   np.zeros((0, sol.leaf_policy.shape[1])))
    values = _profile_values(sub, leaves, self.searcher, policies,
                             leaf_policy, ranges, respond=True)
    return (ranges[0], ranges[1]), values

  # --- Strategy sets ---------------------------------------------------------

  def opponent_actions(self) -> list[int]:
    """The opponent's distinct legal actions below the frontier (the bias
    set's action classes), sorted."""
    o = 1 - self.searcher
    actions = set()
    for f in self.frontiers:
      arrays = f.tree.players[o]
      actions.update(int(a) for a in np.unique(arrays.row_actions) if a >= 0)
    return sorted(actions)

  def build_strategies(self, kind: str | None = None, k: int | None = None,
                       action_classes: Sequence[Sequence[int]] | None = None
                       ) -> Solution:
    """Builds the continuation set (`config.strategies`, `config.k` unless
    given) and returns the solve with it. The blueprint comes first.

    bias: one strategy per action class (default: each of the opponent's
    actions below the frontier on its own), in order, up to k - 1.
    self_generative: adds OpenSpiel's best response of the opponent to the
    searcher's composite strategy (trunk solution, blueprint elsewhere),
    re-solving after each, until there are k.
    """
    kind = kind or self.config.strategies
    k = self.config.k if k is None else k
    if kind not in STRATEGY_SETS:
      raise ValueError(f"unknown strategies {kind!r}; supported: "
                       f"{', '.join(map(repr, STRATEGY_SETS))}")
    if not self.strategies:
      self.add_strategy(self._blueprint_fn)
    if kind == "bias":
      classes = (action_classes if action_classes is not None else
                 [[a] for a in self.opponent_actions()])
      # (Incremental: the set so far is the blueprint and the first
      # classes.)
      for actions in classes[len(self.strategies) - 1:k - 1]:
        self.add_strategy(BiasedPolicy(self._blueprint_policy(), actions,
                                       self.config.bias_factor))
      return self.solve()
    solution = self.solve()
    while len(self.strategies) < k:
      self.add_strategy(self.best_response(solution))
      solution = self.solve()
    return solution

  def _blueprint_policy(self) -> os_policy.Policy:
    if isinstance(self.blueprint, os_policy.Policy):
      return self.blueprint
    return _FnPolicy(self.game, self._blueprint_fn)

  def composite_dict(self, solution: Solution | None = None
                     ) -> dict[str, list[tuple[int, float]]]:
    """The searcher's composite strategy over the whole game: the trunk
    solution, the blueprint everywhere else (both players' entries)."""
    solution = solution or self.solution
    table = policy_dict(self._blueprint_policy(), self.game)
    table.update(solution.policy_dict())
    return table

  def best_response(self, solution: Solution | None = None) -> DictPolicy:
    """OpenSpiel's (C++ TabularBestResponse) best response of the opponent
    to the searcher's composite strategy, as a pure policy."""
    br = pyspiel.TabularBestResponse(self.game, 1 - self.searcher,
                                     self.composite_dict(solution))
    return DictPolicy(self.game, dict(br.get_best_response_actions()))


def _profile_values(tree: PublicTree, leaves: _Leaves, searcher: int,
                    policies, leaf_policy: np.ndarray, ranges,
                    respond: bool = False
                    ) -> tuple[np.ndarray, np.ndarray]:
  """Both players' counterfactual values at the root infostates of
  `tree` under `policies`, the leaves valued with the opponent's
  continuation choice `leaf_policy`; with `respond`, the opponent's are its
  best response's instead (best actions in the trunk, best continuation
  at each leaf infostate)."""
  s = searcher
  reaches = [reach_pass(tree.players[p], policies[p], ranges[p],
                        np.zeros(tree.players[p].num_sequences))
             for p in range(2)]
  t = tree.terminals
  seqs = (t.seq0, t.seq1)
  out = []
  for p in range(2):
    arrays = tree.players[p]
    sign = 1.0 if p == 0 else -1.0
    direct = np.bincount(seqs[p], weights=sign * t.weight *
                         reaches[1 - p][seqs[1 - p]],
                         minlength=arrays.num_sequences).astype(np.float64)
    if len(leaves.pair_row):
      mixed = np.einsum("ik,ik->i", leaves.values,
                        leaf_policy[leaves.pair_row])
      if p == s:
        direct += np.bincount(leaves.pair_seq_s, weights=mixed *
                              reaches[1 - p][leaves.pair_seq_o],
                              minlength=len(direct))
      elif respond:
        q = np.zeros((leaves.num_rows, leaves.values.shape[1]))
        q[leaves.rows_with_pairs] = np.add.reduceat(
            -reaches[s][leaves.pair_seq_s][:, None] * leaves.values,
            leaves.row_starts, axis=0)
        direct += np.bincount(leaves.row_seq, weights=q.max(axis=1),
                              minlength=len(direct))
      else:
        direct -= np.bincount(leaves.pair_seq_o, weights=mixed *
                              reaches[1 - p][leaves.pair_seq_s],
                              minlength=len(direct))
    best = (np.ones(arrays.num_rows, dtype=bool) if respond and p != s
            else None)
    seq_values, _ = value_pass(arrays, policies[p], direct, best)
    out.append(seq_values[:arrays.num_root].copy())
  return out[0], out[1]
