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
  purify, leaf_rollouts, engine, puct_values, leaf_batch.

Perfect-information games of C++ states are searched by the native history
engine (`algorithms/sog/engine.py`, DESIGN.md section 16): GT-CFR over a
tree of histories in the C++ shim, one call per search (`engine`).

Past the enumeration bound (`subgame`), the bot searches an anchored subgame
instead (`algorithms/sog/anchored/`, DESIGN.md section 15): its own
infostate and the order-2 set around it, grown by histories and kept across
its moves.

The module is long (about 890 lines) for one concern: `SoGConfig` documents
each of its 28 parameters where they are read, and what bends a decision
to `time_limit` (rollouts fitted to it, garbage collected before it) is
the bot's own and lives beside it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import math
import time
from typing import Any, ClassVar, Mapping

import numpy as np
import pyspiel

from open_spiel_sog.algorithms.sog import anchored
from open_spiel_sog.algorithms.sog import beliefs
from open_spiel_sog.algorithms.sog import engine as engine_lib
from open_spiel_sog.algorithms.sog import gt_cfr
from open_spiel_sog.algorithms.sog import resolving
from open_spiel_sog.algorithms.sog import rollout_values
from open_spiel_sog.algorithms.sog import VALUE_FUNCTIONS
from open_spiel_sog.bots import common
from open_spiel_sog.bots import sog_values
from open_spiel_sog.bots.sog_values import make_value_function  # pylint: disable=unused-import  (sog.make_value_function)
from open_spiel_sog.bots.sog_values import resolved_value_function  # pylint: disable=unused-import
from open_spiel_sog.public_state import INFOSTATE_SOURCES
from open_spiel_sog.public_state import InfostateSplit
from open_spiel_sog.public_state import ObserverConfig
from open_spiel_sog.public_state import PublicState
from open_spiel_sog.public_state import PublicStateObserver
from open_spiel_sog.public_state import search_game  # pylint: disable=unused-import  (sog.search_game)
from open_spiel_sog.public_state import unsupported_infostate_source
from open_spiel_sog.utils import notices

SUBGAMES = ("auto", "public_state", "anchored")


