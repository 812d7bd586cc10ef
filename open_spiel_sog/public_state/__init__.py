"""Public states, the public tree and their validation (DESIGN.md section 3).

Code outside this package imports these names from the package, never from
its modules: the modules are free to move. The modules, each importing only
those before it: `state` (PublicState, LazyChildren), `infostates` (infostate
sources and keys), `partition` (the public partition), `expansions` (the
shared expansion cache), `sampling` (sampled public states), `memory` (the
memory guard), `config` (ObserverConfig, the games supported), `tree` (the
compiled public tree), `observer` (PublicStateObserver), `enumeration`
(how far a game's public states enumerate), `features` and `check`.
"""

from open_spiel_sog.public_state.check import check_public_states
from open_spiel_sog.public_state.config import ObserverConfig
from open_spiel_sog.public_state.config import search_game
from open_spiel_sog.public_state.config import validate_game
from open_spiel_sog.public_state import enumeration
from open_spiel_sog.public_state.enumeration import enumeration_limit
from open_spiel_sog.public_state.expansions import ExpansionCache
from open_spiel_sog.public_state.expansions import EXPANSIONS
from open_spiel_sog.public_state.features import public_action_mask
from open_spiel_sog.public_state.features import PublicFeatures
from open_spiel_sog.public_state.features import SlotTable
from open_spiel_sog.public_state.infostates import HistoryKeys
from open_spiel_sog.public_state.infostates import infostate_source
from open_spiel_sog.public_state.infostates import INFOSTATE_SOURCES
from open_spiel_sog.public_state.infostates import InfostateSplit
from open_spiel_sog.public_state.infostates import unsupported_infostate_source
from open_spiel_sog.public_state.memory import resident_memory
from open_spiel_sog.public_state.observer import PublicStateObserver
from open_spiel_sog.public_state.observer import PublicTreeTooLarge
from open_spiel_sog.public_state.state import CHANCE
from open_spiel_sog.public_state.state import LazyChildren
from open_spiel_sog.public_state.state import PublicState
from open_spiel_sog.public_state.state import TERMINAL
from open_spiel_sog.public_state.tree import PlayerArrays
from open_spiel_sog.public_state.tree import PublicTree

__all__ = [
    "CHANCE",
    "EXPANSIONS",
    "ExpansionCache",
    "HistoryKeys",
    "INFOSTATE_SOURCES",
    "InfostateSplit",
    "LazyChildren",
    "ObserverConfig",
    "PlayerArrays",
    "PublicFeatures",
    "PublicState",
    "PublicStateObserver",
    "PublicTree",
    "PublicTreeTooLarge",
    "SlotTable",
    "TERMINAL",
    "check_public_states",
    "enumeration",
    "enumeration_limit",
    "infostate_source",
    "public_action_mask",
    "resident_memory",
    "search_game",
    "unsupported_infostate_source",
    "validate_game",
]
