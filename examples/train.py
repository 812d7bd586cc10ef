r"""Trains a CVPN by sound self-play (Algorithm 2 of the SoG paper).

    python examples/train.py --game=kuhn_poker --steps=2000 \
        --checkpoint=/tmp/kuhn.npz --eval_every=500

Actors play self-play games with SoG(actor_simulations,
actor_expansions_per_update) re-solving at every decision; query solvers run
SoG(solver_simulations, solver_expansions_per_update) from the queries for
value targets; the learner trains the network on a sliding-window replay
buffer. For games small enough for OpenSpiel's exact exploitability,
`--eval_every` measures SoG's exploitability with the current network and
writes it to `--eval_csv` and `--eval_png`. With the tensorboard extra
installed (tensorflow and tensorboard), `--tensorboard_dir` gets TensorBoard
summaries; without it, the run stops before training. `--resume`
continues from `--checkpoint`. `--json` prints a summary as the last line.

Ctrl-C (SIGINT) or SIGTERM stops the workers, writes the checkpoint, prints
the summary and exits with 130 or 143; `--resume` continues from there. A
second signal aborts at once.

The shipped networks in open_spiel_sog/data/ were made with the commands in
README.md ("Shipped networks").
"""

from __future__ import annotations

import json
import re
import sys

from absl import app
from absl import flags

from open_spiel_sog.algorithms.sog import cvpn
from open_spiel_sog.algorithms.training import BACKENDS
from open_spiel_sog.algorithms.training import EvalConfig
from open_spiel_sog.algorithms.training import INFERENCE
from open_spiel_sog.algorithms.training import TrainConfig
from open_spiel_sog.algorithms.training import LEARNER_THREADS
from open_spiel_sog.algorithms.training import PLATFORMS
from open_spiel_sog.algorithms.training import SOLVERS
from open_spiel_sog.algorithms.training import Trainer
from open_spiel_sog.algorithms.training import stop_on_signals
from open_spiel_sog.evaluation import exploitability

_D = TrainConfig()
_N = cvpn.NetworkConfig()
_E = EvalConfig()

_GAME = flags.DEFINE_string("game", _D.game, "Game string for load_game.")
_STEPS = flags.DEFINE_integer("steps", _D.steps, "Gradient updates in total.")
_ACTOR_S = flags.DEFINE_integer(
    "actor_simulations", _D.actor_simulations,
    "s of the actors' SoG(s, c) searches.")
_ACTOR_C = flags.DEFINE_float(
    "actor_expansions_per_update", _D.actor_expansions_per_update,
    "c of the actors' SoG(s, c) searches.")
_SOLVER_S = flags.DEFINE_integer(
    "solver_simulations", _D.solver_simulations,
    "s of the query solvers' SoG(s, c) searches.")
_SOLVER_C = flags.DEFINE_float(
    "solver_expansions_per_update", _D.solver_expansions_per_update,
    "c of the query solvers' SoG(s, c) searches.")
_SOLVER = flags.DEFINE_enum(
    "solver", _D.solver, list(SOLVERS),
    "How query solvers value a query: search (SoG(solver_simulations, "
    "solver_expansions_per_update) with the network at its leaves, the "
    "paper's) or exact (the query's subgame solved to --solver_tolerance: "
    "exact targets for games with small subgames, such as liar's dice; one "
    "target per query, no recursive queries).")
_SOLVER_TOLERANCE = flags.DEFINE_float(
    "solver_tolerance", _D.solver_tolerance,
    "With --solver=exact: the subgame exploitability (a fraction of the "
    "utility range) each query is solved to.")
_ACTORS = flags.DEFINE_integer("actors", _D.actors, "Actor workers.")
_SOLVERS = flags.DEFINE_integer("solvers", _D.solvers,
                                "Query solver workers (0: no value targets "
                                "from queries).")
_BACKEND = flags.DEFINE_enum(
    "backend", _D.backend, list(BACKENDS),
    "inline: one process; process: multiprocessing workers; ray: Ray actors "
    "(pip install 'open_spiel_sog[ray]').")
