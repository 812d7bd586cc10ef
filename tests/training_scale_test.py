"""Training at scale (issue 21): clean stops by signal, the worker processes'
environment, where the learner runs, and the throughput benchmark.

Every run here is tiny (kuhn_poker, SoG(10, 1), a 16-unit network); the
subprocess tests dominate the file's time (about a minute on two cores).
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from open_spiel_sog.algorithms.sog import cvpn
from open_spiel_sog.algorithms.training import TrainConfig
from open_spiel_sog.algorithms.training import Trainer
from open_spiel_sog.algorithms.training import backends
from open_spiel_sog.algorithms.training import workers

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TINY = ("--game=kuhn_poker", "--hidden=16", "--batch_size=16",
        "--min_replay=16", "--simulations=10",
        "--solver_simulations=10", "--noprogress")


def _tiny_config(**overrides):
  settings = dict(game="kuhn_poker", steps=20, backend="inline",
                  actor_simulations=10, solver_simulations=10, batch_size=16,
                  min_replay=16, network=cvpn.NetworkConfig(hidden=(16,)))
  settings.update(overrides)
  return TrainConfig(**settings)


@pytest.mark.parametrize("signum,code", [(signal.SIGINT, 130),
                                         (signal.SIGTERM, 143)])
def test_signal_stops_train_py_with_a_checkpoint_and_resume_continues(
    tmp_path, signum, code):
  """A real examples/train.py with worker processes, signalled mid-run:
  the workers stop, the checkpoint is written, the JSON summary printed, the
  exit code is 128 + the signal; --resume then continues from that step."""
  checkpoint = str(tmp_path / "k.npz")
  proc = subprocess.Popen(
      [sys.executable, os.path.join(ROOT, "examples", "train.py"), *TINY,
       "--backend=process", "--actors=1", "--solvers=1", "--steps=1000000",
       "--checkpoint_every=10", f"--checkpoint={checkpoint}",
       f"--run_dir={tmp_path}", "--json"],
      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
  try:
    deadline = time.monotonic() + 180
    while not os.path.exists(checkpoint):  # training is under way
      assert proc.poll() is None, proc.communicate()[1]
      assert time.monotonic() < deadline, "no checkpoint after 180 s"
      time.sleep(0.2)
    proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=120)
  finally:
    if proc.poll() is None:
      proc.kill()
  assert proc.returncode == code, stderr
  assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
  assert f"{signal.Signals(signum).name}: stopping the workers" in stderr
  summary = json.loads(stdout.strip().splitlines()[-1])
  assert summary["stopped"] == signal.Signals(signum).name
  assert 10 <= summary["steps"] < 1000000
  assert summary["worker_stats"]["games"] >= 1
  net = cvpn.load_checkpoint(checkpoint, "kuhn_poker")
  assert net.step == summary["steps"]
  assert net.metadata["has_optimizer"]

  target = summary["steps"] + 5
  resumed = subprocess.run(
      [sys.executable, os.path.join(ROOT, "examples", "train.py"), *TINY,
       "--backend=inline", f"--steps={target}", f"--checkpoint={checkpoint}",
       f"--run_dir={tmp_path}", "--resume", "--json"],
      capture_output=True, text=True, timeout=300, check=False)
  assert resumed.returncode == 0, resumed.stderr
  assert json.loads(resumed.stdout.strip().splitlines()[-1])["steps"] == target
  assert cvpn.load_checkpoint(checkpoint, "kuhn_poker").step == target


def _proc_environ(pid: int) -> dict[str, str]:
  """The process's initial environment, once it has exec'd the spawned
  interpreter (read mid-exec, /proc can show an empty one)."""
  deadline = time.monotonic() + 30
  while True:
    with open(f"/proc/{pid}/cmdline", "rb") as f:
      started = b"spawn_main" in f.read()
    with open(f"/proc/{pid}/environ", "rb") as f:
      items = f.read().split(b"\0")
    env = dict(i.decode().split("=", 1) for i in items if b"=" in i)
    if (started and env) or time.monotonic() > deadline:
      return env
    time.sleep(0.05)


def _ignores_sigint(pid: int) -> bool:
  with open(f"/proc/{pid}/status") as f:
    for line in f:
      if line.startswith("SigIgn:"):
        return bool(int(line.split()[1], 16) & (1 << (signal.SIGINT - 1)))
  raise AssertionError(f"/proc/{pid}/status has no SigIgn line")


@pytest.mark.skipif(not sys.platform.startswith("linux"),
                    reason="reads the workers' /proc entries")
def test_worker_processes_start_single_threaded_on_the_cpu_ignoring_sigint(
    tmp_path):
  """The environment is in place before a worker imports numpy and JAX (it
  is in the process's initial environment), and Ctrl-C in a terminal reaches
  only the learner; the learner's own environment and handler are left as
  they were."""
  config = _tiny_config(backend="process", actors=1, solvers=1,
                        checkpoint=str(tmp_path / "k.npz"))
  handler = signal.getsignal(signal.SIGINT)
  ignored = _ignores_sigint(os.getpid())  # (true under nohup or `&`)
  before = {k: os.environ.get(k) for k in workers.worker_environment()}
  trainer = Trainer(config, progress=False, log=lambda s: None)
  backend = backends.ProcessBackend(config, trainer.net)
  try:
    backend.start(trainer.net.params)
    assert len(backend.processes) == 2
    for p in backend.processes:
      env = _proc_environ(p.pid)
      assert env["JAX_PLATFORMS"] == "cpu"
      for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        assert env[k] == "1", k
      assert "intra_op_parallelism_threads=1" in env["XLA_FLAGS"]
      assert _ignores_sigint(p.pid)
  finally:
    backend.stop()
  assert signal.getsignal(signal.SIGINT) is handler
  assert {k: os.environ.get(k) for k in before} == before
  assert _ignores_sigint(os.getpid()) == ignored


def test_request_stop_ends_the_run_with_a_checkpoint_and_timing(tmp_path):
  config = _tiny_config(steps=10**6, checkpoint=str(tmp_path / "k.npz"))
  trainer = Trainer(config, progress=False, log=lambda s: None)

  def monitor(t):
    if t.net.step >= 7:
      t.request_stop("enough")

  summary = trainer.run(monitor=monitor)
  assert summary["stopped"] == "enough"
  assert 7 <= summary["steps"] <= 8
  assert cvpn.load_checkpoint(config.checkpoint, "kuhn_poker").step == (
      summary["steps"])
  timing = summary["timing"]
  assert timing["train_s"] > 0 and timing["wait_s"] > 0
  assert summary["worker_stats"]["busy_s"] > 0


def test_learner_platform_gpu_needs_a_gpu_and_settings_are_checked():
  import jax  # pylint: disable=g-import-not-at-top
  config = _tiny_config(learner_platform="gpu")
  if any(d.platform == "gpu" for d in jax.devices()):
    assert Trainer(config, progress=False).device.platform == "gpu"
  else:
    with pytest.raises(ValueError, match="learner_platform 'gpu', but JAX "
                       "sees no GPU.*learner_platform 'cpu'"):
      Trainer(config, progress=False)
  with pytest.raises(ValueError, match="unknown worker_platform 'tpu'; "
                     "supported: 'cpu', 'gpu'"):
    _tiny_config(worker_platform="tpu").validate()
  with pytest.raises(ValueError, match="ray_address is for the ray backend"):
    _tiny_config(ray_address="auto").validate()


@pytest.mark.parametrize("solver", ["search", "exact"])
def test_training_throughput_benchmark_reports_rates_and_where_time_goes(
    solver):
  result = subprocess.run(
      [sys.executable,
       os.path.join(ROOT, "benchmarks", "training_throughput.py"),
       "--game=kuhn_poker", "--workers=1+1", "--seconds=3", "--settle=1",
       "--simulations=10", "--solver_simulations=10", "--hidden=16",
       f"--solver={solver}", "--walks_per_simulation=1", "--json"],
      capture_output=True, text=True, timeout=300, check=False)
  assert result.returncode == 0, result.stderr
  summary = json.loads(result.stdout.strip().splitlines()[-1])
  assert summary["cpu_count"] == os.cpu_count()
  assert summary["solver"] == solver
  (row,) = summary["rows"]
  assert (row["actors"], row["solvers"], row["backend"]) == (1, 1, "process")
  assert row["walks_per_simulation"] == 1
  assert row["examples_per_s"] > 0 and row["window_s"] >= 3
  assert 0 < row["startup_s"] <= row["warmup_s"]
  for share in ("worker_busy", "learner_busy", "parent_wait"):
    assert 0 <= row[share] <= 1, (share, row)
  assert row["learner_busy"] + row["parent_wait"] <= 1.01
  assert set(row["worker_first_example_s"]) == {"actor-0", "solver-1"}
  for name, seconds in row["worker_first_example_s"].items():
    assert 0 < row["worker_ready_s"][name] <= seconds


def test_training_throughput_rejects_a_bad_workers_flag():
  result = subprocess.run(
      [sys.executable,
       os.path.join(ROOT, "benchmarks", "training_throughput.py"),
       "--workers=1+1,two"],
      capture_output=True, text=True, timeout=120, check=False)
  assert result.returncode != 0
  assert "'two' is not ACTORS+SOLVERS" in result.stderr
  assert "Traceback" not in result.stderr


def test_ingest_only_measures_the_learner_alone():
  result = subprocess.run(
      [sys.executable,
       os.path.join(ROOT, "benchmarks", "training_throughput.py"),
       "--game=kuhn_poker", "--ingest_only", "--workers=1+0", "--seconds=3",
       "--settle=1", "--hidden=16", "--json"],
      capture_output=True, text=True, timeout=300, check=False)
  assert result.returncode == 0, result.stderr
  summary = json.loads(result.stdout.strip().splitlines()[-1])
  assert summary["ingest_only"] is True
  (row,) = summary["rows"]
  assert row["learner_ingest_per_s"] == row["examples_per_s"] > 0
  assert row["ingest_batch"] == 10
  assert row["steps_per_s"] > 0  # the learner trains while it takes them in
  assert row["learner_sustained_per_s"] == pytest.approx(
      row["steps_per_s"] * 128 / 50, abs=0.1)
  assert set(row["worker_first_example_s"]) == {"producer-0"}
  shares = ("learner_busy", "parent_wait", "learner_poll", "learner_add",
            "learner_sample", "learner_other", "learner_publish")
  for share in shares:
    assert 0 <= row[share] <= 1, (share, row)
  assert sum(row[s] for s in shares) <= 1.01
  assert row["learner_threads"] in ("one", "all")


def test_ingest_only_is_for_the_process_backend():
  result = subprocess.run(
      [sys.executable,
       os.path.join(ROOT, "benchmarks", "training_throughput.py"),
       "--ingest_only", "--backend=ray"],
      capture_output=True, text=True, timeout=120, check=False)
  assert result.returncode != 0
  assert "--ingest_only measures the process backend's learner" in (
      result.stderr)
  assert "Traceback" not in result.stderr


def test_synthetic_examples_have_a_real_batchs_shapes():
  import numpy as np  # pylint: disable=g-import-not-at-top
  from open_spiel_sog.algorithms.training import ingest  # pylint: disable=g-import-not-at-top
  from open_spiel_sog.algorithms.training import selfplay  # pylint: disable=g-import-not-at-top
  config = _tiny_config()
  trainer = Trainer(config, progress=False, log=lambda s: None)
  worker = selfplay.Worker(config, seed=1)
  worker.set_params(trainer.net.params)
  real, _ = worker.play_game()
  shape = ingest.ExampleShape.of(trainer.net)
  fake = ingest.synthetic_batch(shape, 7, np.random.default_rng(0))
  assert len(fake) == 7
  for field in cvpn.Batch.FIELDS:
    a, b = getattr(real, field), getattr(fake, field)
    assert a.shape[1:] == b.shape[1:] and a.dtype == b.dtype, field
  sums = (fake.policy_target * fake.legal).sum(axis=2)
  np.testing.assert_allclose(sums, 1.0, rtol=1e-5)
  # It trains: a step on synthetic examples gives finite losses.
  assert all(np.isfinite(v) for v in trainer.net.train_step(fake).values())
  token_config = _tiny_config(network=cvpn.NetworkConfig(hidden=(16,),
                                                         input="tokens"))
  token_net = Trainer(token_config, progress=False, log=lambda s: None).net
  with pytest.raises(ValueError, match="slot input"):
    ingest.ExampleShape.of(token_net)


def test_learner_threads_auto_gives_the_workers_their_cores():
  assert _tiny_config(backend="process", actors=12, solvers=3
                      ).resolved_learner_threads(16) == "one"
  assert _tiny_config(backend="process", actors=4, solvers=1
                      ).resolved_learner_threads(16) == "all"
  assert _tiny_config(backend="process", actors=1, solvers=1
                      ).resolved_learner_threads(2) == "one"
  assert _tiny_config().resolved_learner_threads(2) == "all"  # inline
  assert _tiny_config(learner_threads="all", backend="process", actors=12,
                      solvers=3).resolved_learner_threads(16) == "all"
  with pytest.raises(ValueError, match="unknown learner_threads 'two'; "
                     "supported: 'auto', 'one', 'all'"):
    _tiny_config(learner_threads="two").validate()
  # "one": the learner's JAX computes on one thread (a process's CPU time
  # never passes its wall time by much), its main thread keeps every core.
  code = (
      "import os, time\n"
      "from open_spiel_sog.algorithms.training import trainer\n"
      "cores = os.sched_getaffinity(0)\n"
      "trainer.learner_device('cpu', 'one')\n"
      "import jax, jax.numpy as jnp\n"
      "x = jnp.ones((1024, 1024)); f = jax.jit(lambda a: a @ a)\n"
      "f(x).block_until_ready()\n"
      "wall, cpu = time.perf_counter(), time.process_time()\n"
      "for _ in range(40): f(x).block_until_ready()\n"
      "ratio = (time.process_time() - cpu) / (time.perf_counter() - wall)\n"
      "print(ratio, os.sched_getaffinity(0) == cores)\n")
  result = subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, timeout=120, check=False)
  assert result.returncode == 0, result.stderr
  ratio, kept = result.stdout.split()
  assert float(ratio) < 1.2 and kept == "True", result.stdout


def test_the_learner_reads_its_losses_every_few_steps():
  config = _tiny_config(steps=25)
  summary = Trainer(config, progress=False, log=lambda s: None).run()
  assert summary["steps"] == 25
  assert set(summary["last"]) == {"loss", "value_loss", "policy_loss"}
  assert summary["loss"] is not None and summary["loss"] > 0
