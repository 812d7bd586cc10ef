"""The package's OpenSpiel bots, each module registering its own by name
(`register()`; `import open_spiel_sog` calls them all).

  sog         SoGBot: Student of Games, "sog"
  ismcts_br   ISMCTSBRBot: a trained ISMCTS-BR responder, "ismcts_br"
  oos         OOSBot: online outcome sampling, "oos"
  dls         DLSBot: nested depth-limited solving, "dls"
  baselines   OpenSpiel's searches, "mcts" and "ismcts"; its `register()`
              also registers "cfr_policy"
  cfr_policy  CFRPolicyBot: a CFR+ average policy, "cfr_policy"
  scotland_yard_mcts  Nijssen and Winands' MCTS for Scotland Yard,
              "scotland_yard_mcts" (the PimBot-style baseline)
  common      what the bots share (parameter checks, a stateless base)
"""

from open_spiel_sog.bots import baselines
from open_spiel_sog.bots import cfr_policy
from open_spiel_sog.bots import common
from open_spiel_sog.bots import dls
from open_spiel_sog.bots import ismcts_br
from open_spiel_sog.bots import oos
from open_spiel_sog.bots import scotland_yard_mcts
from open_spiel_sog.bots import sog
from open_spiel_sog.bots.cfr_policy import CFRPolicyBot
from open_spiel_sog.bots.dls import DLSBot
from open_spiel_sog.bots.dls import DLSBotConfig
from open_spiel_sog.bots.ismcts_br import ISMCTSBRBot
from open_spiel_sog.bots.oos import OOSBot
from open_spiel_sog.bots.sog import SoGBot
from open_spiel_sog.bots.sog import SoGConfig

__all__ = [
    "baselines",
    "cfr_policy",
    "CFRPolicyBot",
    "common",
    "dls",
    "DLSBot",
    "DLSBotConfig",
    "ismcts_br",
    "ISMCTSBRBot",
    "oos",
    "scotland_yard_mcts",
    "OOSBot",
    "sog",
    "SoGBot",
    "SoGConfig",
]
