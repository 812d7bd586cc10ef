"""Feature tensors and stable slots of public states (DESIGN.md section 3).

Features: the public observer tensor (with perfect recall when the game offers
it); for perfect-information games without a public observer tensor, the
observation tensor; for derived games, an encoding of the public action
sequence: for each position in the history, the set of actions the public
state's histories take there (one-hot where the action is public, multi-hot
where it is hidden from someone, which still carries what is common knowledge
about it, e.g. who won a goofspiel round).

Slots: the network needs a fixed width per player, so every infostate gets a
slot, the index of its private part within the game. The private part of an
infostate is the tuple of actions that its owner observed and that are not
public: the positions on which all of the infostate's histories agree but the
public state's histories do not (Leduc and Kuhn: the private card; liar's dice:
the die; goofspiel: one's own bids). Slots are numbered by walking the whole
public tree breadth first and sorting the private parts that appear at each
depth, so a slot means the same thing in every public state and in every run
(Kuhn: slot = card, Leduc: slot = card, liar's dice: slot = die face).
Slots are defined where values are queried: on non-terminal public states at
or below the first decision (`PublicState.after_a_decision`; liar's dice 2x3:
the unordered pair of one's dice, see `_unordered_keys`), and at the root.
"""

from __future__ import annotations

import numpy as np
import pyspiel

from open_spiel_sog.public_state.observer import PublicStateObserver
from open_spiel_sog.public_state.partition import make_public_observation
from open_spiel_sog.public_state.state import PublicState

_NO_ACTION = -1


def action_matrix(sequences) -> np.ndarray:
  """[H, L] the action sequences `sequences`, padded with -1."""
  length = max((len(s) for s in sequences), default=0)
  out = np.full((len(sequences), length), _NO_ACTION, dtype=np.int64)
  for i, s in enumerate(sequences):
    out[i, :len(s)] = s
  return out


def _action_matrix(ps: PublicState) -> np.ndarray:
  """[H, L] the histories' action sequences, padded with -1."""
  return action_matrix([h.history() for h in ps.histories])


def public_action_mask(ps: PublicState) -> tuple[np.ndarray, np.ndarray]:
  """(actions [H, L], public [L] bool): positions all histories agree on."""
  actions = _action_matrix(ps)
  if actions.shape[0] == 0:
    return actions, np.zeros(0, dtype=bool)
  public = np.all(actions == actions[:1], axis=0)
  return actions, public


def private_keys(ps: PublicState, player: int,
                 mask: tuple[np.ndarray, np.ndarray] | None = None
                 ) -> list[tuple[int, ...]]:
  """The private part of each of `player`'s infostates in `ps`: the
  actions at the positions where the infostate's histories all agree and
  the public state's do not, as its first history took them. `mask`:
  `public_action_mask(ps)` where the caller has it."""
  n = ps.num_infostates(player)
  if len(ps.histories) == 1:
    return [()] * n
  actions, public = mask if mask is not None else public_action_mask(ps)
  infostate = ps.history_infostate[player]
  # Each infostate's histories in one run (in their order), then the
  # positions where the run's smallest and largest action agree.
  order = np.argsort(infostate, kind="stable")
  rows = actions[order]
  starts = np.searchsorted(infostate[order], np.arange(n))
  known = ((np.minimum.reduceat(rows, starts, axis=0) ==
            np.maximum.reduceat(rows, starts, axis=0)) & ~public)
  first = rows[starts]
  keys = [tuple(first[j, known[j]].tolist()) for j in range(n)]
  if len(set(keys)) < n:
    keys = _unordered_keys(rows, starts, public)
  return keys


def _unordered_keys(rows: np.ndarray, starts: np.ndarray,
                    public: np.ndarray) -> list[tuple[tuple[int, ...], ...]]:
  """Private parts where an infostate does not fix the order of what its
  owner saw (liar's dice with several dice: the infostate holds the sorted
  dice, so its histories deal them in every order): the set of the
  infostate's histories' actions at its owner's positions, as a sorted tuple
  of tuples (2x3 dice 1 and 2: ((0, 1), (1, 0))). Its owner's positions are
  the non-public ones whose set of actions is not the same in every
  infostate (the opponent's dice take every value in each of them). `rows`:
  the histories' actions grouped by infostate, each group from `starts`."""
  groups = np.split(rows, starts[1:])
  private = np.flatnonzero(~public)
  seen = [[frozenset(g[:, k].tolist()) for k in private] for g in groups]
  own = [k for i, k in enumerate(private)
         if any(s[i] != seen[0][i] for s in seen)]
  return [tuple(sorted(set(map(tuple, g[:, own].tolist())))) for g in groups]


