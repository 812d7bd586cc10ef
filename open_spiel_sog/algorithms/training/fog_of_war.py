"""Learning a fog-of-war game's token CVPN on the anchored subgame
(DESIGN.md sections 14, 15 and 17).

Self-play: both players search the anchored subgame (`AnchoredSearch`)
with the network being trained at its leaves (`leaf_network.LeafNetwork`).
Each search is a query: its root histories (the searcher's infostate and
the order-2 set) form one sampled public state, encoded as the leaves'
groups are (`leaf_network.encode_group`, so the network learns on the
inputs it is asked about), and its targets are the search's values for the
infostates present: each infostate's expected value under the search's
average profile, weighted as the network weighs it (its histories' chance
reach times the opponent's range), and the searched policy at the
searcher's own infostate. The search is the solver: its leaves are the
network's own values, so values reach back from the game's ends as in
value iteration (SoG's q_search 0 at the actors' roots; no separate
solver).

`train` runs games, keeps the examples in a sliding window and takes
`updates_per_example` optimiser steps per new example (in batches).
"""

from __future__ import annotations

import dataclasses
import time
from typing import Callable

import numpy as np
import pyspiel

from open_spiel_sog.algorithms.sog.anchored import leaf_network
from open_spiel_sog.algorithms.sog.anchored.search import AnchoredConfig
from open_spiel_sog.algorithms.sog.anchored.search import AnchoredSearch
from open_spiel_sog.algorithms.sog.cvpn.tokens import TokenBatch


@dataclasses.dataclass
class FogConfig:
  """Self-play and learning settings (docs/learning.md lists the flags).

  Attributes:
    simulations: growth simulations per search.
    root_histories, order2_histories: the anchored root's sizes.
    leaf_batch: leaves per network call.
    batch_size: examples per optimiser step.
    replay_capacity: examples kept (the newest).
    replay_ratio: how many times each new example is learned on, on
      average (optimiser steps owed: replay_ratio x new examples /
      batch_size).
    exploration: the share of moves played uniformly at random (else from
      the searched policy).
    seed: the games' and searches' random stream.
  """
  simulations: int = 200
  root_histories: int = 32
  order2_histories: int = 4
  leaf_batch: int = 64
  batch_size: int = 64
  replay_capacity: int = 20_000
  replay_ratio: float = 4.0
  exploration: float = 0.1
  seed: int = 0


def root_example(search: AnchoredSearch, encoder) -> dict[str, np.ndarray]:
  """The last search's root as a training example (the network's fields
  with targets; see the module docstring)."""
  tree = search.tree
  roots = list(tree.roots)
  data = tree.leaf_data(roots, tensors=search.network.engine_tensors)
  group = np.arange(len(roots))
  ex = leaf_network.encode_group(encoder, data, group)
  values = np.asarray(tree.node_values)[roots]
  hist, weight, r = ex["hist"], ex["weight"].astype(np.float64), ex["range"]
  n = len(ex["mask"])
  target = np.zeros(n, dtype=np.float32)
  mask = np.zeros(n, dtype=np.float32)
  for p in (0, 1):
    own, opp = hist[:, p], hist[:, 1 - p]
    omega = weight * r[opp]
    norm = np.bincount(own, weights=omega, minlength=n)
    total = np.bincount(own, weights=omega * values, minlength=n)
    ok = (norm > 0) & (ex["player"] == p)
    sign = 1.0 if p == 0 else -1.0
    target[ok] = sign * total[ok] / norm[ok] / encoder.utility_scale
    mask[ok] = 1.0
  policy = np.zeros((n, encoder.num_actions), dtype=np.float32)
  policy_mask = np.zeros(n, dtype=np.float32)
  me = search.player
  key = search.last_root[0].keys[me]  # the true history's
  mine = next(hist[i, me] for i, n in enumerate(roots)
              if tree.node_keys[n][me] == key)
  for a, p in search.last_result.policy.items():
    policy[mine, a] = p
  policy_mask[mine] = 1.0
  ex.update(value_target=target, value_mask=mask, policy_target=policy,
            policy_mask=policy_mask)
  return ex


