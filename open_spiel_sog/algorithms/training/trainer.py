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
  through a file. The workers start with one compute thread each, JAX on the
  CPU (`worker_environment`) and SIGINT ignored: the learner stops them.
- "ray": the same worker loop in Ray actors (the optional `ray` extra), with
  batch mailbox actors for queries and examples and parameters through Ray's
  object store.

Checkpoints (`cvpn.save_checkpoint`) hold the parameters, optimiser state,
step, network and training config and the game; `Trainer(config,
resume=True)` continues from `config.checkpoint`. The replay buffer is not
saved: a resumed run refills it before learning.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import multiprocessing
import os
import queue as queue_lib
import shutil
import signal
import sys
import tempfile
import threading
import time
from typing import Any, Callable

import numpy as np
import pyspiel

from open_spiel_sog.algorithms.sog import cvpn
from open_spiel_sog.algorithms.training import selfplay
from open_spiel_sog.algorithms.training.config import TrainConfig
from open_spiel_sog.algorithms.training.replay import ReplayBuffer
from open_spiel_sog.public_state import PublicStateObserver
from open_spiel_sog.public_state import search_game
from open_spiel_sog.utils.progress import progress_bar

# Queries a solver takes from the queue and solves in one go at most (the
# inline backend's worker too): one message each way per batch of solves.
QUERIES_PER_SOLVE = 8
# Seconds a solver waits for a query before it plays a game instead
# (`idle_solvers_play`): long enough for the next actor search's queries,
# short against a game.
_IDLE_WAIT_S = 0.05


# --- Worker loop (shared by the process and Ray backends) --------------------


# Environment of worker processes: one compute thread each (the workers share
# the machine's cores; numpy's BLAS and XLA would otherwise each start a pool
# as wide as the machine in every worker, read once at import), and JAX on the
# CPU unless the workers are asked onto an accelerator (`worker_platform`).
_WORKER_THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false "
                 "intra_op_parallelism_threads=1",
}


