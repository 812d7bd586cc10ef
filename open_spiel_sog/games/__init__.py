"""Python games registered with OpenSpiel (`pyspiel.register_game`).

Importing `open_spiel_sog` (or this package) registers them; afterwards
`pyspiel.load_game("scotland_yard(map=glasses,max_rounds=3)")` works.

  scotland_yard: Scotland Yard (Mr. X against a team of detectives) on a map
    given as a parameter; shipped maps in `maps/` (`scotland_yard.shipped_maps()`).
  jps_comm, simple_bidding, mini_bridge: the two-player collaborative
    (common-payoff) games of joint policy search (Tian, Gong and Jiang 2020):
    `pyspiel.load_game("jps_comm(length=3)")`, "simple_bidding(n=4)",
    "mini_bridge(n=3)" (`jps_games.py`).

Small games shipped as EFG files (`efg.load_game("rps_plus")`): see `efg.py`.
"""

from open_spiel_sog.games import efg
from open_spiel_sog.games import jps_games
from open_spiel_sog.games import scotland_yard
from open_spiel_sog.games.jps_games import JPSCommGame
from open_spiel_sog.games.jps_games import MiniBridgeGame
from open_spiel_sog.games.jps_games import SimpleBiddingGame
from open_spiel_sog.games.scotland_yard import ScotlandYardGame

__all__ = [
    "efg",
    "jps_games",
    "JPSCommGame",
    "MiniBridgeGame",
    "scotland_yard",
    "ScotlandYardGame",
    "SimpleBiddingGame",
]
