"""The Student of Games bot, registered in OpenSpiel's bot registry as "sog".

    import open_spiel_sog  # registers "sog"
    bot = pyspiel.load_bot("sog", game, player, {"simulations": 100})
    bot = pyspiel.load_bot("sog(simulations=100,value_function=exact)", game,
                           player)

The bot plays by continual re-solving (`algorithms/sog/resolving.py`) with
GT-CFR (`algorithms/sog/gt_cfr.py`): at each of its decisions, and at the opponent's when
it is told of them (`inform_action`), it re-solves from the deepest public
state of its previous search tree on the way to the current one and keeps the
new search's summaries. Chance nodes just advance. `step_with_policy`
returns the searched policy at the bot's infostate; `last_decision()` the
latest decision's searched policy, value and belief (`Decision`).

Simultaneous-move games are played as their turn-based conversion
(`pyspiel.convert_to_turn_based`): player 0 moves first and player 1 does not
see that move until the round resolves, which is the same game.

Parameters (all optional; see `SoGConfig` for the meaning of each):
  simulations, expansions_per_update, top_k, value_function, alpha, seed,
  c_puct, alternating, averaging_power, walks_per_simulation,
  search_opponent_nodes, exact_tolerance, exact_max_iterations, rollouts,
  checkpoint, time_limit, infostates, max_histories, policy_threshold,
  subgame, root_histories, order2_histories, gadget, freeze_other_selves,
  prior_search, purify, leaf_rollouts, engine, puct_values, leaf_batch, threads.

Perfect-information games of C++ states are searched by the native history
engine (`algorithms/sog/engine.py`, DESIGN.md section 16): GT-CFR over a
tree of histories in the C++ shim, one call per search (`engine`).

Past the enumeration bound (`subgame`), the bot searches an anchored subgame
instead (`algorithms/sog/anchored/`, DESIGN.md section 15): its own
infostate and the order-2 set around it, grown by histories and kept across
its moves.

Its parts: the parameters (`sog_config.py`: `SoGConfig` and the
algorithms' configurations), the value function (`sog_values.py`), the
decision record (`sog_decision.py`) and the garbage a timed decision
collects (`sog_clock.py`); this module chooses the search path and plays.
"""

from __future__ import annotations

import time
from typing import Any, Mapping

import numpy as np
import pyspiel

from open_spiel_sog.algorithms.sog import anchored
from open_spiel_sog.algorithms.sog import beliefs
from open_spiel_sog.algorithms.sog import engine as engine_lib  # pylint: disable=unused-import  (sog.engine_lib)
from open_spiel_sog.algorithms.sog import resolving
from open_spiel_sog.algorithms.sog import rollout_values
from open_spiel_sog.bots import sog_clock
from open_spiel_sog.bots import sog_paths
from open_spiel_sog.bots import sog_values
from open_spiel_sog.bots.sog_config import anchored_config
from open_spiel_sog.bots.sog_config import resolve_config
from open_spiel_sog.bots.sog_config import SoGConfig
from open_spiel_sog.bots.sog_config import SUBGAMES  # pylint: disable=unused-import  (sog.SUBGAMES)
from open_spiel_sog.bots.sog_decision import Decision
from open_spiel_sog.bots.sog_decision import threshold_policy
from open_spiel_sog.bots.sog_values import make_value_function  # pylint: disable=unused-import  (sog.make_value_function)
from open_spiel_sog.bots.sog_values import resolved_value_function  # pylint: disable=unused-import
from open_spiel_sog.public_state import InfostateSplit
from open_spiel_sog.public_state import ObserverConfig
from open_spiel_sog.public_state import PublicState
from open_spiel_sog.public_state import PublicStateObserver
from open_spiel_sog.public_state import search_game  # pylint: disable=unused-import  (sog.search_game)
from open_spiel_sog.public_state import unsupported_infostate_source
from open_spiel_sog.utils import notices

_perfect_information = sog_values.perfect_information


