"""Small shared utilities, for every layer: progress bars, bounded caches,
parameter parsing, game loading and numpy-compatible draws.

  draws     draws as numpy's `Generator.choice` makes them
  games     `load_game` with a one-line error naming the caller
  growing_array  `GrowingArray`, a numpy array grown by appending
  jax_logs  `quiet_missing_tpu`: JAX's no-TPU start-up line dropped
  lru       `LRUCache`, a mapping of its most recently used entries
  notices   `notice`: a notice on stderr once per process and subject
  params    bot and algorithm parameters, checked against a dataclass's defaults
  progress  `progress_bar`: tqdm when installed, a plain line else
  threads   `start_jax_on_one_thread`: JAX's CPU pool held to one thread
"""

from open_spiel_sog.utils import draws
from open_spiel_sog.utils import games
from open_spiel_sog.utils import growing_array
from open_spiel_sog.utils import jax_logs
from open_spiel_sog.utils import lru
from open_spiel_sog.utils import notices
from open_spiel_sog.utils import params
from open_spiel_sog.utils import progress
from open_spiel_sog.utils import threads
from open_spiel_sog.utils.games import load_game
from open_spiel_sog.utils.growing_array import GrowingArray
from open_spiel_sog.utils.lru import LRUCache
from open_spiel_sog.utils.params import dataclass_defaults
from open_spiel_sog.utils.params import parse_params
from open_spiel_sog.utils.progress import progress_bar

__all__ = [
    "dataclass_defaults",
    "draws",
    "games",
    "growing_array",
    "GrowingArray",
    "jax_logs",
    "load_game",
    "lru",
    "LRUCache",
    "params",
    "parse_params",
    "progress",
    "progress_bar",
]
