"""The networks' settings: layer widths, losses and optimiser (`NetworkConfig`,
the CVPN's and ISMCTS-BR's value-and-prior network's), and their JSON form
(`settings_to_json`, `settings_from_json`), which checkpoints store.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

OPTIMIZERS = ("adam", "sgd")


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

  def to_json(self) -> dict[str, Any]:
    return settings_to_json(self)

  @classmethod
  def from_json(cls, d: dict[str, Any]) -> "NetworkConfig":
    return settings_from_json(cls, d, "cvpn: unknown network setting(s)")


# The settings fields that hold layer widths (tuples; lists in JSON).
_WIDTHS = ("hidden", "policy_hidden")


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
  for name in _WIDTHS:
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
  for name in _WIDTHS:
    if name in d:
      d[name] = tuple(int(h) for h in d[name])
  config = cls(**d)
  config.validate()
  return config
