"""ISMCTS-BR's settings (`ISMCTSBRConfig`): search, network and training."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping

from open_spiel_sog.algorithms.networks import NetworkConfig
from open_spiel_sog.algorithms.networks import check_widths
from open_spiel_sog.algorithms.networks import settings_from_json
from open_spiel_sog.algorithms.networks import settings_to_json


@dataclasses.dataclass(frozen=True)
class ISMCTSBRConfig:
  """ISMCTS-BR's search, network and training settings.

  Attributes:
    simulations: search simulations per decision (training and evaluation).
    c_puct: PUCT exploration constant (Q is normalised to [0, 1]).
    dirichlet_alpha: concentration of the root Dirichlet noise (training).
    dirichlet_fraction: weight of that noise in the root prior (0 disables).
    temperature: training episodes sample the responder's first
      `temperature_moves` moves from visits^(1 / temperature) (0: greedy).
    temperature_moves: responder moves per episode played at `temperature`;
      later ones are greedy.
    epsilon: training episodes play a uniformly random legal action with
      this probability at each responder move (after the temperature moves
      too).
    off_policy_mask: a return measures the greedy policy only if every move
      after a decision was greedy: when a training move is not the most
      visited action, drop the value targets of that decision and the
      episode's earlier ones (their prior targets are kept).
    tree_value_targets: also train the value of every non-root responder
      infostate of a training search that at least this many simulations
      passed through, towards its mean backed-up return in that search
      (0 disables it). Searches reach rarely played infostates (a call that
      greedy play folds) far more often than games do, and their means
      average over many sampled histories.
    hidden: widths of the value torso's hidden layers.
    policy_hidden: widths of the prior torso's hidden layers.
    learning_rate: Adam's learning rate.
    weight_decay: L2 penalty on the weights (0 disables it).
    value_weight: weight of the value MSE.
    policy_weight: weight of the prior cross-entropy.
    batch_size: examples per update.
    replay_size: examples kept in the sliding replay buffer.
    updates_per_game: optimiser steps after each training game (once the
      buffer holds a batch).
    games: training games (`train` with no argument).
    seed: seed of the network initialisation, searches and games.
  """
  simulations: int = 200
  c_puct: float = 1.0
  dirichlet_alpha: float = 1.0
  dirichlet_fraction: float = 0.25
  temperature: float = 1.0
  temperature_moves: int = 0
  epsilon: float = 0.1
  off_policy_mask: bool = True
  tree_value_targets: int = 10
  hidden: tuple[int, ...] = (64, 64)
  policy_hidden: tuple[int, ...] = (64,)
  learning_rate: float = 3e-3
  weight_decay: float = 0.0
  value_weight: float = 1.0
  policy_weight: float = 1.0
  batch_size: int = 64
  replay_size: int = 10_000
  updates_per_game: int = 2
  games: int = 1000
  seed: int = 0

  def validate(self) -> None:
    positive_ints = ("simulations", "batch_size", "replay_size")
    for name in positive_ints:
      if int(getattr(self, name)) < 1:
        raise ValueError(f"ismcts_br: {name} must be >= 1, got "
                         f"{getattr(self, name)}")
    for name in ("temperature_moves", "updates_per_game", "games",
                 "tree_value_targets"):
      if int(getattr(self, name)) < 0:
        raise ValueError(f"ismcts_br: {name} must be >= 0, got "
                         f"{getattr(self, name)}")
    for name in ("c_puct", "temperature", "weight_decay", "value_weight",
                 "policy_weight"):
      value = getattr(self, name)
      if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"ismcts_br: {name} must be a finite number >= 0, "
                         f"got {value}")
    if not 0 <= self.epsilon <= 1:
      raise ValueError(f"ismcts_br: epsilon must be in [0, 1], got "
                       f"{self.epsilon}")
    if not self.dirichlet_alpha > 0:
      raise ValueError(f"ismcts_br: dirichlet_alpha must be > 0, got "
                       f"{self.dirichlet_alpha}")
    if not 0 <= self.dirichlet_fraction <= 1:
      raise ValueError(f"ismcts_br: dirichlet_fraction must be in [0, 1], "
                       f"got {self.dirichlet_fraction}")
    if not self.learning_rate > 0:
      raise ValueError(f"ismcts_br: learning_rate must be > 0, got "
                       f"{self.learning_rate}")
    if self.batch_size > self.replay_size:
      raise ValueError(f"ismcts_br: batch_size ({self.batch_size}) must be "
                       f"<= replay_size ({self.replay_size})")
    check_widths(self, "ismcts_br")

  def network(self) -> NetworkConfig:
    """The network settings these settings imply."""
    return NetworkConfig(
        hidden=tuple(int(h) for h in self.hidden),
        policy_hidden=tuple(int(h) for h in self.policy_hidden),
        learning_rate=self.learning_rate, value_weight=self.value_weight,
        policy_weight=self.policy_weight, weight_decay=self.weight_decay)

  def to_json(self) -> dict[str, Any]:
    return settings_to_json(self)

  @classmethod
  def from_json(cls, d: Mapping[str, Any]) -> "ISMCTSBRConfig":
    return settings_from_json(cls, d, "ismcts_br: unknown setting(s)")
