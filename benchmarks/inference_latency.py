r"""One leaf batch: a worker's own numpy call against the inference service.

  python benchmarks/inference_latency.py --game=leduc_poker --rows=8,32,128

For each --rows, a batch of that many input rows of the game's slot CVPN
(random inputs: the cost does not depend on them) is evaluated --calls
times each way, and the median of each is printed (milliseconds):

- local_values: `CVPN.predict_values`, what a worker computes for every
  leaf batch with `--inference=local` (its priors come later, one query at
  a time, for the leaves that are expanded);
- local_values_and_logits: the same plus the policy head for every row
  (what the service computes);
- jitted_forward: `CVPN.forward_jitted` in this process (the service's
  forward pass without the pipes);
- service_round_trip: `InferenceClient` through a real service process on
  --platform (pipes, the service's loop, its forward pass).

This process and the service run with one compute thread, as the workers
and the service do in training. --json prints one JSON object last.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time

from absl import app
from absl import flags

_GAME = flags.DEFINE_string("game", "leduc_poker", "Game string.")
_ROWS = flags.DEFINE_list("rows", ["32"], "Rows per leaf batch to measure.")
_CALLS = flags.DEFINE_integer("calls", 2000, "Calls per measurement.")
_HIDDEN = flags.DEFINE_list("hidden", ["256", "256", "256"],
                            "MLP widths (the training benchmark's).")
_PLATFORM = flags.DEFINE_enum("platform", "cpu", ["cpu", "gpu"],
                              "Where the service runs.")
_JSON = flags.DEFINE_bool("json", False, "Print a JSON summary last.")


def _median_ms(fn, calls: int) -> float:
  fn()  # compile / warm up
  times = []
  for _ in range(calls):
    t0 = time.perf_counter()
    fn()
    times.append(time.perf_counter() - t0)
  return round(statistics.median(times) * 1e3, 4)


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  from open_spiel_sog.algorithms.training import inference  # pylint: disable=g-import-not-at-top
  # One compute thread here and in the service (set before JAX starts).
  os.environ.update(inference.service_environment(_PLATFORM.value))
  import numpy as np  # pylint: disable=g-import-not-at-top
  import pyspiel  # pylint: disable=g-import-not-at-top
  from open_spiel_sog.algorithms.sog import cvpn  # pylint: disable=g-import-not-at-top
  from open_spiel_sog.algorithms.training import TrainConfig  # pylint: disable=g-import-not-at-top
  from open_spiel_sog.public_state import PublicStateObserver  # pylint: disable=g-import-not-at-top
  from open_spiel_sog.public_state import search_game  # pylint: disable=g-import-not-at-top

  try:
    inference.check_platform(_PLATFORM.value)
  except ValueError as e:
    raise app.UsageError(str(e)) from None
  config = TrainConfig(game=_GAME.value, inference=_PLATFORM.value,
                       network=cvpn.NetworkConfig(
                           hidden=tuple(int(h) for h in _HIDDEN.value)))
  config.validate()
  game = search_game(pyspiel.load_game(config.game))
  net = cvpn.make_network(PublicStateObserver(game), config.network)
  net.init(0)
  policy = net._host_layers("policy")  # pylint: disable=protected-access
  path = os.path.join(tempfile.mkdtemp(prefix="inference_latency-"),
                      "params.npz")
  cvpn.save_checkpoint(path, net, game=game, include_optimizer=False)
  ctx = multiprocessing.get_context("spawn")
  stop = ctx.Event()
  process, (conn,) = inference.start_service(ctx, config, path, 1, stop)
  client = inference.InferenceClient.for_network(conn, net)
  rng = np.random.default_rng(0)
  rows = []
  try:
    for n in (int(r) for r in _ROWS.value):
      x = rng.random((n, net.encoder.input_size), dtype=np.float32)
      calls = _CALLS.value
      row = {
          "rows": n,
          "local_values": _median_ms(lambda: net.predict_values(x), calls),
          "local_values_and_logits": _median_ms(
              lambda: (net.predict_values(x), net._mlp(x, policy)),  # pylint: disable=protected-access
              calls),
          "jitted_forward": _median_ms(lambda: net.forward_jitted(x), calls),
          "service_round_trip": _median_ms(lambda: client(x), calls),
      }
      rows.append(row)
      print(f"{n} rows: local values {row['local_values']} ms, local values "
            f"and logits {row['local_values_and_logits']} ms, jitted forward "
            f"{row['jitted_forward']} ms, service round trip "
            f"{row['service_round_trip']} ms", flush=True)
  finally:
    conn.close()
    process.join(timeout=20)
  summary = {"game": _GAME.value, "platform": _PLATFORM.value,
             "hidden": [int(h) for h in _HIDDEN.value],
             "input_size": net.encoder.input_size, "calls": _CALLS.value,
             "cpu_count": os.cpu_count(), "rows": rows}
  if _JSON.value:
    print(json.dumps(summary))
  return 0


if __name__ == "__main__":
  sys.exit(app.run(main))
