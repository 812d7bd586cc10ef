"""Scotland Yard's rules: a game's resolved set-up (`Rules`: the map, starts,
tickets, rounds and moves) and the outcomes of a finished game."""

from __future__ import annotations

import re
from typing import Any, Iterator, Mapping, Sequence

from open_spiel_sog.games.scotland_yard.maps import BLACK
from open_spiel_sog.games.scotland_yard.maps import DETECTIVE_TICKETS
from open_spiel_sog.games.scotland_yard.maps import FERRY
from open_spiel_sog.games.scotland_yard.maps import ScotlandYardMap
from open_spiel_sog.games.scotland_yard.maps import TICKETS

# Outcomes of a finished game.
ONGOING, CAUGHT, MRX_STUCK, SURVIVED, DETECTIVES_STUCK = range(5)
OUTCOME_TEXT = {
    CAUGHT: "caught", MRX_STUCK: "Mr. X cannot move",
    SURVIVED: "Mr. X survived", DETECTIVES_STUCK: "no detective can move"}
MRX_WINS = (SURVIVED, DETECTIVES_STUCK)


def split_list(text: str) -> list[str]:
  """'1/11' (or '1 11', '1;11', quoted) -> ['1', '11']."""
  return [p for p in re.split(r"[\s/;]+", str(text).strip().strip("'\"")) if p]


class SharedTuple(tuple):
  """A tuple that `copy.deepcopy` shares. pyspiel clones a Python state by
  deep-copying each of its attributes, and a state's tuples are replaced,
  never changed in place, so a clone may share them: deep-copying London's
  record of events took most of an anchored search's time (its root
  histories are drawn by walking clones)."""
  __slots__ = ()

  def __deepcopy__(self, memo):
    return self


