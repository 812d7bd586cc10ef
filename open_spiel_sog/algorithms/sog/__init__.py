"""Student of Games (Schmid et al. 2023): GT-CFR search, continual
re-solving, value functions and the counterfactual value-and-policy network.

  gt_cfr           GT-CFR (Algorithm 1): the config, the run loop, the result
  search_tree      the search's public tree: nodes, rows, growth by appending
  updates          the regret-update phase (CFR+ on the tree)
  leaf_values      the terminal and leaf values an update reads
  network_updates  the update where a network values the leaves (C++ calls)
  growth           the expansion phase: selection, walks, expansion
  gadget           the re-solving gadget at a re-solving search's root
  resolving        continual re-solving: the searches a bot runs (Resolver)
  value_functions  the value-function interface and the query types
  exact_values     the exact value function (solves each leaf's subgame)
  leaf_solver      its batched leaf solves
  rollout_values   the rollout value function
  named_value_functions  value functions by name (`make_value_function`)
  cvpn             the counterfactual value-and-policy network
"""

from open_spiel_sog.algorithms.sog import cvpn
from open_spiel_sog.algorithms.sog import exact_values
from open_spiel_sog.algorithms.sog import gt_cfr
from open_spiel_sog.algorithms.sog import leaf_solver
from open_spiel_sog.algorithms.sog import resolving
from open_spiel_sog.algorithms.sog import rollout_values
from open_spiel_sog.algorithms.sog import value_functions
from open_spiel_sog.algorithms.sog.cvpn import CVPN
from open_spiel_sog.algorithms.sog.cvpn import CVPNValueFunction
from open_spiel_sog.algorithms.sog.cvpn import NetworkConfig
from open_spiel_sog.algorithms.sog.exact_values import ExactValueFunction
from open_spiel_sog.algorithms.sog.gadget import Gadget
from open_spiel_sog.algorithms.sog.gt_cfr import GTCFR
from open_spiel_sog.algorithms.sog.gt_cfr import GTCFRConfig
from open_spiel_sog.algorithms.sog.gt_cfr import SearchResult
from open_spiel_sog.algorithms.sog.gt_cfr import Summary
from open_spiel_sog.algorithms.sog.gt_cfr import search
from open_spiel_sog.algorithms.sog.named_value_functions import VALUE_FUNCTIONS
from open_spiel_sog.algorithms.sog.named_value_functions import make_value_function
from open_spiel_sog.algorithms.sog.resolving import ResolveConfig
from open_spiel_sog.algorithms.sog.resolving import Resolver
from open_spiel_sog.algorithms.sog.rollout_values import RolloutValueFunction
from open_spiel_sog.algorithms.sog.search_tree import SearchTree
from open_spiel_sog.algorithms.sog.value_functions import Query
from open_spiel_sog.algorithms.sog.value_functions import ValueFunction

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
