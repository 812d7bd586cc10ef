"""Which value function the sog bot searches with: `value_function` and
`checkpoint` resolved for a game (a shipped CVPN, exact values, rollouts),
and a perfect-information game's policy-value network, which serves the
native engine (docs/training.md)."""

from __future__ import annotations

import functools
import os
from typing import Any

import pyspiel

from open_spiel_sog.algorithms.sog import engine as engine_lib
from open_spiel_sog.algorithms.sog import exact_values
from open_spiel_sog.algorithms.sog import rollout_values
from open_spiel_sog.algorithms.sog import value_functions
from open_spiel_sog.utils import notices


def perfect_information(game: pyspiel.Game) -> bool:
  """Whether `game` is a perfect-information game."""
  return (game.get_type().information ==
          pyspiel.GameType.Information.PERFECT_INFORMATION)


def resolved_value_function(config: Any, game: pyspiel.Game) -> str:
  """The value function "auto" stands for in `game`: "cvpn" with a
  checkpoint or a shipped network, "rollout" (with a notice) otherwise."""
  from open_spiel_sog.algorithms.sog import cvpn  # pylint: disable=g-import-not-at-top
  if config.value_function != "auto":
    return config.value_function
  if config.checkpoint:
    return "cvpn"
  shipped = cvpn.shipped_checkpoint(game)
  if shipped is not None:
    # (A network shipped for the anchored subgame's leaves serves that
    # subgame alone, `anchored_network`; public states keep rollouts.)
    return "rollout" if anchored_leaves(shipped) else "cvpn"
  notices.notice(
      "no network", str(game),
      f"sog: no trained network ships for {game}; using the rollout value "
      f"function (train one with: python examples/train.py "
      f"--game='{game}' --minutes=60; then pass "
      f"checkpoint=runs/{shipped_name(game)}/checkpoint.npz)")
  return "rollout"


def shipped_name(game: pyspiel.Game) -> str:
  """The game string as a file name (examples/train.py's run folder)."""
  from open_spiel_sog.algorithms.sog import cvpn  # pylint: disable=g-import-not-at-top
  return cvpn.shipped_checkpoint_name(game)[:-len(".npz")]


def anchored_leaves(path: str) -> bool:
  """Whether the checkpoint at `path` was trained for the anchored
  subgame's leaves (examples/train.py's fog_of_war recipe); read once per
  state of the file (every sog bot of a game with a shipped network
  asks)."""
  stat = os.stat(path)
  return _anchored_leaves(os.path.realpath(path), stat.st_mtime_ns,
                          stat.st_size)


def network_for_anchored(config: Any, game: pyspiel.Game) -> str | None:
  """The checkpoint the bot would value with, where it was trained for the
  anchored subgame's leaves: `checkpoint`, or the one shipped for `game`
  (as `anchored_network` picks it); None otherwise (no network,
  value_function rollout or exact, another trainer's network, or a path
  that does not read, which the value function's own loading then
  reports). Under subgame=auto such a network picks the anchored subgame
  it was trained on (London's: its public-state walk stays under the
  enumeration bound)."""
  if config.value_function not in ("auto", "cvpn"):
    return None
  from open_spiel_sog.algorithms.sog import cvpn  # pylint: disable=g-import-not-at-top
  path = config.checkpoint or cvpn.shipped_checkpoint(game)
  if not path or not os.path.isfile(path):
    return None
  try:
    return path if anchored_leaves(path) else None
  except cvpn.CheckpointError:
    return None


@functools.lru_cache(maxsize=32)
def _anchored_leaves(path: str, mtime_ns: int, size: int) -> bool:
  del mtime_ns, size  # (the cache's key: the file's state)
  from open_spiel_sog.algorithms.sog import cvpn  # pylint: disable=g-import-not-at-top
  meta, _ = cvpn.read_checkpoint(path)
  extra = meta.get("extra", {})
  # (Networks written before the one trainer name their binary.)
  return (extra.get("recipe") == "fog_of_war" or
          extra.get("trainer") == "examples/train_fog_of_war.py")


def make_value_function(config: Any, game: pyspiel.Game
                        ) -> value_functions.ValueFunction:
  """The value function `config` names for `game` (a network is shared
  read-only with the process's other bots that use the same file)."""
  name = resolved_value_function(config, game)
  if name == "cvpn":
    from open_spiel_sog.algorithms.sog import cvpn  # pylint: disable=g-import-not-at-top
    path = config.checkpoint or cvpn.shipped_checkpoint(game)
    if path is None:
      shipped = ", ".join(cvpn.shipped_games()) or "none"
      raise ValueError(
          f"sog: value_function=cvpn needs checkpoint=PATH for {game}; "
          f"networks ship for: {shipped}")
    return cvpn.CVPNValueFunction.from_checkpoint(path, game)
  if name == "exact":
    return exact_values.ExactValueFunction(
        game, tolerance=config.exact_tolerance,
        max_iterations=config.exact_max_iterations)
  return rollout_values.RolloutValueFunction(
      game, num_rollouts=config.rollouts, seed=config.seed)


