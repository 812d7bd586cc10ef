"""Nijssen and Winands' MCTS for Scotland Yard, registered as
"scotland_yard_mcts": the PimBot-style baseline of the Student of Games
paper's London experiment (issue 72).

Sources: J.A.M. Nijssen and M.H.M. Winands, "Monte-Carlo Tree Search for the
Game of Scotland Yard", IEEE CIG 2011 (here "CIG'11"), and J.A.M. Nijssen's
PhD thesis, "Monte-Carlo Tree Search for Multi-Player Games" (Maastricht,
2013), chapter 7, the extended TCIAIG 2012 paper ("thesis"). The figures
quoted are in ../shared/research/scotland_yard.md, section 1.

    bot = pyspiel.load_bot("scotland_yard_mcts", game, player,
                           {"playouts": 1000, "coalition_reduction": 0.4})

The search (thesis section 7.2):

  * One tree, its nodes keyed by the action sequence from the root, over
    determinizations (SO-ISMCTS with availability counts: a child's
    exploration term counts the visits in which it was legal). The
    detectives' determinization puts Mr. X on one of his possible locations,
    the exact set that the public travel log allows (CIG'11 Algorithm 1),
    drawn once per playout; Mr. X knows where he is and searches the one
    world.
  * UCT with C = 0.5 for both sides (thesis 7.4.1) plus Progressive History
    with W = 5 (thesis 7.4.1; `progressive_history`); the move played is the
    most visited child ("robust max child").
  * Each seeker is a player of its own in the tree: a node where detective k
    moves maximises detective k's reward (max^n over the coalition).
  * epsilon-greedy playouts (thesis Table 7.3, its best pairings): Mr. X
    moves to the destination farthest from his closest detective (MCD); in
    the detectives' search a detective moves to the destination closest to
    the determinized Mr. X (CAL, pairing "MC"), in Mr. X's search to the
    one with the least total distance to Mr. X's possible locations (MTD,
    pairing "MM": the simulated detectives do not know where he is); with
    probability epsilon (0.1 for Mr. X, 0.2 for the detectives) a uniformly
    random legal move.
  * Coalition reduction (thesis 7.3.3; CIG'11 IV-C): a detective scores 1
    when he catches Mr. X, 1 - r when another detective does, 0 when Mr. X
    wins; Mr. X scores 1 when he wins, else 0.
  * Location categorization (thesis 7.2.3): the determinization draws a
    possible location l with probability w_c(l) / sum_m w_c(m), c(l) the
    minimum distance from l to a detective (1, 2, 3, 4, 5 or more), w the
    general table of `LC_WEIGHTS` (one-step roulette selection).
  * Move filtering (CIG'11 IV-D): Mr. X uses no black ticket in the first two
    rounds, none in a round where he surfaces, and none while every possible
    location has taxi edges only (the detectives would know the ticket
    anyway), unless black tickets are all that is left.

Distances are shortest paths over the taxi, bus and underground edges (the
ones detectives can travel; no tickets counted), computed once per map.

The search runs in C++ (`_native/scotland_yard_mcts.h`) where the shim loads,
else in Python (`PythonEngine`, its line-for-line twin): given the same seed
and playout count both return the same visit counts
(tests/scotland_yard_mcts_test.py). The C++ search releases the GIL.

Parameters (all optional):
  playouts (-1: auto): playouts per move; -1 is 10,000 (thesis 7.4.1)
    without time_limit, no cap with it.
  time_limit (0.0): seconds per move (0: off).
  seed (0): seed of the search (SplitMix64); a counted search repeats
    exactly.
  uct_c (0.5): UCT's exploration constant (thesis 7.4.1).
  progressive_history (5.0): Progressive History's W (thesis 7.4.1; 0: off).
  coalition_reduction (0.1): r (thesis Table 7.11's program; Table 7.10 best
    r by budget: 0.4 at 1,000 playouts, 0.2 at 2,500); 0: off.
  epsilon (-1.0): the playouts' random-move probability; -1 takes the
    thesis' 0.1 for Mr. X and 0.2 for the detectives; 1: uniform playouts.
  location_categorization (True): draw determinizations by `LC_WEIGHTS`
    (False: uniformly over the possible locations, CIG'11 Algorithm 1).
  black_ticket_filter (True): Mr. X's move filtering.
  mrx_search_detectives ("mtd"): the detectives' playout policy in Mr. X's
    search: "mtd" (thesis Table 7.3's "MM" hider) or "cal" (they chase
    where he really is).
  backend ("auto"): "cpp", "python" or "auto" (C++ where the shim loads).

The module passes 600 lines because it holds the whole Python twin of
`_native/scotland_yard_mcts.h` (the board's distances, the possible-location
set, the move filter, the playout policies, the tree) beside the bot: the
tests hold each piece to its C++ counterpart, draw for draw.
"""

