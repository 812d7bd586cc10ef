"""ISMCTS-BR: a learned approximate best response (Timbers et al., 2020).

Fixing the policy of one player of a two-player zero-sum game leaves the
other (the responder, seat r) a single-agent problem whose optimal policies
are exactly the best responses to the fixed one. ISMCTS-BR (section 3.2 and
Algorithm 1 of "Approximate exploitability: learning a best response in large
games") learns such a policy with AlphaZero-style search and training:

* Exact beliefs. At a history h where the responder acts, its infostate s
  holds every history it cannot tell apart from h. With perfect recall,
  Pr(h' | s) is proportional to the chance reach of h' times the opponent's
  reach of h' (the product of the opponent's action probabilities along
  it; the responder's own reach is the same for every h' in s). The histories
  of s are those of h's public state with the same responder infostate
  (`PublicStateObserver`), so the posterior is exact, not an IS-MCTS
  approximation (`Posterior`).
* IS-MCTS with PUCT. Every simulation samples a history from the posterior
  of the root infostate, then descends: chance samples `chance_outcomes()`,
  the opponent samples its fixed policy, and the responder picks
  argmax_a Q(s, a) + c_puct * P(s, a) * sqrt(N(s)) / (1 + N(s, a)) at search
  nodes keyed by its information_state_string. Q is the mean backed-up
  return, normalised to [0, 1] by the game's min and max utility; an
  unvisited action takes its node's current mean value (first-play urgency
  = the parent value). The first responder infostate not in the tree is
  expanded with the network's (value, prior) and its value is backed up;
  terminals back up the responder's return. Root Dirichlet noise (AlphaZero)
  is added while training only. Because the opponent and chance are sampled
  along the way, the histories reached at deeper responder nodes follow their
  exact posteriors too.
* The network (`cvpn.ValuePriorNet`): an MLP over the responder's
  information_state_tensor plus a one-hot of its seat (one network for both
  seats) to a value and a prior. Training plays episodes against the fixed
  opponent, alternating the responder's seat; every responder decision is a
  search whose visit-count policy is the prior's target, and the episode's
  return is the value target of each of its decisions (MSE + cross-entropy,
  from a sliding replay buffer). Moves are the most visited action, except
  for AlphaZero's temperature moves and an epsilon of uniformly random ones;
  after such an exploratory move the decision's and the earlier decisions'
  returns no longer measure the greedy policy, so their value targets are
  dropped (`off_policy_mask`). Each training search also gives value targets
  at the responder infostates inside its tree that at least
  `tree_value_targets` simulations passed through (their mean backed-up
  return; an extension of the paper): searches reach the infostates behind
  rarely played actions far more often than games do, and a mean over many
  sampled histories is a steadier target than one game's return. On Leduc
  against always_raise the greedy responder first reached 95% of the exact
  best response in both seats after about 7,750 games without them and 3,000
  with them (and stayed there). Exploration matters: with greedy play only, an action
  whose value the network underestimates is never tried, and the network
  never learns the values behind it (on Leduc against always_raise, calling
  a raise with a jack to hit a pair).
* Evaluation. `play` estimates the responder's value by sampling games with
  greedy (most visited) decisions; `exact_value` scores the same greedy
  policy without sampling error (OpenSpiel's `policy_value`, the responder's
  decisions tabulated on demand at the infostates the walk reaches); and
  `exact_best_response_value` is OpenSpiel's exact best response value for
  comparison. `approximate_exploitability` puts these together: the
  approximate NashConv is the sum of both seats' approximate best-response
  values (zero-sum games); scored exactly, it is a lower bound on the true
  NashConv (sampled, a lower bound up to its standard error).

Opponents (`make_opponent`): uniform_random, the poker chumps always_fold /
always_call / always_raise (kuhn_poker, leduc_poker), cfr_plus:N (OpenSpiel's
CFR+ average policy after N iterations), a policy file (`save_policy`), a
registered bot with parameters (`sog(simulations=100)`, ...), or any
OpenSpiel `policy.Policy` through `Opponent.from_policy`.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import time
import zlib
from typing import Any, Callable, Mapping, NamedTuple, Sequence

import numpy as np
import pyspiel
from open_spiel.python import policy as os_policy
from open_spiel.python.algorithms import best_response as os_best_response
from open_spiel.python.algorithms import cfr as os_cfr
from open_spiel.python.algorithms import expected_game_score

from open_spiel_sog.algorithms.sog import cvpn
from open_spiel_sog.public_state import PublicStateObserver
from open_spiel_sog.utils import lru
from open_spiel_sog.utils.progress import progress_bar

POLICY_FORMAT = "open_spiel_sog.policy/1"
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
# Games larger than this many histories are not walked for exact values.
EXACT_MAX_HISTORIES = 200_000


# --- Opponents --------------------------------------------------------------


def _state_player_name(state: pyspiel.State) -> str:
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
          f"for a policy where {_state_player_name(state)} acts")
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
# {infostate string: {action: probability}}). Higher layers register theirs
# (`evaluation.exploitability` registers "sog"), so this layer imports none.
TableBuilder = Callable[[pyspiel.Game, dict[str, Any], str],
                        tuple[Any, Callable[[], dict[str, dict[int, float]]]]]
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
  if name in _TABLE_OPPONENTS:
    key, build = _TABLE_OPPONENTS[name](game, params, spec)
    table = _TABLES.get(key)
    if table is None:
      table = build()
      _TABLES.put(key, table)
    return Opponent.from_table(game, table, player, spec)
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
  return Opponent(game, player, bot.get_policy, spec)


_BOT_SPEC = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\(.*\))?$")


def _looks_like_path(spec: str) -> bool:
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


# --- Policy files -----------------------------------------------------------


class PolicyFileError(ValueError):
  """A policy file that cannot be used (missing, corrupt, another game)."""


def _table_of(game: pyspiel.Game, table) -> dict[str, dict[int, float]]:
  if isinstance(table, os_policy.TabularPolicy):
    out = {}
    for key, index in table.state_lookup.items():
      legal = np.nonzero(table.legal_actions_mask[index])[0]
      out[key] = {int(a): float(table.action_probability_array[index, a])
                  for a in legal}
    return out
  if isinstance(table, os_policy.Policy):
    return _table_of(game, table.to_tabular())
  if not isinstance(table, Mapping):
    raise TypeError(f"save_policy: the policy must be a mapping "
                    "{infostate: {action: prob}} or an OpenSpiel "
                    f"policy.Policy, got {type(table).__name__}")
  return {str(k): {int(a): float(p) for a, p in dict(row).items()}
          for k, row in table.items()}


def save_policy(path: str, game: pyspiel.Game | str, table) -> None:
  """Writes `table` ({infostate: {action: prob}}, or an OpenSpiel Policy) as
  {"format": POLICY_FORMAT, "game": str(game), "policy": {...}}."""
  if isinstance(game, str):
    game = pyspiel.load_game(game)
  table = _table_of(game, table)
  data = {"format": POLICY_FORMAT, "game": str(game),
          "policy": {k: {str(a): p for a, p in row.items()}
                     for k, row in table.items()}}
  directory = os.path.dirname(os.path.abspath(path))
  os.makedirs(directory, exist_ok=True)
  tmp = f"{path}.tmp{os.getpid()}"
  with open(tmp, "w") as f:
    json.dump(data, f)
  os.replace(tmp, path)


def load_policy(path: str, game: pyspiel.Game | str
                ) -> dict[str, dict[int, float]]:
  """The {infostate: {action: prob}} table saved at `path` for `game`."""
  if isinstance(game, str):
    game = pyspiel.load_game(game)
  if not os.path.exists(path):
    raise PolicyFileError(f"policy file {path!r} does not exist")
  try:
    with open(path) as f:
      data = json.load(f)
  except (OSError, UnicodeDecodeError, ValueError) as e:
    raise PolicyFileError(f"policy file {path!r} is not readable JSON "
                          f"(corrupt?): {e}") from None
  if not isinstance(data, dict) or data.get("format") != POLICY_FORMAT:
    found = data.get("format") if isinstance(data, dict) else None
    raise PolicyFileError(f"{path!r} is not a policy file: format {found!r}, "
                          f"expected {POLICY_FORMAT!r}")
  if data.get("game") != str(game):
    raise PolicyFileError(f"policy file {path!r} is for {data.get('game')}, "
                          f"not {game}")
  policy = data.get("policy")
  if not isinstance(policy, dict):
    raise PolicyFileError(f"policy file {path!r}: 'policy' must be an object "
                          "{infostate: {action: prob}}")
  try:
    return {str(k): {int(a): float(p) for a, p in row.items()}
            for k, row in policy.items()}
  except (AttributeError, TypeError, ValueError) as e:
    raise PolicyFileError(f"policy file {path!r}: bad entry in 'policy' "
                          f"({e}); expected {{infostate: {{action: prob}}}}"
                          ) from None


# --- Exact beliefs ----------------------------------------------------------


class Posterior:
  """Exact beliefs over the histories of the responder's infostates.

  Pr(h | s) is proportional to chance_reach(h) * opponent_reach(h) over the
  histories h of the responder's infostate s (perfect recall: the
  responder's own reach is common to them all).
  """

  def __init__(self, game: pyspiel.Game, opponent: Opponent, responder: int,
               observer: PublicStateObserver | None = None):
    if opponent.player != 1 - responder:
      raise ValueError(f"posterior for responder {responder} needs the "
                       f"opponent in seat {1 - responder}, got seat "
                       f"{opponent.player}")
    self.game = game
    self.opponent = opponent
    self.responder = responder
    self.observer = observer or PublicStateObserver(game)
    self._reach: dict[str, float] = {}
    # infostate -> (histories, normalised probs, cumulative probs)
    self._beliefs: dict[str, tuple[list[pyspiel.State], np.ndarray,
                                   np.ndarray]] = {}
    # Responder infostates the opponent never reaches (see `beliefs`).
    self.unreached: set[str] = set()

  def opponent_reach(self, history: pyspiel.State) -> float:
    """Product of the opponent's action probabilities along `history`."""
    key = history.history_str()
    reach = self._reach.get(key)
    if reach is None:
      reach = 1.0
      state = self.game.new_initial_state()
      for a in history.history():
        if not state.is_chance_node() and (state.current_player() ==
                                           self.opponent.player):
          reach *= self.opponent.probability(state, a)
        state.apply_action(a)
      self._reach[key] = reach
    return reach

  def _entry(self, state: pyspiel.State):
    if state.is_terminal() or state.current_player() != self.responder:
      raise ValueError(f"beliefs of responder {self.responder} asked where "
                       f"{_state_player_name(state)} acts")
    key = state.information_state_string(self.responder)
    entry = self._beliefs.get(key)
    if entry is None:
      ps, index = self.observer.public_state_of(state)
      infostates = ps.history_infostate[self.responder]
      members = np.nonzero(infostates == infostates[index])[0]
      histories = [ps.histories[i] for i in members]
      chance = ps.chance_reach[members]
      weights = chance * np.asarray([self.opponent_reach(h)
                                     for h in histories])
      if not weights.sum() > 0:
        # The opponent never plays into this infostate (its reach is zero on
        # every history): no posterior exists, and nothing played here can
        # change the value. Fall back to the chance reach so a search still
        # has histories to sample.
        self.unreached.add(key)
        weights = chance
      probs = weights / weights.sum()
      cumulative = np.cumsum(probs)
      cumulative[-1] = 1.0
      entry = self._beliefs[key] = (histories, probs, cumulative)
    return entry

  def beliefs(self, state: pyspiel.State) -> dict[str, float]:
    """{history_str: Pr(history | responder's infostate at `state`)}."""
    histories, probs, _ = self._entry(state)
    return {h.history_str(): float(p) for h, p in zip(histories, probs)}

  def sample(self, state: pyspiel.State,
             rng: np.random.Generator) -> pyspiel.State:
    """A history of the responder's infostate at `state`, drawn from the
    posterior (a fresh clone)."""
    histories, _, cumulative = self._entry(state)
    i = min(int(np.searchsorted(cumulative, rng.random(), side="right")),
            len(histories) - 1)
    return histories[i].clone()


