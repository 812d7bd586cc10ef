"""One inference service for every worker's network calls (`--inference`).

With `TrainConfig.inference` "local" (the default) each worker runs its own
copy of the network in numpy (`CVPNValueFunction.network_values`). With
"cpu" or "gpu" the process backend starts one more process, the inference
service (`start_service`, `_service_main`), which holds the only copy of
the parameters the workers search with, on that JAX platform, and answers
every worker's leaf batches with one jitted forward pass
(`CVPN.forward_jitted`: values and policy logits, batches padded to
power-of-two buckets so each bucket compiles once).

Protocol. Each worker has a duplex pipe (`multiprocessing.Pipe`) to the
service and at most one request in flight:

- request: the raw bytes of its network inputs, float32 [L, input_size]
  (C order), one message per leaf batch (`InferenceClient.__call__`);
- reply: the raw bytes of the values float32 [L, P] followed by the policy
  logits float32 [L, P, A] of every row (P: the encoder's rows, A: its
  actions), one message.

So a leaf batch costs one round trip and the priors GT-CFR reads later are
the softmax of logits already in the reply (`RemoteValueFunction`), not a
second call. The service waits for any pipe to have a request
(`multiprocessing.connection.wait`), takes every request then waiting,
concatenates them (groups of at most `MAX_ROWS` rows), runs one forward pass
per group, and sends each worker its slice. It adds no waiting of its own:
requests that arrive during a pass make the next pass's batch.

Parameters: the service re-reads the learner's published parameter file
(`ProcessBackend.param_path`) whenever its modification time changes,
checked before each pass; the workers then load no parameters at all.

Lifetime: the service exits when every worker's pipe is closed (the workers
have exited), when the learner is gone, or when the backend's stop event is
set and no request has come for `_STOP_IDLE_S`. A worker whose service is
gone gets an error (`InferenceClient`), so it exits and the learner reports
it; the service is among the backend's processes, so the learner reports
its death too.

A "gpu" service needs a GPU visible to JAX: `check_platform` probes a
process started with the service's environment before any worker starts
and raises a one-line ValueError otherwise. Only the slot CVPN is served
(the token network's inputs are many arrays of per-batch widths); the
inline backend takes "local" only (`TrainConfig.validate`).

The Ray backend runs the same batching in a Ray actor instead of a process
(`ray_backend.start_service`): workers reach it through `InferenceClient`
with a transport of their own (a callable inputs -> (values, logits), one
actor call per leaf batch; `PipeTransport` is this module's), the passes
are `answer_group`'s, and the parameters come from Ray's object store.
"""

from __future__ import annotations

import multiprocessing
from multiprocessing import connection as mp_connection
import os
import subprocess
import sys
import time
from typing import Any, Callable, Sequence

import numpy as np

from open_spiel_sog.algorithms.networks import masked_softmax
from open_spiel_sog.algorithms.sog import cvpn
from open_spiel_sog.algorithms.sog import value_functions
from open_spiel_sog.algorithms.training.config import TrainConfig
from open_spiel_sog.algorithms.training.workers import die_with_parent
from open_spiel_sog.algorithms.training.workers import ParamFile
from open_spiel_sog.algorithms.training.workers import worker_environment
from open_spiel_sog.utils import threads

# Rows in one forward pass at most (more waiting requests make more passes;
# a single larger request is run in chunks of `CVPN.MAX_BUCKET`).
MAX_ROWS = 4096
# After the stop event, seconds without a request before the service exits
# even if some worker's pipe is still open (a worker finishing its game
# sends requests until it stops).
_STOP_IDLE_S = 2.0


def service_environment(platform: str) -> dict[str, str]:
  """Environment variables the service process starts with (the workers':
  one numpy thread, JAX on `platform`: "cpu": JAX_PLATFORMS=cpu; "gpu":
  memory taken as needed). On the CPU the service also starts its JAX on
  one compute thread (`utils.threads`), since it shares the machine with
  the workers."""
  return worker_environment(platform)


_PROBE = ("import jax\n"
          "print(','.join(sorted({d.platform for d in jax.devices()})))\n")