def policy_value_path(config: Any, game: pyspiel.Game) -> str | None:
  """The policy-value checkpoint (a perfect-information game's network,
  trained by examples/train.py's perfect_information recipe) that `config` names
  for `game`: its checkpoint, or the one shipped for the game under
  value_function=auto; None where it names none."""
  if config.value_function not in ("auto", "cvpn") or not (
      perfect_information(game)):
    return None
  from open_spiel_sog.algorithms.networks import policy_value  # pylint: disable=g-import-not-at-top
  from open_spiel_sog.algorithms.sog import cvpn  # pylint: disable=g-import-not-at-top
  path = config.checkpoint or cvpn.shipped_checkpoint(game)
  if path is None or not policy_value.is_policy_value_checkpoint(path):
    return None
  return path


def bot_value_functions(config: Any, game: pyspiel.Game):
  """(value function, policy-value network or None) of a sog bot. A
  network shipped for a perfect-information game and picked by auto serves
  the native engine only: where that engine cannot run (engine=python, no
  shim) the bot uses rollouts, with a notice; one asked for by checkpoint
  or value_function=cvpn is kept, and the bot refuses it there
  (`sog_paths.native_search`). With a policy-value network, the value
  function (for nothing but the Python path's bookkeeping) is rollouts."""
  path = policy_value_path(config, game)
  net = None
  if path is not None:
    asked = bool(config.checkpoint) or config.value_function == "cvpn"
    reason = ("engine=python was asked for" if config.engine == "python"
              else engine_lib.native_reason(game))
    if reason is None or asked:
      from open_spiel_sog.algorithms.networks import policy_value  # pylint: disable=g-import-not-at-top
      net = policy_value.shared_network(path, game)
    else:
      notices.notice(
          "no native engine", str(game),
          f"sog: the network shipped for {game} searches on the native "
          f"engine ({reason}); using the rollout value function")
  value_fn = (rollout_values.RolloutValueFunction(
      game, num_rollouts=config.rollouts, seed=config.seed)
              if path is not None else make_value_function(config, game))
  return value_fn, net


def anchored_network(config: Any, game: pyspiel.Game, why: str):
  """The token CVPN valuing the anchored subgame's leaves
  (`leaf_network.LeafNetwork`, DESIGN.md section 17): `checkpoint`'s, or
  under value_function=auto the one shipped for `game` where it has the
  token input; None (rollouts) where none is named. Refuses, in one line,
  what cannot serve the anchored subgame (`why`: why it searches `game`)."""
  from open_spiel_sog.algorithms.sog import cvpn  # pylint: disable=g-import-not-at-top
  from open_spiel_sog.algorithms.sog.anchored.leaf_network import LeafNetwork  # pylint: disable=g-import-not-at-top
  if config.value_function not in ("auto", "rollout", "cvpn"):
    raise ValueError(
        f"sog: value_function={config.value_function!r} cannot serve the "
        f"anchored subgame that searches {game} ({why}): its leaves take "
        "rollouts or a token CVPN (checkpoint=PATH); pass "
        "subgame=public_state to search sampled public states with it")
  if config.value_function == "rollout":
    return None
  path = config.checkpoint or cvpn.shipped_checkpoint(game)
  if path is None:
    if config.value_function == "cvpn":
      raise ValueError(
          f"sog: value_function=cvpn needs checkpoint=PATH for {game} (train "
          f"one with: python examples/train.py --game='{game}')")
    return None
  net = cvpn.shared_network(path, game)
  if getattr(net.encoder, "input", None) != "tokens":
    if config.checkpoint or config.value_function == "cvpn":
      raise ValueError(
          f"sog: checkpoint {path!r} has the slot input, which cannot value "
          f"the anchored subgame that searches {game} ({why}); it takes a "
          "token CVPN (examples/train.py's fog_of_war recipe), or pass "
          "subgame=public_state")
    notices.notice(
        "slot input", str(game),
        f"sog: the network shipped for {game} has the slot input, which "
        "cannot value the anchored subgame; using rollouts")
    return None
  return LeafNetwork(net)
