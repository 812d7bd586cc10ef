"""Value functions: counterfactual values of public belief states (DESIGN.md 7).

A public belief state (PBS) is a public state plus each player's range over
its infostates there. A value function evaluates a batch of PBSs and returns,
for each, the counterfactual values of both players' infostates and, at
decision nodes, a prior policy of the acting player (for PUCT in GT-CFR).

Units: counterfactual values are on the scale of the tree they are used in:
v_p(I) = sum over histories h in I of chance_reach(h) * r_-p(infostate of -p
at h) * E[u_p | h], with chance reach from the game root and the opponent's
range as given (not normalised). `normalise_beliefs` and `denormalise_values`
hold the one convention for models that see normalised beliefs (the CVPN):
they see each range normalised to sum 1 and chance reach normalised within the
public state, and the true v_p is the prediction times ||r_-p||_1 times C,
where C is the public state's total chance reach.

Implementations:
  exact: solves the PBS's subgame to the end. Imperfect information:
    PublicTreeCFR until the subgame's exploitability under the query's ranges
    is within a tolerance (warm-started per public state). Perfect
    information: expectimax over the subtree (memoised per history), which is
    the exact value whatever the ranges.
  rollout: Monte Carlo values of uniform-random play from every history of
    the public state (cached per public state), combined with the ranges
    exactly. A weak default for games that have no trained network.
The network-backed value function (`cvpn`) implements the same interface.
"""

from __future__ import annotations

import abc
import collections
import collections.abc
import dataclasses
import time
from typing import Callable, NamedTuple, Sequence
import warnings

import numpy as np
import pyspiel

from open_spiel_sog.algorithms.sog import leaf_solver
from open_spiel_sog.algorithms.cfr import CFRConfig
from open_spiel_sog.public_state import PublicState
from open_spiel_sog.public_state import PublicTree


@dataclasses.dataclass
class Query:
  """A public belief state to evaluate.

  Attributes:
    public_state: a non-terminal public state.
    ranges: (r0, r1), each player's (unnormalised) reach of its infostates in
      `public_state.infostates(p)` order.
  """
  public_state: PublicState
  ranges: tuple[np.ndarray, np.ndarray]


@dataclasses.dataclass
class Evaluation:
  """What a value function returns for one query.

  Attributes:
    values: (v0, v1), counterfactual values of each player's infostates.
    policy: [n_q, num_distinct_actions] prior of the acting player q over the
      game's actions (zero on illegal actions, rows sum to 1), or None at
      chance nodes.
  """
  values: tuple[np.ndarray, np.ndarray]
  policy: np.ndarray | None


class PackedQueries:
  """Many queries with their ranges concatenated (GT-CFR's leaves).

  Attributes:
    public_states: the L public states.
    ranges: (r0, r1), each the concatenation over the public states of that
      player's range (`sizes[p][i]` entries for public state i).
    key: identifies the list of public states (value functions may cache
      per-list arrays under it); None disables caching.
  """

  def __init__(self, public_states: Sequence[PublicState],
               ranges: tuple[np.ndarray, np.ndarray], key=None, sizes=None):
    self.public_states = list(public_states)
    self.ranges = ranges
    self.key = key
    self._sizes = sizes

  def __len__(self) -> int:
    return len(self.public_states)

  @property
  def sizes(self) -> tuple[np.ndarray, np.ndarray]:
    if self._sizes is None:
      self._sizes = tuple(
          np.asarray([ps.num_infostates(p) for ps in self.public_states],
                     dtype=np.int64) for p in range(2))
    return self._sizes

  def query(self, i: int) -> Query:
    """The i-th query on its own."""
    out = []
    for p in range(2):
      sizes = self.sizes[p]
      lo = int(sizes[:i].sum())
      out.append(np.array(self.ranges[p][lo:lo + sizes[i]]))
    return Query(self.public_states[i], (out[0], out[1]))

  def queries(self) -> list[Query]:
    out = []
    offsets = [np.concatenate([[0], np.cumsum(self.sizes[p])])
               for p in range(2)]
    for i, ps in enumerate(self.public_states):
      out.append(Query(ps, tuple(
          np.array(self.ranges[p][offsets[p][i]:offsets[p][i + 1]])
          for p in range(2))))
    return out


