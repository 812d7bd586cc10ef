"""Online Outcome Sampling (OOS; Lisy, Lanctot and Bowling, AAMAS 2015).

OOS is outcome-sampling MCCFR (Lanctot et al. 2009) made into an online
search. Every sample starts at the root of the game, so the algorithm stays
consistent (it converges to a Nash equilibrium as the number of samples
grows), but two changes make it usable during a match:

Incremental tree building. The solver keeps a table keyed by
`information_state_string`, holding per infostate the cumulative regrets and
the cumulative average-strategy weights. It starts empty. A sample walks the
tree portion of the game (infostates in the table) and, at the first infostate
that is not in the table, adds it, picks an action uniformly and finishes the
game with a playout (uniform random, as in the paper, or `playout="current"`:
the current regret-matching strategy where the infostate is in the table).
Infostates of the playout are neither added nor updated.

Targeting. During a match the solver is told the current state, and samples
are directed to the relevant part of the game. Before each sample a scenario
is drawn: with probability `delta` the sample is *targeted* and stays inside
Z_sub, the terminal histories through the target; otherwise it is an ordinary
(untargeted) outcome sample. The target is
  * "infostate" (IST): the histories of the searching player's current
    information set I(m);
  * "public_state" (PST): the histories of the current public state
    (`open_spiel_sog.public_state.PublicStateObserver`), i.e. every history
    with the same public observations; this does not use the player's private
    information to steer the search;
  * "none": plain outcome sampling with incremental tree building.
The target histories are enumerated exactly (through the public state), so a
targeted sample never runs into a dead end inside the tree.

Sampling. At a decision of the update player i the untargeted sampling
distribution is Phi = epsilon * uniform + (1 - epsilon) * sigma(I), and sigma(I)
(on-policy) at the opponent's; chance samples its own distribution. A
targeted sample uses the same distributions restricted to the actions that
keep it on a path to a target history, renormalized, until it has passed
through a target history; below the target it samples like an untargeted one.
Both probabilities of the sampled path are tracked, s_b (targeted) and s_u
(untargeted), and the importance weight of a sample uses their mixture
    q = delta * s_b + (1 - delta) * s_u,
the exact probability with which the two scenarios together produce it (the
paper's l = delta * s_1 + (1 - delta) * s_2). A sample entering a playout has
q = q(h) / |A(I)| * (playout probabilities), the same in both scenarios.

Updates (Algorithm 1 of the paper). For a sampled terminal z with utility u
for the update player i, at each of i's infostates I on the tree portion with
history h and sampled action a:
    W = u * pi_{-i}(h) / q(z)      (pi_{-i} includes chance)
    r_I[a]  += (pi(ha, z) - pi(h, z)) * W
    r_I[a'] -= pi(h, z) * W          for a' != a
where pi(., z) is the tail reach under sigma (and chance). At the opponent's
infostates the average strategy is accumulated by stochastically weighted
averaging: s_I[a'] += pi_{-i}(h) * sigma(I, a') / q(h). One iteration is two
samples, one per update player.

Current strategy: regret matching, with the paper's explorative variant
sigma_gamma = gamma / |A| + (1 - gamma) * RM (gamma = 0.01) so that
infostates behind a move the opponent never makes keep improving.

Target compensation w_T (paper, section 3.3). Samples taken from the root
reach I(m) with probability s_0, targeted ones with s_m > s_0, so each early
update at I(m) weighs 1/s_0 and each later one only 1/s_m. With
`target_compensation` every update of a targeted run is multiplied by
w_T = s_m / s_0, evaluated under the average-strategy profile pi_bar:
    s_0 = pi_bar(I(m)),   s_m = (1 - delta) * s_0 + delta * pi_bar(I(m)) /
                                 pi_bar(Z_sub),
    w_T = (1 - delta) + delta / pi_bar(Z_sub),
for both IST (where Z_sub is I(m), so a targeted sample always reaches it)
and PST. (The paper's displayed formula for 1/w_T omits the division by s_0
that its worked example uses; OpenSpiel's C++ `OOSAlgorithm` leaves the
compensation out altogether, which `target_compensation=False` reproduces.)

Parameters follow the paper where it gives them: epsilon = 0.6 and
gamma = 0.01; delta = 0.9 (OpenSpiel's C++ default is 0.6).

Differences from OpenSpiel's C++ `OOSAlgorithm` (open_spiel/algorithms/oos.cc),
which is not exposed to Python: it targets by action-observation histories
(possibly running into dead ends, "missed targets"), mixes exploration into
every player's and chance's targeted distribution, estimates values with the
per-node mixture of the two sampling probabilities rather than the mixture of
the path probabilities, has no explorative regret matching, and omits w_T.
Here the target histories are enumerated through the public state, the
sampling follows the paper (exploration at the update player's decisions
only), and the importance weights use the exact path mixture q.

    solver = OOSSolver(pyspiel.load_game("kuhn_poker"))
    solver.run(20000)                      # from the root, untargeted
    exploitability.exploitability(game, solver.average_policy())
    solver.run(1000, target_state=state)   # targeted to state's infostate

This module stays one of some 650 lines (90 of them this description): the
solver is one object whose targeting, sampling and updates share its
infostate table, target trie and counters, and its config, counters and
frozen policy are its inputs and outputs, used with it alone.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any, Mapping

import pyspiel
from open_spiel.python import policy as policy_lib

from open_spiel_sog.public_state import PublicStateObserver
from open_spiel_sog.public_state import validate_game as validate_public_states
from open_spiel_sog.utils.params import dataclass_defaults
from open_spiel_sog.utils.params import parse_params

TARGETING = ("infostate", "public_state", "none")
PLAYOUTS = ("uniform", "current")

# Key marking a target history in the target trie (actions are ints >= 0).
_HIT = None


@dataclasses.dataclass(frozen=True)
class OOSConfig:
  """Parameters of Online Outcome Sampling.

  Attributes:
    simulations: iterations per search (per move, for the bot); an iteration
      is two samples, one per update player.
    delta: probability that a sample is targeted (0: plain outcome sampling
      with incremental tree building).
    epsilon: exploration of the update player's sampling distribution, in
      (0, 1].
    gamma: uniform mix of the regret-matching strategy (the paper's
      explorative regret matching), in [0, 1].
    targeting: "infostate", "public_state" or "none".
    target_compensation: multiply the updates of a targeted search by the
      paper's w_T (see the module docstring).
    playout: the policy beyond the tree: "uniform" (the paper) or "current"
      (regret matching at infostates already in the table).
    seed: seed of the sampling.
  """
  simulations: int = 1000
  delta: float = 0.9
  epsilon: float = 0.6
  gamma: float = 0.01
  targeting: str = "infostate"
  target_compensation: bool = True
  playout: str = "uniform"
  seed: int = 0

  @classmethod
  def from_params(cls, params: Mapping[str, Any] | None) -> "OOSConfig":
    """Builds a config from bot parameters (a dict or OpenSpiel's parsed
    string form), with clear errors."""
    values = parse_params("oos", params, dataclass_defaults(cls))
    config = cls(**values)
    config.validate()
    return config

  def validate(self) -> None:
    """Raises ValueError naming the first bad field."""
    if not isinstance(self.simulations, int) or self.simulations < 0:
      raise ValueError(f"oos: simulations must be an integer >= 0, got "
                       f"{self.simulations!r}")
    if not 0.0 <= self.delta <= 1.0:
      raise ValueError(f"oos: delta must be in [0, 1], got {self.delta!r}")
    if not 0.0 < self.epsilon <= 1.0:
      raise ValueError(f"oos: epsilon must be in (0, 1] (every history must "
                       f"be sampled with positive probability), got "
                       f"{self.epsilon!r}")
    if not 0.0 <= self.gamma <= 1.0:
      raise ValueError(f"oos: gamma must be in [0, 1], got {self.gamma!r}")
    if self.targeting not in TARGETING:
      raise ValueError(f"oos: unknown targeting {self.targeting!r}; "
                       f"supported: {', '.join(map(repr, TARGETING))}")
    if self.playout not in PLAYOUTS:
      raise ValueError(f"oos: unknown playout {self.playout!r}; supported: "
                       f"{', '.join(map(repr, PLAYOUTS))}")
    if not isinstance(self.seed, int):
      raise ValueError(f"oos: seed must be an integer, got {self.seed!r}")


@dataclasses.dataclass
class OOSStats:
  """Counters of a solver (cumulative until `reset`).

  Attributes:
    iterations: iterations run (two samples each).
    samples: samples (root-to-terminal trajectories).
    targeted_samples: samples drawn in the targeted scenario.
    target_visits: samples whose tree portion went through the infostate
      named by the last `target_state` (counted whatever the targeting,
      also with "none").
    targeted_target_visits: those among the targeted samples.
    missed_targets: targeted samples that never reached a target history
      (they left the tree into a playout before it).
    playouts: samples that added an infostate and finished with a playout.
    untargeted_fallbacks: runs that wanted targeting but ran untargeted
      (the target could not be enumerated; see `target_error`).
    target_error: why the last fallback happened.
  """
  iterations: int = 0
  samples: int = 0
  targeted_samples: int = 0
  target_visits: int = 0
  targeted_target_visits: int = 0
  missed_targets: int = 0
  playouts: int = 0
  untargeted_fallbacks: int = 0
  target_error: str = ""


class _InfoState:
  """Regrets and average-strategy weights of one infostate."""
  __slots__ = ("actions", "regrets", "avg")

  def __init__(self, actions: list[int]):
    self.actions = actions
    self.regrets = [0.0] * len(actions)
    self.avg = [0.0] * len(actions)


def _regret_matching(regrets: list[float], gamma: float) -> list[float]:
  """sigma_gamma = gamma / n + (1 - gamma) * RM(regrets)."""
  n = len(regrets)
  total = 0.0
  for r in regrets:
    if r > 0.0:
      total += r
  if total <= 0.0:
    return [1.0 / n] * n
  if gamma > 0.0:
    u = gamma / n
    scale = (1.0 - gamma) / total
    return [u + scale * r if r > 0.0 else u for r in regrets]
  return [r / total if r > 0.0 else 0.0 for r in regrets]


def _sample_index(probs: list[float], r: float) -> int:
  """Index drawn from `probs` (summing to ~1) with uniform number `r`."""
  acc = 0.0
  last = 0
  for k, p in enumerate(probs):
    if p > 0.0:
      acc += p
      last = k
      if r < acc:
        return k
  return last  # rounding: r >= the computed sum


class OOSPolicy(policy_lib.Policy):
  """A frozen per-infostate policy (uniform where it has no entry).

  Answers for every state of the game, so OpenSpiel's
  `exploitability.exploitability` and `policy.Policy.to_tabular()` work.
  """

  def __init__(self, game: pyspiel.Game, probs: dict[str, dict[int, float]]):
    super().__init__(game, list(range(game.num_players())))
    self._probs = probs

  def __len__(self) -> int:
    return len(self._probs)

  def infostates(self) -> list[str]:
    return list(self._probs)

  def action_probabilities(self, state, player_id=None):
    if player_id is None:
      key = state.information_state_string()
      legal = state.legal_actions()
    else:
      key = state.information_state_string(player_id)
      legal = state.legal_actions(player_id)
    probs = self._probs.get(key)
    if probs is None:
      return {a: 1.0 / len(legal) for a in legal}
    return dict(probs)


def validate_game(game: pyspiel.Game) -> None:
  """Raises ValueError (naming the reason) unless OOS can solve `game`:
  two-player zero-sum, sequential, explicit chance, infostate strings."""
  try:
    validate_public_states(game)
  except ValueError as e:
    raise ValueError(f"oos cannot play {game}: {e}") from None


class OOSSolver:
  """Online Outcome Sampling over one game (see the module docstring).

  Attributes:
    game: the pyspiel.Game.
    config: the OOSConfig.
    stats: OOSStats counters.
    target_weight: w_T of the last run (1.0 for untargeted runs).
  """

  def __init__(self, game: pyspiel.Game | str,
               config: OOSConfig | Mapping[str, Any] | None = None):
    if isinstance(game, str):
      game = pyspiel.load_game(game)
    if not isinstance(config, OOSConfig):
      config = OOSConfig.from_params(config)
    else:
      config.validate()
    validate_game(game)
    self.game = game
    self.config = config
    self._rng = random.Random(config.seed)
    self._observer: PublicStateObserver | None = None
    self._table: dict[str, _InfoState] = {}
    self.stats = OOSStats()
    self.target_weight = 1.0
    # The target of the current run.
    self._trie: dict | None = None
    self._target_key: str | None = None
    self._target_player = -1
    # The last enumerated target: (history, player, targeting) and its trie.
    self._cached_target: tuple | None = None
    self._cached_trie: dict | None = None

  # --- Public API ------------------------------------------------------------

  def reset(self) -> None:
    """Forgets the table and the counters (the random stream continues)."""
    self._table = {}
    self.stats = OOSStats()
    self.target_weight = 1.0

  @property
  def num_infostates(self) -> int:
    """Infostates in the table (the size of the search tree)."""
    return len(self._table)

  def __contains__(self, info_state: str) -> bool:
    return info_state in self._table

  def run(self, iterations: int | None = None,
          target_state: pyspiel.State | None = None,
          player: int | None = None) -> OOSStats:
    """Runs `iterations` (default: config.simulations) iterations.

    Args:
      iterations: number of iterations (two samples each).
      target_state: the match state to target, or None for untargeted
        iterations from the root. With targeting "none" the iterations are
        untargeted but visits to its infostate are still counted.
      player: whose information set is the target (default: the player to
        move at `target_state`).

    Returns:
      `self.stats`.
    """
    if iterations is None:
      iterations = self.config.simulations
    if (not isinstance(iterations, int) or isinstance(iterations, bool)
        or iterations < 0):
      raise ValueError(f"oos: iterations must be an integer >= 0, got "
                       f"{iterations!r}")
    self._set_target(target_state, player)
    delta = self.config.delta if self._trie is not None else 0.0
    self.target_weight = self._compensation(delta)
    rng = self._rng.random
    for _ in range(iterations):
      for update_player in (0, 1):
        biased = delta > 0.0 and rng() < delta
        self._sample(update_player, biased, delta)
      self.stats.iterations += 1
    return self.stats

  def average_policy(self) -> OOSPolicy:
    """A snapshot of the average strategy (uniform off the table)."""
    return OOSPolicy(self.game, {
        key: self._average(info) for key, info in self._table.items()})

  def current_policy(self) -> OOSPolicy:
    """A snapshot of the current (regret-matching) strategy."""
    gamma = self.config.gamma
    return OOSPolicy(self.game, {
        key: dict(zip(info.actions, _regret_matching(info.regrets, gamma)))
        for key, info in self._table.items()})

  def infostate_policy(self, info_state: str,
                       legal_actions: list[int]) -> dict[int, float]:
    """The average strategy at one infostate; uniform over `legal_actions`
    when the search never reached it."""
    info = self._table.get(info_state)
    if info is None:
      return {a: 1.0 / len(legal_actions) for a in legal_actions}
    return self._average(info)

  # --- Targeting -------------------------------------------------------------

  def _set_target(self, state: pyspiel.State | None,
                  player: int | None) -> None:
    self._trie = None
    self._target_key = None
    self._target_player = -1
    if state is None:
      return
    if state.is_terminal():
      raise ValueError("oos: cannot target a terminal state")
    if player is None:
      player = state.current_player()
      if player < 0:
        raise ValueError("oos: the target state is a chance node; pass the "
                         "player whose information set to target")
    if player not in (0, 1):
      raise ValueError(f"oos: player must be 0 or 1, got {player}")
    self._target_player = player
    self._target_key = state.information_state_string(player)
    if self.config.targeting == "none" or not state.history():
      return  # the root: every sample goes through it
    history = tuple(state.history())
    cache_key = (history, player, self.config.targeting)
    if self._cached_target == cache_key:
      self._trie = self._cached_trie
      return
    try:
      trie = self._build_trie(state, player)
    except ValueError as e:  # the public state is too large to enumerate
      self.stats.untargeted_fallbacks += 1
      self.stats.target_error = str(e)
      return
    self._cached_target = cache_key
    self._cached_trie = trie
    self._trie = trie

  def _build_trie(self, state: pyspiel.State, player: int) -> dict:
    """A trie of the action sequences of the target histories."""
    if self._observer is None:
      self._observer = PublicStateObserver(self.game)
    ps, _ = self._observer.public_state_of(state)
    if self.config.targeting == "infostate":
      # The observer's key of the target (in games whose infostate strings
      # forget, such as phantom_ttt, not the game's string).
      key = self._observer.infostate_string(state, player)
      histories = [h for h in ps.histories
                   if self._observer.infostate_string(h, player) == key]
    else:
      histories = ps.histories
    trie: dict = {}
    for h in histories:
      node = trie
      for a in h.history():
        node = node.setdefault(a, {})
      node[_HIT] = True
    return trie

  def _compensation(self, delta: float) -> float:
    """The paper's w_T = (1 - delta) + delta / pi_bar(Z_sub)."""
    if (self._trie is None or delta <= 0.0 or
        not self.config.target_compensation):
      return 1.0
    reach = self._average_reach(self._trie)
    if reach <= 0.0:
      return 1.0
    return (1.0 - delta) + delta / reach

  def _average_reach(self, trie: dict) -> float:
    """Sum over the target histories of their reach under the average
    strategy profile and chance."""
    total = 0.0
    stack = [(self.game.new_initial_state(), trie, 1.0)]
    while stack:
      state, node, reach = stack.pop()
      if _HIT in node:
        total += reach
        continue
      if state.is_chance_node():
        probs = dict(state.chance_outcomes())
      else:
        probs = self.infostate_policy(state.information_state_string(),
                                      state.legal_actions())
      for a, child in node.items():
        p = probs.get(a, 0.0)
        if p > 0.0:
          stack.append((state.child(a), child, reach * p))
    return total

  # --- Sampling --------------------------------------------------------------

  def _average(self, info: _InfoState) -> dict[int, float]:
    total = sum(info.avg)
    if total <= 0.0:
      return {a: 1.0 / len(info.actions) for a in info.actions}
    return {a: w / total for a, w in zip(info.actions, info.avg)}

  def _sample(self, i: int, biased: bool, delta: float) -> None:
    """One outcome sample with update player `i`, then its updates."""
    config = self.config
    stats = self.stats
    eps = config.epsilon
    gamma = config.gamma
    table = self._table
    rng = self._rng.random
    target_key = self._target_key
    target_player = self._target_player

    stats.samples += 1
    if biased:
      stats.targeted_samples += 1
    state = self.game.new_initial_state()
    trie = self._trie  # the trie node of the current history, or None
    below = trie is None  # passed a target history (or no target)
    bs = 0.0 if trie is None else 1.0  # targeted sampling probability
    us = 1.0  # untargeted sampling probability
    pm = 1.0  # reach of -i (the other player and chance) under sigma
    hit = False
    # (info, player, action index, sigma, pm, q(h)); info None for chance.
    path: list[tuple] = []

    while True:
      if state.is_terminal():
        u = state.player_return(i)
        tail = 1.0
        q_z = delta * bs + (1.0 - delta) * us
        break

      if state.is_chance_node():
        outcomes = state.chance_outcomes()
        probs = [p for _, p in outcomes]
        if trie is not None and not below:
          allowed = [p if a in trie else 0.0 for a, p in outcomes]
          total = sum(allowed)
          if biased:
            k = _sample_index([p / total for p in allowed], rng())
          else:
            k = _sample_index(probs, rng())
          bs *= allowed[k] / total
        else:
          k = _sample_index(probs, rng())
          bs *= probs[k]
        action, rho = outcomes[k]
        us *= rho
        pm *= rho
        path.append((None, rho))
        state.apply_action(action)
        if trie is not None and not below:
          trie = trie.get(action)
          if trie is not None and _HIT in trie:
            below = True
        continue

      player = state.current_player()
      key = state.information_state_string()
      if player == target_player and key == target_key:
        hit = True
      q_h = delta * bs + (1.0 - delta) * us
      info = table.get(key)
      if info is None:
        # Leaf of the tree: add it, then a playout decides the outcome.
        actions = state.legal_actions()
        info = _InfoState(actions)
        table[key] = info
        n = len(actions)
        k = min(int(rng() * n), n - 1)
        state.apply_action(actions[k])
        u, tail = self._playout(state, i)
        path.append((info, player, k, [1.0 / n] * n, pm, q_h))
        q_z = q_h / n * tail
        stats.playouts += 1
        break

      sigma = _regret_matching(info.regrets, gamma)
      if player == i:
        n = len(sigma)
        phi = [eps / n + (1.0 - eps) * s for s in sigma]
      else:
        phi = sigma
      actions = info.actions
      if trie is not None and not below:
        allowed = [p if a in trie else 0.0 for a, p in zip(actions, phi)]
        total = sum(allowed)
        if total <= 0.0:  # only with gamma = 0: uniform over allowed
          allowed = [1.0 if a in trie else 0.0 for a in actions]
          total = sum(allowed)
        k = _sample_index(
            [p / total for p in allowed] if biased else phi, rng())
        bs *= allowed[k] / total
      else:
        k = _sample_index(phi, rng())
        bs *= phi[k]
      us *= phi[k]
      path.append((info, player, k, sigma, pm, q_h))
      if player != i:
        pm *= sigma[k]
      action = actions[k]
      state.apply_action(action)
      if trie is not None and not below:
        trie = trie.get(action)
        if trie is not None and _HIT in trie:
          below = True

    if hit:
      stats.target_visits += 1
      if biased:
        stats.targeted_target_visits += 1
    if biased and not below:
      stats.missed_targets += 1
    self._update(path, i, u, tail, q_z)

  def _playout(self, state: pyspiel.State, i: int) -> tuple[float, float]:
    """Plays `state` out; returns (u_i, probability of the playout)."""
    rng = self._rng.random
    current = self.config.playout == "current"
    table = self._table
    gamma = self.config.gamma
    prob = 1.0
    while not state.is_terminal():
      if state.is_chance_node():
        outcomes = state.chance_outcomes()
        k = _sample_index([p for _, p in outcomes], rng())
        action, p = outcomes[k]
      else:
        info = table.get(state.information_state_string()) if current else None
        if info is None:
          actions = state.legal_actions()
          n = len(actions)
          action, p = actions[min(int(rng() * n), n - 1)], 1.0 / n
        else:
          sigma = _regret_matching(info.regrets, gamma)
          k = _sample_index(sigma, rng())
          action, p = info.actions[k], sigma[k]
      prob *= p
      state.apply_action(action)
    return state.player_return(i), prob

  def _update(self, path: list[tuple], i: int, u: float, tail: float,
              q_z: float) -> None:
    """Regret and average-strategy updates along the sampled path."""
    w_t = self.target_weight
    x = tail  # pi(h, z): tail reach under sigma and chance
    base = u / q_z * w_t
    for entry in reversed(path):
      info = entry[0]
      if info is None:
        x *= entry[1]
        continue
      _, player, k, sigma, pm, q_h = entry
      x_h = x * sigma[k]
      if player == i:
        w = base * pm
        regrets = info.regrets
        for j in range(len(regrets)):
          regrets[j] -= x_h * w
        regrets[k] += x * w
      else:
        w = w_t * pm / q_h
        avg = info.avg
        for j in range(len(avg)):
          avg[j] += w * sigma[j]
      x = x_h
