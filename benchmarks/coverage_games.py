"""The games of the coverage benchmarks (no flags: importable by any of
them): two-player zero-sum or constant-sum OpenSpiel games that load with
default parameters (two players where the default is another number), plus
OpenSpiel's Python games (`open_spiel.python.games`).

benchmarks/game_coverage.py plays them with the sog bot,
benchmarks/train_coverage.py trains a token CVPN on them.
"""

import pyspiel


def coverage_games() -> list[str]:
  """Default game strings: two-player zero-sum or constant-sum games."""
  import open_spiel.python.games  # pylint: disable=g-import-not-at-top,unused-import
  zero_sum = (pyspiel.GameType.Utility.ZERO_SUM,
              pyspiel.GameType.Utility.CONSTANT_SUM)
  names = []
  for game_type in pyspiel.registered_games():
    if game_type.utility not in zero_sum:
      continue
    if not game_type.min_num_players <= 2 <= game_type.max_num_players:
      continue
    name = game_type.short_name
    try:
      game = pyspiel.load_game(name)
    except pyspiel.SpielError:
      continue  # needs parameters (e.g. efg_game, nfg_game)
    if game.num_players() != 2:
      name = f"{name}(players=2)"
    names.append(name)
  return sorted(names)