def check_platform(platform: str) -> None:
  """For "gpu": a ValueError (one line) unless JAX sees a GPU in a process
  started with the service's environment. Probed in a short subprocess, so
  this process's JAX (the learner's, perhaps held to the CPU) is untouched.
  "cpu" and "local" need nothing."""
  if platform != "gpu":
    return
  env = dict(os.environ)
  env.update(service_environment(platform))
  try:
    probe = subprocess.run([sys.executable, "-c", _PROBE], env=env,
                           capture_output=True, text=True, timeout=300,
                           check=False)
    seen = probe.stdout.strip() if probe.returncode == 0 else ""
  except (OSError, subprocess.TimeoutExpired) as e:
    seen = f"none: {type(e).__name__}"
  if "gpu" not in seen.split(","):
    raise ValueError(
        f"train: inference 'gpu', but JAX sees no GPU (its devices: "
        f"{seen or 'none: jax failed to start'}); install a CUDA build of "
        "jax (pip install 'jax[cuda12]') or use inference 'cpu' or 'local'")


# --- The worker's side -------------------------------------------------------


class PipeTransport:
  """The process backend's transport: `transport(inputs)` sends the inputs'
  raw bytes down a worker's pipe to the service and reads the reply (see the
  module docstring); inputs float32 [L, input_size], L > 0."""

  def __init__(self, conn, rows: int, actions: int):
    self.conn = conn
    self.rows = rows
    self.actions = actions

  def __call__(self, inputs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = inputs.shape[0]
    p, a = self.rows, self.actions
    # A fresh buffer per call: the priors read the logits later.
    reply = bytearray(4 * n * p * (1 + a))
    try:
      self.conn.send_bytes(inputs)
      size = self.conn.recv_bytes_into(reply)
    except (EOFError, OSError) as e:
      raise RuntimeError(
          "inference: the inference service is gone (it exited, or the "
          f"learner stopped it): {type(e).__name__}") from None
    if size != len(reply):
      raise RuntimeError(f"inference: a reply of {size} bytes, expected "
                         f"{len(reply)}")
    values = np.frombuffer(reply, np.float32, count=n * p).reshape(n, p)
    logits = np.frombuffer(reply, np.float32, offset=4 * n * p).reshape(
        n, p, a)
    return values, logits


class InferenceClient:
  """A worker's end of its link to the service: `client(inputs)` gives
  (values [L, P], logits [L, P, A]), float32, for inputs [L, input_size],
  in one round trip through `transport` (a callable inputs -> (values,
  logits): a `PipeTransport` for the process backend, a connection given
  here is wrapped in one; `ray_backend` passes a call to its Ray actor).
  `stats()` gives the calls, rows and seconds spent in them (sent with the
  worker's stats)."""

  def __init__(self, transport, input_size: int, rows: int, actions: int):
    if not callable(transport):  # a multiprocessing connection
      transport = PipeTransport(transport, rows, actions)
    self.transport = transport
    self.input_size = input_size
    self.rows = rows
    self.actions = actions
    self.calls = 0
    self.sent_rows = 0
    self.wait_s = 0.0

  @classmethod
  def for_network(cls, transport, net: cvpn.CVPN) -> "InferenceClient":
    enc = net.encoder
    return cls(transport, enc.input_size, enc.num_rows, enc.num_actions)

  def __call__(self, inputs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    inputs = np.ascontiguousarray(inputs, dtype=np.float32)
    n = inputs.shape[0]
    p, a = self.rows, self.actions
    if n == 0:
      return (np.zeros((0, p), np.float32), np.zeros((0, p, a), np.float32))
    if inputs.shape[1] != self.input_size:
      raise ValueError(f"inference: inputs of width {inputs.shape[1]}, the "
                       f"network's are {self.input_size}")
    t0 = time.perf_counter()
    values, logits = self.transport(inputs)
    self.wait_s += time.perf_counter() - t0
    self.calls += 1
    self.sent_rows += n
    if values.shape != (n, p) or logits.shape != (n, p, a):
      raise RuntimeError(
          f"inference: a reply of shapes {values.shape} and {logits.shape}, "
          f"expected {(n, p)} and {(n, p, a)}")
    return values, logits

  def stats(self) -> dict[str, Any]:
    return {"infer_calls": self.calls, "infer_rows": self.sent_rows,
            "infer_s": self.wait_s}


class RemoteValueFunction(cvpn.CVPNValueFunction):
  """`CVPNValueFunction` whose network calls go to the inference service
  through `client` (a callable inputs -> (values, logits), usually an
  `InferenceClient`): the inputs are packed as the local one packs them,
  the values and logits come back in one round trip, and the priors are the masked softmax of the
  reply's logits at `prior_temperature` (what the local one computes from
  its own policy head). `evaluate` (the growth root's prior) goes the same
  way, so the worker needs no parameters."""

  def __init__(self, net: cvpn.CVPN, client: InferenceClient):
    super().__init__(net)
    self.client = client

  def network_values(self, layout: value_functions.NetworkLayout,
                     inputs: np.ndarray):
    values, logits = self.client(inputs)
    legal_rows = layout.priors
    temperature = self.net.config.prior_temperature

    def prior(k: int) -> np.ndarray:
      rows, legal_k = legal_rows[k]
      pi = masked_softmax(logits[k][rows], legal_k, temperature)
      pi = pi.astype(np.float64)
      return pi / pi.sum(axis=1, keepdims=True)

    return values, value_functions.LazyPriors(layout.defined, prior,
                                              len(layout.chance))

  def evaluate(self, queries: Sequence[value_functions.Query]
               ) -> list[value_functions.Evaluation]:
    return self.evaluate_by_packing(queries)


def use_service(worker, transport, clock=None) -> InferenceClient:
  """Points `worker` (a `selfplay.Worker`) at the service through
  `transport` (its pipe, or a callable: `InferenceClient`); with `clock` (a
  `WorkerClock`), its stats carry the client's."""
  client = InferenceClient.for_network(transport, worker.net)
  worker.set_value_function(RemoteValueFunction(worker.net, client))
  if clock is not None:
    clock.extra = client.stats
  return client


# --- The service -------------------------------------------------------------


class ServiceStats:
  """What the service did: forward passes, requests, rows, seconds."""

  def __init__(self):
    self.passes = self.requests = self.rows = 0
    self.forward_s = self.params_s = 0.0
    self.params_loaded = 0

  def line(self, platform: str) -> str:
    per = max(self.passes, 1)
    return (f"inference service ({platform}): {self.passes} forward passes, "
            f"{self.requests} requests, {self.rows} rows ("
            f"{self.requests / per:.2f} requests, {self.rows / per:.1f} rows "
            f"a pass), forward {self.forward_s:.1f} s, parameters loaded "
            f"{self.params_loaded} times ({self.params_s:.1f} s)")


def _groups(requests: list, max_rows: int) -> list[list]:
  """`requests` [(conn, inputs)] in consecutive groups of at most
  `max_rows` rows (a larger request alone)."""
  groups, group, rows = [], [], 0
  for item in requests:
    n = len(item[1])
    if group and rows + n > max_rows:
      groups.append(group)
      group, rows = [], 0
    group.append(item)
    rows += n
  if group:
    groups.append(group)
  return groups


def answer_group(forward: Callable[[np.ndarray], tuple[np.ndarray,
                                                       np.ndarray]],
                 group: list, stats: ServiceStats) -> list[tuple[np.ndarray,
                                                                 np.ndarray]]:
  """One forward pass for `group` [(key, inputs)] (a group of `_groups`):
  the requests' inputs concatenated, and each request's (values, logits)
  rows of the result, in order; `stats` counts the pass."""
  inputs = (group[0][1] if len(group) == 1 else
            np.concatenate([x for _, x in group]))
  t0 = time.perf_counter()
  values, logits = forward(inputs)
  stats.forward_s += time.perf_counter() - t0
  stats.passes += 1
  stats.requests += len(group)
  stats.rows += len(inputs)
  out, lo = [], 0
  for _, x in group:
    hi = lo + len(x)
    out.append((np.ascontiguousarray(values[lo:hi]),
                np.ascontiguousarray(logits[lo:hi])))
    lo = hi
  return out


def serve(forward: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
          conns: list, input_size: int,
          refresh: Callable[[], None] = lambda: None,
          should_stop: Callable[[], bool] = lambda: False,
          max_rows: int = MAX_ROWS,
          stats: ServiceStats | None = None) -> ServiceStats:
  """Answers the requests on `conns` (see the module docstring) until every
  pipe is closed or `should_stop()` after `_STOP_IDLE_S` without a request.
  `forward(inputs)` gives (values, logits); `refresh()` runs before each
  pass (the service's parameter check)."""
  stats = stats or ServiceStats()
  live = list(conns)
  idle_since = time.perf_counter()
  while live:
    ready = mp_connection.wait(live, timeout=0.1)
    requests = []
    for conn in ready:
      try:
        data = conn.recv_bytes()
      except (EOFError, OSError):
        live.remove(conn)
        continue
      requests.append(
          (conn, np.frombuffer(data, np.float32).reshape(-1, input_size)))
    if not requests:
      if should_stop() and time.perf_counter() - idle_since >= _STOP_IDLE_S:
        break
      continue
    refresh()
    for group in _groups(requests, max_rows):
      for (conn, _), (values, logits) in zip(
          group, answer_group(forward, group, stats)):
        try:
          conn.send_bytes(values.tobytes() + logits.tobytes())
        except (BrokenPipeError, OSError):
          live.remove(conn)
    idle_since = time.perf_counter()
  return stats


def service_network(config: TrainConfig) -> cvpn.CVPN:
  """The network the service runs for `config` (no parameters yet)."""
  import pyspiel  # pylint: disable=g-import-not-at-top
  from open_spiel_sog.public_state import PublicStateObserver  # pylint: disable=g-import-not-at-top
  from open_spiel_sog.public_state import search_game  # pylint: disable=g-import-not-at-top
  game = search_game(pyspiel.load_game(config.game))
  return cvpn.make_network(PublicStateObserver(game), config.network)


def _service_main(config_json: dict, param_path: str, conns: list,
                  stop_event, platform: str) -> None:
  """The service process: the network of the config on `platform`, its
  parameters from `param_path`, serving `conns` (one per worker)."""
  import jax  # pylint: disable=g-import-not-at-top

  die_with_parent()
  config = TrainConfig.from_json(config_json)
  if platform == "cpu":
    # One compute thread: the workers have the other cores.
    threads.start_jax_on_one_thread()
  try:
    device = jax.devices(platform)[0]
  except RuntimeError:
    print(f"train: inference {platform!r}, but JAX sees no "
          f"{platform.upper()} in the inference service", file=sys.stderr)
    sys.exit(2)
  net = service_network(config)
  params_file = ParamFile(param_path, net.param_shapes())
  stats = ServiceStats()
  parent = multiprocessing.parent_process()

  def should_stop() -> bool:
    return stop_event.is_set() or (parent is not None and
                                   not parent.is_alive())

  state = {"params": None}

  def refresh() -> None:
    t0 = time.perf_counter()
    params = params_file.new_params()
    if params is not None:
      state["params"] = jax.device_put(params, device)
      stats.params_loaded += 1
      stats.params_s += time.perf_counter() - t0

  # The learner publishes before it starts anything: wait for the file.
  refresh()
  while state["params"] is None:
    if should_stop():
      return
    time.sleep(0.05)
    refresh()

  def forward(inputs):
    return net.forward_jitted(inputs, state["params"])

  serve(forward, conns, net.encoder.input_size, refresh, should_stop,
        stats=stats)
  print(stats.line(platform), file=sys.stderr, flush=True)


def start_service(ctx, config: TrainConfig, param_path: str, clients: int,
                  stop_event, platform: str | None = None):
  """Starts the service process (context `ctx`, e.g. spawn) for `clients`
  workers; returns (process, the workers' ends of their pipes). The caller
  sets the process's environment (`service_environment`) and closes each
  worker's end once that worker has started (so the service sees a closed
  pipe when the worker exits)."""
  platform = platform or config.inference
  pairs = [ctx.Pipe(duplex=True) for _ in range(clients)]
  process = ctx.Process(
      target=_service_main, name=f"sog-inference-{platform}",
      args=(config.to_json(), param_path, [s for _, s in pairs], stop_event,
            platform),
      daemon=True)
  process.start()
  for _, service_end in pairs:
    service_end.close()
  return process, [w for w, _ in pairs]
