"""The learner and the backends that run actors and query solvers.

`Trainer(config).run()` trains a CVPN by sound self-play (DESIGN.md section
8): workers (`selfplay.Worker`) play self-play games and solve queries; their
encoded examples fill a sliding-window replay buffer; the learner takes
minibatch steps, never more than `max_updates_per_example` uses per example
added, and publishes its parameters to the workers every `publish_every`
steps. Backends:

- "inline": one process does everything in turn (play a game, solve the
  queued queries, learn); deterministic for a seed. For tests and debugging.
- "process": `actors` actor processes and `solvers` solver processes
  (multiprocessing, spawn) sharing a query queue; parameters are published
  through a file.
- "ray": the same worker loop in Ray actors (the optional `ray` extra), with
  Ray queues and parameters through Ray's object store.

Checkpoints (`cvpn.save_checkpoint`) hold the parameters, optimiser state,
step, network and training config and the game; `Trainer(config,
resume=True)` continues from `config.checkpoint`. The replay buffer is not
saved: a resumed run refills it before learning.
"""

from __future__ import annotations

import collections
import dataclasses
import multiprocessing
import os
import queue as queue_lib
import shutil
import sys
import tempfile
import time
from typing import Any, Callable

import numpy as np
import pyspiel

from open_spiel_sog.algorithms import cvpn
from open_spiel_sog.algorithms.training import selfplay
from open_spiel_sog.algorithms.training.config import TrainConfig
from open_spiel_sog.algorithms.training.replay import ReplayBuffer
from open_spiel_sog.bots import sog
from open_spiel_sog.public_state.observer import PublicStateObserver
from open_spiel_sog.utils.progress import progress_bar

# Examples the inline backend's worker solves per turn at most.
_INLINE_SOLVES_PER_TURN = 8


# --- Worker loop (shared by the process and Ray backends) --------------------


def _limit_threads() -> None:
  """One compute thread per worker: the workers share the machine's cores."""
  os.environ.setdefault(
      "XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
      "intra_op_parallelism_threads=1")
  os.environ.setdefault("OMP_NUM_THREADS", "1")


def worker_loop(role: str, worker: selfplay.Worker, channel,
                should_stop: Callable[[], bool]) -> None:
  """Actor or solver work until `should_stop()`; `channel` moves queries,
  examples and parameters (see `_FileChannel` and the Ray backend)."""
  while not should_stop():
    params = channel.new_params()
    if params is not None:
      worker.set_params(params)
    if role == "actor":
      batch, pushed = worker.play_game()
    else:
      message = channel.get_query(timeout=0.5)
      if message is None:
        continue
      batch, pushed = worker.solve([message])
    stats = dataclasses.asdict(worker.stats)
    stats["worker"] = f"{role}-{worker.index}"
    channel.put_examples(batch, stats)
    channel.put_queries(pushed)


class QueueChannel:
  """Queries and examples through queues (multiprocessing or Ray queues,
  which share this interface); subclasses add `new_params()`."""

  def __init__(self, query_queue, example_queue, solvers: int):
    self.query_queue = query_queue
    self.example_queue = example_queue
    self.solvers = solvers

  def get_query(self, timeout: float):
    if self.query_queue is None:
      return None
    try:
      return self.query_queue.get(timeout=timeout)
    except queue_lib.Empty:
      return None

  def put_queries(self, messages) -> None:
    """Queues `messages` while there is room (the rest are dropped)."""
    if not self.solvers or self.query_queue is None:
      return
    for m in messages:
      try:
        self.query_queue.put_nowait(m)
      except queue_lib.Full:
        return

  def put_examples(self, batch: cvpn.Batch, stats: dict) -> None:
    self.example_queue.put(({f: getattr(batch, f) for f in cvpn.Batch.FIELDS},
                            stats))


class _FileChannel(QueueChannel):
  """Parameters from a file the learner replaces atomically."""

  def __init__(self, query_queue, example_queue, param_path: str,
               template, solvers: int):
    super().__init__(query_queue, example_queue, solvers)
    self.param_path = param_path
    self.template = template
    self._mtime = None

  def new_params(self):
    try:
      mtime = os.stat(self.param_path).st_mtime_ns
    except FileNotFoundError:
      return None
    if mtime == self._mtime:
      return None
    _, arrays = cvpn.read_checkpoint(self.param_path)
    self._mtime = mtime
    return cvpn._unflatten(self.template, arrays, "params", self.param_path)  # pylint: disable=protected-access


def _process_main(role: str, index: int, config_json: dict, param_path: str,
                  query_queue, example_queue, stop_event) -> None:
  _limit_threads()
  config = TrainConfig.from_json(config_json)
  worker = selfplay.Worker(config, seed=1 + index, index=index)
  channel = _FileChannel(query_queue, example_queue, param_path,
                         worker.net.params, config.solvers)
  parent = multiprocessing.parent_process()

  def should_stop() -> bool:
    # Also stop when the learner is gone (killed, so it never set the event).
    return stop_event.is_set() or (parent is not None and
                                   not parent.is_alive())

  # Wait for the learner's first parameters.
  params = channel.new_params()
  while params is None:
    if should_stop():
      return
    time.sleep(0.1)
    params = channel.new_params()
  worker.set_params(params)

  try:
    worker_loop(role, worker, channel, should_stop)
  except KeyboardInterrupt:
    pass


