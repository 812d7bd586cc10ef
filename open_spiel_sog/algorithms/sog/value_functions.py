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

Implementations, each in a module of its own:
  exact (`exact_values.ExactValueFunction`): solves the PBS's subgame to the
    end. Imperfect information: PublicTreeCFR until the subgame's
    exploitability under the query's ranges is within a tolerance
    (warm-started per public state). Perfect information: expectimax over
    the subtree (memoised per history), which is the exact value whatever
    the ranges.
  rollout (`rollout_values.RolloutValueFunction`): Monte Carlo values of
    uniform-random play from every history of the public state (cached per
    public state), combined with the ranges exactly. A weak default for
    games that have no trained network.
The network-backed value function (`cvpn`) implements the same interface.
`named_value_functions.make_value_function` makes the first two by name.
"""

from __future__ import annotations

import abc
import collections.abc
import dataclasses
from typing import Callable, NamedTuple, Sequence

import numpy as np

from open_spiel_sog.public_state import PublicState


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

  def evaluate_by_packing(self, queries: Sequence[Query]
                          ) -> list[Evaluation]:
    """`evaluate` through `evaluate_packed`: for value functions whose
    vectorised path is the packed one (they define `evaluate` as this)."""
    if not queries:
      return []
    ranges = tuple(np.concatenate([np.asarray(q.ranges[p], dtype=np.float64)
                                   for q in queries]) for p in range(2))
    values, priors = self.evaluate_packed(
        PackedQueries([q.public_state for q in queries], ranges))
    out, offsets = [], [0, 0]
    for i, q in enumerate(queries):
      v = []
      for p in range(2):
        n = q.public_state.num_infostates(p)
        v.append(values[p][offsets[p]:offsets[p] + n])
        offsets[p] += n
      out.append(Evaluation(values=(v[0], v[1]), policy=priors[i]))
    return out

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
