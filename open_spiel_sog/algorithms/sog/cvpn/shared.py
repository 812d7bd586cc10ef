"""The CVPN's networks shared within a process (`shared_network`: every bot
that loads a checkpoint gets the one read-only network) and the networks the
package ships in its data/ folder (`shipped_checkpoint`, `shipped_games`).
"""

from __future__ import annotations

import os

import pyspiel

from open_spiel_sog.algorithms.networks import CheckpointError
from open_spiel_sog.algorithms.networks import same_game
from open_spiel_sog.algorithms.sog.cvpn.checkpoints import load_checkpoint
from open_spiel_sog.algorithms.sog.cvpn.checkpoints import read_checkpoint
from open_spiel_sog.algorithms.sog.cvpn.network import CVPN
from open_spiel_sog.public_state import EXPANSIONS

# --- Networks shared within a process ---------------------------------------

# (real path, game string) -> (file identity, network)
_SHARED_NETWORKS: dict[tuple[str, str], tuple[tuple[int, ...], CVPN]] = {}


def _file_identity(path: str) -> tuple[int, ...]:
  st = os.stat(path)
  return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def clear_shared_caches() -> None:
  """Forgets what searches share across bots in this process: the exact
  expansions (`public_state.EXPANSIONS`) and the shared networks' encodings of
  exact public states. A search after it builds everything anew (the same
  results, more slowly): `benchmarks/search_speed.py --cold` times that."""
  EXPANSIONS.clear()
  for _, net in _SHARED_NETWORKS.values():
    net.encoder.clear_shared()


def shared_network(path: str, game: pyspiel.Game | str) -> CVPN:
  """The network at `path` for `game`, read and prepared once per process.

  Every bot that loads the same checkpoint file gets the same network object:
  its parameters (on the device, immutable), its encoder and its compiled
  inference functions, so a `pyspiel.load_bot("sog", ...)` after the first
  neither reads the file nor compiles again. The network is read-only
  (`set_params` and `train_step` raise); bots keep their search state and
  caches in their own value functions. The entry is keyed by the file's real
  path and the game, and read again when the file's identity (device, inode,
  size, modification time) changes.
  """
  import jax  # pylint: disable=g-import-not-at-top
  game = pyspiel.load_game(game) if isinstance(game, str) else game
  real = os.path.realpath(path)
  try:
    identity = _file_identity(real)
  except OSError:
    identity = None  # load_checkpoint names the problem
  key = (real, str(game))
  cached = _SHARED_NETWORKS.get(key)
  if cached is not None and identity is not None and cached[0] == identity:
    return cached[1]
  net = load_checkpoint(path, game)
  net.params = jax.device_put(net.params)
  net.opt_state = None
  net.read_only = True
  _SHARED_NETWORKS[key] = (identity or _file_identity(real), net)
  return net


def clear_shared_networks() -> None:
  """Forgets the networks `shared_network` keeps (they are read again)."""
  _SHARED_NETWORKS.clear()


# --- Shipped networks -------------------------------------------------------

# The package's data/ folder (open_spiel_sog/data).
DATA_DIR = os.path.normpath(os.path.join(os.path.dirname(__file__), os.pardir,
                                         os.pardir, os.pardir, "data"))


def shipped_checkpoint_name(game: pyspiel.Game | str) -> str:
  """The file name a shipped network for `game` has in `data/`."""
  name = str(game)
  for c in "()=, ":
    name = name.replace(c, "_")
  return name.strip("_") + ".npz"


_SHIPPED: dict[tuple, list[tuple[str, str]]] = {}


def _shipped() -> list[tuple[str, str]]:
  """(game string, path) of each network in data/; read once per state of
  the directory (names and modification times)."""
  files = sorted(name for name in (os.listdir(DATA_DIR)
                                   if os.path.isdir(DATA_DIR) else [])
                 if name.endswith(".npz"))
  key = tuple((name, os.stat(os.path.join(DATA_DIR, name)).st_mtime_ns)
              for name in files)
  if key not in _SHIPPED:
    out = []
    for name in files:
      path = os.path.join(DATA_DIR, name)
      try:
        meta, _ = read_checkpoint(path)
      except CheckpointError:
        continue
      out.append((meta["game"], path))
    _SHIPPED.clear()
    _SHIPPED[key] = out
  return _SHIPPED[key]


def shipped_games() -> list[str]:
  """The games a network ships for (their load_game strings)."""
  return [name for name, _ in _shipped()]


def shipped_checkpoint(game: pyspiel.Game | str) -> str | None:
  """The path of the shipped network for `game`, or None; a game named
  with its defaults left out ("liars_dice") finds the network shipped for
  the same parameters spelled out."""
  path = os.path.join(DATA_DIR, shipped_checkpoint_name(game))
  if os.path.exists(path):
    return path
  game = pyspiel.load_game(game) if isinstance(game, str) else game
  for name, shipped in _shipped():
    if same_game(name, game):
      return shipped
  return None

