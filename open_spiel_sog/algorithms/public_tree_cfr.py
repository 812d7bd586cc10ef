"""Exact CFR+ over a public tree, vectorized at the infostate level.

`PublicTreeCFR` solves a whole game, or the subgame under any public belief
state (a public state plus both players' ranges over their infostates there).
Each iteration is, per player, one down pass (ranges, level by level over the
player's own sequences) and one up pass (counterfactual values: the sparse
terminal payoff matrix once, then level by level back to the root), followed
by a vectorized regret-matching+ update. No Python loop runs over public
states or infostates inside an iteration (see `public_state/tree.py`).

CFR+ here: regret matching+ (regrets floored at zero), linear averaging of the
policy (iteration t weighs t), alternating updates by default; simultaneous
updates are available for comparison.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np
import pyspiel
from open_spiel.python import policy as os_policy

from open_spiel_sog.public_state.observer import PublicState
from open_spiel_sog.public_state.observer import PublicStateObserver
from open_spiel_sog.public_state.tree import PlayerArrays
from open_spiel_sog.public_state.tree import PublicTree


@dataclasses.dataclass(frozen=True)
class CFRConfig:
  """Options of PublicTreeCFR.

  Attributes:
    alternating: update one player at a time (CFR+ as published); False
      updates both players from the same ranges each iteration.
    linear_averaging: weigh iteration t's policy by t in the average (CFR+);
      False weighs all iterations equally.
    averaging_delay: iterations before averaging starts (CFR+'s delay d).
    predictive: predictive CFR+ (Farina, Kroer and Sandholm, 2021): each
      policy is regret matching+ on the regrets plus the last instantaneous
      regrets (the prediction of the next ones). On the leaf subgames a
      Leduc search queries it needs half the iterations of CFR+ to a given
      exploitability (the exact value function uses it), and on Kuhn a
      tenth at 400 iterations; on the whole of Leduc it is slower (0.0026
      against 0.0012 at 400 iterations).
  """
  alternating: bool = True
  linear_averaging: bool = True
  averaging_delay: int = 0
  predictive: bool = False


class _PlayerState:
  """Mutable solver state of one player (arrays sized by PlayerArrays)."""

  def __init__(self, arrays: PlayerArrays, root_range: np.ndarray):
    self.arrays = arrays
    rows, width = arrays.num_rows, arrays.max_actions
    self.mask = arrays.legal_mask
    self.num_legal = self.mask.sum(axis=1, keepdims=True).astype(np.float64)
    self.uniform = np.where(self.mask, 1.0 / np.maximum(self.num_legal, 1),
                            0.0)
    self.regrets = np.zeros((rows, width))  # [rows, A]
    self.policy = self.uniform.copy()  # [rows, A] current policy
    self.avg_numerator = np.zeros((rows, width))  # [rows, A]
    self.root_range = root_range  # [R]
    self.reach = np.zeros(arrays.num_sequences)  # [S] reach of each sequence
    self.last_regrets = np.zeros((rows, width))  # [rows, A] (predictive)


def regret_matching(regrets: np.ndarray, uniform: np.ndarray) -> np.ndarray:
  """Regret matching+ policy of [rows, A] regrets (`uniform` where no
  regret is positive)."""
  positive = np.maximum(regrets, 0.0)
  total = positive.sum(axis=1, keepdims=True)
  return np.where(total > 0.0, positive / np.where(total > 0.0, total, 1.0),
                  uniform)


def reach_pass(arrays: PlayerArrays, policy: np.ndarray,
               root_range: np.ndarray, out: np.ndarray) -> np.ndarray:
  """Fills `out` [S] with each sequence's reach under `policy` [rows, A]."""
  r = arrays.num_root
  out[:r] = root_range
  seq_reach = out[r:].reshape(arrays.num_rows, arrays.max_actions)
  bounds = arrays.level_bounds
  for l in range(arrays.num_levels):
    lo, hi = bounds[l], bounds[l + 1]
    seq_reach[lo:hi] = out[arrays.row_parent_seq[lo:hi], None] * policy[lo:hi]
  return out


def value_pass(arrays: PlayerArrays, policy: np.ndarray,
               direct: np.ndarray, respond: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
  """Counterfactual values of every sequence and every row.

  Args:
    arrays: the player's sequence structure.
    policy: [rows, A] the player's policy.
    direct: [S] values that land directly on each sequence (terminal payoffs
      weighted by the opponent's reach, frontier values). Consumed in place.
    respond: [rows] bool, rows where the player plays a counterfactual best
      response (the legal action of highest value) instead of `policy`; the
      chosen actions are then in `policy` rows' place in `best_actions`.

  Returns:
    (seq_values [S] (root sequences' entries are the root infostates'
    counterfactual values), row_values [rows]).
  """
  r = arrays.num_root
  seq_values = direct
  action_values = seq_values[r:].reshape(arrays.num_rows, arrays.max_actions)
  row_values = np.empty(arrays.num_rows)
  bounds = arrays.level_bounds
  for l in reversed(range(arrays.num_levels)):
    lo, hi = bounds[l], bounds[l + 1]
    v = np.einsum("ij,ij->i", action_values[lo:hi], policy[lo:hi])
    if respond is not None and respond[lo:hi].any():
      best = np.where(arrays.legal_mask[lo:hi], action_values[lo:hi],
                      -np.inf).max(axis=1)
      v = np.where(respond[lo:hi], best, v)
    row_values[lo:hi] = v
    sums = np.add.reduceat(v[arrays.level_order[l]], arrays.level_starts[l])
    seq_values[arrays.level_parents[l]] += sums
  return seq_values, row_values


def best_actions(arrays: PlayerArrays, seq_values: np.ndarray) -> np.ndarray:
  """[rows, A] one-hot of each row's legal action of highest counterfactual
  value (the first on ties), from a value pass's `seq_values`."""
  action_values = seq_values[arrays.num_root:].reshape(arrays.num_rows,
                                                       arrays.max_actions)
  best = np.where(arrays.legal_mask, action_values, -np.inf).argmax(axis=1)
  out = np.zeros((arrays.num_rows, arrays.max_actions))
  out[np.arange(arrays.num_rows), best] = 1.0
  return out


@dataclasses.dataclass(frozen=True)
class SubgameSolution:
  """A profile of a (sub)game solve and what it is worth under the ranges.

  Attributes:
    policies: ([rows0, A0], [rows1, A1]) each player's policy: the average
      policy, with a counterfactual best response to the opponent's average
      wherever the player's own reach is zero (where the average is
      arbitrary and no one's value depends on it but the player's own).
    values: (v0, v1) each player's counterfactual values at its root
      infostates under `policies`.
    best_response_values: (b0, b1) each player's counterfactual best-response
      values at its root infostates against the opponent's policy.
    reach_mass: Z, the probability mass of the root under the ranges: the
      sum over root histories of chance reach * r0 * r1.
    exploitability: NashConv / 2 of `policies` under the ranges, divided by
      Z (so in the game's utility units, conditional on reaching the root);
      0 when Z is 0.
  """
  policies: tuple[np.ndarray, np.ndarray]
  values: tuple[np.ndarray, np.ndarray]
  best_response_values: tuple[np.ndarray, np.ndarray]
  reach_mass: float
  exploitability: float


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
    self._players = [_PlayerState(self.tree.players[p], self.ranges[p])
                     for p in range(2)]
    t = self.tree.terminals
    self._t_seq = (t.seq0, t.seq1)
    self._t_weight = (t.weight, -t.weight)
    self.iteration = 0
    self._reset_root_values()
    for p in range(2):
      st = self._players[p]
      reach_pass(st.arrays, st.policy, st.root_range, st.reach)

  def _reset_root_values(self) -> None:
    self._root_value_sum = [np.zeros(self.root.num_infostates(p))
                            for p in range(2)]
    self._root_value_weight = [0.0, 0.0]

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

  def set_ranges(self, ranges: Sequence[np.ndarray]) -> None:
    """Changes the root ranges, keeping regrets and the average (warm start
    of a subgame whose beliefs moved)."""
    self.ranges = self._checked_ranges(ranges)
    self._reset_root_values()
    for p in range(2):
      st = self._players[p]
      st.root_range = self.ranges[p]
      reach_pass(st.arrays, st.policy, st.root_range, st.reach)

  # --- Iterations ----------------------------------------------------------

  def _direct_values(self, p: int, opponent_reach: np.ndarray) -> np.ndarray:
    """[S_p] terminal payoffs landing on p's sequences (v_p = M r_-p)."""
    return np.bincount(
        self._t_seq[p],
        weights=self._t_weight[p] * opponent_reach[self._t_seq[1 - p]],
        minlength=self.tree.players[p].num_sequences)

  def _update_regrets(self, p: int) -> None:
    st = self._players[p]
    arrays = st.arrays
    seq_values, row_values = value_pass(
        arrays, st.policy, self._direct_values(p, self._players[1 - p].reach))
    # Root counterfactual values of the current iterate, averaged with the
    # policy's weights: unlike the average policy's values, they stay
    # meaningful at infostates the player itself never reaches.
    weight = float(self.iteration) if self.config.linear_averaging else 1.0
    self._root_value_sum[p] += weight * seq_values[:arrays.num_root]
    self._root_value_weight[p] += weight
    action_values = seq_values[arrays.num_root:].reshape(st.regrets.shape)
    instant = np.where(st.mask, action_values - row_values[:, None], 0.0)
    st.regrets += instant
    np.maximum(st.regrets, 0.0, out=st.regrets)
    if self.config.predictive:
      st.last_regrets = instant

  def _accumulate_average(self, p: int) -> None:
    st = self._players[p]
    t = self.iteration - self.config.averaging_delay
    if t <= 0:
      return
    weight = float(t) if self.config.linear_averaging else 1.0
    own_reach = st.reach[st.arrays.row_parent_seq]
    st.avg_numerator += (weight * own_reach)[:, None] * st.policy

  def _new_policy(self, p: int) -> None:
    st = self._players[p]
    regrets = st.regrets
    if self.config.predictive:
      regrets = regrets + st.last_regrets
    st.policy = regret_matching(regrets, st.uniform)
    reach_pass(st.arrays, st.policy, st.root_range, st.reach)

  def run(self, iterations: int) -> None:
    """Runs `iterations` CFR+ iterations."""
    if iterations < 0:
      raise ValueError(f"iterations must be >= 0, got {iterations}")
    for _ in range(iterations):
      self.iteration += 1
      if self.config.alternating:
        for p in range(2):
          self._accumulate_average(p)
          self._update_regrets(p)
          self._new_policy(p)
      else:
        for p in range(2):
          self._accumulate_average(p)
          self._update_regrets(p)
        for p in range(2):
          self._new_policy(p)

  # --- Results -------------------------------------------------------------

  def average_policy_arrays(self, player: int) -> np.ndarray:
    """[rows, A] the average policy of `player` (uniform where unreached)."""
    st = self._players[player]
    total = st.avg_numerator.sum(axis=1, keepdims=True)
    return np.where(total > 0.0,
                    st.avg_numerator / np.where(total > 0.0, total, 1.0),
                    st.uniform)

  def current_policy_arrays(self, player: int) -> np.ndarray:
    """[rows, A] the current (last-iterate) policy of `player`."""
    return self._players[player].policy.copy()

  def average_policy_dict(self) -> dict[str, list[tuple[int, float]]]:
    """{information_state_string: [(action, probability), ...]}."""
    return self.policy_dict([self.average_policy_arrays(p) for p in range(2)])

  def policy_dict(self, policies: Sequence[np.ndarray]
                  ) -> dict[str, list[tuple[int, float]]]:
    """{information_state_string: [(action, probability), ...]} of policies
    given as arrays ([rows, A] per player, e.g. `solution().policies`)."""
    result = {}
    for p in range(2):
      arrays = self.tree.players[p]
      probs = policies[p]
      for row, infostate in enumerate(arrays.row_infostate_string):
        k = int(arrays.legal_mask[row].sum())
        result[infostate] = list(
            zip(arrays.row_actions[row, :k].tolist(), probs[row, :k].tolist()))
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
                                 self._direct_values(p, reaches[1 - p]))
      values.append(seq_values[:arrays.num_root].copy())
    return values[0], values[1]

  def solution(self) -> SubgameSolution:
    """The average profile completed by best responses where a player's own
    reach is zero, its root counterfactual values, and its exploitability
    under the root ranges (see `SubgameSolution`)."""
    average = [self.average_policy_arrays(p) for p in range(2)]
    reaches = []
    for p in range(2):
      arrays = self.tree.players[p]
      reaches.append(reach_pass(arrays, average[p], self.ranges[p],
                                np.zeros(arrays.num_sequences)))
    policies, values, responses = [], [], []
    for p in range(2):
      arrays = self.tree.players[p]
      unreached = reaches[p][arrays.row_parent_seq] <= 0.0
      # The best response against the opponent's average everywhere ...
      br_seq, _ = value_pass(arrays, average[p],
                             self._direct_values(p, reaches[1 - p]),
                             respond=np.ones(arrays.num_rows, dtype=bool))
      responses.append(br_seq[:arrays.num_root].copy())
      # ... and the average, completed by it where p never gets.
      seq, _ = value_pass(arrays, average[p],
                          self._direct_values(p, reaches[1 - p]),
                          respond=unreached)
      values.append(seq[:arrays.num_root].copy())
      completed = average[p]
      if unreached.any():
        completed = np.where(unreached[:, None], best_actions(arrays, br_seq),
                             average[p])
      policies.append(completed)
    root = self.root
    inf0, inf1 = root.history_infostate
    mass = float(np.sum(root.chance_reach * self.ranges[0][inf0] *
                        self.ranges[1][inf1]))
    nash_conv = sum(float(self.ranges[p] @ responses[p]) for p in range(2))
    exploitability = max(nash_conv, 0.0) / 2 / mass if mass > 0 else 0.0
    return SubgameSolution(policies=(policies[0], policies[1]),
                           values=(values[0], values[1]),
                           best_response_values=(responses[0], responses[1]),
                           reach_mass=mass, exploitability=exploitability)

  def average_root_values(self) -> tuple[np.ndarray, np.ndarray]:
    """Root counterfactual values of the iterates, averaged with the policy
    averaging's weights since the start (or the last `set_ranges`): the
    self-play values re-solving uses (DeepStack, SoG Theorem 4). Falls back to
    the average policy's values before any iteration."""
    if min(self._root_value_weight) <= 0:
      return self.counterfactual_values()
    return tuple(self._root_value_sum[p] / self._root_value_weight[p]
                 for p in range(2))

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
