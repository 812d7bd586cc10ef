"""The anchored subgame's tree on the native history engine (DESIGN.md
sections 15 and 16).

`NativeHistoryTree` is `history_tree.HistoryTree` with its nodes, rows,
growth and CFR+ passes in C++ (`_native/history_tree.h`,
`history_engine.h`): the same
building calls (`add_gadget`, `add_root`, `copy_subtree`, `expand`,
`row_only`, `set_warm`, `set_freeze`), a `run` that grows and solves it in
one call, and what `search.py` reads after a search: per-node fields read
from the engine when indexed (a search reads a few nodes), and the roots
and node values, fetched once per change of the tree.
The two hold the same keys and solve a fully expanded tree to the same
values (tests/history_engine_test.py).
"""

from __future__ import annotations

import time

import numpy as np
import pyspiel

from open_spiel_sog.algorithms.sog import engine as engine_lib
from open_spiel_sog.algorithms.sog import rollout_values
from open_spiel_sog.algorithms.sog.anchored.history_tree import ROOT
from open_spiel_sog.public_state import HistoryKeys


class _Field:
  """Per node, one field read from the engine when indexed (a search reads
  a few nodes; copying every node's would cost more)."""

  def __init__(self, read, size):
    self._read = read
    self._size = size

  def __getitem__(self, n: int):
    return self._read(n)

  def __len__(self) -> int:
    return self._size()


