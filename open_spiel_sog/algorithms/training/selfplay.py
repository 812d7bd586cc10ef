"""Sound self-play actors and query solvers (Algorithm 2; DESIGN.md section 8).

`Worker` holds one game's observer, encoder, network and search settings and
does the two kinds of work of Algorithm 2, whatever process runs it:

- `play_game()`: a self-play game in which every decision is made by the
  re-solving search of the acting seat (each seat keeps its own summaries and,
  as the sog bot, also re-solves at the other seat's decisions). The acting
  seat's searched policy at its public state is a policy target; each search
  pushes on average `q_search` of its leaf queries; the first searches, from
  the game's root without a gadget, give value targets at the root (each
  seat's search for its opponent's values); with probability `p_td1`
  a main-line public state also gets the game's outcome as a value target of
  the infostates actually held.
- `solve(query)`: GT-CFR from the query's public belief state (no gadget: the
  ranges are given); the root's counterfactual values are the value target,
  the root policy (at decision nodes) the policy target, and on average
  `q_recursive` of the solver's own queries go back to the queue. With
  `TrainConfig.solver == "exact"`, the query's subgame is solved to the end
  instead (`ExactValueFunction`, to `solver_tolerance`), and its root values
  and root policy are the targets.

Queries travel between processes as `QueryMessage`s (a history that reaches
the public state, and the two ranges); examples travel already encoded
(`cvpn.Batch`, or `cvpn.TokenBatch` for the token input).

With the token input (`NetworkConfig.input`), nothing walks the game: a
public state with more than `TrainConfig.max_histories` histories is a
sample, as in the sog bot, and each seat of a self-play game has its own
observer whose samples favour that seat's infostate (as two bots would).
A sampled query is rebuilt from its history as a new sample, its ranges
carried over by infostate key (infostates the new sample adds get 0).
Where a game's infostate strings turn out to forget what the player saw (a
decision infostate in two public states, `InfostateSplit`), a token-input
worker switches to action-observation histories, as the sog bot does, and
plays the game or solves the queries again.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Callable, Sequence

import numpy as np
import pyspiel

from open_spiel_sog.algorithms.sog import cvpn
from open_spiel_sog.algorithms.sog import gt_cfr
from open_spiel_sog.algorithms.sog import resolving
from open_spiel_sog.algorithms.training.config import TrainConfig
from open_spiel_sog.algorithms.sog import ExactValueFunction
from open_spiel_sog.algorithms.sog.value_functions import Query
from open_spiel_sog.public_state import InfostateSplit
from open_spiel_sog.public_state import ObserverConfig
from open_spiel_sog.public_state import PublicState
from open_spiel_sog.public_state import PublicStateObserver
from open_spiel_sog.public_state import search_game
from open_spiel_sog.public_state import unsupported_infostate_source


@dataclasses.dataclass
class QueryMessage:
  """A query in a form that pickles: a history reaching its public state,
  and, for a sampled public state, each player's infostate keys that the
  ranges are over, and the infostate keys of the worker that made it
  ("auto", or "aoh" after a switch: see the module docstring)."""
  history: tuple[int, ...]
  ranges: tuple[np.ndarray, np.ndarray]
  keys: tuple[list[str], list[str]] | None = None
  infostates: str = "auto"


@dataclasses.dataclass
class WorkStats:
  games: int = 0
  searches: int = 0
  solves: int = 0
  queries_pushed: int = 0
  examples: int = 0


def _pick(rng: np.random.Generator, items: Sequence, mean: float) -> list:
  """On average `mean` items, uniformly without replacement."""
  if not items or mean <= 0:
    return []
  count = int(mean) + int(rng.random() < mean - int(mean))
  count = min(count, len(items))
  return [items[i] for i in rng.choice(len(items), size=count, replace=False)]


def _infostate_mass(ps: PublicState, ranges, p: int, j: int) -> float:
  """Chance reach times the opponent's range, summed over the histories of
  p's infostate j: its counterfactual value over its expected utility."""
  o = 1 - p
  mask = ps.history_infostate[p] == j
  return float(np.sum(ps.chance_reach[mask] *
                      ranges[o][ps.history_infostate[o][mask]]))


def _policy_array(result: gt_cfr.SearchResult, ps: PublicState,
                  num_actions: int) -> np.ndarray:
  out = np.zeros((ps.num_infostates(ps.current_player()), num_actions))
  for j, probs in enumerate(result.policy(ps)):
    for a, p in probs.items():
      out[j, a] = p
  total = out.sum(axis=1, keepdims=True)
  return out / np.where(total > 0, total, 1.0)


