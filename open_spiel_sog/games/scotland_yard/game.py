"""Scotland Yard's game and state (OpenSpiel's API), and the detectives'
resampling of Mr. X's path: the Python game, registered by `native.register`
as ``python_scotland_yard`` (and as ``scotland_yard`` where the C++ twin,
`_native/scotland_yard.h`, cannot be)."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pyspiel

from open_spiel_sog.games.scotland_yard.maps import BLACK
from open_spiel_sog.games.scotland_yard.maps import FERRY
from open_spiel_sog.games.scotland_yard.maps import load_map
from open_spiel_sog.games.scotland_yard.maps import TICKETS
from open_spiel_sog.games.scotland_yard.observer import ScotlandYardObserver
from open_spiel_sog.games.scotland_yard.observer import situation_string
from open_spiel_sog.games.scotland_yard.rules import CAUGHT
from open_spiel_sog.games.scotland_yard.rules import DETECTIVES_STUCK
from open_spiel_sog.games.scotland_yard.rules import MRX_STUCK
from open_spiel_sog.games.scotland_yard.rules import MRX_WINS
from open_spiel_sog.games.scotland_yard.rules import ONGOING
from open_spiel_sog.games.scotland_yard.rules import Rules
from open_spiel_sog.games.scotland_yard.rules import SharedTuple
from open_spiel_sog.games.scotland_yard.rules import split_list
from open_spiel_sog.games.scotland_yard.rules import SURVIVED

# Game parameters: -1 / "" take the map's value.
DEFAULT_PARAMS = {
    "map": "glasses",
    "max_rounds": -1,
    "mrx_start": "",
    "detective_starts": "",
    "detective_start_cards": "",
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

PYTHON_NAME = "python_scotland_yard"


def game_type(short_name: str = PYTHON_NAME) -> pyspiel.GameType:
  """The game's type under `short_name` (the C++ twin declares the same)."""
  return pyspiel.GameType(
      short_name=short_name,
      long_name="Scotland Yard (open_spiel_sog)",
      dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
      # Deterministic unless `mrx_start` lists several stations or the
      # detectives draw their starts (`detective_start_cards`).
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
      parameter_specification=DEFAULT_PARAMS)


_LIST_PARAMS = ("mrx_start", "detective_starts", "detective_start_cards",
                "reveal_rounds")


def _canonical_list(text: str) -> str:
  """The form of a list parameter that OpenSpiel's game-string parser reads
  back as a string: '/'-separated, with a trailing '/' for a single item
  (a bare '6' would be read as an integer)."""
  parts = split_list(text)
  if len(parts) == 1 and parts[0].lower() == "none":
    return "none"
  return "/".join(parts) + ("/" if len(parts) == 1 else "")


def resolve(params: Mapping[str, Any] | None) -> tuple[dict[str, Any], Rules]:
  """(the game's parameters, every one given, lists in canonical form; its
  resolved set-up). ValueError naming the first problem; the C++ twin's
  games are resolved here too (`native.py`)."""
  params = dict(DEFAULT_PARAMS, **(params or {}))
  unknown = sorted(set(params) - set(DEFAULT_PARAMS))
  if unknown:
    raise ValueError(f"scotland_yard: unknown parameter(s) "
                     f"{', '.join(unknown)}; supported: "
                     f"{', '.join(DEFAULT_PARAMS)}")
  rules = Rules(load_map(str(params["map"])), params)
  for key in _LIST_PARAMS:
    params[key] = _canonical_list(params[key])
  return params, rules


