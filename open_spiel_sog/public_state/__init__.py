"""Public states, the public tree and their validation (DESIGN.md section 3).

Code outside this package imports these names from the package, never from
its modules: the modules are free to move.
"""

from open_spiel_sog.public_state.check import check_public_states
from open_spiel_sog.public_state.features import PublicFeatures
from open_spiel_sog.public_state.features import SlotTable
from open_spiel_sog.public_state.features import public_action_mask
from open_spiel_sog.public_state.observer import CHANCE
from open_spiel_sog.public_state.observer import EXPANSIONS
from open_spiel_sog.public_state.observer import ExpansionCache
from open_spiel_sog.public_state.observer import INFOSTATE_SOURCES
from open_spiel_sog.public_state.observer import InfostateSplit
from open_spiel_sog.public_state.observer import LazyChildren
from open_spiel_sog.public_state.observer import ObserverConfig
from open_spiel_sog.public_state.observer import PublicState
from open_spiel_sog.public_state.observer import PublicStateObserver
from open_spiel_sog.public_state.observer import PublicTreeTooLarge
from open_spiel_sog.public_state.observer import TERMINAL
from open_spiel_sog.public_state.observer import infostate_source
from open_spiel_sog.public_state.observer import resident_memory
from open_spiel_sog.public_state.observer import search_game
from open_spiel_sog.public_state.observer import unsupported_infostate_source
from open_spiel_sog.public_state.observer import validate_game
from open_spiel_sog.public_state.tree import PlayerArrays
from open_spiel_sog.public_state.tree import PublicTree

__all__ = [
    "CHANCE",
    "EXPANSIONS",
    "ExpansionCache",
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
    "infostate_source",
    "public_action_mask",
    "resident_memory",
    "search_game",
    "unsupported_infostate_source",
    "validate_game",
]
