"""The "ray" training backend (needs the optional ray extra).

Deselected by default (pyproject.toml's addopts has -m 'not ray'); run with
`make test-ray`, which installs ray first.
"""

import importlib
import os
import subprocess
import sys

import numpy as np
import pyspiel
import pytest

from open_spiel_sog.algorithms.sog import cvpn
from open_spiel_sog.algorithms.training.config import TrainConfig
from open_spiel_sog.algorithms.training.trainer import Trainer


# ray.init() starts Ray's processes with subprocess (fork, then exec) after JAX
# is loaded; JAX's warning about os.fork does not apply to that.
_IGNORE_FORK_WARNING = pytest.mark.filterwarnings(
    "ignore:os.fork\\(\\) was called:RuntimeWarning")


def _config(tmp_path, **kwargs):
  settings = dict(game="kuhn_poker", steps=30, backend="ray", actors=1,
                  solvers=1, actor_simulations=10, solver_simulations=10,
                  batch_size=32, min_replay=32,
                  network=cvpn.NetworkConfig(hidden=(32,)),
                  checkpoint=str(tmp_path / "k.npz"))
  settings.update(kwargs)
  return TrainConfig(**settings)


@pytest.mark.ray
@_IGNORE_FORK_WARNING
def test_ray_backend_trains_kuhn(tmp_path):
  pytest.importorskip("ray")
  import ray  # pylint: disable=g-import-not-at-top
  config = _config(tmp_path)
  summary = Trainer(config, progress=False).run()
  assert summary["steps"] == 30
  assert summary["examples"] > 0
  stats = summary["worker_stats"]
  assert stats["examples"] > 0 and stats["games"] > 0, stats
  net = cvpn.load_checkpoint(config.checkpoint, "kuhn_poker")
  assert net.step == 30
  # The backend started Ray, so it shut it down again.
  assert not ray.is_initialized()


@pytest.mark.ray
@_IGNORE_FORK_WARNING
@pytest.mark.parametrize("game,recipe", [
    ("tic_tac_toe", "perfect_information"),
    ("dark_hex(num_rows=2,num_cols=2)", "fog_of_war")])
def test_ray_backend_trains_every_recipe(tmp_path, game, recipe):
  """The perfect_information and fog_of_war recipes' workers run as Ray
  actors as the public_states recipe's do: the run reaches its steps and
  its checkpoint says which recipe wrote it."""
  pytest.importorskip("ray")
  from open_spiel_sog.algorithms.training import recipes  # pylint: disable=g-import-not-at-top
  chosen = recipes.get(recipe)
  settings = dict(chosen.defaults, actor_simulations=10, batch_size=16,
                  min_replay=16, solver_simulations=10)
  if recipe == "perfect_information":
    settings["recipe_settings"] = {"games": 4}
  config = TrainConfig(game=game, recipe=recipe, steps=5, backend="ray",
                       actors=1, checkpoint=str(tmp_path / "r.npz"),
                       network=chosen.network_config(), **settings)
  summary = Trainer(config, progress=False).run()
  assert summary["steps"] == 5 and summary["recipe"] == recipe
  assert summary["worker_stats"]["games"] > 0
  meta = chosen.load_network(config.checkpoint,
                             pyspiel.load_game(game)).metadata
  assert meta["extra"]["recipe"] == recipe


@pytest.mark.ray
@_IGNORE_FORK_WARNING
def test_ray_worker_error_surfaces_in_poll(tmp_path):
  """Parameters the network cannot use make the actor's game fail; poll
  raises naming the worker, and stop() leaves a Ray it did not start up."""
  ray = pytest.importorskip("ray")
  from open_spiel_sog.algorithms.training import ray_backend  # pylint: disable=g-import-not-at-top
  config = _config(tmp_path, solvers=0)
  ray.init(include_dashboard=False, log_to_driver=False)
  try:
    backend = ray_backend.RayBackend(config, net=None)
    backend.start({"bogus": np.zeros(3, dtype=np.float32)})
    try:
      with pytest.raises(RuntimeError, match="sog-actor-0"):
        for _ in range(300):
          backend.poll(block=True)
    finally:
      backend.stop()
    assert ray.is_initialized()
  finally:
    ray.shutdown()


@pytest.mark.ray
def test_import_without_ray_says_how_to_install(monkeypatch):
  name = "open_spiel_sog.algorithms.training.ray_backend"
  monkeypatch.delitem(sys.modules, name, raising=False)
  monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails.
  with pytest.raises(ImportError,
                     match=r"pip install 'open_spiel_sog\[ray\]'"):
    importlib.import_module(name)


def _free_port() -> int:
  import socket  # pylint: disable=g-import-not-at-top
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]


