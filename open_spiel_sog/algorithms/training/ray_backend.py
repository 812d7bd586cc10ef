"""The "ray" training backend: actors and query solvers as Ray actors.

`RayBackend` has the interface of `backends.ProcessBackend` (`start`,
`publish`, `poll`, `stop`, `stats`) and runs the same `workers.worker_loop`:

- every worker is a Ray actor (`_RayWorker`) holding a `selfplay.Worker`
  (seed 1 + its index, actors first, as in the process backend) whose
  `run()` method loops until `stop()` is called on it; the actor runs two
  threads, so parameters and the stop request reach it while `run()` works;
- queries go through a `_Mailbox` actor bounded by
  `config.max_queued_queries` (new queries are dropped when it is full; there
  is no query mailbox without solvers), examples and the workers' stats
  through an unbounded one; both move batches in one round trip, and nothing
  a worker sends waits for an answer;
- the learner's parameters go into Ray's object store once per `publish`, as
  numpy arrays, and each worker is sent a reference to them.

`ray.init()` starts a local Ray instance, or connects to
`config.ray_address`, unless Ray is already initialised (e.g. connected to a
cluster by the caller); `stop()` kills the actors and mailboxes, and shuts
Ray down only if this backend started it. An exception in a worker (or a
worker that dies) makes the next `poll` raise a RuntimeError that names the
worker and carries its traceback.

Ray is optional: `pip install 'open_spiel_sog[ray]'`.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import math
import threading
import time
from typing import Any

import numpy as np

try:
  import ray  # pylint: disable=g-import-not-at-top
except ImportError as e:
  raise ImportError(
      "the ray backend needs ray: pip install 'open_spiel_sog[ray]'") from e

from open_spiel_sog.algorithms.sog import cvpn
from open_spiel_sog.algorithms.training import selfplay
from open_spiel_sog.algorithms.training.config import TrainConfig
from open_spiel_sog.algorithms.training.workers import QueueChannel
from open_spiel_sog.algorithms.training.workers import receive_examples
from open_spiel_sog.algorithms.training.workers import worker_environment
from open_spiel_sog.algorithms.training.workers import worker_loop
from open_spiel_sog.algorithms.training.workers import WorkerClock
from open_spiel_sog.algorithms.training.workers import WorkerStats

# Seconds `stop()` gives the worker loops to finish before killing them.
_STOP_GRACE_S = 5.0
# Seconds a blocking `poll` waits for the first example batch.
_POLL_TIMEOUT_S = 1.0
# Seconds between non-blocking polls, at least.
_POLL_INTERVAL_S = 0.05


def _to_numpy(params) -> Any:
  import jax  # pylint: disable=g-import-not-at-top
  return jax.tree_util.tree_map(np.asarray, params)


class _Mailbox:
  """A queue as one Ray actor whose calls move batches: `put` adds a list
  (what does not fit is dropped) and `take` returns up to `count` items,
  waiting up to `timeout` seconds for the first. One round trip either way
  (ray.util.queue needs a call per item, or three for a batch), and senders
  need not wait for it (`put.remote` without `ray.get`)."""

  def __init__(self, maxsize: int = 0):
    self._items = collections.deque()
    self._maxsize = maxsize
    self._ready = asyncio.Event()

  async def put(self, items: list) -> int:
    room = len(items)
    if self._maxsize:
      room = max(0, min(room, self._maxsize - len(self._items)))
    self._items.extend(items[:room])
    if self._items:
      self._ready.set()
    return room

  async def take(self, count: int, timeout: float) -> list:
    if not self._items and timeout > 0:
      try:
        await asyncio.wait_for(self._ready.wait(), timeout)
      except asyncio.TimeoutError:
        return []
    out = [self._items.popleft() for _ in range(min(count, len(self._items)))]
    if not self._items:
      self._ready.clear()
    return out


class _RayChannel(QueueChannel):
  """`worker_loop`'s channel over `_Mailbox` actors; parameters arrive
  through `_RayWorker.set_params`."""

  def __init__(self, query_queue, example_queue, solvers: int):
    super().__init__(query_queue, example_queue, solvers)
    self._params = None
    self._lock = threading.Lock()

  def offer_params(self, params) -> None:
    with self._lock:
      self._params = params

  # The queues are `_Mailbox` actors; nothing a worker sends waits for
  # the mailbox to answer.

  def get_queries(self, count: int, timeout: float) -> list:
    if self.query_queue is None:
      return []
    return ray.get(self.query_queue.take.remote(count, timeout))

  def put_queries(self, messages) -> None:
    """Queues `messages` while there is room (the rest are dropped)."""
    if self.solvers and self.query_queue is not None and messages:
      self.query_queue.put.remote(list(messages))

  def put_examples(self, batch: cvpn.Batch, stats: dict) -> None:
    self.example_queue.put.remote([(batch.as_dict(), stats)])

  def new_params(self):
    with self._lock:
      params, self._params = self._params, None
    if params is None:
      return None
    import jax  # pylint: disable=g-import-not-at-top
    # Once onto the device rather than at every network call.
    return jax.device_put(params)


class _RayWorker:
  """One actor or solver (made a Ray actor by `_remote_worker_class`)."""

  def __init__(self, role: str, index: int, config_json: dict, params,
               query_queue, example_queue, launched_at: float):
    self.clock = WorkerClock(launched_at)
    config = TrainConfig.from_json(config_json)
    self.role = role
    self.worker = selfplay.Worker(config, seed=1 + index, index=index)
    self.channel = _RayChannel(query_queue, example_queue, config.solvers)
    self.channel.offer_params(params)
    self._stop = threading.Event()

  def set_params(self, params) -> None:
    self.channel.offer_params(params)

  def run(self) -> dict:
    """The worker loop, until `stop()`; returns the worker's stats."""
    worker_loop(self.role, self.worker, self.channel,
                        self._stop.is_set, self.clock)
    return dataclasses.asdict(self.worker.stats)

  def stop(self) -> None:
    self._stop.set()


