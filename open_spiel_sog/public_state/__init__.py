"""Public states, the public tree and their validation (DESIGN.md section 3)."""

from open_spiel_sog.public_state.check import check_public_states
from open_spiel_sog.public_state.features import PublicFeatures
from open_spiel_sog.public_state.features import SlotTable
from open_spiel_sog.public_state.observer import ObserverConfig
from open_spiel_sog.public_state.observer import PublicState
from open_spiel_sog.public_state.observer import PublicStateObserver
from open_spiel_sog.public_state.observer import PublicTreeTooLarge
from open_spiel_sog.public_state.observer import validate_game
from open_spiel_sog.public_state.tree import PublicTree

__all__ = [
    "ObserverConfig",
    "PublicFeatures",
    "PublicState",
    "PublicStateObserver",
    "PublicTree",
    "PublicTreeTooLarge",
    "SlotTable",
    "check_public_states",
    "validate_game",
]
