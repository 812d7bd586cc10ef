"""The options of `PublicStateObserver` and the games it supports (DESIGN.md
section 3).

`ObserverConfig` holds the observer's options; `validate_game` says whether
public states support a game (two-player zero-sum, or common-payoff where
asked, sequential, with explicit chance), and `search_game` is the game SoG
searches for a game (its turn-based form if simultaneous).
"""

from __future__ import annotations

import dataclasses

import pyspiel

from open_spiel_sog.public_state.infostates import infostate_source

# Default bounds; both can be raised through the observer's constructor.
DEFAULT_MAX_HISTORIES = 200_000
DEFAULT_MAX_PUBLIC_STATES = 200_000
DEFAULT_MAX_CHILDREN = 1_000_000


@dataclasses.dataclass(frozen=True)
class ObserverConfig:
  """Options of `PublicStateObserver`.

  Attributes:
    source: "auto" (native if the game has a public observer, perfect
      information fast path if the game is perfect information, derived
      otherwise) or one of `SOURCES` to force a source.
    max_histories_per_public_state: a public state with more histories than
      this raises `ValueError` (the game is too large for exact public states).
    max_public_states: `full_tree()` raises `ValueError` past this many public
      states.
    max_children: expanding one public state into more child histories
      than this (over all its children) raises `ValueError` before they are
      all built: it bounds the memory of one expansion (gin_rummy's deal
      would otherwise take over 20 GB).
    max_memory_bytes: an expansion that takes the process's resident memory
      past this raises `ValueError` (checked every few thousand histories;
      0: half the machine's physical memory). Histories can be large (a
      gin_rummy state takes about 50 KB), so counts alone do not bound memory.
    infostates: how infostates are identified: "auto" (`infostate_source`)
      or one of `INFOSTATE_SOURCES` to force one ("aoh" on a game that also
      has infostate strings is how tests check the two agree).
    max_histories: 0 keeps every history (exact public states). n > 0 makes
      public states *sampled* where they would hold more than n histories:
      n draws, with replacement and in proportion to chance reach, from the
      histories consistent with the public observations (each kept history
      weighs its share of the group's chance reach, so totals are kept);
      descendants of a sampled public state are built from its sample.
      `public_state_of` always finds the state it is given: where a sample
      lacks it, the public state is rebuilt by resampling with it included.
      Public states of n or fewer histories are exact.
    sample_seed: seed of the sampling.
    share_expansions: reuse the exact expansions that any observer of the
      process built for the same game and sources (`ExpansionCache`: the
      same public states, ids aside, without building their histories
      again); False builds everything anew (an observer whose partition or
      keys are altered, as the tests of the checks do).
    common_payoff: also accept two-player common-payoff games (IDENTICAL
      utility: both players get the same payoff), for the algorithms that
      support them; the zero-sum solvers refuse such an observer's public
      states.
  """
  source: str = "auto"
  infostates: str = "auto"
  max_histories_per_public_state: int = DEFAULT_MAX_HISTORIES
  max_public_states: int = DEFAULT_MAX_PUBLIC_STATES
  max_children: int = DEFAULT_MAX_CHILDREN
  max_memory_bytes: int = 0
  max_histories: int = 0
  sample_seed: int = 0
  common_payoff: bool = False
  share_expansions: bool = True


def validate_game(game: pyspiel.Game, common_payoff: bool = False) -> None:
  """Raises ValueError unless `game` is a game public states support:
  two-player zero-sum (or, with `common_payoff`, common-payoff)."""
  game_type = game.get_type()
  name = game_type.short_name
  if game.num_players() != 2:
    raise ValueError(
        f"{name}: public states need a two-player game, this one has "
        f"{game.num_players()} players")
  utilities = [pyspiel.GameType.Utility.ZERO_SUM]
  if common_payoff:
    utilities.append(pyspiel.GameType.Utility.IDENTICAL)
  if game_type.utility not in utilities:
    raise ValueError(
        f"{name}: public states need a zero-sum game"
        f"{' or a common-payoff one' if common_payoff else ''}, this one's "
        f"utility is {game_type.utility}"
        + ("" if common_payoff or game_type.utility !=
           pyspiel.GameType.Utility.IDENTICAL else
           " (common-payoff games: ObserverConfig(common_payoff=True), for "
           "joint policy search)"))
  if game_type.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
    raise ValueError(
        f"{name}: simultaneous-move games are supported through "
        "turn_based_simultaneous_game(game=...), e.g. "
        "'turn_based_simultaneous_game(game=goofspiel(num_cards=4,"
        "imp_info=True))'")
  if game_type.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC:
    raise ValueError(
        f"{name}: sampled-stochastic chance has no explicit outcome "
        "probabilities; only deterministic and explicit-stochastic games "
        "are supported")
  infostate_source(game)  # raises when the game gives no way to tell


def search_game(game: pyspiel.Game) -> pyspiel.Game:
  """The game SoG searches for `game`: its turn-based form if simultaneous
  (the bot and the trainer both play this one).

  Raises ValueError naming the reason for games SoG does not support."""
  game_type = game.get_type()
  if game_type.dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
    if game.num_players() != 2:
      raise ValueError(f"sog: {game_type.short_name} has "
                       f"{game.num_players()} players; SoG plays two-player "
                       "zero-sum games")
    game = pyspiel.convert_to_turn_based(game)
  try:
    validate_game(game)
  except ValueError as e:
    raise ValueError(f"sog cannot play {game}: {e}") from None
  return game

