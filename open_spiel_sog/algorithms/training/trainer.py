"""The learner: trains a CVPN on the examples its backend's workers send.

`Trainer(config).run()` trains a CVPN by sound self-play (DESIGN.md section
8): workers (`selfplay.Worker`) play self-play games and solve queries; their
encoded examples fill a sliding-window replay buffer; the learner takes
minibatch steps, never more than `max_updates_per_example` uses per example
added, and publishes its parameters to the workers every `publish_every`
steps. The workers run in a backend (`backends`: inline, process or ray).

Checkpoints (`cvpn.save_checkpoint`) hold the parameters, optimiser state,
step, network and training config and the game; `Trainer(config,
resume=True)` continues from `config.checkpoint`. The replay buffer is not
saved: a resumed run refills it before learning.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import os
import signal
import sys
import time
from typing import Any, Callable

import numpy as np
import pyspiel

from open_spiel_sog.algorithms.sog import cvpn
from open_spiel_sog.algorithms.training import inference
from open_spiel_sog.algorithms.training import recipes
from open_spiel_sog.algorithms.training.backends import make_backend
from open_spiel_sog.algorithms.training.config import TrainConfig
from open_spiel_sog.algorithms.training.replay import ReplayBuffer
from open_spiel_sog.public_state import PublicStateObserver
from open_spiel_sog.public_state import PublicTreeTooLarge
from open_spiel_sog.public_state import search_game
from open_spiel_sog.utils import threads as threads_lib
from open_spiel_sog.utils.progress import progress_bar


def learner_device(platform: str, threads: str = "all"):
  """The JAX device the learner's steps run on ("cpu" or "gpu").

  For "cpu" in a process whose JAX has not started yet, JAX is kept off any
  accelerator altogether (no GPU memory is taken); "gpu" is an error that
  says so when JAX sees no GPU. `threads` "one" (`TrainConfig.
  learner_threads`) gives the learner's CPU computations one thread where
  JAX has not started yet (`utils.threads.start_jax_on_one_thread`).
  """
  import jax  # pylint: disable=g-import-not-at-top
  if platform == "cpu" and not threads_lib.jax_started() and (
      not os.environ.get("JAX_PLATFORMS")):
    jax.config.update("jax_platforms", "cpu")
  if threads == "one":
    threads_lib.start_jax_on_one_thread()
  if platform == "cpu":
    return jax.devices("cpu")[0]
  try:
    return jax.devices("gpu")[0]
  except RuntimeError:
    raise ValueError(
        f"train: learner_platform 'gpu', but JAX sees no GPU (its devices: "
        f"{', '.join(sorted({d.platform for d in jax.devices()}))}); install "
        "a CUDA build of jax (pip install 'jax[cuda12]') or use "
        "learner_platform 'cpu'") from None


@dataclasses.dataclass
class EvalConfig:
  """Exact exploitability of SoG with the current network, at intervals.

  Attributes:
    every: steps between evaluations (0: never).
    simulations: SoG(s, 1) of the evaluated bot.
    seeds: seeds of the policy constructions.
    csv: where to append rows (step, seconds, examples, loss, exploitability).
    png: where to plot exploitability against steps (needs matplotlib).
    measure: the measurement, measure(game, sog bot params, seeds=,
      value_fn=) -> {"mean": exploitability, ...}; needed when `every` > 0.
      It lives above this layer: examples/train.py passes
      `open_spiel_sog.evaluation.exploitability.sog_exploitability`.
  """
  every: int = 0
  simulations: int = 100
  seeds: tuple[int, ...] = (0,)
  csv: str = ""
  png: str = ""
  measure: Callable[..., dict[str, Any]] | None = None


class Trainer:
  """Runs a training job (see the module docstring)."""

  def __init__(self, config: TrainConfig, *, resume: bool = False,
               evaluation: EvalConfig | None = None, progress: bool = True,
               log: Callable[[str], None] | None = None,
               summary_writer=None,
               backend_factory: Callable[[TrainConfig, Any], Any] = make_backend,
               read_losses_every: int = 10,
               on_snapshot: Callable[[str], None] | None = None):
    """`backend_factory(config, net)` makes the backend (`make_backend`:
    the one `config.backend` names; the ingest benchmark passes its own).
    The learner reads its steps' losses every `read_losses_every` steps
    (`read_losses`; 1 waits for every step, as it did before).
    `on_snapshot(path)` is told of each snapshot written (examples/train.py
    measures its learning curve point)."""
    config.validate()
    recipes.get(config.recipe).validate(config)
    if read_losses_every < 1:
      raise ValueError(f"train: read_losses_every must be >= 1, got "
                       f"{read_losses_every}")
    inference.check_platform(config.inference)  # "gpu" needs a GPU
    self.log = log or (lambda s: print(s, file=sys.stderr))
    config = self._with_input(config, resume)
    config.validate()
    self._backend_factory = backend_factory
    self._read_losses_every = read_losses_every
    self._on_snapshot = on_snapshot
    self.config = config
    self.device = learner_device(config.learner_platform,
                                 config.resolved_learner_threads())
    self.game = search_game(pyspiel.load_game(config.game))
    self.evaluation = evaluation or EvalConfig()
    if self.evaluation.every > 0 and self.evaluation.measure is None:
      raise ValueError("evaluation every %d steps needs EvalConfig.measure "
                       "(e.g. open_spiel_sog.evaluation.exploitability."
                       "sog_exploitability)" % self.evaluation.every)
    self.progress = progress
    self.summary_writer = summary_writer
    self.recipe = recipes.get(config.recipe)
    if self.evaluation.every > 0 and not self.recipe.exact_evaluation:
      raise ValueError(
          f"train: exact exploitability during training (eval_every) "
          f"measures the public_states recipe's CVPN; the {config.recipe} "
          "recipe's network is measured by benchmarks/learning_curve.py")
    if resume:
      if not config.checkpoint:
        raise ValueError("train: resume needs a checkpoint path")
      if not os.path.exists(config.checkpoint):
        raise cvpn.CheckpointError(
            f"cannot resume: checkpoint {config.checkpoint!r} does not exist")
      self.net = self.recipe.load_network(config.checkpoint, self.game)
      saved_recipe = recipes.recipe_of(self.net.metadata)
      if saved_recipe != config.recipe:
        raise cvpn.CheckpointError(
            f"cannot resume from {config.checkpoint!r}: it was trained by "
            f"the {saved_recipe} recipe, not {config.recipe}")
      if not self.net.metadata.get("has_optimizer"):
        raise cvpn.CheckpointError(
            f"cannot resume from {config.checkpoint!r}: it holds no "
            "optimiser state")
      saved = self.net.metadata.get("extra", {}).get("train", {})
      if saved.get("network") and cvpn.NetworkConfig.from_json(
          saved["network"]) != config.network:
        raise cvpn.CheckpointError(
            f"cannot resume from {config.checkpoint!r}: it was trained with "
            f"network settings {saved['network']}, not "
            f"{config.network.to_json()}")
      self.log(f"resuming {config.checkpoint} at step {self.net.step}")
    else:
      try:
        self.net = self.recipe.make_network(config, self.game)
      except ValueError as e:  # the slot input's walk of the whole game
        if config.network.input != "slots" or not self.recipe.query_solvers:
          raise
        why = (f"it has more than "
               f"{PublicStateObserver(self.game).config.max_public_states:,}"
               " public states" if isinstance(e, PublicTreeTooLarge)
               else str(e))
        raise ValueError(
            "train: input=slots numbers private parts by a walk of the whole "
            f"public tree, which {self.game} does not allow ({why}); "
            "input=tokens (or auto) trains it") from None
      with self._on_device():
        self.net.init(config.seed)
    extra = getattr(self.net, "metadata", {}).get("extra", {})
    self._previous_seconds = float(extra.get("train_seconds", 0.0))
    self._previous_examples = int(extra.get("examples", 0))
    self._previous_games = int(extra.get("games", 0))
    self._started = None
    self.buffer = ReplayBuffer(
        config.replay_size,
        config.replay_memory_mb * 2**20 if config.replay_memory_mb else None)
    self.rng = np.random.default_rng([config.seed, 7])
    self.history: list[dict[str, Any]] = []
    self.stopped: str | None = None
    self.backend = None
    self.timing: dict[str, float] = {}

  def _with_input(self, config: TrainConfig, resume: bool) -> TrainConfig:
    """`config` with its input "auto" resolved (a resumed run takes its
    checkpoint's input), the choice logged."""
    if resume and config.network.input == "auto" and os.path.exists(
        config.checkpoint) and recipes.get(
            config.recipe).network_input is None:
      saved = cvpn.read_checkpoint(config.checkpoint)[0]["network"]["input"]
      config = dataclasses.replace(config, network=dataclasses.replace(
          config.network, input=saved))
      why = f"input={saved} (auto: the checkpoint's)"
    else:
      config, why = recipes.get(config.recipe).resolve(config)
    self.log(f"train: {config.game}: {why}")
    return config

  def _on_device(self):
    import jax  # pylint: disable=g-import-not-at-top
    return jax.default_device(self.device)

  def train_seconds(self) -> float:
    """Seconds of training in this run, earlier runs it resumed included."""
    return self._previous_seconds + (
        time.perf_counter() - self._started if self._started else 0.0)

  def metadata(self) -> dict[str, Any]:
    """What a checkpoint of this run says of itself (its `extra`): the
    recipe, the settings, the versions it was trained with, and its
    examples, games and wall minutes so far."""
    seconds = self.train_seconds()
    games = self._previous_games + int(
        (self.backend.stats if self.backend is not None else {}).get(
            "games", 0))
    return {"trainer": "examples/train.py", "recipe": self.config.recipe,
            "train": self.config.to_json(),
            "train_seconds": round(seconds, 1),
            "minutes": round(seconds / 60, 2),
            "examples": self._previous_examples + self.buffer.added,
            "games": games, "versions": versions()}

  def save(self, path: str | None = None, include_optimizer: bool = True
           ) -> None:
    path = path or self.config.checkpoint
    if path:
      self.recipe.save(self.net, path, self.game, self.metadata(),
                       include_optimizer=include_optimizer)

  def evaluate(self) -> dict[str, Any]:
    """Exact exploitability of SoG(eval.simulations, 1) with the network."""
    net = cvpn.make_network(self.net.encoder.observer, self.config.network,
                            self.net.encoder)
    net.params = self.net.params
    value_fn = cvpn.value_function_for(net)
    return self.evaluation.measure(
        self.game, {"simulations": self.evaluation.simulations,
                    "value_function": "cvpn"},
        seeds=self.evaluation.seeds, value_fn=value_fn)

  def _record_eval(self, started: float, losses) -> None:
    ev = self.evaluation
    result = self.evaluate()
    row = {"step": self.net.step,
           "seconds": round(time.perf_counter() - started, 2),
           "examples": self.buffer.added,
           "loss": float(np.mean(losses)) if losses else float("nan"),
           "exploitability": result["mean"]}
    self.history.append(row)
    self.log(f"step {row['step']}: exploitability of SoG("
             f"{ev.simulations}, 1) = {row['exploitability']:.5f}")
    if self.summary_writer is not None:
      self.summary_writer.scalar("exploitability", row["exploitability"],
                                 row["step"])
    if ev.csv:
      new = not os.path.exists(ev.csv)
      with open(ev.csv, "a") as f:
        if new:
          f.write(",".join(row) + "\n")
        f.write(",".join(str(v) for v in row.values()) + "\n")
    if ev.png:
      plot_exploitability(self.history, ev.png,
                          title=f"SoG({ev.simulations}, 1) on {self.game}")

  def _progress_line(self, losses) -> str:
    """The once-a-minute progress line."""
    stats = self.backend.stats if self.backend is not None else {}
    seconds = self.train_seconds()
    return (f"[{seconds / 60:6.1f} min] step {self.net.step} examples "
            f"{self._previous_examples + self.buffer.added} games "
            f"{self._previous_games + int(stats.get('games', 0))} loss "
            f"{np.mean(losses) if losses else float('nan'):.4f}")

  def snapshot(self) -> str:
    """A copy of the network (no optimiser state) in `snapshot_dir`,
    named by the run's minute (min_MMM.npz); returns its path."""
    minutes = int(round(self.train_seconds() / 60))
    path = os.path.join(self.config.snapshot_dir, f"min_{minutes:03d}.npz")
    os.makedirs(self.config.snapshot_dir, exist_ok=True)
    self.save(path, include_optimizer=False)
    if self._on_snapshot is not None:
      self._on_snapshot(path)
    return path

  def request_stop(self, reason: str = "stopped") -> None:
    """Ends `run()` after the current step (safe from a signal handler): the
    workers stop, the checkpoint is written and the summary returned, with
    `stopped` set to `reason`."""
    self.stopped = reason

  def run(self, monitor: Callable[["Trainer"], None] | None = None
          ) -> dict[str, Any]:
    """Trains to `config.steps` or until `request_stop()`; returns a summary.

    `monitor(trainer)`, when given, is called after every pass of the loop
    (the throughput benchmark samples `trainer.timing`, `trainer.buffer` and
    `trainer.backend` there, and may call `request_stop`).
    """
    cfg = self.config
    ev = self.evaluation
    self.backend = backend = self._backend_factory(
        dataclasses.replace(cfg, elapsed_seconds=self._previous_seconds),
        self.net)
    started = self._started = time.perf_counter()
    # Where the learner's time goes: gradient steps (train_s), blocked on the
    # workers' examples (wait_s), receiving examples that were ready
    # (poll_s: the queue, unpickling), adding them to the replay buffer
    # (add_s), sampling minibatches (sample_s), the loop's own bookkeeping
    # (other_s: losses, progress, summaries), publishing parameters
    # (publish_s), checkpoints and evaluations.
    timing = self.timing = dict.fromkeys(
        ("train_s", "wait_s", "poll_s", "add_s", "sample_s", "other_s",
         "publish_s", "checkpoint_s", "eval_s"), 0.0)
    now = time.perf_counter
    losses = collections.deque(maxlen=100)
    pending: list = []  # the losses of steps not read yet (JAX arrays)
    used = 0  # examples drawn by this run's minibatches
    start_step = self.net.step
    last = {}
    # The run's bounds: steps (0: none) and minutes in total (0: none).
    max_steps = cfg.steps or float("inf")
    deadline = (started + 60 * cfg.minutes - self._previous_seconds
                if cfg.minutes else float("inf"))
    next_report = started + 60.0
    next_snapshot = (started + 60 * cfg.snapshot_minutes
                     if cfg.snapshot_dir else float("inf"))
    noted = False  # (the replay ring's memory note is logged once)
    try:
      backend.start(self.net.params)
      with self._on_device(), progress_bar(
          cfg.steps - start_step if cfg.steps else None, f"train {cfg.game}",
          disable=not self.progress) as bar:
        while (self.net.step < max_steps and self.stopped is None and
               now() < deadline):
          t = now()
          if t >= next_report:
            next_report = t + 60.0
            self.log(self._progress_line(losses))
          if t >= next_snapshot:
            next_snapshot = t + 60 * cfg.snapshot_minutes
            self.snapshot()
          ready = ((len(self.buffer) >= max(cfg.min_replay, 1) or
                    self.buffer.at_memory_bound) and
                   used + cfg.batch_size <=
                   cfg.max_updates_per_example * self.buffer.added)
          t0 = now()
          batches = backend.poll(block=not ready)
          t1 = now()
          timing["poll_s" if ready else "wait_s"] += t1 - t0
          for batch in batches:
            self.buffer.add(batch)
          if self.buffer.note is not None and not noted:
            noted = True
            self.log(f"train: {self.buffer.note} (--replay_memory_mb)")
          t0 = now()
          timing["add_s"] += t0 - t1
          if monitor is not None:
            monitor(self)
          if not ready:
            continue
          t0 = now()
          minibatch = self.buffer.sample(cfg.batch_size, self.rng)
          t1 = now()
          timing["sample_s"] += t1 - t0
          pending.append(self.net.train_step_async(minibatch))
          t2 = now()
          timing["train_s"] += t2 - t1
          used += cfg.batch_size
          step = self.net.step
          bar.update(1)
          if step % self._read_losses_every == 0:
            # The steps' losses, read together: waiting for each step's
            # would leave the host idle while it computes.
            last = read_losses(pending, losses)
            t3 = now()
            timing["train_s"] += t3 - t2
            t2 = t3
            bar.set_postfix_str(
                f"loss {np.mean(losses):.4f} examples {self.buffer.added}")
            if self.summary_writer is not None and step % 10 == 0:
              for k, v in last.items():
                self.summary_writer.scalar(k, v, step)
              self.summary_writer.scalar("examples", self.buffer.added, step)
          t3 = now()
          timing["other_s"] += t3 - t2
          t2 = t3
          if step % cfg.publish_every == 0:
            backend.publish(self.net.params, step)
            t3 = now()
            timing["publish_s"] += t3 - t2
            t2 = t3
          if cfg.checkpoint_every and step % cfg.checkpoint_every == 0:
            self.save()
            if cfg.keep_checkpoints and cfg.checkpoint:
              self.save(f"{os.path.splitext(cfg.checkpoint)[0]}"
                        f".step-{step}.npz")
            t3 = now()
            timing["checkpoint_s"] += t3 - t2
            t2 = t3
          if ev.every and step % ev.every == 0:
            last = read_losses(pending, losses) or last
            self._record_eval(started, list(losses))
            timing["eval_s"] += now() - t2
    finally:
      backend.stop()
    last = read_losses(pending, losses) or last
    self.save()
    if cfg.snapshot_dir and self.stopped is None:
      self.snapshot()
    if self.stopped is None and ev.every and (
        not self.history or self.history[-1]["step"] != self.net.step):
      self._record_eval(started, list(losses))
    meta = self.metadata()
    return {"game": cfg.game, "recipe": cfg.recipe, "steps": self.net.step,
            "seconds": time.perf_counter() - started,
            "minutes": meta["minutes"], "games": meta["games"],
            "examples": self.buffer.added,
            "loss": float(np.mean(losses)) if losses else None,
            "last": last, "checkpoint": cfg.checkpoint or None,
            "stopped": self.stopped,
            "evaluations": self.history,
            "timing": {k: round(v, 3) for k, v in timing.items()},
            "worker_stats": backend.stats}


def versions() -> dict[str, str]:
  """The package's and OpenSpiel's versions (checkpoint metadata)."""
  from importlib import metadata  # pylint: disable=g-import-not-at-top
  out = {}
  for package in ("open_spiel_sog", "open_spiel"):
    try:
      out[package] = metadata.version(package)
    except metadata.PackageNotFoundError:
      out[package] = "unknown"
  return out


def read_losses(pending: list, losses) -> dict[str, float]:
  """Reads the losses of the steps in `pending` (JAX arrays, emptied) in
  one transfer, appends each step's loss to `losses` and returns the last
  step's losses ({} if there were none)."""
  if not pending:
    return {}
  import jax  # pylint: disable=g-import-not-at-top
  read = jax.device_get(pending)
  pending.clear()
  for metrics in read:
    losses.append(float(metrics["loss"]))
  return {k: float(v) for k, v in read[-1].items()}


@contextlib.contextmanager
def stop_on_signals(trainer: Trainer,
                    signals=(signal.SIGINT, signal.SIGTERM),
                    log: Callable[[str], None] | None = None):
  """SIGINT and SIGTERM stop `trainer.run()` cleanly while in the block.

  The first signal asks the trainer to stop after its current step (the
  workers stop, the checkpoint is written, the summary returned with
  `stopped` set to the signal's name); a second one aborts at once
  (KeyboardInterrupt). Yields a list that holds the first signal's number
  once one arrives.
  """
  log = log or (lambda s: print(s, file=sys.stderr, flush=True))
  received: list[int] = []

  def handler(signum, frame):
    del frame
    if received:
      raise KeyboardInterrupt
    received.append(signum)
    name = signal.Signals(signum).name
    trainer.request_stop(name)
    log(f"train: {name}: stopping the workers and saving a checkpoint "
        "(send it again to abort at once)")

  previous = {s: signal.signal(s, handler) for s in signals}
  try:
    yield received
  finally:
    for s, h in previous.items():
      signal.signal(s, h)


def plot_exploitability(rows, path: str, title: str = "") -> None:
  """Exploitability against training steps (matplotlib, Agg)."""
  try:
    import matplotlib  # pylint: disable=g-import-not-at-top
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
  except ImportError:
    print("train: matplotlib is not installed; no plot written "
          "(pip install 'open_spiel_sog[plot]')", file=sys.stderr)
    return
  fig, ax = plt.subplots(figsize=(6, 4))
  ax.plot([r["step"] for r in rows], [r["exploitability"] for r in rows],
          marker="o")
  ax.set_xlabel("training steps")
  ax.set_ylabel("exploitability (NashConv / 2)")
  ax.set_yscale("log")
  ax.grid(True, which="both", alpha=0.3)
  if title:
    ax.set_title(title)
  fig.tight_layout()
  fig.savefig(path, dpi=100)
  plt.close(fig)
