"""Sound self-play training of the CVPN (DESIGN.md section 8).

  config       TrainConfig, the settings of a run
  selfplay     a worker's work: self-play games and query solves
  replay       the sliding-window replay buffer
  workers      the worker loop, its clock, stats and queue channel
  backends     the inline and process backends (make_backend)
  inference    the inference service (--inference=cpu|gpu) and its client
  ray_backend  the ray backend (the optional ray extra; imported only for it)
  trainer      the learner (Trainer, EvalConfig, stop_on_signals)
  ingest       synthetic examples from producer processes: the learner
               alone (benchmarks/training_throughput.py --ingest_only)
"""

from open_spiel_sog.algorithms.training.config import BACKENDS
from open_spiel_sog.algorithms.training.config import INFERENCE
from open_spiel_sog.algorithms.training.config import LEARNER_THREADS
from open_spiel_sog.algorithms.training.config import PLATFORMS
from open_spiel_sog.algorithms.training.config import SOLVERS
from open_spiel_sog.algorithms.training.config import TrainConfig
from open_spiel_sog.algorithms.training.trainer import EvalConfig
from open_spiel_sog.algorithms.training.trainer import stop_on_signals
from open_spiel_sog.algorithms.training.trainer import Trainer

__all__ = ["BACKENDS", "EvalConfig", "INFERENCE", "LEARNER_THREADS",
           "PLATFORMS", "SOLVERS", "TrainConfig", "Trainer",
           "stop_on_signals"]
