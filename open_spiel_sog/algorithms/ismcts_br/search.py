"""ISMCTS-BR's search and its training (`ISMCTSBR`): IS-MCTS with PUCT over
the responder's infostates, histories drawn from the exact posterior, guided
by the value-and-prior network; AlphaZero-style training against the fixed
opponents; greedy play and its exact value; checkpoints. The method is the
package docstring's.
"""

from __future__ import annotations

import math
import zlib
from typing import Any, Callable, Mapping, NamedTuple

import numpy as np
import pyspiel
from open_spiel.python import policy as os_policy
from open_spiel.python.algorithms import expected_game_score

from open_spiel_sog.algorithms.ismcts_br.config import ISMCTSBRConfig
from open_spiel_sog.algorithms.ismcts_br.opponents import Opponent
from open_spiel_sog.algorithms.ismcts_br.opponents import state_player_name
from open_spiel_sog.algorithms.ismcts_br.posterior import Posterior
from open_spiel_sog.algorithms.ismcts_br.value_prior import ValuePriorNet
from open_spiel_sog.algorithms.networks import CheckpointError
from open_spiel_sog.public_state import PublicStateObserver
from open_spiel_sog.utils.progress import progress_bar


class _Node:
  """A responder infostate in the search tree."""

  __slots__ = ("actions", "prior", "n", "w", "visits", "value_sum",
               "features", "legal")

  def __init__(self, actions: list[int], prior: np.ndarray, value: float,
               features: np.ndarray | None = None,
               legal: np.ndarray | None = None):
    self.actions = actions
    self.features = features
    self.legal = legal
    self.prior = prior
    self.n = np.zeros(len(actions))
    self.w = np.zeros(len(actions))
    self.visits = 1  # the expansion's network value counts as one visit
    self.value_sum = value


class SearchResult(NamedTuple):
  """A search's root: legal actions, their visits and mean returns."""
  actions: list[int]
  visits: np.ndarray
  q: np.ndarray
  prior: np.ndarray

  def greedy(self) -> int:
    """The most visited action (ties: higher Q, then higher prior)."""
    order = np.lexsort((self.prior, self.q, self.visits))
    return int(self.actions[order[-1]])


class Estimate(NamedTuple):
  """A sampled mean with its standard error."""
  mean: float
  stderr: float
  games: int


def _sample_chance(state: pyspiel.State, rng: np.random.Generator) -> int:
  outcomes = state.chance_outcomes()
  u = rng.random()
  total = 0.0
  for a, p in outcomes:
    total += p
    if u < total:
      return a
  return outcomes[-1][0]


