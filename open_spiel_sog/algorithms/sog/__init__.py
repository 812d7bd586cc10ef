"""Student of Games (Schmid et al. 2023): GT-CFR search, continual re-solving,
value functions and the counterfactual value-and-policy network."""

from open_spiel_sog.algorithms.sog import cvpn
from open_spiel_sog.algorithms.sog import exact_values
from open_spiel_sog.algorithms.sog import gt_cfr
from open_spiel_sog.algorithms.sog import leaf_solver
from open_spiel_sog.algorithms.sog import resolving
from open_spiel_sog.algorithms.sog import rollout_values
from open_spiel_sog.algorithms.sog import value_functions
from open_spiel_sog.algorithms.sog.gadget import Gadget
from open_spiel_sog.algorithms.sog.gt_cfr import GTCFR
from open_spiel_sog.algorithms.sog.gt_cfr import GTCFRConfig
from open_spiel_sog.algorithms.sog.gt_cfr import SearchResult
from open_spiel_sog.algorithms.sog.gt_cfr import Summary
from open_spiel_sog.algorithms.sog.gt_cfr import search
from open_spiel_sog.algorithms.sog.search_tree import SearchTree
from open_spiel_sog.algorithms.sog.resolving import ResolveConfig
from open_spiel_sog.algorithms.sog.resolving import Resolver
from open_spiel_sog.algorithms.sog.exact_values import ExactValueFunction
from open_spiel_sog.algorithms.sog.value_functions import Query
from open_spiel_sog.algorithms.sog.rollout_values import RolloutValueFunction
from open_spiel_sog.algorithms.sog.named_value_functions import VALUE_FUNCTIONS
from open_spiel_sog.algorithms.sog.value_functions import ValueFunction
from open_spiel_sog.algorithms.sog.named_value_functions import make_value_function
from open_spiel_sog.algorithms.sog.cvpn import CVPN
from open_spiel_sog.algorithms.sog.cvpn import CVPNValueFunction
from open_spiel_sog.algorithms.sog.cvpn import NetworkConfig

__all__ = [
    "cvpn",
    "CVPN",
    "CVPNValueFunction",
    "exact_values",
    "ExactValueFunction",
    "Gadget",
    "gt_cfr",
    "GTCFR",
    "GTCFRConfig",
    "leaf_solver",
    "make_value_function",
    "NetworkConfig",
    "Query",
    "ResolveConfig",
    "Resolver",
    "resolving",
    "rollout_values",
    "RolloutValueFunction",
    "search",
    "SearchResult",
    "SearchTree",
    "Summary",
    "value_functions",
    "VALUE_FUNCTIONS",
    "ValueFunction",
]