def worker_cpus(node_cpus: list[float], workers: int) -> float:
  """The largest CPU share per worker, at most 1, with which `workers`
  workers fit on nodes with `node_cpus` CPUs (Ray places an actor on one
  node; its resource amounts have four decimals)."""
  def fits(share: float) -> bool:
    return sum(int(c / share + 1e-9) for c in node_cpus) >= workers
  candidates = sorted({min(1.0, math.floor(c / k * 1e4) / 1e4)
                       for c in node_cpus if c > 0
                       for k in range(1, workers + 1)}, reverse=True)
  for share in candidates:
    if share > 0 and fits(share):
      return share
  raise ValueError(f"train: the Ray cluster's nodes ({node_cpus} CPUs) "
                   f"cannot hold {workers} workers")


_REMOTE_WORKER = None


def _remote_worker_class():
  """`_RayWorker` as a Ray actor class (made once, on first use)."""
  global _REMOTE_WORKER
  if _REMOTE_WORKER is None:
    # Two threads: `run` in one, `set_params` and `stop` in the other.
    _REMOTE_WORKER = ray.remote(max_concurrency=2)(_RayWorker)
  return _REMOTE_WORKER


class RayBackend:
  """Actor and solver workers as Ray actors (see the module docstring)."""

  def __init__(self, config: TrainConfig, net: cvpn.CVPN):
    self.config = config
    self.net = net
    self.worker_stats = WorkerStats()
    self._owns_ray = False
    self.workers: list[tuple[str, Any]] = []  # (name, actor handle)
    self._runs: dict[Any, str] = {}  # run() reference -> worker name
    self.query_queue = None
    self.example_queue = None
    self._stopped = False
    self._polled = 0.0

  def start(self, params) -> None:
    if not ray.is_initialized():
      # With an address, connect to that cluster; without, start a local one.
      ray.init(address=self.config.ray_address or None,
               ignore_reinit_error=True, include_dashboard=False,
               log_to_driver=True)
      self._owns_ray = True
    cfg = self.config
    # Mailboxes hold no CPU, so they never wait for the workers' cores.
    mailbox = ray.remote(num_cpus=0)(_Mailbox)
    if cfg.solvers:
      self.query_queue = mailbox.remote(cfg.max_queued_queries)
    self.example_queue = mailbox.remote()
    roles = ["actor"] * cfg.actors + ["solver"] * cfg.solvers
    # A core each where the cluster has them; equal shares of the cores
    # otherwise, such that every worker fits on some node (whole cores would
    # leave the extra workers waiting forever).
    num_cpus = worker_cpus(
        [float(n["Resources"].get("CPU", 0.0)) for n in ray.nodes()
         if n.get("Alive")], len(roles))
    param_ref = ray.put(_to_numpy(params))
    worker_class = _remote_worker_class()
    # The worker processes' environment is set before they import numpy and
    # JAX: one compute thread each, JAX on the CPU (worker_environment).
    runtime_env = {"env_vars": worker_environment(cfg.worker_platform)}
    for i, role in enumerate(roles):
      name = f"sog-{role}-{i}"
      handle = worker_class.options(
          num_cpus=num_cpus, runtime_env=runtime_env).remote(
              role, i, cfg.to_json(), param_ref, self.query_queue,
              self.example_queue, time.time())
      self.workers.append((name, handle))
      self._runs[handle.run.remote()] = name

  @property
  def stats(self) -> dict[str, float]:
    return self.worker_stats.totals()

  def publish(self, params, step: int) -> None:
    del step
    if not self.workers or self._stopped:
      return
    param_ref = ray.put(_to_numpy(params))
    for _, handle in self.workers:
      handle.set_params.remote(param_ref)

  def poll(self, block: bool) -> list[cvpn.Batch]:
    # A non-blocking poll (the learner between gradient steps) costs round
    # trips to the queue's actor: at most one every _POLL_INTERVAL_S.
    if not block and time.perf_counter() - self._polled < _POLL_INTERVAL_S:
      return []
    self._polled = time.perf_counter()
    items = []
    if self.example_queue is not None:
      items = ray.get(self.example_queue.take.remote(
          1 << 30, _POLL_TIMEOUT_S if block else 0.0))
    out = receive_examples(items, self.worker_stats)
    self._check_workers()
    return out

  def _check_workers(self) -> None:
    """Raises if a worker loop has ended (only `stop()` should end one)."""
    if not self._runs:
      return
    done, _ = ray.wait(list(self._runs), num_returns=len(self._runs),
                       timeout=0)
    if not done:
      return
    ref = done[0]
    name = self._runs[ref]
    try:
      ray.get(ref)
      error = None
    except Exception as e:  # pylint: disable=broad-except
      error = e
    self.stop()
    if error is None:
      raise RuntimeError(f"training worker {name} stopped unexpectedly")
    raise RuntimeError(
        f"training worker {name} failed: {error}") from error

  def stop(self) -> None:
    if self._stopped:
      return
    self._stopped = True
    try:
      if self.workers:
        for _, handle in self.workers:
          try:
            handle.stop.remote()
          except Exception:  # pylint: disable=broad-except
            pass
        ray.wait(list(self._runs), num_returns=len(self._runs),
                 timeout=_STOP_GRACE_S)
        for _, handle in self.workers:
          try:
            ray.kill(handle, no_restart=True)
          except Exception:  # pylint: disable=broad-except
            pass
      for q in (self.query_queue, self.example_queue):
        if q is not None:
          try:
            ray.kill(q, no_restart=True)
          except Exception:  # pylint: disable=broad-except
            pass
    finally:
      self.workers = []
      self._runs = {}
      self.query_queue = None
      self.example_queue = None
      if self._owns_ray:
        ray.shutdown()
        self._owns_ray = False