class NetworkPart(NamedTuple):
  """What a network value function reads of one public state
  (`ValueFunction.network_parts`): its input row is `head` followed by one
  column per value row, where each infostate's normalised range goes, at the
  row its value comes out of."""
  head: np.ndarray  # [H] float32: the public state's features, who acts
  rows0: np.ndarray  # player 0's infostates' value rows
  rows1: np.ndarray  # player 1's
  chance: float  # the public state's total chance reach
  acting: tuple[np.ndarray, np.ndarray] | None  # (rows of the actor, legal)

  @property
  def rows(self) -> tuple[np.ndarray, np.ndarray]:
    """Each player's infostates' rows."""
    return self.rows0, self.rows1

  @property
  def legal(self) -> np.ndarray | None:
    """[n_q, A] the acting player's legal actions (None at chance and
    terminal public states)."""
    return None if self.acting is None else self.acting[1]


class NetworkLayout(NamedTuple):
  """Packed queries as a network reads them: what the network's inputs are
  packed from and its values unpacked with (the arithmetic of the shim's
  `cvpn_pack_inputs` and `cvpn_unpack_values`, which GT-CFR's update with a
  network runs in C++ around the network call: `cfr_leaf_inputs`,
  `cfr_network_update`).

  Attributes:
    heads: [L, H] float32, each query's `NetworkPart.head`.
    entry_query: per player, the query of each entry of the packed ranges.
    columns: per player, each entry's input column (H + its value row).
    value_rows: per player, each entry's column in the network's output.
    sizes: per player [L], entries per query.
    chance: [L] the total chance reach of each query's public state.
    input_size: the width of an input row.
    units: per player, the unit of the network's values.
    defined: the queries that have a prior (decision nodes).
    priors: per query, its `NetworkPart.acting`.
  """
  heads: np.ndarray
  entry_query: tuple[np.ndarray, np.ndarray]
  columns: tuple[np.ndarray, np.ndarray]
  value_rows: tuple[np.ndarray, np.ndarray]
  sizes: tuple[np.ndarray, np.ndarray]
  chance: np.ndarray
  input_size: int
  units: tuple[float, float]
  defined: list[int]
  priors: list

  @classmethod
  def from_parts(cls, parts: Sequence[NetworkPart],
                 sizes: tuple[np.ndarray, np.ndarray], input_size: int,
                 units: tuple[float, float]) -> "NetworkLayout":
    num = len(parts)
    entry_query = tuple(np.repeat(np.arange(num), sizes[p]) for p in range(2))
    value_rows = tuple(
        np.concatenate([part.rows[p] for part in parts]) if num
        else np.zeros(0, np.int64) for p in range(2))
    width = parts[0].head.shape[0] if num else 0
    priors = [part.acting for part in parts]
    return cls(
        heads=(np.array([part.head for part in parts]) if num
               else np.zeros((0, 0), dtype=np.float32)),
        entry_query=entry_query,
        columns=tuple(width + value_rows[p] for p in range(2)),
        value_rows=value_rows, sizes=tuple(sizes),
        chance=np.asarray([part.chance for part in parts], dtype=np.float64),
        input_size=input_size, units=units,
        defined=[i for i, a in enumerate(priors) if a is not None],
        priors=priors)


class LazyPriors(collections.abc.Sequence):
  """The priors of packed queries (a policy [n_q, A] or None per query),
  each computed when first read.

  GT-CFR replaces a leaf's prior at every value call but reads it only when
  the leaf is expanded; a network's policy head is then run for the few
  leaves that are read (`CVPNValueFunction.evaluate_packed`).

  Args:
    defined: the queries that have a prior (the others give None).
    compute: compute(k) gives query k's prior (k in `defined`).
    size: the number of queries.
  """

  def __init__(self, defined: Sequence[int],
               compute: Callable[[int], np.ndarray], size: int):
    self.defined = defined
    self._compute = compute
    self._size = size
    self._items: dict[int, np.ndarray] = {}
    self._has = None

  def __len__(self) -> int:
    return self._size

  def __getitem__(self, k: int) -> np.ndarray | None:
    if not 0 <= k < self._size:
      raise IndexError(k)
    item = self._items.get(k)
    if item is None:
      if self._has is None:
        self._has = set(self.defined)
      if k not in self._has:
        return None
      item = self._items[k] = self._compute(k)
    return item