from __future__ import annotations

import collections
import math
import time
from typing import Any, Mapping, Sequence

import pyspiel

from open_spiel_sog import _native
from open_spiel_sog.bots import common
from open_spiel_sog.games.scotland_yard import native as sy_native
from open_spiel_sog.games.scotland_yard.maps import BLACK
from open_spiel_sog.games.scotland_yard.maps import FERRY
from open_spiel_sog.games.scotland_yard.maps import TAXI
from open_spiel_sog.games.scotland_yard.rules import Rules

NAME = "scotland_yard_mcts"
GAMES = ("scotland_yard", "python_scotland_yard")

DEFAULTS: dict[str, Any] = {
    "playouts": -1,
    "time_limit": 0.0,
    "seed": 0,
    "uct_c": 0.5,
    "progressive_history": 5.0,
    "coalition_reduction": 0.1,
    "epsilon": -1.0,
    "location_categorization": True,
    "black_ticket_filter": True,
    "mrx_search_detectives": "mtd",
    "backend": "auto",
}

# playouts=-1 without time_limit (thesis 7.4.1: 10,000 playouts a move).
DEFAULT_PLAYOUTS = 10_000
# The thesis' epsilon-greedy playouts (7.4.1): Mr. X, the detectives.
EPSILON_MRX = 0.1
EPSILON_DETECTIVES = 0.2

# Location categorization's general table: w_c for the minimum distance c =
# 1, 2, 3, 4, 5+ from a possible location to the nearest detective, the
# share of possible locations of category c that held Mr. X. Measured by
# benchmarks/scotland_yard_lc_table.py in 100 games of this bot's self-play
# on London at 1,000 playouts with location categorization off
# (results/scotland_yard/scotland_yard_lc_table_2026-12-06.json), as the
# thesis measures its own (section 7.2.3, Table 7.1), whose values we do
# not have.
LC_WEIGHTS = (0.04278, 0.08536, 0.05623, 0.04704, 0.03150)
NUM_CATEGORIES = 5

# Outcomes (rules.py).
ONGOING, CAUGHT, MRX_STUCK, SURVIVED, DETECTIVES_STUCK = range(5)

_MASK64 = (1 << 64) - 1


class SplitMix64:
  """The shim's generator (rollouts.h), so that the C++ and Python searches
  draw the same numbers."""

  def __init__(self, state: int):
    self.state = state & _MASK64

  def next(self) -> int:
    self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK64
    z = self.state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)

  def uniform(self) -> float:
    return (self.next() >> 11) * 2.0**-53


def seed_state(seed: int) -> int:
  """The generator's starting state for a bot's seed."""
  return (seed * 0x9E3779B97F4A7C15 + 0x5C07_1A4D) & _MASK64


# ---------------------------------------------------------------------------
# The map: distances and masks (once per map).


