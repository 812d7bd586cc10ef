r"""Trains the network that the sog bot searches a game with: one command for
every game (DESIGN.md section 18).

    python examples/train.py --game=connect_four --minutes=60
    python examples/train.py --game=leduc_poker --steps=2000
    python examples/train.py --game=phantom_ttt --minutes=30

`--recipe=auto` (the default) asks the question the sog bot asks at load
time, and the first line printed says which recipe and why:

  perfect_information  perfect information, C++ states: SoG's Go setting on
                       the native engine (a policy-value network);
  public_states        the public tree enumerates: sound self-play with
                       query solvers (Algorithm 2; the slot CVPN);
  fog_of_war           past that bound: the anchored subgame, with the query
                       solver in each actor (the token CVPN, or the game's
                       declared encoding).

Every recipe runs on the same pipeline: actor processes (`--actors`, or the
inline and Ray backends), a replay ring, one learner. A run lives in
`--run_dir` (default runs/<game>): the checkpoint (checkpoint.npz, with its
metadata: game, recipe, settings, versions, steps, examples, games,
minutes), a snapshot every --snapshot_minutes (snapshots/min_MMM.npz), the
log (train.log) and, for the perfect_information and fog_of_war recipes,
the learning curve: each snapshot against the recipe's baseline (mcts or
ismcts) at --curve_time_limit a move, --curve_games games in a process of
its own (curve.csv, curve.png). Rerunning the same
command resumes the run; `--minutes` (in total, over resumes) or `--steps`
bounds it. The sog bot uses the result with checkpoint=RUN_DIR/
checkpoint.npz, or with value_function=auto once it ships in
open_spiel_sog/data/.

Flags have the recipe's defaults where unset; a flag the chosen recipe does
not use is refused in one line naming the recipes that use it
(docs/training.md lists every flag). Progress goes to stderr and the log
once a minute; `--json` prints a summary as the last line. Ctrl-C (SIGINT)
or SIGTERM stops the workers, writes the checkpoint and exits with 130 or
143; a second signal aborts at once. Worker processes end with the trainer
however it ends.

This file is longer than the binaries beside it (about 600 lines) because
it holds every flag of the three recipes, each with its help, in one place:
the flags are the trainer's documented interface (docs/training.md), and
`config_from_flags` is the one function that turns them into settings.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading

from absl import app
from absl import flags
import pyspiel

from open_spiel_sog.algorithms.networks import NetworkConfig
from open_spiel_sog.algorithms.networks import policy_value
from open_spiel_sog.algorithms.networks import TORSOS
from open_spiel_sog.algorithms.sog import cvpn
from open_spiel_sog.algorithms.training import BACKENDS
from open_spiel_sog.algorithms.training import EvalConfig
from open_spiel_sog.algorithms.training import INFERENCE
from open_spiel_sog.algorithms.training import LEARNER_THREADS
from open_spiel_sog.algorithms.training import PLATFORMS
from open_spiel_sog.algorithms.training import presets
from open_spiel_sog.algorithms.training import recipes
from open_spiel_sog.algorithms.training import SOLVERS
from open_spiel_sog.algorithms.training import stop_on_signals
from open_spiel_sog.algorithms.training import TrainConfig
from open_spiel_sog.algorithms.training import Trainer
from open_spiel_sog.algorithms.training.perfect_information import POLICY_TARGETS
from open_spiel_sog.evaluation import curve
from open_spiel_sog.evaluation import exploitability
from open_spiel_sog.utils.games import load_game

_D = TrainConfig()
_E = EvalConfig()
_PI = recipes.PerfectInformationSettings()
_FOG = recipes.FogOfWarSettings()
_RECIPE_DEFAULT = "the recipe's default"

# --- The pipeline (every recipe) ---------------------------------------------
_GAME = flags.DEFINE_string("game", None, "Game string for load_game "
                            "(two-player zero-sum).", required=True)
_RECIPE = flags.DEFINE_enum(
    "recipe", "auto", list(recipes.RECIPE_CHOICES),
    "What to train: auto (the search the sog bot's defaults run on the "
    "game), perfect_information, public_states or fog_of_war.")
_RUN_DIR = flags.DEFINE_string(
    "run_dir", None, "The run's folder (checkpoint, snapshots, log); "
    "default runs/<game>. Rerunning with the same folder resumes the run.")
_MINUTES = flags.DEFINE_float(
    "minutes", None, "Wall-clock minutes of training in total, over resumes "
    "(default 60 where --steps is unset; 0: no bound).")
_STEPS = flags.DEFINE_integer("steps", None, "Gradient steps in total "
                              "(default: no bound; --minutes bounds the run).")
_RESUME = flags.DEFINE_bool(
    "resume", True, "Continue from the run's checkpoint where it exists "
    "(--noresume starts over, replacing it).")
_CHECKPOINT = flags.DEFINE_string(
    "checkpoint", None, "The checkpoint's path (default RUN_DIR/"
    "checkpoint.npz).")
_CHECKPOINT_EVERY = flags.DEFINE_integer(
    "checkpoint_every", None, "Steps between checkpoints (default: every "
    "1,000 steps; 0: at the end only; a stop by signal writes one too).")
_KEEP = flags.DEFINE_bool("keep_checkpoints", _D.keep_checkpoints,
                          "Keep every periodic checkpoint as "
                          "PATH.step-N.npz.")
_SNAPSHOT_DIR = flags.DEFINE_string(
    "snapshot_dir", None, "Where a copy of the network goes every "
    "--snapshot_minutes (default RUN_DIR/snapshots).")
_SNAPSHOT_MIN = flags.DEFINE_float("snapshot_minutes", _D.snapshot_minutes,
                                   "Minutes between snapshots.")
_BACKEND = flags.DEFINE_enum(
    "backend", _D.backend, list(BACKENDS),
    "inline: one process (deterministic for a seed); process: actor "
    "processes beside the learner; ray: Ray actors (pip install "
    "'open_spiel_sog[ray]').")
_ACTORS = flags.DEFINE_integer(
    "actors", None, "Actor workers (process and ray backends). Default: one "
    "per core for the perfect_information recipe (its learner costs a few "
    f"percent of a core), {_D.actors} for the others (their learner and "
    "query solvers keep cores busy).")
_BATCH = flags.DEFINE_integer("batch_size", None, "Examples per gradient "
                              "step.")
_REPLAY = flags.DEFINE_integer("replay_size", None, "The replay window, in "
                               "examples.")
_REPLAY_MB = flags.DEFINE_integer(
    "replay_memory_mb", _D.replay_memory_mb, "The replay ring's memory bound "
    "in MB (0: none): past it the ring keeps the newest examples that fit "
    "and learning starts once it is full.")
_MIN_REPLAY = flags.DEFINE_integer("min_replay", None,
                                   "Examples before learning starts.")
_MAX_UPDATES = flags.DEFINE_float(
    "max_updates_per_example", None,
    "Uses of each example by the learner at most (steps x batch_size per "
    "example added; learning waits for data beyond it).")
_PUBLISH = flags.DEFINE_integer("publish_every", _D.publish_every,
                                "Steps between parameter publications.")
_SEED = flags.DEFINE_integer("seed", _D.seed, "Seed of the run.")
_RAY_ADDRESS = flags.DEFINE_string(
    "ray_address", _D.ray_address,
    "With --backend=ray: the Ray cluster (host:port of its head, or 'auto' "
    "for the one `ray start` runs here); empty starts a local Ray.")
_LEARNER_PLATFORM = flags.DEFINE_enum(
    "learner_platform", _D.learner_platform, list(PLATFORMS),
    "Where the learner's gradient steps run (gpu: an error when JAX sees "
    "none).")
_LEARNER_THREADS = flags.DEFINE_enum(
    "learner_threads", _D.learner_threads, list(LEARNER_THREADS),
    "Compute threads of the learner's JAX on the CPU: all, one, or auto "
    "(one when the workers take every core but one).")
_WORKER_PLATFORM = flags.DEFINE_enum(
    "worker_platform", _D.worker_platform, list(PLATFORMS),
    "Where the workers' JAX runs.")
_PROGRESS = flags.DEFINE_bool("progress", True, "Show a progress bar.")
_JSON = flags.DEFINE_bool("json", False,
                          "Print a JSON summary as the last line.")
_TENSORBOARD = flags.DEFINE_string(
    "tensorboard_dir", "",
    "TensorBoard summaries (needs tensorflow and tensorboard: pip install "
    "'open_spiel_sog[tensorboard]').")
_CURVE_GAMES = flags.DEFINE_integer(
    "curve_games", 20, "The learning curve: each snapshot plays the "
    "recipe's baseline (perfect_information: mcts; fog_of_war: ismcts) this "
    "many games in duplicate seats at --curve_time_limit a move, in a "
    "process of its own, one snapshot at a time; points go to RUN_DIR/"
    "curve.csv and curve.png with 95% intervals, and a run waits for its "
    "last (Ctrl-C skips it). Even; 0: no curve.")
_CURVE_TIME = flags.DEFINE_float(
    "curve_time_limit", 0.5, "Seconds a move of each side in the learning "
    "curve's games.")
# The network (every recipe; defaults: the recipe's network).
_HIDDEN = flags.DEFINE_list("hidden", None, "Hidden layer widths of the "
                            "value MLP (the token CVPN's history MLP).")
_POLICY_HIDDEN = flags.DEFINE_list("policy_hidden", None, "Hidden layer "
                                   "widths of the policy MLP.")
_OPTIMIZER = flags.DEFINE_enum("optimizer", None, list(cvpn.OPTIMIZERS),
                               "Optimiser (default adam).")
_LR = flags.DEFINE_float("learning_rate", None, "Initial learning rate.")
_LR_DECAY = flags.DEFINE_float("lr_decay_rate", None,
                               "d in alpha_0 * d^(t / T_decay).")
_LR_STEPS = flags.DEFINE_integer("lr_decay_steps", None,
                                 "T_decay in alpha_0 * d^(t / T_decay).")
_VALUE_W = flags.DEFINE_float("value_weight", None,
                              "Weight of the value loss.")
_POLICY_W = flags.DEFINE_float("policy_weight", None,
                               "Weight of the policy cross-entropy.")
_PRIOR_T = flags.DEFINE_float("prior_temperature", None,
                              "Softmax temperature of the prior policy.")
_HUBER_DELTA = flags.DEFINE_float(
    "huber_delta", None, "Delta of the value Huber loss (values in units "
    "of the largest absolute utility).")
_WEIGHT_DECAY = flags.DEFINE_float("weight_decay", None,
                                   "L2 penalty on the weights (0: none).")

# --- Shared by some recipes --------------------------------------------------
_SIMS = flags.DEFINE_integer("simulations", None, "Growth simulations of "
                             "an actor's search (SoG(s, c)'s s).")
_C = flags.DEFINE_float(
    "expansions_per_update", None, "c of the actors' SoG(s, c) "
    "(perfect_information: -1 paces CFR+ iterations by work).")
_SOLVER_S = flags.DEFINE_integer("solver_simulations", None,
                                 "Growth simulations of a query solver's "
                                 "search.")
_Q_SEARCH = flags.DEFINE_float("q_search", None, "Queries solved per actor "
                               "search, on average.")
_Q_RECURSIVE = flags.DEFINE_float("q_recursive", None, "Queries each solver "
                                  "search adds, on average.")
_EPSILON = flags.DEFINE_float("epsilon", None, "Share of self-play moves "
                              "played uniformly at random (public_states: "
                              "the uniform mix of the policy).")
_P_TD1 = flags.DEFINE_float(
    "p_td1", None, "Table S2's p_td1: perfect_information: the share of "
    "decisions that are examples (default: the game's preset, "
    "docs/training.md); public_states: the probability that a main-line "
    "public state gets the outcome as a value target.")
_GREEDY_AFTER = flags.DEFINE_integer(
    "greedy_after", None, "perfect_information: moves drawn from the "
    "search's policy before argmax play (default: the game's preset); "
    "public_states: play greedily after this many moves (0: never).")
_TOKEN_WIDTH = flags.DEFINE_integer(
    "token_width", None, "The token CVPN's infostate and public embedding "
    "width.")
_CONV_CHANNELS = flags.DEFINE_list(
    "conv_channels", None, "The token CVPN's 3x3 convolution channels for "
    "board-shaped tensors (empty: an MLP reads them).")
_NETWORK = flags.DEFINE_enum(
    "network", None, list(TORSOS), "The policy-value network's torso: mlp "
    "(an MLP per head), conv (residual 3x3 convolutions shared by the "
    "heads) or auto (conv where the observation tensor is [C, H, W], "
    "printed at start). Default: mlp.")
_RES_CHANNELS = flags.DEFINE_integer(
    "res_channels", None, "Channels of the conv torso's convolutions "
    "(default 16).")
_RES_BLOCKS = flags.DEFINE_integer(
    "res_blocks", None, "Residual blocks of the conv torso after its stem "
    "(default 2).")

# --- public_states -----------------------------------------------------------
_SOLVER_C = flags.DEFINE_float(
    "solver_expansions_per_update", _D.solver_expansions_per_update,
    "c of the query solvers' SoG(s, c).")
_SOLVER = flags.DEFINE_enum(
    "solver", _D.solver, list(SOLVERS),
    "How query solvers value a query: search (SoG with the network at its "
    "leaves, the paper's) or exact (the query's subgame solved to "
    "--solver_tolerance; one target per query, no recursive queries).")
_SOLVER_TOLERANCE = flags.DEFINE_float(
    "solver_tolerance", _D.solver_tolerance,
    "With --solver=exact: the subgame exploitability (a fraction of the "
    "utility range) each query is solved to.")
_SOLVERS = flags.DEFINE_integer("solvers", None, "Query solver workers "
                                "(default 1; 0: no value targets from "
                                "queries).")
_SOLVER_TARGETS = flags.DEFINE_integer(
    "solver_value_targets", None,
    "Value targets per solver search: the root plus up to N-1 interior "
    "public states (1: the root only, as in the paper; default 8).")
_IDLE_PLAY = flags.DEFINE_bool(
    "idle_solvers_play", _D.idle_solvers_play,
    "A query solver with no query waiting plays a self-play game.")
_WALKS = flags.DEFINE_integer(
    "walks_per_simulation", _D.walks_per_simulation,
    "Walks a search's expansion simulation may draw (1: each walk is a "
    "simulation).")
_RESIGN = flags.DEFINE_float(
    "resign_threshold", None,
    "Resign below this expected value (utility units); unset: never.")
_P_NO_RESIGN = flags.DEFINE_float("p_no_resign", _D.p_no_resign,
                                  "Share of games played out with resigning "
                                  "on.")
_MAX_MOVES = flags.DEFINE_integer("max_moves", _D.max_moves,
                                  "Moves per self-play game (0: unlimited).")
_SEARCH_OPPONENT = flags.DEFINE_bool(
    "search_opponent_nodes", _D.search_opponent_nodes,
    "Each seat also re-solves at the other's decisions, as the sog bot "
    "does.")
_ALPHA = flags.DEFINE_float("alpha", _D.alpha, "The re-solving gadget's mix "
                            "with the previous opponent range.")
_MAX_QUEUED = flags.DEFINE_integer("max_queued_queries",
                                   _D.max_queued_queries,
                                   "Capacity of the query queue.")
_MAX_HISTORIES = flags.DEFINE_integer(
    "max_histories", _D.max_histories, "With the token input: public states "
    "with more histories are samples of this many (0: every one exact).")
_INPUT = flags.DEFINE_enum(
    "input", None, list(cvpn.INPUT_CHOICES),
    "The CVPN's input: slots (private parts numbered by a walk of the whole "
    "game), tokens (one token per infostate) or auto (default: slots where "
    "the public tree enumerates, printed at start).")
_INFERENCE = flags.DEFINE_enum(
    "inference", _D.inference, list(INFERENCE),
    "Where the workers' network calls run: local (each worker's own copy) or "
    "cpu / gpu (one inference service batches every worker's leaves; "
    "process or ray backend, slot input).")
_EVAL_EVERY = flags.DEFINE_integer(
    "eval_every", _E.every, "Steps between exact exploitability "
    "measurements of SoG with the current network (small games; 0: never).")
_EVAL_S = flags.DEFINE_integer("eval_simulations", _E.simulations,
                               "s of the evaluated SoG(s, 1).")
_EVAL_SEEDS = flags.DEFINE_list("eval_seeds", [str(s) for s in _E.seeds],
                                "Seeds of each exploitability measurement.")
_EVAL_CSV = flags.DEFINE_string("eval_csv", _E.csv, "CSV of (step, seconds, "
                                "examples, loss, exploitability).")
_EVAL_PNG = flags.DEFINE_string("eval_png", _E.png, "PNG plot of "
                                "exploitability against steps.")

# --- perfect_information -----------------------------------------------------
_CHEAP = flags.DEFINE_integer(
    "cheap_simulations", _PI.cheap_simulations,
    "Playout-cap randomisation: simulations of a cheap search (no policy "
    "target).")
_FULL_P = flags.DEFINE_float(
    "full_search_probability", _PI.full_search_probability,
    "Playout-cap randomisation: the probability of a full search (1: off).")
_GAMES = flags.DEFINE_integer("games", _PI.games, "Games played side by side "
                              "in each actor (the network's batch).")
_DIR_ALPHA = flags.DEFINE_float("dirichlet_alpha", _PI.dirichlet_alpha,
                                "Dirichlet noise concentration at the root "
                                "(default: the game's preset, at most this).")
_DIR_FRACTION = flags.DEFINE_float(
    "dirichlet_fraction", _PI.dirichlet_fraction,
    "Share of Dirichlet noise in the root prior of full searches.")
_ROOT_W = flags.DEFINE_float("root_value_weight", _PI.root_value_weight,
                             "Value target: (1 - w) outcome + w root value.")
_TARGET = flags.DEFINE_enum("policy_target", _PI.policy_target,
                            list(POLICY_TARGETS),
                            "search: the root's CFR average policy; gumbel: "
                            "completed-Q with Gumbel move selection.")
_CPUCT = flags.DEFINE_float("c_puct", _PI.c_puct, "PUCT's exploration "
                            "constant.")
_AVG_DUP = flags.DEFINE_bool(
    "average_duplicates", _PI.average_duplicates,
    "Position averaging: an example's targets are the mean of the targets "
    "of every time the actor met the same position (among its last "
    "50,000 positions).")
_SIMS_START = flags.DEFINE_integer(
    "simulations_start", _PI.simulations_start,
    "A growing budget: full searches start at this many simulations and "
    "grow linearly to --simulations over the run's first --grow_minutes "
    "(0: off).")
_GROW_MIN = flags.DEFINE_float(
    "grow_minutes", _PI.grow_minutes,
    "Minutes of the run over which --simulations_start grows to "
    "--simulations.")
_SYM = flags.DEFINE_bool("symmetries", _PI.symmetries, "Augment examples "
                         "with the board's symmetries where the recipe "
                         "knows them (default: the game's preset).")

# --- fog_of_war --------------------------------------------------------------
_ROOT_H = flags.DEFINE_integer("root_histories", _FOG.root_histories,
                               "Histories of the searcher's infostate at the "
                               "anchored root.")
_ORDER2 = flags.DEFINE_integer("order2_histories", _FOG.order2_histories,
                               "Histories of each opponent infostate at the "
                               "root (the order-2 set).")
_LEAF_BATCH = flags.DEFINE_integer("leaf_batch", _FOG.leaf_batch,
                                   "New leaves valued by one network call.")
_ROOT_EXAMPLES = flags.DEFINE_bool("root_examples", _FOG.root_examples,
                                   "Also learn on each actor search's root.")
_OUTCOME = flags.DEFINE_float(
    "outcome_weight", _FOG.outcome_weight, "The game's return's share of a "
    "root example's value targets at the infostates the game passed "
    "through (0: the search's values alone, as SoG's recipe).")
_MAX_QUERIES = flags.DEFINE_integer("max_queries", _FOG.max_queries,
                                    "Queries solved per actor search at "
                                    "most.")
_ENGINE = flags.DEFINE_enum("engine", _FOG.engine,
                            ["auto", "native", "python"],
                            "Where the anchored tree lives (auto: native "
                            "where it can run).")

# Flag -> the TrainConfig field, NetworkConfig field ("network." + name) or
# recipe setting ("recipe." + name) it sets, where the names differ.
_TARGETS = {
    "simulations": "actor_simulations",
    "expansions_per_update": "actor_expansions_per_update",
    "network": "network.torso",
}
_NETWORK_FLAGS = ("hidden", "policy_hidden", "optimizer", "learning_rate",
                  "lr_decay_rate", "lr_decay_steps", "value_weight",
                  "policy_weight", "prior_temperature", "huber_delta",
                  "weight_decay", "input", "token_width", "conv_channels",
                  "network", "res_channels", "res_blocks")
# Flags the pipeline reads for some recipes only, beyond `recipes.reads`.
_ONLY = {"input": ["public_states"],
         "token_width": ["public_states", "fog_of_war"],
         "conv_channels": ["public_states", "fog_of_war"],
         "network": ["perfect_information"],
         "res_channels": ["perfect_information"],
         "res_blocks": ["perfect_information"],
         "eval_every": ["public_states"], "eval_simulations":
             ["public_states"], "eval_seeds": ["public_states"],
         "eval_csv": ["public_states"], "eval_png": ["public_states"],
         "inference": ["public_states"], "solvers": ["public_states"],
         "curve_games": list(curve.OPPONENTS),
         "curve_time_limit": list(curve.OPPONENTS)}
_PIPELINE = ("game", "recipe", "run_dir", "minutes", "steps", "resume",
             "checkpoint", "checkpoint_every", "keep_checkpoints",
             "snapshot_dir", "snapshot_minutes", "backend", "actors",
             "batch_size", "replay_size", "replay_memory_mb", "min_replay",
             "max_updates_per_example", "publish_every", "seed",
             "ray_address", "learner_platform", "learner_threads",
             "worker_platform", "progress", "json", "tensorboard_dir")


def flag_recipes(name: str) -> list[str]:
  """The recipes that use the flag `name` (every one for the pipeline's)."""
  if name in _ONLY:
    return _ONLY[name]
  if name in _PIPELINE or name in _NETWORK_FLAGS:
    return list(recipes.RECIPES)
  return recipes.recipes_reading(_TARGETS.get(name, name))


def training_flags() -> list[str]:
  """The names of this binary's own flags."""
  return [v.name for v in globals().values()
          if isinstance(v, flags.FlagHolder)]


def _given(name: str) -> bool:
  return flags.FLAGS[name].present


def _one_line(error: Exception) -> str:
  """An error's message on one line, without TensorFlow's op decorations."""
  message = str(getattr(error, "message", error))
  message = re.sub(r"\{\{[^}]*\}\}|\[Op:.*", "", message, flags=re.DOTALL)
  return " ".join(message.split())


_TENSORBOARD_INSTALL = "pip install 'open_spiel_sog[tensorboard]'"


class _TensorBoard:
  """TensorBoard summaries through tensorflow, imported only here; checked
  before any training (tensorflow's `tf.summary.scalar` needs the separate
  tensorboard package): when either is missing, or `logdir` cannot be
  written, it exits with a one-line message."""

  def __init__(self, logdir: str):
    try:
      import tensorflow as tf  # pylint: disable=g-import-not-at-top
      from tensorboard.summary import v2  # pylint: disable=g-import-not-at-top,unused-import
    except ImportError as e:
      raise SystemExit(
          f"train: --tensorboard_dir needs tensorflow and tensorboard "
          f"({_one_line(e)}): {_TENSORBOARD_INSTALL}") from None
    try:
      tf.config.set_visible_devices([], "GPU")  # (the GPUs are JAX's)
    except RuntimeError:
      pass
    try:
      tf.summary.scalar("tensorboard_check", 0.0, step=0)
    except Exception as e:  # pylint: disable=broad-except
      raise SystemExit(
          f"train: --tensorboard_dir cannot write summaries "
          f"({type(e).__name__}: {_one_line(e)}): {_TENSORBOARD_INSTALL}"
      ) from None
    try:
      self._writer = tf.summary.create_file_writer(logdir)
    except tf.errors.OpError as e:
      raise SystemExit(f"train: cannot write TensorBoard summaries to "
                       f"{logdir!r}: {_one_line(e)}") from None
    self._tf = tf

  def scalar(self, name: str, value: float, step: int) -> None:
    with self._writer.as_default():
      self._tf.summary.scalar(name, value, step=step)

  def close(self) -> None:
    self._writer.close()


def default_run_dir(game: str) -> str:
  """runs/<game>, the game string made a folder name."""
  return os.path.join("runs", cvpn.shipped_checkpoint_name(game)[:-4])


def _ints(name: str, values) -> tuple[int, ...]:
  try:
    return tuple(int(v) for v in values)
  except ValueError:
    raise ValueError(f"train: --{name} takes integers, got "
                     f"{','.join(values)}") from None


@functools.lru_cache(maxsize=None)
def _game_class(game: str) -> presets.GameClass:
  return presets.game_class(pyspiel.load_game(game))


def game_presets(recipe_name: str) -> dict:
  """`presets.for_class` of --game's class for `recipe_name`: the
  defaults a flag left unset takes."""
  if recipe_name not in presets.RECIPES:
    return {}
  return presets.for_class(_game_class(_GAME.value), recipe_name)


def presets_line(recipe_name: str) -> str | None:
  """The line the binary prints of --game's presets, or None."""
  preset = game_presets(recipe_name)
  if not preset:
    return None
  given = {name: flags.FLAGS[name].value for name in preset if _given(name)}
  return f"train: presets for its class: {presets.describe(preset, given)}"


def network_from_flags(recipe: recipes.Recipe,
                       saved: NetworkConfig | None) -> NetworkConfig:
  """The recipe's network (or a resumed run's), with the given flags."""
  network = saved or recipe.network_config()
  changes = {}
  for name in _NETWORK_FLAGS:
    if not _given(name):
      continue
    value = flags.FLAGS[name].value
    if name in ("hidden", "policy_hidden", "conv_channels"):
      value = _ints(name, value)
    changes[_TARGETS.get(name, name).removeprefix("network.")] = value
  network = dataclasses.replace(network, **changes)
  if saved is None and recipe.name == "perfect_information":
    # A conv torso's heads are AlphaZero's unless widths are given.
    torso = policy_value.resolve_torso(pyspiel.load_game(_GAME.value),
                                       network.torso)
    if torso == "conv":
      network = dataclasses.replace(network, **{
          name: value for name, value in policy_value.CONV_HEADS.items()
          if not _given(name)})
  return network


def config_from_flags(recipe_name: str, run_dir: str,
                      saved_network: NetworkConfig | None = None
                      ) -> tuple[TrainConfig, EvalConfig]:
  """The training and evaluation settings of the flags for `recipe_name`:
  the one place where flags become configs (every TrainConfig field, every
  NetworkConfig field and every recipe setting has a flag;
  tests/training_test.py checks it). Unset flags take the recipe's
  defaults, or the game's presets where the recipe has them. Raises ValueError, in one line, for a flag the recipe does not
  use."""
  recipe = recipes.get(recipe_name)
  foreign = [f"--{name}" for name in training_flags()
             if _given(name) and recipe_name not in flag_recipes(name)]
  if foreign:
    name = foreign[0][2:]
    raise ValueError(
        f"train: {foreign[0]} is not used by the {recipe_name} recipe; it "
        f"is for {' and '.join(flag_recipes(name))} (--recipe picks one)")
  fields = dict(recipe.defaults)

  def take(flag_name: str, field: str | None = None):
    field = field or flag_name
    value = flags.FLAGS[flag_name].value
    if value is not None or _given(flag_name):
      fields[field] = value

  for name in ("batch_size", "replay_size", "min_replay",
               "max_updates_per_example", "solver_simulations", "q_search",
               "q_recursive", "epsilon", "p_td1", "greedy_after",
               "solvers", "solver_value_targets", "actors"):
    take(name)
  take("simulations", "actor_simulations")
  take("expansions_per_update", "actor_expansions_per_update")
  minutes, steps = _MINUTES.value, _STEPS.value
  if minutes is None:
    minutes = 0.0 if steps else 60.0
  settings = {}
  for name in recipes.settings_of(recipe_name):
    settings[name] = flags.FLAGS[name].value
  for name, (value, _) in game_presets(recipe_name).items():
    if not _given(name):  # (a TrainConfig field or a recipe setting)
      (settings if name in settings else fields)[name] = value
  checkpoint = _CHECKPOINT.value or os.path.join(run_dir, "checkpoint.npz")
  snapshot_dir = (_SNAPSHOT_DIR.value if _SNAPSHOT_DIR.value is not None
                  else os.path.join(run_dir, "snapshots"))
  checkpoint_every = _CHECKPOINT_EVERY.value
  if checkpoint_every is None:
    checkpoint_every = 1000
  config = TrainConfig(
      game=_GAME.value, recipe=recipe_name, recipe_settings=settings,
      steps=steps or 0, minutes=minutes, snapshot_dir=snapshot_dir,
      snapshot_minutes=_SNAPSHOT_MIN.value, backend=_BACKEND.value,
      publish_every=_PUBLISH.value, seed=_SEED.value,
      replay_memory_mb=_REPLAY_MB.value,
      ray_address=_RAY_ADDRESS.value,
      learner_platform=_LEARNER_PLATFORM.value,
      learner_threads=_LEARNER_THREADS.value,
      worker_platform=_WORKER_PLATFORM.value, inference=_INFERENCE.value,
      checkpoint=checkpoint, checkpoint_every=checkpoint_every,
      keep_checkpoints=_KEEP.value,
      solver_expansions_per_update=_SOLVER_C.value, solver=_SOLVER.value,
      solver_tolerance=_SOLVER_TOLERANCE.value,
      idle_solvers_play=_IDLE_PLAY.value, walks_per_simulation=_WALKS.value,
      resign_threshold=_RESIGN.value, p_no_resign=_P_NO_RESIGN.value,
      max_moves=_MAX_MOVES.value, search_opponent_nodes=_SEARCH_OPPONENT.value,
      alpha=_ALPHA.value, max_queued_queries=_MAX_QUEUED.value,
      max_histories=_MAX_HISTORIES.value,
      network=network_from_flags(recipe, saved_network), **fields)
  evaluation = EvalConfig(every=_EVAL_EVERY.value, simulations=_EVAL_S.value,
                          seeds=_ints("eval_seeds", _EVAL_SEEDS.value),
                          csv=_EVAL_CSV.value, png=_EVAL_PNG.value,
                          measure=exploitability.sog_exploitability)
  return config, evaluation


def _saved(path: str) -> dict | None:
  """A checkpoint's metadata, or None where there is no file."""
  if not os.path.exists(path):
    return None
  try:
    return recipes.checkpoint_meta(path)
  except cvpn.CheckpointError:
    raise ValueError(f"train: {path!r} is not a checkpoint of this trainer; "
                     "pass another --run_dir, or --noresume to replace it"
                     ) from None


class _Curve:
  """The learning curve by default: each snapshot the trainer writes is
  measured against the recipe's baseline by `python -m
  open_spiel_sog.evaluation.curve` in a process of its own (its own
  session, so that a Ctrl-C meant for training does not reach it; it ends
  with this process), one at a time; each point is logged."""

  def __init__(self, game: str, recipe: str, run_dir: str, log):
    self._log = log
    self._opponent = curve.OPPONENTS[recipe]
    self._csv = os.path.join(run_dir, "curve.csv")
    self._args = [
        sys.executable, "-m", "open_spiel_sog.evaluation.curve",
        f"--game={game}", f"--opponent={self._opponent}",
        f"--time_limit={_CURVE_TIME.value}", f"--games={_CURVE_GAMES.value}",
        f"--csv={self._csv}", f"--png={os.path.join(run_dir, 'curve.png')}",
        "--with_parent"]
    self._stderr = os.path.join(run_dir, "curve.log")
    self._queue: queue.Queue = queue.Queue()
    self._process = None
    self._thread = threading.Thread(target=self._work, name="curve",
                                    daemon=True)

  def add(self, snapshot: str) -> None:
    """Queues `snapshot`'s point (the runner starts with the first)."""
    if not self._thread.is_alive():
      self._thread.start()
    self._queue.put(snapshot)

  def _work(self) -> None:
    while True:
      snapshot = self._queue.get()
      if snapshot is None:
        return
      with open(self._stderr, "a") as err:
        self._process = subprocess.Popen(
            self._args + [f"--snapshot={snapshot}"], stdout=subprocess.PIPE,
            stderr=err, text=True, start_new_session=True)
        out, _ = self._process.communicate()
      if self._process.returncode == 0 and out.strip():
        self._log(out.strip().splitlines()[-1])
      elif self._process.returncode not in (0, -signal.SIGKILL):
        self._log(f"curve: the point of {snapshot} failed (exit "
                  f"{self._process.returncode}; {self._stderr})")

  def finish(self, wait: bool = True) -> None:
    """Waits for the points still to measure (Ctrl-C skips them); without
    `wait` (a signal stopped the run), drops them."""
    if not self._thread.is_alive():
      return
    if not wait:
      self._skip()
      return
    pending = self._queue.qsize() + (
        self._process is not None and self._process.poll() is None)
    self._queue.put(None)
    if pending:
      self._log(f"curve: measuring {pending} snapshot(s) against "
                f"{self._opponent.split('(')[0]} "
                f"({_CURVE_GAMES.value} games at {_CURVE_TIME.value:g} s a "
                "move; Ctrl-C skips)")
    try:
      self._thread.join()
    except KeyboardInterrupt:
      self._skip()

  def _skip(self) -> None:
    while not self._queue.empty():
      self._queue.get_nowait()
    self._queue.put(None)
    if self._process is not None and self._process.poll() is None:
      os.killpg(self._process.pid, signal.SIGKILL)
      self._log("curve: skipped the point being measured")


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  log_file = []
  early = []  # (the lines before the run folder's log is open)

  def log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
    if not log_file:
      early.append(line)
    for f in log_file:
      f.write(line + "\n")
      f.flush()

  try:
    game = load_game(_GAME.value, "train")
  except ValueError as e:
    log(str(e))
    return 2
  if _STEPS.value is not None and _STEPS.value <= 0:
    log(f"train: steps must be > 0, got {_STEPS.value} (leave it unset for "
        "a run that --minutes bounds)")
    return 2
  run_dir = _RUN_DIR.value or default_run_dir(_GAME.value)
  checkpoint = _CHECKPOINT.value or os.path.join(run_dir, "checkpoint.npz")
  resume = _RESUME.value and os.path.exists(checkpoint)
  if _given("resume") and _RESUME.value and not resume:
    log(f"train: cannot resume: checkpoint {checkpoint!r} does not exist "
        "(rerunning without --resume starts the run)")
    return 2
  try:
    meta = _saved(checkpoint) if resume else None
  except ValueError as e:
    log(str(e))
    return 2
  if _RECIPE.value != "auto":
    recipe, why = _RECIPE.value, "as asked"
  elif meta is not None:
    recipe = recipes.recipe_of(meta)
    why = f"the recipe of the run in {run_dir} that this resumes"
  else:
    try:
      recipe, why = recipes.choose_recipe(game)
    except ValueError as e:  # (not a game sog plays)
      log(f"train: {e}")
      return 2
  log(f"train: {game}: recipe {recipe} ({why})")
  saved_network = None
  if meta is not None and "network" in meta:
    saved_network = NetworkConfig.from_json(meta["network"])
  try:
    config, evaluation = config_from_flags(recipe, run_dir, saved_network)
  except ValueError as e:
    log(str(e))
    return 2
  line = presets_line(recipe)
  if line:
    log(line)
  if resume:
    log(f"train: resuming {checkpoint} (--noresume starts over)")
  measure_curve = recipe in curve.OPPONENTS and _CURVE_GAMES.value != 0
  if measure_curve and (_CURVE_GAMES.value < 2 or _CURVE_GAMES.value % 2 or
                        _CURVE_TIME.value <= 0):
    log(f"train: --curve_games must be even (duplicate seats; 0: no curve) "
        f"and --curve_time_limit > 0, got {_CURVE_GAMES.value} and "
        f"{_CURVE_TIME.value:g}")
    return 2
  writer = _TensorBoard(_TENSORBOARD.value) if _TENSORBOARD.value else None
  curve_runner = (_Curve(_GAME.value, recipe, run_dir, log) if measure_curve
                  else None)
  try:
    trainer = Trainer(config, resume=resume, evaluation=evaluation,
                      progress=_PROGRESS.value, summary_writer=writer,
                      log=log,
                      on_snapshot=curve_runner.add if curve_runner else None)
  except (ValueError, cvpn.CheckpointError) as e:
    message = str(e)
    log(message if message.startswith("train:") else f"train: {message}")
    return 2
  # (The run folder is made once the run can start: a refused command
  # leaves nothing behind.)
  os.makedirs(run_dir, exist_ok=True)
  log_file.append(open(os.path.join(run_dir, "train.log"), "a"))
  log_file[0].write("".join(line + "\n" for line in early))
  try:
    with stop_on_signals(trainer, log=log) as received:
      summary = trainer.run()
  finally:
    if writer is not None:
      writer.close()
  summary["run_dir"] = run_dir
  verb = f"stopped ({summary['stopped']})" if summary["stopped"] else "trained"
  log(f"{verb} {summary['game']} ({recipe}) at step {summary['steps']} after "
      f"{summary['minutes']:.1f} minutes in all ({summary['examples']} "
      f"examples this run); checkpoint: {summary['checkpoint']}")
  if curve_runner is not None:
    curve_runner.finish(wait=not received)
    rows = curve.read(os.path.join(run_dir, "curve.csv"))
    summary["curve"] = [{k: r[k] for k in ("minutes", "score", "score_low",
                                           "score_high", "games")}
                        for r in rows]
  if _JSON.value:
    print(json.dumps(summary, default=float))
  # As a shell reports a process a signal ended: 130 (SIGINT), 143 (SIGTERM).
  return 128 + received[0] if received else 0


if __name__ == "__main__":
  app.run(main)