_IDLE_PLAY = flags.DEFINE_bool(
    "idle_solvers_play", _D.idle_solvers_play,
    "A query solver with no query waiting plays a self-play game instead of "
    "waiting (--noidle_solvers_play: it waits).")
_WALKS = flags.DEFINE_integer(
    "walks_per_simulation", _D.walks_per_simulation,
    "Walks a search's expansion simulation may draw: walks ending at "
    "terminals already in the tree are drawn again (1: each walk is a "
    "simulation, the search the shipped networks were trained with).")
_RAY_ADDRESS = flags.DEFINE_string(
    "ray_address", _D.ray_address,
    "With --backend=ray: the Ray cluster to train on (host:port of its head, "
    "or 'auto' for the one `ray start` runs here); empty starts a local Ray.")
_LEARNER_PLATFORM = flags.DEFINE_enum(
    "learner_platform", _D.learner_platform, list(PLATFORMS),
    "Where the learner's gradient steps run (gpu: an error when JAX sees "
    "none).")
_LEARNER_THREADS = flags.DEFINE_enum(
    "learner_threads", _D.learner_threads, list(LEARNER_THREADS),
    "Compute threads of the learner's JAX on the CPU: all (a pool as wide "
    "as the machine), one (the workers keep their cores) or auto (one when "
    "the workers take every core but one).")
_WORKER_PLATFORM = flags.DEFINE_enum(
    "worker_platform", _D.worker_platform, list(PLATFORMS),
    "Where the workers' JAX runs (searches are faster on the CPU; cpu keeps "
    "them off the accelerator's memory).")
_INFERENCE = flags.DEFINE_enum(
    "inference", _D.inference, list(INFERENCE),
    "Where the workers' network calls run: local (each worker's own copy of "
    "the network, numpy on its host) or cpu / gpu (one inference service "
    "process batches every worker's leaf batches into one jitted forward "
    "pass on that platform; --backend=process or ray (there: a Ray actor on "
    "the learner's node), --input=slots only; gpu: "
    "an error when JAX sees none).")
_BATCH = flags.DEFINE_integer("batch_size", _D.batch_size,
                              "Examples per gradient update.")
_REPLAY = flags.DEFINE_integer("replay_size", _D.replay_size,
                               "Sliding-window replay buffer capacity.")
_MIN_REPLAY = flags.DEFINE_integer("min_replay", _D.min_replay,
                                   "Examples before learning starts.")
_MAX_UPDATES = flags.DEFINE_float(
    "max_updates_per_example", _D.max_updates_per_example,
    "Learning waits for data beyond this many uses per example.")
_Q_SEARCH = flags.DEFINE_float("q_search", _D.q_search,
                               "Queries pushed per actor search, on average.")
_Q_RECURSIVE = flags.DEFINE_float(
    "q_recursive", _D.q_recursive,
    "Queries pushed per solver search, on average.")
_P_TD1 = flags.DEFINE_float("p_td1", _D.p_td1,
                            "Probability of a TD(1) value target per main-line"
                            " public state.")
_EPSILON = flags.DEFINE_float("epsilon", _D.epsilon,
                              "Uniform mix of the self-play policy.")
_RESIGN = flags.DEFINE_float(
    "resign_threshold", None,
    "Resign below this expected value (utility units); unset: never resign.")
_P_NO_RESIGN = flags.DEFINE_float("p_no_resign", _D.p_no_resign,
                                  "Share of games played out with resigning "
                                  "on.")
_MAX_MOVES = flags.DEFINE_integer("max_moves", _D.max_moves,
                                  "Moves per self-play game (0: unlimited).")
_GREEDY_AFTER = flags.DEFINE_integer(
    "greedy_after", _D.greedy_after, "Play greedily after this many moves "
    "(0: never).")
_SEARCH_OPPONENT = flags.DEFINE_bool(
    "search_opponent_nodes", _D.search_opponent_nodes,
    "Each seat also re-solves at the other's decisions, as the sog bot does "
    "(--nosearch_opponent_nodes: at its own only).")