# --- Configuration ----------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ISMCTSBRConfig:
  """ISMCTS-BR's search, network and training settings.

  Attributes:
    simulations: search simulations per decision (training and evaluation).
    c_puct: PUCT exploration constant (Q is normalised to [0, 1]).
    dirichlet_alpha: concentration of the root Dirichlet noise (training).
    dirichlet_fraction: weight of that noise in the root prior (0 disables).
    temperature: training episodes sample the responder's first
      `temperature_moves` moves from visits^(1 / temperature) (0: greedy).
    temperature_moves: responder moves per episode played at `temperature`;
      later ones are greedy.
    epsilon: training episodes play a uniformly random legal action with
      this probability at each responder move (after the temperature moves
      too).
    off_policy_mask: a return measures the greedy policy only if every move
      after a decision was greedy: when a training move is not the most
      visited action, drop the value targets of that decision and the
      episode's earlier ones (their prior targets are kept).
    tree_value_targets: also train the value of every non-root responder
      infostate of a training search that at least this many simulations
      passed through, towards its mean backed-up return in that search
      (0 disables it). Searches reach rarely played infostates (a call that
      greedy play folds) far more often than games do, and their means
      average over many sampled histories.
    hidden: widths of the value torso's hidden layers.
    policy_hidden: widths of the prior torso's hidden layers.
    learning_rate: Adam's learning rate.
    weight_decay: L2 penalty on the weights (0 disables it).
    value_weight: weight of the value MSE.
    policy_weight: weight of the prior cross-entropy.
    batch_size: examples per update.
    replay_size: examples kept in the sliding replay buffer.
    updates_per_game: optimiser steps after each training game (once the
      buffer holds a batch).
    games: training games (`train` with no argument).
    seed: seed of the network initialisation, searches and games.
  """
  simulations: int = 200
  c_puct: float = 1.0
  dirichlet_alpha: float = 1.0
  dirichlet_fraction: float = 0.25
  temperature: float = 1.0
  temperature_moves: int = 0
  epsilon: float = 0.1
  off_policy_mask: bool = True
  tree_value_targets: int = 10
  hidden: tuple[int, ...] = (64, 64)
  policy_hidden: tuple[int, ...] = (64,)
  learning_rate: float = 3e-3
  weight_decay: float = 0.0
  value_weight: float = 1.0
  policy_weight: float = 1.0
  batch_size: int = 64
  replay_size: int = 10_000
  updates_per_game: int = 2
  games: int = 1000
  seed: int = 0

  def validate(self) -> None:
    positive_ints = ("simulations", "batch_size", "replay_size")
    for name in positive_ints:
      if int(getattr(self, name)) < 1:
        raise ValueError(f"ismcts_br: {name} must be >= 1, got "
                         f"{getattr(self, name)}")
    for name in ("temperature_moves", "updates_per_game", "games",
                 "tree_value_targets"):
      if int(getattr(self, name)) < 0:
        raise ValueError(f"ismcts_br: {name} must be >= 0, got "
                         f"{getattr(self, name)}")
    for name in ("c_puct", "temperature", "weight_decay", "value_weight",
                 "policy_weight"):
      value = getattr(self, name)
      if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"ismcts_br: {name} must be a finite number >= 0, "
                         f"got {value}")
    if not 0 <= self.epsilon <= 1:
      raise ValueError(f"ismcts_br: epsilon must be in [0, 1], got "
                       f"{self.epsilon}")
    if not self.dirichlet_alpha > 0:
      raise ValueError(f"ismcts_br: dirichlet_alpha must be > 0, got "
                       f"{self.dirichlet_alpha}")
    if not 0 <= self.dirichlet_fraction <= 1:
      raise ValueError(f"ismcts_br: dirichlet_fraction must be in [0, 1], "
                       f"got {self.dirichlet_fraction}")
    if not self.learning_rate > 0:
      raise ValueError(f"ismcts_br: learning_rate must be > 0, got "
                       f"{self.learning_rate}")
    if self.batch_size > self.replay_size:
      raise ValueError(f"ismcts_br: batch_size ({self.batch_size}) must be "
                       f"<= replay_size ({self.replay_size})")
    for name in ("hidden", "policy_hidden"):
      widths = getattr(self, name)
      if not widths or any(int(h) < 1 for h in widths):
        raise ValueError(f"ismcts_br: {name} must be positive widths, got "
                         f"{widths}")

  def network(self) -> cvpn.NetworkConfig:
    """The network settings these settings imply."""
    return cvpn.NetworkConfig(
        hidden=tuple(int(h) for h in self.hidden),
        policy_hidden=tuple(int(h) for h in self.policy_hidden),
        learning_rate=self.learning_rate, value_weight=self.value_weight,
        policy_weight=self.policy_weight, weight_decay=self.weight_decay)

  def to_json(self) -> dict[str, Any]:
    return cvpn.settings_to_json(self)

  @classmethod
  def from_json(cls, d: Mapping[str, Any]) -> "ISMCTSBRConfig":
    return cvpn.settings_from_json(cls, d, "ismcts_br: unknown setting(s)")


