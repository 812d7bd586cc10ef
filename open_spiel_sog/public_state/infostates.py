"""How infostates are identified and keyed (DESIGN.md section 11).

A game's infostates are its information_state_string where it provides one
that remembers what the player saw; otherwise the history (perfect
information) or the player's action-observation history (`infostate_source`,
`INFOSTATE_SOURCES`). `InfostateKeys` makes each history's key for a player
(`PublicStateObserver.infostate_string`) and the keys of a public state's
child histories, told apart by the player's role (acting, waiting, the game
over). `DecisionHomes` checks that each decision infostate lies in one
public state (`InfostateSplit` otherwise).
"""

from __future__ import annotations

import hashlib
from typing import Sequence

import pyspiel

from open_spiel_sog.public_state.state import PublicState
from open_spiel_sog.public_state.state import TERMINAL

# How infostates are identified (DESIGN.md section 11).
INFOSTATE_SOURCES = ("string", "history", "aoh")

# Action-observation histories longer than this are folded into a digest of
# everything before the latest observation (keys stay bounded in deep games).
_MAX_AOH_CHARS = 512


def _infostate_sources(game: pyspiel.Game) -> dict[str, str | None]:
  """Each of `INFOSTATE_SOURCES`, in order of preference: None where the
  game supports it, else why it does not."""
  game_type = game.get_type()
  perfect = (game_type.information ==
             pyspiel.GameType.Information.PERFECT_INFORMATION)
  return {
      "string": (None if game_type.provides_information_state_string
                 else "does not provide information_state_string"),
      "history": None if perfect else "is not a perfect-information game",
      "aoh": (None if (game_type.provides_observation_string or
                       game_type.provides_information_state_string)
              else "provides neither observation_string nor "
              "information_state_string"),
  }


# Games where a player moves again after an illegal move the opponent does not
# see: their information_state_string keeps the number of moves made and the
# player's own moves but not when it made them (dark_hex(num_rows=2,
# num_cols=3): player 0's string after moves [0, 0, 1, 2, 3] is the one after
# [0, 1, 2, 2, 3], though it moved at step 3 in one and step 2 in the other).
# Keyed by action-observation histories they have perfect recall, and a
# player's decision infostate lies in one public state.
_FORGETS_WHEN = frozenset(
    {"dark_hex", "phantom_ttt", "latent_ttt", "kriegspiel", "dark_chess",
     "phantom_go"})


def unsupported_infostate_source(game: pyspiel.Game, source: str
                                 ) -> str | None:
  """Why `game` cannot be keyed by infostate source `source` (one of
  `INFOSTATE_SOURCES`), or None where it can."""
  return _infostate_sources(game)[source]


def is_imperfect_recall(game: pyspiel.Game) -> bool:
  """Whether `game` is one of OpenSpiel's imperfect-recall variants (short
  names ending in '_ir': dark_hex_ir, phantom_ttt_ir, liars_dice_ir, ...):
  their information_state_string forgets the player's past, so they play as
  their perfect-recall refinement, the action-observation history."""
  return game.get_type().short_name.endswith("_ir")


def aoh_observation(game: pyspiel.Game):
  """What a player observes at a state in an action-observation history, as
  an unbound State method `(state, player) -> str`: the game's
  observation_string, or its information_state_string in games that provide
  only that (the imperfect-recall '_ir' variants)."""
  if game.get_type().provides_observation_string:
    return pyspiel.State.observation_string
  return pyspiel.State.information_state_string


def infostate_source(game: pyspiel.Game) -> str:
  """How `game`'s infostates are identified.

  "string": the game's information_state_string. "history": a
  perfect-information game without it; the history is the infostate.
  "aoh": an imperfect-information game without it, or one whose strings
  forget (`is_imperfect_recall`, and the games of `_FORGETS_WHEN`, whose
  strings forget when the player moved); a player's infostate is its
  action-observation history (its observation after every step plus its own
  actions: perfect recall; see `aoh_observation`). Raises ValueError when
  the game provides neither infostate nor observation strings.
  """
  sources = _infostate_sources(game)
  if sources["aoh"] is None and (
      is_imperfect_recall(game) or
      game.get_type().short_name in _FORGETS_WHEN):
    return "aoh"
  for source, missing in sources.items():
    if missing is None:
      return source
  raise ValueError(
      f"{game.get_type().short_name}: the game provides neither "
      "information_state_string nor observation_string, so its infostates "
      "cannot be identified")


