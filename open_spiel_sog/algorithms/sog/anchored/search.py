"""The anchored search: a subgame around the searcher's infostate, grown by
histories and kept across moves (DESIGN.md section 15; Zhang and Sandholm,
"General search techniques without common knowledge...", 2025).

At each decision `AnchoredSearch.search`:

1. Root: the searcher's infostate I, from the kept tree first (the nodes of
   the previous search's tree in I, with their subtrees), topped up with
   histories drawn consistently with what the searcher saw
   (`order2.consistent_histories`) to `root_histories`; then, for each
   history h of I, the opponent's infostate J(h) filled the same way with
   our alternative histories (our own moves varied, weighted by our
   reach) to `order2_histories`. Nothing of order 3 or beyond.
2. Gadget: with "resolve", one entry per opponent infostate J of the root,
   exit paying the previous search's value of J (on-policy, the
   opponent's) where the kept tree has J, prior alpha(J) = (y(J)/sum y +
   1/m)/2 from the opponent's reach; "none" picks the root histories by
   chance x both reaches.
3. Search: CFR+ on the history tree (`history_tree.HistoryTree.iterate`),
   alternating with growth: each simulation walks from a root history
   (the explorer, alternating, plays half uniform and half its current
   policy; the other player its current policy), and the leaf it reaches
   gets all its children, valued by random rollouts.
4. Kept: the tree, both players' average policies by key (the reaches of
   the next roots) and the node values (the next gadget's).

`solve` is training's query solver (`algorithms/training/fog_of_war.py`):
the same growth and CFR+ from given root histories under fixed beliefs,
no gadget, the kept tree untouched.

(The module runs past 600 lines: the root, the gadget, both engines' run
loops and the solver share one object's state and random stream.)

Our "other selves" (our infostates of the root other than I) are
re-optimised (KLUSS); `freeze_other_selves` plays them at the previous
search's policy (1-KLSS), an ablation.
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
import pyspiel

from open_spiel_sog.algorithms.sog import rollout_values
from open_spiel_sog.algorithms.sog.anchored import order2
from open_spiel_sog.algorithms.sog.anchored.history_tree import HistoryTree
from open_spiel_sog.algorithms.sog.anchored.history_tree import ROOT
from open_spiel_sog.algorithms.sog.anchored.leaf_network import LeafNetwork
from open_spiel_sog.algorithms.sog.anchored.native_tree import NativeHistoryTree
from open_spiel_sog.public_state import CHANCE
from open_spiel_sog.public_state import HistoryKeys
from open_spiel_sog.public_state import TERMINAL

GADGETS = ("resolve", "none")

# The average policies a search leaves for the next ones: its rows at most
# POLICY_LEVELS own actions below the root, each kept for POLICY_SEARCHES
# searches.
POLICY_LEVELS = 2
POLICY_SEARCHES = 6


@dataclasses.dataclass(frozen=True)
class AnchoredConfig:
  """Settings of the anchored search.

  Attributes:
    root_histories: N1, histories of the searcher's infostate at the root
      (all of them where fewer).
    order2_histories: N2, histories of each opponent infostate touching
      ours (the order-2 set), ours among them.
    gadget: "resolve" (an exit per opponent root infostate at the previous
      search's value) or "none" (chance picks the root histories).
    freeze_other_selves: play our root infostates other than our own at
      the previous search's policy (1-KLSS) instead of re-optimising them.
    prior_search: at the first search, where only the opponent has acted
      since the start, search from the start first and keep that search
      as the previous one (`AnchoredSearch._prior`).
    simulations: growth simulations per search (the cap under a deadline).
    expansions_per_update: without a deadline, each growth phase of b
      simulations is followed by ceil(b / expansions_per_update) CFR+
      iterations (the sog bot's SoG(s, c)), so that a search is a function
      of its seed; under a deadline the CFR phase runs as long as the
      growth phase took (the native engine: the same count, to the
      deadline). -1: 1 in Python, phases paced by work on the native
      engine (`engine.PACED`).
    rollouts: random rollouts per new leaf.
    rollout_max_moves: a rollout still running after this many actions
      scores a draw (0: never cut).
    max_nodes: the tree stops growing at this many histories.
    keep_nodes: at most this many of the kept tree's histories carried
      into the next search.
    max_visits: states the root's draws may visit per search.
    averaging_power: the average policy weighs iteration t by t^power.
    predictive: PCFR+ (regret matching on the regrets plus the last
      iteration's) instead of CFR+.
    leaf_batch: with a network (`AnchoredSearch(network=...)`), the most
      new leaves valued by one network call (a phase's leaves are valued
      before its CFR+ iteration, however few).
    threads: the native engine's timed runs with rollout leaves: 2 grows
      the tree in an expander thread beside the CFR+ thread, 1 alternates
      them (counted runs always do).
    seed: the random stream's seed.
  """
  root_histories: int = 128
  order2_histories: int = 8
  gadget: str = "resolve"
  freeze_other_selves: bool = False
  simulations: int = 1000
  expansions_per_update: float = 1.0
  rollouts: int = 2
  rollout_max_moves: int = 0
  max_nodes: int = 200_000
  keep_nodes: int = 50_000
  max_visits: int = 200_000
  averaging_power: float = 1.0
  predictive: bool = False
  leaf_batch: int = 256
  threads: int = 1
  prior_search: bool = True
  seed: int = 0

  def validate(self) -> None:
    if self.gadget not in GADGETS:
      raise ValueError(f"unknown gadget {self.gadget!r}; supported: "
                       f"{', '.join(map(repr, GADGETS))}")
    for name in ("root_histories", "order2_histories", "simulations",
                 "rollouts", "max_nodes", "max_visits", "leaf_batch"):
      if getattr(self, name) < 1:
        raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
    if self.threads not in (1, 2):
      raise ValueError(f"threads must be 1 or 2, got {self.threads}")
    if not ((self.expansions_per_update > 0 or
             self.expansions_per_update == -1) and
            math.isfinite(self.expansions_per_update)):
      raise ValueError("expansions_per_update must be a positive number or "
                       f"-1 (auto), got {self.expansions_per_update}")
    if self.keep_nodes < 0 or self.rollout_max_moves < 0:
      raise ValueError("keep_nodes and rollout_max_moves must be >= 0")


@dataclasses.dataclass
class AnchoredResult:
  """What a search ends with.

  Attributes:
    policy: {action: probability} at the searcher's infostate.
    value: the searcher's expected return at its infostate under the
      average profile.
    action_values: {action: the searcher's expected return after it}.
    root_values: {opponent key: the opponent's value of that root
      infostate}.
    root_histories: histories at the root ([I, order-2 set]).
    opponent_infostates: opponent infostates at the root, with their
      histories' counts.
    nodes: histories in the tree at the end; kept: of them carried over.
    simulations, iterations: growth simulations and CFR+ iterations run.
    seconds: the search's time; setup_seconds: the root's share.
  """
  policy: dict[int, float]
  value: float
  action_values: dict[int, float]
  root_values: dict[str, float]
  root_histories: tuple[int, int]
  opponent_infostates: dict[str, int]
  nodes: int
  kept: int
  simulations: int
  iterations: int
  seconds: float
  setup_seconds: float


class AnchoredSearch:
  """One player's anchored searches over a game (the kept tree between
  them). `search(state, deadline)` at each of the player's decisions;
  `reset()` at a new game."""

  # Under a deadline, the root's draws may take this share of it.
  SETUP_SHARE = 0.3

  # Under a deadline, a prior search (`_prior`) may take this share of it;
  # without one, this share of the simulations.
  PRIOR_SHARE = 0.3

  def __init__(self, game: pyspiel.Game, player: int,
               config: AnchoredConfig | None = None,
               infostates: str = "auto", native: bool = False,
               network: LeafNetwork | None = None):
    self.config = config or AnchoredConfig()
    # A token CVPN valuing the leaves (leaf_network.py), else rollouts.
    self.network = network
    # Where a list: each network call appends (tree, nodes, their
    # `leaf_data`), the queries a trainer picks from.
    self.query_log: list | None = None
    self.config.validate()
    self.game = game
    self.player = player
    self.keys = HistoryKeys(game, infostates)
    # The tree on the native history engine (native_tree.py) or in Python.
    self.native = native
    self._finish_seconds = 0.0
    self.rng = np.random.default_rng(self.config.seed)
    self.reset()

  def reset(self) -> None:
    self.tree: HistoryTree | None = None
    self.policies: dict[str, dict[int, float]] = {}
    self._policy_age: dict[str, int] = {}
    self._searches = 0
    self.last_result: AnchoredResult | None = None
    self.last_root: list[order2.RootHistory] = []

  # --- The root ---------------------------------------------------------------

  def _kept_lookup(self):
    """(q, key) -> the kept tree's nodes where the searcher acts whose
    player-q key is `key`."""
    if self.tree is None:
      return lambda q, key: []
    return self.tree.kept_lookup(self.player)

  def _root(self, state: pyspiel.State, deadline: float | None
            ) -> tuple[list[order2.RootHistory], dict[str, list[int]]]:
    """The root histories ([I..., then the order-2 set]) and, per opponent
    key, the indices of its histories."""
    me, opp = self.player, 1 - self.player
    cfg = self.config
    kept = self._kept_lookup()
    path, final = order2.key_path(self.keys, state, me)
    seen: set[tuple[int, ...]] = set()
    root: list[order2.RootHistory] = []

    def add_kept(nodes: list[int], limit: int) -> int:
      if len(nodes) > limit:
        nodes = [nodes[i] for i in sorted(self.rng.choice(
            len(nodes), limit, replace=False).tolist())]
      added = 0
      for n in nodes:
        history = self.tree.history(n)
        if tuple(history) in seen:
          continue
        seen.add(tuple(history))
        s, k, chance, reach = order2.weigh(self.keys, history, self.game,
                                           self.policies)
        root.append(order2.RootHistory(s, k, chance, reach, kept=n))
        added += 1
      return added

    # I: the true history first, then the kept tree, then draws.
    true = tuple(state.history())
    seen.add(true)
    s, k, chance, reach = order2.weigh(self.keys, list(true), self.game,
                                       self.policies)
    root.append(order2.RootHistory(s, k, chance, reach,
                                   kept=self._kept_node(true)))
    add_kept(kept(me, final[me]), cfg.root_histories - 1)
    visits = cfg.max_visits // 2
    if len(root) < cfg.root_histories:
      root += order2.consistent_histories(
          self.keys, me, path, cfg.root_histories - len(root), self.rng,
          self.policies, seen, visits, deadline,
          spread=order2.situations(root))
    # The order-2 set: each opponent infostate of I filled.
    groups: dict[str, list[int]] = {}
    for i, h in enumerate(root):
      groups.setdefault(h.keys[opp], []).append(i)
    per_group = max(1, (cfg.max_visits - visits) // max(len(groups), 1))
    for key, members in list(groups.items()):
      want = cfg.order2_histories - len(members)
      if want <= 0:
        continue
      before = len(root)
      want -= add_kept(kept(opp, key), want)
      if want > 0:
        opp_path, _ = order2.key_path(self.keys, root[members[0]].state, opp)
        root += order2.consistent_histories(
            self.keys, opp, opp_path, want, self.rng, self.policies, seen,
            per_group, deadline)
      members.extend(range(before, len(root)))
    return root, groups

  def _kept_node(self, history: tuple[int, ...]) -> int:
    """The kept tree's node of `history`, or -1."""
    old = self.tree
    if old is None:
      return -1
    for r in old.roots:
      prefix = old.history(r)
      if tuple(prefix) != history[:len(prefix)]:
        continue
      n = r
      for a in history[len(prefix):]:
        kids = old.children[n]
        if kids is None:
          return -1
        n = next((k for k in kids if old.action[k] == a), -1)
        if n < 0:
          return -1
      return n
    return -1

  def _new_tree(self, rollouts: tuple[int, int]) -> HistoryTree:
    """An empty tree on this search's engine, its leaves valued by the
    network or by `rollouts` = (rollouts per leaf, max moves)."""
    cfg = self.config
    seed = int(self.rng.integers(1 << 31))
    if self.native:
      return NativeHistoryTree(
          self.game, self.keys, rollouts[0], seed, rollouts[1],
          cfg.predictive, cfg.averaging_power,
          cfg.leaf_batch if self.network is not None else 0, cfg.threads)
    tree = HistoryTree(self.game, self.keys, rollouts[0], seed,
                       rollouts[1], cfg.predictive)
    tree.network_leaves = self.network is not None
    return tree

  def _build(self, root: list[order2.RootHistory],
             groups: dict[str, list[int]], rollouts: tuple[int, int],
             value_by: float | None = None) -> tuple[HistoryTree, int]:
    """The subgame tree of `root`, its leaves valued by `rollouts` =
    (rollouts per leaf, max moves), and the kept histories it took; fresh
    root histories are valued by rollouts until `value_by` (a
    `time.monotonic()` time), then at the game's draw value, to be valued
    when they are expanded."""
    cfg = self.config
    me, opp = self.player, 1 - self.player
    tree = self._new_tree(rollouts)
    old = self.tree
    if old is not None:
      for p, key, regrets in old.warm_rows():
        tree.set_warm(p, key, regrets)
    if cfg.freeze_other_selves:
      frozen = {key: np.asarray([probs.get(a, 0.0) for a in sorted(probs)])
                for key, probs in self.policies.items()}
      tree.set_freeze(me, frozen, root[0].keys[me])
    keys = list(groups)
    values = old.node_values if old is not None else None
    # Per J: p(h | J) by chance x our reach; y(J) the opponent's reach.
    inner = [np.asarray([root[i].chance * root[i].reach[me] for i in groups[k]])
             for k in keys]
    y = np.asarray([root[groups[k][0]].reach[opp] for k in keys])
    m = len(keys)
    if cfg.gadget == "resolve":
      prior = 0.5 * (y / y.sum() + 1.0 / m) if y.sum() > 0 else np.full(
          m, 1.0 / m)
      alternatives = []
      for k, w in zip(keys, inner):
        kept = [(root[i].kept, wi) for i, wi in zip(groups[k], w)
                if root[i].kept >= 0]
        if not kept or sum(wi for _, wi in kept) <= 0:
          alternatives.append(None)
          continue
        sign = 1.0 if opp == 0 else -1.0
        alternatives.append(sign * sum(wi * values[n] for n, wi in kept) /
                            sum(wi for _, wi in kept))
      enters = tree.add_gadget(opp, alternatives, prior.tolist())
    else:
      prior = y / y.sum() if y.sum() > 0 else np.full(m, 1.0 / m)
      enters = [(ROOT, 0)] * m
    budget = cfg.keep_nodes
    kept = 0
    for j, k in enumerate(keys):
      total = inner[j].sum()
      for i, wi in zip(groups[k], inner[j]):
        weight = prior[j] * (wi / total if total > 0 else 1.0 / len(inner[j]))
        h = root[i]
        if h.kept >= 0 and budget > 0:
          added = tree.copy_subtree(old, h.kept, weight, enters[j], budget)
          budget -= added
          kept += added
        else:
          late = value_by is not None and time.monotonic() >= value_by
          tree.add_root(h.state, h.keys, weight, enters[j],
                        value=tree.draw if late else None)
    return tree, kept

  # --- The search -------------------------------------------------------------

  def _simulate(self, tree: HistoryTree, explorer: int,
                root_p: np.ndarray, deadline: float | None = None) -> bool:
    """One walk from a root history to a leaf, which gets its children
    (unless that is expected to pass `deadline`); False when it ended at a
    terminal history or expanded nothing."""
    rng = self.rng
    n = tree.roots[int(rng.choice(len(tree.roots), p=root_p))]
    while tree.children[n] is not None:
      kids = tree.children[n]
      actor = tree.actor[n]
      if actor == CHANCE:
        probs = np.asarray([tree.edge[k] for k in kids])
        n = kids[int(rng.choice(len(kids), p=probs / probs.sum()))]
        continue
      if actor == explorer and rng.random() < 0.5:
        n = kids[int(rng.integers(len(kids)))]
        continue
      policy = tree.rows[actor].current[tree.row[n], :len(kids)]
      total = policy.sum()
      n = kids[int(rng.choice(len(kids), p=policy / total))
               if total > 0 else int(rng.integers(len(kids)))]
    if tree.actor[n] == TERMINAL:
      return False
    if deadline is not None and (time.monotonic() + tree.expansion_seconds(n)
                                 > deadline):
      return False
    tree.expand(n)
    return True

  # Under a deadline, the root histories' rollouts may take this share of
  # the time left after the root is drawn.
  ROOT_VALUE_SHARE = 0.1

  # Under a deadline, one expansion's rollouts (the searched state's
  # children times the rollouts per leaf) may take at most this share of
  # the time left.
  EXPANSION_SHARE = 0.05

  def _fit_rollouts(self, state: pyspiel.State, left: float
                    ) -> tuple[int, int]:
    """Fewer rollouts per leaf (at least 1), then rollouts cut short after
    a number of moves (scored as a draw), where one expansion's rollouts
    would take more than EXPANSION_SHARE of the time `left` (kriegspiel:
    2.5 ms a rollout, dozens of children). Timed on 3 rollouts from
    `state`; returns (rollouts per leaf, max moves)."""
    begin = time.perf_counter()
    _, _, moves = rollout_values.random_rollouts(state, 3, 0,
                                                 self.config.rollout_max_moves)
    per_rollout = (time.perf_counter() - begin) / 3
    children = max(len(state.legal_actions()), 1)
    rollouts, cap = rollout_values.fit_rollouts(
        per_rollout, moves / 3, self.EXPANSION_SHARE * max(left, 0.0),
        self.config.rollouts, children)
    max_moves = self.config.rollout_max_moves
    if cap:
      max_moves = cap if not max_moves else min(cap, max_moves)
    return rollouts, max_moves

  # Under a deadline, the searcher's first expansion may take at most this
  # share of the time left (else its row is made without children).
  FIRST_SHARE = 0.5

  def search(self, state: pyspiel.State, deadline: float | None = None
             ) -> AnchoredResult:
    """Searches the player's decision at `state` by `deadline` (a
    `time.monotonic()` time; None: `simulations` bound it)."""
    start = time.monotonic()
    if state.is_terminal() or state.current_player() != self.player:
      raise ValueError(f"anchored search: player {self.player} does not act "
                       "at this state")
    self._prior(state, deadline)
    # (After a prior search, the root's draws share the time it left.)
    begin = time.monotonic()
    setup_deadline = (None if deadline is None else
                      begin + self.SETUP_SHARE * (deadline - begin))
    root, groups = self._root(state, setup_deadline)
    rollouts = self._rollouts(state, deadline)
    value_by = (None if deadline is None or self.network is not None else
                time.monotonic() +
                self.ROOT_VALUE_SHARE * (deadline - time.monotonic()))
    tree, kept = self._build(root, groups, rollouts, value_by)
    me = self.player
    key_me = root[0].keys[me]
    mine = [n for n in tree.roots if tree.node_keys[n][me] == key_me]
    first = mine[0]
    if tree.children[first] is None:  # our infostate's row, from the start
      fits = True
      if deadline is not None:
        one = tree.child_seconds(first)
        tree.record_expansion(1, one)
        fits = one * len(state.legal_actions()) <= (
            self.FIRST_SHARE * (deadline - time.monotonic()))
      if fits:
        tree.expand(first)
      else:  # python_liars_poker: 2 ms an observation string, 300 children
        tree.row_only(first)
    self._value_pending(tree)
    setup = time.monotonic() - start
    sims, iterations = self._run(tree, deadline, self.config.simulations)
    begin = time.monotonic()
    result = self._finish(tree, root, groups, mine, kept, sims, iterations,
                          time.monotonic() - start, setup)
    self._finish_seconds = time.monotonic() - begin if self.native else 0.0
    result.seconds = time.monotonic() - start
    return result

  def solve(self, roots: list[tuple[pyspiel.State, tuple[str, str], float]],
            simulations: int) -> tuple[HistoryTree, int, int]:
    """A query solver's search (SoG's QuerySolver): the subgame whose root
    histories are `roots` [(state, keys, weight)], the weight each
    history's chance reach times both players' reaches (the query's
    beliefs, fixed: no gadget), grown by `simulations` simulations with
    the leaves valued as `search` values them. The kept tree is neither
    read nor replaced. Returns (the tree, simulations, iterations); the
    tree's roots are `roots`, in order."""
    cfg = self.config
    tree = self._new_tree((cfg.rollouts, cfg.rollout_max_moves))
    for state, keys, weight in roots:
      tree.add_root(state, keys, float(weight))
    self._value_pending(tree)
    sims, iterations = self._run(tree, None, simulations)
    return tree, sims, iterations

  def _rollouts(self, state: pyspiel.State, deadline: float | None
                ) -> tuple[int, int]:
    """(rollouts per leaf, max moves) of a search from `state`: the
    configured ones, fitted to the time left under a deadline
    (`_fit_rollouts`; a network values the leaves instead)."""
    cfg = self.config
    if deadline is not None and self.network is None:
      return self._fit_rollouts(state, deadline - time.monotonic())
    return cfg.rollouts, cfg.rollout_max_moves

  def _prior(self, state: pyspiel.State, deadline: float | None) -> None:
    """The prior search: at the searcher's first search, where only the
    opponent has acted since the game began (no chance, no move of ours),
    no previous search knows the opponent's policy, and the root would
    weigh its moves uniformly (a player 1 answering a uniform player 0:
    goofspiel's first bid, phantom_ttt's o). This searches from the
    game's start first, so that the opponent's decisions are solved as a
    previous search of ours at the start would have solved them, and keeps
    that search as the previous one: its policies give the root's
    reaches, its values the gadget's exits, its subtree the new tree's
    start. PRIOR_SHARE of the time (or of the simulations) goes to it.
    Where chance or we moved first, the start's histories would hold only
    what is consistent with our infostate, and the opponent, solved there,
    would see our hidden moves or cards (no order-2 set guards a prior
    search): none runs."""
    cfg = self.config
    if not cfg.prior_search or self.tree is not None:
      return
    opp = 1 - self.player
    steps = state.full_history()
    if not steps or any(step.player != opp for step in steps):
      return
    tree = self._new_tree(self._rollouts(state, deadline))
    start = self.game.new_initial_state()
    tree.add_root(start, self.keys.root(start), 1.0)
    self._value_pending(tree)
    if deadline is None:
      prior_deadline = None
      simulations = max(1, int(self.PRIOR_SHARE * cfg.simulations))
    else:
      prior_deadline = time.monotonic() + self.PRIOR_SHARE * max(
          deadline - time.monotonic(), 0.0)
      simulations = cfg.simulations
    self._run(tree, prior_deadline, simulations)
    self._keep_policies(tree)
    self.tree = tree

  def _keep_policies(self, tree: HistoryTree) -> None:
    """What the next searches read (the reaches of their roots): the
    average policies of `tree`'s rows near the root, by key, kept for
    POLICY_SEARCHES searches (memory stays bounded over a game)."""
    # (Below a gadget, the opponent's rows are one level deeper.)
    for _, key, actions, average in tree.near_root_policies(POLICY_LEVELS):
      self.policies[key] = dict(zip(actions, np.asarray(average).tolist()))
      self._policy_age[key] = self._searches
    stale = [k for k, age in self._policy_age.items()
             if age <= self._searches - POLICY_SEARCHES]
    for k in stale:
      del self.policies[k], self._policy_age[k]

  def _run(self, tree: HistoryTree, deadline: float | None,
           simulations: int) -> tuple[int, int]:
    """Growth and CFR+ on `tree` until `simulations` simulations (or
    `deadline`): (simulations, iterations)."""
    cfg = self.config
    if self.native:
      # (Under a deadline, the engine stops early by what reading its tree
      # took at the previous search.)
      stop = None if deadline is None else deadline - self._finish_seconds
      sims = iterations = walks = 0
      while True:
        # (Past the deadline, a run only ends the iteration owed.)
        left = (0 if stop is not None and time.monotonic() >= stop else
                max(simulations - sims, 0))
        counts = tree.run(left, cfg.expansions_per_update, stop,
                          cfg.max_nodes)
        sims, iterations, walks = (a + b for a, b in zip(
            (sims, iterations, walks), counts))
        if not self._value_pending(tree):
          break
      return sims, iterations
    c = 1.0 if cfg.expansions_per_update == -1 else cfg.expansions_per_update
    root_p = np.asarray([tree.reach[n] for n in tree.roots])
    root_p = root_p / root_p.sum()
    sims = iterations = walks = 0
    batch = 10
    while True:
      grow_start = time.monotonic()
      before = sims
      for _ in range(max(batch, sims // 10)):
        if sims >= simulations or len(tree) >= cfg.max_nodes:
          break
        walks += 1
        if self._simulate(tree, walks % 2, root_p, deadline):
          sims += 1
        if deadline is not None and time.monotonic() >= deadline:
          break
      self._value_pending(tree)
      grown = time.monotonic() - grow_start
      cfr_start = time.monotonic()
      # Untimed, a count (the same search in every process); timed, as
      # long as the growth took.
      planned = iterations + max(
          1, math.ceil((sims - before) / c))
      while True:
        iterations += 1
        tree.iterate(iterations, cfg.averaging_power)
        if deadline is None:
          if iterations >= planned:
            break
        else:
          now = time.monotonic()
          if now - cfr_start >= grown or now >= deadline:
            break
      done = (sims >= simulations or len(tree) >= cfg.max_nodes or
              walks > 20 * simulations)
      if deadline is not None:
        done = done or time.monotonic() >= deadline
      if done:
        break
    return sims, iterations

  def _value_pending(self, tree) -> bool:
    """Values the leaves waiting for the network (one call); False where
    none waited (or no network)."""
    if self.network is None:
      return False
    pending = tree.pending_leaves()
    if not pending:
      return False
    data = tree.leaf_data(pending, states=self.network.needs_states(),
                          tensors=self.network.engine_tensors)
    if self.query_log is not None:  # (training: the queries to pick from)
      self.query_log.append((tree, pending, data))
    tree.set_leaf_values(pending, self.network.values(data))
    return True

  def _finish(self, tree, root, groups, mine, kept, sims, iterations,
              seconds, setup) -> AnchoredResult:
    me, opp = self.player, 1 - self.player
    values = tree.node_values
    sign = 1.0 if me == 0 else -1.0
    expanded = [n for n in mine if tree.children[n] is not None]
    actions, average = tree.node_policy(mine[0])
    policy = {a: float(p) for a, p in zip(actions, average)}
    weights = np.asarray([tree.reach[n] for n in (expanded or mine)])
    weights = weights / weights.sum()
    value = float(sign * np.dot(weights, values[expanded or mine]))
    action_values = {}
    for slot, a in enumerate(actions if expanded else ()):
      kids = [tree.children[n][slot] for n in expanded]
      action_values[a] = float(sign * np.dot(weights, values[kids]))
    root_values = {}
    by_key: dict[str, list[int]] = {}
    for n in tree.roots:
      by_key.setdefault(tree.node_keys[n][opp], []).append(n)
    for key, nodes in by_key.items():
      w = np.asarray([tree.reach[n] for n in nodes])
      if w.sum() > 0:
        root_values[key] = float(-sign * np.dot(w / w.sum(), values[nodes]))
    self._searches += 1
    self._keep_policies(tree)
    self.tree = tree
    self.last_root = root
    self.last_result = AnchoredResult(
        policy=policy, value=value, action_values=action_values,
        root_values=root_values,
        root_histories=(sum(h.keys[me] == root[0].keys[me] for h in root),
                        len(root)),
        opponent_infostates={k: len(v) for k, v in groups.items()},
        nodes=len(tree), kept=kept, simulations=sims,
        iterations=iterations, seconds=seconds, setup_seconds=setup)
    return self.last_result
