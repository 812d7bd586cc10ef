"""Joint policy search (Tian, Gong and Jiang 2020; DESIGN.md section 13)."""

from open_spiel_sog.algorithms.jps.jps import check_game
from open_spiel_sog.algorithms.jps.jps import GameArrays
from open_spiel_sog.algorithms.jps.jps import JPSConfig
from open_spiel_sog.algorithms.jps.jps import JPSResult
from open_spiel_sog.algorithms.jps.jps import JointPolicySearch
from open_spiel_sog.algorithms.jps.jps import cfr
from open_spiel_sog.algorithms.jps.jps import policy_change
from open_spiel_sog.algorithms.jps.jps import purify
from open_spiel_sog.algorithms.jps.jps import BruteForceSearch
from open_spiel_sog.algorithms.jps.jps import search_from_starts

__all__ = [
    "BruteForceSearch",
    "cfr",
    "check_game",
    "GameArrays",
    "JointPolicySearch",
    "JPSConfig",
    "JPSResult",
    "policy_change",
    "purify",
    "search_from_starts",
]
