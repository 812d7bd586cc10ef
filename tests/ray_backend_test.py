"""The "ray" training backend (needs the optional ray extra).

Deselected by default (pyproject.toml's addopts has -m 'not ray'); run with
`make test-ray`, which installs ray first.
"""

import importlib
import sys

import numpy as np
import pytest

from open_spiel_sog.algorithms import cvpn
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