class SlotTable:
  """Maps each player's private parts to stable slot indices."""

  def __init__(self, observer: PublicStateObserver):
    self.observer = observer
    per_depth: list[dict[int, set]] = [{}, {}]
    for ps in observer.walk():
      if ps.is_terminal() or not ps.after_a_decision():
        # Showdowns reveal more (values there come from payoffs); no search
        # holds the deal before the first decision.
        continue
      for p in range(2):
        per_depth[p].setdefault(ps.depth, set()).update(private_keys(ps, p))
    self._slots: list[dict[tuple[int, ...], int]] = [{}, {}]
    for p in range(2):
      table = self._slots[p]
      for depth in sorted(per_depth[p]):
        # Unordered parts (tuples of tuples) after ordered ones.
        for key in sorted(per_depth[p][depth],
                          key=lambda k: (bool(k) and isinstance(k[0], tuple),
                                         k)):
          table.setdefault(key, len(table))
    # The game's root is valued too (a first search starts there and its
    # values are training targets): before the deal it holds one infostate
    # per player, which shares slot 0, as no other public state holds it.
    root = observer.root()
    if not root.is_terminal():
      for p in range(2):
        for key in private_keys(root, p):
          self._slots[p].setdefault(key, 0)
    # Games whose private parts are single outcomes (a card, a die) get one
    # slot per outcome: the empty part before the deal needs no slot of its
    # own, because no public state holds both it and a dealt card.
    for p in range(2):
      keys = set(self._slots[p])
      singles = {k for k in keys if len(k) == 1}
      if keys - singles <= {()} and singles:
        self._slots[p] = {k: k[0] for k in singles}
        self._slots[p][()] = 0
    self._num_slots = [
        max(self._slots[p].values(), default=0) + 1 for p in range(2)
    ]

  def num_slots(self, player: int) -> int:
    return self._num_slots[player]

  def slots(self, ps: PublicState, player: int,
            mask: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """[n_p] the slot of each of `player`'s infostates in `ps` (`mask`: as
    for `private_keys`)."""
    if ps.sampled:
      raise ValueError(
          f"public state {ps.describe()} is sampled (it holds more "
          "histories than max_histories): a network's slots need exact "
          "public states; raise max_histories (0: exact) or use the rollout "
          "value function")
    keys = private_keys(ps, player, mask)
    try:
      slots = np.asarray([self._slots[player][k] for k in keys],
                         dtype=np.int64)
    except KeyError as e:
      raise ValueError(f"private part {e.args[0]} of player {player} in "
                       f"public state {ps.describe()} has no slot (slots are "
                       "defined on non-terminal public states at or below "
                       "the first decision, and at the root)") from None
    if len(set(slots.tolist())) != len(slots):
      raise ValueError(
          f"{self.observer.game}: two infostates of player {player} in public "
          f"state {ps.describe()} share a slot; their private parts are not "
          "told apart by the actions they observed")
    return slots


class PublicFeatures:
  """Fixed-width feature vectors of public states."""

  def __init__(self, observer: PublicStateObserver):
    self.observer = observer
    game = observer.game
    self._observation = None
    self.kind = "actions"
    if observer.source == "native":
      for recall in ((True, False) if observer.public_observation_has_recall
                     else (False,)):
        obs = make_public_observation(game, recall)
        if obs is not None and obs.tensor is not None and obs.tensor.size:
          self._observation = obs
          self.kind = "public_observer"
          break
    elif (observer.source == "perfect_information"
          and game.get_type().provides_observation_tensor):
      self.kind = "observation_tensor"
    if self.kind == "public_observer":
      self.size = int(self._observation.tensor.size)
    elif self.kind == "observation_tensor":
      self.size = int(np.prod(game.observation_tensor_shape()))
    else:
      self._width = max(game.num_distinct_actions(),
                        game.max_chance_outcomes())
      # OpenSpiel's max_game_length does not count chance moves.
      self._length = game.max_game_length() + game.max_chance_nodes_in_history()
      self.size = self._length * self._width

  def __call__(self, ps: PublicState) -> np.ndarray:
    """[F] float32 features of `ps`."""
    return self.of_histories(ps.histories[0], _action_matrix(ps)
                             if self.kind == "actions" else None)

  def of_histories(self, first: pyspiel.State, actions: np.ndarray | None
                   ) -> np.ndarray:
    """[F] float32 features of the public state whose histories have the
    action sequences `actions` [H, L] (padded with -1; read only by the
    "actions" kind), `first` one of them: a public state's, or a group of
    an anchored subgame's leaves (DESIGN.md section 17)."""
    if self.kind == "public_observer":
      self._observation.set_from(first, 0)
      return np.asarray(self._observation.tensor, dtype=np.float32).copy()
    if self.kind == "observation_tensor":
      return np.asarray(first.observation_tensor(0), dtype=np.float32)
    return self.of_actions(actions, np.zeros(len(actions), np.int64), 1)[0]

  def of_actions(self, actions: np.ndarray, group: np.ndarray, num: int
                 ) -> np.ndarray:
    """[num, F] the "actions" features of `num` groups of histories at
    once: history i (its actions, row i of `actions` [H, L], padded with
    -1) belongs to group `group[i]`."""
    out = np.zeros((num, self._length, self._width), dtype=np.float32)
    if actions.shape[1] > self._length:
      raise ValueError(f"{self.observer.game}: history longer than the "
                       f"game's max length {self._length}")
    rows, cols = np.nonzero(actions >= 0)
    out[group[rows], cols, actions[rows, cols]] = 1.0
    return out.reshape(num, -1)