# --- Backends ----------------------------------------------------------------


class InlineBackend:
  """Plays, solves and learns in one process (deterministic for a seed)."""

  def __init__(self, config: TrainConfig, net: cvpn.CVPN):
    worker_net = cvpn.CVPN(net.encoder, config.network)
    worker_net.params = net.params
    self.worker = selfplay.Worker(config, worker_net, seed=1)
    self.queries = collections.deque(maxlen=config.max_queued_queries)
    self.solvers = config.solvers
    self.stats = {}

  def start(self, params) -> None:
    self.worker.set_params(params)

  def publish(self, params, step: int) -> None:
    del step
    self.worker.set_params(params)

  def poll(self, block: bool) -> list[cvpn.Batch]:
    if not block:
      return []
    if self.queries:
      messages = [self.queries.popleft() for _ in range(
          min(len(self.queries), _INLINE_SOLVES_PER_TURN))]
      batch, pushed = self.worker.solve(messages)
    else:
      batch, pushed = self.worker.play_game()
    if self.solvers:
      self.queries.extend(pushed)
    self.stats = dataclasses.asdict(self.worker.stats)
    return [batch]

  def stop(self) -> None:
    pass


class ProcessBackend:
  """Actor and solver processes (multiprocessing, spawn)."""

  def __init__(self, config: TrainConfig, net: cvpn.CVPN):
    self.config = config
    self.net = net
    self._ctx = multiprocessing.get_context("spawn")
    self._dir = tempfile.mkdtemp(prefix="open_spiel_sog-train-")
    self.param_path = os.path.join(self._dir, "params.npz")
    self.query_queue = self._ctx.Queue(maxsize=config.max_queued_queries)
    self.example_queue = self._ctx.Queue()
    self.stop_event = self._ctx.Event()
    self.processes = []
    self.stats = {}
    self._worker_stats: dict[int, dict] = {}

  def start(self, params) -> None:
    self.publish(params, self.net.step)
    roles = (["actor"] * self.config.actors +
             ["solver"] * self.config.solvers)
    for i, role in enumerate(roles):
      p = self._ctx.Process(
          target=_process_main, name=f"sog-{role}-{i}",
          args=(role, i, self.config.to_json(), self.param_path,
                self.query_queue, self.example_queue, self.stop_event),
          daemon=True)
      p.start()
      self.processes.append(p)

  def publish(self, params, step: int) -> None:
    del params, step
    cvpn.save_checkpoint(self.param_path, self.net, game=self.net.encoder.game,
                         include_optimizer=False)

  def poll(self, block: bool) -> list[cvpn.Batch]:
    out = []
    timeout = 1.0 if block else 0.0
    while True:
      try:
        arrays, stats = (self.example_queue.get(timeout=timeout) if timeout
                         else self.example_queue.get_nowait())
      except queue_lib.Empty:
        break
      timeout = 0.0
      out.append(cvpn.Batch(*(arrays[f] for f in cvpn.Batch.FIELDS)))
      self._worker_stats[stats.pop("worker")] = stats
    if self._worker_stats:
      self.stats = {k: sum(s[k] for s in self._worker_stats.values())
                    for k in next(iter(self._worker_stats.values()))}
    dead = [p for p in self.processes if not p.is_alive()]
    if dead:
      self.stop()
      raise RuntimeError(
          f"training worker {dead[0].name} exited with code "
          f"{dead[0].exitcode}; its traceback is above")
    return out

  def stop(self) -> None:
    self.stop_event.set()
    for p in self.processes:
      p.join(timeout=5)
      if p.is_alive():
        p.terminate()
    self.processes = []
    shutil.rmtree(self._dir, ignore_errors=True)


def make_backend(config: TrainConfig, net: cvpn.CVPN):
  if config.backend == "inline":
    return InlineBackend(config, net)
  if config.backend == "process":
    return ProcessBackend(config, net)
  from open_spiel_sog.algorithms.training import ray_backend  # pylint: disable=g-import-not-at-top
  return ray_backend.RayBackend(config, net)


# --- The learner -------------------------------------------------------------


@dataclasses.dataclass
class EvalConfig:
  """Exact exploitability of SoG with the current network, at intervals.

  Attributes:
    every: steps between evaluations (0: never).
    simulations: SoG(s, 1) of the evaluated bot.
    seeds: seeds of the policy constructions.
    csv: where to append rows (step, seconds, examples, loss, exploitability).
    png: where to plot exploitability against steps (needs matplotlib).
  """
  every: int = 0
  simulations: int = 100
  seeds: tuple[int, ...] = (0,)
  csv: str = ""
  png: str = ""