class ValueFunction(abc.ABC):
  """Evaluates batches of public belief states."""

  name: str = "value_function"

  @abc.abstractmethod
  def evaluate(self, queries: Sequence[Query]) -> list[Evaluation]:
    """One Evaluation per query, in order."""

  def evaluate_packed(self, packed: PackedQueries):
    """((v0, v1) concatenated like the ranges, [policy or None per query]);
    the policies may be a `LazyPriors`.

    Value functions with a vectorised path (the CVPN) override this."""
    evaluations = self.evaluate(packed.queries())
    values = tuple(
        np.concatenate([e.values[p] for e in evaluations])
        if evaluations else np.zeros(0) for p in range(2))
    return values, [e.policy for e in evaluations]

  # A network value function (the CVPN) implements the three methods below;
  # GT-CFR then packs its inputs and unpacks its values itself, in C++
  # around the network call, with the arithmetic of its `evaluate_packed`
  # (which a search then does not call: a subclass that changes
  # `evaluate_packed` returns None from `network_spec`).

  def network_spec(self) -> tuple[int, tuple[float, float]] | None:
    """(input row width, each player's value unit) of a network value
    function; None (the default) for the others."""
    return None

  def network_parts(self, public_states: Sequence[PublicState]
                    ) -> list[NetworkPart]:
    """What the network reads of each of `public_states` (non-terminal)."""
    raise NotImplementedError(f"{self.name} is not a network")

  def network_values(self, layout: NetworkLayout, inputs: np.ndarray):
    """(the network's outputs [L, K] float32 for `inputs` [L, input_size],
    LazyPriors of the queries of `layout`)."""
    raise NotImplementedError(f"{self.name} is not a network")

  def prior(self, query: Query) -> np.ndarray | None:
    """The policy `evaluate` gives `query` (what PUCT needs at a search's
    growth root); value functions whose prior does not need the values
    override this to skip them."""
    return self.evaluate([query])[0].policy

  def forget(self, observer, ids) -> None:
    """Drops what is cached for the public states `ids` of `observer`
    (which `PublicStateObserver.prune` or `restart` dropped)."""
    del observer, ids

  def fixed_history_values(self, ps: PublicState, pending: int = 1):
    """Where this function's values at `ps` are a fixed weighted sum over
    histories, (infostate of player 0 [K], of player 1 [K], weight [K],
    prior) such that, for any ranges, v0[e] = sum over the K histories with
    player 0's infostate e of weight * r1[infostate of player 1], v1[e] =
    -(the same with the players swapped), and `evaluate`'s policy is
    `prior` (None: uniform over each infostate's legal actions, which a
    search's rows take without an array). None (the default) where values
    depend on the ranges otherwise
    (networks, solvers). A search may then fold the leaf into its own sums
    instead of querying it on every update. `pending`: the leaves the
    caller has still to value in this batch, `ps` included (a time-limited
    function shares its time among them)."""
    del ps, pending
    return None


# --- Normalisation (the single convention, DESIGN.md section 4) -------------


def normalise_beliefs(ps: PublicState, ranges: Sequence[np.ndarray]):
  """Normalised beliefs and the scale that turns normalised values back.

  Returns:
    (normalised_ranges (r0/|r0|, r1/|r1|), normalised chance reach [H],
    scale (s0, s1)) with s_p = ||r_-p||_1 * C, C = sum of chance reach.
  """
  ranges = [np.asarray(r, dtype=np.float64) for r in ranges]
  chance_total = float(ps.chance_reach.sum())
  normalised, scales = normalise_packed_beliefs(
      ranges, [np.zeros(len(r), dtype=np.int64) for r in ranges],
      [np.asarray([len(r)]) for r in ranges], np.asarray([chance_total]))
  chance = ps.chance_reach / chance_total if chance_total > 0 else ps.chance_reach
  return tuple(normalised), chance, (float(scales[0][0]), float(scales[1][0]))


def normalise_packed_beliefs(ranges: Sequence[np.ndarray],
                             entry_query: Sequence[np.ndarray],
                             sizes: Sequence[np.ndarray],
                             chance_totals: np.ndarray):
  """`normalise_beliefs` for many queries at once (the same convention).

  Args:
    ranges: (r0, r1) concatenated over the queries.
    entry_query: (q0, q1), the query of each entry of r0 and r1.
    sizes: (n0, n1), the entries of each query per player.
    chance_totals: [L] C of each query's public state.

  Returns:
    (normalised ranges, concatenated like `ranges`; scales (s0, s1) [L]).
  """
  num = len(chance_totals)
  norms = [np.bincount(q, weights=r, minlength=num)
           for r, q in zip(ranges, entry_query)]
  normalised = []
  for p in range(2):
    n = norms[p][entry_query[p]]
    uniform = 1.0 / np.maximum(sizes[p], 1)[entry_query[p]]
    normalised.append(np.where(n > 0, ranges[p] / np.where(n > 0, n, 1.0),
                               uniform))
  scales = (norms[1] * chance_totals, norms[0] * chance_totals)
  return normalised, scales


