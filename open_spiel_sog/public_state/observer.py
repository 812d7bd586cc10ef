"""The public-state observer of a two-player zero-sum OpenSpiel game
(DESIGN.md section 3).

A public state is the set of histories that share the sequence of public
observations since the root. `PublicStateObserver(game)` builds them lazily:
`children()` expands one level on demand, so a search can walk a large game
without enumerating it. The observer finds the public state of a state
(`public_state_of`), walks the tree (`walk`, `full_tree`) and drops what
play can no longer reach (`prune`, `restart`); its collaborators, each in a
module of its own, do the rest:

* `partition.PublicPartition`: the source of the public observations and
  the grouping of a public state's children by them;
* `infostates.InfostateKeys`: each history's infostate key per player, and
  `infostates.DecisionHomes`: the check that each decision infostate lies
  in one public state;
* `sampling.Sampler`: the draws of sampled public states
  (`ObserverConfig.max_histories`) and their time budget;
* `expansions.EXPANSIONS`: exact expansions shared by every observer of the
  process;
* `memory.MemoryGuard`: the memory budget of expansions.

`PublicState` is in `state.py`, `ObserverConfig` in `config.py`.
"""

from __future__ import annotations

import time
from typing import Iterator

import numpy as np
import pyspiel

from open_spiel_sog.public_state import expansions
from open_spiel_sog.public_state.config import ObserverConfig
from open_spiel_sog.public_state.config import validate_game
from open_spiel_sog.public_state.infostates import DecisionHomes
from open_spiel_sog.public_state.infostates import InfostateKeys
from open_spiel_sog.public_state.infostates import who_acts
from open_spiel_sog.public_state.memory import MemoryGuard
from open_spiel_sog.public_state.partition import PublicPartition
from open_spiel_sog.public_state.sampling import EXPAND_SHARE
from open_spiel_sog.public_state.sampling import PRESAMPLE
from open_spiel_sog.public_state.sampling import Sampler
from open_spiel_sog.public_state.sampling import WALK_SHARE
from open_spiel_sog.public_state.sampling import strata_of
from open_spiel_sog.public_state.state import PublicState
from open_spiel_sog.public_state.state import pair_index
from open_spiel_sog.public_state.tree import PublicTree


class PublicTreeTooLarge(ValueError):
  """The public tree has more public states than the configured bound."""


def _sampler_attribute(name: str) -> property:
  """An observer's property that reads and sets its sampler's `name`."""
  return property(lambda self: getattr(self.sampler, name),
                  lambda self, value: setattr(self.sampler, name, value),
                  doc=f"The sampler's `{name}` (see `Sampler`).")


