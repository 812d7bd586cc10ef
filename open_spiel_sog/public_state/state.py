"""A public state and its children (DESIGN.md section 3).

`PublicState` holds the histories that share the public observations since
the root, their infostates and the public tree's links; `LazyChildren` builds
a perfect-information public state's children one at a time. Public states
are built by their observer (`observer.PublicStateObserver`), which this
module does not import: what a public state asks of it is `Builder`.
The observer's `prune` and `release_dropped` replace the histories of the
public states they keep for navigation or drop (`_ReplayedHistories`,
`_DroppedHistories`).
"""

from __future__ import annotations

import collections.abc
from typing import Protocol, Sequence

import numpy as np
import pyspiel

CHANCE = int(pyspiel.PlayerId.CHANCE)
TERMINAL = int(pyspiel.PlayerId.TERMINAL)


class Builder(Protocol):
  """What a public state and its LazyChildren ask of the observer that
  built them: a `PublicStateObserver`, which imports this module (a public
  state's `observer` is that observer, for its users to call as well)."""
  game: pyspiel.Game
  source: str
  infostate_source: str
  content_namespace: tuple | None

  def infostate_string(self, state: pyspiel.State, player: int) -> str:
    ...

  def _expand(self, ps: PublicState) -> list[PublicState]:
    ...

  def _perfect_information_child(self, ps: PublicState, action: int,
                                 prob: float) -> PublicState:
    ...


def pair_index(parent_history: np.ndarray, parent_action: np.ndarray,
               history: int, action: int) -> int:
  """The index of the child reached by `action` from `history`, or -1."""
  hits = np.nonzero((parent_history == history) &
                    (parent_action == action))[0]
  return int(hits[0]) if hits.size else -1


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

  def __init__(self, observer: Builder, parent: PublicState):
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

  def __init__(self, observer: Builder, id_: int,
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
      k = pair_index(child.parent_history, child.parent_action,
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

  # --- Dropped by the observer ---------------------------------------------

  def replay_histories(self) -> None:
    """Holds the histories no more, rebuilding them if read (the pruned path
    above the search floor; see `_ReplayedHistories`)."""
    if not isinstance(self.histories, _ReplayedHistories):
      self.histories = _ReplayedHistories(self)

  def release(self) -> None:
    """Releases the histories and children of a public state its observer
    has dropped (see `_DroppedHistories`)."""
    self.histories = _DroppedHistories(self)
    self._children = self._lazy_children = None