def denormalise_values(values: Sequence[np.ndarray], scale: Sequence[float]):
  """True counterfactual values from values predicted for normalised beliefs."""
  return tuple(np.asarray(v) * s for v, s in zip(values, scale))


def history_values_to_counterfactual(ps: PublicState, ranges, u0: np.ndarray,
                                     index: np.ndarray | None = None):
  """(v0, v1) from expected utilities u0 of player 0 of the histories
  `index` (default: all histories of `ps`, in order)."""
  inf0, inf1 = ps.history_infostate
  chance = ps.chance_reach
  if index is not None:
    inf0, inf1, chance = inf0[index], inf1[index], chance[index]
  weight = chance * u0
  v0 = np.bincount(inf0, weights=weight * ranges[1][inf1],
                   minlength=ps.num_infostates(0))
  v1 = -np.bincount(inf1, weights=weight * ranges[0][inf0],
                    minlength=ps.num_infostates(1))
  return v0, v1


def uniform_policy(ps: PublicState, num_actions: int) -> np.ndarray | None:
  """[n_q, num_actions] uniform over each infostate's legal actions."""
  if not ps.is_player_node():
    return None
  q = ps.current_player()
  out = np.zeros((ps.num_infostates(q), num_actions))
  for j in range(ps.num_infostates(q)):
    legal = ps.legal_actions(j)
    out[j, legal] = 1.0 / len(legal)
  return out


# --- Exact ------------------------------------------------------------------