class Worker:
  """Actor and solver work for one game (see the module docstring)."""

  def __init__(self, config: TrainConfig, net: cvpn.CVPN | None = None,
               seed: int = 0, index: int = 0):
    """Without `net`, the worker builds the network without parameters
    (they come from the learner): `set_params` before any work."""
    self.config = config
    self.game = search_game(pyspiel.load_game(config.game))
    if net is None:
      net = cvpn.make_network(PublicStateObserver(self.game), config.network)
    self.net = net
    self.encoder = net.encoder
    self.value_fn = cvpn.value_function_for(net)
    self.rng = np.random.default_rng([config.seed, seed])
    self.sampling = config.network.input == "tokens" and config.max_histories
    self.infostates = "auto"  # "aoh" after a switch (_switch_to_aoh)
    self._make_observers()
    self.num_actions = self.game.num_distinct_actions()
    perfect = (self.game.get_type().information ==
               pyspiel.GameType.Information.PERFECT_INFORMATION)
    self._top_k = 1 if perfect else 0
    self.stats = WorkStats()
    self._exact = None  # the exact solver's value function, when used
    self.index = index  # which actor or solver this is (in stats)

  def _make_observers(self) -> None:
    """Slots need exact public states (the encoder's observer); the token
    input samples past max_histories, one observer per seat favouring its
    own infostate, and one for the query solves."""
    config = self.config
    if self.sampling:
      def observer(i, favoured):
        o = PublicStateObserver(self.game, ObserverConfig(
            infostates=self.infostates, max_histories=config.max_histories,
            sample_seed=int(self.rng.integers(1 << 31)) + i))
        o.favoured_player = favoured
        return o
      self.seat_observers = [observer(0, 0), observer(1, 1)]
      self.observer = observer(2, None)
    else:
      self.observer = (self.net.encoder.observer if self.infostates == "auto"
                       else PublicStateObserver(self.game, ObserverConfig(
                           infostates=self.infostates)))
      self.seat_observers = [self.observer, self.observer]

  def _switch_to_aoh(self, reason: str) -> bool:
    """As the sog bot does where the game's infostate strings turn out to
    forget what the player saw: the worker's observers key infostates by
    action-observation histories from now on (once, with a notice). False
    where it cannot: the keys are not the automatic string keys, the input
    is slots (laid out on the encoder's own observer), or the game has no
    action-observation histories."""
    if (self.infostates != "auto" or self.config.network.input != "tokens"
        or self.observer.infostate_source != "string" or
        unsupported_infostate_source(self.game, "aoh")):
      return False
    print(f"train: {self.game}'s infostate strings forget what the player "
          f"saw ({reason}); switching to action-observation histories",
          file=sys.stderr)
    for o in {id(o): o for o in self.seat_observers + [self.observer]
              }.values():
      self.value_fn.forget(o, o.restart())
    self.infostates = "aoh"
    self._make_observers()
    return True

  def _search_config(self, simulations, expansions) -> gt_cfr.GTCFRConfig:
    return gt_cfr.GTCFRConfig(
        simulations=simulations, expansions_per_update=expansions,
        top_k=self._top_k, record_queries=True,
        walks_per_simulation=self.config.walks_per_simulation)

  def set_params(self, params) -> None:
    self.net.set_params(params)

  def set_value_function(self, value_fn) -> None:
    """The searches value their leaves with `value_fn` from now on (the
    inference service's client: `training.inference.use_service`)."""
    self.value_fn = value_fn

  # --- Messages --------------------------------------------------------------

  def message(self, query: Query) -> QueryMessage:
    ps = query.public_state
    h = ps.histories[0]
    keys = None
    if not ps.exact:
      keys = (list(ps.infostates(0)), list(ps.infostates(1)))
    return QueryMessage(tuple(h.history()),
                        (np.asarray(query.ranges[0], dtype=np.float32),
                         np.asarray(query.ranges[1], dtype=np.float32)),
                        keys, self.infostates)

  def query(self, message: QueryMessage) -> Query:
    if message.infostates == "aoh" and self.infostates == "auto":
      # Its worker found that the game's strings forget: so would this one.
      self._switch_to_aoh("a query keyed by action-observation histories")
    state = self.game.new_initial_state()
    for a in message.history:
      state.apply_action(a)
    ps, _ = self.observer.public_state_of(state)
    ranges = tuple(np.asarray(r, dtype=np.float64) for r in message.ranges)
    if message.infostates != self.infostates:
      # Made on other infostate keys (before a switch): no ranges carry.
      ranges = (np.ones(ps.num_infostates(0)), np.ones(ps.num_infostates(1)))
    elif message.keys is not None or not ps.exact:
      # A sample (here or where the query was made): ranges by key.
      old = message.keys or (ps.infostates(0), ps.infostates(1))
      mapped = []
      for p in range(2):
        by_key = dict(zip(old[p], ranges[p]))
        mapped.append(np.asarray([by_key.get(k, 0.0)
                                  for k in ps.infostates(p)]))
        if not mapped[p].any():  # nothing in common: uniform
          mapped[p] = np.ones(ps.num_infostates(p))
      ranges = (mapped[0], mapped[1])
    return Query(ps, ranges)

  def _restart_observers(self) -> None:
    """Sampled observers: drops what earlier games and solves built."""
    if not self.sampling:
      return
    for o in {id(o): o for o in self.seat_observers + [self.observer]
              }.values():
      self.value_fn.forget(o, o.restart())

  # --- Actor -----------------------------------------------------------------

  def play_game(self, push: Callable[[list[QueryMessage]], None] | None = None
                ) -> tuple[cvpn.Batch, list[QueryMessage]]:
    """One sound self-play game: (examples, queries to solve).

    With `push`, each search's queries go to `push` as soon as the search
    ends (the solvers get a steady supply rather than a game's worth at its
    end), and the returned list is empty.
    """
    try:
      return self._play_game(push)
    except InfostateSplit as e:
      if not self._switch_to_aoh("a decision infostate lies in two public "
                                 "states"):
        raise
      return self._play_game(push)

  def _play_game(self, push):
    cfg = self.config
    rcfg = resolving.ResolveConfig(
        search=self._search_config(cfg.actor_simulations,
                                   cfg.actor_expansions_per_update),
        alpha=cfg.alpha)
    self._restart_observers()
    resolvers = [resolving.Resolver(self.seat_observers[i], i, self.value_fn,
                                    rcfg, rng=self.rng) for i in range(2)]
    may_resign = (cfg.resign_threshold is not None
                  and self.rng.random() >= cfg.p_no_resign)
    state = self.game.new_initial_state()
    policy_queries, policy_targets = [], []
    main_line: list[tuple[Query, int, int]] = []  # (query, infostates)
    pushed: list[QueryMessage] = []
    moves = 0
    root_values: list[np.ndarray | None] = [None, None]
    root_ranges = root_ps = None
    while not state.is_terminal():
      if cfg.max_moves and moves >= cfg.max_moves:
        break
      if state.is_chance_node():
        actions, probs = zip(*state.chance_outcomes())
        state.apply_action(int(actions[self.rng.choice(len(actions),
                                                       p=probs)]))
        continue
      q = int(state.current_player())
      acting = None
      for i in range(2):
        if i != q and not cfg.search_opponent_nodes:
          continue
        seat_ps, seat_h = self.seat_observers[i].public_state_of(state)
        if i == q:
          ps, h = seat_ps, seat_h
        result = resolvers[i].search(seat_ps)
        self.stats.searches += 1
        if result.tree.root_ps.parent is None and (
            root_ps is None or result.tree.root_ps is root_ps):
          # A search from the game's root has no gadget: it is a plain solve
          # of the root belief, and its tracked (opponent's) values are
          # value targets there, as a query solver's would be.
          root_values[1 - i] = result.root_values[1 - i]
          root_ranges = result.root_ranges
          root_ps = result.tree.root_ps
        picked = [self.message(x)
                  for x in _pick(self.rng, result.queries, cfg.q_search)]
        self.stats.queries_pushed += len(picked)
        if push is not None:
          push(picked)
        else:
          pushed.extend(picked)
        if i == q:
          acting = result
      summary = acting.summaries[ps.id]
      query = Query(ps, summary.ranges)
      policy = _policy_array(acting, ps, self.num_actions)
      policy_queries.append(query)
      policy_targets.append(policy)
      j0 = int(ps.history_infostate[0][h])
      j1 = int(ps.history_infostate[1][h])
      main_line.append((query, j0, j1))
      j = (j0, j1)[q]
      if may_resign and self._expected_value(ps, summary, q, j) < (
          cfg.resign_threshold):
        break
      probs = policy[j]
      legal = state.legal_actions()
      mixed = np.zeros(self.num_actions)
      mixed[legal] = (1 - cfg.epsilon) * probs[legal] + cfg.epsilon / len(
          legal)
      if cfg.greedy_after and moves >= cfg.greedy_after:
        action = int(np.argmax(mixed))
      else:
        action = int(self.rng.choice(self.num_actions, p=mixed / mixed.sum()))
      state.apply_action(action)
      moves += 1
    self.stats.games += 1
    batches = [self.encoder.encode(policy_queries, policies=policy_targets)]
    if root_ranges is not None:
      batches.append(self.encoder.encode([Query(root_ps, root_ranges)],
                                         values=[root_values]))
    if state.is_terminal() and cfg.p_td1 > 0:
      returns = state.returns()
      for query, j0, j1 in main_line:
        if self.rng.random() < cfg.p_td1:
          batches.append(self._td1_example(query, (j0, j1), returns))
    batch = cvpn.concatenate(batches)
    self.stats.examples += len(batch)
    return batch, pushed

  def _expected_value(self, ps, summary, q, j) -> float:
    """The acting player's expected utility at its infostate j."""
    mass = _infostate_mass(ps, summary.ranges, q, j)
    return float(summary.values[q][j]) / mass if mass > 0 else 0.0

  def _td1_example(self, query: Query, held, returns) -> cvpn.Batch:
    """The outcome as the value of the infostates held (others masked)."""
    ps = query.public_state
    values, masks = [], []
    for p in range(2):
      v = np.zeros(ps.num_infostates(p))
      v[held[p]] = returns[p] * _infostate_mass(ps, query.ranges, p, held[p])
      values.append(v)
      mask = np.zeros(ps.num_infostates(p), dtype=bool)
      mask[held[p]] = True
      masks.append(mask)
    return self.encoder.encode([query], values=[values],
                               value_masks=[masks])

  # --- Query solver ----------------------------------------------------------

  def _interior_targets(self, result: gt_cfr.SearchResult, count: int):
    """Up to `count` interior public states of a solver's tree (not its
    root) that both players reach, uniformly."""
    if count <= 0:
      return []
    candidates = []
    for node in result.tree.nodes[1:]:
      if node.ps.is_terminal() or not node.expanded:
        continue
      summary = result.summaries[node.ps.id]
      if summary.ranges[0].sum() > 0 and summary.ranges[1].sum() > 0:
        candidates.append(node)
    return _pick(self.rng, candidates, count)

  def solve(self, messages: Sequence[QueryMessage]
            ) -> tuple[cvpn.Batch, list[QueryMessage]]:
    """Value (and policy) targets for queries: (examples, recursive queries)."""
    try:
      return self._solve(messages)
    except InfostateSplit as e:
      if not self._switch_to_aoh("a decision infostate lies in two public "
                                 "states"):
        raise
      return self._solve(messages)

  def _solve(self, messages):
    cfg = self.config
    if cfg.solver == "exact":
      return self._solve_exactly(messages)
    search = self._search_config(cfg.solver_simulations,
                                 cfg.solver_expansions_per_update)
    batches, pushed = [], []
    self._restart_observers()
    for message in messages:
      query = self.query(message)
      ps = query.public_state
      result = gt_cfr.GTCFR(ps, self.value_fn, search, ranges=query.ranges,
                            rng=self.rng).run()
      self.stats.solves += 1
      queries, values = [query], [result.root_values]
      policies = [_policy_array(result, ps, self.num_actions)
                  if ps.is_player_node() else None]
      for node in self._interior_targets(result, cfg.solver_value_targets - 1):
        summary = result.summaries[node.ps.id]
        queries.append(Query(node.ps, summary.ranges))
        values.append(summary.values)
        policies.append(None)
      pushed.extend(self.message(x)
                    for x in _pick(self.rng, result.queries, cfg.q_recursive))
      # Encoded now: with a sampled observer, the next message's query may
      # resample a public state on its way and drop this search's public
      # states with their histories (encoding a chance-node root, which no
      # network call cached, then failed).
      batches.append(self.encoder.encode(queries, values=values,
                                         policies=policies))
    batch = (cvpn.concatenate(batches) if batches else
             self.encoder.encode([], values=[], policies=[]))
    self.stats.examples += len(batch)
    self.stats.queries_pushed += len(pushed)
    return batch, pushed

  def _solve_exactly(self, messages: Sequence[QueryMessage]
                     ) -> tuple[cvpn.Batch, list[QueryMessage]]:
    """`solve` with solver "exact": each query's subgame solved to the
    tolerance, side by side (a sampled query's with those built before it,
    before the next is built); its root values and policy are the
    targets."""
    if self._exact is None:
      self._exact = ExactValueFunction(
          self.game, tolerance=self.config.solver_tolerance)
    self._restart_observers()
    batches, queries = [], []

    def solve_queries(queries):
      evaluations = self._exact.evaluate(queries)
      self.stats.solves += len(queries)
      batches.append(self.encoder.encode(
          queries, values=[e.values for e in evaluations],
          policies=[e.policy for e in evaluations]))  # None at chance nodes

    for i, message in enumerate(messages):
      queries.append(self.query(message))
      if not queries[-1].public_state.exact and i + 1 < len(messages):
        # Building the next query may resample a public state on its way and
        # drop this sample with its histories (see `solve`): the queries
        # built so far are solved first.
        solve_queries(queries)
        queries = []
    if queries or not batches:
      solve_queries(queries)
    batch = cvpn.concatenate(batches) if len(batches) > 1 else batches[0]
    self.stats.examples += len(batch)
    return batch, []