@pytest.mark.ray
@_IGNORE_FORK_WARNING
def test_ray_address_trains_on_an_existing_cluster_and_leaves_it_up(tmp_path):
  """A cluster started by `ray start --head` (as a user's would be): training
  with ray_address connects to it, its workers run there, and the cluster is
  still up afterwards."""
  pytest.importorskip("ray")
  import ray  # pylint: disable=g-import-not-at-top
  ray_cli = os.path.join(os.path.dirname(sys.executable), "ray")
  address = f"127.0.0.1:{_free_port()}"
  env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
  subprocess.run([ray_cli, "start", "--head", f"--port={address.split(':')[1]}",
                  "--num-cpus=2", "--include-dashboard=false"],
                 check=True, capture_output=True, timeout=120, env=env)
  try:
    config = _config(tmp_path, ray_address=address)
    summary = Trainer(config, progress=False).run()
    assert summary["steps"] == 30
    assert summary["worker_stats"]["games"] > 0
    assert not ray.is_initialized()  # the driver disconnected ...
    status = subprocess.run([ray_cli, "status", f"--address={address}"],
                            capture_output=True, text=True, timeout=60,
                            env=env, check=False)
    assert status.returncode == 0, status.stderr  # ... the cluster is up
  finally:
    subprocess.run([ray_cli, "stop", "--force"], capture_output=True,
                   timeout=120, env=env, check=False)


@pytest.mark.ray
def test_worker_cpu_shares_fit_every_worker_on_some_node():
  pytest.importorskip("ray")
  from open_spiel_sog.algorithms.training.ray_backend import worker_cpus  # pylint: disable=g-import-not-at-top
  assert worker_cpus([16], 15) == 1.0
  assert worker_cpus([2], 3) == 0.6666
  # Two one-CPU nodes: two thirds of a CPU each would leave the third worker
  # with no node to run on.
  assert worker_cpus([1, 1], 3) == 0.5
  assert worker_cpus([1], 3) == 0.3333
  with pytest.raises(ValueError, match="cannot hold 2 workers"):
    worker_cpus([0], 2)


@pytest.mark.ray
@_IGNORE_FORK_WARNING
def test_ray_training_with_the_cpu_inference_service(tmp_path):
  """--inference=cpu on the ray backend: a short run reaches its steps with
  examples from both workers, each served by the service actor."""
  pytest.importorskip("ray")
  import ray  # pylint: disable=g-import-not-at-top
  config = _config(tmp_path, inference="cpu", publish_every=5)
  trainer = Trainer(config, progress=False, log=lambda s: None)
  summary = trainer.run()
  assert summary["steps"] == 30
  per_worker = trainer.backend.worker_stats.per_worker
  assert sorted(per_worker) == ["actor-0", "solver-1"], per_worker
  for stats in per_worker.values():
    assert stats["examples"] > 0
    assert stats["infer_calls"] > 0 and stats["infer_rows"] > 0
    assert 0 < stats["infer_s"] <= stats["busy_s"]
  assert trainer.backend.service_line.startswith(
      "inference service (cpu): "), trainer.backend.service_line
  assert not ray.is_initialized()


@pytest.mark.ray
@_IGNORE_FORK_WARNING
def test_ray_service_round_trips_match_the_workers_own_numpy_calls():
  """Two threads call the service actor at once (on this driver's node);
  each reply gives the values and priors a worker's own numpy network gives
  (1e-5), before and after parameters are republished through the object
  store."""
  ray = pytest.importorskip("ray")
  import threading  # pylint: disable=g-import-not-at-top
  import pyspiel  # pylint: disable=g-import-not-at-top
  from open_spiel_sog.algorithms.training import inference  # pylint: disable=g-import-not-at-top
  from open_spiel_sog.algorithms.training import ray_backend  # pylint: disable=g-import-not-at-top
  from open_spiel_sog.public_state import PublicStateObserver  # pylint: disable=g-import-not-at-top
  from open_spiel_sog.public_state import search_game  # pylint: disable=g-import-not-at-top
  import inference_test  # pylint: disable=g-import-not-at-top  # tests/, on sys.path
  config = TrainConfig(game="leduc_poker", backend="ray", inference="cpu",
                       network=cvpn.NetworkConfig(hidden=(64, 64)))
  game = search_game(pyspiel.load_game(config.game))
  observer = PublicStateObserver(game)
  net = cvpn.make_network(observer, config.network)
  net.init(0)
  ray.init(include_dashboard=False, log_to_driver=False)
  try:
    service = ray_backend.start_service(
        config, ray.put(ray_backend._to_numpy(net.params)))  # pylint: disable=protected-access
    assert ray.get(service.node_id.remote()) == (
        ray.get_runtime_context().get_node_id())
    rng = np.random.default_rng(0)
    batches = [inference_test._packed(inference_test._queries(  # pylint: disable=protected-access
        game, observer, rng, 32)) for _ in range(4)]
    remotes = [inference.RemoteValueFunction(
        cvpn.make_network(observer, config.network, net.encoder),
        inference.InferenceClient.for_network(
            ray_backend.RayTransport(service), net)) for _ in range(2)]

    def check_concurrently():
      local = cvpn.CVPNValueFunction(net)
      expected = [local.evaluate_packed(b) for b in batches]
      errors = []

      def client(vf, order):
        try:
          for i in order:
            inference_test._assert_same(  # pylint: disable=protected-access
                expected[i], vf.evaluate_packed(batches[i]), batches[i])
        except Exception as e:  # pylint: disable=broad-except
          errors.append(e)

      threads = [threading.Thread(target=client, args=(vf, order))
                 for vf, order in zip(remotes, ([0, 1, 2, 3] * 2,
                                                [3, 2, 1, 0] * 2))]
      for t in threads:
        t.start()
      for t in threads:
        t.join(timeout=120)
      assert not errors, errors[0]

    check_concurrently()
    net.init(1)  # republished, as RayBackend.publish does
    ray.get(service.set_params.remote(
        ray.put(ray_backend._to_numpy(net.params))))  # pylint: disable=protected-access
    check_concurrently()
    assert remotes[0].client.stats()["infer_calls"] == 16
    assert ray.get(service.stats_line.remote()).startswith(
        "inference service (cpu): ")
  finally:
    ray.shutdown()