def _aoh_extend(prefix: str, own_action: int | None, observation: str) -> str:
  """An action-observation history extended by one step."""
  own = "" if own_action is None else f" a{own_action}"
  key = f"{prefix}{own} | {observation}"
  if len(key) > _MAX_AOH_CHARS:
    digest = hashlib.blake2b(f"{prefix}{own}".encode(),
                             digest_size=16).hexdigest()
    key = f"#{digest} | {observation}"
  return key


_ROLE_SUFFIX = {"waiting": " [not acting]", "over": " [game over]"}


def _without_role(key: str) -> str:
  """`key` without the suffix `_separate_roles` may have given it (an
  action-observation history records the player's actions anyway)."""
  for suffix in _ROLE_SUFFIX.values():
    if key.endswith(suffix):
      return key[:-len(suffix)]
  return key


def who_acts(histories: Sequence[pyspiel.State]) -> list[int]:
  """Who acts at each history (a player, CHANCE or TERMINAL)."""
  return [TERMINAL if h.is_terminal() else int(h.current_player())
          for h in histories]


def _separate_roles(actors: Sequence[int], keys: list[list[str]]) -> None:
  """Tells apart, in place, histories whose key for a player is the same
  but where the player's role differs: acting, waiting, or the game over.

  A player knows when it is asked to act and when the game has ended, even
  where the game's string for a waiting player does not say so (phantom_ttt
  and dark_hex, where a player may move again after an illegal move, print
  the same string for the waiting player whoever acts next). The waiting and
  ended histories get a suffix; the acting player's key stays the game's own
  string. Without this, a public state would mix histories where different
  players act. `actors`: who acts at each history (`who_acts`).
  """
  for p, player_keys in enumerate(keys):
    roles = ["over" if a == TERMINAL else "acting" if a == p else "waiting"
             for a in actors]
    first: dict[str, str] = {}
    mixed = {key for key, role in zip(player_keys, roles)
             if first.setdefault(key, role) != role}
    if not mixed:
      continue
    for i, (key, role) in enumerate(zip(player_keys, roles)):
      if role != "acting" and key in mixed:
        player_keys[i] = key + _ROLE_SUFFIX[role]


def _history_key(state: pyspiel.State) -> str:
  """The infostate key of a history in a perfect-information game."""
  return "h:" + " ".join(map(str, state.history()))


class InfostateSplit(ValueError):
  """A decision infostate lies in two public states: the game is not
  timeable, or its infostate keys forget what the player saw."""