def worker_environment(worker_platform: str = "cpu") -> dict[str, str]:
  """Environment variables a worker process must start with (they are read
  when numpy and JAX load, before any of our code runs in it)."""
  env = dict(_WORKER_THREAD_ENV)
  if worker_platform == "cpu":
    env["JAX_PLATFORMS"] = "cpu"
  else:
    # On an accelerator, take memory as needed rather than most of it.
    env["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
  return env


@contextlib.contextmanager
def _child_environment(env: dict[str, str]):
  """`env` set, and SIGINT ignored, while child processes start: spawned
  children inherit both (Python leaves an ignored SIGINT ignored), so a
  Ctrl-C in the terminal reaches the learner only, which stops them."""
  saved = {k: os.environ.get(k) for k in env}
  os.environ.update(env)
  handler = None
  if threading.current_thread() is threading.main_thread():
    handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
  try:
    yield
  finally:
    if handler is not None:
      signal.signal(signal.SIGINT, handler)
    for k, v in saved.items():
      if v is None:
        os.environ.pop(k, None)
      else:
        os.environ[k] = v


class WorkerClock:
  """Where a worker's time goes, sent with each example batch.

  busy_s: searching (self-play games, query solves; an actor's queries go
  out during its game, so their sending counts here); wait_s: waiting for a
  query; params_s: loading published parameters; io_s: sending examples (and
  a solver's queries); cpu_s: the process's CPU time. Wall-clock instants
  (time.time()): launched_at (the parent started the process), ready_at (the
  worker loop began: imports and set-up done, first parameters loaded) and
  first_example_at.
  """

  def __init__(self, launched_at: float | None = None):
    self.launched_at = launched_at if launched_at is not None else time.time()
    self.ready_at = None
    self.first_example_at = None
    self.busy_s = self.wait_s = self.params_s = self.io_s = 0.0
    self._t0 = time.perf_counter()

  def stats(self, name: str, work: selfplay.WorkStats) -> dict[str, Any]:
    out = dataclasses.asdict(work)
    out.update(worker=name, busy_s=self.busy_s, wait_s=self.wait_s,
               params_s=self.params_s, io_s=self.io_s,
               cpu_s=time.process_time(),
               alive_s=time.perf_counter() - self._t0,
               launched_at=self.launched_at, ready_at=self.ready_at,
               first_example_at=self.first_example_at)
    return out


def worker_loop(role: str, worker: selfplay.Worker, channel,
                should_stop: Callable[[], bool],
                clock: WorkerClock | None = None) -> None:
  """Actor or solver work until `should_stop()`; `channel` moves queries,
  examples and parameters (see `_FileChannel` and the Ray backend)."""
  clock = clock or WorkerClock()
  if clock.ready_at is None:
    clock.ready_at = time.time()
  name = f"{role}-{worker.index}"
  now = time.perf_counter
  while not should_stop():
    t0 = now()
    params = channel.new_params()
    if params is not None:
      worker.set_params(params)
    t1 = now()
    clock.params_s += t1 - t0
    if role == "actor":
      batch, pushed = worker.play_game(push=channel.put_queries)
    else:
      idle_play = worker.config.idle_solvers_play
      messages = channel.get_queries(
          QUERIES_PER_SOLVE, timeout=_IDLE_WAIT_S if idle_play else 0.5)
      t2 = now()
      clock.wait_s += t2 - t1
      t1 = t2
      if messages:
        batch, pushed = worker.solve(messages)
      elif idle_play:
        # No query came: a self-play game (an actor's work) rather than an
        # idle wait; the queries pile up meanwhile.
        batch, pushed = worker.play_game(push=channel.put_queries)
      else:
        continue
    t2 = now()
    clock.busy_s += t2 - t1
    if clock.first_example_at is None:
      clock.first_example_at = time.time()
    channel.put_examples(batch, clock.stats(name, worker.stats))
    channel.put_queries(pushed)
    clock.io_s += now() - t2


class WorkerStats:
  """The latest stats of each worker (`WorkerClock.stats`), and their sums."""

  # Instants, not amounts: never summed.
  _INSTANTS = ("launched_at", "ready_at", "first_example_at")

  def __init__(self):
    self.per_worker: dict[str, dict[str, Any]] = {}

  def update(self, stats: dict[str, Any]) -> None:
    stats = dict(stats)
    self.per_worker[stats.pop("worker")] = stats

  def totals(self) -> dict[str, float]:
    out: dict[str, float] = {}
    for stats in self.per_worker.values():
      for k, v in stats.items():
        if k not in self._INSTANTS:
          out[k] = out.get(k, 0) + v
    return out


def receive_examples(messages, worker_stats: "WorkerStats"
                     ) -> list[cvpn.Batch]:
  """The batches of the workers' (arrays, stats) messages (`put_examples`);
  their stats go to `worker_stats`."""
  out = []
  for arrays, stats in messages:
    out.append(cvpn.Batch.from_dict(arrays))
    worker_stats.update(stats)
  return out


class QueueChannel:
  """Queries and examples through queues (multiprocessing or Ray queues,
  which share this interface); subclasses add `new_params()`."""

  def __init__(self, query_queue, example_queue, solvers: int):
    self.query_queue = query_queue
    self.example_queue = example_queue
    self.solvers = solvers

  def get_queries(self, count: int, timeout: float) -> list:
    """Up to `count` queries: waits up to `timeout` (0: not at all) for the
    first, then takes those already waiting."""
    if self.query_queue is None:
      return []
    try:
      out = [self.query_queue.get(timeout=timeout) if timeout > 0
             else self.query_queue.get_nowait()]
    except queue_lib.Empty:
      return []
    while len(out) < count:
      try:
        out.append(self.query_queue.get_nowait())
      except queue_lib.Empty:
        break
    return out

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
    self.example_queue.put((batch.as_dict(), stats))


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
                  query_queue, example_queue, stop_event,
                  launched_at: float) -> None:
  clock = WorkerClock(launched_at)
  config = TrainConfig.from_json(config_json)
  channel = _FileChannel(query_queue, example_queue, param_path,
                         None, config.solvers)
  parent = multiprocessing.parent_process()

  def should_stop() -> bool:
    # Also stop when the learner is gone (killed, so it never set the event).
    return stop_event.is_set() or (parent is not None and
                                   not parent.is_alive())

  worker = selfplay.Worker(config, seed=1 + index, index=index)
  channel.template = worker.net.param_shapes()
  # Wait for the learner's first parameters.
  params = channel.new_params()
  while params is None:
    if should_stop():
      return
    time.sleep(0.05)
    params = channel.new_params()
  worker.set_params(params)
  worker_loop(role, worker, channel, should_stop, clock)


