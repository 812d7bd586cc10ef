"""Public states of a two-player zero-sum OpenSpiel game (DESIGN.md section 3).

A public state is the set of histories that share the sequence of public
observations since the root. `PublicStateObserver(game)` picks the source of
those observations:

* ``perfect_information``: every history is its own public state.
* ``native``: the game's own public observer
  (``IIGObservationType(public_info=True, perfect_recall=True,
  private_info=NONE)``, or the non-recall one, in which case the sequence of
  observations along the path is the key). Children of a public state are
  grouped by their public observation.
* ``derived``: no public observer (liars_dice, turn-based goofspiel, ...). The
  children of a public state are partitioned into common-knowledge components
  with union-find, joining two histories when some player's
  information_state_string is the same for both. In perfect-recall games this
  is exact and the finest public partition possible.

Public states are built lazily: `children()` expands one level on demand, so a
search can walk a large game without enumerating it.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import hashlib
import os
import time
from typing import TYPE_CHECKING, Iterator, NamedTuple, Sequence

import numpy as np
import pyspiel
from open_spiel.python import observation as os_observation

from open_spiel_sog.utils import draws

CHANCE = int(pyspiel.PlayerId.CHANCE)
TERMINAL = int(pyspiel.PlayerId.TERMINAL)

if TYPE_CHECKING:
  from open_spiel_sog.public_state.tree import PublicTree

SOURCES = ("native", "perfect_information", "derived")

# Default bounds; both can be raised through the observer's constructor.
DEFAULT_MAX_HISTORIES = 200_000
DEFAULT_MAX_PUBLIC_STATES = 200_000
DEFAULT_MAX_CHILDREN = 1_000_000


def resident_memory() -> int | None:
  """This process's resident memory in bytes (Linux), or None."""
  try:
    with open("/proc/self/statm", encoding="ascii") as f:
      return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
  except (OSError, ValueError, IndexError):
    return None


def physical_memory() -> int | None:
  """The machine's physical memory in bytes, or None."""
  try:
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
  except (OSError, ValueError, AttributeError):
    return None


class PublicTreeTooLarge(ValueError):
  """The public tree has more public states than the configured bound."""


class InfostateSplit(ValueError):
  """A decision infostate lies in two public states: the game is not
  timeable, or its infostate keys forget what the player saw."""


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


# How infostates are identified (DESIGN.md section 11).
INFOSTATE_SOURCES = ("string", "history", "aoh")

# Action-observation histories longer than this are folded into a digest of
# everything before the latest observation (keys stay bounded in deep games).
_MAX_AOH_CHARS = 512


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


# Memory is read (PublicStateObserver._check_memory) every this many child
# histories built.
_MEMORY_CHECK_EVERY = 1024

# An expansion with more than this many times max_histories children draws
# that many of them before building any.
_PRESAMPLE = 4

# Under a deadline, a sampled expansion may spend this share of the time
# left building children; walking to a state, the expansions on the way
# share WALK_SHARE of it.
EXPAND_SHARE = 0.1
WALK_SHARE = 0.3

# The share of a sample's draws kept for the searcher's own infostate on
# the true path (see PublicStateObserver._sample_favouring).
FAVOURED_SHARE = 0.5

# Exact expansions are kept process-wide, up to this many child histories in
# all (see `ExpansionCache`).
EXPANSION_CACHE_HISTORIES = 20_000


class _Expansion(NamedTuple):
  """The children of one exact public state, as `_expand` builds them
  before grouping is turned into public states (nothing here depends on
  sampling, the searcher or the observer's own state)."""
  children: tuple  # [C] pyspiel.State, never mutated (users clone)
  reach: np.ndarray  # [C] chance reach
  parent_history: np.ndarray  # [C]
  parent_action: np.ndarray  # [C]
  keys: list  # [2][C] infostate keys
  groups: list  # [(label, [C'] member indices)] in the order built
  # label -> `PublicState.derived` of the group's public state when built
  # whole (filled as they are built).
  derived: dict
  # label -> (member indices, chance reach, parent history, parent action,
  # histories) of a group built whole (filled as they are built).
  parts: dict


class ExpansionCache:
  """Exact expansions of public states, shared by every observer in the
  process, keyed by `PublicState.content_key` (the game, the observer's
  sources and the labels on the path from the root).

  A fresh bot (a tournament's, a training actor's next search, each seed of
  a benchmark) would otherwise rebuild, key and partition the same child
  histories again: 28 of 130 ms of a Leduc SoG(100, 1) decision. Only
  expansions that sampled nothing are kept, and reusing one gives the public
  states, ids aside, that building it again would (sampling below them draws
  from the same children in the same order). Bounded by
  `max_histories` child histories in all; the oldest entries go first."""

  def __init__(self, max_histories: int = EXPANSION_CACHE_HISTORIES):
    self.max_histories = max_histories
    self._entries: dict[tuple, _Expansion] = {}
    self._histories = 0
    self.hits = 0
    self.misses = 0

  def get(self, key: tuple | None) -> _Expansion | None:
    entry = None if key is None else self._entries.get(key)
    if key is not None:
      if entry is None:
        self.misses += 1
      else:
        self.hits += 1
    return entry

  def put(self, key: tuple, entry: _Expansion) -> None:
    size = len(entry.children)
    if size > self.max_histories:
      return
    while self._entries and self._histories + size > self.max_histories:
      oldest = next(iter(self._entries))
      self._histories -= len(self._entries.pop(oldest).children)
    self._entries[key] = entry
    self._histories += size

  def clear(self) -> None:
    self._entries.clear()
    self._histories = 0
    self.hits = self.misses = 0

  def __len__(self) -> int:
    return len(self._entries)


EXPANSIONS = ExpansionCache()


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


def make_public_observation(game: pyspiel.Game, perfect_recall: bool):
  """The game's public observer (an open_spiel Observation), or None."""
  try:
    obs = os_observation.make_observation(
        game,
        pyspiel.IIGObservationType(public_info=True,
                                   perfect_recall=perfect_recall,
                                   private_info=pyspiel.PrivateInfoType.NONE))
  except (pyspiel.SpielError, RuntimeError, ValueError):
    return None
  if obs is None:
    return None
  # Some games build an observer that only fails when used: probe it.
  try:
    obs.string_from(game.new_initial_state(), 0)
  except (pyspiel.SpielError, RuntimeError, ValueError):
    return None
  return obs


_ROLE_SUFFIX = {"waiting": " [not acting]", "over": " [game over]"}


def _without_role(key: str) -> str:
  """`key` without the suffix `_separate_roles` may have given it (an
  action-observation history records the player's actions anyway)."""
  for suffix in _ROLE_SUFFIX.values():
    if key.endswith(suffix):
      return key[:-len(suffix)]
  return key


def _pair_index(parent_history: np.ndarray, parent_action: np.ndarray,
                history: int, action: int) -> int:
  """The index of the child reached by `action` from `history`, or -1."""
  hits = np.nonzero((parent_history == history) &
                    (parent_action == action))[0]
  return int(hits[0]) if hits.size else -1


