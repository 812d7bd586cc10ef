"""The worker side of training, shared by the process and Ray backends.

A worker (`selfplay.Worker`: an actor playing self-play games, or a query
solver) runs `worker_loop` until told to stop; a channel moves its queries,
examples and parameters (`QueueChannel` and its subclasses in `backends` and
`ray_backend`); `ParamFile` reads the parameters the learner publishes
to a file. `WorkerClock` records where a worker's time goes and
`WorkerStats` keeps the latest stats of each worker on the learner's side
(`receive_examples`). Worker processes start with `worker_environment`.
"""

from __future__ import annotations

import ctypes
import dataclasses
import os
import queue as queue_lib
import signal
import sys
import threading
import time
import zipfile
from typing import Any, Callable

import numpy as np

from open_spiel_sog.algorithms.sog import cvpn
from open_spiel_sog.algorithms.networks import CheckpointError
from open_spiel_sog.algorithms.training import replay
from open_spiel_sog.algorithms.training import selfplay

# Queries a solver takes from the queue and solves in one go at most (the
# inline backend's worker too): one message each way per batch of solves.
QUERIES_PER_SOLVE = 8
# Seconds a solver waits for a query before it plays a game instead
# (`idle_solvers_play`): long enough for the next actor search's queries,
# short against a game.
_IDLE_WAIT_S = 0.05


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


class WorkerClock:
  """Where a worker's time goes, sent with each example batch.

  busy_s: searching (self-play games, query solves; an actor's queries go
  out during its game, so their sending counts here); wait_s: waiting for a
  query; params_s: loading published parameters; io_s: sending examples (and
  a solver's queries); cpu_s: the process's CPU time. Wall-clock instants
  (time.time()): launched_at (the parent started the process), ready_at (the
  worker loop began: imports and set-up done, first parameters loaded) and
  first_example_at. `extra`, when set, gives more stats to send (a worker
  served by the inference service: its calls, rows and seconds waiting).
  """

  def __init__(self, launched_at: float | None = None):
    self.launched_at = launched_at if launched_at is not None else time.time()
    self.ready_at = None
    self.first_example_at = None
    self.busy_s = self.wait_s = self.params_s = self.io_s = 0.0
    self.extra: Callable[[], dict[str, Any]] | None = None
    self._t0 = time.perf_counter()

  def stats(self, name: str, work: selfplay.WorkStats) -> dict[str, Any]:
    out = dataclasses.asdict(work)
    out.update(worker=name, busy_s=self.busy_s, wait_s=self.wait_s,
               params_s=self.params_s, io_s=self.io_s,
               cpu_s=time.process_time(),
               alive_s=time.perf_counter() - self._t0,
               launched_at=self.launched_at, ready_at=self.ready_at,
               first_example_at=self.first_example_at)
    if self.extra is not None:
      out.update(self.extra())
    return out


def worker_loop(role: str, worker: selfplay.Worker, channel,
                should_stop: Callable[[], bool],
                clock: WorkerClock | None = None) -> None:
  """Actor or solver work until `should_stop()`; `channel` moves queries,
  examples and parameters (a `QueueChannel`: see `backends` and
  `ray_backend`)."""
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
    out.append(replay.from_dict(arrays))
    worker_stats.update(stats)
  return out


def read_params(path: str) -> dict[str, np.ndarray]:
  """The "params/..." arrays of a network file the learner published
  (any recipe's network: `networks.write_npz`)."""
  try:
    with np.load(path, allow_pickle=False) as z:
      return {k: z[k] for k in z.files if k.startswith("params/")}
  except (OSError, ValueError, zipfile.BadZipFile, EOFError) as e:
    raise CheckpointError(f"{path!r}: unreadable parameters: {e}") from None


def die_with_parent() -> None:
  """Ends this worker process when its parent (the learner) dies, however
  it dies (SIGKILL included): on Linux the kernel sends SIGKILL on the
  parent's death (prctl PR_SET_PDEATHSIG); everywhere, a daemon thread
  checks every half second that the parent is still this process's parent
  and exits at once when it is not (an orphan is adopted by another)."""
  parent = os.getppid()
  if sys.platform.startswith("linux"):
    try:
      libc = ctypes.CDLL(None, use_errno=True)
      libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
      pass

  def watch():
    while True:
      if os.getppid() != parent:
        os._exit(1)  # pylint: disable=protected-access
      time.sleep(0.5)

  threading.Thread(target=watch, name="die-with-parent", daemon=True).start()
  if os.getppid() != parent:  # (it died before the watch began)
    os._exit(1)  # pylint: disable=protected-access


class ParamFile:
  """The parameters of a checkpoint file the learner replaces atomically:
  `new_params()` gives them when the file changed since the last call,
  else None."""

  def __init__(self, path: str, template):
    self.path = path
    self.template = template
    self._mtime = None

  def new_params(self):
    try:
      mtime = os.stat(self.path).st_mtime_ns
    except FileNotFoundError:
      return None
    if mtime == self._mtime:
      return None
    arrays = read_params(self.path)
    self._mtime = mtime
    return cvpn.unflatten(self.template, arrays, "params", self.path)


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

  def put_examples(self, batch: cvpn.Batch, stats: dict,
                   timeout: float | None = None) -> None:
    """Sends `batch` with the worker's `stats`; where the queue is bounded
    and full, waits, for at most `timeout` seconds (then queue.Full)."""
    self.example_queue.put((batch.as_dict(), stats), timeout=timeout)