class SoGBot(pyspiel.Bot):
  """Student of Games: continual re-solving with GT-CFR (see module doc)."""

  def __init__(self, game: pyspiel.Game, player: int,
               config: SoGConfig | Mapping[str, Any] | None = None):
    pyspiel.Bot.__init__(self)
    if not isinstance(config, SoGConfig):
      config = SoGConfig.from_params(config)
    if player not in (0, 1):
      raise ValueError(f"sog: player must be 0 or 1, got {player}")
    self.config = config
    self._game = game
    self._simultaneous = (game.get_type().dynamics ==
                          pyspiel.GameType.Dynamics.SIMULTANEOUS)
    self._search_game = search_game(game)
    self._player = player
    self._rng = np.random.default_rng(config.seed)
    self._last: tuple | None = None  # what last_decision() reads
    self.anchored = None
    why = sog_paths.anchored_reason(config, self._search_game)
    if why is not None:
      self.anchored = anchored.AnchoredSearch(
          self._search_game, player, anchored_config(config),
          config.infostates,
          native=sog_paths.native_anchored(config, self._search_game),
          network=sog_values.anchored_network(config, self._search_game,
                                              why))
    # (The anchored tree lives in C++ or in index arrays: no cyclic garbage.)
    self._garbage = sog_clock.GarbageCollection(config.time_limit,
                                       full=self.anchored is None)
    self._purify = config.purify and (
        _perfect_information(self._search_game) or self.anchored is not None)
    self._build(config.infostates)
    self.native = sog_paths.native_search(
        config, self._search_game, self.policy_value, self.value_fn,
        self.anchored is not None)

  def _build(self, infostates: str) -> None:
    """The observer, value function and resolver, on `infostates` keys."""
    config = self.config
    self.observer = PublicStateObserver(
        self._search_game,
        ObserverConfig(infostates=infostates,
                       max_histories=config.max_histories,
                       sample_seed=config.seed))
    # Samples of the public states on the way to a decision favour this
    # bot's own infostate (never the opponent's: it cannot see that).
    self.observer.favoured_player = self._player
    self.value_fn, self.policy_value = sog_values.bot_value_functions(
        config, self._search_game)
    # Under a time limit, public states within max_histories may shrink
    # where building them is slow, except for value functions that need
    # them exact (a network's slots; the token network takes samples).
    self.observer.shrink_within_bound = isinstance(
        self.value_fn, rollout_values.RolloutValueFunction) or getattr(
            self.value_fn, "accepts_sampled_public_states", False)
    self._rollouts_cut = False
    self.resolver = resolving.Resolver(
        self.observer, self._player, self.value_fn,
        resolve_config(config, self._search_game), rng=self._rng)

  def _search(self, state, player: int, deadline: float | None):
    """Locates `state` for `player` and re-solves there by `deadline`:
    (public state, history index, search result). Where the game's
    infostate strings turn out to forget (a decision infostate lies in two
    public states) and the keys were chosen automatically, the bot switches
    to action-observation histories (once, with a notice) and searches
    again."""
    try:
      return self._locate_and_search(state, player, deadline)
    except InfostateSplit as e:
      if (self.config.infostates != "auto" or
          self.observer.infostate_source != "string" or
          unsupported_infostate_source(self._search_game, "aoh")):
        raise
      notices.notice(
          "infostate strings", str(self._search_game),
          f"sog: {self._search_game}'s infostate strings forget what the "
          f"player saw ({str(e).split(':', 1)[0]}...); switching to "
          "action-observation histories")
      self._build("aoh")
      return self._locate_and_search(state, player, deadline)

  def _locate_and_search(self, state, player: int, deadline: float | None):
    # Under a time limit, sampled public states built on the way and in the
    # search hold fewer histories where building them is slow (see
    # the observer's Sampler.affordable_bound).
    self.observer.deadline = deadline
    try:
      ps, h = self._locate(state, player)
      self._fit_rollouts(ps, deadline)
      return ps, h, self._prune(self.resolver.search(ps, deadline))
    finally:
      self.observer.deadline = None

  # Under a time limit, the rollouts of one full expansion of the searched
  # public state may take at most this fraction of it; where even one
  # rollout per child history would take more than _ROLLOUT_CAP_SHARE of it,
  # rollouts are also cut short to fit that share.
  _ROLLOUT_SHARE = 0.3
  _ROLLOUT_CAP_SHARE = 0.5

  def _fit_rollouts(self, ps: PublicState, deadline: float | None) -> None:
    """Under `time_limit`, before each search: fewer rollouts per history
    (at least 1) where the rollouts of one full expansion of the searched
    public state (its histories times their moves) would take more than
    `_ROLLOUT_SHARE` of the limit (19x19 go: 361 children of 1.7 ms
    rollouts, 5 s at 8 per history); rollouts stopped after a number of
    actions (scored as a draw) where even one per child history would take
    more than `_ROLLOUT_CAP_SHARE` (hive: 282 children of 16 ms rollouts);
    and the search's deadline for the rollout value function, which samples
    a leaf's histories down where they would not fit (kriegspiel: 300
    histories of 2.5 ms rollouts). An update cannot stop half way through
    valuing its new leaves. A rollout is timed on 3 from the first searched
    state, then by the value function's running means; once cut short,
    rollouts stay cut (to a length refitted at each search); a notice is
    printed the first time rollouts are cut."""
    vf = self.value_fn
    if (not self.config.time_limit or
        not isinstance(vf, rollout_values.RolloutValueFunction)):
      return
    history = ps.histories[0]
    if vf.seconds_per_rollout is None:
      start = time.perf_counter()
      _, _, moves = rollout_values.random_rollouts(history, 3,
                                                   self.config.seed)
      vf.record_time(time.perf_counter() - start, 3, moves)
    vf.deadline = deadline
    limit = self.config.time_limit
    children = len(ps.histories) * max(len(history.legal_actions()), 1)
    one_each = vf.seconds_per_rollout * children
    fit = int(self._ROLLOUT_SHARE * limit / max(one_each, 1e-12))
    rollouts = max(1, min(self.config.rollouts, fit))
    if vf.max_moves or one_each > self._ROLLOUT_CAP_SHARE * limit:
      per_move = vf.seconds_per_move or vf.seconds_per_rollout
      vf.max_moves = max(1, int(self._ROLLOUT_CAP_SHARE * limit /
                                (per_move * children)))
    if rollouts < self.config.rollouts and not self._rollouts_cut:
      self._rollouts_cut = True
      cap = (f", each stopped after {vf.max_moves} actions (scored as a "
             "draw)" if vf.max_moves else "")
      notices.notice(
          "rollouts cut", f"{self._search_game} {limit:g}",
          f"sog: {self.config.rollouts} rollouts per history do not fit "
          f"time_limit={limit:g} in {self._search_game} "
          f"({children} child histories at "
          f"{1e3 * vf.seconds_per_rollout:.2f} ms per rollout); using "
          f"{rollouts} where they do not{cap}")
    vf.num_rollouts = rollouts

  def _prune(self, result):
    """Drops the public states that play can no longer reach (those off
    the path above the search's root), so that memory stays bounded over a
    game by the path and the latest search tree."""
    self.value_fn.forget(self.observer,
                         self.observer.prune(result.tree.root_ps))
    return result

  @property
  def player(self) -> int:
    return self._player

  # --- pyspiel.Bot -----------------------------------------------------------

  def restart(self):
    self._last = None
    if self.anchored is not None:
      self.anchored.reset()
    self.resolver.reset()
    # A new game: nothing built for the previous one is needed.
    self.value_fn.forget(self.observer, self.observer.restart())

  def restart_at(self, state):
    self.restart()

  def provides_policy(self):
    return True

  def inform_action(self, state, player_id, action):
    if (self.anchored is not None or not self.config.search_opponent_nodes or player_id == self._player
        or player_id < 0 or state.is_terminal() or
        self.observer.source == "perfect_information"):
      # (In perfect-information games every search starts afresh at its
      # state: a search at the opponent's decision would feed nothing.)
      return
    deadline = self._deadline()
    with self._garbage.decision():
      self._search(state, player_id, deadline)

  def inform_actions(self, state, actions):
    del state, actions  # the next step replays the history

  def step_with_policy(self, state):
    policy = self._policy(state)
    actions = list(policy)
    probs = np.asarray([policy[a] for a in actions])
    action = int(actions[self._rng.choice(len(actions), p=probs / probs.sum())])
    return [(a, float(p)) for a, p in zip(actions, probs)], action

  def step(self, state):
    return self.step_with_policy(state)[1]

  def get_policy(self, state):
    return list(self._policy(state).items())

  # --- Internals -------------------------------------------------------------

  def _turn_based_state(self, state, player: int) -> pyspiel.State:
    """The turn-based state where `player` acts for a simultaneous node."""
    tb = self._search_game.new_initial_state()
    for a in state.history():
      tb.apply_action(a)
    if state.is_simultaneous_node() and player == 1:
      # Player 0's pending move is hidden from player 1: any legal one
      # gives the same public state and player 1's infostate.
      tb.apply_action(tb.legal_actions()[0])
    return tb

  def _locate(self, state, player: int) -> tuple[PublicState, int]:
    if self._simultaneous:
      state = self._turn_based_state(state, player)
    ps, h = self.observer.public_state_of(state)
    if not self.observer.searchable(ps):
      # Asked about a state above the pruned path (not the order of play):
      # start over from the root, as at a new game.
      self.restart()
      ps, h = self.observer.public_state_of(state)
    return ps, h

  def _deadline(self, fraction: float = 1.0) -> float | None:
    """The `time.monotonic()` time a search started now must end by."""
    if not self.config.time_limit:
      return None
    return time.monotonic() + fraction * self.config.time_limit

  def _policy(self, state) -> dict[int, float]:
    if state.is_terminal():
      raise ValueError("sog: step called on a terminal state")
    if not state.is_simultaneous_node() and (
        state.current_player() != self._player):
      raise ValueError(f"sog: step called for player {self._player} at a "
                       f"state where player {state.current_player()} acts")
    deadline = self._deadline()
    if self.native is not None:
      # (Nothing of Python's to collect: the tree lives in C++.)
      result = self.native.search(state, deadline)
      policy = {a: result.policy.get(a, 0.0) for a in state.legal_actions()}
      self._last = (policy, result, state.clone())
      return self._played(policy)
    if self.anchored is not None:
      if self._simultaneous:
        state = self._turn_based_state(state, self._player)
      with self._garbage.decision():
        result = self.anchored.search(state, deadline)
      legal = state.legal_actions()
      policy = {a: result.policy.get(a, 0.0) for a in legal}
      self._last = (policy,)
      return self._played(policy)
    with self._garbage.decision():
      if self._simultaneous and self._player == 1 and (
          self.config.search_opponent_nodes):
        self._search(state, 0, self._deadline(0.5))
      ps, h, result = self._search(state, self._player, deadline)
    j = int(ps.history_infostate[self._player][h])
    policy = result.policy(ps)[j]
    legal = (state.legal_actions(self._player) if state.is_simultaneous_node()
             else state.legal_actions())
    policy = {a: policy.get(a, 0.0) for a in legal}
    self._last = (policy, ps, h, result)
    return self._played(policy)

  def _played(self, policy: dict[int, float]) -> dict[int, float]:
    """The policy the bot plays from the searched `policy` (over the legal
    actions, in increasing order): its top action, the lowest of equals,
    where `purify` applies (perfect-information games and the anchored
    subgame); else the searched policy under `policy_threshold`."""
    if self._purify:
      best = max(policy, key=policy.get)
      return {a: float(a == best) for a in policy}
    return threshold_policy(policy, self.config.policy_threshold)

  def last_decision(self) -> Decision | None:
    """The searched policy, value and belief of the bot's latest decision
    in this game (None before its first). Simultaneous-move games: the
    belief's histories are the turn-based game's."""
    if self._last is None:
      return None
    me, opp = self._player, 1 - self._player
    if len(self._last) == 3:  # the native engine: the state is the belief
      policy, result, state = self._last
      return Decision(policy=dict(policy), value=result.value,
                      belief=beliefs.weighted_belief(me, [state], [1.0],
                                                     exact=True),
                      opponent_reach={})
    if len(self._last) == 1:
      result, root = self.anchored.last_result, self.anchored.last_root
      mine = [h for h in root if h.keys[me] == root[0].keys[me]]
      belief = beliefs.weighted_belief(
          me, [h.state for h in mine],
          [h.chance * h.reach[opp] for h in mine], exact=False)
      return Decision(policy=dict(self._last[0]), value=result.value,
                      belief=belief,
                      opponent_reach={h.keys[opp]: h.reach[opp] for h in mine})
    policy, ps, h, result = self._last
    summary = result.summaries[ps.id]
    belief = beliefs.public_state_belief(ps, h, me, summary.ranges[opp])
    # A counterfactual value over the infostate's reach is the expected
    # return there.
    j = int(ps.history_infostate[me][h])
    members = ps.history_infostate[me] == j
    reach = np.dot(ps.chance_reach[members],
                   summary.ranges[opp][ps.history_infostate[opp][members]])
    value = float(summary.values[me][j] / reach) if reach > 0 else 0.0
    keys = ps.infostates(opp)
    reaches = {keys[k]: float(summary.ranges[opp][k])
               for k in np.unique(ps.history_infostate[opp][members])}
    return Decision(policy=dict(policy), value=value, belief=belief,
                    opponent_reach=reaches)


def _factory(game: pyspiel.Game, player: int, params: dict) -> pyspiel.Bot:
  return SoGBot(game, player, SoGConfig.from_params(params))


def _can_play(game: pyspiel.Game, player: int) -> bool:
  try:
    search_game(game)
  except ValueError:
    return False
  return player in (0, 1)


def register() -> None:
  """Registers "sog" in OpenSpiel's bot registry (idempotent)."""
  from open_spiel_sog import registry  # pylint: disable=g-import-not-at-top
  if "sog" in registry.registered_by_us():
    return
  registry.register_bot("sog", _factory, _can_play)
