"""Depth-limited solving (Brown, Sandholm and Amos 2018; DESIGN.md section 12)."""

from open_spiel_sog.algorithms.dls.depth_limited import FRONTIERS
from open_spiel_sog.algorithms.dls.depth_limited import STRATEGY_SETS
from open_spiel_sog.algorithms.dls.depth_limited import PolicyFn
from open_spiel_sog.algorithms.dls.depth_limited import DLSConfig
from open_spiel_sog.algorithms.dls.depth_limited import compute_blueprint
from open_spiel_sog.algorithms.dls.depth_limited import DictPolicy
from open_spiel_sog.algorithms.dls.depth_limited import BiasedPolicy
from open_spiel_sog.algorithms.dls.depth_limited import policy_dict
from open_spiel_sog.algorithms.dls.depth_limited import trunk_public_states
from open_spiel_sog.algorithms.dls.depth_limited import Solution
from open_spiel_sog.algorithms.dls.depth_limited import DepthLimitedSolver
from open_spiel_sog.algorithms.dls.depth_limited import DepthLimitedResolver
from open_spiel_sog.algorithms.dls.depth_limited import composite_policy
from open_spiel_sog.algorithms.dls.depth_limited import exploitability
from open_spiel_sog.algorithms.dls.depth_limited import solve_both_seats
from open_spiel_sog.algorithms.dls.depth_limited import depth_limited_exploitability
from open_spiel_sog.algorithms.dls.depth_limited import check_game
from open_spiel_sog.algorithms.dls.depth_limited import frozen_blueprint_solve
from open_spiel_sog.algorithms.dls.depth_limited import pure_strategies

__all__ = [
    "BiasedPolicy",
    "check_game",
    "composite_policy",
    "compute_blueprint",
    "depth_limited_exploitability",
    "DepthLimitedResolver",
    "DepthLimitedSolver",
    "DictPolicy",
    "DLSConfig",
    "exploitability",
    "FRONTIERS",
    "frozen_blueprint_solve",
    "policy_dict",
    "PolicyFn",
    "pure_strategies",
    "Solution",
    "solve_both_seats",
    "STRATEGY_SETS",
    "trunk_public_states",
]
