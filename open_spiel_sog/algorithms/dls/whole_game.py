"""Depth-limited solving over the whole game: the composite policy and its
exploitability, the games it takes, and Proposition 1's references (the
frozen-blueprint full solve and every pure opponent continuation)."""

from __future__ import annotations

import itertools
from typing import Sequence

import numpy as np
import pyspiel
from open_spiel.python import policy as os_policy

from open_spiel_sog.algorithms.cfr import rows_dict
from open_spiel_sog.algorithms.cfr import SequenceCFR
from open_spiel_sog.algorithms.dls.policies import compute_blueprint
from open_spiel_sog.algorithms.dls.policies import DictPolicy
from open_spiel_sog.algorithms.dls.policies import PolicyFn
from open_spiel_sog.algorithms.dls.policies import policy_dict
from open_spiel_sog.algorithms.dls.policies import _as_fn
from open_spiel_sog.algorithms.dls.policies import _row_policy
from open_spiel_sog.algorithms.dls.solver import DepthLimitedSolver
from open_spiel_sog.algorithms.dls.solver import DLSConfig
from open_spiel_sog.algorithms.dls.solver import Solution
from open_spiel_sog.algorithms.dls.trunk import trunk_public_states
from open_spiel_sog.public_state import PublicStateObserver
from open_spiel_sog.public_state import PublicTree


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
