"""The CVPN by its input (`NetworkConfig.input`): "slots" (`Encoder`,
`CVPN`, `CVPNValueFunction`) or "tokens" (`TokenEncoder`, `TokenCVPN`,
`TokenValueFunction`). Training and the bot build networks and batches
through these functions, whichever input a run or checkpoint uses (value
functions: `value_function.value_function_for`).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from open_spiel_sog.algorithms.networks import NetworkConfig
from open_spiel_sog.algorithms.networks.settings import INPUTS
from open_spiel_sog.algorithms.sog.cvpn.encoder import Batch
from open_spiel_sog.algorithms.sog.cvpn.encoder import Encoder
from open_spiel_sog.algorithms.sog.cvpn.network import CVPN
from open_spiel_sog.algorithms.sog.cvpn.token_network import TokenCVPN
from open_spiel_sog.algorithms.sog.cvpn.tokens import TokenBatch
from open_spiel_sog.algorithms.sog.cvpn.tokens import TokenEncoder
from open_spiel_sog.public_state import PublicStateObserver


def make_encoder(observer: PublicStateObserver, config: NetworkConfig):
  """The encoder of `config.input` for `observer`'s game (slots walk the
  whole public tree; tokens walk nothing)."""
  if config.input not in INPUTS:
    raise ValueError(f"cvpn: a network is built for input 'slots' or "
                     f"'tokens', not {config.input!r} (a training run "
                     "resolves 'auto': TrainConfig.with_input_resolved)")
  if config.input == "tokens":
    return TokenEncoder(observer)
  return Encoder(observer)


def make_network(observer: PublicStateObserver, config: NetworkConfig,
                 encoder=None):
  """A network (without parameters) of `config` for `observer`'s game."""
  encoder = encoder or make_encoder(observer, config)
  if config.input == "tokens":
    return TokenCVPN(encoder, config)
  return CVPN(encoder, config)


def batch_from_dict(arrays: dict[str, np.ndarray]):
  """A batch from its `as_dict` form, either input."""
  if "tokens" in arrays:
    return TokenBatch.from_dict(arrays)
  return Batch.from_dict(arrays)


def concatenate(batches: Sequence[Any]):
  """The examples of `batches` (all of one input) as one batch."""
  if batches and isinstance(batches[0], TokenBatch):
    return TokenBatch.concatenate(batches)
  return Batch.concatenate(batches)
