r"""Trains a perfect-information game's policy-value network by self-play on
the native engine (SoG's Go setting, DESIGN.md section 17).

    python examples/train_perfect_information.py --game=connect_four \
        --minutes=60 --checkpoint=/tmp/c4.npz --snapshot_dir=/tmp/c4_snaps

`--games` games run side by side in one process, each searched by SoG with
the network at its leaves (`algorithms/training/perfect_information.py`);
finished games give AlphaZero's targets (the outcome mixed with the root
value by --root_value_weight; the root policy, or completed-Q with
--policy_target=gumbel), augmented by the board's symmetries; the learner
takes --updates_per_example gradient steps' worth per new example. Every
--snapshot_minutes a copy of the network goes to --snapshot_dir (named by
the minute), for the learning curve (`benchmarks/learning_curve.py`).
Progress goes to stderr once a minute; --json prints a summary as the last
line. Ctrl-C stops the run and writes the checkpoint.

The shipped connect_four network was made with the command in
docs/learning.md.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import sys

from absl import app
from absl import flags
import pyspiel

from open_spiel_sog.algorithms.networks import policy_value
from open_spiel_sog.algorithms.training import perfect_information as pi

_S = pi.SelfPlayConfig()
_L = pi.LearnConfig()
_N = policy_value.default_config()

_GAME = flags.DEFINE_string("game", "connect_four", "Game string for "
                            "load_game (two-player zero-sum, perfect "
                            "information, C++ states).")
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
_SIMS = flags.DEFINE_integer("simulations", _S.simulations,
                             "Growth simulations of a full search.")
_C = flags.DEFINE_float("expansions_per_update", _S.expansions_per_update,
                        "c of SoG(s, c); -1 paces CFR+ iterations by work.")
_CHEAP = flags.DEFINE_integer(
    "cheap_simulations", _S.cheap_simulations,
    "Playout-cap randomisation: simulations of a cheap search (no policy "
    "target).")
_FULL_P = flags.DEFINE_float(
    "full_search_probability", _S.full_search_probability,
    "Playout-cap randomisation: the probability of a full search (1: off).")
_GAMES = flags.DEFINE_integer("games", _S.games, "Games played side by side "
                              "(the network's batch).")
_GREEDY = flags.DEFINE_integer("greedy_after", _S.greedy_after, "Moves drawn "
                               "from the search's policy before argmax play.")
_ALPHA = flags.DEFINE_float("dirichlet_alpha", _S.dirichlet_alpha,
                            "Dirichlet noise concentration at the root.")
_FRACTION = flags.DEFINE_float("dirichlet_fraction", _S.dirichlet_fraction,
                               "Share of Dirichlet noise in the root prior "
                               "of full searches (0: none).")
_TD1 = flags.DEFINE_float(
    "td1_probability", _S.td1_probability,
    "Probability that a decision becomes an example (Table S2's p_td1: 0.2 "
    "in Go).")
_ROOT_W = flags.DEFINE_float("root_value_weight", _S.root_value_weight,
                             "Value target: (1 - w) outcome + w root value.")
_TARGET = flags.DEFINE_enum("policy_target", _S.policy_target,
                            list(pi.POLICY_TARGETS),
                            "search: the root's CFR average policy; gumbel: "
                            "completed-Q with Gumbel move selection.")
_CPUCT = flags.DEFINE_float("c_puct", _S.c_puct, "PUCT's exploration constant.")
_SYM = flags.DEFINE_bool("symmetries", _S.symmetries, "Augment examples with "
                         "the board's symmetries where the game has them.")
_BATCH = flags.DEFINE_integer("batch_size", _L.batch_size,
                              "Examples per gradient step.")
_REPLAY = flags.DEFINE_integer("replay_capacity", _L.replay_capacity,
                               "The replay window, in examples.")
_UPE = flags.DEFINE_float("updates_per_example", _L.updates_per_example,
                          "Gradient steps x batch size per new example.")
_MIN_REPLAY = flags.DEFINE_integer("min_replay", _L.min_replay,
                                   "Examples before the first step.")
_HIDDEN = flags.DEFINE_list("hidden", [str(h) for h in _N.hidden],
                            "Widths of the value torso.")
_P_HIDDEN = flags.DEFINE_list("policy_hidden",
                              [str(h) for h in _N.policy_hidden],
                              "Widths of the policy torso.")
_LR = flags.DEFINE_float("learning_rate", _N.learning_rate, "Adam's rate.")
_SEED = flags.DEFINE_integer("seed", 0, "Seed of the network and the games.")
_JSON = flags.DEFINE_bool("json", False, "Print a JSON summary, last.")


def main(argv):
  del argv
  log = lambda s: print(s, file=sys.stderr, flush=True)
  try:
    game = pyspiel.load_game(_GAME.value)
  except pyspiel.SpielError as e:
    sys.exit(f"train_perfect_information: cannot load {_GAME.value!r}: {e}")
  base_minutes = 0.0  # (a resumed run's minutes count from its start)
  if _RESUME.value:
    try:
      net = policy_value.PolicyValueNet.load(_CHECKPOINT.value, game)
    except ValueError as e:
      sys.exit(f"train_perfect_information: --resume: {e}")
    base_minutes = float(net.metadata.get("extra", {}).get("stats", {})
                         .get("minutes", 0.0))
  else:
    config = dataclasses.replace(
        policy_value.default_config(),
        hidden=tuple(int(h) for h in _HIDDEN.value),
        policy_hidden=tuple(int(h) for h in _P_HIDDEN.value),
        learning_rate=_LR.value)
    try:
      net = policy_value.PolicyValueNet(game, config)
    except ValueError as e:
      sys.exit(f"train_perfect_information: {e}")
    net.init(_SEED.value)
  selfplay = pi.SelfPlayConfig(
      simulations=_SIMS.value, expansions_per_update=_C.value,
      cheap_simulations=_CHEAP.value, full_search_probability=_FULL_P.value,
      games=_GAMES.value, greedy_after=_GREEDY.value,
      dirichlet_alpha=_ALPHA.value, dirichlet_fraction=_FRACTION.value,
      td1_probability=_TD1.value, root_value_weight=_ROOT_W.value,
      policy_target=_TARGET.value, c_puct=_CPUCT.value,
      symmetries=_SYM.value, seed=_SEED.value)
  learn = pi.LearnConfig(batch_size=_BATCH.value,
                         replay_capacity=_REPLAY.value,
                         updates_per_example=_UPE.value,
                         min_replay=_MIN_REPLAY.value)
  try:
    selfplay.validate()
  except ValueError as e:
    sys.exit(f"train_perfect_information: {e}")
  settings = {"selfplay": vars(selfplay), "learn": vars(learn)}
  stopped = []
  signal.signal(signal.SIGINT, lambda *_: stopped.append("SIGINT"))
  signal.signal(signal.SIGTERM, lambda *_: stopped.append("SIGTERM"))

  def checkpoint(minutes, stats):
    minutes += base_minutes
    stats = {**stats, "minutes": round(minutes, 2)}
    net.save(_CHECKPOINT.value, extra={"settings": settings, "stats": stats})
    if _SNAPSHOT_DIR.value:
      os.makedirs(_SNAPSHOT_DIR.value, exist_ok=True)
      net.save(os.path.join(_SNAPSHOT_DIR.value, f"min_{round(minutes):03d}.npz"),
               extra={"settings": settings, "stats": stats},
               include_optimizer=False)
    log(f"checkpoint at {minutes:.1f} min: {stats}")

  stats = pi.train(game, net, selfplay, learn, minutes=_MINUTES.value,
                   log=log, on_checkpoint=checkpoint,
                   checkpoint_every_minutes=_SNAPSHOT_MIN.value,
                   stop=lambda: bool(stopped))
  if _JSON.value:
    print(json.dumps({"game": str(game), "checkpoint": _CHECKPOINT.value,
                      "stopped": stopped[0] if stopped else None, **stats}))
  if stopped:
    sys.exit(130 if stopped[0] == "SIGINT" else 143)


if __name__ == "__main__":
  app.run(main)
