"""Scotland Yard as an OpenSpiel game, registered as ``scotland_yard``.

Two players: player 0 is Mr. X, the evader; player 1 is the detectives, one
team whose detectives move one at a time (sequential decisions of player 1).
Returns are +1 for the winner and -1 for the loser (zero-sum).

A round: Mr. X moves (or plays a double-move card and then moves twice), then
each detective moves in turn. Every move uses a ticket of the edge's
transport type: taxi, bus or underground; ferry edges take a black ticket,
which Mr. X can also use on any other edge to hide its type. Everyone sees the
ticket types Mr. X uses (his travel log) and, on reveal rounds, where he is;
nobody but Mr. X sees where he went otherwise. The detectives' positions and
every ticket count are public. The round limit counts travel-log entries (a
double move fills two, like the board game).

The detectives win when one of them moves onto Mr. X's station, or when Mr. X
cannot move (his neighbours are all occupied, or he has no ticket for any
edge). Mr. X wins when the detectives have finished the round in which the
travel log reaches `max_rounds`, or when no detective can move at the start
of the detectives' turn. A detective who cannot move (no ticket for any free
edge) is skipped. Detectives never move onto each other, and Mr. X never moves
onto a detective. With `tickets_to_mrx` (the London map's setting, as on the
board) every ticket a detective uses goes to Mr. X.

Maps are JSON files (`open_spiel_sog/games/maps/*.json`, or any path): stations
(a list of ids), edges ``[a, b, transport]`` (undirected), and the set-up
defaults (start stations, tickets, round limit, reveal rounds). Every set-up
value can be overridden by a game parameter; ``-1`` or ``""`` means "the
map's". When `mrx_start` lists more than one station, a chance node picks one
uniformly and only Mr. X sees it.

Actions: ``ticket * num_stations + destination`` with tickets 0 taxi,
1 bus, 2 underground, 3 black and destinations the station's index in the
map's `stations` list; ``4 * num_stations`` is the double-move card. The
chance node's outcomes are station indices.

Observers: information-state and observation tensors and strings for each
player, and a public observer (``public_info=True``,
``private_info=PrivateInfoType.NONE``) with and without perfect recall that
shows the detectives' positions and tickets, the ticket types Mr. X used, the
revealed positions, the round and, once the game is over, how it ended.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from typing import Any, Mapping, Sequence

import numpy as np
import pyspiel

TRANSPORTS = ("taxi", "bus", "underground", "ferry")
TICKETS = ("taxi", "bus", "underground", "black")
TAXI, BUS, UNDERGROUND, FERRY = range(4)
BLACK = 3
DETECTIVE_TICKETS = TICKETS[:3]
MRX_TICKETS = TICKETS + ("double",)

MAPS_DIR = os.path.join(os.path.dirname(__file__), "maps")

_MAP_KEYS = ("name", "description", "source", "license", "stations", "edges",
             "mrx_start", "detective_starts", "detective_tickets",
             "mrx_tickets", "tickets_to_mrx", "max_rounds", "reveal_rounds")

# Game parameters: -1 / "" take the map's value.
_DEFAULT_PARAMS = {
    "map": "glasses",
    "max_rounds": -1,
    "mrx_start": "",
    "detective_starts": "",
    "reveal_rounds": "",
    "detective_taxi": -1,
    "detective_bus": -1,
    "detective_underground": -1,
    "mrx_taxi": -1,
    "mrx_bus": -1,
    "mrx_underground": -1,
    "mrx_black": -1,
    "mrx_double": -1,
    "tickets_to_mrx": -1,
}

_GAME_TYPE = pyspiel.GameType(
    short_name="scotland_yard",
    long_name="Scotland Yard (open_spiel_sog)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    # Deterministic unless `mrx_start` lists several stations.
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    provides_factored_observation_string=True,
    parameter_specification=_DEFAULT_PARAMS)


# --- Maps ---------------------------------------------------------------------


def shipped_maps() -> list[str]:
  """Names of the maps shipped in `open_spiel_sog/games/maps/`."""
  return sorted(f[:-5] for f in os.listdir(MAPS_DIR) if f.endswith(".json"))


@dataclasses.dataclass(frozen=True)
class ScotlandYardMap:
  """A validated map: stations, edges and set-up defaults.

  Attributes:
    name: the map's name.
    stations: station ids as the map numbers them ([N]).
    edges: undirected edges (a, b, transport index), by station index.
    mrx_start, detective_starts: station indices.
    detective_tickets: [3] taxi, bus, underground per detective.
    mrx_tickets: [5] taxi, bus, underground, black, double.
    max_rounds: travel-log entries before Mr. X wins.
    reveal_rounds: travel-log entries (1-based) after which Mr. X is shown.
    tickets_to_mrx: the board game's rule that every ticket a detective uses
      goes to Mr. X.
    description, source, license: free text from the file.
  """
  name: str
  stations: tuple[int, ...]
  edges: tuple[tuple[int, int, int], ...]
  mrx_start: tuple[int, ...]
  detective_starts: tuple[int, ...]
  detective_tickets: tuple[int, ...]
  mrx_tickets: tuple[int, ...]
  max_rounds: int
  reveal_rounds: tuple[int, ...]
  tickets_to_mrx: bool = False
  description: str = ""
  source: str = ""
  license: str = ""

  @property
  def num_stations(self) -> int:
    return len(self.stations)

  def index(self, station: Any, what: str) -> int:
    """The index of station id `station`; ValueError naming `what`."""
    try:
      return self._index[int(station)]
    except (KeyError, TypeError, ValueError):
      raise ValueError(
          f"scotland_yard map {self.name!r}: {what} {station!r} is not a "
          f"station of the map (stations: {_ranges(self.stations)})"
      ) from None

  @property
  def _index(self) -> dict[int, int]:
    return {s: i for i, s in enumerate(self.stations)}


def _ranges(ids: Sequence[int]) -> str:
  """'1-12' or '1-5, 8, 10-12' for a list of ids."""
  ids = sorted(ids)
  parts, start = [], None
  for i, s in enumerate(ids):
    if start is None:
      start = s
    if i + 1 == len(ids) or ids[i + 1] != s + 1:
      parts.append(str(start) if start == s else f"{start}-{s}")
      start = None
  return ", ".join(parts)


def _map_error(name: str, message: str) -> ValueError:
  return ValueError(f"scotland_yard map {name!r}: {message}")


def _int_list(name: str, key: str, value: Any) -> list[int]:
  if isinstance(value, int) and not isinstance(value, bool):
    return [value]
  if (not isinstance(value, list) or
      not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
    raise _map_error(name, f"{key!r} must be a list of station numbers, got "
                     f"{value!r}")
  return list(value)


def _tickets(name: str, key: str, value: Any, kinds: Sequence[str]
             ) -> tuple[int, ...]:
  if not isinstance(value, dict):
    raise _map_error(name, f"{key!r} must be an object like "
                     f"{{\"taxi\": 5}}, got {value!r}")
  unknown = sorted(set(value) - set(kinds))
  if unknown:
    raise _map_error(name, f"{key!r} has unknown ticket type(s) "
                     f"{', '.join(map(repr, unknown))}; supported: "
                     f"{', '.join(kinds)}")
  out = []
  for kind in kinds:
    count = value.get(kind, 0)
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
      raise _map_error(name, f"{key}[{kind!r}] must be a count >= 0, got "
                       f"{count!r}")
    out.append(count)
  return tuple(out)


def parse_map(data: Mapping[str, Any], name: str = "") -> ScotlandYardMap:
  """Validates a map's JSON object; ValueError naming the first problem."""
  if not isinstance(data, Mapping):
    raise _map_error(name, f"a map is a JSON object, got {type(data).__name__}")
  name = str(data.get("name", name) or name)
  unknown = sorted(set(data) - set(_MAP_KEYS))
  if unknown:
    raise _map_error(name, f"unknown key(s) {', '.join(map(repr, unknown))}; "
                     f"supported: {', '.join(_MAP_KEYS)}")
  for key in ("stations", "edges", "mrx_start", "detective_starts"):
    if key not in data:
      raise _map_error(name, f"missing {key!r}")
  stations = _int_list(name, "stations", data["stations"])
  if not stations:
    raise _map_error(name, "'stations' is empty")
  if len(set(stations)) != len(stations):
    raise _map_error(name, "'stations' lists a station twice")
  index = {s: i for i, s in enumerate(stations)}
  edges = data["edges"]
  if not isinstance(edges, list) or not edges:
    raise _map_error(name, "'edges' must be a non-empty list of "
                     "[station, station, transport]")
  seen = set()
  parsed_edges = []
  for edge in edges:
    if not isinstance(edge, list) or len(edge) != 3:
      raise _map_error(name, f"edge {edge!r} is not [station, station, "
                       "transport]")
    a, b, transport = edge
    for s in (a, b):
      if s not in index or isinstance(s, bool):
        raise _map_error(name, f"edge {edge!r} names unknown station {s!r} "
                         f"(stations: {_ranges(stations)})")
    if transport not in TRANSPORTS:
      raise _map_error(name, f"edge {edge!r} has unknown transport "
                       f"{transport!r}; supported: {', '.join(TRANSPORTS)}")
    if a == b:
      raise _map_error(name, f"edge {edge!r} joins a station to itself")
    i, j, t = index[a], index[b], TRANSPORTS.index(transport)
    key = (min(i, j), max(i, j), t)
    if key not in seen:
      seen.add(key)
      parsed_edges.append(key)
  mrx_start = _int_list(name, "mrx_start", data["mrx_start"])
  detective_starts = _int_list(name, "detective_starts",
                               data["detective_starts"])
  reveal = _int_list(name, "reveal_rounds", data.get("reveal_rounds", []))
  tickets_to_mrx = data.get("tickets_to_mrx", False)
  if not isinstance(tickets_to_mrx, bool):
    raise _map_error(name, f"'tickets_to_mrx' must be true or false, got "
                     f"{tickets_to_mrx!r}")
  max_rounds = data.get("max_rounds", 5)
  if not isinstance(max_rounds, int) or isinstance(max_rounds, bool):
    raise _map_error(name, f"'max_rounds' must be an integer, got "
                     f"{max_rounds!r}")
  result = ScotlandYardMap(
      name=name, stations=tuple(stations), edges=tuple(parsed_edges),
      mrx_start=(), detective_starts=(),
      detective_tickets=_tickets(name, "detective_tickets",
                                 data.get("detective_tickets", {}),
                                 DETECTIVE_TICKETS),
      mrx_tickets=_tickets(name, "mrx_tickets", data.get("mrx_tickets", {}),
                           MRX_TICKETS),
      max_rounds=max_rounds, reveal_rounds=tuple(reveal),
      tickets_to_mrx=tickets_to_mrx,
      description=str(data.get("description", "")),
      source=str(data.get("source", "")), license=str(data.get("license", "")))
  return dataclasses.replace(
      result,
      mrx_start=tuple(result.index(s, "Mr. X's start") for s in mrx_start),
      detective_starts=tuple(result.index(s, "detective start")
                             for s in detective_starts))


