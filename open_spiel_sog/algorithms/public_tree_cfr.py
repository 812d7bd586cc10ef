"""The path DESIGN.md section 10 names for the public-tree CFR solver,
`open_spiel_sog.algorithms.public_tree_cfr.PublicTreeCFR`, kept for the
scripts that use it. The family lives in `open_spiel_sog.algorithms.cfr`."""

from open_spiel_sog.algorithms.cfr import CFRConfig
from open_spiel_sog.algorithms.cfr import PublicTreeCFR
from open_spiel_sog.algorithms.cfr import SolveConfig
from open_spiel_sog.algorithms.cfr import solve

__all__ = ["CFRConfig", "PublicTreeCFR", "SolveConfig", "solve"]
