"""Scotland Yard's maps: the JSON files, their validation and the board's
transports and tickets.

A map (`open_spiel_sog/games/maps/*.json`, or any path) holds stations (a
list of ids), edges ``[a, b, transport]`` (undirected) and the set-up
defaults (start stations, tickets, round limit, reveal rounds); `load_map`
reads one by name or path and `parse_map` validates it into a
`ScotlandYardMap`, raising a ValueError that names the map and the first
problem.
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any, Mapping, Sequence

TRANSPORTS = ("taxi", "bus", "underground", "ferry")
TICKETS = ("taxi", "bus", "underground", "black")
TAXI, BUS, UNDERGROUND, FERRY = range(4)
BLACK = 3
DETECTIVE_TICKETS = TICKETS[:3]
MRX_TICKETS = TICKETS + ("double",)

# The maps ship beside this package, in open_spiel_sog/games/maps/.
MAPS_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "maps")

_MAP_KEYS = ("name", "description", "source", "license", "stations", "edges",
             "mrx_start", "detective_starts", "detective_start_cards",
             "detective_tickets",
             "mrx_tickets", "tickets_to_mrx", "max_rounds", "reveal_rounds")


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
    detective_start_cards: station indices of the start cards the
      detectives draw from (empty: they start on `detective_starts`).
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
  detective_start_cards: tuple[int, ...] = ()
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
  cards = _int_list(name, "detective_start_cards",
                    data.get("detective_start_cards", []))
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
                             for s in detective_starts),
      detective_start_cards=tuple(result.index(s, "detective start card")
                                  for s in cards))


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
