"""The inference service (`training.inference`, `--inference=cpu|gpu`): its
round trip gives what a worker's own numpy call gives, a training run with
it delivers examples, and the settings it cannot serve are refused."""

import multiprocessing
import os
import subprocess
import sys
import threading

import numpy as np
import pyspiel
import pytest

from open_spiel_sog.algorithms.sog import cvpn
from open_spiel_sog.algorithms.sog import value_functions
from open_spiel_sog.algorithms.training import TrainConfig
from open_spiel_sog.algorithms.training import Trainer
from open_spiel_sog.algorithms.training import inference
from open_spiel_sog.public_state import PublicStateObserver
from open_spiel_sog.public_state import search_game

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _queries(game, observer, rng, count):
  """`count` queries at public states of random Leduc histories (decision
  and chance nodes), with random ranges."""
  out = []
  while len(out) < count:
    state = game.new_initial_state()
    for _ in range(int(rng.integers(1, 8))):
      if state.is_terminal():
        break
      if state.is_chance_node():
        actions = [a for a, _ in state.chance_outcomes()]
      else:
        actions = state.legal_actions()
      state.apply_action(int(rng.choice(actions)))
    if state.is_terminal():
      continue
    ps, _ = observer.public_state_of(state)
    out.append(value_functions.Query(
        ps, (rng.random(ps.num_infostates(0)) + 0.1,
             rng.random(ps.num_infostates(1)) + 0.1)))
  return out


def _packed(queries):
  return value_functions.PackedQueries(
      [q.public_state for q in queries],
      tuple(np.concatenate([q.ranges[p] for q in queries]) for p in range(2)))


def _assert_same(local, remote, packed):
  """Values (float32 network, so 1e-5 relative to their scale) and every
  prior of the queries that have one."""
  for p in range(2):
    scale = max(np.abs(local[0][p]).max(), 1e-6)
    np.testing.assert_allclose(remote[0][p], local[0][p], rtol=1e-5,
                               atol=1e-5 * scale)
  defined = [k for k in range(len(packed)) if local[1][k] is not None]
  assert defined  # some decision nodes among the queries
  for k in range(len(packed)):
    if local[1][k] is None:
      assert remote[1][k] is None
    else:
      np.testing.assert_allclose(remote[1][k], local[1][k], rtol=1e-5,
                                 atol=1e-6)


def test_service_round_trips_match_the_workers_own_numpy_calls(tmp_path):
  """Two clients send concurrently through the real service process (CPU);
  each reply gives the values and priors a worker's own numpy network gives
  for the same inputs, before and after the parameters are republished."""
  config = TrainConfig(game="leduc_poker", inference="cpu",
                       network=cvpn.NetworkConfig(hidden=(64, 64)))
  game = search_game(pyspiel.load_game(config.game))
  observer = PublicStateObserver(game)
  net = cvpn.make_network(observer, config.network)
  net.init(0)
  path = str(tmp_path / "params.npz")
  cvpn.save_checkpoint(path, net, game=game, include_optimizer=False)
  ctx = multiprocessing.get_context("spawn")
  stop = ctx.Event()
  process, conns = inference.start_service(ctx, config, path, 2, stop)
  try:
    rng = np.random.default_rng(0)
    batches = [_packed(_queries(game, observer, rng, 32)) for _ in range(6)]
    # The workers' nets: no parameters of their own.
    remotes = [inference.RemoteValueFunction(
        cvpn.make_network(observer, config.network, net.encoder),
        inference.InferenceClient.for_network(c, net)) for c in conns]

    def check_concurrently(local_vf):
      expected = [local_vf.evaluate_packed(b) for b in batches]
      errors = []

      def client(vf, order):
        try:
          for i in order:
            _assert_same(expected[i], vf.evaluate_packed(batches[i]),
                         batches[i])
        except Exception as e:  # pylint: disable=broad-except
          errors.append(e)

      threads = [threading.Thread(target=client, args=(vf, order))
                 for vf, order in zip(remotes, ([0, 1, 2, 3, 4, 5] * 3,
                                                [5, 4, 3, 2, 1, 0] * 3))]
      for t in threads:
        t.start()
      for t in threads:
        t.join(timeout=120)
      assert not errors, errors[0]

    check_concurrently(cvpn.CVPNValueFunction(net))
    # Republished parameters reach the service's next pass.
    net.init(1)
    cvpn.save_checkpoint(path, net, game=game, include_optimizer=False)
    check_concurrently(cvpn.CVPNValueFunction(net))
    # `evaluate` (the growth root's prior) goes through the service too.
    queries = _queries(game, observer, rng, 5)
    for got, want in zip(remotes[0].evaluate(queries), net.evaluate_batch(
        queries)):
      for p in range(2):
        np.testing.assert_allclose(got.values[p], want.values[p], rtol=1e-5,
                                   atol=1e-6)
      if want.policy is not None:
        np.testing.assert_allclose(got.policy, want.policy, rtol=1e-5,
                                   atol=1e-6)
    client = remotes[0].client
    assert client.stats()["infer_calls"] == 2 * 18 + 1
  finally:
    for c in conns:
      c.close()  # every pipe closed: the service exits
    process.join(timeout=20)
    if process.is_alive():
      process.terminate()
  assert process.exitcode == 0


