"""The CVPN's checkpoints: writing, reading and loading them, and averaging
the parameters of several (`average_checkpoints`). The file is the networks'
.npz (`networks.write_npz`) in format CHECKPOINT_FORMAT; its metadata holds
the game, the step, the network settings, the encoder's spec (what the
inputs and outputs must agree with) and the caller's `extra`.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pyspiel

from open_spiel_sog.algorithms.networks import CheckpointError
from open_spiel_sog.algorithms.networks import NetworkConfig
from open_spiel_sog.algorithms.networks import read_npz
from open_spiel_sog.algorithms.networks import same_game
from open_spiel_sog.algorithms.networks import unflatten
from open_spiel_sog.algorithms.networks import write_npz
from open_spiel_sog.algorithms.sog.cvpn.factory import make_encoder
from open_spiel_sog.algorithms.sog.cvpn.factory import make_network
from open_spiel_sog.algorithms.sog.cvpn.network import CVPN
from open_spiel_sog.algorithms.sog.cvpn.token_network import TokenCVPN
from open_spiel_sog.public_state import PublicStateObserver

CHECKPOINT_FORMAT = "open_spiel_sog.cvpn/1"


def save_checkpoint(path: str, net: CVPN, *, game: pyspiel.Game | str,
                    extra: dict[str, Any] | None = None,
                    include_optimizer: bool = True) -> None:
  """Writes params, optimiser state, step, network config, game string and
  `extra` (e.g. the training config) to `path` (.npz), atomically."""
  if net.params is None:
    raise ValueError("cvpn: nothing to save, the network has no parameters")
  if isinstance(game, str):
    game = pyspiel.load_game(game)
  include_optimizer = include_optimizer and net.opt_state is not None
  meta = {"format": CHECKPOINT_FORMAT, "game": str(game), "step": net.step,
          "network": net.config.to_json(), "spec": net.encoder.spec(),
          "extra": extra or {}, "has_optimizer": bool(include_optimizer)}
  write_npz(path, meta, net.params,
            net.opt_state if include_optimizer else None)


def read_checkpoint(path: str) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
  """(metadata, arrays) of a checkpoint file, with clear errors."""
  return read_npz(path, CHECKPOINT_FORMAT, "cvpn")


def load_checkpoint(path: str, game: pyspiel.Game | str,
                    encoder=None) -> CVPN:
  """The network stored at `path` (a `CVPN` or a `TokenCVPN`, as its
  settings' input says), checked against `game`."""
  meta, arrays = read_checkpoint(path)
  game = pyspiel.load_game(game) if isinstance(game, str) else game
  if not same_game(meta["game"], game):
    raise CheckpointError(
        f"checkpoint {path!r} was trained for {meta['game']}, not {game}")
  try:
    config = NetworkConfig.from_json(meta["network"])
  except (ValueError, TypeError) as e:
    raise CheckpointError(f"{path!r}: bad network settings: {e}") from None
  if encoder is not None and getattr(encoder, "input", "slots") != (
      config.input):
    raise CheckpointError(f"checkpoint {path!r} has the {config.input} "
                          f"input, not the {getattr(encoder, 'input', 'slots')}"
                          " input asked for")
  if encoder is None:
    observer = PublicStateObserver(game)
    try:
      encoder = make_encoder(observer, config)
    except ValueError as e:
      raise CheckpointError(f"{path!r}: {e}") from None
    # The slots were read off the whole public tree (8,193 public states in
    # liars_dice): the network's own observer keeps only the root, or a
    # network shared for the process's life would keep the tree with it.
    observer.restart()
  if meta["spec"] != encoder.spec():
    raise CheckpointError(f"checkpoint {path!r} expects inputs/outputs "
                          f"{meta['spec']}, {game} has {encoder.spec()}")
  net = make_network(encoder.observer, config, encoder)
  if isinstance(net, TokenCVPN):
    # The parameters' shapes, not their values: initialising the token
    # network takes seconds of compilation (the slot network's init is
    # kept as it was).
    net.params = unflatten(net.param_shapes(), arrays, "params", path)
    if meta.get("has_optimizer"):
      net.opt_state = unflatten(net.opt_state_shapes(), arrays, "opt_state",
                                path)
  else:
    net.init(0)
    net.params = unflatten(net.params, arrays, "params", path)
    if meta.get("has_optimizer"):
      net.opt_state = unflatten(net.opt_state, arrays, "opt_state", path)
  net.step = int(meta["step"])
  net.metadata = meta
  return net


def average_checkpoints(paths: Sequence[str],
                        game: pyspiel.Game | str | None = None) -> CVPN:
  """The network whose parameters are the mean of the checkpoints' parameters.

  Stochastic weight averaging (Izmailov et al., 2018) over the periodic
  checkpoints of one run (`train.py --keep_checkpoints`): averaging the
  iterates of the last part of training smooths out the noise of the
  minibatch updates. All checkpoints must be for the same game (`game`, if
  given) and have the same network settings. The result carries no optimiser
  state (it is for inference, not for resuming); its step is the last one
  and its metadata lists the averaged steps.
  """
  if not paths:
    raise CheckpointError("average_checkpoints: no checkpoints given")
  import jax  # pylint: disable=g-import-not-at-top
  metas = [read_checkpoint(p)[0] for p in paths]
  if game is None:
    game = metas[0]["game"]
  nets = []
  for path, meta in zip(paths, metas):
    if meta["network"] != metas[0]["network"]:
      raise CheckpointError(
          f"cannot average {path!r} with {paths[0]!r}: network settings "
          f"{meta['network']} differ from {metas[0]['network']}")
    nets.append(load_checkpoint(path, game))
  order = sorted(range(len(nets)), key=lambda i: nets[i].step)
  out = nets[order[-1]]
  out.params = jax.tree_util.tree_map(
      lambda *xs: np.mean(np.stack([np.asarray(x, np.float64) for x in xs]),
                          axis=0).astype(np.asarray(xs[0]).dtype),
      *[n.params for n in nets])
  out.opt_state = None
  extra = dict(out.metadata.get("extra", {}))
  extra["averaged_steps"] = [nets[i].step for i in order]
  out.metadata = dict(out.metadata, extra=extra, has_optimizer=False)
  return out

