"""The "ray" training backend: actors and query solvers as Ray actors.

`RayBackend` has the interface of `backends.ProcessBackend` (`start`,
`publish`, `poll`, `stop`, `stats`) and runs the same `workers.worker_loop`:

- every worker is a Ray actor (`_RayWorker`) holding its recipe's worker
  (seed 1 + its index, actors first, as in the process backend) whose
  `run()` method loops until `stop()` is called on it; the actor runs two
  threads, so parameters and the stop request reach it while `run()` works;
- queries go through a `_Mailbox` actor bounded by
  `config.max_queued_queries` (new queries are dropped when it is full; there
  is no query mailbox without solvers), examples and the workers' stats
  through an unbounded one; both move batches in one round trip, and nothing
  a worker sends waits for an answer;
- the learner's parameters go into Ray's object store once per `publish`, as
  numpy arrays, and each worker is sent a reference to them;
- with `config.inference` "cpu" or "gpu", one more actor, the inference
  service (`_InferenceService`, `start_service`), is placed on the driver's
  node (the learner's; NodeAffinitySchedulingStrategy), asks Ray for no CPU
  and, for "gpu", one GPU, and is sent the parameter references instead of
  the workers; each worker's leaf batches go to it (`RayTransport`, one
  actor call each) and the calls waiting while a forward pass runs make
  the next pass, as in the process backend's service (`inference`).

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
import sys
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
from open_spiel_sog.algorithms.training import inference
from open_spiel_sog.algorithms.training import recipes
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


class _InferenceService:
  """The inference service as a Ray actor (async; made one by
  `start_service`): the network of the config on `platform` ("cpu" or
  "gpu"), parameters from the object store (`set_params`, as the backend
  publishes them). `infer(inputs)` gives (values, logits) for one leaf
  batch; the calls waiting while a pass runs are answered together by the
  next (`inference._groups`, `inference.answer_group`: the process
  service's batching, without waiting of its own). The passes and parameter
  loads run in one thread beside the event loop, so calls keep arriving
  during a pass."""

  def __init__(self, config_json: dict, platform: str, params):
    import concurrent.futures  # pylint: disable=g-import-not-at-top
    import jax  # pylint: disable=g-import-not-at-top
    self._jax = jax
    self.platform = platform
    try:
      self._device = jax.devices(platform)[0]
    except RuntimeError:
      raise RuntimeError(
          f"train: inference {platform!r}, but JAX sees no "
          f"{platform.upper()} in the inference service") from None
    self.net = inference.service_network(TrainConfig.from_json(config_json))
    self.stats = inference.ServiceStats()
    self._params = None
    self._lock = threading.Lock()  # `_new_params`: the loop and the pass
    self._new_params = params
    self._load_params()
    self._pool = concurrent.futures.ThreadPoolExecutor(1)
    self._pending: list = []  # (future, inputs)
    self._wake = asyncio.Event()
    self._closed = asyncio.Event()
    self._task = None

  def _load_params(self) -> None:
    with self._lock:
      params, self._new_params = self._new_params, None
    if params is not None:
      t0 = time.perf_counter()
      self._params = self._jax.device_put(params, self._device)
      self.stats.params_loaded += 1
      self.stats.params_s += time.perf_counter() - t0

  def _answer(self, group: list) -> list:
    """In the pass thread: the newest parameters, then one pass."""
    self._load_params()
    return inference.answer_group(
        lambda x: self.net.forward_jitted(x, self._params), group, self.stats)

  async def set_params(self, params) -> None:
    with self._lock:
      self._new_params = params  # loaded before the next pass

  async def infer(self, inputs: np.ndarray):
    if self._task is None:
      self._task = asyncio.get_running_loop().create_task(self._serve())
    future = asyncio.get_running_loop().create_future()
    self._pending.append((future, inputs))
    self._wake.set()
    return await future

  async def _serve(self) -> None:
    loop = asyncio.get_running_loop()
    while True:
      await self._wake.wait()
      self._wake.clear()
      requests, self._pending = self._pending, []
      for group in inference._groups(requests, inference.MAX_ROWS):  # pylint: disable=protected-access
        try:
          replies = await loop.run_in_executor(self._pool, self._answer,
                                               group)
        except Exception as e:  # pylint: disable=broad-except
          for future, _ in group:
            if not future.done():
              future.set_exception(e)
          continue
        for (future, _), reply in zip(group, replies):
          if not future.done():
            future.set_result(reply)

  async def stats_line(self) -> str:
    return self.stats.line(self.platform)

  async def node_id(self) -> str:
    """The Ray node the service runs on."""
    return ray.get_runtime_context().get_node_id()

  async def closed(self) -> None:
    """Returns once `close()` is called: the backend watches this call to
    learn that the actor died."""
    await self._closed.wait()

  async def close(self) -> None:
    self._closed.set()


class RayTransport:
  """`inference.InferenceClient`'s transport to the `_InferenceService`
  actor: one actor call per leaf batch, awaited."""

  def __init__(self, service):
    self.service = service

  def __call__(self, inputs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    try:
      values, logits = ray.get(self.service.infer.remote(inputs))
    except ray.exceptions.RayActorError as e:
      raise RuntimeError(
          "inference: the inference service is gone (it failed, or the "
          f"learner stopped it): {e}") from None
    return values, logits


def start_service(config: TrainConfig, params_ref, node_id: str | None = None):
  """The `_InferenceService` actor for `config.inference` ("cpu" or "gpu"),
  placed on node `node_id` (default: this driver's node, where the learner
  runs), with the service's environment (`inference.service_environment`).
  It asks Ray for no CPU (as the mailboxes: it never keeps the workers from
  their cores) and, for "gpu", one GPU: a ValueError (one line) if that
  node has none for Ray."""
  from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy  # pylint: disable=g-import-not-at-top
  platform = config.inference
  node_id = node_id or ray.get_runtime_context().get_node_id()
  num_gpus = 0
  if platform == "gpu":
    num_gpus = 1
    gpus = [n["Resources"].get("GPU", 0) for n in ray.nodes()
            if n.get("NodeID") == node_id]
    if not gpus or gpus[0] < 1:
      raise ValueError(
          "train: inference 'gpu' on the ray backend, but Ray's node of the "
          f"learner ({node_id[:12]}) has no GPU (start it with ray start "
          "--num-gpus=1, or use inference 'cpu' or 'local')")
  actor = ray.remote(_InferenceService).options(
      num_cpus=0, num_gpus=num_gpus,
      runtime_env={"env_vars": inference.service_environment(platform)},
      scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False))
  return actor.remote(config.to_json(), platform, params_ref)


class _RayWorker:
  """One actor or solver (made a Ray actor by `_remote_worker_class`)."""

  def __init__(self, role: str, index: int, config_json: dict, params,
               query_queue, example_queue, launched_at: float,
               service=None):
    self.clock = WorkerClock(launched_at)
    config = TrainConfig.from_json(config_json)
    self.role = role
    self.worker = recipes.get(config.recipe).make_worker(
        config, seed=1 + index, index=index)
    self.channel = _RayChannel(query_queue, example_queue, config.solvers)
    if service is not None:
      # The inference service holds the parameters; the worker loads none.
      inference.use_service(self.worker, RayTransport(service), self.clock)
    else:
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
    self.service = None  # the inference service's actor (inference != local)
    self._service_closed = None  # its `closed()` call: done when it died
    self.service_line = ""  # its stats, read at `stop()`
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
    if cfg.inference != "local":
      # The inference service on this node (the learner's), holding the
      # parameters: the workers get none.
      self.service = start_service(cfg, param_ref)
      self._service_closed = self.service.closed.remote()
      param_ref = None
    worker_class = _remote_worker_class()
    # The worker processes' environment is set before they import numpy and
    # JAX: one compute thread each, JAX on the CPU (worker_environment).
    runtime_env = {"env_vars": worker_environment(cfg.worker_platform)}
    for i, role in enumerate(roles):
      name = f"sog-{role}-{i}"
      handle = worker_class.options(
          num_cpus=num_cpus, runtime_env=runtime_env).remote(
              role, i, cfg.to_json(), param_ref, self.query_queue,
              self.example_queue, time.time(), self.service)
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
    if self.service is not None:
      self.service.set_params.remote(param_ref)
      return
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
    """Raises if a worker loop, or the inference service, has ended (only
    `stop()` should end one)."""
    if not self._runs:
      return
    watched = dict(self._runs)
    if self._service_closed is not None:
      watched[self._service_closed] = f"sog-inference-{self.config.inference}"
    done, _ = ray.wait(list(watched), num_returns=len(watched), timeout=0)
    if not done:
      return
    # The service first: a worker whose service died fails after it.
    ref = next((r for r in done if r == self._service_closed), done[0])
    name = watched[ref]
    what = ("inference service" if ref == self._service_closed
            else "training worker")
    try:
      ray.get(ref)
      error = None
    except Exception as e:  # pylint: disable=broad-except
      error = e
    self.stop()
    if error is None:
      raise RuntimeError(f"{what} {name} stopped unexpectedly")
    raise RuntimeError(f"{what} {name} failed: {error}") from error

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
      if self.service is not None:
        # After the workers: they call it until they stop.
        try:
          line, node = ray.get([self.service.stats_line.remote(),
                                self.service.node_id.remote()],
                               timeout=_STOP_GRACE_S)
          head = any(n.get("NodeID") == node and
                     "node:__internal_head__" in n.get("Resources", {})
                     for n in ray.nodes())
          self.service_line = (f"{line}; on Ray node {node[:12]}"
                               f"{' (the head)' if head else ''}")
          print(self.service_line, file=sys.stderr, flush=True)
        except Exception:  # pylint: disable=broad-except
          pass
      for q in (self.query_queue, self.example_queue, self.service):
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
      self.service = None
      self._service_closed = None
      if self._owns_ray:
        ray.shutdown()
        self._owns_ray = False
