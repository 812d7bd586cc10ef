"""The histories of an anchored subgame's root: the searcher's infostate and
the order-2 set around it (DESIGN.md section 15).

`consistent_histories` draws histories that one player cannot tell from a
given one: a randomised depth-first walk from the game's start that plays
that player's own actions, branches over chance and the other player, and
drops every branch where the player's key leaves the given history's keys.
For the searcher's infostate I it walks the searcher's keys; for the
opponent's infostate J(h) of a history h of I it walks the opponent's keys
of h, so the searcher's own moves vary (our "other selves"). Each history
carries its chance reach and each player's reach under the policies the
searcher has (its previous searches' average policies, uniform where it has
none).
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import pyspiel

from open_spiel_sog.public_state import CHANCE
from open_spiel_sog.public_state import HistoryKeys
from open_spiel_sog.public_state import TERMINAL


_DONE = object()  # a walk's marker: a history's subtree is done


@dataclasses.dataclass
class RootHistory:
  """A history of the root with its weights.

  Attributes:
    state: the history.
    keys: both players' keys there.
    chance: its chance reach.
    reach: [2] each player's reach under the known policies.
    kept: its node in the previous search's tree, or -1.
  """
  state: pyspiel.State
  keys: tuple[str, str]
  chance: float
  reach: list[float]
  kept: int = -1


def actor_of(state: pyspiel.State) -> int:
  return TERMINAL if state.is_terminal() else int(state.current_player())


def _probability(policies: dict[str, dict[int, float]], key: str,
                 action: int, legal: int) -> float:
  known = policies.get(key)
  if known is None:
    return 1.0 / legal
  return known.get(action, 0.0)


@dataclasses.dataclass
class KeyPath:
  """What one player saw along a history: its distinct keys in order, the
  action it took at each key where it acted, and who acts at the end."""
  keys: list[str]
  actions: dict[str, int]
  final_actor: int


def key_path(keys: HistoryKeys, state: pyspiel.State, player: int
             ) -> tuple[KeyPath, tuple[str, str]]:
  """`player`'s `KeyPath` along `state`'s history, and both players' keys
  at `state`."""
  replay = state.get_game().new_initial_state()
  k = keys.root(replay)
  path = [k[player]]
  actions = {}
  for a in state.history():
    if not replay.is_chance_node() and replay.current_player() == player:
      actions[k[player]] = a
    child = replay.child(a)
    k = keys.child(k, replay, a, child)
    replay = child
    if k[player] != path[-1]:
      path.append(k[player])
  return KeyPath(path, actions, actor_of(state)), k


def weigh(keys: HistoryKeys, history: list[int], game: pyspiel.Game,
          policies: dict[str, dict[int, float]]
          ) -> tuple[pyspiel.State, tuple[str, str], float, list[float]]:
  """(state, keys, chance reach, [2] reaches under `policies`) of a
  history, replayed from the start."""
  state = game.new_initial_state()
  k = keys.root(state)
  chance = 1.0
  reach = [1.0, 1.0]
  for a in history:
    if state.is_chance_node():
      chance *= dict(state.chance_outcomes()).get(a, 0.0)
    else:
      p = state.current_player()
      reach[p] *= _probability(policies, k[p], a, len(state.legal_actions()))
    child = state.child(a)
    k = keys.child(k, state, a, child)
    state = child
  return state, k, chance, reach


def situation(state: pyspiel.State) -> tuple[str, ...] | None:
  """What every player observes at `state`: the players' observation
  strings (None where the game has none). Histories in one situation
  differ only in how they came there (Scotland Yard: Mr. X's paths to one
  station)."""
  game = state.get_game()
  if not game.get_type().provides_observation_string:
    return None
  return tuple(state.observation_string(p) for p in range(game.num_players()))


def situations(root: list[RootHistory]) -> set[tuple[str, ...]] | None:
  """The situations of `root`'s histories (None where the game has none:
  `consistent_histories` then takes no `spread`)."""
  if not root or not root[0].state.get_game().get_type(
  ).provides_observation_string:
    return None
  return {situation(r.state) for r in root}


def consistent_histories(keys: HistoryKeys, player: int, path: KeyPath,
                         limit: int, rng: np.random.Generator,
                         policies: dict[str, dict[int, float]],
                         seen: set[tuple[int, ...]], max_visits: int,
                         deadline: float | None,
                         spread: set[tuple[str, ...]] | None = None
                         ) -> list[RootHistory]:
  """Up to `limit` histories not in `seen` where `player`'s keys follow
  `path` and `path.final_actor` acts at the end, each found by a
  randomised depth-first walk (branches tried in an order drawn by their
  chance and policy weights); at most `max_visits` states visited in all,
  and none after `deadline`. Adds what it finds to `seen`.

  With `spread` (the situations already held), walks first take only
  histories of a new situation, one each, until a walk finds none (every
  situation the player's keys allow is held), then any: the root holds
  every situation where `limit` allows, however many paths lead to each
  (Mr. X's possible stations in Scotland Yard, where a few stations have
  most of the paths)."""
  game = keys.game
  players = range(game.num_players())
  found: list[RootHistory] = []
  visits = 0
  last = len(path.keys) - 1
  root = game.new_initial_state()
  root_keys = keys.root(root)
  misses = 0
  # Subtrees a walk went through without a history to take: later walks
  # skip them (what they may take only shrinks), so that the walks
  # together visit each state about once.
  dead: set[tuple[int, ...]] = set()
  owners: dict[tuple, tuple[int, ...]] = {}  # with spread: see below
  while (len(found) < limit and visits < max_visits and misses < 3 and
         (deadline is None or time.monotonic() < deadline)):
    # One walk: (parent, parent keys, action, probability, position,
    # chance, reaches, history); the root has no parent. (_DONE, history)
    # marks the end of a history's subtree.
    stack = [(None, None, -1, 1.0, 0, 1.0, (1.0, 1.0), ())]
    hit = None
    while stack and visits < max_visits:
      entry = stack.pop()
      if entry[0] is _DONE:
        dead.add(entry[1])
        continue
      parent, parent_keys, a, prob, pos, chance, reach, h = entry
      if h in dead:
        continue
      visits += 1
      if (deadline is not None and visits % 32 == 0 and
          time.monotonic() >= deadline):
        break
      if parent is None:
        state, k = root, root_keys
      else:
        state = parent.child(a)
        k = keys.child(parent_keys, parent, a, state)
      if k[player] != path.keys[pos]:
        if pos < last and k[player] == path.keys[pos + 1]:
          pos += 1
        else:
          continue
      actor = actor_of(state)
      if spread is not None:
        # Histories in one situation where the player's keys agree reach
        # the same situations: one of them is walked (Scotland Yard's
        # paths to a station, exponentially many, walked as one).
        here = tuple(state.observation_string(p) for p in players)
        if owners.setdefault((here, k[player], pos), h) != h:
          continue
      if pos == last and actor == path.final_actor:
        if h in seen:
          continue
        if spread is not None:
          if here in spread:
            continue
          spread.add(here)
        seen.add(h)
        hit = RootHistory(state, k, chance, list(reach))
        break
      if actor == TERMINAL:
        continue
      if actor == CHANCE:
        outs = state.chance_outcomes()
      elif actor == player:
        own = path.actions.get(k[player])
        legal = state.legal_actions()
        outs = [] if own not in legal else [
            (own, _probability(policies, k[actor], own, len(legal)))]
      else:
        legal = state.legal_actions()
        outs = [(b, _probability(policies, k[actor], b, len(legal)))
                for b in legal]
      if actor != player:  # (its own moves are given, whatever their weight)
        outs = [(b, w) for b, w in outs if w > 0.0]
      if not outs:
        continue
      weights = np.maximum(np.asarray([w for _, w in outs]), 1e-300)
      # An order drawn by weight (Gumbel keys), the likeliest popped first.
      order = np.argsort(np.log(weights) + rng.gumbel(size=len(outs)))
      stack.append((_DONE, h))
      for i in order.tolist():
        b, w = outs[i]
        if actor == CHANCE:
          nxt = (chance * w, reach)
        else:
          r = list(reach)
          r[actor] *= w
          nxt = (chance, tuple(r))
        stack.append((state, k, b, w, pos) + nxt + (h + (b,),))
    if hit is not None:
      found.append(hit)
    elif spread is not None and visits < max_visits:
      # Every situation the keys allow is held: any history now, through
      # the subtrees skipped for want of a new situation.
      spread = None
      dead.clear()
      owners.clear()
    else:
      misses += 1
  return found
