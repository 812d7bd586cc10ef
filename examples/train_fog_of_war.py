r"""Trains a fog-of-war game's token CVPN by self-play on the anchored
subgame (DESIGN.md sections 15 and 17).

    python examples/train_fog_of_war.py --game=phantom_ttt --minutes=60 \
        --checkpoint=/tmp/pttt.npz --snapshot_dir=/tmp/pttt_snaps

Both players search the anchored subgame with the network at its leaves
(`algorithms/training/fog_of_war.py`). Examples: leaf groups the network
was asked about (--q_search per search), each re-solved by a separate
query solver search whose values and policies are its targets, and each
search's root, whose targets are the search's values of the infostates
present and its policy at the searcher's infostate. Every
--snapshot_minutes a copy of the network goes to --snapshot_dir
(min_MMM.npz) for the learning curve
(`benchmarks/learning_curve.py`). Progress goes to stderr once a minute;
--json prints a summary as the last line. Ctrl-C stops the run and writes
the checkpoint. The sog bot uses the network with checkpoint=PATH (or, once
shipped in open_spiel_sog/data, with value_function=auto).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time

from absl import app
from absl import flags
import pyspiel

from open_spiel_sog.algorithms.networks import NetworkConfig
from open_spiel_sog.algorithms.sog import cvpn
from open_spiel_sog.algorithms.sog import engine as engine_lib
from open_spiel_sog.algorithms.sog.cvpn.factory import make_encoder
from open_spiel_sog.algorithms.sog.cvpn.factory import make_network
from open_spiel_sog.algorithms.training import fog_of_war
from open_spiel_sog.public_state import PublicStateObserver
from open_spiel_sog.public_state.config import validate_game

_F = fog_of_war.FogConfig()

_GAME = flags.DEFINE_string("game", "phantom_ttt", "Game string for "
                            "load_game (two-player zero-sum, imperfect "
                            "information, turn-based).")
_MINUTES = flags.DEFINE_float("minutes", 60.0, "Wall-clock minutes to train.")
_CHECKPOINT = flags.DEFINE_string("checkpoint", None, "Where the trained "
                                  "network is written (.npz).", required=True)
_RESUME = flags.DEFINE_bool("resume", False, "Continue from --checkpoint "
                            "(its network and optimiser; the replay window "
                            "starts empty).")
_SNAPSHOT_DIR = flags.DEFINE_string(
    "snapshot_dir", None, "Directory for a copy of the network every "
    "--snapshot_minutes (min_MMM.npz), for the learning curve.")
_SNAPSHOT_MIN = flags.DEFINE_float("snapshot_minutes", 10.0,
                                   "Minutes between snapshots.")
_SIMS = flags.DEFINE_integer("simulations", _F.simulations,
                             "Growth simulations per search.")
_ROOT = flags.DEFINE_integer("root_histories", _F.root_histories,
                             "Histories of the searcher's infostate at the "
                             "anchored root.")
_ORDER2 = flags.DEFINE_integer("order2_histories", _F.order2_histories,
                               "Histories of each opponent infostate at the "
                               "root (the order-2 set).")
_LEAF_BATCH = flags.DEFINE_integer("leaf_batch", _F.leaf_batch,
                                   "New leaves valued by one network call.")
_BATCH = flags.DEFINE_integer("batch_size", _F.batch_size,
                              "Examples per optimiser step.")
_REPLAY = flags.DEFINE_integer("replay_capacity", _F.replay_capacity,
                               "Examples kept (the newest).")
_RATIO = flags.DEFINE_float("replay_ratio", _F.replay_ratio,
                            "Times each new example is learned on, on "
                            "average.")
_EXPLORE = flags.DEFINE_float("exploration", _F.exploration,
                              "Share of moves played uniformly at random.")
_Q_SEARCH = flags.DEFINE_float(
    "q_search", _F.q_search, "Queries solved per actor search, on average: "
    "leaf groups the network valued, each re-solved by a separate search "
    "whose values are its targets (0: the actors' roots only).")
_Q_RECURSIVE = flags.DEFINE_float("q_recursive", _F.q_recursive,
                                  "Queries each solver search adds, on "
                                  "average.")
_SOLVER_SIMS = flags.DEFINE_integer("solver_simulations",
                                    _F.solver_simulations,
                                    "Growth simulations of a query's solver "
                                    "search.")
_ROOT_EXAMPLES = flags.DEFINE_bool("root_examples", _F.root_examples,
                                   "Also learn on each actor search's root "
                                   "(its values and policy).")
_OUTCOME = flags.DEFINE_float(
    "outcome_weight", _F.outcome_weight, "The game's return's share of a "
    "root example's value targets at the two infostates the game passed "
    "through (0: the search's values alone, as SoG's recipe).")
_WIDTH = flags.DEFINE_integer("token_width", 64, "Token embedding width.")
_HIDDEN = flags.DEFINE_list("hidden", ["64", "64"],
                            "The history MLP's layers.")
_P_HIDDEN = flags.DEFINE_list("policy_hidden", ["64"],
                              "The policy MLP's layers.")
_LR = flags.DEFINE_float("learning_rate", 1e-3, "Adam's rate.")
_ENGINE = flags.DEFINE_enum("engine", "auto", ["auto", "native", "python"],
                            "Where the anchored tree lives (auto: native "
                            "where it can run).")
_SEED = flags.DEFINE_integer("seed", 0, "Seed of the network and the games.")
_JSON = flags.DEFINE_bool("json", False, "Print a JSON summary, last.")


def main(argv):
  del argv
  game = pyspiel.load_game(_GAME.value)
  kind = game.get_type()
  if kind.information == pyspiel.GameType.Information.PERFECT_INFORMATION:
    raise app.UsageError(
        f"{game} is a perfect-information game: train it with "
        "examples/train_perfect_information.py")
  try:  # (two-player zero-sum turn-based, as the public states' need)
    validate_game(game)
  except ValueError as e:
    raise app.UsageError(str(e)) from None
  reason = engine_lib.native_reason(game)
  if _ENGINE.value == "native" and reason is not None:
    raise app.UsageError(f"--engine=native cannot search {game}: {reason}")
  native = _ENGINE.value != "python" and reason is None
  if _RESUME.value:
    try:
      net = cvpn.load_checkpoint(_CHECKPOINT.value, game)
    except ValueError as e:  # missing, corrupt, another game's
      raise app.UsageError(f"--resume: {e}") from None
    if not net.metadata.get("has_optimizer"):
      raise app.UsageError(
          f"--resume: {_CHECKPOINT.value!r} holds no optimiser state (a "
          "shipped network, or one written without it); resume from the "
          "checkpoint a run of this script writes")
  else:
    config = NetworkConfig(
        input="tokens", token_width=_WIDTH.value,
        hidden=tuple(int(h) for h in _HIDDEN.value),
        policy_hidden=tuple(int(h) for h in _P_HIDDEN.value),
        conv_channels=(), learning_rate=_LR.value)
    observer = PublicStateObserver(game)
    try:
      encoder = make_encoder(observer, config)
    except ValueError as e:
      raise app.UsageError(str(e)) from None
    net = make_network(observer, config, encoder)
    net.init(_SEED.value)
  config = fog_of_war.FogConfig(
      simulations=_SIMS.value, root_histories=_ROOT.value,
      order2_histories=_ORDER2.value, leaf_batch=_LEAF_BATCH.value,
      batch_size=_BATCH.value, replay_capacity=_REPLAY.value,
      replay_ratio=_RATIO.value, exploration=_EXPLORE.value,
      q_search=_Q_SEARCH.value, q_recursive=_Q_RECURSIVE.value,
      solver_simulations=_SOLVER_SIMS.value,
      root_examples=_ROOT_EXAMPLES.value,
      outcome_weight=_OUTCOME.value, seed=_SEED.value)
  try:
    config.validate()
  except ValueError as e:
    raise app.UsageError(str(e)) from None
  selfplay = fog_of_war.FogSelfPlay(game, net, config, native=native)
  extra = {"trainer": "examples/train_fog_of_war.py",
           "flags": {f: flags.FLAGS[f].value for f in (
               "simulations", "root_histories", "order2_histories",
               "leaf_batch", "batch_size", "replay_capacity", "replay_ratio",
               "exploration", "q_search", "q_recursive",
               "solver_simulations", "root_examples", "outcome_weight",
               "seed")}}

  def save(path):
    cvpn.save_checkpoint(path, net, game=game, extra=extra)

  last = [0.0]

  def progress(stats):
    if stats["seconds"] - last[0] >= 60 or stats["games"] == 1:
      last[0] = stats["seconds"]
      print(f"[{stats['seconds'] / 60:5.1f} min] games {stats['games']} "
            f"moves {stats['moves']} queries {stats['queries']} examples "
            f"{stats['examples']} steps "
            f"{stats['steps']} value loss {stats['value_loss']:.4f} policy "
            f"loss {stats['policy_loss']:.4f} mean return "
            f"{stats['returns'] / stats['games']:+.3f}", file=sys.stderr,
            flush=True)

  def snapshot(seconds):
    os.makedirs(_SNAPSHOT_DIR.value, exist_ok=True)
    save(os.path.join(_SNAPSHOT_DIR.value,
                      f"min_{int(round(seconds / 60)):03d}.npz"))

  signal.signal(signal.SIGINT, signal.default_int_handler)
  start = time.monotonic()
  stats = {}
  try:
    stats = fog_of_war.train(
        selfplay, 60.0 * _MINUTES.value, progress,
        snapshot if _SNAPSHOT_DIR.value else None,
        60.0 * _SNAPSHOT_MIN.value if _SNAPSHOT_DIR.value else 0.0)
  except KeyboardInterrupt:
    print("interrupted: writing the checkpoint", file=sys.stderr)
  save(_CHECKPOINT.value)
  summary = {"game": str(game), "checkpoint": _CHECKPOINT.value,
             "seconds": time.monotonic() - start, "games": selfplay.games,
             "moves": selfplay.moves, "steps": net.step,
             "leaf_calls": selfplay.leaves.calls,
             "leaf_groups": selfplay.leaves.groups,
             "queries": selfplay.queries, "examples": selfplay.examples,
             **{k: stats.get(k) for k in ("value_loss", "policy_loss",
                                          "learn_seconds")}}
  print(f"wrote {_CHECKPOINT.value}: {summary['games']} games, "
        f"{summary['steps']} steps", file=sys.stderr)
  if _JSON.value:
    print(json.dumps(summary))


if __name__ == "__main__":
  app.run(main)