def load_map(name_or_path: str) -> ScotlandYardMap:
  """A shipped map by name, or a map JSON file by path."""
  if not name_or_path:
    raise ValueError("scotland_yard: map must be a shipped map name "
                     f"({', '.join(shipped_maps())}) or a JSON file path")
  # A name without a path separator or ".json" is a shipped map, so a file
  # of that name in the working directory never shadows it.
  if os.path.sep in name_or_path or name_or_path.endswith(".json"):
    path = name_or_path
    if not os.path.isfile(path):
      raise ValueError(f"scotland_yard: map file {name_or_path!r} does not "
                       "exist")
  else:
    path = os.path.join(MAPS_DIR, name_or_path + ".json")
    if not os.path.isfile(path):
      raise ValueError(
          f"scotland_yard: unknown map {name_or_path!r}; shipped maps: "
          f"{', '.join(shipped_maps())} (or give a JSON file path, which "
          "contains '/' or ends in .json)")
  try:
    with open(path, encoding="utf-8") as f:
      data = json.load(f)
  except json.JSONDecodeError as e:
    raise ValueError(f"scotland_yard: map file {path!r} is not valid JSON: "
                     f"{e}") from None
  except OSError as e:
    raise ValueError(f"scotland_yard: cannot read map file {path!r}: "
                     f"{e.strerror}") from None
  default_name = os.path.splitext(os.path.basename(path))[0]
  return parse_map(data, default_name)