# --- Search -----------------------------------------------------------------


class _Node:
  """A responder infostate in the search tree."""

  __slots__ = ("actions", "prior", "n", "w", "visits", "value_sum",
               "features", "legal")

  def __init__(self, actions: list[int], prior: np.ndarray, value: float,
               features: np.ndarray | None = None,
               legal: np.ndarray | None = None):
    self.actions = actions
    self.features = features
    self.legal = legal
    self.prior = prior
    self.n = np.zeros(len(actions))
    self.w = np.zeros(len(actions))
    self.visits = 1  # the expansion's network value counts as one visit
    self.value_sum = value


class SearchResult(NamedTuple):
  """A search's root: legal actions, their visits and mean returns."""
  actions: list[int]
  visits: np.ndarray
  q: np.ndarray
  prior: np.ndarray

  def greedy(self) -> int:
    """The most visited action (ties: higher Q, then higher prior)."""
    order = np.lexsort((self.prior, self.q, self.visits))
    return int(self.actions[order[-1]])


class Estimate(NamedTuple):
  """A sampled mean with its standard error."""
  mean: float
  stderr: float
  games: int


def _sample_chance(state: pyspiel.State, rng: np.random.Generator) -> int:
  outcomes = state.chance_outcomes()
  u = rng.random()
  total = 0.0
  for a, p in outcomes:
    total += p
    if u < total:
      return a
  return outcomes[-1][0]


