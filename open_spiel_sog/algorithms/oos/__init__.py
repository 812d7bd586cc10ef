"""Online outcome sampling (Lisy, Lanctot and Bowling 2015)."""

from open_spiel_sog.algorithms.oos.solver import TARGETING
from open_spiel_sog.algorithms.oos.solver import PLAYOUTS
from open_spiel_sog.algorithms.oos.solver import OOSConfig
from open_spiel_sog.algorithms.oos.solver import OOSStats
from open_spiel_sog.algorithms.oos.solver import OOSPolicy
from open_spiel_sog.algorithms.oos.solver import validate_game
from open_spiel_sog.algorithms.oos.solver import OOSSolver

__all__ = [
    "OOSConfig",
    "OOSPolicy",
    "OOSSolver",
    "OOSStats",
    "PLAYOUTS",
    "TARGETING",
    "validate_game",
]