# --- Rules --------------------------------------------------------------------


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
      parts = _split_list(params.get(key, ""))
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
    clash = set(self.mrx_start) & set(self.detective_starts)
    if clash:
      raise ValueError(
          f"scotland_yard map {name!r}: Mr. X may start on station "
          f"{self.labels[min(clash)]}, where a detective starts")
    self.num_detectives = len(self.detective_starts)
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
    reveal_parts = _split_list(reveal_text)
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
    for s in self.mrx_start:
      if not self.mrx_moves(s, self.mrx_tickets, self.detective_starts):
        raise ValueError(
            f"scotland_yard map {name!r}: Mr. X cannot move from his start "
            f"{self.labels[s]} (detectives hold every neighbour, or he has no "
            "ticket for its edges)")
    self.num_actions = 4 * n + 1
    self.double_action = 4 * n
    self.chance = len(self.mrx_start) > 1

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

  def detective_moves(self, k: int, positions: Sequence[int],
                      tickets: Sequence[Sequence[int]]) -> list[int]:
    """Detective k's move actions (sorted)."""
    n = self.num_stations
    actions = set()
    for j, t in self.adjacency[positions[k]]:
      if t == FERRY or tickets[k][t] == 0:
        continue
      if any(j == positions[m] for m in range(len(positions)) if m != k):
        continue
      actions.add(t * n + j)
    return sorted(actions)

  def describe(self) -> str:
    starts = "/".join(str(self.label(s)) for s in self.mrx_start)
    dets = "/".join(str(self.label(s)) for s in self.detective_starts)
    return (f"map {self.map.name}: {self.num_stations} stations, "
            f"{len(self.map.edges)} edges; Mr. X at {starts}, detectives at "
            f"{dets}; {self.max_rounds} rounds")


