"""The anchored subgame: search without common knowledge for fog-of-war
games (DESIGN.md section 15).

  history_tree  the subgame's histories, grown by histories, and CFR+ on them
  order2        the root: the searcher's infostate and the order-2 set
  search        AnchoredSearch: the root, the gadget, growth, the kept tree
  bound         needs_anchored: whether a game is past the enumeration bound
"""

from open_spiel_sog.algorithms.sog.anchored.bound import needs_anchored
from open_spiel_sog.algorithms.sog.anchored.search import AnchoredConfig
from open_spiel_sog.algorithms.sog.anchored.search import AnchoredResult
from open_spiel_sog.algorithms.sog.anchored.search import AnchoredSearch
from open_spiel_sog.algorithms.sog.anchored.search import GADGETS

__all__ = ["AnchoredConfig", "AnchoredResult", "AnchoredSearch", "GADGETS",
           "needs_anchored"]