@dataclasses.dataclass(frozen=True)
class SoGConfig:
  """Parameters of the sog bot.

  Attributes:
    simulations: s, GT-CFR expansion simulations per search (anchored:
      growth simulations); -1 (the default) is 100 without a time limit
      and no cap under `time_limit` (the search runs by time alone). A
      value >= 0 given with `time_limit` caps the search: it stops at
      whichever comes first. `search_simulations` is the resolved count.
    expansions_per_update: c, simulations per CFR regret-update phase
      (fractional: ceil(1/c) updates per simulation); -1 (the default) is
      1 on the Python engine and, on the native engine, phases paced by
      work (`engine.PACED`: one CFR+ iteration after each phase whose
      rollouts and walks played a fiftieth of the iteration's node
      visits, so that the passes stay a bounded share of a search).
    top_k: children added per expansion, by prior; -1 picks 1 for perfect
      information games and 0 (all children) otherwise.
    value_function: "cvpn" (a trained network: `checkpoint`, or the one
      shipped for the game), "exact", "rollout" or "auto" (the shipped
      network when the game has one, rollout with a notice otherwise).
      A perfect-information game's network is a policy-value network
      (examples/train.py's perfect_information recipe; connect_four's
      ships): it
      values the native engine's leaves and gives PUCT its priors.
    alpha: re-solving gadget mix: alpha * follow + (1 - alpha) * previous
      opponent range.
    seed: seed of the bot's random numbers (sampling and rollouts).
    c_puct: PUCT exploration constant (in units of the utility range).
    alternating: alternating instead of simultaneous CFR updates in search.
    averaging_power: the search's average policy (what the bot plays) and
      its averaged values (the re-solving summaries) weigh CFR update t by
      t ** averaging_power: 1 is CFR+'s linear averaging (DESIGN.md's
      choice, the default), 2 quadratic, which leaves SoG(100, 1) with the
      shipped networks less exploitable on Leduc and liar's dice and more
      on Kuhn and Scotland Yard (docs/sog.md), 0 uniform.
    walks_per_simulation: an expansion simulation whose walk ends at a
      terminal public state already in the tree is drawn again, up to this
      many walks, so that each simulation grows the tree; 1 counts every
      walk as a simulation, as the paper's pseudocode reads.
    search_opponent_nodes: also re-solve at the opponent's decisions (the
      paper's choice), so the summaries stay current (imperfect-information
      games: in perfect-information ones each search starts at its state).
    exact_tolerance: the exact value function solves each leaf query until
      the leaf subgame's exploitability under the queried ranges is at most
      this fraction of the game's utility range.
    exact_max_iterations: cap on the PublicTreeCFR iterations of one exact
      leaf query (queries that hit it are counted and warned about).
    rollouts: rollouts per history of the rollout value function.
    checkpoint: path of a CVPN checkpoint, or of a policy-value one for a
      perfect-information game (implies value_function "cvpn" when
      value_function is "auto").
    time_limit: seconds per decision (0: off). Each search, the first
      decision's set-up included, stops when its next phase would pass it;
      with `simulations` not given it searches by time alone, with
      `simulations` given that stays the cap.
    infostates: how infostates are identified: "auto", "string" (the
      game's information_state_string), "history" (perfect-information
      games) or "aoh" (action-observation histories); see
      docs/public_states.md.
    max_histories: public states with more histories than this are sampled
      (a chance-weighted sample of this many, always holding the bot's own
      history, refreshed when play leaves it); 0 enumerates every public
      state exactly. Smaller ones are exact.
    subgame: "public_state" (GT-CFR over public states, sampled past
      max_histories), "anchored" (the anchored subgame: the bot's infostate
      and the order-2 set, grown by histories and kept across moves; leaves
      valued by rollouts or a token CVPN) or "auto": anchored where the
      bot's network was trained on it (examples/train.py's fog_of_war
      recipe) or the
      game's public states exceed max_histories (`anchored.needs_anchored`),
      public states otherwise (enumerable games keep the exact path).
    root_histories: anchored: histories of the bot's infostate at the root.
    order2_histories: anchored: histories of each opponent infostate
      touching the bot's (the order-2 set).
    gadget: anchored: "resolve" (an exit per opponent root infostate at the
      previous search's value) or "none".
    freeze_other_selves: anchored: play the bot's other root infostates at
      the previous search's policy (1-KLSS) instead of re-optimising them
      (an ablation).
    purify: in perfect-information games and the anchored subgame, play
      the searched policy's most probable action (the lowest of equals), as
      AlphaZero plays its most visited move and Obscuro its top action
      under the Resolve gadget: a perfect-information game always has a
      pure equilibrium. false: draw from the searched policy (then
      policy_threshold applies). Imperfect-information games on the
      public-state path always draw from it (the paper's bot). connect_four
      against mcts and phantom_ttt against IS-MCTS: docs/sog.md and
      docs/fog_of_war.md.
    leaf_rollouts: anchored: random rollouts valuing each new leaf history
      (phantom_ttt, first search at time_limit=1: x's value 0.50 with 1,
      0.59 with 4).
    engine: "auto" (the native history engine, `algorithms/sog/engine.py`,
      for perfect-information games whose states are C++ states when the
      value function is rollouts or a policy-value network and the C++ shim
      is built; the Python engine otherwise, with no error), "native"
      (refused, naming why, where it cannot run) or "python" (the
      public-state GT-CFR of `algorithms/sog/gt_cfr.py`, the only engine
      before 2026-11-28; refused with a policy-value network). Under
      "native" a leaf is valued by `rollouts` random rollouts or the
      network.
    puct_values: the native engine's perfect-information growth: the action
      values its PUCT half reads, "backed_up" (the mean of the leaf values
      made below each child, as MCTS backs rollouts up) or "cfr" (the
      latest regret update's counterfactual values over the opponent's
      reach, GT-CFR's and the Python engine's); the CFR+ solve and the
      policy played are the same under both. docs/engine.md measures them.
    leaf_batch: with a policy-value network on the native engine: new
      leaves valued per network call (the walks of a batch see its earlier
      leaves' visits, not yet their values); -1 (auto): 8 under a
      time_limit (in connect_four at 1 s a move, 3.5 times the simulations
      of 1), 1 otherwise, where a search's simulations are counted and each
      should see every value before it (docs/training.md). With a token
      CVPN at the anchored subgame's leaves: at most this many leaves per
      network call, a phase's leaves at least; -1 (auto): 256 (in
      phantom_ttt at 0.2 s a move, about twice the simulations of 64).
    policy_threshold: the bot plays (and `get_policy` gives) the searched
      policy with the actions below this probability dropped and the rest
      renormalised, the largest always kept (thresholding: Ganzfried and
      Sandholm, "Strategy purification and thresholding", AAMAS 2012);
      0 plays the searched policy as it is (the paper's bot). Thresholding
      cuts the noise a short search leaves in the policy's tail at the
      price of soundness: the played policy can be more exploitable.
  """
  simulations: int = -1
  expansions_per_update: float = -1.0
  top_k: int = -1
  value_function: str = "auto"
  alpha: float = 0.5
  seed: int = 0
  c_puct: float = 1.0
  alternating: bool = True
  averaging_power: float = 1.0
  walks_per_simulation: int = 100
  search_opponent_nodes: bool = True
  exact_tolerance: float = 1e-3
  exact_max_iterations: int = 10_000
  rollouts: int = 8
  checkpoint: str = ""
  time_limit: float = 0.0
  infostates: str = "auto"
  max_histories: int = 300
  policy_threshold: float = 0.0
  subgame: str = "auto"
  root_histories: int = 128
  order2_histories: int = 8
  gadget: str = "resolve"
  freeze_other_selves: bool = False
  leaf_rollouts: int = 4
  purify: bool = True
  engine: str = "auto"
  puct_values: str = "backed_up"
  leaf_batch: int = -1

  # simulations=-1 (auto): the count without a time limit, and the cap
  # (out of reach) that leaves a time-limited search to the clock.
  AUTO_SIMULATIONS: ClassVar[int] = 100
  UNCAPPED_SIMULATIONS: ClassVar[int] = 10**9

  @property
  def python_expansions_per_update(self) -> float:
    """c on the Python engine (-1, auto: 1)."""
    return 1.0 if self.expansions_per_update == -1 else (
        self.expansions_per_update)

  @property
  def search_simulations(self) -> int:
    """The simulations a search runs (its cap under `time_limit`):
    `simulations` where given (>= 0); for -1 (auto), 100 without a time
    limit and UNCAPPED_SIMULATIONS (time alone) under one."""
    if self.simulations >= 0:
      return self.simulations
    return (self.UNCAPPED_SIMULATIONS if self.time_limit else
            self.AUTO_SIMULATIONS)

  @classmethod
  def from_params(cls, params: Mapping[str, Any] | None) -> "SoGConfig":
    """Builds a config from bot parameters, with clear errors."""
    values = common.parse_params("sog", params,
                                 common.dataclass_defaults(cls))
    config = cls(**values)
    config.validate()
    return config

  @classmethod
  def params_from_text(cls, text: str, refused: Mapping[str, str],
                       flag: str = "--params") -> dict[str, Any]:
    """Typed, checked parameters from a command-line flag's
    'name=value,name=value' text. A name in `refused` (a benchmark's own
    flags) gets "`flag`: NAME `refused[NAME]`"; a malformed entry or a bad
    parameter a ValueError naming `flag`."""
    raw = {}
    for entry in filter(None, (e.strip() for e in text.split(","))):
      name, sep, value = entry.partition("=")
      name = name.strip()
      if not sep or not name:
        raise ValueError(f"{flag}: malformed entry {entry!r}; expected "
                         "'name=value,name=value'")
      if name in refused:
        raise ValueError(f"{flag}: {name} {refused[name]}")
      raw[name] = value.strip()
    try:
      config = cls.from_params(raw)
    except ValueError as e:
      raise ValueError(f"{flag}: {e}") from None
    return {name: getattr(config, name) for name in raw}

  def validate(self) -> None:
    if self.simulations < -1:
      raise ValueError(
          "sog: simulations must be >= 0 (a count; with time_limit, a cap) "
          f"or -1 (auto: {self.AUTO_SIMULATIONS} without time_limit, time "
          f"alone with it), got {self.simulations}")
    if not (self.expansions_per_update > 0 or
            self.expansions_per_update == -1) or not math.isfinite(
                self.expansions_per_update):
      raise ValueError("sog: expansions_per_update must be a positive "
                       "number or -1 (auto: 1, paced by work on the native "
                       f"engine), got {self.expansions_per_update}")
    if self.puct_values not in engine_lib.PUCT_VALUES:
      raise ValueError(
          f"sog: unknown puct_values {self.puct_values!r}; supported: "
          f"{', '.join(map(repr, engine_lib.PUCT_VALUES))}")
    if isinstance(self.leaf_batch, bool) or not isinstance(
        self.leaf_batch, int) or (self.leaf_batch < 1 and
                                  self.leaf_batch != -1):
      raise ValueError(f"sog: leaf_batch must be an integer >= 1 or -1 "
                       f"(auto), got {self.leaf_batch!r}")
    if self.engine not in engine_lib.ENGINES:
      raise ValueError(f"sog: unknown engine {self.engine!r}; supported: "
                       f"{', '.join(map(repr, engine_lib.ENGINES))}")
    if self.top_k < -1:
      raise ValueError(f"sog: top_k must be -1 (auto), 0 (all) or positive, "
                       f"got {self.top_k}")
    supported = ("auto", "cvpn") + VALUE_FUNCTIONS
    if self.value_function not in supported:
      raise ValueError(
          f"sog: unknown value_function {self.value_function!r}; supported: "
          f"{', '.join(map(repr, supported))}")
    if not 0.0 <= self.alpha <= 1.0:
      raise ValueError(f"sog: alpha must be in [0, 1], got {self.alpha}")
    if self.c_puct < 0:
      raise ValueError(f"sog: c_puct must be >= 0, got {self.c_puct}")
    if not (self.averaging_power >= 0 and
            math.isfinite(self.averaging_power)):
      raise ValueError("sog: averaging_power must be a number >= 0 (1: "
                       f"linear, 2: quadratic), got {self.averaging_power}")
    if self.checkpoint and self.value_function not in ("auto", "cvpn"):
      raise ValueError(
          f"sog: checkpoint is a cvpn setting; value_function "
          f"{self.value_function!r} does not use one (drop checkpoint, or "
          "use value_function=cvpn)")
    if not 0 < self.exact_tolerance < 1:
      raise ValueError("sog: exact_tolerance must be in (0, 1) (a fraction "
                       f"of the utility range), got {self.exact_tolerance}")
    if not (self.time_limit >= 0 and math.isfinite(self.time_limit)):
      raise ValueError("sog: time_limit must be a number of seconds >= 0 "
                       f"(0: no limit), got {self.time_limit}")
    if self.infostates not in ("auto",) + INFOSTATE_SOURCES:
      raise ValueError(
          f"sog: unknown infostates {self.infostates!r}; supported: 'auto', "
          f"{', '.join(map(repr, INFOSTATE_SOURCES))}")
    if self.max_histories < 0:
      raise ValueError("sog: max_histories must be >= 0 (0: exact public "
                       f"states), got {self.max_histories}")
    if not 0.0 <= self.policy_threshold < 1.0:
      raise ValueError("sog: policy_threshold must be in [0, 1) (0: play "
                       f"the searched policy), got {self.policy_threshold}")
    if self.subgame not in SUBGAMES:
      raise ValueError(f"sog: unknown subgame {self.subgame!r}; supported: "
                       f"{', '.join(map(repr, SUBGAMES))}")
    if self.gadget not in anchored.GADGETS:
      raise ValueError(f"sog: unknown gadget {self.gadget!r}; supported: "
                       f"{', '.join(map(repr, anchored.GADGETS))}")
    for name in ("exact_max_iterations", "rollouts", "walks_per_simulation",
                 "root_histories", "order2_histories", "leaf_rollouts"):
      if getattr(self, name) < 1:
        raise ValueError(f"sog: {name} must be >= 1, got "
                         f"{getattr(self, name)}")


