"""Public-tree CFR (DESIGN.md section 4): the CFR+ passes over a public
tree's sequence arrays and the solvers built on them."""

from open_spiel_sog.algorithms.cfr.public_tree_cfr import CFRConfig
from open_spiel_sog.algorithms.cfr.public_tree_cfr import regret_matching
from open_spiel_sog.algorithms.cfr.public_tree_cfr import reach_pass
from open_spiel_sog.algorithms.cfr.public_tree_cfr import value_pass
from open_spiel_sog.algorithms.cfr.public_tree_cfr import rows_dict
from open_spiel_sog.algorithms.cfr.public_tree_cfr import best_actions
from open_spiel_sog.algorithms.cfr.public_tree_cfr import SequenceCFR
from open_spiel_sog.algorithms.cfr.public_tree_cfr import PublicTreeCFR
from open_spiel_sog.algorithms.cfr.public_tree_cfr import SolveConfig
from open_spiel_sog.algorithms.cfr.public_tree_cfr import solve

__all__ = [
    "best_actions",
    "CFRConfig",
    "PublicTreeCFR",
    "reach_pass",
    "regret_matching",
    "rows_dict",
    "SequenceCFR",
    "solve",
    "SolveConfig",
    "value_pass",
]
