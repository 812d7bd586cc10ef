"""The networks' checkpoint files: an .npz of the parameter (and optimiser
state) arrays with a JSON metadata array, written atomically and read with
clear errors (`CheckpointError`); each network names its own format string
and metadata. `same_game` matches a checkpoint's game string to a game.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from typing import Any

import numpy as np
import pyspiel


class CheckpointError(ValueError):
  """A checkpoint that cannot be used (missing, corrupt, another game)."""


def flatten(tree, prefix: str) -> dict[str, np.ndarray]:
  """The leaves of `tree` as arrays named `prefix`/00000, `prefix`/00001..."""
  import jax  # pylint: disable=g-import-not-at-top
  leaves = jax.tree_util.tree_leaves(tree)
  return {f"{prefix}/{i:05d}": np.asarray(x) for i, x in enumerate(leaves)}


def unflatten(template, arrays: dict[str, np.ndarray], prefix: str, path):
  """The tree of `template`'s structure with the arrays `flatten` named
  `prefix`/..., checked against the template's shapes (CheckpointError
  naming `path`)."""
  import jax  # pylint: disable=g-import-not-at-top
  leaves, treedef = jax.tree_util.tree_flatten(template)
  keys = sorted(k for k in arrays if k.startswith(prefix + "/"))
  if len(keys) != len(leaves):
    raise CheckpointError(
        f"{path}: {prefix} has {len(keys)} arrays, the network expects "
        f"{len(leaves)} (was it written with other network settings?)")
  loaded = []
  for k, leaf in zip(keys, leaves):
    a = arrays[k]
    shape = tuple(leaf.shape)  # arrays, or jax.ShapeDtypeStruct templates
    if a.shape != shape:
      raise CheckpointError(f"{path}: {k} has shape {a.shape}, the network "
                            f"expects {shape}")
    loaded.append(a)
  return jax.tree_util.tree_unflatten(treedef, loaded)


def zeros_like(template):
  """Numpy zeros shaped as `template`'s leaves: a fresh optimiser state
  (optax's Adam and SGD states, counts included, start at zero)."""
  import jax  # pylint: disable=g-import-not-at-top
  return jax.tree_util.tree_map(lambda s: np.zeros(s.shape, s.dtype),
                                template)


def write_npz(path: str, meta: dict[str, Any], params, opt_state) -> None:
  """Writes params (and opt_state unless None) with the JSON `meta` to
  `path` (.npz), atomically."""
  arrays = flatten(params, "params")
  if opt_state is not None:
    arrays.update(flatten(opt_state, "opt_state"))
  arrays["__meta__"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
  directory = os.path.dirname(os.path.abspath(path))
  os.makedirs(directory, exist_ok=True)
  tmp = f"{path}.tmp{os.getpid()}"
  with open(tmp, "wb") as f:
    np.savez(f, **arrays)
  os.replace(tmp, path)


def read_npz(path: str, fmt: str, kind: str
             ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
  """(metadata, arrays) of a `kind` checkpoint in format `fmt`, with clear
  errors."""
  if not os.path.exists(path):
    raise CheckpointError(f"{kind} checkpoint {path!r} does not exist")
  try:
    with open(path, "rb") as f:
      data = f.read()
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
      arrays = {k: z[k] for k in z.files}
  except (OSError, ValueError, zipfile.BadZipFile, EOFError) as e:
    raise CheckpointError(f"{path!r} is not a readable {kind} checkpoint "
                          f"(corrupt or not an .npz file): {e}") from None
  if "__meta__" not in arrays:
    raise CheckpointError(f"{path!r} is not a {kind} checkpoint (no metadata)")
  try:
    meta = json.loads(arrays.pop("__meta__").tobytes().decode())
  except (ValueError, UnicodeDecodeError) as e:
    raise CheckpointError(f"{path!r}: corrupt checkpoint metadata: {e}"
                          ) from None
  if not isinstance(meta, dict) or meta.get("format") != fmt:
    found = meta.get("format") if isinstance(meta, dict) else None
    raise CheckpointError(f"{path!r}: unsupported checkpoint format "
                          f"{found!r}; supported: {fmt!r}")
  return meta, arrays


def same_game(name: str, game: pyspiel.Game) -> bool:
  """Whether the game string `name` (a checkpoint's) loads `game`, defaults
  included: "liars_dice()" is liars_dice(numdice=1,dice_sides=6)."""
  if name == str(game):
    return True
  try:
    other = pyspiel.load_game(name)
  except pyspiel.SpielError:
    return False
  return (other.get_type().short_name == game.get_type().short_name and
          other.get_parameters() == game.get_parameters())


class CheckpointedNetwork:
  """save / read / load for a network class with `FORMAT` and `KIND`
  (class attributes), built as `cls(game, config)` and holding `game`,
  `config` (a NetworkConfig), `params`, `opt_state`, `step`, `metadata`,
  `_network` (a TwoHeadedMLP: `param_shapes()`, `optimizer`), `init(seed)`
  and `spec()` (what a checkpoint must agree with)."""

  FORMAT = ""
  KIND = ""

  def save(self, path: str, *, extra: dict[str, Any] | None = None,
           include_optimizer: bool = True) -> None:
    """Writes params (and the optimiser state), step, network settings,
    game string and `extra` to `path` (.npz with JSON metadata),
    atomically."""
    self._check_params()
    include_optimizer = include_optimizer and self.opt_state is not None
    meta = {"format": self.FORMAT, "game": str(self.game),
            "step": self.step, "network": self.config.to_json(),
            "spec": self.spec(), "extra": extra or {},
            "has_optimizer": bool(include_optimizer)}
    write_npz(path, meta, self.params,
              self.opt_state if include_optimizer else None)

  def templates(self):
    """(params, opt_state) of this network as trees of
    jax.ShapeDtypeStruct, traced (jax.eval_shape), not initialised."""
    import jax  # pylint: disable=g-import-not-at-top
    params = self._network.param_shapes()
    return params, jax.eval_shape(self._network.optimizer.init, params)

  def init_from(self, params, opt_state) -> None:
    """Takes `params` and `opt_state` (trees of `templates()`' structure)
    as the network's, at step 0."""
    self.params, self.opt_state = params, opt_state
    self.step = 0

  @classmethod
  def read(cls, path: str) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """(metadata, arrays) of a checkpoint of this kind, with clear errors."""
    return read_npz(path, cls.FORMAT, cls.KIND)

  @classmethod
  def load(cls, path: str, game: pyspiel.Game | str):
    """The network stored at `path`, checked against `game`."""
    from open_spiel_sog.algorithms.networks.settings import NetworkConfig  # pylint: disable=g-import-not-at-top
    meta, arrays = cls.read(path)
    game = pyspiel.load_game(game) if isinstance(game, str) else game
    if not same_game(str(meta.get("game")), game):
      raise CheckpointError(f"checkpoint {path!r} was trained for "
                            f"{meta.get('game')}, not {game}")
    try:
      config = NetworkConfig.from_json(meta["network"])
    except (KeyError, ValueError, TypeError) as e:
      raise CheckpointError(f"{path!r}: bad network settings: {e}") from None
    net = cls(game, config)
    if meta.get("spec") != net.spec():
      raise CheckpointError(f"checkpoint {path!r} expects inputs/outputs "
                            f"{meta.get('spec')}, {game} has {net.spec()}")
    # Templates of shapes (jax.eval_shape: nothing initialised, no op run
    # eagerly; an init costs seconds in a fresh process).
    params, opt_state = net.templates()
    net.init_from(unflatten(params, arrays, "params", path),
                  unflatten(opt_state, arrays, "opt_state", path)
                  if meta.get("has_optimizer") else zeros_like(opt_state))
    net.step = int(meta.get("step", 0))
    net.metadata = meta
    return net