_ALPHA = flags.DEFINE_float(
    "alpha", _D.alpha,
    "The re-solving gadget's mix with the previous opponent range.")
_MAX_QUEUED = flags.DEFINE_integer(
    "max_queued_queries", _D.max_queued_queries,
    "Capacity of the query queue (new queries are dropped when it is full).")
_PUBLISH = flags.DEFINE_integer("publish_every", _D.publish_every,
                                "Steps between parameter publications.")
_SEED = flags.DEFINE_integer("seed", _D.seed, "Seed of the run.")
_HIDDEN = flags.DEFINE_list("hidden", [str(h) for h in _N.hidden],
                            "Hidden layer widths of the MLP.")
_POLICY_HIDDEN = flags.DEFINE_list(
    "policy_hidden", [str(h) for h in _N.policy_hidden],
    "Hidden layer widths of the policy MLP (its own torso).")
_OPTIMIZER = flags.DEFINE_enum("optimizer", _N.optimizer,
                               list(cvpn.OPTIMIZERS), "Optimiser.")
_LR = flags.DEFINE_float("learning_rate", _N.learning_rate,
                         "Initial learning rate alpha_0.")
_LR_DECAY = flags.DEFINE_float("lr_decay_rate", _N.lr_decay_rate,
                               "d in alpha_0 * d^(t / T_decay).")
_LR_STEPS = flags.DEFINE_integer("lr_decay_steps", _N.lr_decay_steps,
                                 "T_decay in alpha_0 * d^(t / T_decay).")
_VALUE_W = flags.DEFINE_float("value_weight", _N.value_weight,
                              "Weight of the value (Huber) loss.")
_SOLVER_TARGETS = flags.DEFINE_integer(
    "solver_value_targets", _D.solver_value_targets,
    "Value targets per solver search: the root plus up to N-1 interior "
    "public states of its tree (1: the root only, as in the paper).")
_POLICY_W = flags.DEFINE_float("policy_weight", _N.policy_weight,
                               "Weight of the policy (cross-entropy) loss.")
_PRIOR_T = flags.DEFINE_float("prior_temperature", _N.prior_temperature,
                              "Softmax temperature of the prior policy.")
_HUBER_DELTA = flags.DEFINE_float(
    "huber_delta", _N.huber_delta,
    "Delta of the value Huber loss (values are in units of the largest "
    "absolute utility: 1 is the whole payoff scale).")
_WEIGHT_DECAY = flags.DEFINE_float("weight_decay", _N.weight_decay,
                                   "L2 penalty on the weights (0: none).")
_INPUT = flags.DEFINE_enum(
    "input", _D.network.input, list(cvpn.INPUT_CHOICES),
    "The network's input: slots (each player's private parts numbered by a "
    "walk of the whole game: small games), tokens (one token per "
    "infostate of the public state, exact or sampled: any game) or auto "
    "(slots where the game's public tree enumerates within 20,000 public "
    "states and 1,000,000 histories, none of its public states past "
    "--max_histories; tokens otherwise; printed at start).")
_TOKEN_WIDTH = flags.DEFINE_integer(
    "token_width", _N.token_width,
    "With --input=tokens: the width of the infostate and public "
    "embeddings.")
_CONV_CHANNELS = flags.DEFINE_list(
    "conv_channels", [str(c) for c in _N.conv_channels],
    "With --input=tokens, for board-shaped tensors: channels of the 3x3 "
    "convolutions.")
_MAX_HISTORIES = flags.DEFINE_integer(
    "max_histories", _D.max_histories,
    "With --input=tokens: public states with more histories are samples of "
    "this many, as in the sog bot (0: every public state exact).")
_CHECKPOINT = flags.DEFINE_string("checkpoint", _D.checkpoint,
                                  "Where to write the checkpoint (.npz).")
_CHECKPOINT_EVERY = flags.DEFINE_integer(
    "checkpoint_every", _D.checkpoint_every,
    "Steps between checkpoints (0: only at the end).")
