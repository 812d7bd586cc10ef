"""ISMCTS-BR: a best responder by information-set MCTS (Timbers et al. 2022):
approximate exploitability where exact best responses are out of reach."""

from open_spiel_sog.algorithms.ismcts_br.ismcts_br import POLICY_FORMAT
from open_spiel_sog.algorithms.ismcts_br.ismcts_br import CHUMPS
from open_spiel_sog.algorithms.ismcts_br.ismcts_br import CHUMP_GAMES
from open_spiel_sog.algorithms.ismcts_br.ismcts_br import SPEC_FORMS
from open_spiel_sog.algorithms.ismcts_br.ismcts_br import EXACT_MAX_HISTORIES
from open_spiel_sog.algorithms.ismcts_br.ismcts_br import Opponent
from open_spiel_sog.algorithms.ismcts_br.ismcts_br import TableBuilder
from open_spiel_sog.algorithms.ismcts_br.ismcts_br import MAX_CACHED_TABLES
from open_spiel_sog.algorithms.ismcts_br.ismcts_br import register_table_opponent
from open_spiel_sog.algorithms.ismcts_br.ismcts_br import make_opponent
from open_spiel_sog.algorithms.ismcts_br.ismcts_br import PolicyFileError
from open_spiel_sog.algorithms.ismcts_br.ismcts_br import save_policy
from open_spiel_sog.algorithms.ismcts_br.ismcts_br import load_policy
from open_spiel_sog.algorithms.ismcts_br.ismcts_br import Posterior
from open_spiel_sog.algorithms.ismcts_br.ismcts_br import ISMCTSBRConfig
from open_spiel_sog.algorithms.ismcts_br.ismcts_br import SearchResult
from open_spiel_sog.algorithms.ismcts_br.ismcts_br import Estimate
from open_spiel_sog.algorithms.ismcts_br.ismcts_br import ISMCTSBR
from open_spiel_sog.algorithms.ismcts_br.ismcts_br import exact_best_response_value
from open_spiel_sog.algorithms.ismcts_br.ismcts_br import game_is_small
from open_spiel_sog.algorithms.ismcts_br.ismcts_br import approximate_exploitability

__all__ = [
    "approximate_exploitability",
    "CHUMP_GAMES",
    "CHUMPS",
    "Estimate",
    "exact_best_response_value",
    "EXACT_MAX_HISTORIES",
    "game_is_small",
    "ISMCTSBR",
    "ISMCTSBRConfig",
    "load_policy",
    "make_opponent",
    "MAX_CACHED_TABLES",
    "Opponent",
    "POLICY_FORMAT",
    "PolicyFileError",
    "Posterior",
    "register_table_opponent",
    "save_policy",
    "SearchResult",
    "SPEC_FORMS",
    "TableBuilder",
]