class Rules:
  """The resolved set-up of one game: map, starts, tickets, rounds.

  Immutable and shared by every state of the game (`__deepcopy__` returns
  itself, so cloning a state does not copy the map).
  """

  def __init__(self, game_map: ScotlandYardMap, params: Mapping[str, Any]):
    self.map = game_map
    name = game_map.name
    self.num_stations = n = game_map.num_stations
    self.labels = game_map.stations

    def station_list(key, default, what):
      parts = split_list(params.get(key, ""))
      if not parts:
        return default
      return tuple(game_map.index(p, what) for p in parts)

    def count(key, default):
      value = int(params.get(key, -1))
      if value < -1:
        raise ValueError(f"scotland_yard: {key} must be >= 0 (or -1 for the "
                         f"map's {default}), got {value}")
      return default if value == -1 else value

    self.mrx_start = station_list("mrx_start", game_map.mrx_start,
                                  "Mr. X's start")
    # The detectives' starts: fixed (`detective_starts`) or drawn from start
    # cards (`detective_start_cards`), one public chance node per detective.
    starts_given = bool(split_list(params.get("detective_starts", "")))
    cards_text = split_list(params.get("detective_start_cards", ""))
    no_cards = [p.lower() for p in cards_text] == ["none"]
    if starts_given and cards_text and not no_cards:
      raise ValueError("scotland_yard: detective_starts (fixed starts) and "
                       "detective_start_cards (drawn starts) exclude each "
                       "other; give one")
    if no_cards or starts_given:
      cards = ()
    elif cards_text:
      cards = tuple(game_map.index(p, "detective start card")
                    for p in cards_text)
    else:
      cards = game_map.detective_start_cards
    self.detective_start_cards = cards
    self.drawn = bool(cards)
    self.detective_starts = station_list("detective_starts",
                                         game_map.detective_starts,
                                         "detective start")
    if not self.mrx_start:
      raise ValueError(f"scotland_yard map {name!r}: Mr. X needs a start")
    if not self.detective_starts:
      raise ValueError(f"scotland_yard map {name!r}: at least one detective "
                       "is needed (detective_starts)")
    if len(set(self.mrx_start)) != len(self.mrx_start):
      raise ValueError(f"scotland_yard map {name!r}: mrx_start lists a "
                       "station twice")
    if len(set(self.detective_starts)) != len(self.detective_starts):
      raise ValueError(f"scotland_yard map {name!r}: two detectives start on "
                       "the same station")
    self.num_detectives = len(self.detective_starts)
    if self.drawn:
      # The map's detective_starts give the number of detectives; each
      # draws a card of his own.
      if len(set(cards)) != len(cards):
        raise ValueError(f"scotland_yard map {name!r}: "
                         "detective_start_cards lists a station twice")
      if len(cards) < self.num_detectives:
        raise ValueError(
            f"scotland_yard map {name!r}: {self.num_detectives} detectives "
            f"need at least {self.num_detectives} detective_start_cards, "
            f"got {len(cards)}")
      shared = len(set(self.mrx_start) & set(cards))
      if len(self.mrx_start) - min(shared, self.num_detectives) < 1:
        raise ValueError(
            f"scotland_yard map {name!r}: the detectives' cards may cover "
            "every station of mrx_start")
      # Fixed starts are not used; the detectives are placed by the draws.
      self.detective_starts = ()
    else:
      clash = set(self.mrx_start) & set(self.detective_starts)
      if clash:
        raise ValueError(
            f"scotland_yard map {name!r}: Mr. X may start on station "
            f"{self.labels[min(clash)]}, where a detective starts")
    self.detective_tickets = tuple(
        count("detective_" + kind, default)
        for kind, default in zip(DETECTIVE_TICKETS,
                                 game_map.detective_tickets))
    self.mrx_tickets = tuple(
        count("mrx_" + kind, default)
        for kind, default in zip(TICKETS, game_map.mrx_tickets[:4]))
    self.doubles = count("mrx_double", game_map.mrx_tickets[4])
    self.max_rounds = count("max_rounds", game_map.max_rounds)
    handover = int(params.get("tickets_to_mrx", -1))
    if handover not in (-1, 0, 1):
      raise ValueError("scotland_yard: tickets_to_mrx must be 1 (detectives' "
                       "used tickets go to Mr. X), 0 (they do not) or -1 (the "
                       f"map's setting), got {handover}")
    self.tickets_to_mrx = (game_map.tickets_to_mrx if handover == -1
                           else bool(handover))
    if self.max_rounds < 1:
      raise ValueError(f"scotland_yard: max_rounds must be >= 1, got "
                       f"{self.max_rounds}")
    reveal_text = str(params.get("reveal_rounds", ""))
    reveal_parts = split_list(reveal_text)
    if [p.lower() for p in reveal_parts] == ["none"]:
      reveal = ()
    elif reveal_parts:
      try:
        reveal = tuple(int(p) for p in reveal_parts)
      except ValueError:
        raise ValueError(
            f"scotland_yard: reveal_rounds must be round numbers separated "
            f"by '/' (e.g. 3/8) or 'none', got {reveal_text!r}") from None
    else:
      # The map's reveal rounds past a shortened game never happen.
      reveal = tuple(r for r in game_map.reveal_rounds
                     if r <= self.max_rounds)
    for r in reveal:
      if not 1 <= r <= self.max_rounds:
        raise ValueError(f"scotland_yard: reveal round {r} is outside rounds "
                         f"1..{self.max_rounds}")
    self.reveal_rounds = frozenset(reveal)
    # adjacency[i]: (neighbour, transport) pairs, sorted.
    adjacency: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for a, b, t in game_map.edges:
      adjacency[a].append((b, t))
      adjacency[b].append((a, t))
    self.adjacency = tuple(tuple(sorted(a)) for a in adjacency)
    # Per station, a detective's edges as (action, neighbour, transport),
    # ferries left out, sorted by action (the hot path of rollouts).
    self._detective_edges = tuple(
        tuple(sorted({(t * n + j, j, t) for j, t in a if t != FERRY}))
        for a in self.adjacency)
    # With drawn starts only his tickets are checked here (detective_starts
    # is empty): a draw that blocks every neighbour ends the game at once.
    for s in self.mrx_start:
      if not self.mrx_moves(s, self.mrx_tickets, self.detective_starts):
        raise ValueError(
            f"scotland_yard map {name!r}: Mr. X cannot move from his start "
            f"{self.labels[s]} (detectives hold every neighbour, or he has no "
            "ticket for its edges)")
    self.num_actions = 4 * n + 1
    self.double_action = 4 * n
    # Mr. X's start is a (hidden) chance node; with drawn detectives'
    # starts, each detective's is a (public) chance node before it.
    self.chance = len(self.mrx_start) > 1
    self.chance_nodes = (self.num_detectives if self.drawn else 0) + int(
        self.chance)

  def __deepcopy__(self, memo):
    return self

  def label(self, station: int) -> int:
    return self.labels[station]

  def mrx_moves(self, position: int, tickets: Sequence[int],
                detectives: Sequence[int]) -> list[int]:
    """Mr. X's move actions (sorted) from `position`."""
    n = self.num_stations
    actions = set()
    for j, t in self.adjacency[position]:
      if j in detectives:
        continue
      if t != FERRY and tickets[t] > 0:
        actions.add(t * n + j)
      if tickets[BLACK] > 0:
        actions.add(BLACK * n + j)
    return sorted(actions)

  def _detective_actions(self, k: int, positions: Sequence[int],
                         tickets: Sequence[Sequence[int]]) -> Iterator[int]:
    """Detective k's move actions, in order, as they are found."""
    own = tickets[k]
    others = tuple(positions[:k]) + tuple(positions[k + 1:])
    return (a for a, j, t in self._detective_edges[positions[k]]
            if own[t] and j not in others)

  def detective_moves(self, k: int, positions: Sequence[int],
                      tickets: Sequence[Sequence[int]]) -> list[int]:
    """Detective k's move actions (sorted)."""
    return list(self._detective_actions(k, positions, tickets))

  def detective_can_move(self, k: int, positions: Sequence[int],
                         tickets: Sequence[Sequence[int]]) -> bool:
    """Whether detective k has a move (`detective_moves` not empty)."""
    return next(self._detective_actions(k, positions, tickets),
                None) is not None

  def mrx_start_choices(self, detectives: Sequence[int]) -> list[int]:
    """Mr. X's possible starts (sorted) once the detectives stand on
    `detectives`: his start stations that no detective holds."""
    return sorted(s for s in self.mrx_start if s not in detectives)

  def card_choices(self, detectives: Sequence[int]) -> list[int]:
    """The detective start cards (sorted stations) not yet drawn."""
    return sorted(s for s in self.detective_start_cards
                  if s not in detectives)

  def describe(self) -> str:
    starts = "/".join(str(self.label(s)) for s in self.mrx_start)
    if self.drawn:
      dets = (f"drawn from {len(self.detective_start_cards)} cards "
              f"({self.num_detectives} detectives)")
    else:
      dets = "/".join(str(self.label(s)) for s in self.detective_starts)
    return (f"map {self.map.name}: {self.num_stations} stations, "
            f"{len(self.map.edges)} edges; Mr. X at {starts}, detectives at "
            f"{dets}; {self.max_rounds} rounds")