class Board:
  """What the search reads of a game's set-up, precomputed once: the rules,
  shortest-path distances over the detectives' edges (BFS, tickets
  ignored), and per station and ticket the stations one move reaches, as
  bit masks (for the possible-location set)."""

  def __init__(self, rules: Rules):
    self.rules = rules
    n = self.n = rules.num_stations
    self.num_detectives = rules.num_detectives
    self.reveal = frozenset(rules.reveal_rounds)
    self.dist = bfs_distances(rules)
    # reach[ticket][p]: stations that `ticket` takes Mr. X to from p.
    self.reach = [[0] * n for _ in range(4)]
    self.taxi_only = 0
    for p in range(n):
      only_taxi = True
      for j, t in rules.adjacency[p]:
        if t != FERRY:
          self.reach[t][p] |= 1 << j
        self.reach[BLACK][p] |= 1 << j
        if t != TAXI:
          only_taxi = False
      if only_taxi:
        self.taxi_only |= 1 << p


def bfs_distances(rules: Rules) -> list[list[int]]:
  """[N][N] shortest paths over taxi, bus and underground edges (ferries
  left out: detectives cannot take them); N where unreachable."""
  n = rules.num_stations
  out = []
  for s in range(n):
    d = [n] * n
    d[s] = 0
    frontier = [s]
    while frontier:
      nxt = []
      for p in frontier:
        for j, t in rules.adjacency[p]:
          if t != FERRY and d[j] == n:
            d[j] = d[p] + 1
            nxt.append(j)
      frontier = nxt
    out.append(d)
  return out


def stations_of(mask: int) -> list[int]:
  """The set bits of `mask`, ascending."""
  out = []
  while mask:
    low = mask & -mask
    out.append(low.bit_length() - 1)
    mask ^= low
  return out


# ---------------------------------------------------------------------------
# The rules as the search plays them.


