"""Sound self-play training of the CVPN (DESIGN.md section 8)."""

from open_spiel_sog.algorithms.training.config import BACKENDS
from open_spiel_sog.algorithms.training.config import PLATFORMS
from open_spiel_sog.algorithms.training.config import SOLVERS
from open_spiel_sog.algorithms.training.config import TrainConfig
from open_spiel_sog.algorithms.training.trainer import EvalConfig
from open_spiel_sog.algorithms.training.trainer import stop_on_signals
from open_spiel_sog.algorithms.training.trainer import Trainer

__all__ = ["BACKENDS", "EvalConfig", "PLATFORMS", "SOLVERS", "TrainConfig",
           "Trainer", "stop_on_signals"]
