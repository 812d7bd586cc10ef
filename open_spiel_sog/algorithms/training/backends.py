"""The backends that run the actors and query solvers for the learner.

Every backend has `start(params)`, `publish(params, step)`, `poll(block)`
(the example batches the workers sent), `stop()` and `stats` (the workers'
summed `WorkerStats`); `make_backend` picks one by `config.backend`:

- "inline": one process does everything in turn (play a game, solve the
  queued queries, learn); deterministic for a seed. For tests and debugging.
- "process": `actors` actor processes and `solvers` solver processes
  (multiprocessing, spawn) sharing a query queue; parameters are published
  through a file. The workers start with one compute thread each, JAX on the
  CPU (`workers.worker_environment`) and SIGINT ignored: the learner stops
  them. With `config.inference` "cpu" or "gpu", one more process, the
  inference service (`inference`), runs every worker's network calls.
- "ray": the same worker loop in Ray actors (the optional `ray` extra), with
  batch mailbox actors for queries and examples and parameters through Ray's
  object store (`ray_backend`, imported only for this backend).
"""

from __future__ import annotations

import collections
import contextlib
import multiprocessing
import os
import queue as queue_lib
import shutil
import signal
import tempfile
import threading
import time

from open_spiel_sog.algorithms.sog import cvpn
from open_spiel_sog.algorithms.training import inference
from open_spiel_sog.algorithms.training import recipes
from open_spiel_sog.algorithms.training.config import TrainConfig
from open_spiel_sog.algorithms.training.workers import QUERIES_PER_SOLVE
from open_spiel_sog.algorithms.training.workers import ParamFile
from open_spiel_sog.algorithms.training.workers import QueueChannel
from open_spiel_sog.algorithms.training.workers import receive_examples
from open_spiel_sog.algorithms.training.workers import die_with_parent
from open_spiel_sog.algorithms.training.workers import worker_environment
from open_spiel_sog.algorithms.training.workers import worker_loop
from open_spiel_sog.algorithms.training.workers import WorkerClock
from open_spiel_sog.algorithms.training.workers import WorkerStats


@contextlib.contextmanager
def child_environment(env: dict[str, str]):
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


class _FileChannel(QueueChannel):
  """Parameters from the file the learner replaces atomically
  (`param_file`), or none (None: the inference service holds them)."""

  def __init__(self, query_queue, example_queue, solvers: int,
               param_file: ParamFile | None):
    super().__init__(query_queue, example_queue, solvers)
    self.param_file = param_file

  def new_params(self):
    return None if self.param_file is None else self.param_file.new_params()


def _process_main(role: str, index: int, config_json: dict, param_path: str,
                  query_queue, example_queue, stop_event,
                  launched_at: float, inference_conn=None) -> None:
  die_with_parent()  # (however the learner ends, SIGKILL included)
  clock = WorkerClock(launched_at)
  config = TrainConfig.from_json(config_json)
  parent = multiprocessing.parent_process()

  def should_stop() -> bool:
    # Also stop when the learner is gone (killed, so it never set the event).
    return stop_event.is_set() or (parent is not None and
                                   not parent.is_alive())

  worker = recipes.get(config.recipe).make_worker(config, seed=1 + index,
                                                  index=index)
  if inference_conn is not None:
    # The inference service holds the parameters; the worker loads none.
    channel = _FileChannel(query_queue, example_queue, config.solvers, None)
    inference.use_service(worker, inference_conn, clock)
    worker_loop(role, worker, channel, should_stop, clock)
    return
  channel = _FileChannel(query_queue, example_queue, config.solvers,
                         ParamFile(param_path, worker.net.param_shapes()))
  # Wait for the learner's first parameters.
  params = channel.new_params()
  while params is None:
    if should_stop():
      return
    time.sleep(0.05)
    params = channel.new_params()
  worker.set_params(params)
  worker_loop(role, worker, channel, should_stop, clock)


class InlineBackend:
  """Plays, solves and learns in one process (deterministic for a seed)."""

  def __init__(self, config: TrainConfig, net):
    self.worker = recipes.get(config.recipe).make_worker(
        config, seed=1, index=0, template=net)
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

  def __init__(self, config: TrainConfig, net):
    self.config = config
    self.net = net
    # (The slot and token CVPN hold their game in their encoder.)
    self.game = getattr(net, "game", None) or net.encoder.game
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
    service, conns = None, [None] * len(roles)
    if self.config.inference != "local":
      # The inference service first (`inference`): each worker gets a pipe
      # to it, and the service is stopped (and checked) with the workers.
      with child_environment(
          inference.service_environment(self.config.inference)):
        service, conns = inference.start_service(
            self._ctx, self.config, self.param_path, len(roles),
            self.stop_event)
    with child_environment(worker_environment(self.config.worker_platform)):
      for i, role in enumerate(roles):
        p = self._ctx.Process(
            target=_process_main, name=f"sog-{role}-{i}",
            args=(role, i, self.config.to_json(), self.param_path,
                  self.query_queue, self.example_queue, self.stop_event,
                  time.time()) + ((conns[i],) if service else ()),
            daemon=True)
        p.start()
        if service:
          conns[i].close()  # the worker's copy is its own now
        self.processes.append(p)
    if service:
      self.processes.append(service)  # last: it outlives the workers

  def publish(self, params, step: int) -> None:
    del params, step
    recipes.get(self.config.recipe).save(
        self.net, self.param_path, self.game, {}, include_optimizer=False)

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
  """The backend `config.backend` names (see the module docstring)."""
  if config.backend == "inline":
    return InlineBackend(config, net)
  if config.backend == "process":
    return ProcessBackend(config, net)
  from open_spiel_sog.algorithms.training import ray_backend  # pylint: disable=g-import-not-at-top
  return ray_backend.RayBackend(config, net)