# --- Game ---------------------------------------------------------------------

_LIST_PARAMS = ("mrx_start", "detective_starts", "reveal_rounds")


def _split_list(text: str) -> list[str]:
  """'1/11' (or '1 11', '1;11', quoted) -> ['1', '11']."""
  return [p for p in re.split(r"[\s/;]+", str(text).strip().strip("'\"")) if p]


def _canonical_list(text: str) -> str:
  """The form of a list parameter that OpenSpiel's game-string parser reads
  back as a string: '/'-separated, with a trailing '/' for a single item
  (a bare '6' would be read as an integer)."""
  parts = _split_list(text)
  if len(parts) == 1 and parts[0].lower() == "none":
    return "none"
  return "/".join(parts) + ("/" if len(parts) == 1 else "")


# Outcomes of a finished game.
ONGOING, CAUGHT, MRX_STUCK, SURVIVED, DETECTIVES_STUCK = range(5)
_OUTCOME_TEXT = {
    CAUGHT: "caught", MRX_STUCK: "Mr. X cannot move",
    SURVIVED: "Mr. X survived", DETECTIVES_STUCK: "no detective can move"}
_MRX_WINS = (SURVIVED, DETECTIVES_STUCK)


class ScotlandYardGame(pyspiel.Game):
  """Scotland Yard: Mr. X (player 0) against the detectives (player 1)."""

  def __init__(self, params: Mapping[str, Any] | None = None):
    params = dict(_DEFAULT_PARAMS, **(params or {}))
    unknown = sorted(set(params) - set(_DEFAULT_PARAMS))
    if unknown:
      raise ValueError(f"scotland_yard: unknown parameter(s) "
                       f"{', '.join(unknown)}; supported: "
                       f"{', '.join(_DEFAULT_PARAMS)}")
    self.rules = rules = Rules(load_map(str(params["map"])), params)
    for key in _LIST_PARAMS:
      params[key] = _canonical_list(params[key])
    max_length = (rules.max_rounds * (1 + rules.num_detectives) +
                  min(rules.doubles, rules.max_rounds))
    game_info = pyspiel.GameInfo(
        num_distinct_actions=rules.num_actions,
        max_chance_outcomes=rules.num_stations if rules.chance else 0,
        num_players=2,
        min_utility=-1.0,
        max_utility=1.0,
        utility_sum=0.0,
        max_game_length=max_length)
    super().__init__(_GAME_TYPE, game_info, params)

  def new_initial_state(self) -> "ScotlandYardState":
    return ScotlandYardState(self)

  def make_py_observer(self, iig_obs_type=None, params=None):
    return ScotlandYardObserver(
        self.rules,
        iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False),
        params)

  def max_chance_nodes_in_history(self) -> int:
    return 1 if self.rules.chance else 0


