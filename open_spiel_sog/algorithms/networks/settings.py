"""The networks' settings: layer widths, losses and optimiser (`NetworkConfig`,
the CVPN's and ISMCTS-BR's value-and-prior network's), and their JSON form
(`settings_to_json`, `settings_from_json`), which checkpoints store.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

OPTIMIZERS = ("adam", "sgd")
# The CVPN's inputs (DESIGN.md sections 7 and 14): "slots" numbers each
# player's private parts by walking the whole public tree (small games);
# "tokens" gives one token per infostate of the public state being valued and
# needs no walk (any game, exact or sampled public states).
INPUTS = ("slots", "tokens")
# What a training run may ask for: an input, or "auto" (the trainer picks
# slots where the game's public tree enumerates within its bound, tokens
# otherwise: `TrainConfig.with_input_resolved`).
INPUT_CHOICES = ("auto",) + INPUTS
# The policy-value network's torso: "mlp" (an MLP per head over the flat
# tensor), "conv" (residual 3x3 convolutions over a [C, H, W] tensor, shared
# by the heads) or "auto" (conv where the game's tensor is [C, H, W]).
TORSOS = ("auto", "mlp", "conv")


@dataclasses.dataclass(frozen=True)
class NetworkConfig:
  """The CVPN and its optimiser (Table S2 names in brackets).

  Attributes:
    hidden: widths of the value MLP's hidden layers.
    policy_hidden: widths of the policy MLP's hidden layers. The policy has
      its own torso: the cross-entropy to mixed targets never falls below
      their entropy, and through a shared torso its gradients swamp the
      value loss (on Leduc queries: 0.10 chips mean value error with a shared
      torso and policy weight 0.1, 0.006 with the value loss alone).
    optimizer: "adam" or "sgd" (SGD with momentum 0.9).
    learning_rate: initial learning rate [alpha_init].
    lr_decay_rate: [d]; the rate is alpha_init * d^(step / lr_decay_steps).
    lr_decay_steps: [T_decay].
    value_weight: weight of the Huber value loss [w_v].
    policy_weight: weight of the policy cross-entropy [w_p].
    huber_delta: the Huber loss's delta (values are in units of the largest
      absolute utility, so 1 is the whole payoff scale).
    prior_temperature: softmax temperature of the prior policy [T_prior].
    weight_decay: L2 penalty on the weights (0 disables it).
    input: the CVPN's input, "slots" or "tokens" (INPUTS; ISMCTS-BR's
      network ignores it); "auto" in a training run's settings, which the
      trainer resolves before it builds a network. With "tokens", `hidden` are the widths of the
      per-history MLP and `policy_hidden` of the per-infostate policy MLP.
    token_width: with input "tokens": the width of each infostate's and the
      public state's embeddings.
    conv_channels: with input "tokens", for games whose tensor is board
      shaped ([C, H, W]): the channels of the 3x3 convolutions that read it
      (an MLP reads the other tensors).
    torso: the policy-value network's torso, one of TORSOS; the network
      records it resolved ("mlp" or "conv"). The CVPNs ignore it.
    res_channels: with torso "conv": the channels of its convolutions
      (16 by default, with `res_blocks` 2: one leaf's host evaluation then
      costs about 2x the MLP's, `policy_value.CONV_HEADS`).
    res_blocks: with torso "conv": its residual blocks after the stem.
  """
  hidden: tuple[int, ...] = (256, 256, 256)
  policy_hidden: tuple[int, ...] = (64, 64)
  optimizer: str = "adam"
  learning_rate: float = 1e-3
  lr_decay_rate: float = 0.5
  lr_decay_steps: int = 20000
  value_weight: float = 1.0
  policy_weight: float = 0.1
  huber_delta: float = 1.0
  prior_temperature: float = 1.0
  weight_decay: float = 0.0
  input: str = "slots"
  token_width: int = 64
  conv_channels: tuple[int, ...] = (32, 32)
  torso: str = "auto"
  res_channels: int = 16
  res_blocks: int = 2

  def validate(self) -> None:
    check_widths(self, "cvpn")
    if self.optimizer not in OPTIMIZERS:
      raise ValueError(f"cvpn: unknown optimizer {self.optimizer!r}; "
                       f"supported: {', '.join(map(repr, OPTIMIZERS))}")
    if not self.learning_rate > 0:
      raise ValueError(f"cvpn: learning_rate must be > 0, got "
                       f"{self.learning_rate}")
    if not 0 < self.lr_decay_rate <= 1:
      raise ValueError(f"cvpn: lr_decay_rate must be in (0, 1], got "
                       f"{self.lr_decay_rate}")
    if self.lr_decay_steps < 1:
      raise ValueError(f"cvpn: lr_decay_steps must be >= 1, got "
                       f"{self.lr_decay_steps}")
    if self.value_weight < 0 or self.policy_weight < 0:
      raise ValueError("cvpn: loss weights must be >= 0")
    if not self.huber_delta > 0 or not self.prior_temperature > 0:
      raise ValueError("cvpn: huber_delta and prior_temperature must be > 0")
    if self.weight_decay < 0:
      raise ValueError("cvpn: weight_decay must be >= 0")
    if self.input not in INPUT_CHOICES:
      raise ValueError(f"cvpn: unknown input {self.input!r}; supported: "
                       f"{', '.join(map(repr, INPUT_CHOICES))}")
    if self.token_width < 1 or any(int(c) < 1 for c in self.conv_channels):
      raise ValueError("cvpn: token_width and conv_channels must be "
                       f"positive, got {self.token_width} and "
                       f"{self.conv_channels}")
    if self.torso not in TORSOS:
      raise ValueError(f"policy-value network: unknown torso {self.torso!r}; "
                       f"supported: {', '.join(map(repr, TORSOS))}")
    if self.res_channels < 1 or self.res_blocks < 0:
      raise ValueError("policy-value network: res_channels must be >= 1 and "
                       f"res_blocks >= 0, got {self.res_channels} and "
                       f"{self.res_blocks}")

  def to_json(self) -> dict[str, Any]:
    return settings_to_json(self)

  @classmethod
  def from_json(cls, d: dict[str, Any]) -> "NetworkConfig":
    # (Settings stored before `torso` existed are an MLP's.)
    return settings_from_json(cls, {"torso": "mlp", **d},
                              "cvpn: unknown network setting(s)")


# The settings fields that hold layer widths (tuples; lists in JSON).
_WIDTHS = ("hidden", "policy_hidden")
# Tuples that JSON stores as lists (the widths, and these).
_TUPLES = _WIDTHS + ("conv_channels",)


def check_widths(settings, prefix: str) -> None:
  """Raises ValueError("`prefix`: ...") unless each of `settings`' layer
  widths (`hidden`, `policy_hidden`) is a non-empty list of positive
  widths."""
  for name in _WIDTHS:
    widths = getattr(settings, name)
    if not widths or any(int(h) < 1 for h in widths):
      raise ValueError(f"{prefix}: {name} must be positive widths, got "
                       f"{widths}")


def settings_to_json(settings) -> dict[str, Any]:
  """A settings dataclass as JSON (layer widths as lists)."""
  d = dataclasses.asdict(settings)
  for name in _TUPLES:
    if name in d:
      d[name] = list(d[name])
  return d


def settings_from_json(cls, d: Mapping[str, Any], unknown_message: str):
  """The validated settings dataclass `cls` from `settings_to_json`'s
  output; unknown keys raise ValueError(`unknown_message` ...)."""
  fields = {f.name for f in dataclasses.fields(cls)}
  unknown = sorted(set(d) - fields)
  if unknown:
    raise ValueError(f"{unknown_message} {unknown}; supported: "
                     f"{sorted(fields)}")
  d = dict(d)
  for name in _TUPLES:
    if name in d:
      d[name] = tuple(int(h) for h in d[name])
  config = cls(**d)
  config.validate()
  return config