class ScotlandYardGame(pyspiel.Game):
  """Scotland Yard: Mr. X (player 0) against the detectives (player 1).

  `short_name`: the name it is registered under (`python_scotland_yard`, or
  `scotland_yard` where the C++ twin is not registered)."""

  def __init__(self, params: Mapping[str, Any] | None = None,
               short_name: str = PYTHON_NAME):
    params, rules = resolve(params)
    self.rules = rules
    max_length = (rules.max_rounds * (1 + rules.num_detectives) +
                  min(rules.doubles, rules.max_rounds))
    game_info = pyspiel.GameInfo(
        num_distinct_actions=rules.num_actions,
        max_chance_outcomes=rules.num_stations if rules.chance_nodes else 0,
        num_players=2,
        min_utility=-1.0,
        max_utility=1.0,
        utility_sum=0.0,
        max_game_length=max_length)
    super().__init__(game_type(short_name), game_info, params)

  def new_initial_state(self) -> "ScotlandYardState":
    return ScotlandYardState(self)

  def make_py_observer(self, iig_obs_type=None, params=None):
    return ScotlandYardObserver(
        self.rules,
        iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False),
        params)

  def max_chance_nodes_in_history(self) -> int:
    return self.rules.chance_nodes

  # --- The network's compact encoding (DESIGN.md section 17) -------------------

  def compact_infostate_shape(self) -> list[int]:
    """The width of `compact_infostate_tensor` (1,223 on London)."""
    r = self.rules
    n, d = r.num_stations, r.num_detectives
    return [1 + n + d * n + d * 3 + 5 + (1 + d) + 1 + 1]

  def compact_infostate_tensor(self, state: "ScotlandYardState",
                               player: int) -> np.ndarray:
    """A player's infostate at `state` as SoG's Scotland Yard network reads
    it (Table S1), in place of the information state tensor (36,354
    entries on London): whose infostate it is (1 + stations: entry 0 for
    the detectives, whose positions are always certain, else 1 + Mr. X's
    station: the belief's entry), each detective's station one-hot
    (detectives x stations), the detectives' tickets (detectives x 3), Mr.
    X's tickets (taxi, bus, underground, black, double moves), who moves
    next (Mr. X, then each detective), whether a double move was just used,
    and the share of the rounds played. Counts are divided by the starting
    numbers (at least 1)."""
    r = self.rules
    n, d = r.num_stations, r.num_detectives
    out = np.zeros(self.compact_infostate_shape()[0], dtype=np.float32)
    if player == 0 and state.mrx >= 0:
      out[1 + state.mrx] = 1.0
    elif player != 0:
      out[0] = 1.0
    at = 1 + n
    for k, station in enumerate(state.detectives):
      if station >= 0:
        out[at + k * n + station] = 1.0
    at += d * n
    start = np.maximum(np.asarray(r.detective_tickets, dtype=np.float32), 1)
    for k, tickets in enumerate(state.detective_tickets):
      out[at + 3 * k:at + 3 * k + 3] = np.asarray(tickets[:3]) / start[:3]
    at += 3 * d
    mrx_start = np.maximum(np.asarray(list(r.mrx_tickets) + [r.doubles],
                                      dtype=np.float32), 1)
    out[at:at + 5] = np.asarray(list(state.mrx_tickets) + [state.doubles]
                                ) / mrx_start
    at += 5
    if state.outcome == ONGOING and state.turn >= 0:
      out[at + state.turn] = 1.0
    at += 1 + d
    out[at] = float(state.in_double)
    out[at + 1] = len(state.log) / max(r.max_rounds, 1)
    return out


