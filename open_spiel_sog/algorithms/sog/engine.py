"""The native history engine from Python (DESIGN.md section 16).

GT-CFR over a tree of histories runs in the C++ shim
(`_native/history_tree.h`, `history_engine.h`): the walk, the expansion,
the rollouts and the CFR+ passes of a whole search are one call, with the
GIL released. A
perfect-information game's history tree is its public tree, so
`PerfectInformationSearch` searches connect_four, chess, go... with it; the
anchored subgame of fog-of-war games builds its tree on it too
(`anchored/native_tree.py`).

The engine needs the shim and a game whose states are OpenSpiel C++ states
(`native_reason`); Python games (python_scotland_yard, python_*) and a machine
without the shim keep the Python engine, with no error.

Phases: SoG(s, c) runs phases of c simulations, each followed by one CFR+
iteration (ceil(1 / c) where c < 1); `PACED` (c = -1, the default on the engine) paces them by
work instead, one iteration after each phase whose rollouts and walks
played a fiftieth of the iteration's node visits, so that the passes
stay a bounded share of a search however large its tree grows (with a fixed
c the cost of a simulation grows with the tree). Both are counts: an
untimed search is a function of its seed.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import pyspiel

from open_spiel_sog._native import load_shim
from open_spiel_sog.algorithms.sog import rollout_values

ENGINES = ("auto", "native", "python")
# PUCT's action values in perfect-information growth (SoGConfig.puct_values).
PUCT_VALUES = ("backed_up", "cfr")
PACED = -1.0  # expansions_per_update: phases paced by work
# Games whose chance nodes have more outcomes (yacht: 7,776 rolls) keep the
# Python engine, which samples them.
MAX_CHANCE_OUTCOMES = 256


def native_module():
  """The shim's module with the engine, or None."""
  shim, _ = load_shim()
  return shim if shim is not None and hasattr(shim, "HistoryEngine") else None


def cpp_game(game: pyspiel.Game) -> bool:
  """Whether `game`'s states are OpenSpiel C++ states (not a Python game
  registered with pyspiel.register_game)."""
  return type(game).__module__.split(".")[0] == "pyspiel"


def native_reason(game: pyspiel.Game) -> str | None:
  """Why the engine cannot search `game` (None: it can)."""
  shim, reason = load_shim()
  if shim is None:
    return reason
  if not hasattr(shim, "HistoryEngine"):
    return "the C++ shim was built without the history engine; rebuild it"
  if not cpp_game(game):
    return (f"{game.get_type().short_name}'s states are implemented in "
            "Python (the engine walks C++ states with the GIL released)")
  if game.get_type().dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
    return "the engine takes turn-based games"
  if game.num_players() != 2:
    return "the engine takes two-player games"
  if game.max_chance_outcomes() > MAX_CHANCE_OUTCOMES:
    return (f"its chance nodes have up to {game.max_chance_outcomes()} "
            f"outcomes (the engine expands a chance node in full; at most "
            f"{MAX_CHANCE_OUTCOMES})")
  return None


@dataclasses.dataclass
class EngineResult:
  """A search's outcome.

  Attributes:
    policy: {action: probability}, the average policy at the root.
    value: the searcher's expected return at the root under it.
    action_values: {action: the searcher's expected return after it} for
      the actions in the tree.
    visits: {action: walks through it}.
    simulations, iterations, walks: growth simulations, CFR+ iterations and
      walks run; nodes: histories in the tree.
    seconds: the search's time.
  """
  policy: dict[int, float]
  value: float
  action_values: dict[int, float]
  visits: dict[int, float]
  simulations: int
  iterations: int
  walks: int
  nodes: int
  seconds: float