class InfostateKeys:
  """The infostate keys of an observer's histories.

  Attributes:
    source: how infostates are identified, one of `INFOSTATE_SOURCES`.
  """

  def __init__(self, game: pyspiel.Game, requested: str,
               separate_roles: bool):
    """Checks the infostate source `requested` against the game.

    Args:
      game: the game.
      requested: "auto" (`infostate_source`) or one of `INFOSTATE_SOURCES`
        (see ObserverConfig.infostates), checked against what the game
        provides.
      separate_roles: whether child keys are told apart by the player's
        role (`_separate_roles`; not in perfect-information public states).
    """
    self.game = game
    self.source = self._checked_source(requested)
    self._aoh_observation = aoh_observation(game)
    # OpenSpiel's EFG games describe only the acting player's infoset; a
    # waiting player's string does not encode its own past moves.
    self._recall_keys = game.get_type().short_name == "efg_game"
    self._separate_roles = separate_roles

  def _checked_source(self, requested: str) -> str:
    """The infostate source `requested` (see ObserverConfig.infostates),
    checked against what the game provides."""
    if requested == "auto":
      return infostate_source(self.game)
    if requested not in INFOSTATE_SOURCES:
      raise ValueError(f"unknown infostates {requested!r}; supported: 'auto', "
                       f"{', '.join(map(repr, INFOSTATE_SOURCES))}")
    missing = _infostate_sources(self.game)[requested]
    if missing is not None:
      raise ValueError(f"infostates={requested!r}: {self.game} {missing}")
    return requested

  def string(self, state: pyspiel.State, player: int) -> str:
    """`player`'s information state at `state`.

    OpenSpiel's information_state_string, except in EFG games, where it only
    identifies the acting player's infoset: there a waiting player's
    infostate is its own perfect-recall sequence of (infoset, action) pairs,
    and the acting player's is the game's own string (so OpenSpiel's
    TabularPolicy finds it). In games without the string (`infostate_source`):
    the history in perfect-information games, and otherwise the player's
    action-observation history.
    """
    if self.source == "history":
      return _history_key(state)
    if self.source == "aoh":
      observe = self._aoh_observation
      replay = self.game.new_initial_state()
      key = _aoh_extend("", None, observe(replay, player))
      for a in state.history():
        own = a if replay.current_player() == player else None
        replay.apply_action(a)
        key = _aoh_extend(key, own, observe(replay, player))
      return key
    if not self._recall_keys or (not state.is_terminal() and
                                 state.current_player() == player):
      return state.information_state_string(player)
    replay = self.game.new_initial_state()
    own = []
    for a in state.history():
      if replay.current_player() == player:
        own.append(f"{replay.information_state_string(player)}:{a}")
      replay.apply_action(a)
    return f"[p{player} sequence] " + " ".join(own)

  def of_children(self, ps: PublicState, children: list[pyspiel.State],
                  parent_history: list[int], parent_action: list[int],
                  actors: list[int]) -> list[list[str]]:
    """[2][children] each child history's infostate key per player; an
    action-observation history extends its parent's by one step. Keys are
    then told apart by the player's role (`_separate_roles`; `actors`: who
    acts at each child)."""
    if self.source != "aoh":
      keys = [[self.string(h, p) for h in children] for p in range(2)]
    else:
      keys = [[], []]
      parent_actors = who_acts(ps.histories)
      observe = self._aoh_observation
      for p in range(2):
        parent_keys = [_without_role(k) for k in ps.infostates(p)]
        parent_index = ps.history_infostate[p].tolist()
        keys[p] = [
            _aoh_extend(parent_keys[parent_index[k]],
                        a if parent_actors[k] == p else None, observe(h, p))
            for h, k, a in zip(children, parent_history, parent_action)]
    if self._separate_roles:
      _separate_roles(actors, keys)
    return keys


class DecisionHomes:
  """The public state where each decision infostate was first seen.

  A player's decision infostate must lie in one public state. In a game
  with perfect recall where it does not, the player cannot tell how many
  moves were made (the game is not timeable: phantom_ttt_ir forgets how
  many times the opponent tried an illegal move), and no public tree
  exists; searching one anyway would let the player see what it cannot.
  Not kept for perfect-information public states (one history each).
  """

  def __init__(self, game: pyspiel.Game, infostate_source: str,
               perfect_information: bool):
    self.game = game
    self.infostate_source = infostate_source
    self._perfect_information = perfect_information
    # (player, decision infostate key) -> (public state id, depth).
    self._home: dict[tuple[int, str], tuple[int, int]] = {}

  def check_in(self, ps: PublicState) -> None:
    """Raises InfostateSplit (a ValueError) when a decision infostate of
    `ps` was already seen in another public state."""
    if self._perfect_information or not ps.is_player_node():
      return
    p = ps.current_player()
    home = self._home
    for key in ps.infostates(p):
      first_id, first_depth = home.setdefault((p, key), (ps.id, ps.depth))
      if first_id != ps.id and ps.sampled and first_depth == ps.depth:
        # Two fragments of one sampled public state (a sample's common-
        # knowledge components need not be the game's): not a timing fault.
        continue
      if first_id != ps.id:
        raise InfostateSplit(
            f"{self.game}: player {p}'s infostate {key[:200]!r} lies in two "
            f"public states (depths {first_depth} and {ps.depth}): the game "
            "is not timeable (a player cannot tell how many moves were made) "
            f"or its {self.infostate_source!r} infostates forget what the "
            "player saw, so it has no sound public tree"
            + ("; try infostates='aoh' (action-observation histories)"
               if self.infostate_source == "string" and
               unsupported_infostate_source(self.game, "aoh") is None
               else ""))

  def check_out(self, ps: PublicState) -> None:
    """Forgets the decision infostates that `ps` (being replaced or
    dropped) checked in."""
    home = self._home
    # (A public state whose infostate strings were never made was never
    # checked in: perfect-information games' never are, and making the
    # strings of the 10,000 public states a late yacht search dropped
    # took 0.3 s, after the search's deadline.)
    if home and ps._keys is not None and ps.is_player_node():  # pylint: disable=protected-access
      p = ps.current_player()
      for key in ps.infostates(p):
        if home.get((p, key), (None,))[0] == ps.id:
          del home[(p, key)]