class ExactValueFunction(ValueFunction):
  """Solves each query's subgame to the end (small games; the test oracle).

  Imperfect information: predictive CFR+ (`CFRConfig.predictive`; `config`
  picks another variant) from the query's ranges until the subgame's own
  exploitability under those ranges (NashConv / 2 of the average profile,
  conditional on reaching the public state) is at most `tolerance` times the
  game's utility range, checked after 0, 1, 3, 7, 15 and then every 16
  iterations. The values
  returned are the counterfactual values of that profile (the average policy,
  completed by best responses where a player's own range is zero), so they
  are the values of one profile whose exploitability is within the
  tolerance. A query that reaches `max_iterations` first returns its profile
  as it stands and is counted in `stats["capped"]` (with a warning the first
  time). The queries of one `evaluate` call (a search's leaves) are solved
  side by side as one forest (`leaf_solver`); each public state keeps its
  compiled subtree and, with `warm_start`, its regrets and average for the
  next query of the same leaf (GT-CFR queries every leaf at each update).
  Perfect information: expectimax values per history, exact for any ranges.
  """

  name = "exact"

  def __init__(self, game: pyspiel.Game, *, tolerance: float = 1e-3,
               max_iterations: int = 10_000, warm_start: bool = True,
               config: CFRConfig | None = None, max_cached: int = 4096):
    if not tolerance > 0 or not np.isfinite(tolerance):
      raise ValueError("exact value function: tolerance must be a positive "
                       f"fraction of the utility range, got {tolerance}")
    if max_iterations < 1:
      raise ValueError("exact value function: max_iterations must be >= 1, "
                       f"got {max_iterations}")
    self.game = game
    self.tolerance = tolerance
    self.utility_range = float(game.max_utility() - game.min_utility()) or 1.0
    self.max_iterations = max_iterations
    self.warm_start = warm_start
    self.config = config or CFRConfig(predictive=True)
    self.max_cached = max_cached
    self.num_actions = game.num_distinct_actions()
    self.perfect_information = (
        game.get_type().information ==
        pyspiel.GameType.Information.PERFECT_INFORMATION)
    # Keyed by (observer, public state id): ids are per observer.
    self._trees: dict[tuple, PublicTree] = {}
    self._states: dict[tuple, leaf_solver.LeafState] = {}
    self._forests: collections.OrderedDict[tuple, leaf_solver.Forest] = (
        collections.OrderedDict())
    self._memo: dict[str, float] = {}
    # Queries solved, CFR+ iterations run over them, queries that hit
    # max_iterations.
    self.stats = {"queries": 0, "iterations": 0, "capped": 0}

  @property
  def absolute_tolerance(self) -> float:
    """The exploitability a query's profile must reach, in utility units."""
    return self.tolerance * self.utility_range

  def reset(self) -> None:
    """Forgets the warm starts (the compiled subtrees are kept)."""
    self._states.clear()

  # Perfect information: expectimax.
  def _history_value(self, state: pyspiel.State) -> float:
    key = state.history_str()
    value = self._memo.get(key)
    if value is not None:
      return value
    if state.is_terminal():
      value = state.returns()[0]
    elif state.is_chance_node():
      value = sum(p * self._history_value(state.child(a))
                  for a, p in state.chance_outcomes())
    else:
      child_values = [self._history_value(state.child(a))
                      for a in state.legal_actions()]
      value = max(child_values) if state.current_player() == 0 else min(
          child_values)
    self._memo[key] = value
    return value

  def _evaluate_perfect_information(self, query: Query) -> Evaluation:
    ps = query.public_state
    u0 = np.asarray([self._history_value(h) for h in ps.histories])
    values = history_values_to_counterfactual(ps, query.ranges, u0)
    policy = None
    if ps.is_player_node():
      q = ps.current_player()
      policy = np.zeros((ps.num_infostates(q), self.num_actions))
      for j in range(ps.num_infostates(q)):
        h = ps.histories[int(np.nonzero(ps.history_infostate[q] == j)[0][0])]
        legal = ps.legal_actions(j)
        child = np.asarray([self._history_value(h.child(a)) for a in legal])
        best = child.max() if q == 0 else child.min()
        hits = np.isclose(child, best)
        policy[j, np.asarray(legal)[hits]] = 1.0 / hits.sum()
    return Evaluation(values=values, policy=policy)

  # Imperfect information: the leaf solver.
  def _forest(self, public_states: Sequence[PublicState]) -> leaf_solver.Forest:
    key = tuple(_key(ps) for ps in public_states)
    forest = self._forests.get(key)
    if forest is not None:
      self._forests.move_to_end(key)
      return forest
    if len(self._trees) + len(public_states) > self.max_cached:
      self._trees.clear()
      self._states.clear()
      self._forests.clear()
    trees = []
    for ps in public_states:
      tree = self._trees.get(_key(ps))
      if tree is None:
        tree = self._trees[_key(ps)] = PublicTree.from_subtree(ps)
      trees.append(tree)
    forest = leaf_solver.Forest(public_states, trees)
    self._forests[key] = forest
    while len(self._forests) > 8:
      self._forests.popitem(last=False)
    return forest

  def solve(self, queries: Sequence[Query], *, profiles: bool = False
            ) -> list[leaf_solver.LeafSolution]:
    """Each query's solution, within the tolerance (or at the iteration cap),
    in the query's units; with `profiles`, each subgame's whole profile too.
    Imperfect-information games only."""
    if not queries:
      return []
    public_states = [q.public_state for q in queries]
    forest = self._forest(public_states)
    states = []
    for ps in public_states:
      state = self._states.get(_key(ps)) if self.warm_start else None
      if state is None:
        state = leaf_solver.LeafState(tree=forest.trees[len(states)])
        if self.warm_start:
          self._states[_key(ps)] = state
      states.append(state)
    solutions = leaf_solver.solve(
        forest, states, [q.ranges for q in queries],
        tolerance=self.absolute_tolerance,
        max_iterations=self.max_iterations, config=self.config,
        profiles=profiles)
    capped = [s for s in solutions if s.capped]
    if capped and not self.stats["capped"]:
      warnings.warn(
          f"exact value function: {len(capped)} quer"
          f"{'y' if len(capped) == 1 else 'ies'} reached max_iterations="
          f"{self.max_iterations} at exploitability up to "
          f"{max(s.exploitability for s in capped):.3g} (tolerance "
          f"{self.absolute_tolerance:.3g}); their values are used as they "
          "stand. stats['capped'] counts such queries.", RuntimeWarning,
          stacklevel=2)
    self.stats["queries"] += len(solutions)
    self.stats["iterations"] += sum(s.iterations for s in solutions)
    self.stats["capped"] += len(capped)
    return solutions

  def _evaluate_imperfect_information(self, queries: Sequence[Query]
                                      ) -> list[Evaluation]:
    out = []
    for query, solution in zip(queries, self.solve(queries)):
      policy = None
      if solution.root_policy is not None:
        valid = solution.root_actions >= 0
        rows = np.nonzero(valid)[0]
        policy = np.zeros((len(solution.root_policy), self.num_actions))
        policy[rows, solution.root_actions[valid]] = (
            solution.root_policy[valid])
      out.append(Evaluation(values=solution.values, policy=policy))
    return out

  def evaluate(self, queries: Sequence[Query]) -> list[Evaluation]:
    if self.perfect_information:
      return [self._evaluate_perfect_information(q) for q in queries]
    return self._evaluate_imperfect_information(queries)


def _key(ps: PublicState) -> tuple:
  return (ps.observer, ps.id)


