"""ISMCTS-BR's value-and-prior network (`ValuePriorNet`): the
`networks.TwoHeadedMLP` over the responder's information state tensor and
seat, its losses, training steps, inference and checkpoints.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel

from open_spiel_sog.algorithms.networks import CheckpointedNetwork
from open_spiel_sog.algorithms.networks import NetworkConfig
from open_spiel_sog.algorithms.networks import TwoHeadedMLP
from open_spiel_sog.algorithms.networks import cross_entropy
from open_spiel_sog.algorithms.networks import padded_predict

VALUE_PRIOR_FORMAT = "open_spiel_sog.value_prior/1"


class ValuePriorNet(CheckpointedNetwork):
  """The value-and-prior network of ISMCTS-BR (`ISMCTSBR`).

  One network serves both seats of a two-player game: its input is the
  responder's `information_state_tensor(seat)` followed by a one-hot of the
  seat. Two MLP torsos (`NetworkConfig.hidden` for the value,
  `policy_hidden` for the prior, as in the CVPN) give a scalar value and
  logits over `game.num_distinct_actions()`, masked to the legal actions.

  Values are learned in units of the game's largest absolute utility
  (`utility_scale`), so targets lie in [-1, 1]; `train_step` takes and
  `predict` returns them in the game's own utility units. Loss:
  value_weight * MSE(value, Monte Carlo return; over the examples whose
  `value_mask` is 1) + policy_weight *
  cross-entropy(visit-count policy, prior) + weight_decay * L2. Inference is
  jitted and padded to power-of-two buckets (one compile per bucket).
  `NetworkConfig.huber_delta` is not used (the value loss is the MSE).
  """

  FORMAT = VALUE_PRIOR_FORMAT
  KIND = "value-prior"

  MAX_BUCKET = 4096

  def __init__(self, game: pyspiel.Game | str,
               config: NetworkConfig | None = None):
    import jax.numpy as jnp  # pylint: disable=g-import-not-at-top

    if isinstance(game, str):
      game = pyspiel.load_game(game)
    game_type = game.get_type()
    if game.num_players() != 2:
      raise ValueError(f"value-prior network: {game_type.short_name} has "
                       f"{game.num_players()} players, not 2")
    if not game_type.provides_information_state_tensor:
      raise ValueError(f"value-prior network: {game_type.short_name} does not "
                       "provide information_state_tensor, its input")
    self.game = game
    self.config = config or NetworkConfig()
    self.config.validate()
    self.tensor_size = int(game.information_state_tensor_size())
    self.input_size = self.tensor_size + 2
    self.num_actions = int(game.num_distinct_actions())
    self.utility_scale = float(max(abs(game.max_utility()),
                                   abs(game.min_utility()))) or 1.0

    def terms(value, logits, batch):
      vmask = batch["value_mask"]
      value_loss = (jnp.sum(jnp.square(value - batch["value_target"]) * vmask)
                    / jnp.maximum(jnp.sum(vmask), 1.0))
      ce = cross_entropy(logits, batch["legal"], batch["policy_target"])
      return value_loss, jnp.mean(ce)

    # A scalar value and logits [num_actions] per example.
    self._network = TwoHeadedMLP(self.config, self.input_size, (),
                                 (self.num_actions,), terms)
    self._update = self._network.update
    self._loss = self._network.loss
    self._predict = self._network.predict
    self.params = None
    self.opt_state = None
    self.step = 0
    self.metadata: dict[str, Any] = {}

  # --- Encoding --------------------------------------------------------------

  def features(self, state: pyspiel.State, seat: int) -> np.ndarray:
    """[input_size] float32: `seat`'s infostate tensor, then a seat one-hot."""
    x = np.zeros(self.input_size, dtype=np.float32)
    x[:self.tensor_size] = state.information_state_tensor(seat)
    x[self.tensor_size + seat] = 1.0
    return x

  def legal_mask(self, state: pyspiel.State) -> np.ndarray:
    """[num_actions] float32, 1 on the acting player's legal actions."""
    mask = np.zeros(self.num_actions, dtype=np.float32)
    mask[state.legal_actions()] = 1.0
    return mask

  # --- Parameters ------------------------------------------------------------

  def init(self, seed: int = 0) -> None:
    self.params, self.opt_state = self._network.init(seed)
    self.step = 0

  def _check_params(self) -> None:
    if self.params is None:
      raise ValueError("value-prior network: parameters are not initialised "
                       "(call init or load a checkpoint)")

  def _batch(self, inputs, legal, value_target, policy_target, value_mask):
    inputs = np.asarray(inputs, dtype=np.float32)
    n = inputs.shape[0] if inputs.ndim == 2 else -1
    shapes = {"inputs": (inputs.shape, (n, self.input_size)),
              "legal": (np.shape(legal), (n, self.num_actions)),
              "value_target": (np.shape(value_target), (n,)),
              "policy_target": (np.shape(policy_target),
                                (n, self.num_actions))}
    if value_mask is None:
      value_mask = np.ones(max(n, 0), dtype=np.float32)
    shapes["value_mask"] = (np.shape(value_mask), (n,))
    for name, (got, want) in shapes.items():
      if n < 1 or tuple(got) != want:
        raise ValueError(f"value-prior network: {name} has shape {got}, "
                         f"expected {want} (B examples, B >= 1)")
    return {"inputs": inputs,
            "legal": np.asarray(legal, dtype=np.float32),
            "value_target": (np.asarray(value_target, dtype=np.float32) /
                             self.utility_scale),
            "policy_target": np.asarray(policy_target, dtype=np.float32),
            "value_mask": np.asarray(value_mask, dtype=np.float32)}

  # --- Training --------------------------------------------------------------

  def train_step(self, inputs: np.ndarray, legal: np.ndarray,
                 value_target: np.ndarray, policy_target: np.ndarray,
                 value_mask: np.ndarray | None = None) -> dict[str, float]:
    """One optimiser step; returns the losses before it.

    Args:
      inputs: [B, input_size] from `features`.
      legal: [B, num_actions] legal-action masks.
      value_target: [B] returns in the game's utility units.
      policy_target: [B, num_actions] target policies (visit counts).
      value_mask: [B] 1 where the value target counts (default: all).
    """
    self._check_params()
    batch = self._batch(inputs, legal, value_target, policy_target,
                        value_mask)
    self.params, self.opt_state, metrics = self._update(
        self.params, self.opt_state, batch)
    self.step += 1
    return {k: float(v) for k, v in metrics.items()}

  def loss(self, inputs, legal, value_target, policy_target, value_mask=None
           ) -> dict[str, float]:
    """The losses on a batch (as `train_step` takes it), without a step."""
    self._check_params()
    _, metrics = self._loss(self.params, self._batch(
        inputs, legal, value_target, policy_target, value_mask))
    return {k: float(v) for k, v in metrics.items()}

  # --- Inference -------------------------------------------------------------

  def predict(self, inputs: np.ndarray, legal: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """(values [B] in the game's utility units, prior [B, num_actions])."""
    self._check_params()
    values, prior = padded_predict(
        self._predict, self.params, np.asarray(inputs, dtype=np.float32),
        np.asarray(legal, dtype=np.float32), self.MAX_BUCKET)
    return (values.astype(np.float64) * self.utility_scale,
            prior.astype(np.float64))

  # --- Checkpoints -----------------------------------------------------------

  def spec(self) -> dict[str, Any]:
    """What a checkpoint must agree with to be used for this game."""
    return {"input_size": self.input_size, "num_actions": self.num_actions,
            "utility_scale": self.utility_scale}