class PerfectInformationSearch:
  """SoG's search of a perfect-information game on the native engine: a
  tree of histories from the searched state, grown one child per
  simulation (k = 1) by 1/2 PUCT + 1/2 the CFR average policy (`cfr_mix`),
  PUCT reading `puct_values` ("backed_up": the mean of the leaf values
  made below each child; "cfr": the latest update's counterfactual
  values), leaves valued by `rollouts` uniform random rollouts, solved by
  CFR+; the policy is the root's CFR average.

  With a `network` (`networks.PolicyValueNet`, or any object with its
  `evaluate(inputs, legal) -> (values, priors)`), leaves are valued by it
  instead of rollouts and its priors are PUCT's: the engine stops at each
  new leaf (`begin` / `advance` / `set_leaves` / `finish`, which batched
  self-play drives across many games; `search` drives one).

  The engine object lives across searches (its arrays are reused); each
  search starts a fresh tree, as OpenSpiel's MCTS does.
  """

  def __init__(self, game: pyspiel.Game, *, simulations: int,
               expansions_per_update: float = PACED, rollouts: int = 1,
               c_puct: float = 1.0, seed: int = 0,
               max_nodes: int = 1_000_000, averaging_power: float = 1.0,
               cfr_mix: float = 0.5, puct_values: str = "backed_up",
               network=None, leaf_batch: int = 1):
    reason = native_reason(game)
    if reason is not None:
      raise ValueError(f"sog: engine=native cannot search {game}: {reason}")
    shim = native_module()
    config = shim.HistoryEngineConfig()
    config.growth = "puct"
    config.keys = "history"
    config.rollouts = int(rollouts)
    config.draw = rollout_values.draw_value(game)
    config.c_puct = float(c_puct)
    config.cfr_mix = float(cfr_mix)
    if puct_values not in PUCT_VALUES:
      raise ValueError(f"sog: unknown puct_values {puct_values!r}; "
                       f"supported: {', '.join(map(repr, PUCT_VALUES))}")
    config.q_values = "rollouts" if puct_values == "backed_up" else "cfr"
    config.utility_range = float(game.max_utility() - game.min_utility()) or 1.0
    config.averaging_power = float(averaging_power)
    config.seed = int(seed) & 0x7FFFFFFFFFFFFFFF
    config.network_leaves = network is not None
    config.leaf_batch = int(leaf_batch)
    if network is not None and not game.get_type().provides_observation_tensor:
      raise ValueError(f"sog: a network needs observation tensors, which "
                       f"{game.get_type().short_name} does not provide")
    self.network = network
    self.game = game
    self.simulations = simulations
    self.expansions_per_update = expansions_per_update
    self.max_nodes = max_nodes
    self.engine = shim.HistoryEngine(game, config)
    self.last_result: EngineResult | None = None
    self.rollouts = int(rollouts)
    self._per_rollout: tuple[float, float] | None = None  # seconds, moves
    self.fitted: tuple[int, int] = (self.rollouts, 0)

  # Under a time limit, one simulation's rollouts may take this share of
  # it (a search of at least about 100 simulations).
  SIMULATION_SHARE = 0.01

  def _fit_rollouts(self, state: pyspiel.State, left: float) -> None:
    """Fewer rollouts per leaf (at least 1), then rollouts cut after a
    number of actions (scored as a draw), where one simulation's would take
    more than SIMULATION_SHARE of the time `left` (hive: 16 ms a rollout).
    Timed once per game on 3 rollouts from the first searched state."""
    if self._per_rollout is None:
      begin = time.perf_counter()
      _, _, moves = rollout_values.random_rollouts(state, 3, 1)
      self._per_rollout = ((time.perf_counter() - begin) / 3,
                           max(moves / 3, 1.0))
    rollouts, max_moves = rollout_values.fit_rollouts(
        *self._per_rollout, self.SIMULATION_SHARE * max(left, 0.0),
        self.rollouts)
    if (rollouts, max_moves) != self.fitted:
      self.engine.set_rollouts(rollouts, max_moves)
      self.fitted = (rollouts, max_moves)

  def begin(self, state: pyspiel.State, deadline: float | None = None
            ) -> None:
    """Starts a search of `state` (see `search`)."""
    self._start = time.monotonic()
    self._player = state.current_player()
    if state.is_terminal() or self._player not in (0, 1):
      raise ValueError("sog: the engine searches decisions of player 0 or 1")
    self._deadline = deadline
    if deadline is not None and self.network is None:
      self._fit_rollouts(state, deadline - self._start)
    self.engine.clear()
    self.engine.add_root(state)
    self.engine.row_only(0)
    self._counts = [0, 0, 0]
    self._finished = False

  def advance(self) -> list[int]:
    """Grows the tree until a leaf waits for the network (its node, in a
    list: value it with `set_leaves`) or the search's budget is spent
    ([]: call `finish`). Without a network, runs the whole search."""
    if self.network is not None:
      pending = self.engine.pending_leaves()
      if pending:
        return pending  # (the root, before anything ran)
    if self._finished:
      return []
    left = self.simulations - self._counts[0]
    seconds = 0.0
    if self._deadline is not None:
      # (Past the deadline, a run only ends the iteration owed.)
      seconds = max(self._deadline - time.monotonic(), 1e-9)
    # (A run always ends with at least one iteration.)
    counts = self.engine.run(max(left, 0), self.expansions_per_update,
                             seconds, self.max_nodes)
    self._counts = [a + b for a, b in zip(self._counts, counts)]
    pending = (self.engine.pending_leaves() if self.network is not None
               else [])
    self._finished = not pending
    return pending

  def leaf_inputs(self, nodes: list[int]):
    """(observation tensors, legal masks, acting players) of leaves."""
    return self.engine.leaf_inputs(nodes)

  def set_leaves(self, nodes: list[int], values, priors, players) -> None:
    """Values the leaves `nodes`: `values` the acting player's (player 0's
    at chance nodes: player -1), `priors` rows over the distinct actions."""
    values = np.where(np.asarray(players) == 1, -np.asarray(values),
                      np.asarray(values))
    self.engine.set_leaf_values(nodes, values.tolist(),
                                np.asarray(priors).tolist())

  def finish(self) -> EngineResult:
    """The search's result, once `advance` returned []."""
    engine = self.engine
    actions, average, visits = engine.row_policy(0)
    values = engine.node_values()
    sign = 1.0 if self._player == 0 else -1.0
    kids = engine.children(0)
    action_values = {a: sign * values[c] for a, c in zip(actions, kids)
                     if c >= 0}
    sims, iterations, walks = self._counts
    self.last_result = EngineResult(
        policy=dict(zip(actions, average)), value=sign * values[0],
        action_values=action_values, visits=dict(zip(actions, visits)),
        simulations=sims, iterations=iterations, walks=walks,
        nodes=len(engine), seconds=time.monotonic() - self._start)
    return self.last_result

  def search(self, state: pyspiel.State, deadline: float | None = None
             ) -> EngineResult:
    """Searches `state` until `simulations` or `deadline` (a
    `time.monotonic()` time), whichever comes first."""
    self.begin(state, deadline)
    while True:
      pending = self.advance()
      if not pending:
        return self.finish()
      inputs, legal, players = self.leaf_inputs(pending)
      values, priors = self.network.evaluate(inputs, legal)
      self.set_leaves(pending, values, priors, players)
