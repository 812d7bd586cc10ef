"""Presets by game class: the one command's defaults from what a game says
of itself (DESIGN.md section 18; issue "the zoo", item 2).

No table names a game. `game_class(game)` reads what the game declares
(its observation tensor's shape, its longest game, chance nodes, whether
the recipe knows symmetries of its board) and counts what 20 uniformly
random games of it show (their mean length and mean number of legal
actions; counts, not seconds, so every machine presets a game alike).
`for_class(cls, recipe)` turns that into settings, each with the rule
that chose it:

| setting | rule (perfect_information recipe) | source |
|---|---|---|
| `greedy_after` | a quarter of the longest game, within [10, 30] | AlphaZero's 30 sampled moves in chess and Go |
| `dirichlet_alpha` | 10 / mean legal actions, within [0.03, 1] | AlphaZero: 0.3 chess, 0.15 shogi, 0.03 Go |
| `p_td1` | 100 / mean game length, at most 1 | SoG's Table S2: 0.2 in Go, whose games are ten times longer |
| `symmetries` | on where the recipe knows the board's symmetries | |

A flag given on the command line always wins over its preset. Each row
keeps the small games' values of the shipped runs (tic_tac_toe,
connect_four: 10, 1.0, 1.0). The techniques measured against the default
at equal minutes (Gumbel targets, playout-cap randomisation, the outcome
alone as value target, position averaging, a growing budget;
docs/training.md) stay off here: none left the default's interval on
connect_four. Their flags remain.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pyspiel

from open_spiel_sog.algorithms.training import perfect_information as pi

RECIPES = ("perfect_information",)  # (the recipes with presets)
PLAYOUTS = 20
PLAYOUT_MOVES = 10_000  # (a bound on one random game's moves)


@dataclasses.dataclass(frozen=True)
class GameClass:
  """What a game says of itself, and what random games of it show."""
  board_planes: bool      # observation tensor [C, H, W]
  max_length: int         # the game's declared longest game (moves)
  chance: bool            # chance nodes
  symmetries: bool        # the recipe knows its board's symmetries
  mean_length: float      # decisions per random game
  mean_legal: float       # legal actions per decision of random games


def game_class(game: pyspiel.Game, playouts: int = PLAYOUTS,
               seed: int = 0) -> GameClass:
  """`game`'s class: declared properties and `playouts` uniformly random
  games' counts (seeded: the same numbers on every machine)."""
  game_type = game.get_type()
  shape = (game.observation_tensor_shape()
           if game_type.provides_observation_tensor else [])
  rng = np.random.default_rng(seed)
  decisions = legal = 0
  for _ in range(playouts):
    state = game.new_initial_state()
    moves = 0
    while not state.is_terminal() and moves < PLAYOUT_MOVES:
      moves += 1
      if state.is_chance_node():
        actions, probs = zip(*state.chance_outcomes())
        state.apply_action(int(rng.choice(actions, p=probs)))
        continue
      if state.is_simultaneous_node():
        decisions += 1
        legal += len(state.legal_actions(0))
        state.apply_actions([int(rng.choice(state.legal_actions(p)))
                             for p in range(game.num_players())])
        continue
      actions = state.legal_actions()
      decisions += 1
      legal += len(actions)
      state.apply_action(int(rng.choice(actions)))
  return GameClass(
      board_planes=len(shape) == 3, max_length=game.max_game_length(),
      chance=game_type.chance_mode != pyspiel.GameType.ChanceMode.DETERMINISTIC,
      symmetries=game_type.short_name in pi.SYMMETRIES,
      mean_length=decisions / max(playouts, 1),
      mean_legal=legal / max(decisions, 1))


def _two_digits(x: float) -> float:
  return float(f"{x:.2g}")


def for_class(cls: GameClass, recipe: str) -> dict[str, tuple[Any, str]]:
  """{setting: (value, why)} for a game of class `cls` trained by `recipe`
  (empty for recipes without presets). Settings are TrainConfig fields
  (greedy_after, p_td1) or the recipe's own (dirichlet_alpha,
  symmetries)."""
  if recipe not in RECIPES:
    return {}
  greedy = int(min(30, max(10, cls.max_length // 4)))
  alpha = _two_digits(min(1.0, max(0.03, 10.0 / max(cls.mean_legal, 1.0))))
  p_td1 = _two_digits(min(1.0, 100.0 / max(cls.mean_length, 1.0)))
  return {
      "greedy_after": (greedy, f"a quarter of its longest game, "
                               f"{cls.max_length} moves, within [10, 30]"),
      "dirichlet_alpha": (alpha, f"10 / its {cls.mean_legal:.1f} legal "
                                 f"actions a move, within [0.03, 1]"),
      "p_td1": (p_td1, f"100 / its {cls.mean_length:.1f} moves a game, "
                       f"at most 1"),
      "symmetries": (cls.symmetries,
                     "the recipe knows its board's symmetries"
                     if cls.symmetries else
                     "the recipe knows no symmetries of its board"),
  }


def describe(presets: dict[str, tuple[Any, str]],
             given: dict[str, Any]) -> str:
  """One line: each preset and its rule, or the value a flag gave it."""
  def shown(value):
    return str(value) if isinstance(value, bool) else f"{value:g}"
  return "; ".join(
      f"{name}={shown(given[name])} (as given)" if name in given else
      f"{name}={shown(value)} ({why})"
      for name, (value, why) in presets.items())