def _digest(message: str) -> str:
  """A history key: BLAKE2b of `message` with an 8-byte digest, as 16 hex
  digits (the native engine's `blake2b::Digest64`, shown by `Hex64`)."""
  return hashlib.blake2b(message.encode(), digest_size=8).hexdigest()


def _hash_extend(parent: str | None, own_action: int | None,
                 observation: str) -> str:
  """An action-observation history's key extended by one step: the digest
  of the parent key (none at the root), the player's own action where it
  acted, and what it observes now (history_tree.h's AohExtend)."""
  own = "" if own_action is None else f" a{own_action}"
  return _digest(f"{parent or ''}{own} | {observation}")


class HistoryKeys:
  """Both players' infostate keys of histories built one step at a time (a
  history tree's nodes, DESIGN.md section 15), keys that cost a hash: 64
  bits of BLAKE2b as 16 hex digits, the same in both engines. The game's
  information_state_string ("string"; a waiting player's and a finished
  game's marked as such, see `_separate_roles`) is hashed whole; the
  action-observation history ("aoh") is hashed incrementally, each key the
  digest of its parent's key and the step's own action and observation,
  so a key costs one observation string and one hash however long the game.
  `readable(state)` gives the strings these keys stand for, where a person
  or a test needs them. Perfect-information games ("history") have no use
  for them.

  Collisions: a search holds at most millions of keys per player; the
  chance that two of n distinct infostates share 64 bits is below
  n^2 / 2^65 (3e-6 at n = 10^7). tests/history_engine_test.py checks that
  the hashed keys split whole games' histories as the readable ones do.
  """

  def __init__(self, game: pyspiel.Game, requested: str = "auto"):
    self.game = game
    self.source = InfostateKeys(game, requested, True).source
    if self.source == "history" or game.get_type().short_name == "efg_game":
      raise ValueError(
          f"{game}: history keys need an imperfect-information game keyed by "
          "information_state_string or action-observation histories (not "
          "perfect-information or EFG games)")
    self._observe = aoh_observation(game)

  def _string_keys(self, state: pyspiel.State) -> tuple[str, str]:
    actor = TERMINAL if state.is_terminal() else int(state.current_player())
    keys = []
    for p in (0, 1):
      key = state.information_state_string(p)
      if actor != p:
        key += _ROLE_SUFFIX["over" if actor == TERMINAL else "waiting"]
      keys.append(key)
    return keys[0], keys[1]

  def root(self, state: pyspiel.State) -> tuple[str, str]:
    """Both players' keys at `state` (replayed from the initial state)."""
    if self.source == "string":
      k0, k1 = self._string_keys(state)
      return _digest(k0), _digest(k1)
    replay = self.game.new_initial_state()
    keys = tuple(_hash_extend(None, None, self._observe(replay, p))
                 for p in (0, 1))
    for a in state.history():
      keys = self.child(keys, replay, a, replay.child(a))
      replay.apply_action(a)
    return keys

  def child(self, keys: tuple[str, str], parent: pyspiel.State, action: int,
            child: pyspiel.State) -> tuple[str, str]:
    """Both players' keys at `child`, reached from `parent` (whose keys are
    `keys`) by `action`."""
    if self.source == "string":
      k0, k1 = self._string_keys(child)
      return _digest(k0), _digest(k1)
    actor = parent.current_player()
    return tuple(_hash_extend(keys[p], action if actor == p else None,
                              self._observe(child, p)) for p in (0, 1))

  def readable(self, state: pyspiel.State) -> tuple[str, str]:
    """The strings both players' keys at `state` stand for, in full: the
    marked information_state_strings, or the action-observation histories
    (own actions and observations, each step ' | '-separated)."""
    if self.source == "string":
      return self._string_keys(state)
    replay = self.game.new_initial_state()
    keys = [f" | {self._observe(replay, p)}" for p in (0, 1)]
    for a in state.history():
      actor = replay.current_player()
      replay.apply_action(a)
      for p in (0, 1):
        own = f" a{a}" if actor == p else ""
        keys[p] += f"{own} | {self._observe(replay, p)}"
    return keys[0], keys[1]