class ISMCTSBR:
  """ISMCTS-BR against fixed opponents (see the module docstring).

  Args:
    game: a two-player zero-sum sequential game with information state
      strings and tensors.
    opponents: {seat: Opponent sitting in that seat}; the responder plays
      the other seat of each (both seats when both are given).
    config: settings (default `ISMCTSBRConfig()`).
    net: a network to start from (default: a fresh one).
  """

  def __init__(self, game: pyspiel.Game | str,
               opponents: Mapping[int, Opponent],
               config: ISMCTSBRConfig | None = None,
               net: cvpn.ValuePriorNet | None = None):
    if isinstance(game, str):
      game = pyspiel.load_game(game)
    self.game = game
    self.config = config or ISMCTSBRConfig()
    self.config.validate()
    if not isinstance(opponents, Mapping) or not opponents:
      raise ValueError("ismcts_br: opponents must be a non-empty mapping "
                       "{seat: Opponent}")
    self.observer = PublicStateObserver(game)
    self.opponents: dict[int, Opponent] = {}
    self.posteriors: dict[int, Posterior] = {}
    for seat, opponent in sorted(opponents.items()):
      if seat not in (0, 1):
        raise ValueError(f"ismcts_br: opponent seats are 0 or 1, got {seat!r}")
      if not isinstance(opponent, Opponent):
        raise TypeError(f"ismcts_br: opponents[{seat}] must be an Opponent "
                        f"(make_opponent, Opponent.from_policy), got "
                        f"{type(opponent).__name__}")
      if opponent.player != seat:
        raise ValueError(f"ismcts_br: opponents[{seat}] sits in seat "
                         f"{opponent.player}")
      if str(opponent.game) != str(game):
        raise ValueError(f"ismcts_br: opponent {opponent.name!r} is for "
                         f"{opponent.game}, not {game}")
      self.opponents[seat] = opponent
      self.posteriors[1 - seat] = Posterior(game, opponent, 1 - seat,
                                            self.observer)
    self.seats = tuple(sorted(self.posteriors))
    if net is None:
      net = cvpn.ValuePriorNet(game, self.config.network())
      net.init(self.config.seed)
    elif str(net.game) != str(game):
      raise ValueError(f"ismcts_br: the network is for {net.game}, not {game}")
    self.net = net
    self.min_utility = float(game.min_utility())
    self.utility_range = float(game.max_utility() - game.min_utility()) or 1.0
    self.rng = np.random.default_rng(self.config.seed)
    self.games_played = 0
    size = self.config.replay_size
    self._buffer = {
        "inputs": np.zeros((size, net.input_size), np.float32),
        "legal": np.zeros((size, net.num_actions), np.float32),
        "value": np.zeros(size, np.float32),
        "value_mask": np.zeros(size, np.float32),
        "policy": np.zeros((size, net.num_actions), np.float32)}
    self._buffer_count = 0  # examples ever added
    self._evaluations: dict[tuple[int, str], tuple[float, np.ndarray,
                                                   np.ndarray]] = {}
    self._decisions: dict[tuple[int, str, int], int] = {}

  # --- Network ---------------------------------------------------------------

  def _params_changed(self) -> None:
    self._evaluations.clear()
    self._decisions.clear()

  def _evaluate(self, state: pyspiel.State, seat: int, key: str):
    """(value, prior over legal actions, features) of `seat`'s infostate."""
    cached = self._evaluations.get((seat, key))
    if cached is None:
      x = self.net.features(state, seat)
      legal = self.net.legal_mask(state)
      value, prior = self.net.predict(x[None], legal[None])
      actions = state.legal_actions()
      p = prior[0, actions]
      p = p / p.sum() if p.sum() > 0 else np.full(len(actions),
                                                  1.0 / len(actions))
      cached = self._evaluations[(seat, key)] = (float(value[0]), p, x)
    return cached

  # --- Search ----------------------------------------------------------------

  def search(self, state: pyspiel.State, simulations: int | None = None,
             noise: bool = False, rng: np.random.Generator | None = None,
             tree_examples: list | None = None) -> SearchResult:
    """IS-MCTS with PUCT from the responder's infostate at `state`.

    Args:
      state: a state where a responder seat (one with an opponent) acts.
      simulations: simulations (default: config.simulations).
      noise: mix Dirichlet noise into the root prior (training).
      rng: random numbers (default: the trainer's).
      tree_examples: if given, gets [features, legal, visit policy, mean
        return] of the non-root nodes that at least
        `config.tree_value_targets` simulations passed through.
    """
    if state.is_terminal() or state.current_player() not in self.posteriors:
      raise ValueError(f"ismcts_br: search needs a state where a responder "
                       f"seat {list(self.seats)} acts, not "
                       f"{_state_player_name(state)}")
    seat = state.current_player()
    posterior = self.posteriors[seat]
    opponent = self.opponents[1 - seat]
    rng = self.rng if rng is None else rng
    simulations = self.config.simulations if simulations is None else int(
        simulations)
    cfg = self.config
    root_key = state.information_state_string(seat)
    value, prior, _ = self._evaluate(state, seat, root_key)
    prior = prior.copy()
    if noise and cfg.dirichlet_fraction > 0 and len(prior) > 1:
      eta = rng.dirichlet([cfg.dirichlet_alpha] * len(prior))
      f = cfg.dirichlet_fraction
      prior = (1 - f) * prior + f * eta
    root = _Node(state.legal_actions(), prior, value)
    tree = {root_key: root}
    c_puct, low, scale = cfg.c_puct, self.min_utility, self.utility_range
    for _ in range(simulations):
      h = posterior.sample(state, rng)
      path = []
      while True:
        if h.is_terminal():
          leaf_value = h.returns()[seat]
          break
        if h.is_chance_node():
          h.apply_action(_sample_chance(h, rng))
          continue
        if h.current_player() != seat:
          h.apply_action(opponent.sample(h, rng))
          continue
        key = h.information_state_string(seat)
        node = tree.get(key)
        if node is None:
          leaf_value, p, x = self._evaluate(h, seat, key)
          tree[key] = _Node(h.legal_actions(), p, leaf_value, x,
                            None if tree_examples is None else
                            self.net.legal_mask(h))
          break
        parent_value = node.value_sum / node.visits
        q = np.where(node.n > 0, node.w / np.maximum(node.n, 1), parent_value)
        score = ((q - low) / scale + c_puct * node.prior *
                 math.sqrt(max(node.n.sum(), 1.0)) / (1.0 + node.n))
        i = int(np.argmax(score))
        path.append((node, i))
        h.apply_action(node.actions[i])
      for node, i in path:
        node.n[i] += 1
        node.w[i] += leaf_value
        node.visits += 1
        node.value_sum += leaf_value
    if tree_examples is not None and cfg.tree_value_targets > 0:
      for node in tree.values():
        if node is root or node.visits - 1 < cfg.tree_value_targets:
          continue
        target = np.zeros(self.net.num_actions, np.float32)
        target[node.actions] = node.n / node.n.sum()
        # Its visits are its prior target, as at the root.
        tree_examples.append([node.features, node.legal, target, 1.0,
                              node.value_sum / node.visits])
    q = np.where(root.n > 0, root.w / np.maximum(root.n, 1),
                 root.value_sum / root.visits)
    return SearchResult(root.actions, root.n.copy(), q, root.prior)

  def decide(self, state: pyspiel.State,
             simulations: int | None = None) -> int:
    """The responder's greedy (most visited) action at `state`, without
    noise. Memoised per infostate until the network changes, so the
    responder plays a fixed policy that `play` and `exact_value` share; each
    infostate's search has its own seed."""
    seat = state.current_player()
    simulations = self.config.simulations if simulations is None else int(
        simulations)
    key = state.information_state_string(seat) if seat in (0, 1) else ""
    action = self._decisions.get((seat, key, simulations))
    if action is None:
      rng = np.random.default_rng(
          [self.config.seed, seat, zlib.crc32(key.encode())])
      action = self.search(state, simulations, noise=False, rng=rng).greedy()
      self._decisions[(seat, key, simulations)] = action
    return action

  # --- Training --------------------------------------------------------------

  def _episode(self, seat: int):
    """One training game with the responder in `seat`: (inputs, legal,
    visit policies) of its decisions and its return."""
    cfg, rng, net = self.config, self.rng, self.net
    opponent = self.opponents[1 - seat]
    state = self.game.new_initial_state()
    records = []
    tree_records = []
    moves = 0
    while not state.is_terminal():
      if state.is_chance_node():
        state.apply_action(_sample_chance(state, rng))
        continue
      if state.current_player() != seat:
        state.apply_action(opponent.sample(state, rng))
        continue
      extra = [] if cfg.tree_value_targets > 0 else None
      result = self.search(state, noise=True, tree_examples=extra)
      tree_records.extend(extra or [])
      visits = result.visits
      target = np.zeros(net.num_actions, np.float32)
      target[result.actions] = visits / visits.sum()
      _, _, x = self._evaluate(state, seat,
                               state.information_state_string(seat))
      records.append([x, net.legal_mask(state), target, 1.0, None])
      greedy = result.greedy()
      action = greedy
      if cfg.epsilon > 0 and rng.random() < cfg.epsilon:
        action = result.actions[int(rng.integers(len(result.actions)))]
      elif moves < cfg.temperature_moves and cfg.temperature > 0:
        weights = visits ** (1.0 / cfg.temperature)
        i = rng.choice(len(visits), p=weights / weights.sum())
        action = result.actions[int(i)]
      if action != greedy and cfg.off_policy_mask:
        for record in records:
          record[3] = 0.0
      moves += 1
      state.apply_action(action)
    return records + tree_records, float(state.returns()[seat])

  def _add(self, records, value: float) -> None:
    size = self.config.replay_size
    for x, legal, target, value_mask, own_value in records:
      i = self._buffer_count % size
      self._buffer["inputs"][i] = x
      self._buffer["legal"][i] = legal
      self._buffer["value"][i] = value if own_value is None else own_value
      self._buffer["value_mask"][i] = value_mask
      self._buffer["policy"][i] = target
      self._buffer_count += 1

  @property
  def replay_examples(self) -> int:
    return min(self._buffer_count, self.config.replay_size)

  def _update(self) -> dict[str, float]:
    n = self.replay_examples
    index = self.rng.integers(0, n, size=self.config.batch_size)
    b = self._buffer
    return self.net.train_step(b["inputs"][index], b["legal"][index],
                               b["value"][index], b["policy"][index],
                               b["value_mask"][index])

  def train(self, games: int | None = None, progress: bool = True,
            callback: Callable[["ISMCTSBR", dict[str, Any]], Any] | None = None
            ) -> list[dict[str, float]]:
    """Plays `games` training games (default config.games), alternating the
    responder's seat, each followed by `updates_per_game` optimiser steps once
    the replay buffer holds a batch. Calls may be repeated to train on.

    Returns:
      One entry per game: {"game", "seat", "return", and, after updates, the
      mean "loss", "value_loss", "policy_loss" of its steps}. `callback(self,
      entry)` is called after every game.
    """
    cfg = self.config
    games = cfg.games if games is None else int(games)
    if games < 0:
      raise ValueError(f"ismcts_br: games must be >= 0, got {games}")
    history = []
    recent: list[float] = []
    with progress_bar(games, f"ISMCTS-BR {self.game}",
                      disable=not progress) as bar:
      for _ in range(games):
        seat = self.seats[self.games_played % len(self.seats)]
        records, value = self._episode(seat)
        self._add(records, value)
        self.games_played += 1
        entry: dict[str, Any] = {"game": self.games_played, "seat": seat,
                                 "return": value}
        if self.replay_examples >= cfg.batch_size and cfg.updates_per_game:
          steps = [self._update() for _ in range(cfg.updates_per_game)]
          self._params_changed()
          for k in steps[0]:
            entry[k] = float(np.mean([s[k] for s in steps]))
          recent = (recent + [entry["loss"]])[-100:]
        history.append(entry)
        bar.update(1)
        if recent and self.games_played % 10 == 0:
          bar.set_postfix_str(f"loss {np.mean(recent):.4f} "
                              f"examples {self._buffer_count}")
        if callback is not None:
          callback(self, entry)
    return history

  # --- Evaluation ------------------------------------------------------------

  def _check_seat(self, seat: int) -> None:
    if seat not in self.posteriors:
      raise ValueError(f"ismcts_br: no opponent for responder seat {seat!r}; "
                       f"responder seats: {list(self.seats)}")

  def play(self, num_games: int, seat: int, seed: int = 0,
           simulations: int | None = None) -> Estimate:
    """Mean return (and standard error) of the responder in `seat` over
    `num_games` sampled games, greedy at each decision (`decide`)."""
    self._check_seat(seat)
    if int(num_games) < 1:
      raise ValueError(f"ismcts_br: num_games must be >= 1, got {num_games}")
    rng = np.random.default_rng([seed, seat])
    opponent = self.opponents[1 - seat]
    returns = np.empty(int(num_games))
    for g in range(int(num_games)):
      state = self.game.new_initial_state()
      while not state.is_terminal():
        if state.is_chance_node():
          state.apply_action(_sample_chance(state, rng))
        elif state.current_player() != seat:
          state.apply_action(opponent.sample(state, rng))
        else:
          state.apply_action(self.decide(state, simulations))
      returns[g] = state.returns()[seat]
    stderr = (float(returns.std(ddof=1) / math.sqrt(len(returns)))
              if len(returns) > 1 else float("nan"))
    return Estimate(float(returns.mean()), stderr, len(returns))

  def joint_policy(self, seat: int,
                   simulations: int | None = None) -> os_policy.Policy:
    """An OpenSpiel policy: the responder's greedy policy in `seat` (searched
    on demand), the opponent in the other."""
    self._check_seat(seat)
    return _JointPolicy(self, seat, simulations)

  def exact_value(self, seat: int, simulations: int | None = None) -> float:
    """The exact expected return of the responder's greedy policy in `seat`
    against the opponent (OpenSpiel's policy_value; no sampling error). Only
    the responder infostates the walk reaches are searched."""
    policy = self.joint_policy(seat, simulations)
    values = expected_game_score.policy_value(self.game.new_initial_state(),
                                              [policy, policy])
    return float(values[seat])

  # --- Checkpoints -----------------------------------------------------------

  def save(self, path: str) -> None:
    """Saves the network (with the settings and games played)."""
    self.net.save(path, extra={"ismcts_br": self.config.to_json(),
                               "games_played": self.games_played})

  @classmethod
  def from_checkpoint(cls, path: str, game: pyspiel.Game | str,
                      opponents: Mapping[int, Opponent],
                      config: ISMCTSBRConfig | None = None) -> "ISMCTSBR":
    """An ISMCTSBR with the network saved at `path` (settings from the
    checkpoint unless `config` is given)."""
    net = cvpn.ValuePriorNet.load(path, game)
    if config is None:
      try:
        config = ISMCTSBRConfig.from_json(
            net.metadata.get("extra", {}).get("ismcts_br", {}))
      except (ValueError, TypeError) as e:
        raise cvpn.CheckpointError(f"{path!r}: bad ISMCTS-BR settings: {e}"
                                   ) from None
    br = cls(net.game, opponents, config, net=net)
    br.games_played = int(net.metadata.get("extra", {}).get("games_played", 0))
    return br


