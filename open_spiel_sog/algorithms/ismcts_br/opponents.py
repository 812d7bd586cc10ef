"""The fixed policies ISMCTS-BR responds to (`Opponent`) and the specs that
name them (`make_opponent`): uniform_random, the poker chumps always_fold /
always_call / always_raise (kuhn_poker, leduc_poker), cfr_plus:N (OpenSpiel's
CFR+ average policy after N iterations), a policy file (`save_policy`), a
registered bot with parameters (`sog(simulations=100)`, ...), whose policy
may be built as a whole table (`register_table_opponent`), or any OpenSpiel
`policy.Policy` through `Opponent.from_policy`.
"""

from __future__ import annotations

import math
import os
import re
from typing import Any, Callable, Mapping

import numpy as np
import pyspiel
from open_spiel.python import policy as os_policy
from open_spiel.python.algorithms import cfr as os_cfr

from open_spiel_sog.algorithms.ismcts_br.policy_files import load_policy
from open_spiel_sog.utils import lru

CHUMPS = ("always_fold", "always_call", "always_raise")
CHUMP_GAMES = ("kuhn_poker", "leduc_poker")
SPEC_FORMS = (
    "uniform_random",
    "always_fold, always_call, always_raise (kuhn_poker and leduc_poker only)",
    "cfr_plus:N (OpenSpiel's CFR+ average policy after N iterations)",
    "PATH.json (a policy written by save_policy)",
    "BOT or BOT(k=v,...) for a registered bot that provides policies, e.g. "
    "sog(simulations=100) or sog(simulations=20,value_function=exact)",
)


# --- Opponents --------------------------------------------------------------


def state_player_name(state: pyspiel.State) -> str:
  """Who acts at `state`, in words (for error messages)."""
  if state.is_terminal():
    return "nobody (terminal)"
  if state.is_chance_node():
    return "chance"
  return f"player {state.current_player()}"


class Opponent:
  """A fixed policy for one seat, queried where that seat acts.

  `probabilities(state)` gives {action: prob} (or (action, prob) pairs); the
  answer is checked, normalised and cached per information_state_string of
  the seat, so the policy must be a function of the infostate.
  """

  def __init__(self, game: pyspiel.Game, player: int,
               probabilities: Callable[[pyspiel.State], Any], name: str):
    if player not in (0, 1):
      raise ValueError(f"opponent {name!r}: player must be 0 or 1, got "
                       f"{player!r}")
    self.game = game
    self.player = int(player)
    self.name = name
    self._probabilities = probabilities
    # infostate -> (actions [k] int, cumulative probs [k], {action: prob})
    self._cache: dict[str, tuple[np.ndarray, np.ndarray, dict[int, float]]] = {}

  def __repr__(self) -> str:
    return f"Opponent({self.name!r}, player={self.player}, game={self.game})"

  def _lookup(self, state: pyspiel.State):
    if state.is_terminal() or state.current_player() != self.player:
      raise ValueError(
          f"opponent {self.name!r} sits in seat {self.player} but was asked "
          f"for a policy where {state_player_name(state)} acts")
    key = state.information_state_string(self.player)
    cached = self._cache.get(key)
    if cached is None:
      cached = self._cache[key] = self._check(state, key,
                                              self._probabilities(state))
    return cached

  def _check(self, state, key, answer):
    items = answer.items() if isinstance(answer, Mapping) else answer
    legal = set(state.legal_actions())
    probs: dict[int, float] = {}
    for a, p in items:
      a, p = int(a), float(p)
      if not math.isfinite(p) or p < 0:
        raise ValueError(f"opponent {self.name!r} gives action {a} "
                         f"probability {p} at infostate {key!r}")
      if a not in legal:
        if p > 0:
          raise ValueError(
              f"opponent {self.name!r} plays illegal action {a} with "
              f"probability {p} at infostate {key!r} (legal: {sorted(legal)})")
        continue
      probs[a] = probs.get(a, 0.0) + p
    total = sum(probs.values())
    if not total > 0:
      raise ValueError(f"opponent {self.name!r} gives no probability to any "
                       f"legal action at infostate {key!r}")
    probs = {a: p / total for a, p in sorted(probs.items()) if p > 0}
    actions = np.asarray(list(probs), dtype=np.int64)
    cumulative = np.cumsum(list(probs.values()))
    cumulative[-1] = 1.0
    return actions, cumulative, probs

  def action_probabilities(self, state: pyspiel.State) -> dict[int, float]:
    """{action: prob} at `state`, where this opponent's seat acts."""
    return dict(self._lookup(state)[2])

  def probability(self, state: pyspiel.State, action: int) -> float:
    return self._lookup(state)[2].get(int(action), 0.0)

  def sample(self, state: pyspiel.State, rng: np.random.Generator) -> int:
    actions, cumulative, _ = self._lookup(state)
    i = int(np.searchsorted(cumulative, rng.random(), side="right"))
    return int(actions[min(i, len(actions) - 1)])

  def as_policy(self) -> os_policy.Policy:
    """This opponent as an OpenSpiel policy (for its seat only)."""
    return _OpponentPolicy(self)

  @classmethod
  def from_policy(cls, policy: os_policy.Policy, player: int,
                  name: str | None = None) -> "Opponent":
    """Seat `player` of an OpenSpiel policy (TabularPolicy included)."""
    if not isinstance(policy, os_policy.Policy):
      raise TypeError(f"Opponent.from_policy needs an open_spiel "
                      f"policy.Policy, got {type(policy).__name__}")
    return cls(policy.game, player,
               lambda state: policy.action_probabilities(state, player),
               name or type(policy).__name__)

  @classmethod
  def from_table(cls, game: pyspiel.Game,
                 table: Mapping[str, Mapping[int, float]], player: int,
                 name: str) -> "Opponent":
    """Seat `player` of a {infostate string: {action: prob}} table."""

    def probabilities(state):
      key = state.information_state_string(player)
      row = table.get(key)
      if row is None:
        raise ValueError(f"opponent {name!r}: the policy has no entry for "
                         f"player {player}'s infostate {key!r}")
      return row

    return cls(game, player, probabilities, name)


