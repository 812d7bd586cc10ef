r"""The policy-value network's host inference: torso "mlp" against "conv".

  python benchmarks/policy_value_inference.py --game=connect_four --json

Both networks have the perfect_information recipe's settings
(`policy_value.default_config()`), one with torso "mlp", one with "conv"
(`--res_channels`, `--res_blocks`) and AlphaZero's heads
(`policy_value.CONV_HEADS`), as `examples/train.py --network=conv` builds
it. `PolicyValueNet.evaluate` of
`--batch` rows of the initial state (the cost does not depend on them)
is timed `--repeats` times each way, in turns of 50 calls of one network
(its weights warm in the caches, as in a search) so that a busy machine
slows both alike; the medians (microseconds) and their ratio conv / mlp
are printed. This process runs numpy on one compute
thread, as the training workers do. --json prints one JSON object last.
"""

from __future__ import annotations

import dataclasses
import json
import os
import statistics
import sys
import time

from absl import app
from absl import flags

_GAME = flags.DEFINE_string("game", "connect_four", "Game string.")
_REPEATS = flags.DEFINE_integer("repeats", 5000, "Timed calls each way.")
_BATCH = flags.DEFINE_integer("batch", 1, "Rows per call.")
_RES_CHANNELS = flags.DEFINE_integer("res_channels", 16,
                                     "The conv torso's channels.")
_RES_BLOCKS = flags.DEFINE_integer("res_blocks", 2,
                                   "The conv torso's residual blocks.")
_JSON = flags.DEFINE_bool("json", False, "Print a JSON summary last.")
_BLOCK = 50  # (calls of one network before the other's turn)


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  # One compute thread, as in the training workers (read when numpy loads).
  os.environ.update({name: "1" for name in (
      "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")})
  import numpy as np  # pylint: disable=g-import-not-at-top
  import pyspiel  # pylint: disable=g-import-not-at-top
  from open_spiel_sog.algorithms.networks import policy_value  # pylint: disable=g-import-not-at-top

  game = pyspiel.load_game(_GAME.value)
  state = game.new_initial_state()
  nets = {}
  for torso in ("mlp", "conv"):
    # (The conv torso with AlphaZero's heads, as train.py builds it.)
    heads = policy_value.CONV_HEADS if torso == "conv" else {}
    nets[torso] = policy_value.PolicyValueNet(game, dataclasses.replace(
        policy_value.default_config(), torso=torso,
        res_channels=_RES_CHANNELS.value, res_blocks=_RES_BLOCKS.value,
        **heads))
    nets[torso].init(0)
  inputs = np.repeat(np.asarray(
      [state.observation_tensor(state.current_player())], np.float32),
                     _BATCH.value, axis=0)
  legal = np.zeros((_BATCH.value, game.num_distinct_actions()), np.float32)
  legal[:, state.legal_actions()] = 1.0
  times = {torso: [] for torso in nets}
  for _ in range(-(-_REPEATS.value // _BLOCK)):
    for torso, net in nets.items():
      net.evaluate(inputs, legal)  # (warms the caches for this block)
      for _ in range(_BLOCK):
        start = time.perf_counter()
        net.evaluate(inputs, legal)
        times[torso].append(time.perf_counter() - start)
  median = {torso: round(statistics.median(t) * 1e6, 2)
            for torso, t in times.items()}
  ratio = round(median["conv"] / median["mlp"], 2)
  print(f"{game} batch {_BATCH.value}: mlp {median['mlp']} us, conv "
        f"{median['conv']} us ({_RES_CHANNELS.value} channels, "
        f"{_RES_BLOCKS.value} blocks): conv / mlp {ratio}", flush=True)
  if _JSON.value:
    print(json.dumps({"game": str(game), "batch": _BATCH.value,
                      "repeats": _REPEATS.value,
                      "res_channels": _RES_CHANNELS.value,
                      "res_blocks": _RES_BLOCKS.value,
                      "mlp_us": median["mlp"], "conv_us": median["conv"],
                      "ratio": ratio, "cpu_count": os.cpu_count(),
                      "command": "python " + " ".join(sys.argv),
                      "machine": f"{os.cpu_count()}-core development "
                                 "machine, one numpy thread"}))
  return 0


if __name__ == "__main__":
  sys.exit(app.run(main))
