"""Online outcome sampling (Lisy, Lanctot and Bowling 2015)."""

from open_spiel_sog.algorithms.oos.oos import TARGETING
from open_spiel_sog.algorithms.oos.oos import PLAYOUTS
from open_spiel_sog.algorithms.oos.oos import OOSConfig
from open_spiel_sog.algorithms.oos.oos import OOSStats
from open_spiel_sog.algorithms.oos.oos import OOSPolicy
from open_spiel_sog.algorithms.oos.oos import validate_game
from open_spiel_sog.algorithms.oos.oos import OOSSolver

__all__ = [
    "OOSConfig",
    "OOSPolicy",
    "OOSSolver",
    "OOSStats",
    "PLAYOUTS",
    "TARGETING",
    "validate_game",
]
