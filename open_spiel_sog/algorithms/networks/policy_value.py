"""The policy-value network of perfect-information games (`PolicyValueNet`):
AlphaZero's network as SoG's Go setting trains it (DESIGN.md section 17),
a `TwoHeadedMLP` over the acting player's observation tensor (its torso
"mlp", or "conv": residual convolutions over a [C, H, W] tensor), with its
losses, training step, host inference and checkpoints.

The native engine (`algorithms/sog/engine.py`) hands it the tree's new
leaves in batches: their values replace rollouts and their priors become
PUCT's. `evaluate` runs on the host in numpy (a batch of one leaf takes
microseconds, where a jitted call takes tens of them).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import numpy as np
import pyspiel

from open_spiel_sog.algorithms.networks.checkpoints import CheckpointedNetwork
from open_spiel_sog.algorithms.networks.checkpoints import CheckpointError
from open_spiel_sog.algorithms.networks.mlp import cross_entropy
from open_spiel_sog.algorithms.networks.mlp import TwoHeadedMLP
from open_spiel_sog.algorithms.networks.settings import NetworkConfig

POLICY_VALUE_FORMAT = "open_spiel_sog.policy_value/1"


# A conv torso's heads where no widths are given (train.py): AlphaZero's,
# one hidden layer for the value and a small one for the policy over the
# torso's HEAD_CHANNELS planes. With NetworkConfig's 16 channels and 2
# blocks, one leaf's host evaluation costs 2.0x the MLP's on connect_four
# and 1.9x on othello (benchmarks/policy_value_inference.py), where 32
# channels, 3 blocks and the MLP's heads cost 4.4x.
CONV_HEADS = {"hidden": (256,), "policy_hidden": (64,)}


def default_config() -> NetworkConfig:
  """The perfect_information recipe's network: the settings of the shipped
  connect_four network, an MLP. (The conv torso, `torso="auto"` or
  `"conv"`, costs 2x the MLP's host time for one leaf, and on connect_four
  at 30 minutes on 2 cores it scored 0.25 against mcts where the MLP
  scored 0.65: docs/training.md.)"""
  return NetworkConfig(hidden=(256, 256, 256), policy_hidden=(256, 256),
                       learning_rate=1e-3, lr_decay_rate=0.5,
                       lr_decay_steps=100_000, value_weight=1.0,
                       policy_weight=1.0, weight_decay=1e-5, torso="mlp")


def perfect_information_reason(game: pyspiel.Game) -> str | None:
  """Why a policy-value network cannot serve `game` (None: it can)."""
  game_type = game.get_type()
  if game.num_players() != 2:
    return f"{game_type.short_name} has {game.num_players()} players, not 2"
  if game_type.information != pyspiel.GameType.Information.PERFECT_INFORMATION:
    return (f"{game_type.short_name} is not a perfect-information game (its "
            "networks are CVPNs: examples/train.py)")
  if game_type.utility != pyspiel.GameType.Utility.ZERO_SUM:
    return f"{game_type.short_name} is not zero-sum"
  if not game_type.provides_observation_tensor:
    return (f"{game_type.short_name} does not provide observation_tensor, "
            "the network's input")
  return None


def resolve_torso(game: pyspiel.Game, torso: str) -> str:
  """`torso` ("auto", "mlp" or "conv") for `game`: "auto" is "conv" where
  its observation tensor is [C, H, W], "mlp" otherwise. ValueError where
  "conv" has no [C, H, W] tensor to read."""
  shape = game.observation_tensor_shape()
  if torso == "auto":
    return "conv" if len(shape) == 3 else "mlp"
  if torso == "conv" and len(shape) != 3:
    raise ValueError(f"policy-value network: torso 'conv' reads a [C, H, W] "
                     f"observation tensor; {game} has shape {shape}")
  return torso


class PolicyValueNet(CheckpointedNetwork):
  """A value head (tanh, the acting player's return over the game's largest
  absolute utility) and a policy head (logits over
  `game.num_distinct_actions()`, masked to the legal actions), each an MLP
  over `observation_tensor(acting player)` (torso "mlp") or over a residual
  convolutional torso the heads share (torso "conv", `mlp.residual_torso`).
  `config.torso` "auto" is resolved at construction (`resolve_torso`), so
  `config` and checkpoints name the torso built.

  Loss: value_weight * MSE(value, target) + policy_weight *
  cross-entropy(policy target, prior) + weight_decay * L2.
  """

  FORMAT = POLICY_VALUE_FORMAT
  KIND = "policy-value"

  def __init__(self, game: pyspiel.Game | str,
               config: NetworkConfig | None = None):
    import jax.numpy as jnp  # pylint: disable=g-import-not-at-top

    if isinstance(game, str):
      game = pyspiel.load_game(game)
    reason = perfect_information_reason(game)
    if reason is not None:
      raise ValueError(f"policy-value network: {reason}")
    self.game = game
    config = config or default_config()
    config.validate()
    self.config = dataclasses.replace(
        config, torso=resolve_torso(game, config.torso))
    # (C, H, W) of the conv torso's boards; None for the MLP.
    self.board = (tuple(game.observation_tensor_shape())
                  if self.config.torso == "conv" else None)
    self.input_size = int(game.observation_tensor_size())
    self.num_actions = int(game.num_distinct_actions())
    self.utility_scale = float(max(abs(game.max_utility()),
                                   abs(game.min_utility()))) or 1.0

    def terms(value, logits, batch):
      value_loss = jnp.mean(jnp.square(jnp.tanh(value) -
                                       batch["value_target"]))
      ce = cross_entropy(logits, batch["legal"], batch["policy_target"])
      weight = batch["policy_mask"]
      return value_loss, (jnp.sum(ce * weight) /
                          jnp.maximum(jnp.sum(weight), 1.0))

    self._network = TwoHeadedMLP(self.config, self.input_size, (),
                                 (self.num_actions,), terms, self.board)
    self.params = None
    self.opt_state = None
    self.step = 0
    self.metadata: dict[str, Any] = {}
    self._host: dict[str, list[tuple[np.ndarray, np.ndarray]]] | None = None

  def init(self, seed: int = 0) -> None:
    self.params, self.opt_state = self._network.init(seed)
    self.step = 0
    self._host = None

  def init_from(self, params, opt_state) -> None:
    super().init_from(params, opt_state)
    self._host = None

  def _check_params(self) -> None:
    if self.params is None:
      raise ValueError("policy-value network: parameters are not initialised "
                       "(call init or load a checkpoint)")

  # --- Training --------------------------------------------------------------

  def set_params(self, params) -> None:
    """Replaces the parameters (the training workers get the learner's)."""
    self.params = params
    self._host = None

  def param_shapes(self):
    """The parameter tree's shapes and dtypes, computed without
    initialising anything (a template for the workers' `unflatten`)."""
    return self._network.param_shapes()

  def train_step_async(self, batch) -> dict[str, Any]:
    """One optimiser step on `batch` (a batch of named arrays: the fields
    of `train_step`); its losses are JAX arrays, read when converted (the
    pipeline's learner reads them every few steps)."""
    self._check_params()
    arrays = batch.arrays if hasattr(batch, "arrays") else batch
    return self._update(arrays["inputs"], arrays["legal"],
                        arrays["value_target"], arrays["policy_target"],
                        arrays["policy_mask"])

  def train_step(self, inputs: np.ndarray, legal: np.ndarray,
                 value_target: np.ndarray, policy_target: np.ndarray,
                 policy_mask: np.ndarray) -> dict[str, float]:
    """One optimiser step on a batch; returns its losses before the step.

    Args:
      inputs: [B, input_size] observation tensors of the acting player.
      legal: [B, num_actions] legal-action masks.
      value_target: [B] the acting player's return, in utility units.
      policy_target: [B, num_actions] target policies.
      policy_mask: [B] 1 where the policy target counts (playout-cap
        randomisation's cheap searches give none).
    """
    self._check_params()
    return {k: float(v) for k, v in self._update(
        inputs, legal, value_target, policy_target, policy_mask).items()}

  def _update(self, inputs, legal, value_target, policy_target, policy_mask):
    n = len(inputs)
    batch = {"inputs": np.asarray(inputs, np.float32),
             "legal": np.asarray(legal, np.float32),
             "value_target": (np.asarray(value_target, np.float32) /
                              self.utility_scale),
             "policy_target": np.asarray(policy_target, np.float32),
             "policy_mask": np.asarray(policy_mask, np.float32)}
    for name, want in (("inputs", (n, self.input_size)),
                       ("legal", (n, self.num_actions)),
                       ("value_target", (n,)),
                       ("policy_target", (n, self.num_actions)),
                       ("policy_mask", (n,))):
      if batch[name].shape != want:
        raise ValueError(f"policy-value network: {name} has shape "
                         f"{batch[name].shape}, expected {want}")
    self.params, self.opt_state, metrics = self._network.update(
        self.params, self.opt_state, batch)
    self.step += 1
    self._host = None
    return metrics

  # --- Inference -------------------------------------------------------------

  def _host_layers(self):
    """{part: [(w, b)]} of `TwoHeadedMLP.layers`, a convolution's w as
    [kh * kw * C_in, C_out] (the rows of its patches, `_host_torso`)."""
    if self._host is None:
      self._check_params()
      self._host = {}
      for part, names in self._network.layers.items():
        self._host[part] = []
        for name in names:
          w = np.asarray(self.params[name]["w"], np.float32)
          self._host[part].append((w.reshape(-1, w.shape[-1]), np.asarray(
              self.params[name]["b"], np.float32)))
      if "reduce" in self._host:  # (the two heads' 1x1 convolutions, joined)
        (wv, bv), (wp, bp) = self._host["reduce"]
        self._host["reduce_both"] = [(np.concatenate([wv, wp], axis=1),
                                      np.concatenate([bv, bp]))]
    return self._host

  def _host_torso(self, x: np.ndarray, layers
                  ) -> tuple[np.ndarray, np.ndarray]:
    """`mlp.residual_torso` in numpy: each 3x3 convolution one matmul of
    its 3x3 patches (im2col, `_patch_index`), each board's cells followed
    by one zero cell that the patches' taps off the board read. The
    patches and activations are written in place (`out=`), so a batch-1
    call costs the matmuls and a few small ops a convolution."""
    n = len(x)
    channels, height, width = self.board
    cells = height * width
    index = _patch_index(height, width)

    def conv(h, w, b, skip=None):  # h: [n, cells + 1, C_in], h[:, -1] = 0
      patches = np.take(h, index, axis=1, mode="clip")  # [n, cells, 9, C]
      out = np.empty((n, cells + 1, w.shape[1]), np.float32)
      out[:, cells] = 0.0
      y = out[:, :cells]
      np.matmul(patches.reshape(n, cells, -1), w, out=y)
      y += b
      if skip is not None:
        y += skip[:, :cells]
      np.maximum(y, 0.0, out=y)
      return out

    h = np.empty((n, cells + 1, channels), np.float32)
    h[:, cells] = 0.0
    h[:, :cells] = x.reshape(n, channels, cells).transpose(0, 2, 1)
    stem, *blocks = layers["conv"]
    h = conv(h, *stem)
    for i in range(0, len(blocks), 2):
      h = conv(conv(h, *blocks[i]), *blocks[i + 1], skip=h)
    # (Both heads' 1x1 convolutions in one matmul, then split.)
    (w, b), = layers["reduce_both"]
    both = np.maximum(h[:, :cells] @ w + b, 0.0)
    split = w.shape[1] // 2
    return (both[:, :, :split].reshape(n, -1),
            both[:, :, split:].reshape(n, -1))

  def evaluate(self, inputs: np.ndarray, legal: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """(values [B]: the acting player's return in utility units; priors
    [B, num_actions] over the legal actions), in numpy on the host."""
    layers = self._host_layers()
    x = np.asarray(inputs, np.float32)
    heads_in = (x, x) if self.board is None else self._host_torso(x, layers)
    outs = []
    for head, h in zip(("value", "policy"), heads_in):
      *torso, (w_out, b_out) = layers[head]
      for w, b in torso:
        h = np.maximum(h @ w + b, 0.0)
      outs.append(h @ w_out + b_out)
    values = np.tanh(outs[0][:, 0]).astype(np.float64) * self.utility_scale
    logits = np.where(legal > 0, outs[1], -np.inf)
    logits -= logits.max(axis=1, keepdims=True)
    priors = np.exp(logits)
    priors /= priors.sum(axis=1, keepdims=True)
    return values, priors.astype(np.float64)

  def evaluate_states(self, states: list[pyspiel.State]
                      ) -> tuple[np.ndarray, np.ndarray]:
    """`evaluate` of decision states (each from its acting player's view)."""
    inputs = np.zeros((len(states), self.input_size), np.float32)
    legal = np.zeros((len(states), self.num_actions), np.float32)
    for i, s in enumerate(states):
      inputs[i] = s.observation_tensor(s.current_player())
      legal[i, s.legal_actions()] = 1.0
    return self.evaluate(inputs, legal)

  # --- Checkpoints -----------------------------------------------------------

  def spec(self) -> dict[str, Any]:
    """What a checkpoint must agree with to be used for this game."""
    return {"input_size": self.input_size, "num_actions": self.num_actions,
            "utility_scale": self.utility_scale}


@functools.lru_cache(maxsize=None)
def _patch_index(height: int, width: int) -> np.ndarray:
  """[H * W, 9]: for each cell (row-major), the cells of its 3x3 patch in
  the order of a Haiku kernel's (row offset, column offset), cell H * W
  (a zero) where the patch leaves the board."""
  rows, cols = np.divmod(np.arange(height * width), width)
  dr, dc = np.divmod(np.arange(9), 3)
  r = rows[:, None] + dr - 1
  c = cols[:, None] + dc - 1
  inside = (r >= 0) & (r < height) & (c >= 0) & (c < width)
  return np.where(inside, r * width + c, height * width)


def is_policy_value_checkpoint(path: str) -> bool:
  """Whether `path` is a readable policy-value checkpoint (not a CVPN's)."""
  try:
    meta, _ = PolicyValueNet.read(path)
  except CheckpointError:
    return False
  return meta.get("format") == POLICY_VALUE_FORMAT


_SHARED: dict[tuple, PolicyValueNet] = {}


def shared_network(path: str, game: pyspiel.Game) -> PolicyValueNet:
  """The network at `path` for `game`, loaded once per file version and
  shared read-only by the process's bots."""
  import os  # pylint: disable=g-import-not-at-top
  key = (os.path.abspath(path), os.stat(path).st_mtime_ns, str(game))
  if key not in _SHARED:
    _SHARED[key] = PolicyValueNet.load(path, game)
  return _SHARED[key]