@pytest.mark.ray
@_IGNORE_FORK_WARNING
def test_ray_inference_service_death_surfaces_in_poll(tmp_path):
  """The service actor killed mid-run: poll raises, naming the service (or
  the worker whose call found it gone)."""
  ray = pytest.importorskip("ray")
  from open_spiel_sog.algorithms.training import ray_backend  # pylint: disable=g-import-not-at-top
  config = _config(tmp_path, solvers=0, inference="cpu")
  ray.init(include_dashboard=False, log_to_driver=False)
  try:
    trainer = Trainer(config, progress=False, log=lambda s: None)
    backend = ray_backend.RayBackend(config, trainer.net)
    backend.start(trainer.net.params)
    try:
      for _ in range(300):
        if backend.poll(block=True):
          break
      ray.kill(backend.service, no_restart=True)
      with pytest.raises(RuntimeError,
                         match="sog-inference-cpu|inference service is gone"):
        for _ in range(300):
          backend.poll(block=True)
    finally:
      backend.stop()
  finally:
    ray.shutdown()


def _descendants(pid: int) -> list[int]:
  """`pid`'s living descendants, from /proc."""
  parent = {}
  for entry in os.listdir("/proc"):
    if entry.isdigit():
      try:
        with open(f"/proc/{entry}/stat") as f:
          fields = f.read().rsplit(")", 1)[1].split()
      except OSError:
        continue
      if fields[0] != "Z":
        parent[int(entry)] = int(fields[1])
  out, frontier = [], [pid]
  while frontier:
    frontier = [p for p, q in parent.items() if q in frontier]
    out += frontier
  return out


def _alive(pid: int) -> bool:
  try:
    with open(f"/proc/{pid}/stat") as f:
      return f.read().rsplit(")", 1)[1].split()[0] != "Z"
  except OSError:
    return False


def _command_lines(pids) -> dict[int, str]:
  out = {}
  for p in filter(_alive, pids):
    try:
      with open(f"/proc/{p}/cmdline") as f:
        out[p] = f.read().replace("\0", " ").strip()[:100]
    except OSError:
      continue
  return out


# Ray's own agents: they see the raylet gone at once, then report it to the
# (dead) GCS and exit once that call gives up.
_RAY_AGENTS = ("ray::DashboardAgent", "ray::RuntimeEnvAgent")


@pytest.mark.ray
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")
def test_killing_a_ray_trainer_with_sigkill_leaves_no_process_behind(
    tmp_path):
  """The trainer starts a local Ray cluster whose workers play; SIGKILL on
  the trainer ends the workers and the cluster's processes within 30 s (Ray
  starts them fate-shared with the driver), and Ray's agents after their
  last report to the dead GCS gives up (62 s here, 2026-11-29)."""
  pytest.importorskip("ray")
  import signal  # pylint: disable=g-import-not-at-top
  import time  # pylint: disable=g-import-not-at-top
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  process = subprocess.Popen(
      [sys.executable, os.path.join(root, "examples", "train.py"),
       "--game=kuhn_poker", "--backend=ray", "--minutes=5", "--actors=1",
       "--solvers=1", "--simulations=5", "--hidden=8",
       f"--run_dir={tmp_path}", "--noprogress"], cwd=root,
      stderr=subprocess.DEVNULL)
  try:
    deadline = time.monotonic() + 180
    workers = {}
    while time.monotonic() < deadline and len(workers) < 2:
      time.sleep(1)
      workers = {p: c for p, c in _command_lines(
          _descendants(process.pid)).items() if "ray::_RayWorker" in c}
    assert len(workers) == 2, workers  # (the actor and the solver)
    time.sleep(3)
    everything = _descendants(process.pid)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    killed = time.monotonic()
    while time.monotonic() < killed + 30 and any(
        not c.startswith(_RAY_AGENTS)
        for c in _command_lines(everything).values()):
      time.sleep(0.5)
    left = _command_lines(everything)
    assert all(c.startswith(_RAY_AGENTS) for c in left.values()), left
    while time.monotonic() < killed + 120 and _command_lines(everything):
      time.sleep(1)
    left = _command_lines(everything)
    assert not left, (time.monotonic() - killed, left)
    print(f"every Ray process ended {time.monotonic() - killed:.0f} s after "
          "the SIGKILL")
  finally:
    process.kill()
    for p in _descendants(process.pid):
      try:
        os.kill(p, signal.SIGKILL)
      except OSError:
        pass