# --- Rollout ----------------------------------------------------------------


_MASK64 = (1 << 64) - 1


def _splitmix64(state: int) -> tuple[int, int]:
  """(next SplitMix64 output, next state): the generator of the shim's
  `random_rollouts` (open_spiel_sog/_native/shim.cc), in Python."""
  state = (state + 0x9E3779B97F4A7C15) & _MASK64
  z = state
  z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
  z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
  return z ^ (z >> 31), state


def python_random_rollouts(state: pyspiel.State, num_rollouts: int,
                           rng_state: int, max_moves: int = 0,
                           truncated_value: float = 0.0
                           ) -> tuple[float, int, int]:
  """`random_rollouts` in Python (the same games, number for number)."""
  total = 0.0
  moves = 0
  for _ in range(num_rollouts):
    s = state.clone()
    played = 0
    while not s.is_terminal():
      if max_moves > 0 and played == max_moves:
        break
      played += 1
      if s.is_chance_node():
        z, rng_state = _splitmix64(rng_state)
        u = (z >> 11) * 2.0**-53
        outcomes = s.chance_outcomes()
        chosen = outcomes[-1][0]
        cumulative = 0.0
        for action, probability in outcomes:
          cumulative += probability
          if u < cumulative:
            chosen = action
            break
        s.apply_action(chosen)
      else:
        legal = s.legal_actions()
        if not legal:
          raise ValueError("a non-terminal state has no legal actions: "
                           f"{s}")
        z, rng_state = _splitmix64(rng_state)
        s.apply_action(legal[z % len(legal)])
    total += s.returns()[0] if s.is_terminal() else truncated_value
    moves += played
  return total / num_rollouts, rng_state, moves


_native_rollouts = None  # the shim's random_rollouts, once looked up
_ONE_INDEX = np.zeros(1, dtype=np.int64)  # a one-history public state's index
_ONE_INDEX.setflags(write=False)


def random_rollouts(state: pyspiel.State, num_rollouts: int,
                    rng_state: int, max_moves: int = 0,
                    truncated_value: float = 0.0) -> tuple[float, int, int]:
  """(player 0's mean return over `num_rollouts` games played from `state`
  with uniformly random actions and sampled chance, the generator's next
  state, the actions played in all). With `max_moves` > 0 a game still
  running after that many actions (chance outcomes included) stops and
  scores `truncated_value`. In C++ (the shim) for C++ games, in Python
  otherwise; both give the same numbers."""
  global _native_rollouts
  if _native_rollouts is None:
    from open_spiel_sog import _native  # pylint: disable=g-import-not-at-top
    shim, _ = _native.load_shim()
    _native_rollouts = getattr(shim, "random_rollouts", False)
  module = type(state).__module__
  if _native_rollouts and (module == "pyspiel" or
                           module.startswith("pyspiel.")):
    return _native_rollouts(state, num_rollouts, rng_state, max_moves,
                            truncated_value)
  return python_random_rollouts(state, num_rollouts, rng_state, max_moves,
                                truncated_value)


def draw_value(game: pyspiel.Game) -> float:
  """Player 0's return in a drawn game: 0 in zero-sum games, half the
  utility sum in constant-sum ones, the middle of the utility range
  otherwise."""
  utility = game.get_type().utility
  if utility == pyspiel.GameType.Utility.ZERO_SUM:
    return 0.0
  if utility == pyspiel.GameType.Utility.CONSTANT_SUM:
    return game.utility_sum() / 2.0
  return (game.max_utility() + game.min_utility()) / 2.0