class Trainer:
  """Runs a training job (see the module docstring)."""

  def __init__(self, config: TrainConfig, *, resume: bool = False,
               evaluation: EvalConfig | None = None, progress: bool = True,
               log: Callable[[str], None] | None = None,
               summary_writer=None):
    config.validate()
    self.config = config
    self.game = sog.search_game(pyspiel.load_game(config.game))
    self.evaluation = evaluation or EvalConfig()
    self.progress = progress
    self.log = log or (lambda s: print(s, file=sys.stderr))
    self.summary_writer = summary_writer
    observer = PublicStateObserver(self.game)
    encoder = cvpn.Encoder(observer)
    if resume:
      if not config.checkpoint:
        raise ValueError("train: resume needs a checkpoint path")
      if not os.path.exists(config.checkpoint):
        raise cvpn.CheckpointError(
            f"cannot resume: checkpoint {config.checkpoint!r} does not exist")
      self.net = cvpn.load_checkpoint(config.checkpoint, config.game, encoder)
      if not self.net.metadata.get("has_optimizer"):
        raise cvpn.CheckpointError(
            f"cannot resume from {config.checkpoint!r}: it holds no "
            "optimiser state")
      saved = self.net.metadata.get("extra", {}).get("train", {})
      if saved.get("network") and saved["network"] != config.network.to_json():
        raise cvpn.CheckpointError(
            f"cannot resume from {config.checkpoint!r}: it was trained with "
            f"network settings {saved['network']}, not "
            f"{config.network.to_json()}")
      self.log(f"resuming {config.checkpoint} at step {self.net.step}")
    else:
      self.net = cvpn.CVPN(encoder, config.network)
      self.net.init(config.seed)
    extra = getattr(self.net, "metadata", {}).get("extra", {})
    self._previous_seconds = float(extra.get("train_seconds", 0.0))
    self._previous_examples = int(extra.get("examples", 0))
    self._started = None
    self.buffer = ReplayBuffer(config.replay_size)
    self.rng = np.random.default_rng([config.seed, 7])
    self.history: list[dict[str, Any]] = []

  def save(self, path: str | None = None) -> None:
    path = path or self.config.checkpoint
    if path:
      seconds = self._previous_seconds + (
          time.perf_counter() - self._started if self._started else 0.0)
      cvpn.save_checkpoint(path, self.net, game=self.game,
                           extra={"train": self.config.to_json(),
                                  "train_seconds": round(seconds, 1),
                                  "examples": self._previous_examples +
                                              self.buffer.added})

  def evaluate(self) -> dict[str, Any]:
    """Exact exploitability of SoG(eval.simulations, 1) with the network."""
    from open_spiel_sog.evaluation import exploitability  # pylint: disable=g-import-not-at-top
    net = cvpn.CVPN(self.net.encoder, self.config.network)
    net.params = self.net.params
    value_fn = cvpn.CVPNValueFunction(net)
    return exploitability.sog_exploitability(
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

  def run(self) -> dict[str, Any]:
    """Trains to `config.steps`; returns a summary of the run."""
    cfg = self.config
    ev = self.evaluation
    backend = make_backend(cfg, self.net)
    started = self._started = time.perf_counter()
    losses = collections.deque(maxlen=100)
    used = 0  # examples drawn by this run's minibatches
    start_step = self.net.step
    last = {}
    try:
      backend.start(self.net.params)
      with progress_bar(cfg.steps - start_step, f"train {cfg.game}",
                        disable=not self.progress) as bar:
        while self.net.step < cfg.steps:
          ready = (len(self.buffer) >= max(cfg.min_replay, 1) and
                   used + cfg.batch_size <=
                   cfg.max_updates_per_example * self.buffer.added)
          for batch in backend.poll(block=not ready):
            self.buffer.add(batch)
          if not ready:
            continue
          last = self.net.train_step(self.buffer.sample(cfg.batch_size,
                                                        self.rng))
          used += cfg.batch_size
          losses.append(last["loss"])
          step = self.net.step
          bar.update(1)
          if step % 10 == 0:
            bar.set_postfix_str(
                f"loss {np.mean(losses):.4f} examples {self.buffer.added}")
          if self.summary_writer is not None and step % 10 == 0:
            for k, v in last.items():
              self.summary_writer.scalar(k, v, step)
            self.summary_writer.scalar("examples", self.buffer.added, step)
          if step % cfg.publish_every == 0:
            backend.publish(self.net.params, step)
          if cfg.checkpoint_every and step % cfg.checkpoint_every == 0:
            self.save()
            if cfg.keep_checkpoints and cfg.checkpoint:
              self.save(f"{os.path.splitext(cfg.checkpoint)[0]}"
                        f".step-{step}.npz")
          if ev.every and step % ev.every == 0:
            self._record_eval(started, list(losses))
    finally:
      backend.stop()
    self.save()
    if ev.every and (not self.history or
                     self.history[-1]["step"] != self.net.step):
      self._record_eval(started, list(losses))
    return {"game": cfg.game, "steps": self.net.step,
            "seconds": time.perf_counter() - started,
            "examples": self.buffer.added,
            "loss": float(np.mean(losses)) if losses else None,
            "last": last, "checkpoint": cfg.checkpoint or None,
            "evaluations": self.history,
            "worker_stats": getattr(backend, "stats", {})}


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