class ScotlandYardState(pyspiel.State):
  """A Scotland Yard state. Attributes are immutable (tuples), so clones are
  cheap; `events` is the game so far, with Mr. X's hidden destinations."""

  def __init__(self, game: ScotlandYardGame):
    super().__init__(game)
    rules = game.rules
    self.rules = rules
    self.mrx = -1 if rules.chance else rules.mrx_start[0]
    # With drawn starts, -1 until the detective's card is drawn; `placed`:
    # the detectives whose start is known.
    self.detectives = SharedTuple((-1,) * rules.num_detectives if rules.drawn
                                  else rules.detective_starts)
    self.placed = 0 if rules.drawn else rules.num_detectives
    self.detective_tickets = SharedTuple(
        (rules.detective_tickets,) * rules.num_detectives)
    self.mrx_tickets = SharedTuple(rules.mrx_tickets)
    self.doubles = rules.doubles
    # Travel log: (ticket, revealed station or -1, part of a double move).
    self.log: tuple[tuple[int, int, bool], ...] = SharedTuple()
    self.path: tuple[int, ...] = SharedTuple(
        () if rules.chance else (self.mrx,))
    # Whose turn: -1 chance, 0 Mr. X, 1 + k detective k; pending Mr. X moves.
    self.turn = -1 if rules.chance_nodes else 0
    self.pending = 1
    self.in_double = False
    self.outcome = ONGOING
    # Public and private record: ("dstart", k, s) (detective k's drawn
    # start, public) | ("start", s) (Mr. X's, hidden) | ("double",) |
    # ("x", ticket, dest, revealed) | ("d", k, ticket, dest) | ("end", outcome)
    self.events: tuple[tuple, ...] = SharedTuple()

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
    return [1.0, -1.0] if self.outcome in MRX_WINS else [-1.0, 1.0]

  def chance_outcomes(self) -> list[tuple[int, float]]:
    # The detectives' cards first, each uniform over those left; then Mr.
    # X's start, uniform over his starts that no detective holds.
    if self.placed < self.rules.num_detectives:
      starts = self.rules.card_choices(self.detectives[:self.placed])
    else:
      starts = self.rules.mrx_start_choices(self.detectives)
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
    if self.turn == -1 and self.placed < rules.num_detectives:
      k = self.placed
      positions = list(self.detectives)
      positions[k] = action
      self.detectives = SharedTuple(positions)
      self.placed = k + 1
      self.events = SharedTuple((*self.events, ("dstart", k, action)))
      if self.placed == rules.num_detectives and not rules.chance:
        self._start_mrx_turn()
      return
    if self.turn == -1:
      self.mrx = action
      self.path = SharedTuple((action,))
      self.events = SharedTuple((*self.events, ("start", action)))
      self._start_mrx_turn()
      return
    if self.turn == 0:
      if action == rules.double_action:
        self.doubles -= 1
        self.pending = 2
        self.in_double = True
        self.events = SharedTuple((*self.events, ("double",)))
        return
      ticket, dest = divmod(action, n)
      tickets = list(self.mrx_tickets)
      tickets[ticket] -= 1
      self.mrx_tickets = SharedTuple(tickets)
      self.mrx = dest
      entry = len(self.log) + 1
      revealed = dest if entry in rules.reveal_rounds else -1
      self.log = SharedTuple((*self.log, (ticket, revealed, self.in_double)))
      self.path = SharedTuple((*self.path, dest))
      self.events = SharedTuple((*self.events, ("x", ticket, dest, revealed)))
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
    self.detectives = SharedTuple(positions)
    own = list(self.detective_tickets[k])
    own[ticket] -= 1
    tickets = list(self.detective_tickets)
    tickets[k] = tuple(own)
    self.detective_tickets = SharedTuple(tickets)
    if rules.tickets_to_mrx:
      mrx_tickets = list(self.mrx_tickets)
      mrx_tickets[ticket] += 1
      self.mrx_tickets = SharedTuple(mrx_tickets)
    self.events = SharedTuple((*self.events, ("d", k, ticket, dest)))
    if dest == self.mrx:
      self._end(CAUGHT)
      return
    self._next_detective(k + 1)

  def _end(self, outcome: int) -> None:
    self.outcome = outcome
    self.events = SharedTuple((*self.events, ("end", outcome)))

  def _start_mrx_turn(self) -> None:
    self.turn = 0
    self.pending = 1
    if not self.rules.mrx_moves(self.mrx, self.mrx_tickets, self.detectives):
      self._end(MRX_STUCK)

  def _start_detectives_turn(self) -> None:
    rules = self.rules
    if not any(rules.detective_can_move(k, self.detectives,
                                        self.detective_tickets)
               for k in range(rules.num_detectives)):
      self._end(DETECTIVES_STUCK)
      return
    self._next_detective(0)

  def _next_detective(self, k: int) -> None:
    rules = self.rules
    while k < rules.num_detectives:
      if rules.detective_can_move(k, self.detectives, self.detective_tickets):
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
      if self.placed < rules.num_detectives:
        return f"D{self.placed + 1} starts at {rules.label(action)}"
      return f"Mr. X starts at {rules.label(action)}"
    if action == rules.double_action:
      return "double move"
    ticket, dest = divmod(action, n)
    if not 0 <= ticket < 4 or not 0 <= dest < n:
      return f"invalid action {action}"
    return f"{TICKETS[ticket]} to {rules.label(dest)}"

  def __str__(self) -> str:
    return situation_string(self, public=True, mrx=True)

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
        # The detectives' drawn starts are public: only Mr. X's is redrawn.
        state.apply_action(action if state.placed < rules.num_detectives
                           else path[0])
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
  have reached from it. With drawn starts, each detective's draw takes his
  station out of Mr. X's possible starts (Mr. X draws after them).
  """
  detectives = (list(rules.detective_starts) if not rules.drawn
                else [-1] * rules.num_detectives)
  mrx_tickets = list(rules.mrx_tickets)
  counts = {s: 1 for s in starts}
  layers = []
  for position, event in enumerate(events):
    kind = event[0]
    if kind == "dstart":
      _, k, station = event
      detectives[k] = station
      counts = {p: c for p, c in counts.items() if p != station}
    elif kind == "x":
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