class FogSelfPlay:
  """Self-play games of `game` with `net` (a `TokenCVPN`) at both players'
  anchored leaves; `play()` returns one game's examples."""

  def __init__(self, game: pyspiel.Game, net, config: FogConfig,
               native: bool = True):
    self.game = game
    self.net = net
    self.config = config
    self.rng = np.random.default_rng(config.seed)
    self.leaves = leaf_network.LeafNetwork(net)
    anchored = AnchoredConfig(
        simulations=config.simulations,
        root_histories=config.root_histories,
        order2_histories=config.order2_histories,
        leaf_batch=config.leaf_batch, seed=config.seed)
    self.searches = [
        AnchoredSearch(game, p, dataclasses.replace(
            anchored, seed=config.seed * 2 + p), native=native,
                       network=self.leaves) for p in (0, 1)]
    self.games = 0
    self.moves = 0

  def play(self) -> tuple[list[dict[str, np.ndarray]], float]:
    """One game: (its examples, player 0's return)."""
    state = self.game.new_initial_state()
    for s in self.searches:
      s.reset()
    examples = []
    while not state.is_terminal():
      if state.is_chance_node():
        outcomes, probs = zip(*state.chance_outcomes())
        state.apply_action(int(self.rng.choice(outcomes, p=probs)))
        continue
      search = self.searches[state.current_player()]
      result = search.search(state)
      examples.append(root_example(search, self.net.encoder))
      legal = state.legal_actions()
      if self.rng.random() < self.config.exploration:
        action = int(self.rng.choice(legal))
      else:
        actions = np.asarray(legal)
        probs = np.asarray([max(result.policy.get(a, 0.0), 0.0)
                            for a in legal])
        action = int(self.rng.choice(actions, p=probs / probs.sum())
                     if probs.sum() > 0 else self.rng.choice(actions))
      state.apply_action(action)
      self.moves += 1
    self.games += 1
    return examples, float(state.returns()[0])


def train(selfplay: FogSelfPlay, seconds: float,
          progress: Callable[[dict], None] | None = None,
          snapshot: Callable[[float], None] | None = None,
          snapshot_seconds: float = 0.0, games: int | None = None) -> dict:
  """Self-play and learning for `seconds` (or `games` games, where given:
  a run that repeats from its seed); returns the run's counts.
  `progress(stats)` after each game; `snapshot(elapsed)` every
  `snapshot_seconds` (0: never)."""
  cfg = selfplay.config
  net = selfplay.net
  replay: list[dict[str, np.ndarray]] = []
  start = time.monotonic()
  owed = 0.0
  stats = {"games": 0, "moves": 0, "examples": 0, "steps": 0,
           "value_loss": float("nan"), "policy_loss": float("nan"),
           "learn_seconds": 0.0, "returns": 0.0}
  next_snapshot = snapshot_seconds if snapshot_seconds > 0 else None
  rng = selfplay.rng
  while (time.monotonic() - start < seconds if games is None else
         stats["games"] < games):
    examples, ret = selfplay.play()
    replay.extend(examples)
    del replay[:max(0, len(replay) - cfg.replay_capacity)]
    stats["games"] += 1
    stats["moves"] = selfplay.moves
    stats["examples"] += len(examples)
    stats["returns"] += ret
    owed += cfg.replay_ratio * len(examples) / cfg.batch_size
    begin = time.monotonic()
    while owed >= 1.0 and len(replay) >= cfg.batch_size:
      pick = rng.choice(len(replay), cfg.batch_size, replace=False)
      batch = TokenBatch.stack([replay[i] for i in pick])
      losses = net.train_step(batch)
      stats["value_loss"] = losses.get("value_loss", float("nan"))
      stats["policy_loss"] = losses.get("policy_loss", float("nan"))
      stats["steps"] += 1
      owed -= 1.0
    stats["learn_seconds"] += time.monotonic() - begin
    stats["seconds"] = time.monotonic() - start
    if progress is not None:
      progress(dict(stats))
    if next_snapshot is not None and stats["seconds"] >= next_snapshot:
      snapshot(stats["seconds"])
      next_snapshot += snapshot_seconds
  return stats