class NativeHistoryTree:
  """An anchored subgame's history tree held by the C++ engine."""

  def __init__(self, game: pyspiel.Game, keys: HistoryKeys, rollouts: int,
               seed: int, max_moves: int = 0, predictive: bool = False,
               averaging_power: float = 1.0, leaf_batch: int = 0,
               threads: int = 1):
    shim = engine_lib.native_module()
    config = shim.HistoryEngineConfig()
    # (leaf_batch > 0: new leaves wait for a network, `leaf_batch` a run.)
    config.network_leaves = leaf_batch > 0
    config.leaf_batch = max(int(leaf_batch), 1)
    config.growth = "anchored"
    config.keys = keys.source
    config.rollouts = int(rollouts)
    config.rollout_max_moves = int(max_moves)
    config.draw = rollout_values.draw_value(game)
    config.predictive = bool(predictive)
    config.averaging_power = float(averaging_power)
    config.seed = int(seed) & 0x7FFFFFFFFFFFFFFF
    # (2: a timed run grows in an expander thread beside the CFR thread,
    # and the average weighs each iteration by the work of the passes so
    # far, not by its count: the CFR thread runs most of its iterations
    # while the tree is small, each one cheap, where one thread's growth
    # spaces them by the tree's size.)
    config.threads = int(threads)
    config.average_by_work = config.threads == 2
    self.game = game
    self.keys = keys
    self.draw = config.draw
    self.engine = shim.HistoryEngine(game, config)
    self._views: dict = {}
    self._timed = [0, 0.0]
    self.gadget_player = -1

  def _changed(self) -> None:
    self._views = {}

  def _view(self, name: str, read):
    """`read()`'s result, kept until the tree changes."""
    view = self._views.get(name)
    if view is None:
      view = self._views[name] = read()
    return view

  # --- What search.py reads ---------------------------------------------------

  def __len__(self) -> int:
    return len(self.engine)

  @property
  def roots(self) -> list[int]:
    return self._view("roots", self.engine.roots)

  def _field(self, i: int) -> _Field:
    node = self.engine.node
    return _Field(lambda n: node(n)[i], self.__len__)

  @property
  def action(self) -> _Field:
    return self._field(0)

  @property
  def actor(self) -> _Field:
    return self._field(1)

  @property
  def reach(self) -> _Field:
    return self._field(3)

  @property
  def children(self) -> _Field:
    node, children = self.engine.node, self.engine.children
    return _Field(lambda n: None if node(n)[4] else children(n), self.__len__)

  @property
  def node_keys(self) -> _Field:
    return _Field(self.engine.keys, self.__len__)

  @property
  def node_values(self) -> np.ndarray:
    return self._view("node_values",
                      lambda: np.asarray(self.engine.node_values()))

  def history(self, n: int) -> list[int]:
    return self.engine.history(n)

  def history_state(self, n: int) -> pyspiel.State:
    return self.engine.state(n)

  def kept_lookup(self, player: int):
    """(q, key) -> the nodes where `player` acts whose player-q key is
    `key`."""
    return lambda q, key: self.engine.kept_nodes(player, q, key)

  def near_root_policies(self, levels: int):
    """(player, key, actions, average policy) of the rows at most `levels`
    own actions below the root (one more below a gadget), but the
    gadget's."""
    for p in (0, 1):
      deepest = levels + (1 if p == self.gadget_player else 0)
      for key, actions, average in self.engine.near_root_rows(p, deepest):
        yield p, key, actions, average

  def node_policy(self, n: int) -> tuple[list[int], np.ndarray]:
    """The actions and average policy of decision node `n`'s row."""
    actions, average, _ = self.engine.row_policy(n)
    return list(actions), np.asarray(average)

  def warm_rows(self):
    """(player, key, regrets) of each row but the gadget's."""
    for p in (0, 1):
      for key, regrets in self.engine.warm_rows(p):
        yield p, key, np.asarray(regrets)

  # --- Building ---------------------------------------------------------------

  def set_warm(self, p: int, key: str, regrets: np.ndarray) -> None:
    self.engine.warm(p, key, list(map(float, regrets)))

  def set_freeze(self, player: int, policies: dict, key: str) -> None:
    self.engine.freeze(player, {k: list(map(float, v))
                                for k, v in policies.items()}, key)

  def add_gadget(self, player: int, alternatives: list, priors: list
                 ) -> list[int]:
    self._changed()
    self.gadget_player = player
    return self.engine.add_gadget(
        player, [0.0 if a is None else float(a) for a in alternatives],
        [a is not None for a in alternatives], [float(p) for p in priors])

  @staticmethod
  def _enter(opponent_root) -> int:
    if isinstance(opponent_root, tuple):
      if opponent_root != (ROOT, 0):
        raise ValueError(f"not an enter sequence: {opponent_root}")
      return 0
    return int(opponent_root)

  def add_root(self, state: pyspiel.State, keys: tuple[str, str],
               weight: float, opponent_root=(ROOT, 0),
               value: float | None = None) -> int:
    self._changed()
    return self.engine.add_root(
        state, float(weight), self._enter(opponent_root),
        float("nan") if value is None else float(value), keys[0], keys[1])

  def copy_subtree(self, old: "NativeHistoryTree", n: int, weight: float,
                   opponent_root, budget: int) -> int:
    self._changed()
    return self.engine.copy_subtree(old.engine, n, float(weight),
                                    self._enter(opponent_root), int(budget))

  def expand(self, n: int) -> None:
    self._changed()
    begin = time.perf_counter()
    self.engine.expand(n)
    self.record_expansion(len(self.engine.children(n)),
                          time.perf_counter() - begin)

  def row_only(self, n: int) -> None:
    self._changed()
    self.engine.row_only(n)

  def record_expansion(self, children: int, seconds: float) -> None:
    self._timed[0] += children
    self._timed[1] += seconds

  def child_seconds(self, n: int) -> float:
    """Seconds one child of leaf `n` takes to build (state and both keys,
    as `HistoryTree.child_seconds` times them, without the rollouts),
    timed on its first legal action in Python: an upper bound of the C++
    cost."""
    state = self.history_state(n)
    a = state.legal_actions()[0]
    begin = time.perf_counter()
    child = state.child(a)
    self.keys.child(self.node_keys[n], state, a, child)
    return time.perf_counter() - begin

  # --- Network leaves ----------------------------------------------------------

  def pending_leaves(self) -> list[int]:
    return self.engine.pending_leaves()

  def set_leaf_values(self, nodes: list[int], values) -> None:
    self._changed()
    self.engine.set_leaf_values(list(nodes), [float(v) for v in values])

  def leaf_data(self, nodes: list[int], states: bool = True,
                tensors: bool = True):
    """The engine's tensors, keys and reaches of `nodes`
    (`leaf_network.NodeData`); with their states where `states` (rebuilt
    in Python: the one costly part). (`tensors`: `HistoryTree.leaf_data`'s;
    the engine's tensors cost little, and are always read.)"""
    del tensors
    from open_spiel_sog.algorithms.sog.anchored.leaf_network import NodeData  # pylint: disable=g-import-not-at-top
    nodes = list(nodes)
    tensors, keys, chance, reaches, actors, actions = self.engine.leaf_data(
        nodes)
    engine = self.engine
    return NodeData(np.asarray(tensors), np.asarray(keys),
                    np.asarray(chance), np.asarray(reaches),
                    np.asarray(actors, dtype=np.int64), np.asarray(actions),
                    [engine.state(n) for n in nodes] if states else None)

  # --- Searching --------------------------------------------------------------

  def run(self, simulations: int, expansions_per_update: float,
          deadline: float | None, max_nodes: int) -> tuple[int, int, int]:
    """Growth and CFR+ in one call (see `engine.py`'s phases): returns
    (simulations, iterations, walks)."""
    self._changed()
    seconds = 0.0 if deadline is None else max(deadline - time.monotonic(),
                                               1e-4)
    # (A run always ends with at least one iteration.)
    return tuple(self.engine.run(simulations, expansions_per_update, seconds,
                                 max_nodes))

  def iterate(self, t: int = 0, power: float = 1.0) -> None:
    """One CFR+ iteration (the engine counts t itself)."""
    del t, power
    self._changed()
    self.engine.iterate()