class ISMCTSBR:
  """ISMCTS-BR against fixed opponents (see the package docstring).

  Args:
    game: a two-player zero-sum sequential game with information state
      strings and tensors.
    opponents: {seat: Opponent sitting in that seat}; the responder plays
      the other seat of each (both seats when both are given).
    config: settings (default `ISMCTSBRConfig()`).
    net: a network to start from (default: a fresh one).
  """

  def __init__(self, game: pyspiel.Game | str,
               opponents: Mapping[int, Opponent],
               config: ISMCTSBRConfig | None = None,
               net: ValuePriorNet | None = None):
    if isinstance(game, str):
      game = pyspiel.load_game(game)
    self.game = game
    self.config = config or ISMCTSBRConfig()
    self.config.validate()
    if not isinstance(opponents, Mapping) or not opponents:
      raise ValueError("ismcts_br: opponents must be a non-empty mapping "
                       "{seat: Opponent}")
    self.observer = PublicStateObserver(game)
    self.opponents: dict[int, Opponent] = {}
    self.posteriors: dict[int, Posterior] = {}
    for seat, opponent in sorted(opponents.items()):
      if seat not in (0, 1):
        raise ValueError(f"ismcts_br: opponent seats are 0 or 1, got {seat!r}")
      if not isinstance(opponent, Opponent):
        raise TypeError(f"ismcts_br: opponents[{seat}] must be an Opponent "
                        f"(make_opponent, Opponent.from_policy), got "
                        f"{type(opponent).__name__}")
      if opponent.player != seat:
        raise ValueError(f"ismcts_br: opponents[{seat}] sits in seat "
                         f"{opponent.player}")
      if str(opponent.game) != str(game):
        raise ValueError(f"ismcts_br: opponent {opponent.name!r} is for "
                         f"{opponent.game}, not {game}")
      self.opponents[seat] = opponent
      self.posteriors[1 - seat] = Posterior(game, opponent, 1 - seat,
                                            self.observer)
    self.seats = tuple(sorted(self.posteriors))
    if net is None:
      net = ValuePriorNet(game, self.config.network())
      net.init(self.config.seed)
    elif str(net.game) != str(game):
      raise ValueError(f"ismcts_br: the network is for {net.game}, not {game}")
    self.net = net
    self.min_utility = float(game.min_utility())
    self.utility_range = float(game.max_utility() - game.min_utility()) or 1.0
    self.rng = np.random.default_rng(self.config.seed)
    self.games_played = 0
    size = self.config.replay_size
    self._buffer = {
        "inputs": np.zeros((size, net.input_size), np.float32),
        "legal": np.zeros((size, net.num_actions), np.float32),
        "value": np.zeros(size, np.float32),
        "value_mask": np.zeros(size, np.float32),
        "policy": np.zeros((size, net.num_actions), np.float32)}
    self._buffer_count = 0  # examples ever added
    self._evaluations: dict[tuple[int, str], tuple[float, np.ndarray,
                                                   np.ndarray]] = {}
    self._decisions: dict[tuple[int, str, int], int] = {}

  # --- Network ---------------------------------------------------------------

  def _params_changed(self) -> None:
    self._evaluations.clear()
    self._decisions.clear()

  def _evaluate(self, state: pyspiel.State, seat: int, key: str):
    """(value, prior over legal actions, features) of `seat`'s infostate."""
    cached = self._evaluations.get((seat, key))
    if cached is None:
      x = self.net.features(state, seat)
      legal = self.net.legal_mask(state)
      value, prior = self.net.predict(x[None], legal[None])
      actions = state.legal_actions()
      p = prior[0, actions]
      p = p / p.sum() if p.sum() > 0 else np.full(len(actions),
                                                  1.0 / len(actions))
      cached = self._evaluations[(seat, key)] = (float(value[0]), p, x)
    return cached

  # --- Search ----------------------------------------------------------------

  def search(self, state: pyspiel.State, simulations: int | None = None,
             noise: bool = False, rng: np.random.Generator | None = None,
             tree_examples: list | None = None) -> SearchResult:
    """IS-MCTS with PUCT from the responder's infostate at `state`.

    Args:
      state: a state where a responder seat (one with an opponent) acts.
      simulations: simulations (default: config.simulations).
      noise: mix Dirichlet noise into the root prior (training).
      rng: random numbers (default: the trainer's).
      tree_examples: if given, gets [features, legal, visit policy, mean
        return] of the non-root nodes that at least
        `config.tree_value_targets` simulations passed through.
    """
    if state.is_terminal() or state.current_player() not in self.posteriors:
      raise ValueError(f"ismcts_br: search needs a state where a responder "
                       f"seat {list(self.seats)} acts, not "
                       f"{state_player_name(state)}")
    seat = state.current_player()
    posterior = self.posteriors[seat]
    opponent = self.opponents[1 - seat]
    rng = self.rng if rng is None else rng
    simulations = self.config.simulations if simulations is None else int(
        simulations)
    cfg = self.config
    root_key = state.information_state_string(seat)
    value, prior, _ = self._evaluate(state, seat, root_key)
    prior = prior.copy()
    if noise and cfg.dirichlet_fraction > 0 and len(prior) > 1:
      eta = rng.dirichlet([cfg.dirichlet_alpha] * len(prior))
      f = cfg.dirichlet_fraction
      prior = (1 - f) * prior + f * eta
    root = _Node(state.legal_actions(), prior, value)
    tree = {root_key: root}
    c_puct, low, scale = cfg.c_puct, self.min_utility, self.utility_range
    for _ in range(simulations):
      h = posterior.sample(state, rng)
      path = []
      while True:
        if h.is_terminal():
          leaf_value = h.returns()[seat]
          break
        if h.is_chance_node():
          h.apply_action(_sample_chance(h, rng))
          continue
        if h.current_player() != seat:
          h.apply_action(opponent.sample(h, rng))
          continue
        key = h.information_state_string(seat)
        node = tree.get(key)
        if node is None:
          leaf_value, p, x = self._evaluate(h, seat, key)
          tree[key] = _Node(h.legal_actions(), p, leaf_value, x,
                            None if tree_examples is None else
                            self.net.legal_mask(h))
          break
        parent_value = node.value_sum / node.visits
        q = np.where(node.n > 0, node.w / np.maximum(node.n, 1), parent_value)
        score = ((q - low) / scale + c_puct * node.prior *
                 math.sqrt(max(node.n.sum(), 1.0)) / (1.0 + node.n))
        i = int(np.argmax(score))
        path.append((node, i))
        h.apply_action(node.actions[i])
      for node, i in path:
        node.n[i] += 1
        node.w[i] += leaf_value
        node.visits += 1
        node.value_sum += leaf_value
    if tree_examples is not None and cfg.tree_value_targets > 0:
      for node in tree.values():
        if node is root or node.visits - 1 < cfg.tree_value_targets:
          continue
        target = np.zeros(self.net.num_actions, np.float32)
        target[node.actions] = node.n / node.n.sum()
        # Its visits are its prior target, as at the root.
        tree_examples.append([node.features, node.legal, target, 1.0,
                              node.value_sum / node.visits])
    q = np.where(root.n > 0, root.w / np.maximum(root.n, 1),
                 root.value_sum / root.visits)
    return SearchResult(root.actions, root.n.copy(), q, root.prior)

  def decide(self, state: pyspiel.State,
             simulations: int | None = None) -> int:
    """The responder's greedy (most visited) action at `state`, without
    noise. Memoised per infostate until the network changes, so the
    responder plays a fixed policy that `play` and `exact_value` share; each
    infostate's search has its own seed."""
    seat = state.current_player()
    simulations = self.config.simulations if simulations is None else int(
        simulations)
    key = state.information_state_string(seat) if seat in (0, 1) else ""
    action = self._decisions.get((seat, key, simulations))
    if action is None:
      rng = np.random.default_rng(
          [self.config.seed, seat, zlib.crc32(key.encode())])
      action = self.search(state, simulations, noise=False, rng=rng).greedy()
      self._decisions[(seat, key, simulations)] = action
    return action

  # --- Training --------------------------------------------------------------

  def _episode(self, seat: int):
    """One training game with the responder in `seat`: (inputs, legal,
    visit policies) of its decisions and its return."""
    cfg, rng, net = self.config, self.rng, self.net
    opponent = self.opponents[1 - seat]
    state = self.game.new_initial_state()
    records = []
    tree_records = []
    moves = 0
    while not state.is_terminal():
      if state.is_chance_node():
        state.apply_action(_sample_chance(state, rng))
        continue
      if state.current_player() != seat:
        state.apply_action(opponent.sample(state, rng))
        continue
      extra = [] if cfg.tree_value_targets > 0 else None
      result = self.search(state, noise=True, tree_examples=extra)
      tree_records.extend(extra or [])
      visits = result.visits
      target = np.zeros(net.num_actions, np.float32)
      target[result.actions] = visits / visits.sum()
      _, _, x = self._evaluate(state, seat,
                               state.information_state_string(seat))
      records.append([x, net.legal_mask(state), target, 1.0, None])
      greedy = result.greedy()
      action = greedy
      if cfg.epsilon > 0 and rng.random() < cfg.epsilon:
        action = result.actions[int(rng.integers(len(result.actions)))]
      elif moves < cfg.temperature_moves and cfg.temperature > 0:
        weights = visits ** (1.0 / cfg.temperature)
        i = rng.choice(len(visits), p=weights / weights.sum())
        action = result.actions[int(i)]
      if action != greedy and cfg.off_policy_mask:
        for record in records:
          record[3] = 0.0
      moves += 1
      state.apply_action(action)
    return records + tree_records, float(state.returns()[seat])

  def _add(self, records, value: float) -> None:
    size = self.config.replay_size
    for x, legal, target, value_mask, own_value in records:
      i = self._buffer_count % size
      self._buffer["inputs"][i] = x
      self._buffer["legal"][i] = legal
      self._buffer["value"][i] = value if own_value is None else own_value
      self._buffer["value_mask"][i] = value_mask
      self._buffer["policy"][i] = target
      self._buffer_count += 1

  @property
  def replay_examples(self) -> int:
    return min(self._buffer_count, self.config.replay_size)

  def _update(self) -> dict[str, float]:
    n = self.replay_examples
    index = self.rng.integers(0, n, size=self.config.batch_size)
    b = self._buffer
    return self.net.train_step(b["inputs"][index], b["legal"][index],
                               b["value"][index], b["policy"][index],
                               b["value_mask"][index])

  def train(self, games: int | None = None, progress: bool = True,
            callback: Callable[["ISMCTSBR", dict[str, Any]], Any] | None = None
            ) -> list[dict[str, float]]:
    """Plays `games` training games (default config.games), alternating the
    responder's seat, each followed by `updates_per_game` optimiser steps once
    the replay buffer holds a batch. Calls may be repeated to train on.

    Returns:
      One entry per game: {"game", "seat", "return", and, after updates, the
      mean "loss", "value_loss", "policy_loss" of its steps}. `callback(self,
      entry)` is called after every game.
    """
    cfg = self.config
    games = cfg.games if games is None else int(games)
    if games < 0:
      raise ValueError(f"ismcts_br: games must be >= 0, got {games}")
    history = []
    recent: list[float] = []
    with progress_bar(games, f"ISMCTS-BR {self.game}",
                      disable=not progress) as bar:
      for _ in range(games):
        seat = self.seats[self.games_played % len(self.seats)]
        records, value = self._episode(seat)
        self._add(records, value)
        self.games_played += 1
        entry: dict[str, Any] = {"game": self.games_played, "seat": seat,
                                 "return": value}
        if self.replay_examples >= cfg.batch_size and cfg.updates_per_game:
          steps = [self._update() for _ in range(cfg.updates_per_game)]
          self._params_changed()
          for k in steps[0]:
            entry[k] = float(np.mean([s[k] for s in steps]))
          recent = (recent + [entry["loss"]])[-100:]
        history.append(entry)
        bar.update(1)
        if recent and self.games_played % 10 == 0:
          bar.set_postfix_str(f"loss {np.mean(recent):.4f} "
                              f"examples {self._buffer_count}")
        if callback is not None:
          callback(self, entry)
    return history

  # --- Evaluation ------------------------------------------------------------

  def _check_seat(self, seat: int) -> None:
    if seat not in self.posteriors:
      raise ValueError(f"ismcts_br: no opponent for responder seat {seat!r}; "
                       f"responder seats: {list(self.seats)}")

  def play(self, num_games: int, seat: int, seed: int = 0,
           simulations: int | None = None) -> Estimate:
    """Mean return (and standard error) of the responder in `seat` over
    `num_games` sampled games, greedy at each decision (`decide`)."""
    self._check_seat(seat)
    if int(num_games) < 1:
      raise ValueError(f"ismcts_br: num_games must be >= 1, got {num_games}")
    rng = np.random.default_rng([seed, seat])
    opponent = self.opponents[1 - seat]
    returns = np.empty(int(num_games))
    for g in range(int(num_games)):
      state = self.game.new_initial_state()
      while not state.is_terminal():
        if state.is_chance_node():
          state.apply_action(_sample_chance(state, rng))
        elif state.current_player() != seat:
          state.apply_action(opponent.sample(state, rng))
        else:
          state.apply_action(self.decide(state, simulations))
      returns[g] = state.returns()[seat]
    stderr = (float(returns.std(ddof=1) / math.sqrt(len(returns)))
              if len(returns) > 1 else float("nan"))
    return Estimate(float(returns.mean()), stderr, len(returns))

  def joint_policy(self, seat: int,
                   simulations: int | None = None) -> os_policy.Policy:
    """An OpenSpiel policy: the responder's greedy policy in `seat` (searched
    on demand), the opponent in the other."""
    self._check_seat(seat)
    return _JointPolicy(self, seat, simulations)

  def exact_value(self, seat: int, simulations: int | None = None) -> float:
    """The exact expected return of the responder's greedy policy in `seat`
    against the opponent (OpenSpiel's policy_value; no sampling error). Only
    the responder infostates the walk reaches are searched."""
    policy = self.joint_policy(seat, simulations)
    values = expected_game_score.policy_value(self.game.new_initial_state(),
                                              [policy, policy])
    return float(values[seat])

  # --- Checkpoints -----------------------------------------------------------

  def save(self, path: str) -> None:
    """Saves the network (with the settings and games played)."""
    self.net.save(path, extra={"ismcts_br": self.config.to_json(),
                               "games_played": self.games_played})

  @classmethod
  def from_checkpoint(cls, path: str, game: pyspiel.Game | str,
                      opponents: Mapping[int, Opponent],
                      config: ISMCTSBRConfig | None = None) -> "ISMCTSBR":
    """An ISMCTSBR with the network saved at `path` (settings from the
    checkpoint unless `config` is given)."""
    net = ValuePriorNet.load(path, game)
    if config is None:
      try:
        config = ISMCTSBRConfig.from_json(
            net.metadata.get("extra", {}).get("ismcts_br", {}))
      except (ValueError, TypeError) as e:
        raise CheckpointError(f"{path!r}: bad ISMCTS-BR settings: {e}"
                              ) from None
    br = cls(net.game, opponents, config, net=net)
    br.games_played = int(net.metadata.get("extra", {}).get("games_played", 0))
    return br


class _JointPolicy(os_policy.Policy):
  """The responder's greedy searched policy in one seat, the opponent in the
  other."""

  def __init__(self, br: ISMCTSBR, seat: int, simulations: int | None):
    super().__init__(br.game, [0, 1])
    self._br, self._seat, self._simulations = br, seat, simulations
    self._opponent = br.opponents[1 - seat]

  def action_probabilities(self, state, player_id=None):
    player = state.current_player() if player_id is None else player_id
    if player == self._seat:
      return {self._br.decide(state, self._simulations): 1.0}
    return self._opponent.action_probabilities(state)