class PublicStateObserver:
  """Turns a two-player zero-sum OpenSpiel game into public states.

  It builds the public states (`root`, then each one's `children()`), finds
  the one of a state (`public_state_of`) and drops what play can no longer
  reach (`prune`, `restart`); its collaborators do the rest.

  Attributes:
    config: its `ObserverConfig`.
    game: the game.
    common_payoff: whether the game is common-payoff (IDENTICAL utility).
    partition: how children are grouped into public states
      (`PublicPartition`); `source` and `public_observation_has_recall` are
      its.
    infostate_keys: the infostate keys of histories (`InfostateKeys`);
      `infostate_source` is its `source`.
    sampler: the draws of sampled public states and their time budget
      (`Sampler`); `deadline`, `seconds_per_child`, `favoured_player` and
      `shrink_within_bound` are its, read and set through the observer.
    memory_guard: the memory budget of expansions (`MemoryGuard`).
    content_namespace: what, besides the path, decides an exact public
      state's content (`PublicState.content_key`, `ExpansionCache`).
  """

  def __init__(self, game: pyspiel.Game | str,
               config: ObserverConfig | None = None):
    if isinstance(game, str):
      game = pyspiel.load_game(game)
    self.config = config or ObserverConfig()
    validate_game(game, self.config.common_payoff)
    self.game = game
    self.common_payoff = (game.get_type().utility ==
                          pyspiel.GameType.Utility.IDENTICAL)
    self.partition = PublicPartition(game, self.config.source)
    self.source = self.partition.source
    self.public_observation_has_recall = (
        self.partition.public_observation_has_recall)
    perfect_information = self.source == "perfect_information"
    self.infostate_keys = InfostateKeys(game, self.config.infostates,
                                        separate_roles=not perfect_information)
    self.infostate_source = self.infostate_keys.source
    self.memory_guard = MemoryGuard(game, self.config.max_memory_bytes)
    self._public_states: list[PublicState] = []
    self._next_id = 0
    self._floor: PublicState | None = None  # see prune
    self._pruned: set[int] = set()  # ids whose children are the path's
    # Replaced samples (see _resample_child), reported by the next prune.
    self._dropped_since_prune: list[int] = []
    self._root: PublicState | None = None
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
    self.sampler = Sampler(self.config.max_histories, self.config.sample_seed,
                           perfect_information)
    self._replaced: list[PublicState] = []
    # Dropped public states whose histories are still held (release_dropped).
    self._unreleased: list[PublicState] = []
    self._replaced_ids: list[int] = []  # theirs and their descendants'
    self._decision_homes = DecisionHomes(game, self.infostate_source,
                                         perfect_information)

  deadline = _sampler_attribute("deadline")
  seconds_per_child = _sampler_attribute("seconds_per_child")
  favoured_player = _sampler_attribute("favoured_player")
  shrink_within_bound = _sampler_attribute("shrink_within_bound")

  def infostate_string(self, state: pyspiel.State, player: int) -> str:
    """`player`'s information state at `state` (`InfostateKeys.string`)."""
    return self.infostate_keys.string(state, player)

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
      parent.replay_histories()
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
    self._decision_homes.check_in(ps)
    self._public_states.append(ps)
    self._next_id += 1
    return ps

  def _expand(self, ps: PublicState, force: tuple[int, int] | None = None,
              only_forced: bool = False) -> list[PublicState]:
    """The children of `ps`. With sampling on, a group larger than
    max_histories is sampled, always keeping the child reached by
    `force` = (history index, action); `only_forced` builds just the group
    holding that child."""
    if ps.is_terminal():
      return []
    start = time.perf_counter()
    bound = self.sampler.affordable_bound(ps, self._time_one_child)
    # Groups past `limit` are sampled down to `bound` (max_histories, or
    # fewer under a deadline); see `shrink_within_bound`.
    limit = (bound if self.sampler.shrink_within_bound else
             self.config.max_histories)
    favour = self.sampler.favoured_player if force is not None else None
    # Below the true path, the children of histories the favoured player's
    # infostate holds or leads to are favoured as well.
    line = ps.favoured_histories
    content = ps.content_key
    cached = expansions.EXPANSIONS.get(content)
    if cached is not None and len(cached.children) > (
        PRESAMPLE * limit if bound else self.config.max_children):
      cached = None  # built again: presampled or refused, as it would be
    presampled = False
    if cached is None:
      (children, reach_arr, ph, pa, keys, groups, forced,
       presampled) = self._build_children(ps, bound, limit, force, favour,
                                          line)
      if content is not None and not presampled:
        ph.flags.writeable = pa.flags.writeable = False
        reach_arr.flags.writeable = False
        cached = expansions.Expansion(tuple(children), reach_arr, ph, pa, keys,
                                      groups, {}, {})
        expansions.EXPANSIONS.put(content, cached)
      timed = len(children)
    else:
      timed = 0  # (a reused expansion says nothing of what building costs)
      children, reach_arr, ph, pa, keys, groups = cached[:6]
      forced = -1  # the child `force` names
      if force is not None:
        forced = pair_index(ph, pa, *force)
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
        kept, weights = self.sampler.sample_favouring(
            idx, weights, strata_of(ps, ph[idx], pa[idx]), forced, bound,
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
      self.sampler.record_time(time.perf_counter() - start, timed)
    return result

  def _build_children(self, ps: PublicState, bound: int, limit: int,
                      force: tuple[int, int] | None, favour: int | None,
                      line: np.ndarray | None):
    """Builds the child histories of `ps` (drawing them first when there
    are more than PRESAMPLE * `limit`), keys and groups them. Returns
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
      forced = pair_index(ph_all, pa_all, *force)
      if forced < 0:
        raise ValueError(f"action {force[1]} is not legal in history "
                         f"{force[0]} of public state {ps.describe()}")
    chosen = np.arange(len(pairs_h))
    chosen_r = np.asarray(pairs_r)
    presampled = bool(bound) and len(pairs_h) > PRESAMPLE * limit
    if presampled:
      # Too many children to build: draw them before building (each child
      # group is sampled again below if it is still too large).
      favoured = None if line is None else line[ph_all]
      if favour is not None:
        mine = ps.history_infostate[favour]
        favoured = mine[ph_all] == mine[force[0]]
      chosen, chosen_r = self.sampler.sample_favouring(
          chosen, chosen_r, strata_of(ps, ph_all, pa_all), forced,
          PRESAMPLE * bound, favoured)
    children: list[pyspiel.State] = []
    parent_history: list[int] = []
    parent_action: list[int] = []
    for j in chosen.tolist():
      self.memory_guard.building(ps, len(children))
      children.append(ps.histories[pairs_h[j]].child(pairs_a[j]))
      parent_history.append(pairs_h[j])
      parent_action.append(pairs_a[j])
    self.memory_guard.built(ps, len(children))
    actors = who_acts(children)
    keys = self.infostate_keys.of_children(ps, children, parent_history,
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

  def _time_one_child(self, ps: PublicState) -> float:
    """Builds one child of `ps` as `_expand` would (state, infostate keys,
    label); returns the seconds it took."""
    h = ps.histories[0]
    a = (h.chance_outcomes()[0][0] if h.is_chance_node()
         else h.legal_actions()[0])
    start = time.perf_counter()
    child = h.child(a)
    actors = who_acts([child])
    keys = self.infostate_keys.of_children(ps, [child], [0], [a], actors)
    self._partition([child], [a], keys, actors)
    return time.perf_counter() - start

  def _perfect_information_child(self, ps: PublicState, action: int,
                                 prob: float) -> PublicState:
    """The child of perfect-information `ps` reached by `action` (chance:
    an outcome of probability `prob`), as `_expand` would group it."""
    child = ps.histories[0].child(action)
    # (No infostate keys: a one-history public state makes them when read.)
    return self._new_public_state(
        ps, str(action), [child], np.asarray([ps.chance_reach[0] * prob]),
        np.zeros(1, dtype=np.int64), np.asarray([action], dtype=np.int64))

  def _partition(self, children: list[pyspiel.State], actions: list[int],
                 keys: list[list[str]], actors: list[int]) -> list[str]:
    """A label per child history; equal labels share a public state
    (`PublicPartition.labels`)."""
    return self.partition.labels(children, actions, keys, actors)

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
        self.sampler.expand_budget = (WALK_SHARE, len(history) - step)
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
        favoured_player = self.sampler.favoured_player
        if (favoured_player is not None and child.sampled and
            child.favoured != favoured_player):
          # Built without favouring the searcher (by a search): rebuilt.
          child, child_index = self._resample_child(ps, index, a)
        ps, index = child, child_index
    finally:
      self.sampler.expand_budget = (EXPAND_SHARE, 1)
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
    return child, pair_index(child.parent_history, child.parent_action,
                             index, action)

  def _forget(self, ps: PublicState) -> list[int]:
    """Drops the decision infostates of `ps` and its built descendants from
    the one-public-state-per-infostate check (`ps` is being replaced or
    dropped); returns their ids."""
    ids = []
    stack = [ps]
    while stack:
      node = stack.pop()
      ids.append(node.id)
      self._decision_homes.check_out(node)
      stack.extend(self._built_children(node))
      self._unreleased.append(node)
    return ids

  def release_dropped(self) -> None:
    """Releases the histories of the public states dropped since the last
    call (see `PublicState.release`). Deferred to the next `public_state_of`
    (or `restart`), the first step of the next search, so that the time
    freeing them takes (a tenth of a second for a gigabyte of states) falls
    inside that search's time, not after a search past its deadline."""
    for node in self._unreleased:
      node.release()
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

  def full_tree(self) -> PublicTree:
    """The whole public tree of the game (bounded by max_public_states)."""
    return PublicTree.from_subtree(self.root())