def _actors(histories: Sequence[pyspiel.State]) -> list[int]:
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
  players act. `actors`: who acts at each history (`_actors`).
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


class _UnionFind:
  """Union-find over range(n) with path halving."""

  def __init__(self, n: int):
    self.parent = list(range(n))

  def find(self, i: int) -> int:
    parent = self.parent
    while parent[i] != i:
      parent[i] = parent[parent[i]]
      i = parent[i]
    return i

  def union(self, i: int, j: int) -> None:
    ri, rj = self.find(i), self.find(j)
    if ri != rj:
      self.parent[max(ri, rj)] = min(ri, rj)


def common_knowledge_components(keys: Sequence[Sequence]) -> list[int]:
  """Component label of each history in the common-knowledge graph.

  Args:
    keys: per player, each history's infostate (string or index); two
      histories are joined when some player's keys are equal.

  Returns:
    [H] the smallest history index of each history's component.
  """
  n = len(keys[0])
  uf = _UnionFind(n)
  for player_keys in keys:
    first: dict = {}
    for k, key in enumerate(player_keys):
      j = first.setdefault(key, k)
      if j != k:
        uf.union(j, k)
  return [uf.find(k) for k in range(n)]


def _actor_name(player: int) -> str:
  return {CHANCE: "chance", TERMINAL: "the game's end"}.get(
      player, f"player {player}")


class LazyChildren(collections.abc.Sequence):
  """The children of a perfect-information public state (one history), one
  per legal action (chance: per outcome of positive probability), in
  OpenSpiel's order, each built on first access.

  A search that adds one child per expansion (GT-CFR's top_k=1, the
  perfect-information default) then builds one child state, not one per
  legal move (82 on 9x9 go). Iterating builds them all; `children()` then
  returns the same objects. See `PublicState.child_sequence`."""

  def __init__(self, observer: "PublicStateObserver", parent: "PublicState"):
    history = parent.histories[0]
    if history.is_chance_node():
      outcomes = [(a, p) for a, p in history.chance_outcomes() if p > 0.0]
      self._actions = [a for a, _ in outcomes]
      self._probs = [p for _, p in outcomes]
    else:
      self._actions = list(parent.legal_actions(0))
      self._probs = [1.0] * len(self._actions)
    self._observer = observer
    self._parent = parent
    self._position = {a: i for i, a in enumerate(self._actions)}
    self._built: list[PublicState | None] = [None] * len(self._actions)

  def __len__(self) -> int:
    return len(self._actions)

  def __getitem__(self, i):
    if isinstance(i, slice):
      return [self[j] for j in range(*i.indices(len(self)))]
    child = self._built[i]
    if child is None:
      child = self._built[i] = self._observer._perfect_information_child(  # pylint: disable=protected-access
          self._parent, self._actions[i], self._probs[i])
    return child

  def position(self, history: int, action: int) -> int | None:
    """The index of the child reached by `action` from history `history`
    (always 0 here), or None if that is not a legal move."""
    return self._position.get(action) if history == 0 else None

  def positions(self) -> dict[int, int]:
    """action -> index of its child (shared: do not modify)."""
    return self._position

  def built(self) -> list[PublicState]:
    """The children built so far."""
    return [c for c in self._built if c is not None]


class _DroppedHistories(collections.abc.Sequence):
  """The histories of a public state its observer has dropped (pruned off
  the path, replaced by a new sample, or gone with a restart). They are
  released when it is dropped, not when Python's cyclic collector frees the
  public state: the tree's links are cycles, and late in a long game the
  states they held were gigabytes of garbage between collections (gin_rummy,
  8.7 GB at move 80 against 1.6 GB collected; states of 100-200 KB there).
  Reading them is a bug, reported as one."""

  __slots__ = ("_describe",)

  def __init__(self, ps: "PublicState"):
    self._describe = f"#{ps.id} (depth {ps.depth})"

  def __len__(self) -> int:
    return 0

  def __getitem__(self, i):
    raise RuntimeError(f"public state {self._describe} was dropped by its "
                       "observer (prune or restart); its histories are gone")


class _ReplayedHistories(collections.abc.Sequence):
  """The histories of a public state on the pruned path above the search
  floor, not held: navigation along the path reads only the index arrays,
  and the states, whose size grows with the game (a kriegspiel state at
  move 190 is 21 KB, gin_rummy's at move 120 194 KB), made the path's memory
  grow with the square of a game's length. Where they are read after all
  (resampling a child off the path), they are rebuilt by replaying each
  history's actions from the game's initial state and held again."""

  __slots__ = ("_ps", "_size")

  def __init__(self, ps: "PublicState"):
    self._ps = ps
    self._size = len(ps.histories)

  def __len__(self) -> int:
    return self._size

  def _states(self) -> list:
    ps = self._ps
    actions = []  # per level, from `ps` up: [H] action into that level
    index = np.arange(self._size)
    node = ps
    while node.parent is not None:
      actions.append(node.parent_action[index])
      index = node.parent_history[index]
      node = node.parent
    states = []
    initial = ps.observer.game.new_initial_state()
    for i in range(self._size):
      state = initial.clone()
      for level in reversed(actions):
        state.apply_action(int(level[i]))
      states.append(state)
    ps.histories = states
    return states

  def __getitem__(self, i):
    return self._states()[i]

  def __iter__(self):
    return iter(self._states())