# --- Backends ----------------------------------------------------------------


class InlineBackend:
  """Plays, solves and learns in one process (deterministic for a seed)."""

  def __init__(self, config: TrainConfig, net: cvpn.CVPN):
    worker_net = cvpn.CVPN(net.encoder, config.network)
    worker_net.params = net.params
    self.worker = selfplay.Worker(config, worker_net, seed=1)
    self.queries = collections.deque(maxlen=config.max_queued_queries)
    self.solvers = config.solvers
    self.worker_stats = WorkerStats()
    self.clock = WorkerClock()

  def start(self, params) -> None:
    self.worker.set_params(params)

  def publish(self, params, step: int) -> None:
    del step
    self.worker.set_params(params)

  @property
  def stats(self) -> dict[str, float]:
    return self.worker_stats.totals()

  def poll(self, block: bool) -> list[cvpn.Batch]:
    if not block:
      return []
    t0 = time.perf_counter()
    if self.queries:
      messages = [self.queries.popleft() for _ in range(
          min(len(self.queries), QUERIES_PER_SOLVE))]
      batch, pushed = self.worker.solve(messages)
    else:
      batch, pushed = self.worker.play_game()
    self.clock.busy_s += time.perf_counter() - t0
    if self.clock.first_example_at is None:
      self.clock.ready_at = self.clock.launched_at
      self.clock.first_example_at = time.time()
    if self.solvers:
      self.queries.extend(pushed)
    self.worker_stats.update(self.clock.stats("inline-0", self.worker.stats))
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
    self.worker_stats = WorkerStats()

  @property
  def stats(self) -> dict[str, float]:
    return self.worker_stats.totals()

  def start(self, params) -> None:
    self.publish(params, self.net.step)
    roles = (["actor"] * self.config.actors +
             ["solver"] * self.config.solvers)
    with _child_environment(worker_environment(self.config.worker_platform)):
      for i, role in enumerate(roles):
        p = self._ctx.Process(
            target=_process_main, name=f"sog-{role}-{i}",
            args=(role, i, self.config.to_json(), self.param_path,
                  self.query_queue, self.example_queue, self.stop_event,
                  time.time()),
            daemon=True)
        p.start()
        self.processes.append(p)

  def publish(self, params, step: int) -> None:
    del params, step
    cvpn.save_checkpoint(self.param_path, self.net, game=self.net.encoder.game,
                         include_optimizer=False)

  def poll(self, block: bool) -> list[cvpn.Batch]:
    messages = []
    timeout = 1.0 if block else 0.0
    while True:
      try:
        messages.append(self.example_queue.get(timeout=timeout) if timeout
                        else self.example_queue.get_nowait())
      except queue_lib.Empty:
        break
      timeout = 0.0
    out = receive_examples(messages, self.worker_stats)
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


