"""Depth-limited solving with multi-valued states (DESIGN.md section 12).

Brown, Sandholm and Amos, "Depth-Limited Solving for Imperfect-Information
Games" (NeurIPS 2018). A searcher solves the public tree from a root down to
a frontier (the *trunk*) against an opponent who, at each frontier public
state and per opponent infostate there, chooses one of k continuation
strategies for the rest of the game; below the frontier the searcher plays a
fixed blueprint. The opponent's choice makes the searcher robust to the
opponent adapting below the depth limit (Proposition 1: with every pure
continuation the trunk strategy is the one of a full solve with the searcher
frozen to the blueprint below the frontier).

* Leaf values. For frontier public state F, continuation j and each pair of
  infostates (a of the searcher, b of the opponent) at F: W_F[a, b, j], the
  sum over F's histories in (a, b) of chance reach times the searcher's
  expected utility with the searcher on the blueprint and the opponent on
  strategy j below F (later chance included). They come from F's subtree
  compiled as a `PublicTree`: one reach pass per player (root ranges one)
  and the terminal payoff matrix summed onto root infostate pairs.
* The augmented game. Exactly the trunk's CFR+ (`SequenceCFR`: the same
  reach and value passes), plus one regret-matching+ table of shape
  [opponent infostates at the frontier, k] for the opponent's choice, whose
  counterfactual values are the leaf values weighted by the searcher's
  reach. The choice is per opponent infostate, never per history.
* Strategy sets. "bias": the blueprint, then the blueprint with one action
  (class) scaled by `bias_factor` and renormalised, one per class.
  "self_generative": the blueprint, then repeatedly OpenSpiel's best response
  of the opponent to the searcher's current composite strategy (its trunk
  solution, the blueprint elsewhere), re-solving after each addition.
* Frontiers. "depth": the public states `depth` public transitions below the
  root (chance steps included). "round": the chance public states below the
  root that follow a decision (a new betting round, e.g. Leduc's public
  card); a game with none is solved to its end.
* Re-solving. A subgame rooted past the game's root takes the searcher's
  range there and, for the opponent, the safe re-solving gadget (Burch,
  Johanson and Bowling; DESIGN.md section 6 with alpha = 1): per opponent
  root infostate, terminate with a stored counterfactual value or follow
  into the subgame, chosen by regret matching+.

`depth_limited_exploitability` scores the composite of both seats' trunk
strategies (blueprint below the frontier) with OpenSpiel's exploitability.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Callable, Sequence

import numpy as np
import pyspiel
from open_spiel.python import policy as os_policy

from open_spiel_sog.algorithms.cfr import CFRConfig
from open_spiel_sog.algorithms.cfr import PublicTreeCFR
from open_spiel_sog.algorithms.cfr import regret_matching
from open_spiel_sog.algorithms.cfr import reach_pass
from open_spiel_sog.algorithms.cfr import rows_dict
from open_spiel_sog.algorithms.cfr import SequenceCFR
from open_spiel_sog.algorithms.cfr import value_pass
from open_spiel_sog.public_state import PublicState
from open_spiel_sog.public_state import PublicStateObserver
from open_spiel_sog.public_state import PlayerArrays
from open_spiel_sog.public_state import PublicTree

FRONTIERS = ("round", "depth")
STRATEGY_SETS = ("bias", "self_generative")

# A policy as OpenSpiel's `Policy.action_probabilities` returns it.
PolicyFn = Callable[[pyspiel.State, int], dict]


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


def compute_blueprint(game: pyspiel.Game, iterations: int,
                      config: CFRConfig | None = None
                      ) -> os_policy.TabularPolicy:
  """`PublicTreeCFR(game).run(iterations).average_policy()`."""
  if iterations < 1:
    raise ValueError(f"blueprint iterations must be >= 1, got {iterations}")
  solver = PublicTreeCFR(game, config=config)
  solver.run(iterations)
  return solver.average_policy()


# --- Policies ----------------------------------------------------------------


class DictPolicy(os_policy.Policy):
  """An OpenSpiel policy from {information_state_string: [(action, p)]} (or
  {information_state_string: action} for a pure one); infostates it lacks
  get `default` (another policy) or raise."""

  def __init__(self, game: pyspiel.Game, table: dict,
               default: os_policy.Policy | None = None):
    super().__init__(game, list(range(game.num_players())))
    self.table = table
    self.default = default

  def action_probabilities(self, state, player_id=None):
    player = state.current_player() if player_id is None else player_id
    key = state.information_state_string(player)
    entry = self.table.get(key)
    if entry is None:
      if self.default is None:
        raise KeyError(f"policy has no entry for infostate {key!r}")
      return self.default.action_probabilities(state, player)
    if isinstance(entry, (int, np.integer)):
      return {int(entry): 1.0}
    return {int(a): float(p) for a, p in entry}


class BiasedPolicy(os_policy.Policy):
  """`base` with the probability of `actions` (one action class) scaled by
  `factor` and renormalised (the bias approach's continuation strategy)."""

  def __init__(self, base: os_policy.Policy, actions: Sequence[int],
               factor: float):
    super().__init__(base.game, base.player_ids)
    self.base = base
    self.actions = frozenset(int(a) for a in actions)
    self.factor = float(factor)

  def action_probabilities(self, state, player_id=None):
    probs = self.base.action_probabilities(state, player_id)
    scaled = {a: p * (self.factor if a in self.actions else 1.0)
              for a, p in probs.items()}
    total = sum(scaled.values())
    if not total > 0:
      return probs
    return {a: p / total for a, p in scaled.items()}


def policy_dict(policy: os_policy.Policy, game: pyspiel.Game
                ) -> dict[str, list[tuple[int, float]]]:
  """{information_state_string: [(action, probability)]} of `policy` at
  every decision of the game (a TabularPolicy's table is read directly)."""
  if isinstance(policy, os_policy.TabularPolicy):
    out = {}
    for key, index in policy.state_lookup.items():
      probs = policy.action_probability_array[index]
      legal = np.flatnonzero(policy.legal_actions_mask[index])
      out[key] = [(int(a), float(probs[a])) for a in legal]
    return out
  tabular = os_policy.TabularPolicy(game)
  out = {}
  for key, index in tabular.state_lookup.items():
    state = tabular.states[index]
    probs = policy.action_probabilities(state, state.current_player())
    out[key] = [(int(a), float(probs.get(a, 0.0)))
                for a in state.legal_actions()]
  return out


def _row_policy(tree: PublicTree, player: int, policy: PolicyFn | None
                ) -> np.ndarray:
  """[rows, A] `policy` at each of `player`'s rows of `tree` (read at one
  history of the row's infostate); uniform where `policy` is None."""
  arrays = tree.players[player]
  legal = arrays.legal_mask
  uniform = np.where(legal, 1.0 / np.maximum(legal.sum(1, keepdims=True), 1),
                     0.0)
  if policy is None or arrays.num_rows == 0:
    return uniform
  by_id = {ps.id: ps for ps in tree.public_states}
  out = np.zeros_like(uniform)
  for r in range(arrays.num_rows):
    ps = by_id[int(arrays.row_public_state[r])]
    h = int(np.argmax(ps.history_infostate[player] ==
                      arrays.row_infostate[r]))
    probs = policy(ps.histories[h], player)
    for k, a in enumerate(arrays.row_actions[r]):
      if a >= 0:
        out[r, k] = probs.get(int(a), 0.0)
  total = out.sum(axis=1, keepdims=True)
  if np.any(total <= 0):
    bad = arrays.row_infostate_string[int(np.flatnonzero(total <= 0)[0])]
    raise ValueError(f"policy gives no probability to a legal action at "
                     f"infostate {bad!r}")
  return out / total


def _as_fn(policy: os_policy.Policy | PolicyFn) -> PolicyFn:
  if isinstance(policy, os_policy.Policy):
    return policy.action_probabilities
  return policy


def _root_ancestors(arrays: PlayerArrays) -> np.ndarray:
  """[S] the root sequence (root infostate) above each sequence."""
  anc = np.zeros(arrays.num_sequences, dtype=np.int64)
  anc[:arrays.num_root] = np.arange(arrays.num_root)
  rows = anc[arrays.num_root:].reshape(arrays.num_rows, arrays.max_actions)
  bounds = arrays.level_bounds
  for l in range(arrays.num_levels):
    lo, hi = bounds[l], bounds[l + 1]
    rows[lo:hi] = anc[arrays.row_parent_seq[lo:hi], None]
  return anc


# --- Trunks and leaves -------------------------------------------------------


def trunk_public_states(root: PublicState, frontier: str, depth: int
                        ) -> list[PublicState]:
  """The public states from `root` down to the frontier, breadth first
  (frontier states included, unexpanded)."""
  if frontier not in FRONTIERS:
    raise ValueError(f"unknown frontier {frontier!r}; supported: "
                     f"{', '.join(map(repr, FRONTIERS))}")
  out, queue = [], [root]
  while queue:
    ps = queue.pop(0)
    out.append(ps)
    if ps.is_terminal():
      continue
    if ps is not root and _at_frontier(ps, root, frontier, depth):
      continue
    queue.extend(ps.children())
  return out


def _at_frontier(ps: PublicState, root: PublicState, frontier: str,
                 depth: int) -> bool:
  if frontier == "depth":
    return ps.depth - root.depth >= depth
  return ps.is_chance_node() and ps.after_a_decision()


class _Frontier:
  """One frontier public state's subtree: leaf values per continuation."""

  def __init__(self, ps: PublicState, searcher: int,
               blueprint: PolicyFn):
    self.ps = ps
    self.searcher = searcher
    tree = PublicTree.from_subtree(ps)
    if tree.frontier:
      raise ValueError(f"the subtree below {ps.describe()} is too large to "
                       "enumerate for its leaf values")
    self.tree = tree
    s, o = searcher, 1 - searcher
    t = tree.terminals
    seqs = (t.seq0, t.seq1)
    self._seq_o = seqs[o]
    reach_s = reach_pass(tree.players[s], _row_policy(tree, s, blueprint),
                         np.ones(tree.players[s].num_root),
                         np.zeros(tree.players[s].num_sequences))
    sign = 1.0 if s == 0 else -1.0
    self._weight = sign * t.weight * reach_s[seqs[s]]
    self.shape = (ps.num_infostates(s), ps.num_infostates(o))
    self._pair = (_root_ancestors(tree.players[s])[seqs[s]] * self.shape[1] +
                  _root_ancestors(tree.players[o])[seqs[o]])

  def values(self, strategy: PolicyFn) -> np.ndarray:
    """[n_searcher, n_opponent] W_F[a, b] for one opponent continuation."""
    o = 1 - self.searcher
    arrays = self.tree.players[o]
    reach_o = reach_pass(arrays, _row_policy(self.tree, o, strategy),
                         np.ones(arrays.num_root),
                         np.zeros(arrays.num_sequences))
    w = np.bincount(self._pair, weights=self._weight * reach_o[self._seq_o],
                    minlength=self.shape[0] * self.shape[1])
    return w.reshape(self.shape)


@dataclasses.dataclass
class _Leaves:
  """The trunk's leaf pairs, grouped by the opponent's leaf infostate."""
  row_seq: np.ndarray  # [L] the opponent's trunk sequence of leaf row l
  pair_row: np.ndarray  # [P] leaf row of each pair (sorted)
  pair_seq_s: np.ndarray  # [P] searcher's trunk sequence
  pair_seq_o: np.ndarray  # [P] opponent's trunk sequence
  values: np.ndarray  # [P, k] searcher's utility times chance reach
  row_starts: np.ndarray  # rows that have pairs: start of each in pairs
  rows_with_pairs: np.ndarray
  row_public_state: np.ndarray  # [L] the leaf row's frontier public state
  row_infostate: np.ndarray  # [L] the opponent's infostate index there

  @property
  def num_rows(self) -> int:
    return len(self.row_seq)


def _leaves(tree: PublicTree, searcher: int,
            values: dict[int, np.ndarray]) -> _Leaves:
  """The leaf arrays of `tree` from {frontier id: [n_s, n_o, k] values}."""
  o = 1 - searcher
  row_seq, row_ps, row_inf = [], [], []
  pair_row, pair_s, pair_o, pair_w = [], [], [], []
  k = next(iter(values.values())).shape[2] if values else 1
  first = 0
  for ps in tree.frontier:
    w = values[ps.id]
    seq_s = tree.entry_seqs(searcher, ps)
    seq_o = tree.entry_seqs(o, ps)
    row_seq.append(seq_o)
    row_ps.append(np.full(len(seq_o), ps.id))
    row_inf.append(np.arange(len(seq_o)))
    b, a = np.nonzero(np.any(w != 0.0, axis=2).T)  # sorted by b
    pair_row.append(first + b)
    pair_s.append(seq_s[a])
    pair_o.append(seq_o[b])
    pair_w.append(w[a, b, :])
    first += len(seq_o)
  cat = lambda xs, dt: (np.concatenate(xs).astype(dt) if xs else
                        np.zeros(0, dt))
  rows = cat(pair_row, np.int64)
  uniq, starts = np.unique(rows, return_index=True)
  return _Leaves(row_seq=cat(row_seq, np.int64), pair_row=rows,
                 pair_seq_s=cat(pair_s, np.int64),
                 pair_seq_o=cat(pair_o, np.int64),
                 values=(np.concatenate(pair_w) if pair_w else
                         np.zeros((0, k))),
                 row_starts=starts, rows_with_pairs=uniq,
                 row_public_state=cat(row_ps, np.int64),
                 row_infostate=cat(row_inf, np.int64))


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


def _descends(ps: PublicState, ancestor: PublicState) -> bool:
  node = ps
  while node is not None:
    if node is ancestor:
      return True
    node = node.parent
  return False


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


class _FnPolicy(os_policy.Policy):
  """An OpenSpiel policy around an action_probabilities function."""

  def __init__(self, game: pyspiel.Game, fn: PolicyFn):
    super().__init__(game, list(range(game.num_players())))
    self._fn = fn

  def action_probabilities(self, state, player_id=None):
    return self._fn(state, state.current_player() if player_id is None
                    else player_id)


# --- Whole-game evaluation -----------------------------------------------------


def composite_policy(game: pyspiel.Game, blueprint: os_policy.Policy,
                     solutions: Sequence[Solution]
                     ) -> dict[str, list[tuple[int, float]]]:
  """Each solution's searcher plays its trunk strategy, the blueprint
  everywhere else: {information_state_string: [(action, p)]}."""
  table = policy_dict(blueprint, game)
  for solution in solutions:
    table.update(solution.policy_dict())
  return table


def exploitability(game: pyspiel.Game,
                   table: dict[str, list[tuple[int, float]]]) -> float:
  """OpenSpiel's exploitability (NashConv / 2) of a policy table."""
  return float(pyspiel.exploitability(game, table))


def solve_both_seats(game: pyspiel.Game, blueprint: os_policy.Policy,
                     config: DLSConfig) -> list[DepthLimitedSolver]:
  """A depth-limited solver per seat from the game's root, each with its
  continuation set built (`config.strategies`, `config.k`)."""
  observer = PublicStateObserver(game)
  solvers = []
  for seat in range(2):
    solver = DepthLimitedSolver(game, seat, blueprint, config,
                                root=observer.root())
    solver.build_strategies()
    solvers.append(solver)
  return solvers


def depth_limited_exploitability(game: pyspiel.Game | str,
                                 config: DLSConfig, *,
                                 blueprint: os_policy.Policy | None = None,
                                 blueprint_iterations: int = 1000) -> dict:
  """Blueprint and composite exploitability (OpenSpiel's) of depth-limited
  solving from the game's root, both seats (see `composite_policy`)."""
  if isinstance(game, str):
    game = pyspiel.load_game(game)
  check_game(game)
  if blueprint is None:
    blueprint = compute_blueprint(game, blueprint_iterations, config.cfr)
  solvers = solve_both_seats(game, blueprint, config)
  table = composite_policy(game, blueprint,
                           [s.solution for s in solvers])
  return {
      "game": str(game),
      "blueprint_exploitability": exploitability(game,
                                                 policy_dict(blueprint, game)),
      "exploitability": exploitability(game, table),
      "k": [s.k for s in solvers],
      "values": [s.solution.value for s in solvers],
      "frontier_public_states": [len(s.tree.frontier) for s in solvers],
      "trunk_public_states": [len(s.tree) for s in solvers],
  }


def check_game(game: pyspiel.Game) -> None:
  """ValueError unless depth-limited solving (as built here) can take
  `game`: two players, zero-sum, sequential, with infostate strings."""
  t = game.get_type()
  problems = []
  if game.num_players() != 2:
    problems.append(f"{game.num_players()} players")
  if t.utility not in (pyspiel.GameType.Utility.ZERO_SUM,
                       pyspiel.GameType.Utility.CONSTANT_SUM):
    problems.append(f"utility {t.utility.name}")
  if t.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
    problems.append("simultaneous moves (load its turn_based_simultaneous_"
                    "game form)")
  if not t.provides_information_state_string:
    problems.append("no information_state_string")
  if problems:
    raise ValueError(
        f"depth-limited solving needs a two-player zero-sum sequential game "
        f"with information_state_string (its policies are OpenSpiel policy "
        f"tables); {t.short_name} has {', '.join(problems)}")


# --- The frozen-blueprint full solve (Proposition 1's reference) -------------


class _FrozenCFR(SequenceCFR):
  """CFR+ with some of one player's rows fixed to a given policy."""

  def __init__(self, *args, frozen_player: int, frozen_rows: np.ndarray,
               frozen_policy: np.ndarray, **kwargs):
    self._frozen = (frozen_player, frozen_rows, frozen_policy)
    super().__init__(*args, **kwargs)
    self._new_policy(frozen_player)

  def _current_policy(self, p: int) -> np.ndarray:
    policy = super()._current_policy(p)
    player, rows, fixed = self._frozen
    if p == player:
      policy[rows] = fixed[rows]
    return policy


def frozen_blueprint_solve(game: pyspiel.Game, searcher: int,
                           blueprint: os_policy.Policy | PolicyFn,
                           config: DLSConfig, iterations: int
                           ) -> dict[str, list[tuple[int, float]]]:
  """The searcher's trunk strategy from CFR+ over the whole game with the
  searcher fixed to the blueprint at and below the frontier (the opponent
  free everywhere): what depth-limited solving with every pure opponent
  continuation reproduces (Proposition 1). Returns the searcher's
  {information_state_string: [(action, p)]} at its trunk rows."""
  observer = PublicStateObserver(game)
  root = observer.root()
  trunk = trunk_public_states(root, config.frontier, config.depth)
  full = PublicTree.from_subtree(root)
  inner = {ps.id for ps in trunk} - {
      ps.id for ps in PublicTree(root, trunk).frontier}
  arrays = full.players[searcher]
  frozen = ~np.isin(arrays.row_public_state, list(inner))
  fixed = _row_policy(full, searcher, _as_fn(blueprint))
  t = full.terminals
  cfr = _FrozenCFR(full.players, (t.seq0, t.seq1), t.weight,
                   [np.ones(root.num_infostates(p)) for p in range(2)],
                   config.cfr, frozen_player=searcher, frozen_rows=frozen,
                   frozen_policy=fixed)
  cfr.run(iterations)
  return rows_dict(arrays, cfr.average_policy(searcher),
                   np.flatnonzero(~frozen))


def pure_strategies(game: pyspiel.Game, solver: DepthLimitedSolver
                    ) -> list[DictPolicy]:
  """Every pure strategy of the opponent over its infostates below the
  solver's frontier (for small games: the count is a product of action
  counts)."""
  o = 1 - solver.searcher
  infostates = {}
  for f in solver.frontiers:
    arrays = f.tree.players[o]
    for row, key in enumerate(arrays.row_infostate_string):
      n = int(arrays.legal_mask[row].sum())
      infostates[key] = arrays.row_actions[row, :n].tolist()
  keys = sorted(infostates)
  count = int(np.prod([len(infostates[key]) for key in keys]))
  if count > 4096:
    raise ValueError(f"{count} pure continuation strategies; at most 4096")
  return [DictPolicy(game, dict(zip(keys, choice)))
          for choice in itertools.product(*(infostates[k] for k in keys))]
