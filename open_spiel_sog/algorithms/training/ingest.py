"""Synthetic examples fed to the learner as fast as worker processes can
send them: what the learner alone can take in (`benchmarks/
training_throughput.py --ingest_only`).

`IngestBackend` is the process backend with its workers replaced by
producers: each builds a few random example batches of the game's shapes
(the network's input width, slots and actions: `ExampleShape`) once, then
sends them through the same example queue and message format
(`QueueChannel.put_examples`) as a real worker, with the same stats, as
fast as the queue takes them. The queue is bounded, so producers wait where
the learner falls behind instead of filling the memory: the examples the
learner adds per second are its ingest rate.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import queue as queue_lib
import time

import numpy as np

from open_spiel_sog.algorithms.sog import cvpn
from open_spiel_sog.algorithms.training.backends import child_environment
from open_spiel_sog.algorithms.training.backends import ProcessBackend
from open_spiel_sog.algorithms.training.config import TrainConfig
from open_spiel_sog.algorithms.training.selfplay import WorkStats
from open_spiel_sog.algorithms.training.workers import QueueChannel
from open_spiel_sog.algorithms.training.workers import worker_environment
from open_spiel_sog.algorithms.training.workers import WorkerClock

# Messages the example queue holds before producers wait.
QUEUED_MESSAGES = 64
# Distinct random batches each producer cycles through.
_POOL = 4


@dataclasses.dataclass(frozen=True)
class ExampleShape:
  """The shapes of a slot network's examples.

  Attributes:
    input_size: D, the input width.
    num_rows: P, the slots (both players').
    num_actions: A.
  """
  input_size: int
  num_rows: int
  num_actions: int

  @classmethod
  def of(cls, net: cvpn.CVPN) -> "ExampleShape":
    encoder = net.encoder
    if not hasattr(encoder, "num_rows"):
      raise ValueError("ingest: synthetic examples are built for the slot "
                       "input (--input=slots); the token input's examples "
                       "vary in size with the public state")
    return cls(int(encoder.input_size), int(encoder.num_rows),
               int(encoder.num_actions))


def synthetic_batch(shape: ExampleShape, size: int,
                    rng: np.random.Generator) -> cvpn.Batch:
  """`size` random examples of `shape`: inputs in [0, 1), value targets in
  [-1, 1], masks and legal actions 0/1 (at least one legal action per
  slot), policy targets normalised over the legal actions."""
  b, p, a = size, shape.num_rows, shape.num_actions
  legal = (rng.random((b, p, a)) < 0.7).astype(np.float32)
  legal[:, :, 0] = 1.0
  policy = rng.random((b, p, a)).astype(np.float32) * legal
  policy /= policy.sum(axis=2, keepdims=True)
  return cvpn.Batch(
      inputs=rng.random((b, shape.input_size)).astype(np.float32),
      value_target=rng.uniform(-1, 1, (b, p)).astype(np.float32),
      value_mask=(rng.random((b, p)) < 0.8).astype(np.float32),
      policy_target=policy,
      policy_mask=(rng.random((b, p)) < 0.5).astype(np.float32),
      legal=legal)


def _produce(index: int, shape: ExampleShape, batch_size: int,
             example_queue, stop_event, launched_at: float) -> None:
  """A producer process: sends its batches until told to stop."""
  clock = WorkerClock(launched_at)
  rng = np.random.default_rng(index)
  t0 = time.perf_counter()
  pool = [synthetic_batch(shape, batch_size, rng) for _ in range(_POOL)]
  clock.busy_s += time.perf_counter() - t0
  # (At exit, a message still in this process's feeder thread is dropped
  # rather than waited for: the learner has stopped reading.)
  example_queue.cancel_join_thread()
  channel = QueueChannel(None, example_queue, solvers=0)
  stats = WorkStats()
  parent = multiprocessing.parent_process()
  clock.ready_at = time.time()
  k = 0
  while not stop_event.is_set() and (parent is None or parent.is_alive()):
    t0 = time.perf_counter()
    if clock.first_example_at is None:
      clock.first_example_at = time.time()
    batch = pool[k % _POOL]
    message_stats = clock.stats(f"producer-{index}", stats)
    # (Put with a timeout, so that a full queue does not hide the stop.)
    while not stop_event.is_set():
      try:
        channel.put_examples(batch, message_stats, timeout=0.1)
        k += 1
        break
      except queue_lib.Full:
        pass
    clock.io_s += time.perf_counter() - t0


class IngestBackend(ProcessBackend):
  """`actors + solvers` producer processes of synthetic examples (module
  doc), each message `batch_size` examples."""

  def __init__(self, config: TrainConfig, net: cvpn.CVPN, batch_size: int):
    super().__init__(config, net)
    if batch_size < 1:
      raise ValueError(f"ingest: examples per message must be >= 1, got "
                       f"{batch_size}")
    self.shape = ExampleShape.of(net)
    self.batch_size = batch_size
    self.example_queue = self._ctx.Queue(maxsize=QUEUED_MESSAGES)

  def start(self, params) -> None:
    del params  # producers send examples only
    with child_environment(worker_environment("cpu")):
      for i in range(self.config.actors + self.config.solvers):
        p = self._ctx.Process(
            target=_produce, name=f"sog-producer-{i}",
            args=(i, self.shape, self.batch_size, self.example_queue,
                  self.stop_event, time.time()),
            daemon=True)
        p.start()
        self.processes.append(p)

  def publish(self, params, step: int) -> None:
    del params, step  # nobody reads them
