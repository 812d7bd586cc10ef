"""The sog bot's parameters (`SoGConfig`): each documented where it is read,
parsed from `load_bot`'s params and validated in one line; and the
configurations of the algorithms it drives, resolved for a game
(`resolve_config`: GT-CFR's re-solving; `anchored_config`: the anchored
subgame).

The module is long (about 320 lines) because `SoGConfig` documents each of
its 28 parameters in one place.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar, Mapping

import pyspiel

from open_spiel_sog.algorithms.sog import anchored
from open_spiel_sog.algorithms.sog import engine as engine_lib
from open_spiel_sog.algorithms.sog import gt_cfr
from open_spiel_sog.algorithms.sog import resolving
from open_spiel_sog.algorithms.sog import VALUE_FUNCTIONS
from open_spiel_sog.bots import common
from open_spiel_sog.bots import sog_values
from open_spiel_sog.public_state import INFOSTATE_SOURCES

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
    prior_search: anchored: at the bot's first search of a game, where
      only the opponent has acted since the start (no chance), first
      search from the game's start (30% of the time) and keep that search
      as the previous one, so that the opponent's unseen moves are weighed
      by its solved policy, not uniformly (goofspiel's second seat,
      phantom_ttt's o); false: a uniform opponent there (an ablation).
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
    threads: the anchored subgame on the native engine under a time_limit
      with rollout leaves: 2 grows the tree in an expander thread while
      the other runs CFR+ (Obscuro's design: about 1.6x the histories and
      2.3x the iterations of one thread, and in phantom_ttt x's
      first-search value at 0.25 s is 0.645 against one thread's 0.605;
      docs/engine.md), 1 alternates the two in one thread.
      Counted searches (no time_limit) run in one thread and repeat from
      their seed either way.
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
  prior_search: bool = True
  leaf_rollouts: int = 4
  purify: bool = True
  engine: str = "auto"
  puct_values: str = "backed_up"
  leaf_batch: int = -1
  threads: int = 1

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
    if isinstance(self.threads, bool) or self.threads not in (1, 2):
      raise ValueError(f"sog: threads must be 1 or 2, got {self.threads!r}")
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


def resolve_config(config: SoGConfig, game: pyspiel.Game
                   ) -> resolving.ResolveConfig:
  top_k = config.top_k
  if top_k == -1:
    top_k = 1 if sog_values.perfect_information(game) else 0
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
      prior_search=config.prior_search,
      simulations=config.search_simulations,
      expansions_per_update=config.expansions_per_update,
      rollouts=config.leaf_rollouts,
      leaf_batch=config.leaf_batch if config.leaf_batch > 0 else 256,
      threads=config.threads,
      averaging_power=config.averaging_power, seed=config.seed)
