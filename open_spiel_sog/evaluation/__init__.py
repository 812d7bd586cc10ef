"""Measuring bots: exact exploitability, round-robin tournaments and value
functions' errors.

  exploitability  exact exploitability of SoG, of any registered bot and of
                  depth-limited solving (OpenSpiel's `exploitability`)
  tournament      round robins between registered bots, with Elo ratings
  value_error     a value function's error at fixed reference beliefs
"""

from open_spiel_sog.evaluation import exploitability
from open_spiel_sog.evaluation import tournament
from open_spiel_sog.evaluation import value_error
from open_spiel_sog.evaluation.exploitability import bot_exploitability
from open_spiel_sog.evaluation.exploitability import dls_exploitability
from open_spiel_sog.evaluation.exploitability import sog_exploitability
from open_spiel_sog.evaluation.tournament import round_robin

__all__ = [
    "bot_exploitability",
    "dls_exploitability",
    "exploitability",
    "round_robin",
    "sog_exploitability",
    "tournament",
    "value_error",
]