class SimState:
  """A Scotland Yard position as the search plays it (the game's rules,
  game.py, without its records), with the detectives' possible-location
  set of Mr. X (`possible`, a bit mask) kept from the public moves alone."""

  __slots__ = ("board", "mrx", "det", "det_tickets", "mrx_tickets", "doubles",
               "log_len", "turn", "pending", "in_double", "outcome",
               "catcher", "possible", "placed")

  def __init__(self, board: Board):
    r = board.rules
    self.board = board
    self.mrx = -1
    self.det = list(r.detective_starts) if not r.drawn else (
        [-1] * r.num_detectives)
    self.placed = 0 if r.drawn else r.num_detectives
    self.det_tickets = [list(r.detective_tickets)
                        for _ in range(r.num_detectives)]
    self.mrx_tickets = list(r.mrx_tickets)
    self.doubles = r.doubles
    self.log_len = 0
    self.turn = -1  # -1 chance, 0 Mr. X, 1 + k detective k
    self.pending = 1
    self.in_double = False
    self.outcome = ONGOING
    self.catcher = -1
    self.possible = 0

  def clone(self) -> "SimState":
    c = SimState.__new__(SimState)
    c.board = self.board
    c.mrx = self.mrx
    c.det = list(self.det)
    c.det_tickets = [list(t) for t in self.det_tickets]
    c.mrx_tickets = list(self.mrx_tickets)
    c.doubles = self.doubles
    c.log_len = self.log_len
    c.turn = self.turn
    c.pending = self.pending
    c.in_double = self.in_double
    c.outcome = self.outcome
    c.catcher = self.catcher
    c.possible = self.possible
    c.placed = self.placed
    return c

  @classmethod
  def from_history(cls, board: Board, history: Sequence[int]) -> "SimState":
    """The position after `history` (the game's actions from its start)."""
    s = cls(board)
    r = board.rules
    if not r.drawn and not r.chance:
      s.mrx = r.mrx_start[0]
      s.possible = 1 << s.mrx
      s._start_mrx_turn()
    for action in history:
      s.apply(action)
    return s

  # --- Moves --------------------------------------------------------------

  def mrx_moves(self) -> list[int]:
    """Mr. X's moves (sorted), as Rules.mrx_moves."""
    return self.board.rules.mrx_moves(self.mrx, self.mrx_tickets, self.det)

  def legal_actions(self, black_filter: bool) -> list[int]:
    """The legal actions, Mr. X's after move filtering (`black_filter`)."""
    if self.outcome != ONGOING or self.turn < 0:
      return []
    b = self.board
    r = b.rules
    if self.turn == 0:
      moves = self.mrx_moves()
      if black_filter and self.black_filtered():
        kept = [a for a in moves if a // b.n != BLACK]
        if kept:
          moves = kept
      if (self.doubles > 0 and not self.in_double and moves and
          self.log_len + 2 <= r.max_rounds):
        moves.append(r.double_action)
      return moves
    return r.detective_moves(self.turn - 1, self.det, self.det_tickets)

  def black_filtered(self) -> bool:
    """Move filtering (CIG'11 IV-D): whether Mr. X's next travel-log entry
    may not be a black ticket: one of the first two, a surfacing round, or
    every possible location has taxi edges only."""
    entry = self.log_len + 1
    return (entry <= 2 or entry in self.board.reveal or
            self.possible & ~self.board.taxi_only == 0)

  def apply(self, action: int) -> None:
    b = self.board
    r = b.rules
    n = b.n
    if self.turn == -1:
      if self.placed < r.num_detectives:
        self.det[self.placed] = action
        self.placed += 1
        if self.placed == r.num_detectives and not r.chance:
          self.mrx = r.mrx_start[0]
          self.possible = 1 << self.mrx
          self._start_mrx_turn()
        return
      self.mrx = action
      possible = 0
      for s in r.mrx_start_choices(self.det):
        possible |= 1 << s
      self.possible = possible
      self._start_mrx_turn()
      return
    if self.turn == 0:
      if action == r.double_action:
        self.doubles -= 1
        self.pending = 2
        self.in_double = True
        return
      ticket, dest = divmod(action, n)
      self.mrx_tickets[ticket] -= 1
      self.mrx = dest
      self.log_len += 1
      if self.log_len in b.reveal:
        self.possible = 1 << dest
      else:
        occupied = 0
        for p in self.det:
          occupied |= 1 << p
        reach = b.reach[ticket]
        new = 0
        for p in stations_of(self.possible):
          new |= reach[p]
        self.possible = new & ~occupied
      self.pending -= 1
      if self.pending > 0:
        if not r.mrx_moves(self.mrx, self.mrx_tickets, self.det):
          self.outcome = MRX_STUCK
        return
      self.in_double = False
      if not any(r.detective_can_move(k, self.det, self.det_tickets)
                 for k in range(r.num_detectives)):
        self.outcome = DETECTIVES_STUCK
        return
      self._next_detective(0)
      return
    k = self.turn - 1
    ticket, dest = divmod(action, n)
    self.det[k] = dest
    self.det_tickets[k][ticket] -= 1
    if r.tickets_to_mrx:
      self.mrx_tickets[ticket] += 1
    if dest == self.mrx:
      self.outcome = CAUGHT
      self.catcher = k
      return
    self.possible &= ~(1 << dest)
    self._next_detective(k + 1)

  def _start_mrx_turn(self) -> None:
    self.turn = 0
    self.pending = 1
    if not self.mrx_moves():
      self.outcome = MRX_STUCK

  def _next_detective(self, k: int) -> None:
    r = self.board.rules
    while k < r.num_detectives:
      if r.detective_can_move(k, self.det, self.det_tickets):
        self.turn = 1 + k
        return
      k += 1
    if self.log_len >= r.max_rounds:
      self.outcome = SURVIVED
    else:
      self._start_mrx_turn()

  # --- What the search reads --------------------------------------------------

  def possible_locations(self) -> list[int]:
    """Mr. X's possible locations (sorted) as the detectives know them; at
    Mr. X's turn, those he can move from (the game would have ended
    otherwise)."""
    locations = stations_of(self.possible)
    if self.turn == 0 and self.outcome == ONGOING:
      r = self.board.rules
      locations = [p for p in locations
                   if r.mrx_moves(p, self.mrx_tickets, self.det)]
    return locations


def rewards(outcome: int, catcher: int, num_detectives: int,
            r: float) -> list[float]:
  """The playout's rewards [Mr. X, detective 0, ...] (coalition reduction,
  thesis 7.3.3): a detective scores 1 for his own catch, 1 - r for
  another's, 0 when Mr. X wins; when Mr. X is stuck (no catcher) every
  detective scores 1."""
  if outcome in (SURVIVED, DETECTIVES_STUCK):
    return [1.0] + [0.0] * num_detectives
  if outcome == CAUGHT:
    return [0.0] + [1.0 if k == catcher else 1.0 - r
                    for k in range(num_detectives)]
  return [0.0] + [1.0] * num_detectives


def category(board: Board, location: int, detectives: Sequence[int]) -> int:
  """Location categorization's category (0-based): min(distance to the
  nearest detective, 5) - 1."""
  d = min(board.dist[location][p] for p in detectives)
  return min(max(d, 1), NUM_CATEGORIES) - 1


# ---------------------------------------------------------------------------
# The search (Python twin of _native/scotland_yard_mcts.h).


class Config:
  """The search's settings, resolved from the bot's parameters."""

  def __init__(self, values: Mapping[str, Any]):
    self.playouts = int(values["playouts"])  # 0: no cap
    self.time_limit = float(values["time_limit"])
    self.uct_c = float(values["uct_c"])
    self.ph_w = float(values["progressive_history"])
    self.cr = float(values["coalition_reduction"])
    eps = float(values["epsilon"])
    self.eps_mrx = EPSILON_MRX if eps < 0 else eps
    self.eps_det = EPSILON_DETECTIVES if eps < 0 else eps
    self.lc = bool(values["location_categorization"])
    self.lc_weights = tuple(LC_WEIGHTS)
    self.black_filter = bool(values["black_ticket_filter"])
    self.mtd = values["mrx_search_detectives"] == "mtd"

  @classmethod
  def from_dict(cls, d: Mapping[str, Any]) -> "Config":
    """The inverse of `as_dict` (what the engines take)."""
    c = cls.__new__(cls)
    c.playouts = int(d["playouts"])
    c.time_limit = float(d["time_limit"])
    c.uct_c = float(d["uct_c"])
    c.ph_w = float(d["progressive_history"])
    c.cr = float(d["coalition_reduction"])
    c.eps_mrx = float(d["eps_mrx"])
    c.eps_det = float(d["eps_det"])
    c.lc = bool(d["location_categorization"])
    c.lc_weights = tuple(float(w) for w in d["lc_weights"])
    c.black_filter = bool(d["black_ticket_filter"])
    c.mtd = bool(d["mrx_search_mtd"])
    return c

  def as_dict(self) -> dict[str, Any]:
    return {"playouts": self.playouts, "time_limit": self.time_limit,
            "uct_c": self.uct_c, "progressive_history": self.ph_w,
            "coalition_reduction": self.cr, "eps_mrx": self.eps_mrx,
            "eps_det": self.eps_det, "location_categorization": self.lc,
            "lc_weights": list(self.lc_weights),
            "black_ticket_filter": self.black_filter,
            "mrx_search_mtd": self.mtd}


class _Node:
  __slots__ = ("children", "visits", "value", "avail")

  def __init__(self, num_movers: int):
    self.children: dict[int, _Node] = {}
    self.visits = 0
    self.value = [0.0] * num_movers  # summed rewards, per mover
    self.avail = 0


class PythonEngine:
  """The search in Python, the twin of the C++ `ScotlandYardMCTS`."""

  def __init__(self, rules: Rules):
    self.board = Board(rules)

  def distances(self) -> list[list[int]]:
    return self.board.dist

  def state(self, history: Sequence[int]) -> SimState:
    return SimState.from_history(self.board, history)

  def possible_locations(self, history: Sequence[int]) -> list[int]:
    return self.state(history).possible_locations()

  def legal_actions(self, history: Sequence[int],
                    black_filter: bool) -> list[int]:
    return self.state(history).legal_actions(black_filter)

  def playout_action(self, history: Sequence[int], mrx: int, searcher: int,
                     config: Mapping[str, Any], rng_state: int
                     ) -> tuple[int, int]:
    """(the playout policy's action at the position after `history` with
    Mr. X on `mrx`, in `searcher`'s search, the generator's next state)."""
    s = self.state(history)
    s.mrx = mrx
    rng = SplitMix64(rng_state)
    c = Config.from_dict(config)
    action = _playout_action(s, c, rng, searcher == 0 and c.mtd)
    return action, rng.state

  def search(self, history: Sequence[int], player: int,
             config: Mapping[str, Any], rng_state: int) -> dict[str, Any]:
    return _search(self.board, history, player, Config.from_dict(config),
                   rng_state)


def _playout_action(s: SimState, config: Config, rng: SplitMix64,
                    mtd: bool) -> int:
  """The epsilon-greedy playout policy: Mr. X maximises his distance to the
  closest detective (MCD); a detective minimises his distance to Mr. X
  (CAL), or with `mtd` (Mr. X's search) the sum of his distances to Mr.
  X's possible locations (MTD); random with probability epsilon; ties drawn
  uniformly. Mr. X's double-move card is played only by the random
  branch."""
  b = s.board
  n = b.n
  actions = s.legal_actions(config.black_filter)
  dist = b.dist
  if s.turn == 0:
    if rng.uniform() < config.eps_mrx:
      return actions[rng.next() % len(actions)]
    best, ties = -1, []
    for a in actions:
      if a == b.rules.double_action:
        continue
      row = dist[a % n]
      d = min(row[p] for p in s.det)
      if d > best:
        best, ties = d, [a]
      elif d == best:
        ties.append(a)
    return ties[rng.next() % len(ties)]
  if rng.uniform() < config.eps_det:
    return actions[rng.next() % len(actions)]
  locations = stations_of(s.possible) if mtd else []
  if not locations:
    locations = [s.mrx]
  best, ties = -1, []
  for a in actions:
    row = dist[a % n]
    d = 0
    for p in locations:
      d += row[p]
    if best < 0 or d < best:
      best, ties = d, [a]
    elif d == best:
      ties.append(a)
  return ties[rng.next() % len(ties)]


def _determinize(board: Board, root: SimState, locations: Sequence[int],
                 weights: Sequence[float] | None, rng: SplitMix64) -> int:
  """A location for Mr. X: uniform over `locations`, or by location
  categorization's `weights` (one-step roulette)."""
  if weights is None:
    return locations[rng.next() % len(locations)]
  total = 0.0
  for w in weights:
    total += w
  u = rng.uniform() * total
  acc = 0.0
  for i, w in enumerate(weights):
    acc += w
    if u < acc:
      return locations[i]
  return locations[-1]


def _search(board: Board, history: Sequence[int], player: int,
            config: Config, rng_state: int) -> dict[str, Any]:
  """One search from the position after `history` for `player`: (the
  chosen action, root visit counts, playouts run, next generator state,
  seconds)."""
  start = time.perf_counter()
  rng = SplitMix64(rng_state)
  root_state = SimState.from_history(board, history)
  movers = 1 + board.num_detectives
  legal = root_state.legal_actions(config.black_filter)
  if root_state.outcome != ONGOING or not legal:
    raise ValueError(f"{NAME}: the position is terminal or a chance node")
  acting = 0 if root_state.turn == 0 else 1
  if acting != player:
    raise ValueError(f"{NAME}: asked to act for player {player} at a state "
                     f"where player {acting} acts")
  if len(legal) == 1:
    return {"action": legal[0], "visits": {legal[0]: 0}, "playouts": 0,
            "rng_state": rng.state, "seconds": time.perf_counter() - start}
  if player == 1:
    locations = stations_of(root_state.possible)
    weights = None
    if config.lc:
      weights = [config.lc_weights[category(board, p, root_state.det)]
                 for p in locations]
  else:
    locations = [root_state.mrx]
    weights = None
  mtd = player == 0 and config.mtd
  root = _Node(movers)
  num_actions = board.rules.num_actions
  hist_sum = [[0.0] * num_actions for _ in range(movers)]
  hist_cnt = [[0] * num_actions for _ in range(movers)]
  cap = config.playouts
  deadline = start + config.time_limit if config.time_limit > 0 else None
  done = 0
  c = config.uct_c
  w_ph = config.ph_w
  while (cap <= 0 or done < cap) and (
      deadline is None or done == 0 or time.perf_counter() < deadline):
    s = root_state.clone()
    s.mrx = _determinize(board, root_state, locations, weights, rng)
    node = root
    path = []
    played = []  # (mover, action) of the whole playout, for the history
    # Selection and expansion.
    while s.outcome == ONGOING:
      actions = s.legal_actions(config.black_filter)
      mover = s.turn
      untried = []
      for a in actions:
        child = node.children.get(a)
        if child is None:
          untried.append(a)
        else:
          child.avail += 1
      if untried:
        a = untried[rng.next() % len(untried)]
        child = _Node(movers)
        child.avail = 1
        node.children[a] = child
        s.apply(a)
        path.append(child)
        played.append((mover, a))
        break
      best_a, best_score = -1, -math.inf
      sums = hist_sum[mover]
      counts = hist_cnt[mover]
      for a in actions:
        ch = node.children[a]
        mean = ch.value[mover] / ch.visits
        score = mean + c * math.sqrt(math.log(ch.avail) / ch.visits)
        if w_ph > 0 and counts[a] > 0:
          score += (sums[a] / counts[a]) * w_ph / (
              ch.visits - ch.value[mover] + 1.0)
        if score > best_score:
          best_a, best_score = a, score
      node = node.children[best_a]
      s.apply(best_a)
      path.append(node)
      played.append((mover, best_a))
    # Playout.
    while s.outcome == ONGOING:
      mover = s.turn
      a = _playout_action(s, config, rng, mtd)
      s.apply(a)
      played.append((mover, a))
    reward = rewards(s.outcome, s.catcher, board.num_detectives, config.cr)
    for nd in path:
      nd.visits += 1
      v = nd.value
      for m in range(movers):
        v[m] += reward[m]
    if w_ph > 0:
      for mover, a in played:
        hist_sum[mover][a] += reward[mover]
        hist_cnt[mover][a] += 1
    done += 1
  visits = {a: (root.children[a].visits if a in root.children else 0)
            for a in legal}
  action = legal[0]
  for a in legal:
    if visits[a] > visits[action]:
      action = a
  return {"action": action, "visits": visits, "playouts": done,
          "rng_state": rng.state, "seconds": time.perf_counter() - start}


# ---------------------------------------------------------------------------
# Engines: C++ where the shim loads, else Python.

_engines: dict[tuple[str, str], Any] = {}


def engine(game: pyspiel.Game, backend: str = "auto") -> Any:
  """The search engine of `game` (one per game and backend): the C++
  `ScotlandYardMCTS` ("cpp", or "auto" where the shim loads) or
  `PythonEngine`."""
  shim, reason = _native.load_shim()
  if backend == "auto":
    backend = "cpp" if shim is not None and hasattr(
        shim, "ScotlandYardMCTS") else "python"
  if backend == "cpp" and (shim is None or
                           not hasattr(shim, "ScotlandYardMCTS")):
    raise ValueError(f"{NAME}: backend=cpp needs the C++ shim, which is not "
                     f"in use: {reason or 'built without ScotlandYardMCTS'}")
  key = (str(game), backend)
  if key not in _engines:
    rules = sy_native.rules(game)
    if backend == "cpp":
      _engines[key] = shim.ScotlandYardMCTS(sy_native.cpp_setup(rules))
    else:
      _engines[key] = PythonEngine(rules)
  return _engines[key]


# ---------------------------------------------------------------------------
# The bot.


class ScotlandYardMCTSBot(pyspiel.Bot):
  """Nijssen and Winands' MCTS for one seat of Scotland Yard (see the
  module docstring). Stateless between moves apart from its generator:
  each search starts from the state's history."""

  def __init__(self, game: pyspiel.Game, player: int,
               values: Mapping[str, Any]):
    pyspiel.Bot.__init__(self)
    self._player = player
    self.config = Config(values)
    self.backend = values["backend"]
    self._engine = engine(game, self.backend)
    self._seed = values["seed"]
    self._rng_state = seed_state(self._seed)
    self.last_search: dict[str, Any] = {}

  @property
  def player(self) -> int:
    return self._player

  def restart(self):
    self._rng_state = seed_state(self._seed)

  def restart_at(self, state):
    del state
    self.restart()

  def inform_action(self, state, player_id, action):
    del state, player_id, action

  def provides_policy(self):
    return True

  def step_with_policy(self, state):
    if state.is_terminal() or state.current_player() != self._player:
      raise ValueError(
          f"{NAME}: asked to act for player {self._player} at a state where "
          f"it does not act (current player: {state.current_player()})")
    result = self._engine.search(list(state.history()), self._player,
                                 self.config.as_dict(), self._rng_state)
    self._rng_state = int(result["rng_state"])
    self.last_search = dict(result)
    visits = {int(a): int(v) for a, v in dict(result["visits"]).items()}
    total = sum(visits.values())
    action = int(result["action"])
    legal = state.legal_actions()
    if total:
      policy = [(a, visits.get(a, 0) / total) for a in legal]
    else:
      policy = [(a, 1.0 if a == action else 0.0) for a in legal]
    return policy, action

  def step(self, state):
    return self.step_with_policy(state)[1]


def unsupported_reason(game: pyspiel.Game) -> str | None:
  name = game.get_type().short_name
  if name not in GAMES:
    return (f"{NAME} plays scotland_yard and python_scotland_yard only, got "
            f"{name}")
  return None


def _parse(params: Mapping[str, Any] | None) -> dict[str, Any]:
  values = common.parse_seeded_params(NAME, params, DEFAULTS)
  if not (values["playouts"] >= 1 or values["playouts"] == -1):
    raise ValueError(f"{NAME}: playouts must be >= 1 or -1 (auto: "
                     f"{DEFAULT_PLAYOUTS} without time_limit, no cap with "
                     f"it), got {values['playouts']}")
  if not 0 <= values["time_limit"] < math.inf:
    raise ValueError(f"{NAME}: time_limit must be finite and >= 0 (seconds "
                     f"per move, 0: off), got {values['time_limit']}")
  for name in ("uct_c", "progressive_history"):
    if not 0 <= values[name] < math.inf:
      raise ValueError(f"{NAME}: {name} must be finite and >= 0, got "
                       f"{values[name]}")
  if not 0 <= values["coalition_reduction"] <= 1:
    raise ValueError(f"{NAME}: coalition_reduction (r) must be in [0, 1], "
                     f"got {values['coalition_reduction']}")
  eps = values["epsilon"]
  if not (0 <= eps <= 1 or eps == -1):
    raise ValueError(f"{NAME}: epsilon must be in [0, 1] or -1 (the "
                     f"thesis' {EPSILON_MRX} for Mr. X and "
                     f"{EPSILON_DETECTIVES} for the detectives), got {eps}")
  if values["mrx_search_detectives"] not in ("mtd", "cal"):
    raise ValueError(f"{NAME}: mrx_search_detectives must be 'mtd' or "
                     f"'cal', got {values['mrx_search_detectives']!r}")
  if values["backend"] not in ("auto", "cpp", "python"):
    raise ValueError(f"{NAME}: unknown backend {values['backend']!r}; "
                     "supported: 'auto', 'cpp', 'python'")
  if values["playouts"] == -1:
    values["playouts"] = 0 if values["time_limit"] > 0 else DEFAULT_PLAYOUTS
  return values


def factory(game: pyspiel.Game, player: int,
            params: Mapping[str, Any]) -> pyspiel.Bot:
  reason = unsupported_reason(game)
  if reason:
    raise ValueError(reason)
  values = _parse(params)
  common.check_player(NAME, game, player)
  return ScotlandYardMCTSBot(game, player, values)


def can_play(game: pyspiel.Game, player: int) -> bool:
  return unsupported_reason(game) is None and 0 <= player < 2


def register() -> None:
  """Registers "scotland_yard_mcts" with OpenSpiel (idempotent)."""
  from open_spiel_sog import registry  # pylint: disable=g-import-not-at-top
  if NAME in registry.registered_by_us():
    return
  registry.register_bot(NAME, factory, can_play)