def learner_device(platform: str):
  """The JAX device the learner's steps run on ("cpu" or "gpu").

  For "cpu" in a process whose JAX has not started yet, JAX is kept off any
  accelerator altogether (no GPU memory is taken); "gpu" is an error that
  says so when JAX sees no GPU.
  """
  import jax  # pylint: disable=g-import-not-at-top
  if platform == "cpu":
    try:
      from jax._src import xla_bridge  # pylint: disable=g-import-not-at-top
      started = xla_bridge.backends_are_initialized()
    except (ImportError, AttributeError):
      started = True
    if not started and not os.environ.get("JAX_PLATFORMS"):
      jax.config.update("jax_platforms", "cpu")
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
               summary_writer=None):
    config.validate()
    self.config = config
    self.device = learner_device(config.learner_platform)
    self.game = search_game(pyspiel.load_game(config.game))
    self.evaluation = evaluation or EvalConfig()
    if self.evaluation.every > 0 and self.evaluation.measure is None:
      raise ValueError("evaluation every %d steps needs EvalConfig.measure "
                       "(e.g. open_spiel_sog.evaluation.exploitability."
                       "sog_exploitability)" % self.evaluation.every)
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
      with self._on_device():
        self.net.init(config.seed)
    extra = getattr(self.net, "metadata", {}).get("extra", {})
    self._previous_seconds = float(extra.get("train_seconds", 0.0))
    self._previous_examples = int(extra.get("examples", 0))
    self._started = None
    self.buffer = ReplayBuffer(config.replay_size)
    self.rng = np.random.default_rng([config.seed, 7])
    self.history: list[dict[str, Any]] = []
    self.stopped: str | None = None
    self.backend = None
    self.timing: dict[str, float] = {}

  def _on_device(self):
    import jax  # pylint: disable=g-import-not-at-top
    return jax.default_device(self.device)

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
    net = cvpn.CVPN(self.net.encoder, self.config.network)
    net.params = self.net.params
    value_fn = cvpn.CVPNValueFunction(net)
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
    self.backend = backend = make_backend(cfg, self.net)
    started = self._started = time.perf_counter()
    # Where the learner's time goes: gradient steps (train_s), blocked on the
    # workers' examples (wait_s), taking in examples that were ready (poll_s),
    # publishing parameters (publish_s), checkpoints and evaluations.
    timing = self.timing = dict.fromkeys(
        ("train_s", "wait_s", "poll_s", "publish_s", "checkpoint_s",
         "eval_s"), 0.0)
    now = time.perf_counter
    losses = collections.deque(maxlen=100)
    used = 0  # examples drawn by this run's minibatches
    start_step = self.net.step
    last = {}
    try:
      backend.start(self.net.params)
      with self._on_device(), progress_bar(
          cfg.steps - start_step, f"train {cfg.game}",
          disable=not self.progress) as bar:
        while self.net.step < cfg.steps and self.stopped is None:
          ready = (len(self.buffer) >= max(cfg.min_replay, 1) and
                   used + cfg.batch_size <=
                   cfg.max_updates_per_example * self.buffer.added)
          t0 = now()
          for batch in backend.poll(block=not ready):
            self.buffer.add(batch)
          t1 = now()
          timing["poll_s" if ready else "wait_s"] += t1 - t0
          if monitor is not None:
            monitor(self)
          if not ready:
            continue
          last = self.net.train_step(self.buffer.sample(cfg.batch_size,
                                                        self.rng))
          used += cfg.batch_size
          losses.append(last["loss"])
          step = self.net.step
          t2 = now()
          timing["train_s"] += t2 - t1
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
            self._record_eval(started, list(losses))
            timing["eval_s"] += now() - t2
    finally:
      backend.stop()
    self.save()
    if self.stopped is None and ev.every and (
        not self.history or self.history[-1]["step"] != self.net.step):
      self._record_eval(started, list(losses))
    return {"game": cfg.game, "steps": self.net.step,
            "seconds": time.perf_counter() - started,
            "examples": self.buffer.added,
            "loss": float(np.mean(losses)) if losses else None,
            "last": last, "checkpoint": cfg.checkpoint or None,
            "stopped": self.stopped,
            "evaluations": self.history,
            "timing": {k: round(v, 3) for k, v in timing.items()},
            "worker_stats": backend.stats}


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
