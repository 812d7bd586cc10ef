"""Exact CFR+ over a public tree, vectorized at the infostate level.

`PublicTreeCFR` solves a whole game, or the subgame under any public belief
state (a public state plus both players' ranges over their infostates there),
with `SequenceCFR` on the tree's compiled arrays (`public_state/tree.py`).
`solve` is the full-game driver behind `examples/solve.py`.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np
import pyspiel
from open_spiel.python import policy as os_policy

from open_spiel_sog.algorithms.cfr.passes import reach_pass
from open_spiel_sog.algorithms.cfr.passes import rows_dict
from open_spiel_sog.algorithms.cfr.passes import value_pass
from open_spiel_sog.algorithms.cfr.sequence_cfr import CFRConfig
from open_spiel_sog.algorithms.cfr.sequence_cfr import SequenceCFR
from open_spiel_sog.public_state import PublicState
from open_spiel_sog.public_state import PublicStateObserver
from open_spiel_sog.public_state import PublicTree


class PublicTreeCFR:
  """CFR+ over a public tree (a whole game or a public-belief-state subgame).

  Example:
    solver = PublicTreeCFR(pyspiel.load_game("leduc_poker"))
    solver.run(1000)
    policy = solver.average_policy()  # open_spiel TabularPolicy
  """

  def __init__(self, game: pyspiel.Game | str | None = None, *,
               root: PublicState | None = None,
               ranges: Sequence[np.ndarray] | None = None,
               config: CFRConfig | None = None,
               tree: PublicTree | None = None):
    """Builds the solver.

    Args:
      game: the game (or its string) to solve from its root. May be omitted
        when `root` is given.
      root: a public state to solve the subgame under (histories keep their
        chance reach from the game root).
      ranges: (r0, r1), each player's range over its infostates at `root`
        (`root.infostates(p)` order). Default: all ones.
      config: CFRConfig.
      tree: the compiled subtree under `root` (`PublicTree.from_subtree`),
        when the caller keeps one to solve the same subgame many times.
    """
    if root is None:
      if game is None:
        raise ValueError("PublicTreeCFR needs a game or a root public state")
      if isinstance(game, str):
        game = pyspiel.load_game(game)
      root = PublicStateObserver(game).root()
    elif game is not None and str(game) != str(root.observer.game):
      raise ValueError(f"root public state belongs to {root.observer.game}, "
                       f"not to {game}")
    if root.observer.common_payoff:
      raise ValueError(
          f"PublicTreeCFR solves two-player zero-sum games; "
          f"{root.observer.game} is common-payoff (its players share one "
          "payoff: see algorithms/jps/)")
    self.game = root.observer.game
    self.root = root
    self.config = config or CFRConfig()
    if tree is None:
      tree = PublicTree.from_subtree(root)
    elif tree.root is not root:
      raise ValueError("the compiled tree belongs to another root public state")
    self.tree = tree
    if self.tree.frontier:
      raise ValueError(
          "PublicTreeCFR solves to the end of the game; the tree has "
          f"{len(self.tree.frontier)} unexpanded public states")
    if ranges is None:
      ranges = [np.ones(root.num_infostates(p)) for p in range(2)]
    self.ranges = self._checked_ranges(ranges)
    t = self.tree.terminals
    self._cfr = SequenceCFR(self.tree.players, (t.seq0, t.seq1), t.weight,
                            self.ranges, self.config)

  @property
  def iteration(self) -> int:
    """Iterations run so far."""
    return int(self._cfr.group_iteration[0])

  def _checked_ranges(self, ranges: Sequence[np.ndarray]) -> list[np.ndarray]:
    checked = []
    for p in range(2):
      r = np.asarray(ranges[p], dtype=np.float64)
      if r.shape != (self.root.num_infostates(p),):
        raise ValueError(
            f"range of player {p} has shape {r.shape}; the root public state "
            f"has {self.root.num_infostates(p)} infostates of player {p}")
      if not np.all(np.isfinite(r)) or np.any(r < 0):
        raise ValueError(f"range of player {p} must be finite and >= 0")
      checked.append(r)
    return checked

  # --- Iterations ----------------------------------------------------------

  def run(self, iterations: int) -> None:
    """Runs `iterations` CFR+ iterations."""
    if iterations < 0:
      raise ValueError(f"iterations must be >= 0, got {iterations}")
    self._cfr.run(iterations)

  # --- Results -------------------------------------------------------------

  def average_policy_arrays(self, player: int) -> np.ndarray:
    """[rows, A] the average policy of `player` (uniform where unreached)."""
    return self._cfr.average_policy(player)

  def current_policy_arrays(self, player: int) -> np.ndarray:
    """[rows, A] the current (last-iterate) policy of `player`."""
    return self._cfr.policy[player].copy()

  def average_policy_dict(self) -> dict[str, list[tuple[int, float]]]:
    """{information_state_string: [(action, probability), ...]}."""
    result = {}
    for p in range(2):
      result.update(rows_dict(self.tree.players[p],
                              self.average_policy_arrays(p)))
    return result

  def average_policy(self) -> os_policy.TabularPolicy:
    """The average policy as an OpenSpiel TabularPolicy over the whole game.

    Infostates outside the solved (sub)tree keep the uniform policy. Building
    a TabularPolicy enumerates the game, so this is for games small enough
    for `get_all_states`; use `average_policy_dict` otherwise.
    """
    tabular = os_policy.TabularPolicy(self.game)
    for infostate, actions_probs in self.average_policy_dict().items():
      index = tabular.state_lookup.get(infostate)
      if index is None:
        continue
      row = tabular.action_probability_array[index]
      row[:] = 0.0
      for a, prob in actions_probs:
        row[a] = prob
    return tabular

  def counterfactual_values(
      self, policies: Sequence[np.ndarray] | None = None
  ) -> tuple[np.ndarray, np.ndarray]:
    """Each player's counterfactual values at its root infostates.

    v_p(I) = sum over histories h in I of chance_reach(h) *
    r_-p(infostate of -p at h) * E[u_p | h], under `policies` ([rows, A] per
    player; default: the average policy).
    """
    if policies is None:
      policies = [self.average_policy_arrays(p) for p in range(2)]
    reaches = []
    for p in range(2):
      arrays = self.tree.players[p]
      reaches.append(reach_pass(arrays, policies[p], self.ranges[p],
                                np.zeros(arrays.num_sequences)))
    values = []
    for p in range(2):
      arrays = self.tree.players[p]
      seq_values, _ = value_pass(arrays, policies[p],
                                 self._cfr.direct_values(p, reaches[1 - p]))
      values.append(seq_values[:arrays.num_root].copy())
    return values[0], values[1]

  def root_counterfactual_values(self) -> tuple[np.ndarray, np.ndarray]:
    """Counterfactual values at the root infostates under the average policy."""
    return self.counterfactual_values()

  def expected_value(self, player: int = 0) -> float:
    """Expected value for `player` of the average policy from the root belief
    (the game value estimate when solving from the game root)."""
    v = self.counterfactual_values()[player]
    return float(v @ self.ranges[player])


@dataclasses.dataclass(frozen=True)
class SolveConfig:
  """A full-game solve with exploitability measured along the way.

  Attributes:
    game: an OpenSpiel game string.
    iterations: CFR+ iterations to run.
    eval_every: measure exploitability (OpenSpiel's, of the average policy)
      every this many iterations; 0 measures only at the end, -1 never.
    cfr: the solver's options.
    progress: show a progress bar on stderr.
  """
  game: str = "leduc_poker"
  iterations: int = 1000
  eval_every: int = 100
  cfr: CFRConfig = CFRConfig()
  progress: bool = True


def solve(config: SolveConfig) -> dict:
  """Solves `config.game` and returns a summary (JSON-serialisable).

  Keys: game, iterations, seconds (CFR time, evaluation excluded),
  iterations_per_second, game_value (player 0, average policy),
  exploitability (list of [iteration, value]), final_exploitability,
  public_states, infostates.
  """
  # Imported here: only this driver needs OpenSpiel's exploitability code and
  # the progress bar.
  import time  # pylint: disable=g-import-not-at-top
  from open_spiel.python.algorithms import exploitability as os_exploitability  # pylint: disable=g-import-not-at-top
  from open_spiel_sog.utils.progress import progress_bar  # pylint: disable=g-import-not-at-top

  if config.iterations < 1:
    raise ValueError(f"iterations must be >= 1, got {config.iterations}")
  if config.eval_every < -1:
    raise ValueError(f"eval_every must be -1, 0 or positive, got "
                     f"{config.eval_every}")
  game = pyspiel.load_game(config.game)
  solver = PublicTreeCFR(game, config=config.cfr)
  curve = []

  def evaluate():
    value = float(os_exploitability.exploitability(game,
                                                   solver.average_policy()))
    curve.append([solver.iteration, value])
    return value

  seconds = 0.0
  step = config.eval_every if config.eval_every > 0 else config.iterations
  with progress_bar(config.iterations, f"CFR+ {config.game}",
                    disable=not config.progress) as bar:
    while solver.iteration < config.iterations:
      n = min(step, config.iterations - solver.iteration)
      start = time.perf_counter()
      solver.run(n)
      seconds += time.perf_counter() - start
      bar.update(n)
      if config.eval_every > 0 or (config.eval_every == 0 and
                                   solver.iteration == config.iterations):
        bar.set_postfix_str(f"exploitability {evaluate():.6f}")
  return {
      "game": config.game,
      "iterations": solver.iteration,
      "seconds": seconds,
      "iterations_per_second": solver.iteration / seconds,
      "game_value": solver.expected_value(0),
      "exploitability": curve,
      "final_exploitability": curve[-1][1] if curve else None,
      "public_states": len(solver.tree),
      "infostates": [solver.tree.players[p].num_rows for p in range(2)],
  }