def test_gpu_inference_without_a_gpu_exits_2_in_one_line():
  import jax  # pylint: disable=g-import-not-at-top
  if any(d.platform == "gpu" for d in jax.devices()):
    pytest.skip("a GPU is visible: --inference=gpu is served")
  result = subprocess.run(
      [sys.executable, os.path.join(ROOT, "examples", "train.py"),
       "--game=kuhn_poker", "--steps=5", "--inference=gpu", "--noprogress"],
      capture_output=True, text=True, timeout=300, check=False)
  assert result.returncode == 2, result.stderr
  assert "Traceback" not in result.stderr, result.stderr
  # (The first line names the recipe; the second refuses the setting.)
  lines = [l for l in result.stderr.splitlines() if l.strip()]
  assert len(lines) == 2, result.stderr
  assert lines[0].startswith("train: kuhn_poker(): recipe public_states")
  assert lines[1].startswith("train: inference 'gpu', but JAX sees no GPU "
                             "(its devices: cpu)"), lines[1]


def test_process_training_with_the_cpu_service_delivers_examples(tmp_path):
  """A short kuhn_poker run, one actor and one solver served by the
  service: it reaches its steps, and the workers' examples and their
  service calls arrive with their stats."""
  config = TrainConfig(game="kuhn_poker", steps=12, backend="process",
                       actors=1, solvers=1, actor_simulations=10,
                       solver_simulations=10, batch_size=16, min_replay=16,
                       publish_every=5, inference="cpu",
                       checkpoint=str(tmp_path / "k.npz"),
                       network=cvpn.NetworkConfig(hidden=(16,)))
  trainer = Trainer(config, progress=False, log=lambda s: None)
  summary = trainer.run()
  assert summary["steps"] == 12
  assert summary["examples"] >= 16
  per_worker = trainer.backend.worker_stats.per_worker
  assert "actor-0" in per_worker
  for stats in per_worker.values():
    assert stats["examples"] > 0
    assert stats["infer_calls"] > 0 and stats["infer_rows"] > 0
    assert 0 < stats["infer_s"] <= stats["busy_s"]
  assert not trainer.backend.processes  # workers and service stopped


@pytest.mark.parametrize("overrides,message", [
    (dict(inference="tpu"),
     "train: unknown inference 'tpu'; supported: 'local', 'cpu', 'gpu'"),
    (dict(inference="cpu", backend="inline"),
     "train: inference 'cpu' (one inference service for every worker) "
     "needs the process or ray backend; backend 'inline' takes inference "
     "'local'"),
    (dict(inference="cpu", network=cvpn.NetworkConfig(input="tokens")),
     "train: inference 'cpu' serves the slot network only; input 'tokens' "
     "takes inference 'local' (or input=slots, for games whose public tree "
     "enumerates)"),
])
def test_settings_the_service_cannot_serve_are_refused(overrides, message):
  with pytest.raises(ValueError) as e:
    TrainConfig(game="kuhn_poker", **overrides).validate()
  assert str(e.value) == message
  # The process backend (the default) and the ray backend with the slot
  # input: served.
  TrainConfig(game="kuhn_poker", inference="cpu").validate()
  TrainConfig(game="kuhn_poker", inference="gpu", backend="ray").validate()


def test_train_binary_refuses_the_inline_backend_in_one_line():
  result = subprocess.run(
      [sys.executable, os.path.join(ROOT, "examples", "train.py"),
       "--game=kuhn_poker", "--steps=5", "--backend=inline",
       "--inference=cpu", "--noprogress"],
      capture_output=True, text=True, timeout=300, check=False)
  assert result.returncode == 2, result.stderr
  assert "Traceback" not in result.stderr, result.stderr
  assert result.stderr.strip().splitlines()[-1] == (
      "train: inference 'cpu' (one inference service for every worker) "
      "needs the process or ray backend; backend 'inline' takes inference "
      "'local'")
