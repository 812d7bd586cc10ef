"""Student of Games for OpenSpiel.

`import open_spiel_sog` makes the package's bots available through OpenSpiel's
own registry (`pyspiel.load_bot`); see `open_spiel_sog.registry`.

Public API:
  PublicStateObserver, check_public_states: public states of any two-player
    zero-sum OpenSpiel game (`open_spiel_sog.public_state`).
  PublicTreeCFR: exact vectorized CFR+ over a public tree
    (`open_spiel_sog.algorithms.cfr`; also at the path DESIGN.md names,
    `open_spiel_sog.algorithms.public_tree_cfr`).
  register_bot: put a Python bot factory into OpenSpiel's bot registry.
  SoGBot, SoGConfig: the Student of Games bot, registered as "sog"
    (`open_spiel_sog.bots.sog`).
  sog_exploitability: exact exploitability of SoG over seeds
    (`open_spiel_sog.evaluation.exploitability`).
  Baselines registered for round-robins (`open_spiel_sog.bots.baselines`):
    "mcts", "ismcts", "cfr_policy"; online outcome sampling, "oos"
    (`open_spiel_sog.bots.oos`); round_robin in
    `open_spiel_sog.evaluation.tournament`; depth-limited solving, "dls"
    (`open_spiel_sog.bots.dls`; the solver is
    `open_spiel_sog.algorithms.dls`); Nijssen and Winands' MCTS for
    Scotland Yard, "scotland_yard_mcts"
    (`open_spiel_sog.bots.scotland_yard_mcts`).
  Games (`open_spiel_sog.games`): "scotland_yard"; the collaborative
    (common-payoff) games of joint policy search "jps_comm",
    "simple_bidding" and "mini_bridge" (`open_spiel_sog.games.jps_games`);
    registered with pyspiel.register_game on import.
  ISMCTSBRBot: a trained ISMCTS-BR best responder to a fixed opponent,
    registered as "ismcts_br" (`open_spiel_sog.bots.ismcts_br`; the
    algorithm is `open_spiel_sog.algorithms.ismcts_br`).
"""

from open_spiel_sog.algorithms.cfr import CFRConfig
from open_spiel_sog.algorithms.cfr import PublicTreeCFR
from open_spiel_sog.public_state import PublicStateObserver
from open_spiel_sog.public_state import check_public_states
from open_spiel_sog.bots import baselines as _baselines
from open_spiel_sog.bots import dls as _dls
from open_spiel_sog.bots import scotland_yard_mcts as _scotland_yard_mcts
from open_spiel_sog.bots import ismcts_br as _ismcts_br
from open_spiel_sog.bots import oos as _oos
from open_spiel_sog.bots import sog as _sog
from open_spiel_sog.bots.ismcts_br import ISMCTSBRBot
from open_spiel_sog.bots.sog import SoGBot
from open_spiel_sog.bots.sog import SoGConfig
from open_spiel_sog.evaluation.exploitability import sog_exploitability
from open_spiel_sog.games import jps_games as _jps_games
from open_spiel_sog.games import scotland_yard as _scotland_yard
from open_spiel_sog.registry import register_bot
from open_spiel_sog.utils import jax_logs as _jax_logs

_jax_logs.quiet_missing_tpu()
_sog.register()
_ismcts_br.register()
_baselines.register()
_oos.register()
_dls.register()
_scotland_yard_mcts.register()

__version__ = "0.1.0"

__all__ = [
    "CFRConfig",
    "ISMCTSBRBot",
    "PublicStateObserver",
    "PublicTreeCFR",
    "SoGBot",
    "SoGConfig",
    "check_public_states",
    "register_bot",
    "sog_exploitability",
]