_KEEP = flags.DEFINE_bool("keep_checkpoints", _D.keep_checkpoints,
                          "Keep every periodic checkpoint as "
                          "PATH.step-N.npz.")
_RESUME = flags.DEFINE_bool("resume", False,
                            "Continue from --checkpoint.")
_EVAL_EVERY = flags.DEFINE_integer(
    "eval_every", _E.every, "Steps between exact exploitability measurements "
    "of SoG with the current network (small games; 0: never).")
_EVAL_S = flags.DEFINE_integer("eval_simulations", _E.simulations,
                               "s of the evaluated SoG(s, 1).")
_EVAL_SEEDS = flags.DEFINE_list("eval_seeds", [str(s) for s in _E.seeds],
                                "Seeds of each exploitability measurement.")
_EVAL_CSV = flags.DEFINE_string("eval_csv", _E.csv,
                                "CSV of (step, seconds, examples, loss, "
                                "exploitability).")
_EVAL_PNG = flags.DEFINE_string("eval_png", _E.png,
                                "PNG plot of exploitability against steps.")
_TENSORBOARD = flags.DEFINE_string(
    "tensorboard_dir", "",
    "TensorBoard summaries (needs tensorflow and tensorboard: pip install "
    "'open_spiel_sog[tensorboard]').")
_PROGRESS = flags.DEFINE_bool("progress", True, "Show a progress bar.")
_JSON = flags.DEFINE_bool("json", False,
                          "Print a JSON summary as the last line.")


_TENSORBOARD_INSTALL = "pip install 'open_spiel_sog[tensorboard]'"


def _one_line(error: Exception) -> str:
  """An error's message on one line, without TensorFlow's op decorations
  ("{{function_node ...}}" before it, "[Op:...] name: ..." after it)."""
  message = str(getattr(error, "message", error))
  message = re.sub(r"\{\{[^}]*\}\}|\[Op:.*", "", message, flags=re.DOTALL)
  return " ".join(message.split())


class _TensorBoard:
  """TensorBoard summaries through tensorflow, imported only here.

  The constructor checks that summaries can be written, before any training:
  tensorflow's `tf.summary.scalar` is implemented by the separate tensorboard
  package, which tensorflow does not install. When either is missing, or
  `logdir` cannot be written, it exits with a one-line message.
  """

  def __init__(self, logdir: str):
    try:
      import tensorflow as tf  # pylint: disable=g-import-not-at-top
      # What tf.summary.scalar imports when it is called.
      from tensorboard.summary import v2  # pylint: disable=g-import-not-at-top,unused-import
    except ImportError as e:
      raise SystemExit(
          f"train: --tensorboard_dir needs tensorflow and tensorboard "
          f"({_one_line(e)}): {_TENSORBOARD_INSTALL}") from None
    try:
      # TensorFlow only writes summaries here; the GPUs are left to JAX.
      tf.config.set_visible_devices([], "GPU")
    except RuntimeError:  # TensorFlow's devices were already initialised.
      pass
    try:
      # Without a default writer this records nothing, but it runs the code
      # every summary runs.
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