class ScotlandYardState(pyspiel.State):
  """A Scotland Yard state. Attributes are immutable (tuples), so clones are
  cheap; `events` is the game so far, with Mr. X's hidden destinations."""

  def __init__(self, game: ScotlandYardGame):
    super().__init__(game)
    rules = game.rules
    self.rules = rules
    self.mrx = -1 if rules.chance else rules.mrx_start[0]
    self.detectives = rules.detective_starts
    self.detective_tickets = (rules.detective_tickets,) * rules.num_detectives
    self.mrx_tickets = rules.mrx_tickets
    self.doubles = rules.doubles
    # Travel log: (ticket, revealed station or -1, part of a double move).
    self.log: tuple[tuple[int, int, bool], ...] = ()
    self.path: tuple[int, ...] = () if rules.chance else (self.mrx,)
    # Whose turn: -1 chance, 0 Mr. X, 1 + k detective k; pending Mr. X moves.
    self.turn = -1 if rules.chance else 0
    self.pending = 1
    self.in_double = False
    self.outcome = ONGOING
    # Public and private record: ("start", s) | ("double",) |
    # ("x", ticket, dest, revealed) | ("d", k, ticket, dest) | ("end", outcome)
    self.events: tuple[tuple, ...] = ()

  # --- OpenSpiel API ---------------------------------------------------------

  def current_player(self) -> int:
    if self.outcome != ONGOING:
      return pyspiel.PlayerId.TERMINAL
    if self.turn == -1:
      return pyspiel.PlayerId.CHANCE
    return 0 if self.turn == 0 else 1

  def is_terminal(self) -> bool:
    return self.outcome != ONGOING

  def returns(self) -> list[float]:
    if self.outcome == ONGOING:
      return [0.0, 0.0]
    return [1.0, -1.0] if self.outcome in _MRX_WINS else [-1.0, 1.0]

  def chance_outcomes(self) -> list[tuple[int, float]]:
    starts = sorted(self.rules.mrx_start)
    return [(s, 1.0 / len(starts)) for s in starts]

  def _legal_actions(self, player: int) -> list[int]:
    if self.outcome != ONGOING or self.turn == -1:
      return []
    rules = self.rules
    if self.turn == 0:
      if player != 0:
        return []
      moves = rules.mrx_moves(self.mrx, self.mrx_tickets, self.detectives)
      if (self.doubles > 0 and not self.in_double and moves and
          len(self.log) + 2 <= rules.max_rounds):
        moves.append(rules.double_action)
      return moves
    if player != 1:
      return []
    return rules.detective_moves(self.turn - 1, self.detectives,
                                 self.detective_tickets)

  def _apply_action(self, action: int) -> None:
    rules = self.rules
    n = rules.num_stations
    if self.turn == -1:
      self.mrx = action
      self.path = (action,)
      self.events += (("start", action),)
      self._start_mrx_turn()
      return
    if self.turn == 0:
      if action == rules.double_action:
        self.doubles -= 1
        self.pending = 2
        self.in_double = True
        self.events += (("double",),)
        return
      ticket, dest = divmod(action, n)
      tickets = list(self.mrx_tickets)
      tickets[ticket] -= 1
      self.mrx_tickets = tuple(tickets)
      self.mrx = dest
      entry = len(self.log) + 1
      revealed = dest if entry in rules.reveal_rounds else -1
      self.log += ((ticket, revealed, self.in_double),)
      self.path += (dest,)
      self.events += (("x", ticket, dest, revealed),)
      self.pending -= 1
      if self.pending > 0:
        if not rules.mrx_moves(self.mrx, self.mrx_tickets, self.detectives):
          self._end(MRX_STUCK)
        return
      self.in_double = False
      self._start_detectives_turn()
      return
    k = self.turn - 1
    ticket, dest = divmod(action, n)
    positions = list(self.detectives)
    positions[k] = dest
    self.detectives = tuple(positions)
    tickets = [list(t) for t in self.detective_tickets]
    tickets[k][ticket] -= 1
    self.detective_tickets = tuple(tuple(t) for t in tickets)
    if rules.tickets_to_mrx:
      mrx_tickets = list(self.mrx_tickets)
      mrx_tickets[ticket] += 1
      self.mrx_tickets = tuple(mrx_tickets)
    self.events += (("d", k, ticket, dest),)
    if dest == self.mrx:
      self._end(CAUGHT)
      return
    self._next_detective(k + 1)

  def _end(self, outcome: int) -> None:
    self.outcome = outcome
    self.events += (("end", outcome),)

  def _start_mrx_turn(self) -> None:
    self.turn = 0
    self.pending = 1
    if not self.rules.mrx_moves(self.mrx, self.mrx_tickets, self.detectives):
      self._end(MRX_STUCK)

  def _start_detectives_turn(self) -> None:
    rules = self.rules
    if not any(rules.detective_moves(k, self.detectives, self.detective_tickets)
               for k in range(rules.num_detectives)):
      self._end(DETECTIVES_STUCK)
      return
    self._next_detective(0)

  def _next_detective(self, k: int) -> None:
    rules = self.rules
    while k < rules.num_detectives:
      if rules.detective_moves(k, self.detectives, self.detective_tickets):
        self.turn = 1 + k
        return
      k += 1
    if len(self.log) >= rules.max_rounds:
      self._end(SURVIVED)
    else:
      self._start_mrx_turn()

  def _action_to_string(self, player: int, action: int) -> str:
    rules = self.rules
    n = rules.num_stations
    if player == pyspiel.PlayerId.CHANCE:
      return f"Mr. X starts at {rules.label(action)}"
    if action == rules.double_action:
      return "double move"
    ticket, dest = divmod(action, n)
    if not 0 <= ticket < 4 or not 0 <= dest < n:
      return f"invalid action {action}"
    return f"{TICKETS[ticket]} to {rules.label(dest)}"

  def __str__(self) -> str:
    return _situation_string(self, public=True, mrx=True)

  # --- Sampling ----------------------------------------------------------------

  def resample_from_infostate(self, player_id: int, probability_sampler
                              ) -> "ScotlandYardState":
    """A history of `player_id`'s infostate, drawn with probability
    proportional to its chance reach (uniform over Mr. X's possible paths).

    Mr. X knows the whole history; the detectives' infostate is the public
    state, so this draws Mr. X's path from the paths consistent with the
    public record (forward counts, backward sampling).
    """
    if player_id == 0 or self.mrx < 0:
      return self.clone()
    rules = self.rules
    layers = _path_counts(rules, self.events, self.rules.mrx_start,
                          self.current_player() == 0 and self.outcome ==
                          ONGOING)
    # Backward sampling of one path through the layers.
    path = []
    weights = layers[-1][0]
    nxt = _draw(weights, probability_sampler)
    path.append(nxt)
    for counts, step in reversed(layers[:-1]):
      cand = {p: c for p, c in counts.items() if nxt in step.get(p, ())}
      nxt = _draw(cand, probability_sampler)
      path.append(nxt)
    path.reverse()
    state = self.get_game().new_initial_state()
    moves_made = 0
    n = rules.num_stations
    for action in self.history():
      if state.is_chance_node():
        state.apply_action(path[0])
      elif state.current_player() == 0 and action != rules.double_action:
        moves_made += 1
        state.apply_action((action // n) * n + path[moves_made])
      else:
        state.apply_action(action)
    return state


def _draw(weights: Mapping[int, int], sampler) -> int:
  keys = sorted(weights)
  total = float(sum(weights[k] for k in keys))
  u = float(sampler()) * total
  acc = 0.0
  for k in keys:
    acc += weights[k]
    if u < acc:
      return k
  return keys[-1]


def _path_counts(rules: Rules, events: Sequence[tuple],
                 starts: Sequence[int], at_mrx_decision: bool):
  """Forward counts of Mr. X's paths consistent with the public record.

  Returns a list of layers (counts, step): counts maps a station to
  the number of consistent paths ending there after each of Mr. X's moves
  (layer 0: the start); step maps a station to the stations the move could
  have reached from it.
  """
  detectives = list(rules.detective_starts)
  mrx_tickets = list(rules.mrx_tickets)
  counts = {s: 1 for s in starts}
  layers = []
  for position, event in enumerate(events):
    kind = event[0]
    if kind == "x":
      _, ticket, _, revealed = event
      step: dict[int, tuple[int, ...]] = {}
      new: dict[int, int] = {}
      for p, c in counts.items():
        reach = set()
        for j, t in rules.adjacency[p]:
          if j in detectives:
            continue
          if (t == ticket and t != FERRY) or ticket == BLACK:
            if revealed < 0 or j == revealed:
              reach.add(j)
        step[p] = tuple(sorted(reach))
        for j in reach:
          new[j] = new.get(j, 0) + c
      layers.append((counts, step))
      counts = new
      mrx_tickets[ticket] -= 1
    elif kind == "d":
      _, k, ticket, dest = event
      detectives[k] = dest
      if rules.tickets_to_mrx:
        mrx_tickets[ticket] += 1
      caught = (position + 1 < len(events) and
                events[position + 1] == ("end", CAUGHT))
      if not caught:
        counts = {p: c for p, c in counts.items() if p not in detectives}
    elif kind == "end":
      outcome = event[1]
      if outcome == CAUGHT:
        counts = {p: c for p, c in counts.items() if p in detectives}
      elif outcome == MRX_STUCK:
        counts = {p: c for p, c in counts.items()
                  if not rules.mrx_moves(p, mrx_tickets, detectives)}
  if at_mrx_decision:
    counts = {p: c for p, c in counts.items()
              if rules.mrx_moves(p, mrx_tickets, detectives)}
  layers.append((counts, None))
  return layers


# --- Observations -------------------------------------------------------------


def _event_string(rules: Rules, event: tuple, show_mrx: bool) -> str:
  kind = event[0]
  if kind == "start":
    return f"X@{rules.label(event[1])}" if show_mrx else "X@?"
  if kind == "double":
    return "X:double"
  if kind == "x":
    _, ticket, dest, revealed = event
    text = f"X:{TICKETS[ticket]}"
    if show_mrx:
      return text + f"@{rules.label(dest)}"
    if revealed >= 0:
      return text + f"@{rules.label(revealed)}!"
    return text
  if kind == "d":
    _, k, ticket, dest = event
    return f"D{k + 1}:{TICKETS[ticket]}@{rules.label(dest)}"
  return f"[{_OUTCOME_TEXT[event[1]]}]"


def _history_string(state: ScotlandYardState, public: bool, mrx: bool) -> str:
  """Perfect-recall string: the set-up, then the public (and, with `mrx`,
  Mr. X's private) record."""
  rules = state.rules
  parts = []
  if public:
    parts.append("D@" + "/".join(str(rules.label(s))
                                 for s in rules.detective_starts))
    if not rules.chance:
      parts.append(f"X@{rules.label(rules.mrx_start[0])}")
  for event in state.events:
    if event[0] in ("d", "double", "end") and not public:
      continue
    if event[0] == "x" and not public and not mrx:
      continue
    if event[0] == "start" and not (mrx or public):
      continue
    parts.append(_event_string(rules, event, mrx))
  return " ".join(parts)


def _to_move(state: ScotlandYardState) -> str:
  if state.outcome != ONGOING:
    return _OUTCOME_TEXT[state.outcome]
  if state.turn == -1:
    return "chance"
  if state.turn == 0:
    return "Mr. X (double)" if state.pending == 2 else "Mr. X"
  return f"D{state.turn}"


def _situation_string(state: ScotlandYardState, public: bool, mrx: bool
                      ) -> str:
  """Non-recall string: what is on the board now."""
  rules = state.rules
  parts = []
  if public:
    parts.append(f"round {len(state.log)}/{rules.max_rounds}")
    parts.append(f"to move: {_to_move(state)}")
    for k, s in enumerate(state.detectives):
      t = state.detective_tickets[k]
      parts.append(f"D{k + 1}@{rules.label(s)} (t{t[0]} b{t[1]} u{t[2]})")
    t = state.mrx_tickets
    parts.append(f"X tickets (t{t[0]} b{t[1]} u{t[2]} k{t[3]} "
                 f"d{state.doubles})")
    log = []
    for ticket, revealed, double in state.log:
      text = TICKETS[ticket] + ("*" if double else "")
      if revealed >= 0:
        text += f"@{rules.label(revealed)}"
      log.append(text)
    parts.append("log: " + (" ".join(log) if log else "-"))
  if state.mrx >= 0 and (mrx or (public and state.outcome == CAUGHT)):
    parts.append(f"X@{rules.label(state.mrx)}")
  return ", ".join(parts)


class ScotlandYardObserver:
  """Tensors and strings for every IIGObservationType (see module doc).

  Public pieces (public_info): round, to_move, outcome, detective positions
  and tickets, Mr. X's tickets, the travel log (tickets, double-move flags,
  revealed stations), a double-move-pending flag and, with perfect recall,
  every detective move. Private pieces (Mr. X's, shown to player 0 with
  SINGLE_PLAYER and to both with ALL_PLAYERS): his station and, with perfect
  recall, his path.
  """

  def __init__(self, rules: Rules, iig_obs_type, params):
    if params:
      raise ValueError(f"scotland_yard: observation parameters are not "
                       f"supported; passed {params}")
    self.rules = rules
    self.public = bool(iig_obs_type.public_info)
    self.recall = bool(iig_obs_type.perfect_recall)
    self.private = iig_obs_type.private_info
    n, d, r = rules.num_stations, rules.num_detectives, rules.max_rounds
    pieces = []
    if self.public:
      pieces += [("round", r + 1, (r + 1,)),
                 ("to_move", d + 1, (d + 1,)),
                 ("double_pending", 1, (1,)),
                 ("outcome", 2, (2,)),
                 ("detective_positions", d * n, (d, n)),
                 ("detective_tickets", d * 3, (d, 3)),
                 ("mrx_tickets", 5, (5,)),
                 ("log_tickets", r * 4, (r, 4)),
                 ("log_double", r, (r,)),
                 ("log_revealed", r * n, (r, n))]
      if self.recall:
        pieces.append(("detective_moves", r * d * (n + 3), (r, d, n + 3)))
    if self.private != pyspiel.PrivateInfoType.NONE:
      pieces.append(("mrx_position", n, (n,)))
      if self.recall:
        pieces.append(("mrx_path", (r + 1) * n, (r + 1, n)))
    size = sum(p[1] for p in pieces)
    self.tensor = np.zeros(size, np.float32)
    self.dict = {}
    offset = 0
    for name, length, shape in pieces:
      self.dict[name] = self.tensor[offset:offset + length].reshape(shape)
      offset += length

  def _shows_mrx(self, player: int) -> bool:
    if self.private == pyspiel.PrivateInfoType.ALL_PLAYERS:
      return True
    return self.private == pyspiel.PrivateInfoType.SINGLE_PLAYER and player == 0

  def set_from(self, state: ScotlandYardState, player: int) -> None:
    self.tensor.fill(0.0)
    rules = state.rules
    d = self.dict
    if self.public:
      d["round"][len(state.log)] = 1.0
      if state.outcome == ONGOING and state.turn >= 0:
        d["to_move"][state.turn] = 1.0
      d["double_pending"][0] = float(state.in_double)
      if state.outcome != ONGOING:
        d["outcome"][0 if state.outcome in _MRX_WINS else 1] = 1.0
      for k, s in enumerate(state.detectives):
        d["detective_positions"][k, s] = 1.0
        d["detective_tickets"][k] = state.detective_tickets[k]
      d["mrx_tickets"][:4] = state.mrx_tickets
      d["mrx_tickets"][4] = state.doubles
      for i, (ticket, revealed, double) in enumerate(state.log):
        d["log_tickets"][i, ticket] = 1.0
        d["log_double"][i] = float(double)
        if revealed >= 0:
          d["log_revealed"][i, revealed] = 1.0
      if state.outcome == CAUGHT:
        d["log_revealed"][len(state.log) - 1, state.mrx] = 1.0
      if self.recall:
        entries = 0
        for event in state.events:
          if event[0] == "x":
            entries += 1
          elif event[0] == "d":
            _, k, ticket, dest = event
            d["detective_moves"][entries - 1, k, dest] = 1.0
            d["detective_moves"][entries - 1, k, rules.num_stations +
                                 ticket] = 1.0
    if self.private != pyspiel.PrivateInfoType.NONE and self._shows_mrx(player):
      if state.mrx >= 0:
        d["mrx_position"][state.mrx] = 1.0
      if self.recall:
        for i, s in enumerate(state.path):
          d["mrx_path"][i, s] = 1.0

  def string_from(self, state: ScotlandYardState, player: int) -> str:
    mrx = (self.private != pyspiel.PrivateInfoType.NONE and
           self._shows_mrx(player))
    if self.recall:
      return _history_string(state, self.public, mrx)
    return _situation_string(state, self.public, mrx)


pyspiel.register_game(_GAME_TYPE, ScotlandYardGame)