_perfect_information = sog_values.perfect_information


def resolve_config(config: SoGConfig, game: pyspiel.Game
                   ) -> resolving.ResolveConfig:
  top_k = config.top_k
  if top_k == -1:
    top_k = 1 if _perfect_information(game) else 0
  return resolving.ResolveConfig(
      search=gt_cfr.GTCFRConfig(
          simulations=config.search_simulations,
          expansions_per_update=config.python_expansions_per_update,
          top_k=top_k, c_puct=config.c_puct,
          alternating=config.alternating,
          averaging_power=config.averaging_power,
          walks_per_simulation=config.walks_per_simulation,
          record_queries=False),
      alpha=config.alpha)


def anchored_config(config: SoGConfig) -> anchored.AnchoredConfig:
  return anchored.AnchoredConfig(
      root_histories=config.root_histories,
      order2_histories=config.order2_histories, gadget=config.gadget,
      freeze_other_selves=config.freeze_other_selves,
      simulations=config.search_simulations,
      expansions_per_update=config.expansions_per_update,
      rollouts=config.leaf_rollouts,
      leaf_batch=config.leaf_batch if config.leaf_batch > 0 else 256,
      averaging_power=config.averaging_power, seed=config.seed)


@dataclasses.dataclass(frozen=True)
class Decision:
  """What the bot's latest decision searched (`SoGBot.last_decision`).

  Attributes:
    policy: {action: probability}, the searched policy at the bot's
      infostate, before `purify` or `policy_threshold`.
    value: the bot's expected return at its infostate under the searched
      profile.
    belief: its belief over the histories of its infostate.
    opponent_reach: {opponent infostate key: its reach} at the histories of
      the belief (the public-state path's keys are the game's
      information_state_string where it has one; the anchored path's are
      `public_state.HistoryKeys`).
  """
  policy: dict[int, float]
  value: float
  belief: beliefs.Belief
  opponent_reach: dict[str, float]


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
    trained_on = (sog_values.network_for_anchored(config, self._search_game)
                  if config.subgame == "auto" else None)
    if config.subgame == "anchored" or trained_on or (
        config.subgame == "auto" and
        anchored.needs_anchored(self._search_game, config.max_histories)):
      why = ("subgame='anchored'" if config.subgame == "anchored" else
             f"its network {trained_on!r} was trained on it" if trained_on
             else f"its public states pass max_histories="
             f"{config.max_histories}")
      self.anchored = anchored.AnchoredSearch(
          self._search_game, player, anchored_config(config),
          config.infostates, native=self._native_anchored(),
          network=sog_values.anchored_network(config, self._search_game,
                                              why))
    # (The anchored tree lives in C++ or in index arrays: no cyclic garbage.)
    self._garbage = _GarbageCollection(config.time_limit,
                                       full=self.anchored is None)
    self._purify = config.purify and (
        _perfect_information(self._search_game) or self.anchored is not None)
    self._build(config.infostates)
    self.native = self._native_search()

  def _native_anchored(self) -> bool:
    """Whether the anchored subgame's tree lives on the native engine (see
    SoGConfig.engine); refuses engine=native, naming why, where it cannot."""
    config, game = self.config, self._search_game
    if config.engine == "python":
      return False
    reason = engine_lib.native_reason(game)
    if reason is not None and config.engine == "native":
      raise ValueError(f"sog: engine=native cannot search {game}: {reason}")
    return reason is None

  def _native_search(self) -> engine_lib.PerfectInformationSearch | None:
    """The native engine's search where `engine` picks it (see SoGConfig),
    else None; refuses engine=native, naming why, where it cannot run."""
    config, game = self.config, self._search_game
    if self.policy_value is not None:
      reason = engine_lib.native_reason(game)
      if reason is not None or config.engine == "python":
        raise ValueError(
            f"sog: the policy-value network of {game} searches on the native "
            f"engine, which cannot run here: "
            f"{reason or 'engine=python was asked for'}")
    elif config.engine == "python" or self.anchored is not None:
      return None  # (the anchored subgame picked its engine already)
    elif not _perfect_information(game):
      reason = ("the native engine searches perfect-information games; "
                "this one is searched over public states")
    else:
      reason = engine_lib.native_reason(game)
      if reason is None and not isinstance(
          self.value_fn, rollout_values.RolloutValueFunction):
        reason = ("the native engine values leaves by rollouts or a "
                  "policy-value network (value_function=rollout, a "
                  "policy-value checkpoint, or engine=python for this value "
                  "function)")
    if reason is not None:
      if config.engine == "native":
        raise ValueError(f"sog: engine=native cannot search {game}: {reason}")
      return None
    c = config.expansions_per_update
    return engine_lib.PerfectInformationSearch(
        game, simulations=config.search_simulations,
        expansions_per_update=engine_lib.PACED if c == -1 else c,
        rollouts=config.rollouts, c_puct=config.c_puct, seed=config.seed,
        averaging_power=config.averaging_power,
        puct_values=config.puct_values, network=self.policy_value,
        leaf_batch=(config.leaf_batch if config.leaf_batch > 0 else
                    8 if config.time_limit else 1))

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