class PublicState:
  """A public state: histories, their infostates and the public tree links.

  Attributes:
    observer: the observer that built this public state.
    id: unique within its observer, in creation order (never reused, also
      after `prune`).
    parent: the parent public state (None at the root).
    depth: number of public transitions from the root.
    key: the public observation (or partition label) that tells it apart from
      its siblings.
    histories: the histories (pyspiel.State) in this public state.
    chance_reach: [H] product of chance probabilities from the game root.
    history_infostate: [2, H] index of each history's infostate per player.
    parent_history: [H] index of each history's parent in `parent.histories`
      (-1 at the root).
    parent_action: [H] action that led from the parent history (-1 at root).
  """

  def __init__(self, observer: "PublicStateObserver", id_: int,
               parent: PublicState | None, key: str,
               histories: Sequence[pyspiel.State], chance_reach: np.ndarray,
               parent_history: np.ndarray, parent_action: np.ndarray,
               infostate_keys: Sequence[Sequence[str]] | None = None,
               derived: tuple | None = None):
    self.observer = observer
    self.id = id_
    self.parent = parent
    self.depth = 0 if parent is None else parent.depth + 1
    self.key = key
    self.histories = list(histories)
    self.chance_reach = np.asarray(chance_reach, dtype=np.float64)
    self.parent_history = np.asarray(parent_history, dtype=np.int64)
    self.parent_action = np.asarray(parent_action, dtype=np.int64)
    self._children: list[PublicState] | None = None
    self._lazy_children: LazyChildren | None = None
    # True when the histories are a sample (here or in an ancestor).
    self.sampled = parent is not None and parent.sampled
    # The player whose infostate on the true path this sample favoured
    # (PublicStateObserver.favoured_player), or None.
    self.favoured: int | None = None
    # [H] bool, or None: the histories that the favoured player's infostate
    # on the true path holds or leads to (see PublicStateObserver._expand).
    self.favoured_histories: np.ndarray | None = None
    # False when the histories are not all there are (sampled, here or
    # above): see `content_key`.
    self.exact = parent is None or parent.exact
    self._content_key: tuple | None = None
    # What is computed from the histories on demand (`returns0`), shared
    # with the public states built from the same ExpansionCache entry.
    self._computed: dict = {}

    first = self.histories[0]
    self._current_player = int(first.current_player())
    if derived is not None:
      # What the checks and loops below gave when this public state was
      # first built (ExpansionCache): shared, never mutated.
      (self._infostates, self.history_infostate, self._legal_actions,
       self._computed) = derived
      return
    for h in self.histories:
      if int(h.current_player()) != self._current_player:
        raise ValueError(
            f"{observer.game}: public state {self.describe()} mixes "
            f"histories where {_actor_name(self._current_player)} and "
            f"{_actor_name(int(h.current_player()))} act: who acts next is "
            "not common knowledge (a player cannot tell whether chance or "
            "its opponent moves, or the game's public observer hides it), "
            "so the game has no sound public tree")

    # Some games' terminal strings forget what a player knew (goofspiel
    # without imp_info drops the bids): at terminals, each infostate also
    # carries the player's infostate in the parent and its own last action,
    # so terminal infostates have perfect recall whatever the game prints.
    terminal_recall = None
    if (self._current_player == TERMINAL and parent is not None and
        observer.infostate_source == "string"):
      parent_infostates = parent._infostates  # pylint: disable=protected-access
      parent_index = parent.history_infostate

      def terminal_recall(s, i, p):
        k = int(self.parent_history[i])
        own = (f" a{int(self.parent_action[i])}"
               if parent.current_player() == p else "")
        return f"{s} <- {parent_infostates[p][parent_index[p][k]]}{own}"

    if len(self.histories) == 1 and terminal_recall is None:
      # (One history, one infostate each: the common perfect-information
      # case, without the general bookkeeping. Without given keys, the
      # infostate strings are made when first read: a perfect-information
      # search reads few of them, and two strings were a twentieth of a
      # connect_four simulation.)
      self._keys = (None if infostate_keys is None else
                    [[infostate_keys[p][0]] for p in range(2)])
      self.history_infostate = np.zeros((2, 1), dtype=np.int64)
      self._legal_actions = ([first.legal_actions()]
                             if self._current_player >= 0 else None)
      return

    infostates: list[list[str]] = [[], []]
    index = np.empty((2, len(self.histories)), dtype=np.int64)
    for p in range(2):
      seen: dict[str, int] = {}
      for i, h in enumerate(self.histories):
        s = (observer.infostate_string(h, p) if infostate_keys is None
             else infostate_keys[p][i])
        if terminal_recall is not None:
          s = terminal_recall(s, i, p)
        j = seen.get(s)
        if j is None:
          j = seen[s] = len(infostates[p])
          infostates[p].append(s)
        index[p, i] = j
    self._infostates = infostates
    self.history_infostate = index

    self._legal_actions: list[list[int]] | None = None
    if self._current_player >= 0:
      p = self._current_player
      legal: list[list[int] | None] = [None] * len(infostates[p])
      for i, h in enumerate(self.histories):
        actions = h.legal_actions()
        j = index[p, i]
        if legal[j] is None:
          legal[j] = actions
        elif legal[j] != actions:
          raise ValueError(
              f"infostate {infostates[p][j]!r} of {observer.game} has "
              "histories with different legal actions")
      self._legal_actions = legal  # type: ignore[assignment]

  @property
  def derived(self) -> tuple:
    """(infostates, history_infostate, legal actions, computed): what the
    constructor derives from the histories and what was computed from them
    since (see `ExpansionCache`)."""
    return (self._infostates, self.history_infostate, self._legal_actions,
            self._computed)

  def first_histories(self, player: int) -> list[int]:
    """The index of the first history of each of `player`'s infostates."""
    key = ("first", player)
    first = self._computed.get(key)
    if first is None:
      index = self.history_infostate[player]
      if len(index) == 1:
        first = [0]
      elif len(index) > 64:
        first = np.unique(index, return_index=True)[1].tolist()
      else:
        first = [-1] * self.num_infostates(player)
        for h, j in enumerate(index.tolist()):
          if first[j] < 0:
            first[j] = h
      self._computed[key] = first
    return first

  def parent_links(self, player: int) -> tuple[list[int], list[int]]:
    """For each of `player`'s infostates, the parent public state's
    infostate of `player` that its first history comes from, and the action
    that led from there (perfect recall: the same for all its histories)."""
    key = ("parent_links", player)
    links = self._computed.get(key)
    if links is None:
      first = self.first_histories(player)
      links = (self.parent.history_infostate[player][
                   self.parent_history[first]].tolist(),
               self.parent_action[first].tolist())
      self._computed[key] = links
    return links

  def returns0(self) -> np.ndarray:
    """[H] player 0's return at each history (a terminal public state's)."""
    u0 = self._computed.get("returns0")
    if u0 is None:
      u0 = np.asarray([h.returns()[0] for h in self.histories])
      u0.flags.writeable = False
      self._computed["returns0"] = u0
    return u0

  @property
  def content_key(self) -> tuple | None:
    """What identifies this public state's content across observers: the
    game, the observer's public-state and infostate sources and the labels
    on the path from the root; None where the histories are a sample (only
    exact public states are determined by their path; and in perfect-
    information games)."""
    if self._content_key is None and self.exact:
      if self.parent is None:
        self._content_key = self.observer.content_namespace
      else:
        above = self.parent.content_key
        if above is not None:
          self._content_key = above + (self.key,)
    return self._content_key

  # --- OpenSpiel-style accessors -------------------------------------------

  def current_player(self) -> int:
    """A player id, or pyspiel.PlayerId.CHANCE / TERMINAL (as an int)."""
    return self._current_player

  def is_terminal(self) -> bool:
    return self._current_player == TERMINAL

  def is_chance_node(self) -> bool:
    return self._current_player == CHANCE

  def is_player_node(self) -> bool:
    return self._current_player >= 0

  def after_a_decision(self) -> bool:
    """Whether a player acts here or at an ancestor: the public states a
    search can hold (no search has the deal before the first decision in
    its tree), where values are queried and slots are defined."""
    node = self
    while node is not None:
      if node.is_player_node():
        return True
      node = node.parent
    return False

  @property
  def _infostates(self) -> list[list[str]]:
    """Each player's infostate strings, in index order (made on first read
    where the constructor left them to be: one history)."""
    keys = self._keys
    if keys is None:
      first = self.histories[0]
      keys = self._keys = [[self.observer.infostate_string(first, p)]
                           for p in range(2)]
    return keys

  @_infostates.setter
  def _infostates(self, value: list[list[str]]) -> None:
    self._keys = value

  def infostates(self, player: int) -> list[str]:
    """The information_state_string of each of `player`'s infostates here."""
    return self._infostates[player]

  def num_infostates(self, player: int) -> int:
    keys = self._keys
    return 1 if keys is None else len(keys[player])

  def legal_actions(self, infostate: int) -> list[int]:
    """Legal actions of the acting player's `infostate` (an index)."""
    if self._legal_actions is None:
      raise ValueError(f"public state {self.describe()} is not a decision node")
    return self._legal_actions[infostate]

  def describe(self) -> str:
    return f"#{self.id} (depth {self.depth}, key {self.key!r})"

  def __repr__(self) -> str:
    return (f"PublicState({self.describe()}, player={self._current_player}, "
            f"histories={len(self.histories)}, "
            f"infostates={[len(x) for x in self._infostates]})")

  # --- Tree ----------------------------------------------------------------

  @property
  def children_expanded(self) -> bool:
    return self._children is not None

  def children(self) -> list[PublicState]:
    """Child public states (expanded on first call; one action may lead to
    several children, e.g. a chance outcome seen differently)."""
    if self._children is None:
      if self._lazy_children is not None:
        self._children = list(self._lazy_children)
      else:
        self._children = self.observer._expand(self)  # pylint: disable=protected-access
    return self._children

  def child_sequence(self) -> Sequence[PublicState]:
    """The same children as `children()`, in its order; in a perfect-
    information game, before `children()` is called, a LazyChildren that
    builds each child on first access."""
    if (self._children is None and not self.is_terminal() and
        self.observer.source == "perfect_information"):
      if self._lazy_children is None:
        self._lazy_children = LazyChildren(self.observer, self)
      return self._lazy_children
    return self.children()

  def child_of(self, history_index: int, action: int) -> tuple[PublicState, int]:
    """The child public state and history index reached by `action`."""
    children = self.child_sequence()
    if isinstance(children, LazyChildren):
      i = children.position(history_index, action)
      if i is not None:
        return children[i], 0
    for child in children:
      k = _pair_index(child.parent_history, child.parent_action,
                      history_index, action)
      if k >= 0:
        return child, k
    raise ValueError(f"action {action} is not legal in history {history_index} "
                     f"of public state {self.describe()}")

  # --- Beliefs -------------------------------------------------------------

  def infostate_index(self, player: int, infostate: str) -> int:
    try:
      return self._infostates[player].index(infostate)
    except ValueError:
      raise ValueError(f"{infostate!r} is not an infostate of player {player} "
                       f"in public state {self.describe()}") from None