class _OpponentPolicy(os_policy.Policy):
  """An Opponent as an OpenSpiel Policy (for best_response, policy_value)."""

  def __init__(self, opponent: Opponent):
    super().__init__(opponent.game, [opponent.player])
    self._opponent = opponent

  def action_probabilities(self, state, player_id=None):
    del player_id
    return self._opponent.action_probabilities(state)


def _chump(game: pyspiel.Game, spec: str, player: int) -> Opponent:
  name = game.get_type().short_name
  if name not in CHUMP_GAMES:
    raise ValueError(
        f"opponent {spec!r}: the poker chumps ({', '.join(CHUMPS)}) are "
        f"defined for {' and '.join(CHUMP_GAMES)} only, not {name}")

  def probabilities(state):
    p = state.current_player()
    by_name = {state.action_to_string(p, a): a for a in state.legal_actions()}
    if name == "kuhn_poker":
      # Pass is check or fold, Bet is bet or call: call means Bet only when
      # facing a bet.
      facing = any(pa.player >= 0 and
                   state.action_to_string(pa.player, pa.action) == "Bet"
                   for pa in state.full_history())
      want = {"always_fold": "Pass", "always_raise": "Bet",
              "always_call": "Bet" if facing else "Pass"}[spec]
      fallback = "Pass"
    else:
      want = {"always_fold": "Fold", "always_call": "Call",
              "always_raise": "Raise"}[spec]
      fallback = "Call"  # call or check when folding/raising is illegal
    action = by_name.get(want, by_name.get(fallback))
    if action is None:
      raise ValueError(f"opponent {spec!r}: no {want} or {fallback} action "
                       f"at {state.information_state_string(p)!r}")
    return {action: 1.0}

  return Opponent(game, player, probabilities, spec)


def _cfr_plus(game: pyspiel.Game, spec: str, player: int) -> Opponent:
  text = spec.split(":", 1)[1]
  try:
    iterations = int(text)
  except ValueError:
    iterations = 0
  if iterations < 1:
    raise ValueError(f"opponent {spec!r}: cfr_plus:N needs a positive integer "
                     f"number of iterations N, got {text!r}")
  solver = os_cfr.CFRPlusSolver(game)
  for _ in range(iterations):
    solver.evaluate_and_update_policy()
  return Opponent.from_policy(solver.average_policy(), player, spec)


# Opponents whose policy is a whole table built at once (a bot whose
# decisions depend on its earlier searches, as SoG's do), by bot name:
# builder(game, params, spec) -> (cache key, function building the table
# {infostate string: {action: probability}}), or None where no table can be
# built (the bot is then asked afresh, restarted, at each infostate).
# Higher layers register theirs (`evaluation.exploitability` registers
# "sog"), so this layer imports none.
TableBuilder = Callable[[pyspiel.Game, dict[str, Any], str],
                        tuple[Any, Callable[[], dict[str, dict[int, float]]]]
                        | None]