class _JointPolicy(os_policy.Policy):
  """The responder's greedy searched policy in one seat, the opponent in the
  other."""

  def __init__(self, br: ISMCTSBR, seat: int, simulations: int | None):
    super().__init__(br.game, [0, 1])
    self._br, self._seat, self._simulations = br, seat, simulations
    self._opponent = br.opponents[1 - seat]

  def action_probabilities(self, state, player_id=None):
    player = state.current_player() if player_id is None else player_id
    if player == self._seat:
      return {self._br.decide(state, self._simulations): 1.0}
    return self._opponent.action_probabilities(state)


# --- Exact values and approximate exploitability -----------------------------


def exact_best_response_value(game: pyspiel.Game | str, opponent: Opponent,
                              seat: int) -> float:
  """The value of OpenSpiel's exact best response in `seat` to `opponent`
  (which sits in the other seat)."""
  if isinstance(game, str):
    game = pyspiel.load_game(game)
  if opponent.player != 1 - seat:
    raise ValueError(f"exact best response for seat {seat} needs the "
                     f"opponent in seat {1 - seat}, got seat {opponent.player}")
  br = os_best_response.BestResponsePolicy(game, seat, opponent.as_policy())
  return float(br.value(game.new_initial_state()))


def game_is_small(game: pyspiel.Game,
                  max_histories: int = EXACT_MAX_HISTORIES) -> bool:
  """True when `game` has at most `max_histories` histories (so exact best
  responses and policy values can be computed)."""
  count = 0
  stack = [game.new_initial_state()]
  while stack:
    state = stack.pop()
    count += 1
    if count > max_histories:
      return False
    if not state.is_terminal():
      stack.extend(state.child(a) for a in state.legal_actions())
  return True


