"""Public-tree CFR+ (DESIGN.md section 4): one implementation of the passes,
used by the exact solver, the leaf solver, GT-CFR, depth-limited solving and
joint policy search.

  passes           regret matching+, the reach and value passes
  sequence_cfr     CFR+ iterations over a compiled public tree (CFRConfig)
  public_tree_cfr  PublicTreeCFR: a whole game or a public belief state's
                   subgame, solved exactly; `solve`, the full-game driver
  growing          a player's sequences in a tree grown by appending
  growing_passes   the passes over them: C++ kernels and numpy side by side
"""

from open_spiel_sog.algorithms.cfr import growing_passes
from open_spiel_sog.algorithms.cfr.growing import CompiledSequences
from open_spiel_sog.algorithms.cfr.growing import DepthGroup
from open_spiel_sog.algorithms.cfr.growing import PlayerSequences
from open_spiel_sog.algorithms.cfr.passes import best_actions
from open_spiel_sog.algorithms.cfr.passes import masked_regret_matching
from open_spiel_sog.algorithms.cfr.passes import reach_pass
from open_spiel_sog.algorithms.cfr.passes import regret_matching
from open_spiel_sog.algorithms.cfr.passes import rows_dict
from open_spiel_sog.algorithms.cfr.passes import sequence_reach
from open_spiel_sog.algorithms.cfr.passes import sequence_values
from open_spiel_sog.algorithms.cfr.passes import value_pass
from open_spiel_sog.algorithms.cfr.public_tree_cfr import PublicTreeCFR
from open_spiel_sog.algorithms.cfr.public_tree_cfr import SolveConfig
from open_spiel_sog.algorithms.cfr.public_tree_cfr import solve
from open_spiel_sog.algorithms.cfr.sequence_cfr import CFRConfig
from open_spiel_sog.algorithms.cfr.sequence_cfr import SequenceCFR

__all__ = [
    "best_actions",
    "CFRConfig",
    "CompiledSequences",
    "DepthGroup",
    "growing_passes",
    "masked_regret_matching",
    "PlayerSequences",
    "PublicTreeCFR",
    "reach_pass",
    "regret_matching",
    "rows_dict",
    "SequenceCFR",
    "sequence_reach",
    "sequence_values",
    "solve",
    "SolveConfig",
    "value_pass",
]