_TABLE_OPPONENTS: dict[str, TableBuilder] = {}
# The tables built, by cache key: one table serves both seats. Each is a
# whole policy, so only the most recent few stay.
MAX_CACHED_TABLES = 8
_TABLES = lru.LRUCache(MAX_CACHED_TABLES)


def register_table_opponent(name: str, builder: TableBuilder) -> None:
  """Makes the opponent spec NAME(k=v,...) build its policy as a table with
  `builder` instead of loading the bot NAME (see `_TABLE_OPPONENTS`)."""
  _TABLE_OPPONENTS[name] = builder


def _bot(game: pyspiel.Game, spec: str, player: int) -> Opponent:
  inside = spec[spec.index("(") + 1:-1] if "(" in spec else ""
  if inside and any("=" not in item for item in inside.split(",")):
    raise ValueError(f"opponent {spec!r}: bot parameters must be k=v pairs "
                     "separated by commas: NAME(k=v,...)")
  try:
    params = dict(pyspiel.game_parameters_from_string(spec))
  except (pyspiel.SpielError, RuntimeError, ValueError) as e:
    raise ValueError(f"opponent {spec!r}: cannot parse the bot parameters "
                     f"({e}); write NAME(k=v,...)") from None
  name = params.pop("name")
  if not pyspiel.is_bot_registered(name):
    raise ValueError(
        f"unknown opponent {spec!r}: {name!r} is not a registered bot "
        f"(registered: {', '.join(pyspiel.registered_bots())}); supported "
        f"opponents: {'; '.join(SPEC_FORMS)}")
  fresh = False
  if name in _TABLE_OPPONENTS:
    made = _TABLE_OPPONENTS[name](game, params, spec)
    if made is not None:
      key, build = made
      table = _TABLES.get(key)
      if table is None:
        table = build()
        _TABLES.put(key, table)
      return Opponent.from_table(game, table, player, spec)
    # (No table: the bot, asked afresh at each infostate.)
    fresh = True
  try:
    bot = pyspiel.load_bot(name, game, player, params)
  except (pyspiel.SpielError, RuntimeError, ValueError, TypeError) as e:
    raise ValueError(f"opponent {spec!r}: cannot load bot {name!r}: {e}"
                     ) from None
  if not bot.provides_policy():
    raise ValueError(
        f"opponent {spec!r}: bot {name!r} does not provide policies; "
        "ISMCTS-BR needs a bot that provides policies (its exact beliefs "
        "need the opponent's action probabilities)")
  if fresh:
    def probabilities(state):
      bot.restart()
      return bot.get_policy(state)
    return Opponent(game, player, probabilities, spec)
  return Opponent(game, player, bot.get_policy, spec)


_BOT_SPEC = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\(.*\))?$")


def _looks_like_path(spec: str) -> bool:
  if "(" in spec and _BOT_SPEC.match(spec) and not spec.endswith(".json"):
    return False  # a bot string, whose parameters may name files
  return (spec.endswith(".json") or os.sep in spec or
          (os.altsep is not None and os.altsep in spec) or
          os.path.exists(spec))


def make_opponent(game: pyspiel.Game | str, spec: str,
                  player: int) -> Opponent:
  """The opponent `spec` names, sitting in seat `player` of `game`.

  Args:
    game: the game (or its string).
    spec: one of `SPEC_FORMS`.
    player: the opponent's seat (0 or 1).

  Raises:
    ValueError: for an unknown or malformed spec, a chump outside the poker
      games, a bot that provides no policies, or a bad policy file
      (`PolicyFileError`).
  """
  if isinstance(game, str):
    game = pyspiel.load_game(game)
  if not isinstance(spec, str) or not spec.strip():
    raise ValueError(f"opponent spec must be a non-empty string, got "
                     f"{spec!r}; supported: {'; '.join(SPEC_FORMS)}")
  if player not in (0, 1):
    raise ValueError(f"opponent {spec!r}: player must be 0 or 1, got "
                     f"{player!r}")
  spec = spec.strip()
  if spec == "uniform_random":
    return Opponent.from_policy(os_policy.UniformRandomPolicy(game), player,
                                spec)
  if spec in CHUMPS:
    return _chump(game, spec, player)
  if spec.startswith("cfr_plus:"):
    return _cfr_plus(game, spec, player)
  if _looks_like_path(spec):
    return Opponent.from_table(game, load_policy(spec, game), player, spec)
  if _BOT_SPEC.match(spec) and ("(" in spec or pyspiel.is_bot_registered(spec)):
    return _bot(game, spec, player)
  raise ValueError(f"unknown opponent {spec!r}; supported: "
                   f"{'; '.join(SPEC_FORMS)}")