def threshold_policy(policy: dict[int, float], threshold: float
                     ) -> dict[int, float]:
  """`policy` with the probabilities below `threshold` set to 0 and the
  rest renormalised; the most probable action (the first of equals) is
  always kept. A threshold of 0 returns `policy` unchanged."""
  if threshold <= 0.0 or not policy:
    return policy
  best = max(policy, key=policy.get)
  kept = {a: (p if p >= threshold or a == best else 0.0)
          for a, p in policy.items()}
  total = sum(kept.values())
  if not total > 0.0:
    return policy
  return {a: p / total for a, p in kept.items()}


class _GarbageCollection:
  """Python's cyclic garbage (the public states pruned since the last
  search, with their states), collected inside each time-limited decision
  before its searches. Left to the automatic collector, it piles up over
  decisions and is freed all at once whenever a collection falls, inside
  some later search (gin_rummy: collections of 1.2-1.4 s freeing 23,000-
  33,000 objects, time-limited decisions of 2.4 s at time_limit=1);
  collected at every decision, it takes tens of milliseconds.

  A full collection walks the whole process's heap, not only what the bot
  left: in a large heap (a test suite's, a notebook's) it can take longer
  than the limit itself (a process holding a network: 70-150 ms of a 0.5 s
  move). The anchored subgame keeps its tree in C++ or in the Python
  engine's index arrays and leaves no cyclic garbage (full collections
  after each move of London and phantom_ttt games found none), so it
  collects only the young generations (`full` False, about a
  millisecond). So a collection is timed when the bot is built and at
  each decision, and once one takes more than `SHARE` of the limit the bot
  leaves collection to Python's collector (with a notice), whose full
  collections become rare as the heap grows.

  Either way the automatic collector's full collections are paused while
  a time-limited decision searches (`decision()`): in goofspiel's heap,
  once the bot had left collection to it, a full collection of 0.35 s fell
  inside a search and the decision took 1.32 s at time_limit=1. (Pausing
  every collection instead left the decision's young objects to one
  collection of 20-50 ms after the search, past the deadline.)"""

  SHARE = 0.25

  def __init__(self, time_limit: float, full: bool = True):
    self._limit = time_limit
    self.seconds = 0.0  # the latest full collection's
    self.enabled = bool(time_limit)
    self.full = full  # False: the young generations only
    self.before_search()

  # The collector's third threshold while paused: generation-1 collections
  # before a full one, a count never reached in practice.
  _NO_FULL = 1 << 30

  @contextlib.contextmanager
  def decision(self):
    """A time-limited decision's searches: the garbage collected first
    (`before_search`), then Python's automatic full collections paused
    until they end (its young-generation collections go on, a fraction of
    a millisecond each, inside the searches' timing; without a time limit
    nothing changes)."""
    self.before_search()
    thresholds = gc.get_threshold()
    pause = bool(self._limit) and thresholds[2] < self._NO_FULL
    if pause:
      gc.set_threshold(thresholds[0], thresholds[1], self._NO_FULL)
    try:
      yield
    finally:
      if pause:
        gc.set_threshold(*thresholds)

  def before_search(self) -> None:
    if not self.enabled or not gc.isenabled():
      return
    if not self.full:
      gc.collect(1)
      return
    start = time.monotonic()
    gc.collect()
    self.seconds = time.monotonic() - start
    if self.seconds > self.SHARE * self._limit:
      self.enabled = False
      notices.notice(
          "collector", "",
          f"sog: a full garbage collection took {self.seconds:.2f} s, more "
          f"than {self.SHARE:g} of time_limit={self._limit:g}; leaving "
          "collection to Python's collector")


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