class PublicStateObserver:
  """Turns a two-player zero-sum OpenSpiel game into public states."""

  def __init__(self, game: pyspiel.Game | str,
               config: ObserverConfig | None = None):
    if isinstance(game, str):
      game = pyspiel.load_game(game)
    self.config = config or ObserverConfig()
    validate_game(game, self.config.common_payoff)
    self.game = game
    self.common_payoff = (game.get_type().utility ==
                          pyspiel.GameType.Utility.IDENTICAL)
    game_type = game.get_type()
    self._public_observation = None
    self.public_observation_has_recall = False
    source = self.config.source
    if source not in ("auto",) + SOURCES:
      raise ValueError(f"unknown public-state source {source!r}; supported: "
                       f"'auto', {', '.join(map(repr, SOURCES))}")
    perfect_information = (game_type.information ==
                           pyspiel.GameType.Information.PERFECT_INFORMATION)
    if source == "native" or (source == "auto" and not perfect_information):
      for recall in (True, False):
        obs = make_public_observation(game, recall)
        if obs is not None:
          self._public_observation = obs
          self.public_observation_has_recall = recall
          break
      if source == "native" and self._public_observation is None:
        raise ValueError(f"{game}: the game has no public observer; use "
                         "source='derived'")
    if source == "auto":
      if perfect_information:
        source = "perfect_information"
      elif self._public_observation is not None:
        source = "native"
      else:
        source = "derived"
    if source == "perfect_information" and not perfect_information:
      raise ValueError(f"{game} is not a perfect-information game")
    self.source = source
    self.infostate_source = self._infostate_source(self.config.infostates)
    self._aoh_observation = aoh_observation(game)
    budget = self.config.max_memory_bytes
    if not budget:
      physical = physical_memory()
      budget = physical // 2 if physical else 0
    self._memory_budget = budget or None
    self._unchecked_children = 0  # built since memory was last read
    self._public_states: list[PublicState] = []
    self._next_id = 0
    self._floor: PublicState | None = None  # see prune
    self._pruned: set[int] = set()  # ids whose children are the path's
    # Replaced samples (see _resample_child), reported by the next prune.
    self._dropped_since_prune: list[int] = []
    self._root: PublicState | None = None
    # OpenSpiel's EFG games describe only the acting player's infoset; a
    # waiting player's string does not encode its own past moves.
    self._recall_keys = game_type.short_name == "efg_game"
    # What, besides the path, decides an exact public state's content
    # (PublicState.content_key, ExpansionCache); None in perfect-information
    # games, whose children are built one by one (LazyChildren) and whose
    # states can be large (chess, go): nothing is shared there.
    self.content_namespace = (
        None if (self.source == "perfect_information" or
                 not self.config.share_expansions) else
        (type(self), str(game), self.source, self.infostate_source))
    if self.config.max_histories < 0:
      raise ValueError("max_histories must be >= 0 (0: exact public states), "
                       f"got {self.config.max_histories}")
    self._rng = np.random.default_rng(self.config.sample_seed)
    self._replaced: list[PublicState] = []
    # Dropped public states whose histories are still held (release_dropped).
    self._unreleased: list[PublicState] = []
    self._replaced_ids: list[int] = []  # theirs and their descendants'
    # (player, decision infostate key) -> (public state id, depth).
    self._decision_home: dict[tuple[int, str], tuple[int, int]] = {}
    # A `time.monotonic()` time a time-limited bot sets while it locates and
    # searches: sampled expansions then build fewer children (see
    # `_affordable_bound`), timed by a running mean of seconds per child.
    self.deadline: float | None = None
    self.seconds_per_child: float | None = None
    self._timed = [0.0, 0]  # seconds, children
    self._expand_budget = (EXPAND_SHARE, 1)  # (share of time left, steps)
    # The searcher: sampled public states that `public_state_of` builds on
    # the way to a state keep FAVOURED_SHARE of their draws for the
    # histories in this player's infostate (see `_sample_favouring`).
    self.favoured_player: int | None = None
    # Whether, under `deadline`, public states within max_histories may be
    # sampled too (shrunk to fit the time): a bot whose value function needs
    # exact public states (a network's slots) sets False, and then only
    # public states past max_histories shrink.
    self.shrink_within_bound = True

  def _infostate_source(self, requested: str) -> str:
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

  def infostate_string(self, state: pyspiel.State, player: int) -> str:
    """`player`'s information state at `state`.

    OpenSpiel's information_state_string, except in EFG games, where it only
    identifies the acting player's infoset: there a waiting player's
    infostate is its own perfect-recall sequence of (infoset, action) pairs,
    and the acting player's is the game's own string (so OpenSpiel's
    TabularPolicy finds it). In games without the string (`infostate_source`):
    the history in perfect-information games, and otherwise the player's
    action-observation history.
    """
    if self.infostate_source == "history":
      return _history_key(state)
    if self.infostate_source == "aoh":
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


  # --- Construction --------------------------------------------------------

  @property
  def public_states(self) -> list[PublicState]:
    """Every public state built so far and not dropped by `prune` or
    `restart`, in creation order (ids)."""
    return self._public_states

  @staticmethod
  def _built_children(ps: PublicState) -> list[PublicState]:
    if ps._children is not None:  # pylint: disable=protected-access
      return ps._children  # pylint: disable=protected-access
    if ps._lazy_children is not None:  # pylint: disable=protected-access
      return ps._lazy_children.built()  # pylint: disable=protected-access
    return []

  def _drop_below(self, ps: PublicState, dropped: list[int]) -> None:
    """Forgets the built descendants of `ps` (appending their ids to
    `dropped`); its children are built again, with new ids, if asked for."""
    for child in self._built_children(ps):
      dropped.extend(self._forget(child))
    ps._children = None  # pylint: disable=protected-access
    ps._lazy_children = None  # pylint: disable=protected-access

  def _discard(self, ids: list[int]) -> None:
    """Removes the public states `ids` from `public_states`."""
    if ids:
      gone = set(ids)
      self._public_states = [ps for ps in self._public_states
                             if ps.id not in gone]

  def _remove(self, dropped: list[int]) -> list[int]:
    """Discards the public states `dropped`; returns their ids with those
    of the samples replaced since the last call."""
    self._discard(dropped)
    dropped = dropped + self._dropped_since_prune
    self._dropped_since_prune = []
    return dropped

  def prune(self, keep: PublicState) -> list[int]:
    """Drops what play can no longer reach once it has reached `keep`: every
    child of keep's ancestors that is off the path to `keep`, with its
    descendants. The ancestors then list only their child on the path
    (navigation along the path still works; they can no longer be searched
    from: `search_floor()` is `keep`). Kept: the path from the root and
    everything under `keep`; so a bot that prunes at each search root keeps
    its memory bounded by the path and its latest search tree over a whole
    game. Returns the ids whose caches can go: the dropped ones, with those
    of samples replaced since the last call (`public_state_of`), and the
    ancestors of `keep` that this call made unsearchable (kept for
    navigation, never searched or valued again: a growth root's prior in
    kriegspiel is [infostates, 4,672], megabytes, one per search)."""
    if keep.observer is not self:
      raise ValueError("prune: the public state belongs to another observer")
    dropped: list[int] = []
    above: list[int] = []
    node = keep
    while node.parent is not None:
      parent = node.parent
      if parent.id in self._pruned:
        break  # pruned by an earlier call, and so is everything above
      for sibling in self._built_children(parent):
        if sibling is not node:
          dropped.extend(self._forget(sibling))
      parent._children = [node]  # pylint: disable=protected-access
      parent._lazy_children = None  # pylint: disable=protected-access
      if not isinstance(parent.histories, _ReplayedHistories):
        parent.histories = _ReplayedHistories(parent)
      self._pruned.add(parent.id)
      above.append(parent.id)
      node = parent
    self._floor = keep
    return self._remove(dropped) + above

  def searchable(self, ps: PublicState) -> bool:
    """Whether `ps`'s subtree is whole (`ps` is `search_floor()` or below
    it), so that a search may start at `ps` or under it."""
    node = ps
    while node is not None:
      if node is self._floor:
        return True
      if node.id in self._pruned:
        return False
      node = node.parent
    return self._floor is None

  def search_floor(self) -> PublicState:
    """The shallowest public state whose subtree is whole: the root, or
    the `keep` of the latest `prune`."""
    return self._floor if self._floor is not None else self.root()

  def restart(self) -> list[int]:
    """Drops every public state but the root (a new game: nothing built
    for the previous one is reachable by reference any more, ids are not
    reused). Returns the dropped ids."""
    dropped: list[int] = []
    if self._root is not None:
      self._drop_below(self._root, dropped)
    self._replaced = []
    self._replaced_ids = []
    self._floor = None
    self._pruned.clear()
    self.release_dropped()
    return self._remove(dropped)

  def root(self) -> PublicState:
    """The public state of the game's initial state."""
    if self._root is None:
      self._root = self._new_public_state(
          None, "", [self.game.new_initial_state()], np.ones(1),
          np.full(1, -1), np.full(1, -1))
    return self._root

  def _new_public_state(self, parent, key, histories, chance_reach,
                        parent_history, parent_action,
                        infostate_keys=None, derived=None) -> PublicState:
    bound = self.config.max_histories_per_public_state
    if len(histories) > bound:
      raise ValueError(
          f"{self.game}: a public state at depth "
          f"{0 if parent is None else parent.depth + 1} has {len(histories)} "
          f"histories, more than max_histories_per_public_state={bound}; the "
          "game is too large for exact public states (raise the bound via "
          "ObserverConfig if you have the memory)")
    ps = PublicState(self, self._next_id, parent, key, histories,
                     chance_reach, parent_history, parent_action,
                     infostate_keys, derived)
    self._check_decisions_home(ps)
    self._public_states.append(ps)
    self._next_id += 1
    return ps

  def _check_decisions_home(self, ps: PublicState) -> None:
    """Raises ValueError when a decision infostate of `ps` was already seen
    in another public state.

    A player's decision infostate must lie in one public state. In a game
    with perfect recall where it does not, the player cannot tell how many
    moves were made (the game is not timeable: phantom_ttt_ir forgets how
    many times the opponent tried an illegal move), and no public tree
    exists; searching one anyway would let the player see what it cannot.
    """
    if self.source == "perfect_information" or not ps.is_player_node():
      return
    p = ps.current_player()
    home = self._decision_home
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

  def _expand(self, ps: PublicState, force: tuple[int, int] | None = None,
              only_forced: bool = False) -> list[PublicState]:
    """The children of `ps`. With sampling on, a group larger than
    max_histories is sampled, always keeping the child reached by
    `force` = (history index, action); `only_forced` builds just the group
    holding that child."""
    if ps.is_terminal():
      return []
    start = time.perf_counter()
    bound = self._affordable_bound(ps)
    # Groups past `limit` are sampled down to `bound` (max_histories, or
    # fewer under a deadline); see `shrink_within_bound`.
    limit = bound if self.shrink_within_bound else self.config.max_histories
    favour = self.favoured_player if force is not None else None
    # Below the true path, the children of histories the favoured player's
    # infostate holds or leads to are favoured as well.
    line = ps.favoured_histories
    content = ps.content_key
    cached = EXPANSIONS.get(content)
    if cached is not None and len(cached.children) > (
        _PRESAMPLE * limit if bound else self.config.max_children):
      cached = None  # built again: presampled or refused, as it would be
    presampled = False
    if cached is None:
      (children, reach_arr, ph, pa, keys, groups, forced,
       presampled) = self._build_children(ps, bound, limit, force, favour,
                                          line)
      if content is not None and not presampled:
        ph.flags.writeable = pa.flags.writeable = False
        reach_arr.flags.writeable = False
        cached = _Expansion(tuple(children), reach_arr, ph, pa, keys, groups,
                            {}, {})
        EXPANSIONS.put(content, cached)
      timed = len(children)
    else:
      timed = 0  # (a reused expansion says nothing of what building costs)
      children, reach_arr, ph, pa, keys, groups = cached[:6]
      forced = -1  # the child `force` names
      if force is not None:
        forced = _pair_index(ph, pa, *force)
        if forced < 0:
          raise ValueError(f"action {force[1]} is not legal in history "
                           f"{force[0]} of public state {ps.describe()}")
    result = []
    for label, members in groups:  # the order built: deterministic
      if only_forced and forced not in members:
        continue
      sampled = bool(bound) and len(members) > limit
      whole = cached is not None and not sampled
      # A group built whole from a cached expansion is the same for every
      # observer: its arrays are kept with the expansion (read-only).
      part = cached.parts.get(label) if whole else None
      if part is None:
        idx = np.asarray(members)
        weights = reach_arr[idx]
        if not sampled:
          part = (idx, weights, ph[idx], pa[idx],
                  [children[k] for k in idx.tolist()])
          if whole:
            for a in part[:4]:
              a.flags.writeable = False
            cached.parts[label] = part
      if part is not None:
        idx, weights, group_ph, group_pa, histories = part
      favoured = None if line is None else line[ph[idx]]
      if favour is not None and forced in members:
        mine = keys[favour]
        favoured = np.asarray([mine[k] == mine[forced] for k in members])
      if sampled:
        kept, weights = self._sample_favouring(
            idx, weights, self._strata(ps, ph[idx], pa[idx]), forced, bound,
            favoured)
        if favoured is not None:
          favoured = favoured[np.searchsorted(idx, kept)]
        idx = kept
      if only_forced:
        # The sibling this group replaces: the one with its label, or (labels
        # of derived groups depend on which children were drawn) one that
        # shares an infostate with it.
        group_keys = [{keys[p][k] for k in idx.tolist()} for p in range(2)]
        self._replaced = [
            old for old in ps._children or ()  # pylint: disable=protected-access
            if old.key == label or any(
                group_keys[p].intersection(old.infostates(p))
                for p in range(2))]
        self._replaced_ids = [i for old in self._replaced
                              for i in self._forget(old)]
      derived = cached.derived.get(label) if whole else None
      if sampled:
        kept_list = idx.tolist()
        histories = [children[k] for k in kept_list]
        group_ph, group_pa = ph[idx], pa[idx]
      child = self._new_public_state(
          ps, label, histories, weights, group_ph, group_pa,
          None if derived is not None else
          [[player_keys[k] for k in idx.tolist()] for player_keys in keys],
          derived)
      if whole and derived is None:
        child.history_infostate.flags.writeable = False
        cached.derived[label] = child.derived
      # A presampled group is a sample even where it fits the bound.
      child.sampled = child.sampled or sampled or presampled
      child.exact = child.exact and not (sampled or presampled)
      if favoured is not None and favoured.any():
        child.favoured_histories = favoured
      if favour is not None and forced in members:
        child.favoured = favour
      result.append(child)
    if timed:
      self._record_time(time.perf_counter() - start, timed)
    return result

  def _build_children(self, ps: PublicState, bound: int, limit: int,
                      force: tuple[int, int] | None, favour: int | None,
                      line: np.ndarray | None):
    """Builds the child histories of `ps` (drawing them first when there
    are more than _PRESAMPLE * `limit`), keys and groups them. Returns
    (children, chance reach, parent history, parent action, [2][C] keys,
    [(label, members)], the child `force` names or -1, whether drawn)."""
    # (history, action, chance reach) of every child, before building any.
    pairs_h: list[int] = []
    pairs_a: list[int] = []
    pairs_r: list[float] = []
    for i, h in enumerate(ps.histories):
      if h.is_chance_node():
        outcomes = h.chance_outcomes()
      else:
        outcomes = [(a, 1.0) for a in h.legal_actions()]
      c = ps.chance_reach[i]
      if not bound and len(pairs_h) + len(outcomes) > self.config.max_children:
        raise ValueError(
            f"{self.game}: the public state at depth {ps.depth} has more "
            f"than max_children={self.config.max_children} child histories "
            f"(its {len(ps.histories)} histories times their actions); the "
            "game is too large for exact public states (raise the bound via "
            "ObserverConfig if you have the memory, or sample it with "
            "max_histories)")
      for a, p in outcomes:
        if p > 0.0:
          pairs_h.append(i)
          pairs_a.append(a)
          pairs_r.append(c * p)
    ph_all = np.asarray(pairs_h, dtype=np.int64)
    pa_all = np.asarray(pairs_a, dtype=np.int64)
    forced = -1  # the pair `force` names, then its child
    if force is not None:
      forced = _pair_index(ph_all, pa_all, *force)
      if forced < 0:
        raise ValueError(f"action {force[1]} is not legal in history "
                         f"{force[0]} of public state {ps.describe()}")
    chosen = np.arange(len(pairs_h))
    chosen_r = np.asarray(pairs_r)
    presampled = bool(bound) and len(pairs_h) > _PRESAMPLE * limit
    if presampled:
      # Too many children to build: draw them before building (each child
      # group is sampled again below if it is still too large).
      favoured = None if line is None else line[ph_all]
      if favour is not None:
        mine = ps.history_infostate[favour]
        favoured = mine[ph_all] == mine[force[0]]
      chosen, chosen_r = self._sample_favouring(
          chosen, chosen_r, self._strata(ps, ph_all, pa_all), forced,
          _PRESAMPLE * bound, favoured)
    children: list[pyspiel.State] = []
    parent_history: list[int] = []
    parent_action: list[int] = []
    for n, j in enumerate(chosen.tolist()):
      if n % _MEMORY_CHECK_EVERY == _MEMORY_CHECK_EVERY - 1:
        self._check_memory(ps, len(children))
      children.append(ps.histories[pairs_h[j]].child(pairs_a[j]))
      parent_history.append(pairs_h[j])
      parent_action.append(pairs_a[j])
    # Memory is read every _MEMORY_CHECK_EVERY children built, over all
    # expansions (reading it takes longer than a small expansion).
    self._unchecked_children += len(children)
    if self._unchecked_children >= _MEMORY_CHECK_EVERY:
      self._check_memory(ps, len(children))
    actors = _actors(children)
    keys = self._child_infostate_keys(ps, children, parent_history,
                                      parent_action, actors)
    labels = self._partition(children, parent_action, keys, actors)
    groups: dict[str, list[int]] = {}
    for k, label in enumerate(labels):
      groups.setdefault(label, []).append(k)
    if force is not None:
      forced = int(np.searchsorted(chosen, forced))  # chosen is sorted
    return (children, np.asarray(chosen_r, dtype=np.float64),
            np.asarray(parent_history), np.asarray(parent_action), keys,
            list(groups.items()), forced, presampled)

  def _affordable_bound(self, ps: PublicState) -> int:
    """max_histories, or, under `deadline` with sampling on, fewer (at
    least 1, the searcher's own history still kept) so that the children
    an expansion builds (at most _PRESAMPLE times the bound, each a pyspiel
    child and its strings) take at most the expansion's share of the time
    left: python_liars_poker's observer takes 2 ms a string and deals 20
    chance nodes before the first decision. The first expansion under a
    deadline times one child first."""
    bound = self.config.max_histories
    if (not bound or self.deadline is None or ps.is_terminal() or
        self.source == "perfect_information"):  # one history a state
      return bound
    if self.seconds_per_child is None:
      self._time_one_child(ps)
    share, steps = self._expand_budget
    left = max(self.deadline - time.monotonic(), 0.0)
    afford = int(share * left /
                 (steps * _PRESAMPLE * max(self.seconds_per_child, 1e-9)))
    return max(1, min(bound, afford))

  def _time_one_child(self, ps: PublicState) -> None:
    """Builds one child of `ps` as `_expand` would (state, infostate keys,
    label) and records its time."""
    h = ps.histories[0]
    a = (h.chance_outcomes()[0][0] if h.is_chance_node()
         else h.legal_actions()[0])
    start = time.perf_counter()
    child = h.child(a)
    actors = _actors([child])
    keys = self._child_infostate_keys(ps, [child], [0], [a], actors)
    self._partition([child], [a], keys, actors)
    self._record_time(time.perf_counter() - start, 1)

  def _record_time(self, seconds: float, children: int) -> None:
    if self.deadline is None or not children:
      return
    self._timed[0] += seconds
    self._timed[1] += children
    self.seconds_per_child = self._timed[0] / self._timed[1]

  def _perfect_information_child(self, ps: PublicState, action: int,
                                 prob: float) -> PublicState:
    """The child of perfect-information `ps` reached by `action` (chance:
    an outcome of probability `prob`), as `_expand` would group it."""
    child = ps.histories[0].child(action)
    # (No infostate keys: a one-history public state makes them when read.)
    return self._new_public_state(
        ps, str(action), [child], np.asarray([ps.chance_reach[0] * prob]),
        np.zeros(1, dtype=np.int64), np.asarray([action], dtype=np.int64))

  @staticmethod
  def _strata(ps: PublicState, parent_history: np.ndarray,
              parent_action: np.ndarray) -> np.ndarray:
    """The stratum of each child of `ps` for sampling: the acting player's
    infostate and the action (chance nodes: the outcome)."""
    if not ps.is_player_node():
      return np.zeros(len(parent_history), dtype=np.int64)
    acting = ps.history_infostate[ps.current_player()][parent_history]
    return acting * (int(parent_action.max(initial=0)) + 1) + parent_action

  def _sample(self, idx: np.ndarray, weights: np.ndarray,
              strata: np.ndarray, forced: int, n: int
              ) -> tuple[np.ndarray, np.ndarray]:
    """About `n` draws from the children `idx` in proportion to
    their chance reach `weights` (with replacement; repeats merge), keeping
    child `forced` when it is among them.

    The draws are stratified by `strata` (the acting player's infostate and
    action that led to each child) so that every action of every infostate
    keeps a child, when there are no more strata than draws. Returns the kept
    children (in their original order) and their weights: each draw in a
    stratum carries the stratum's total reach / its draws."""
    labels, inverse = np.unique(strata, return_inverse=True)
    inverse = inverse.reshape(-1)
    totals = np.bincount(inverse, weights=weights, minlength=len(labels))
    if len(labels) > n:
      labels, inverse = labels[:1], np.zeros_like(inverse)
      totals = np.asarray([weights.sum()])
    quota = np.maximum(1, np.round(n * totals / totals.sum())).astype(int)
    counts = np.zeros(len(idx))
    scale = np.zeros(len(idx))
    # Each stratum's members in order (a stable sort by stratum, not a pass
    # over all children per stratum), and its draws as Generator.choice
    # makes them (utils.draws), all strata's uniforms from one random()
    # call, which the stream gives in the same order: the same draws.
    order = np.argsort(inverse, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(
        inverse, minlength=len(labels)))]).tolist()
    uniforms = self._rng.random(int(quota.sum()))
    used = 0
    for s in range(len(labels)):
      members = order[bounds[s]:bounds[s + 1]]
      w = weights[members]
      drawn = draws.search(draws.cumulative(w / w.sum()),
                           uniforms[used:used + quota[s]])
      used += quota[s]
      counts[members] = np.bincount(drawn, minlength=len(members))
      forced_here = np.nonzero(idx[members] == forced)[0]
      if forced_here.size and counts[members[forced_here[0]]] == 0:
        # The searcher's own history is always kept.
        counts[members[forced_here[0]]] = 1.0
      scale[members] = totals[s] / counts[members].sum()
    keep = np.nonzero(counts)[0]
    return idx[keep], counts[keep] * scale[keep]

  def _sample_favouring(self, idx: np.ndarray, weights: np.ndarray,
                        strata: np.ndarray, forced: int, n: int,
                        favoured: np.ndarray | None
                        ) -> tuple[np.ndarray, np.ndarray]:
    """`_sample`, with FAVOURED_SHARE of the `n` draws kept for the
    children `favoured` marks (those in the searcher's infostate on the true
    path; all of them where they are fewer) and the rest for the others,
    each part weighted to its own chance reach. A sample of the public state
    in proportion to chance reach would hold few of the searcher's own
    histories (4 of 300, median, in phantom_ttt), the true one among them:
    the search would see little of what the searcher cannot tell apart, and
    much of the truth. Neither part depends on what the searcher does not
    know."""
    if favoured is None or favoured.all() or not favoured.any():
      return self._sample(idx, weights, strata, forced, n)
    mine = np.nonzero(favoured)[0]
    rest = np.nonzero(~favoured)[0]
    quota = max(1, int(FAVOURED_SHARE * n))
    if len(mine) <= quota:
      kept, kept_w = idx[mine], weights[mine]
    else:
      kept, kept_w = self._sample(idx[mine], weights[mine], strata[mine],
                                  forced, quota)
    others, others_w = self._sample(idx[rest], weights[rest], strata[rest],
                                    -1, max(1, n - len(kept)))
    both = np.concatenate([kept, others])
    order = np.argsort(both, kind="stable")
    return both[order], np.concatenate([kept_w, others_w])[order]

  def _check_memory(self, ps: PublicState, built: int) -> None:
    """Raises ValueError when the process holds more memory than allowed."""
    self._unchecked_children = 0
    if self._memory_budget is None:
      return
    rss = resident_memory()
    if rss is not None and rss > self._memory_budget:
      raise ValueError(
          f"{self.game}: expanding the public state at depth {ps.depth} "
          f"({len(ps.histories)} histories; {built} children built) took "
          f"this process past {self._memory_budget / 2**30:.1f} GiB of "
          "memory; the game is too large for exact public states (raise "
          "ObserverConfig.max_memory_bytes if you have the memory)")

  def _child_infostate_keys(self, ps: PublicState,
                            children: list[pyspiel.State],
                            parent_history: list[int],
                            parent_action: list[int],
                            actors: list[int]) -> list[list[str]]:
    """[2][children] each child history's infostate key per player; an
    action-observation history extends its parent's by one step. Keys are
    then told apart by the player's role (`_separate_roles`; `actors`: who
    acts at each child)."""
    if self.infostate_source != "aoh":
      keys = [[self.infostate_string(h, p) for h in children]
              for p in range(2)]
    else:
      keys = [[], []]
      parent_actors = _actors(ps.histories)
      observe = self._aoh_observation
      for p in range(2):
        parent_keys = [_without_role(k) for k in ps.infostates(p)]
        parent_index = ps.history_infostate[p].tolist()
        keys[p] = [
            _aoh_extend(parent_keys[parent_index[k]],
                        a if parent_actors[k] == p else None, observe(h, p))
            for h, k, a in zip(children, parent_history, parent_action)]
    if self.source != "perfect_information":
      _separate_roles(actors, keys)
    return keys

  def _partition(self, children: list[pyspiel.State], actions: list[int],
                 keys: list[list[str]], actors: list[int]) -> list[str]:
    """A label per child history; equal labels share a public state."""
    if self.source == "perfect_information":
      return [str(a) for a in actions]
    if self.source == "native":
      obs = self._public_observation
      labels = [obs.string_from(h, 0) for h in children]
      acting: dict[str, int] = {}
      if all(acting.setdefault(label, actor) == actor
             for label, actor in zip(labels, actors)):
        return labels
      # The game's public observation does not say who acts (kriegspiel):
      # split each group into its common-knowledge components.
      components = common_knowledge_components(keys)
      return [f"{label} #{c}" for label, c in zip(labels, components)]
    # Derived: common-knowledge components.
    labels = common_knowledge_components(keys)
    return [str(label) for label in labels]

  # --- Navigation ----------------------------------------------------------

  def public_state_of(self, state: pyspiel.State) -> tuple[PublicState, int]:
    """The public state holding `state` and the index of its history there.

    With sampling on (`ObserverConfig.max_histories`), a sampled public
    state on the way that lacks `state`'s history is replaced among its
    parent's children by a new sample that holds it (a new id; its old
    subtree is dropped)."""
    self.release_dropped()
    ps, index = self.root(), 0
    history = state.history()
    try:
      for step, a in enumerate(history):
        # Under a deadline, the expansions still to come on the way share
        # WALK_SHARE of the time left.
        self._expand_budget = (WALK_SHARE, len(history) - step)
        if (not ps.children_expanded and self.config.max_histories and
            self.source != "perfect_information" and not ps.is_terminal()):
          # Sampled on the way: keep this history's child from the start
          # (instead of sampling without it, then resampling).
          ps._children = self._expand(ps, force=(index, a))  # pylint: disable=protected-access
        try:
          child, child_index = ps.child_of(index, a)
        except ValueError:
          if not self.config.max_histories:
            raise
          child, child_index = self._resample_child(ps, index, a)
        if (self.favoured_player is not None and child.sampled and
            child.favoured != self.favoured_player):
          # Built without favouring the searcher (by a search): rebuilt.
          child, child_index = self._resample_child(ps, index, a)
        ps, index = child, child_index
    finally:
      self._expand_budget = (EXPAND_SHARE, 1)
    return ps, index

  def _resample_child(self, ps: PublicState, index: int, action: int
                      ) -> tuple[PublicState, int]:
    """Rebuilds the child of `ps` reached by (`index`, `action`) with that
    history kept, in place of the sampled child that lacked it."""
    children = ps.children()
    (child,) = self._expand(ps, force=(index, action), only_forced=True)
    replaced = {old.id for old in self._replaced}
    # (Kept no longer: the replaced samples hold what was built under
    # them, which would stay alive until the next resample.)
    self._replaced = []
    positions = [i for i, old in enumerate(children) if old.id in replaced]
    if positions:  # in place of the first one it replaces
      children[positions[0]] = child
      for i in reversed(positions[1:]):
        del children[i]
    else:
      children.append(child)
    # The replaced samples and what was built under them (forgotten by
    # `_expand`) are unreachable: removed now, their ids reported by the
    # next prune or restart.
    self._discard(self._replaced_ids)
    self._dropped_since_prune.extend(self._replaced_ids)
    return child, _pair_index(child.parent_history, child.parent_action,
                              index, action)

  def _forget(self, ps: PublicState) -> list[int]:
    """Drops the decision infostates of `ps` and its built descendants from
    the one-public-state-per-infostate check (`ps` is being replaced or
    dropped); returns their ids."""
    ids = []
    stack = [ps]
    home = self._decision_home
    while stack:
      node = stack.pop()
      ids.append(node.id)
      # (A public state whose infostate strings were never made was never
      # checked in: perfect-information games' never are, and making the
      # strings of the 10,000 public states a late yacht search dropped
      # took 0.3 s, after the search's deadline.)
      if home and node._keys is not None and node.is_player_node():  # pylint: disable=protected-access
        p = node.current_player()
        for key in node.infostates(p):
          if home.get((p, key), (None,))[0] == node.id:
            del home[(p, key)]
      stack.extend(self._built_children(node))
      self._unreleased.append(node)
    return ids

  def release_dropped(self) -> None:
    """Releases the histories of the public states dropped since the last
    call (see `_DroppedHistories`). Deferred to the next `public_state_of`
    (or `restart`), the first step of the next search, so that the time
    freeing them takes (a tenth of a second for a gigabyte of states) falls
    inside that search's time, not after a search past its deadline."""
    for node in self._unreleased:
      node.histories = _DroppedHistories(node)
      node._children = node._lazy_children = None  # pylint: disable=protected-access
    self._unreleased = []

  def walk(self, root: PublicState | None = None) -> Iterator[PublicState]:
    """Public states under `root` (default: the game's root), breadth first,
    expanding as it goes; raises PublicTreeTooLarge (a ValueError) past
    max_public_states."""
    queue = [root or self.root()]
    count = 0
    bound = self.config.max_public_states
    while queue:
      nxt = []
      for ps in queue:
        count += 1
        if count > bound:
          raise PublicTreeTooLarge(
              f"{self.game} has more than max_public_states={bound} public "
              "states; it is too large to enumerate (raise the bound via "
              "ObserverConfig, or search it instead of enumerating it)")
        yield ps
        nxt.extend(ps.children())
      queue = nxt

  def full_tree(self) -> "PublicTree":
    """The whole public tree of the game (bounded by max_public_states)."""
    from open_spiel_sog.public_state.tree import PublicTree  # pylint: disable=g-import-not-at-top
    return PublicTree.from_subtree(self.root())