class RolloutValueFunction(ValueFunction):
  """Monte Carlo values of uniform-random play, combined with the ranges.

  For every history of a public state (at most `max_histories`, sampled
  uniformly beyond that and reweighted), `num_rollouts` games are played to
  the end with uniformly random actions and chance sampled from its
  distribution. The per-history mean return does not depend on the ranges,
  so it is computed once per public state; each query then costs two
  weighted sums. The prior is uniform.

  Under a deadline (`deadline`, a `time.monotonic()` time a time-limited
  search sets), a leaf gets fewer rollouts per history, then fewer
  histories (at least one of each), so that the leaves an update values
  take at most `leaf_share` of the time left (timed by
  `seconds_per_rollout`, a running mean of the rollouts played): an update
  cannot stop half way through valuing its new leaves. Where even one
  whole rollout per leaf would not fit, each leaf's one rollout stops after
  the actions that fit (`seconds_per_move`) and scores a draw; such values
  are not cached.
  `max_moves` > 0 (a time-limited bot sets it where even one rollout per
  child is too slow: hive) stops each rollout after that many actions and
  scores it as a draw (`draw_value`).
  """

  name = "rollout"
  leaf_share = 0.1

  def __init__(self, game: pyspiel.Game, *, num_rollouts: int = 8,
               max_histories: int = 512, seed: int = 0):
    if num_rollouts < 1 or max_histories < 1:
      raise ValueError("rollout value function: num_rollouts and "
                       "max_histories must be >= 1")
    self.game = game
    self.num_rollouts = num_rollouts
    self.max_histories = max_histories
    self.num_actions = game.num_distinct_actions()
    self._rng = np.random.default_rng(seed)
    self._rollout_rng = int(seed) & _MASK64
    self._cache: dict[int, tuple[np.ndarray, ...]] = {}
    self._policies: dict[int, np.ndarray | None] = {}
    self._packed_cache: dict = {}
    self.deadline: float | None = None
    self.seconds_per_rollout: float | None = None
    self.seconds_per_move: float | None = None
    self.max_moves = 0
    self.truncated_value = draw_value(game)
    # Seconds and rollouts of those played whole (to `max_moves`), seconds
    # and actions of all.
    self._timed = [0.0, 0, 0.0, 0]

  _MAX_PACKED_CACHE = 256

  def _affordable(self, histories: int, pending: int
                  ) -> tuple[int, int, int]:
    """(histories to sample, rollouts per history, `max_moves` of each
    rollout) for a leaf of `histories`: at most max_histories and
    num_rollouts, and under `deadline` fewer where this leaf and the
    `pending` - 1 others still to value would take more than `leaf_share`
    of the time left: rollouts per history are cut first, then histories
    (at least one of each), and where even one whole rollout per leaf does
    not fit, that rollout stops after the actions that do (timed by
    `seconds_per_move`; at least one) and scores `truncated_value`."""
    bound = min(histories, self.max_histories)
    if self.deadline is None or not self.seconds_per_rollout:
      return bound, self.num_rollouts, self.max_moves
    left = max(self.deadline - time.monotonic(), 0.0)
    afford = int(self.leaf_share * left /
                 (max(pending, 1) * self.seconds_per_rollout))
    if afford >= bound * self.num_rollouts:
      return bound, self.num_rollouts, self.max_moves
    if afford >= bound:
      return bound, afford // bound, self.max_moves
    if afford >= 1 or not self.seconds_per_move:
      return max(1, afford), 1, self.max_moves
    # (kriegspiel: an expansion added 372 leaves with 0.4 s left, and one
    # whole rollout each took 0.62 s.)
    fit = max(1, int(self.leaf_share * left /
                     (max(pending, 1) * self.seconds_per_move)))
    return 1, 1, fit if not self.max_moves else min(fit, self.max_moves)

  def _mean_return(self, state: pyspiel.State, rollouts: int,
                   max_moves: int) -> float:
    """Player 0's mean return over `rollouts` random games from `state`,
    each stopped after `max_moves` actions (0: none) and then scored
    `truncated_value`."""
    start = time.perf_counter()
    mean, self._rollout_rng, moves = random_rollouts(
        state, rollouts, self._rollout_rng, max_moves, self.truncated_value)
    if self.deadline is not None:  # timed where the time is budgeted
      self.record_time(time.perf_counter() - start, rollouts, moves,
                       whole=max_moves == self.max_moves)
    return mean

  def record_time(self, seconds: float, rollouts: int, moves: int,
                  whole: bool = True) -> None:
    """Adds rollouts played in `seconds` (`moves` actions in all) to the
    running means: seconds per move from every rollout, seconds per
    rollout from `whole` ones only (not cut short by the deadline)."""
    if whole:
      self._timed[0] += seconds
      self._timed[1] += rollouts
      self.seconds_per_rollout = self._timed[0] / self._timed[1]
    self._timed[2] += seconds
    self._timed[3] += moves
    if self._timed[3]:
      self.seconds_per_move = self._timed[2] / self._timed[3]

  def _history_values(self, ps: PublicState, pending: int = 1):
    """Per sampled history of `ps` (cached per public state): (its index
    [K], weight times mean u0 [K], its infostate per player [K] and [K],
    chance reach times weight times mean u0 [K]). `pending`: see
    `fixed_history_values`. Values of rollouts that the deadline cut
    shorter than `max_moves` are not cached: a later search values the
    public state again."""
    cached = self._cache.get(ps.id)
    if cached is not None:
      return cached
    n = len(ps.histories)
    bound, rollouts, moves = self._affordable(n, pending)
    if n <= bound:  # every history, weight 1
      index = _ONE_INDEX if n == 1 else np.arange(n)
      weighted_u0 = np.asarray([self._mean_return(h, rollouts, moves)
                                for h in ps.histories])
      cached = (index, weighted_u0, ps.history_infostate[0],
                ps.history_infostate[1], ps.chance_reach * weighted_u0)
    else:
      index = np.sort(self._rng.choice(n, size=bound, replace=False))
      u0 = np.asarray([self._mean_return(ps.histories[i], rollouts, moves)
                       for i in index])
      weighted_u0 = (n / bound) * u0
      cached = (index, weighted_u0, ps.history_infostate[0][index],
                ps.history_infostate[1][index],
                ps.chance_reach[index] * weighted_u0)
    if moves == self.max_moves:
      self._cache[ps.id] = cached
    return cached

  def _policy(self, ps: PublicState) -> np.ndarray | None:
    """The uniform prior at `ps` (one array per public state, shared)."""
    if ps.id not in self._policies:
      policy = uniform_policy(ps, self.num_actions)
      if policy is not None:
        policy.setflags(write=False)
      self._policies[ps.id] = policy
    return self._policies[ps.id]

  def prior(self, query: Query) -> np.ndarray | None:
    return self._policy(query.public_state)  # uniform: no rollouts needed

  def forget(self, observer, ids) -> None:
    # Keyed by id alone: one rollout value function serves one observer.
    del observer
    for i in ids:
      self._cache.pop(i, None)
      self._policies.pop(i, None)

  def fixed_history_values(self, ps: PublicState, pending: int = 1):
    _, _, inf0, inf1, weight = self._history_values(ps, pending)
    # The prior is uniform: None (no [infostates, actions] array per leaf:
    # 4,672 actions in chess).
    return inf0, inf1, weight, None

  def evaluate(self, queries: Sequence[Query]) -> list[Evaluation]:
    out = []
    for q in queries:
      ps = q.public_state
      index, weighted_u0 = self._history_values(ps)[:2]
      values = history_values_to_counterfactual(ps, q.ranges, weighted_u0,
                                                index)
      out.append(Evaluation(values=values, policy=self._policy(ps)))
    return out

  def _packed_arrays(self, packed: PackedQueries):
    """Per history of every query: its entry in the packed v0 and v1, and
    chance reach times mean u0; the priors. Cached under `packed.key`."""
    key = packed.key
    cached = self._packed_cache.get(key) if key is not None else None
    if cached is not None:
      return cached
    pending = sum(ps.id not in self._cache for ps in packed.public_states)
    local = []
    for ps in packed.public_states:
      new = ps.id not in self._cache
      local.append(self._history_values(ps, pending)[2:])
      pending -= new
    counts = np.asarray([len(w) for _, _, w in local], dtype=np.int64)
    entries = []
    for p in range(2):
      offsets = np.concatenate([[0], np.cumsum(packed.sizes[p])])
      inf = (np.concatenate([arrays[p] for arrays in local]) if local
             else np.zeros(0, dtype=np.int64))
      entries.append(inf + np.repeat(offsets[:-1], counts))
      entries.append(int(offsets[-1]))
    weight = (np.concatenate([w for _, _, w in local]) if local
              else np.zeros(0))
    cached = (entries[0], entries[2], weight, (entries[1], entries[3]),
              [self._policy(ps) for ps in packed.public_states])
    if key is not None:
      if len(self._packed_cache) >= self._MAX_PACKED_CACHE:
        self._packed_cache.clear()
      self._packed_cache[key] = cached
    return cached

  def evaluate_packed(self, packed: PackedQueries):
    """`evaluate`'s values for all queries in two weighted sums."""
    e0, e1, weight, (n0, n1), policies = self._packed_arrays(packed)
    r0, r1 = packed.ranges
    v0 = np.bincount(e0, weights=weight * r1[e1], minlength=n0)
    v1 = -np.bincount(e1, weights=weight * r0[e0], minlength=n1)
    return (v0, v1), list(policies)


VALUE_FUNCTIONS = ("exact", "rollout")


def make_value_function(name: str, game: pyspiel.Game, **kwargs) -> ValueFunction:
  """A value function by name ('exact' or 'rollout')."""
  if name == "exact":
    return ExactValueFunction(game, **kwargs)
  if name == "rollout":
    return RolloutValueFunction(game, **kwargs)
  raise ValueError(f"unknown value function {name!r}; supported: "
                   f"{', '.join(map(repr, VALUE_FUNCTIONS))}")