def config_from_flags() -> tuple[TrainConfig, EvalConfig]:
  """The training and evaluation settings of the flags: the one place where
  flags become configs (every field of TrainConfig, of the NetworkConfig it
  holds and of EvalConfig but its `measure` has a flag; tests/training_test.py
  checks it)."""
  try:
    hidden = tuple(int(h) for h in _HIDDEN.value)
    policy_hidden = tuple(int(h) for h in _POLICY_HIDDEN.value)
    conv_channels = tuple(int(c) for c in _CONV_CHANNELS.value)
    seeds = tuple(int(s) for s in _EVAL_SEEDS.value)
  except ValueError as e:
    raise SystemExit("--hidden, --policy_hidden, --conv_channels and "
                     f"--eval_seeds take integers: {e}") from None
  network = cvpn.NetworkConfig(
      hidden=hidden, policy_hidden=policy_hidden, optimizer=_OPTIMIZER.value,
      learning_rate=_LR.value, lr_decay_rate=_LR_DECAY.value,
      lr_decay_steps=_LR_STEPS.value, value_weight=_VALUE_W.value,
      policy_weight=_POLICY_W.value, huber_delta=_HUBER_DELTA.value,
      prior_temperature=_PRIOR_T.value, weight_decay=_WEIGHT_DECAY.value,
      input=_INPUT.value, token_width=_TOKEN_WIDTH.value,
      conv_channels=conv_channels)
  config = TrainConfig(
      game=_GAME.value, steps=_STEPS.value,
      actor_simulations=_ACTOR_S.value,
      actor_expansions_per_update=_ACTOR_C.value,
      solver_simulations=_SOLVER_S.value,
      solver_expansions_per_update=_SOLVER_C.value,
      solver=_SOLVER.value, solver_tolerance=_SOLVER_TOLERANCE.value,
      actors=_ACTORS.value, solvers=_SOLVERS.value, backend=_BACKEND.value,
      ray_address=_RAY_ADDRESS.value, idle_solvers_play=_IDLE_PLAY.value,
      walks_per_simulation=_WALKS.value, max_histories=_MAX_HISTORIES.value,
      learner_platform=_LEARNER_PLATFORM.value,
      learner_threads=_LEARNER_THREADS.value,
      worker_platform=_WORKER_PLATFORM.value,
      inference=_INFERENCE.value,
      batch_size=_BATCH.value, replay_size=_REPLAY.value,
      min_replay=_MIN_REPLAY.value,
      max_updates_per_example=_MAX_UPDATES.value, q_search=_Q_SEARCH.value,
      q_recursive=_Q_RECURSIVE.value,
      solver_value_targets=_SOLVER_TARGETS.value, p_td1=_P_TD1.value,
      epsilon=_EPSILON.value, resign_threshold=_RESIGN.value,
      p_no_resign=_P_NO_RESIGN.value, greedy_after=_GREEDY_AFTER.value,
      max_moves=_MAX_MOVES.value,
      search_opponent_nodes=_SEARCH_OPPONENT.value, alpha=_ALPHA.value,
      max_queued_queries=_MAX_QUEUED.value, publish_every=_PUBLISH.value,
      checkpoint=_CHECKPOINT.value, checkpoint_every=_CHECKPOINT_EVERY.value,
      keep_checkpoints=_KEEP.value, seed=_SEED.value, network=network)
  evaluation = EvalConfig(every=_EVAL_EVERY.value,
                          simulations=_EVAL_S.value, seeds=seeds,
                          csv=_EVAL_CSV.value, png=_EVAL_PNG.value,
                          measure=exploitability.sog_exploitability)
  return config, evaluation


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  config, evaluation = config_from_flags()
  writer = _TensorBoard(_TENSORBOARD.value) if _TENSORBOARD.value else None
  try:
    trainer = Trainer(config, resume=_RESUME.value, evaluation=evaluation,
                      progress=_PROGRESS.value, summary_writer=writer)
  except (ValueError, cvpn.CheckpointError) as e:
    message = str(e)
    if not message.startswith("train:"):
      message = f"train: {message}"
    print(message, file=sys.stderr)
    return 2
  try:
    with stop_on_signals(trainer) as received:
      summary = trainer.run()
  finally:
    if writer is not None:
      writer.close()
  verb = f"stopped ({summary['stopped']})" if summary["stopped"] else "trained"
  print(f"{verb} {summary['game']} at step {summary['steps']} after "
        f"{summary['seconds']:.0f} s ({summary['examples']} examples); "
        f"checkpoint: {summary['checkpoint']}", file=sys.stderr)
  if _JSON.value:
    print(json.dumps(summary, default=float))
  # As a shell reports a process a signal ended: 130 (SIGINT), 143 (SIGTERM).
  return 128 + received[0] if received else 0


if __name__ == "__main__":
  app.run(main)
