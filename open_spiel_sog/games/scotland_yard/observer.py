"""Scotland Yard's observations: the information-state and observation
tensors and strings of every `IIGObservationType`, and the strings of a
state (`situation_string`). The states are `game.ScotlandYardState`s."""

from __future__ import annotations

import numpy as np
import pyspiel

from open_spiel_sog.games.scotland_yard.maps import TICKETS
from open_spiel_sog.games.scotland_yard.rules import CAUGHT
from open_spiel_sog.games.scotland_yard.rules import MRX_WINS
from open_spiel_sog.games.scotland_yard.rules import ONGOING
from open_spiel_sog.games.scotland_yard.rules import OUTCOME_TEXT
from open_spiel_sog.games.scotland_yard.rules import Rules
from open_spiel_sog.games.scotland_yard.rules import SharedTuple


def _event_string(rules: Rules, event: tuple, show_mrx: bool) -> str:
  kind = event[0]
  if kind == "dstart":
    return f"D{event[1] + 1}@{rules.label(event[2])}"
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
  return f"[{OUTCOME_TEXT[event[1]]}]"


def _history_string(state: pyspiel.State, public: bool, mrx: bool) -> str:
  """Perfect-recall string: the set-up, then the public (and, with `mrx`,
  Mr. X's private) record. Kept on the state for its events so far
  (`_strings`: (public, mrx, events, text) rows), so that a child's string
  extends its parent's (a state's events only grow, and clones share the
  rows: `SharedTuple`)."""
  rules = state.rules
  events = state.events
  cached = state.__dict__.get("_strings", ())
  start, parts = 0, []
  for row in cached:
    if row[0] == public and row[1] == mrx and row[2] <= len(events):
      start, parts = row[2], ([row[3]] if row[3] else [])
      break
  else:
    if public and not rules.drawn:
      parts.append("D@" + "/".join(str(rules.label(s))
                                   for s in rules.detective_starts))
    if public:
      if not rules.chance:
        parts.append(f"X@{rules.label(rules.mrx_start[0])}")
  for event in events[start:]:
    if event[0] in ("dstart", "d", "double", "end") and not public:
      continue
    if event[0] == "x" and not public and not mrx:
      continue
    if event[0] == "start" and not (mrx or public):
      continue
    parts.append(_event_string(rules, event, mrx))
  text = " ".join(parts)
  state._strings = SharedTuple(  # pylint: disable=protected-access
      [(public, mrx, len(events), text)] +
      [row for row in cached if row[0] != public or row[1] != mrx])
  return text


def _to_move(state: pyspiel.State) -> str:
  if state.outcome != ONGOING:
    return OUTCOME_TEXT[state.outcome]
  if state.turn == -1:
    return "chance"
  if state.turn == 0:
    return "Mr. X (double)" if state.pending == 2 else "Mr. X"
  return f"D{state.turn}"


def situation_string(state: pyspiel.State, public: bool, mrx: bool
                      ) -> str:
  """Non-recall string: what is on the board now."""
  rules = state.rules
  parts = []
  if public:
    parts.append(f"round {len(state.log)}/{rules.max_rounds}")
    parts.append(f"to move: {_to_move(state)}")
    for k, s in enumerate(state.detectives):
      t = state.detective_tickets[k]
      at = rules.label(s) if s >= 0 else "?"
      parts.append(f"D{k + 1}@{at} (t{t[0]} b{t[1]} u{t[2]})")
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
  every detective move and, where the detectives draw their starts, those
  starts (`detective_starts`). Private pieces (Mr. X's, shown to player 0 with
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
        if rules.drawn:
          pieces.append(("detective_starts", d * n, (d, n)))
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

  def set_from(self, state: pyspiel.State, player: int) -> None:
    self.tensor.fill(0.0)
    rules = state.rules
    d = self.dict
    if self.public:
      d["round"][len(state.log)] = 1.0
      if state.outcome == ONGOING and state.turn >= 0:
        d["to_move"][state.turn] = 1.0
      d["double_pending"][0] = float(state.in_double)
      if state.outcome != ONGOING:
        d["outcome"][0 if state.outcome in MRX_WINS else 1] = 1.0
      for k, s in enumerate(state.detectives):
        if s >= 0:
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
          elif event[0] == "dstart":
            d["detective_starts"][event[1], event[2]] = 1.0
    if self.private != pyspiel.PrivateInfoType.NONE and self._shows_mrx(player):
      if state.mrx >= 0:
        d["mrx_position"][state.mrx] = 1.0
      if self.recall:
        for i, s in enumerate(state.path):
          d["mrx_path"][i, s] = 1.0

  def string_from(self, state: pyspiel.State, player: int) -> str:
    mrx = (self.private != pyspiel.PrivateInfoType.NONE and
           self._shows_mrx(player))
    if self.recall:
      return _history_string(state, self.public, mrx)
    return situation_string(state, self.public, mrx)
