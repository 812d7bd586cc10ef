"""Growing-tree CFR (GT-CFR, Algorithm 1 of the SoG paper; DESIGN.md 5).

`search(root, value_fn, config)` grows a public tree from `root` and runs
public-tree CFR+ on it:

    for i in range(s // ceil(c)):            # s = simulations, c = expansions
      run ceil(1 / c) CFR+ updates on the tree    # per update (may be < 1)
      run ceil(c) expansion simulations

The search is four parts, each in its own module: the tree
(`search_tree`: public states as nodes, per-player sequences grown by
appending), the regret-update phase (`updates`, valuing the tree's edge with
`leaf_values` and, for a network, `network_updates`; the passes themselves
are `cfr.growing_passes`), the expansion phase (`growth`: PUCT + CFR
selection, walks, expansion) and this run loop with its result. No Python
loop over nodes runs in the regret update.

Re-solving (DESIGN.md 6): the tree can start as a single branch from the
search root to the public state where the tree may grow (`branch`), with
off-branch children as leaves, and a gadget at the root for one player
(`gadget`): for each of that player's root infostates, terminate with the
stored counterfactual value or follow into the subgame, whose follow
probabilities give the player's root range, mixed alpha * follow +
(1 - alpha) * r_prev.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import math
import time
from typing import Sequence

import numpy as np

from open_spiel_sog.algorithms.cfr import growing_passes
from open_spiel_sog.algorithms.sog.gadget import Gadget
from open_spiel_sog.algorithms.sog.gadget import GadgetSolver
from open_spiel_sog.algorithms.sog.growth import Growth
from open_spiel_sog.algorithms.sog.leaf_values import LeafTiming
from open_spiel_sog.algorithms.sog.leaf_values import LeafValues
from open_spiel_sog.algorithms.sog.leaf_values import QueryLog
from open_spiel_sog.algorithms.sog.search_tree import SearchTree
from open_spiel_sog.algorithms.sog.updates import RegretUpdates
from open_spiel_sog.algorithms.sog.value_functions import Query
from open_spiel_sog.algorithms.sog.value_functions import ValueFunction
from open_spiel_sog.public_state import PublicState


@dataclasses.dataclass(frozen=True)
class GTCFRConfig:
  """Options of a GT-CFR search.

  Attributes:
    simulations: s, the total number of expansion simulations.
    expansions_per_update: c, expansion simulations per regret-update phase;
      fractional c runs ceil(1/c) CFR updates per phase and one simulation.
      The search runs s // ceil(c) phases (at least one).
    top_k: children added when a simulation reaches a leaf: the k actions
      with the highest prior at each infostate (0 = all children, the
      imperfect-information default; 1 is the perfect-information default).
    c_puct: PUCT exploration constant, in units of the game's utility range.
    virtual_loss: penalty per pending visit within one expansion phase, in
      units of the game's utility range.
    alternating: alternate the players' CFR updates (two value-function
      calls per update) instead of updating both at once (the paper's choice).
    averaging_power: weigh update t by t ** averaging_power in the average
      policy and the averaged values (0: uniform, 1: linear, CFR+'s usual
      weighting, 2: quadratic).
    walks_per_simulation: a simulation's walk that ends at a terminal
      public state already in the tree adds nothing; it is drawn again, up
      to this many walks (1: every walk counts as a simulation, as the
      paper's pseudocode reads; see `growth.Growth._simulate`).
    record_queries: keep every leaf query (public state and ranges) made.
  """
  simulations: int = 100
  expansions_per_update: float = 1.0
  top_k: int = 0
  c_puct: float = 1.0
  virtual_loss: float = 1.0
  alternating: bool = True
  averaging_power: float = 1.0
  walks_per_simulation: int = 100
  record_queries: bool = True

  def validate(self) -> None:
    if self.simulations < 0:
      raise ValueError(f"simulations must be >= 0, got {self.simulations}")
    if not self.expansions_per_update > 0:
      raise ValueError("expansions_per_update (c) must be > 0, got "
                       f"{self.expansions_per_update}")
    if self.top_k < 0:
      raise ValueError(f"top_k must be >= 0 (0 = all), got {self.top_k}")
    if not (self.averaging_power >= 0 and math.isfinite(self.averaging_power)):
      raise ValueError("averaging_power must be a number >= 0, got "
                       f"{self.averaging_power}")
    if self.walks_per_simulation < 1:
      raise ValueError("walks_per_simulation must be >= 1, got "
                       f"{self.walks_per_simulation}")

  @property
  def phases(self) -> int:
    return max(1, self.simulations // math.ceil(self.expansions_per_update))

  @property
  def updates_per_phase(self) -> int:
    return math.ceil(1.0 / self.expansions_per_update)

  @property
  def simulations_per_phase(self) -> int:
    return 0 if self.simulations == 0 else math.ceil(self.expansions_per_update)


# Seconds per tree node of `GTCFR.result()` in this process's latest search
# of each game: what a time-limited search reserves for its own result (a
# game not searched yet reserves the most any game took).
_RESULT_SECONDS_PER_NODE: dict[str, float] = {}


def _result_seconds_per_node(game: str) -> float:
  seconds = _RESULT_SECONDS_PER_NODE.get(game)
  if seconds is None:
    seconds = max(_RESULT_SECONDS_PER_NODE.values(), default=0.0)
  return seconds


@dataclasses.dataclass
class Summary:
  """What a search leaves at one public state of its tree: each player's
  range (reach under the average policy) and counterfactual values (under
  the average profile), in the public state's infostate order."""
  ranges: tuple[np.ndarray, np.ndarray]
  values: tuple[np.ndarray, np.ndarray]


class _Summaries(collections.abc.Mapping):
  """{public state id: Summary} for every node of a finished search's tree
  (those it had when summarised), each built on first access: a
  perfect-information bot reads none, and building them all took 4% of a
  connect_four decision."""

  def __init__(self, tree: SearchTree, entry_seq: Sequence[np.ndarray],
               reaches: Sequence[np.ndarray],
               entry_values: Sequence[np.ndarray]):
    self._nodes = tree.nodes[:]
    self._node_of = dict(tree.node_of)
    self._entry_seq = entry_seq
    self._reaches = reaches
    self._entry_values = entry_values
    self._built: dict[int, Summary] = {}

  def __getitem__(self, ps_id: int) -> Summary:
    summary = self._built.get(ps_id)
    if summary is None:
      node = self._nodes[self._node_of[ps_id]]
      rs, vs = [], []
      for p in range(2):
        lo = node.entry_start[p]
        hi = lo + node.ps.num_infostates(p)
        rs.append(self._reaches[p][self._entry_seq[p][lo:hi]])
        vs.append(self._entry_values[p][lo:hi])
      summary = self._built[ps_id] = Summary(ranges=(rs[0], rs[1]),
                                             values=(vs[0], vs[1]))
    return summary

  def __iter__(self):
    return iter(self._node_of)

  def __len__(self) -> int:
    return len(self._node_of)


@dataclasses.dataclass
class SearchResult:
  """The outcome of one GT-CFR search.

  Attributes:
    tree: the final SearchTree (CFR state included).
    root_values: (v0, v1) counterfactual values at the root infostates under
      the average profile.
    summaries: {public state id: Summary} for every public state of the tree.
    queries: every leaf query made (public state and ranges), in order
      (a QueryLog: a sequence of Query built on access).
    updates: CFR updates run.
    root_ranges: (r0, r1) the final root ranges (the gadget player's is its
      average follow-probability mix).
  """
  tree: SearchTree
  root_values: tuple[np.ndarray, np.ndarray]
  summaries: collections.abc.Mapping[int, Summary]
  queries: QueryLog
  updates: int
  root_ranges: tuple[np.ndarray, np.ndarray]

  def policy(self, ps: PublicState) -> list[dict[int, float]]:
    """The average policy of the acting player at each of its infostates in
    `ps` (which must be an interior node of the tree): [{action: prob}]."""
    node = self.tree.node(ps)
    if node is None or node.rows is None:
      raise ValueError(f"public state {ps.describe()} is not an interior "
                       "decision node of the search tree")
    side = self.tree.sides[node.player]
    probs = growing_passes.average_policy(side)[node.rows]
    return [
        {a: float(probs[i, k]) for k, a in enumerate(side.row_actions[row])}
        for i, row in enumerate(node.rows.tolist())
    ]


class GTCFR:
  """One GT-CFR search (see module docstring). Use `search()` for the common
  case; the class exposes the phases for tests.

  Attributes:
    tree: the SearchTree.
    root_ranges: [2][n_p] the players' ranges at the search root (the
      gadget player's moves with the gadget).
    leaves: the terminal and leaf values (`leaf_values.LeafValues`).
    updater: the regret-update phase (`updates.RegretUpdates`).
    growth: the expansion phase (`growth.Growth`).
  """

  def __init__(self, root: PublicState, value_fn: ValueFunction,
               config: GTCFRConfig | None = None, *,
               ranges: Sequence[np.ndarray] | None = None,
               gadget: Gadget | None = None,
               branch: Sequence[PublicState] = (),
               rng: np.random.Generator | None = None,
               value_players: Sequence[int] = (0, 1)):
    if root.observer.common_payoff:
      raise ValueError(f"GT-CFR searches two-player zero-sum games; "
                       f"{root.observer.game} is common-payoff")
    self.config = config or GTCFRConfig()
    self.config.validate()
    self.value_fn = value_fn
    self.rng = rng or np.random.default_rng()
    self.tree = SearchTree(root)
    if ranges is None:
      ranges = [np.ones(root.num_infostates(p)) for p in range(2)]
    self.root_ranges = [np.asarray(r, dtype=np.float64).copy() for r in ranges]
    for p in range(2):
      if self.root_ranges[p].shape != (root.num_infostates(p),):
        raise ValueError(
            f"range of player {p} has shape {self.root_ranges[p].shape}; "
            f"{root.describe()} has {root.num_infostates(p)} infostates")
    self.gadget = gadget
    solver = None
    if gadget is not None:
      solver = GadgetSolver(gadget, root.num_infostates(gadget.player))
      self.root_ranges[gadget.player] = solver.range
    self._gadget_solver = solver
    # The initial tree: the branch to the growth root, with every node on it
    # (and the growth root) expanded fully.
    path = list(branch) or [root]
    if path[0] is not root:
      raise ValueError("the branch must start at the search root")
    for a, b in zip(path, path[1:]):
      if b.parent is not a:
        raise ValueError(f"{b.describe()} is not a child of {a.describe()}")
    grow = path[-1]
    if grow.is_player_node():
      # The growth root's prior, for PUCT there (no beliefs known yet).
      prior_ranges = (self.root_ranges if grow is root else
                      [np.ones(grow.num_infostates(p)) for p in range(2)])
      grow_prior = self.value_fn.prior(
          Query(grow, (prior_ranges[0], prior_ranges[1])))
    else:
      grow_prior = None
    # Seconds per leaf added (building it, and valuing it where the value
    # function's values are fixed sums).
    self.timing = LeafTiming()
    for ps in path:
      node = self.tree.node(ps)
      if ps.is_terminal():
        raise ValueError(f"cannot search from terminal {ps.describe()}")
      if ps is grow:
        node.prior = grow_prior
      self.timing.timed(self.tree.expand, node)
    self.grow_node = self.tree.node(path[-1])
    self.leaves = LeafValues(self.tree, value_fn, self.config.record_queries,
                             self.timing)
    self.updater = RegretUpdates(
        self.tree, self.leaves, self.root_ranges,
        alternating=self.config.alternating,
        averaging_power=self.config.averaging_power,
        value_players=value_players, gadget=solver,
        network_spec=value_fn.network_spec())
    self.growth = Growth(self.tree, self.grow_node, self.updater, self.config,
                         self.rng, self.timing)

  @property
  def updates(self) -> int:
    """CFR updates run so far."""
    return self.updater.count

  @property
  def queries(self) -> QueryLog:
    """The leaf queries made (where `config.record_queries`)."""
    return self.leaves.queries

  @property
  def simulation_ends(self) -> collections.Counter:
    """How simulations ended (see `Growth.simulation_ends`)."""
    return self.growth.simulation_ends

  @property
  def redraws(self) -> int:
    """Walks drawn again (see `Growth._simulate`)."""
    return self.growth.redraws

  def run_updates(self, count: int) -> None:
    """Runs `count` CFR updates (a regret-update phase)."""
    self.updater.run(count)

  def run_expansions(self, count: int) -> None:
    """Runs `count` expansion simulations (an expansion phase)."""
    self.growth.run(count)

  def run(self, deadline: float | None = None) -> SearchResult:
    """Runs the search's phases and returns its result.

    Args:
      deadline: a `time.monotonic()` time to be done by, or None. The search
        then stops early (after at least one regret update) when the next
        phase, the final update and `result()` would pass it: the phase and
        the update timed as the median of the latest three (one phase the
        process lost its core in does not stop the search; a tree growing
        slower moves the median), `result()` by its time per tree
        node in this process's previous search (it summarises every node,
        which costs far more than an update in a large tree). Expansions
        whose new leaves would take more than growth.EXPAND_SHARE of the
        time left are skipped (see `Growth._expansion_fits`).
    """
    cfg = self.config
    expanded = False
    phases: collections.deque[float] = collections.deque(maxlen=3)
    updates: collections.deque[float] = collections.deque(maxlen=3)
    self.growth.deadline = deadline
    if self.leaves.fixed:
      # Value the initial tree's leaves (hive: 282 rollouts) before the
      # phases are timed: the first phase would otherwise stand for every
      # later one, and the search stop at a third of its time.
      self.leaves.fold_fixed_leaves()

    per_node = _result_seconds_per_node(str(self.tree.game))

    def median(times: collections.deque[float]) -> float:
      # Of two, the larger: the estimate errs towards stopping early.
      return sorted(times)[len(times) // 2] if times else 0.0

    def finish() -> float:
      """Expected seconds of the final update and `result()`."""
      return median(updates) + per_node * len(self.tree.nodes)

    for _ in range(cfg.phases):
      start = time.monotonic()
      self.run_updates(cfg.updates_per_phase)
      updated = time.monotonic()
      updates.append((updated - start) / cfg.updates_per_phase)
      expanded = False
      if deadline is not None and (
          updated + median(phases) + finish() > deadline):
        break
      if cfg.simulations_per_phase:
        self.run_expansions(cfg.simulations_per_phase)
        expanded = True
      phases.append(time.monotonic() - start)
      if deadline is not None and (
          time.monotonic() + median(phases) + finish() > deadline):
        break
    if expanded:
      # The last expansions are only useful once CFR has seen them.
      self.run_updates(cfg.updates_per_phase)
    start = time.monotonic()
    result = self.result()
    _RESULT_SECONDS_PER_NODE[str(self.tree.game)] = (
        (time.monotonic() - start) / len(self.tree.nodes))
    return result

  def average_root_ranges(self) -> tuple[np.ndarray, np.ndarray]:
    ranges = [r.copy() for r in self.root_ranges]
    if self._gadget_solver is not None:
      average = self._gadget_solver.average_range()
      if average is not None:
        ranges[self.gadget.player] = average
    return ranges[0], ranges[1]

  def result(self) -> SearchResult:
    """Summaries and root values under the average profile."""
    tree = self.tree
    compiled = tree.compiled()
    root_ranges = self.average_root_ranges()
    policies = [growing_passes.average_policy(s) for s in tree.sides]
    reaches = [growing_passes.reach(compiled[p], policies[p], root_ranges[p])
               for p in range(2)]
    _, leaf = self.leaves.values(compiled, reaches, record=False)
    entry_values = []
    for p in range(2):
      # Averaged over the iterates where tracked (the self-play values that
      # re-solving needs), else under the average profile.
      values = self.updater.entry_values(p, compiled, reaches, policies[p],
                                         leaf[p])
      self.updater.averages.replace(p, values)
      entry_values.append(values)
    summaries = _Summaries(tree, [c.entry_seq for c in compiled], reaches,
                           entry_values)
    root = summaries[tree.root_ps.id]
    return SearchResult(tree=tree, root_values=root.values,
                        summaries=summaries, queries=self.leaves.queries,
                        updates=self.updates, root_ranges=root_ranges)


def search(root: PublicState, value_fn: ValueFunction,
           config: GTCFRConfig | None = None, *,
           ranges: Sequence[np.ndarray] | None = None,
           gadget: Gadget | None = None,
           branch: Sequence[PublicState] = (),
           rng: np.random.Generator | None = None) -> SearchResult:
  """Runs GT-CFR from `root` (see the module docstring and GTCFR)."""
  return GTCFR(root, value_fn, config, ranges=ranges, gadget=gadget,
               branch=branch, rng=rng).run()