def _opponents_for(game: pyspiel.Game, spec_or_opponents,
                   seats: Sequence[int]) -> dict[int, Opponent]:
  needed = sorted({1 - s for s in seats})
  if isinstance(spec_or_opponents, str):
    return {p: make_opponent(game, spec_or_opponents, p) for p in needed}
  if isinstance(spec_or_opponents, os_policy.Policy):
    return {p: Opponent.from_policy(spec_or_opponents, p) for p in needed}
  if isinstance(spec_or_opponents, Mapping):
    missing = [p for p in needed if p not in spec_or_opponents]
    if missing:
      raise ValueError(f"approximate_exploitability: no opponent for seat(s) "
                       f"{missing} (responder seats {list(seats)} need "
                       f"opponents in seats {needed})")
    return {p: spec_or_opponents[p] for p in needed}
  raise TypeError("approximate_exploitability: the opponent must be a spec "
                  "string, an OpenSpiel policy.Policy or {seat: Opponent}, "
                  f"got {type(spec_or_opponents).__name__}")


def approximate_exploitability(
    game: pyspiel.Game | str, spec_or_opponents,
    config: ISMCTSBRConfig | None = None, seats: Sequence[int] = (0, 1),
    exact: bool | None = None, num_games: int = 1000, progress: bool = False,
    br: ISMCTSBR | None = None) -> dict[str, Any]:
  """ISMCTS-BR's approximate best responses and NashConv of an opponent.

  Args:
    game: the game (or its string).
    spec_or_opponents: a `make_opponent` spec (the same policy in both
      seats), an OpenSpiel policy.Policy (ditto), or {seat: Opponent}.
    config: ISMCTS-BR settings (trained for `config.games` games).
    seats: the responder seats to evaluate.
    exact: also compute exact values (OpenSpiel's best response and the
      approximate responder's exact value); None: when the game has at most
      EXACT_MAX_HISTORIES histories.
    num_games: sampled games per seat for the approximate value.
    progress: show a training progress bar.
    br: an already trained ISMCTSBR to evaluate instead of training one.

  Returns:
    {"seats": {seat: {"approx_br_value", "stderr", "games", and when exact:
     "approx_br_exact_value" (the exact value of the approximate responder's
     policy), "exact_br_value", "percentage" (100 * approx / exact, sampled),
     "exact_percentage" (from the exact value); percentages are None when the
     exact value is <= 0}}, "approx_nash_conv" (sum of the sampled
     approximate values over seats; zero-sum), its "approx_nash_conv_stderr",
     and when exact: "approx_nash_conv_exact", "exact_nash_conv",
     "nash_conv_percentage", "train_seconds", "eval_seconds", "games"}.
  """
  if isinstance(game, str):
    game = pyspiel.load_game(game)
  seats = sorted(set(int(s) for s in seats))
  if not seats or any(s not in (0, 1) for s in seats):
    raise ValueError(f"approximate_exploitability: seats must be a non-empty "
                     f"subset of (0, 1), got {seats}")
  config = config or ISMCTSBRConfig()
  start = time.perf_counter()
  if br is None:
    br = ISMCTSBR(game, _opponents_for(game, spec_or_opponents, seats),
                  config)
    br.train(progress=progress)
  trained = time.perf_counter()
  if exact is None:
    exact = game_is_small(game)

  def percentage(value, reference):
    return 100.0 * value / reference if reference > 0 else None

  out: dict[str, Any] = {"game": str(game), "seats": {},
                         "games": br.games_played}
  for seat in seats:
    estimate = br.play(num_games, seat, seed=config.seed)
    entry: dict[str, Any] = {"approx_br_value": estimate.mean,
                             "stderr": estimate.stderr,
                             "games": estimate.games}
    if exact:
      entry["approx_br_exact_value"] = br.exact_value(seat)
      entry["exact_br_value"] = exact_best_response_value(
          game, br.opponents[1 - seat], seat)
      entry["percentage"] = percentage(entry["approx_br_value"],
                                       entry["exact_br_value"])
      entry["exact_percentage"] = percentage(entry["approx_br_exact_value"],
                                             entry["exact_br_value"])
    out["seats"][seat] = entry
  per_seat = out["seats"].values()
  out["approx_nash_conv"] = sum(e["approx_br_value"] for e in per_seat)
  out["approx_nash_conv_stderr"] = math.sqrt(sum(e["stderr"] ** 2
                                                 for e in per_seat))
  if exact:
    out["approx_nash_conv_exact"] = sum(e["approx_br_exact_value"]
                                        for e in per_seat)
    out["exact_nash_conv"] = sum(e["exact_br_value"] for e in per_seat)
    out["nash_conv_percentage"] = percentage(out["approx_nash_conv_exact"],
                                             out["exact_nash_conv"])
  out["train_seconds"] = trained - start
  out["eval_seconds"] = time.perf_counter() - trained
  return out
