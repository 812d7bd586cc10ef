"""The trainer's recipes: what differs between games (DESIGN.md section 18).

The rule is "train what the bot searches with". `choose_recipe(game)` asks
the question the `sog` bot asks at load time and names one of:

| recipe | when | actor | network |
|---|---|---|---|
| perfect_information | perfect information, C++ states | native engine, `games` side by side (`perfect_information.SelfPlay`) | policy-value |
| public_states | the public tree enumerates | GT-CFR on public states, query solvers (`selfplay.Worker`) | slot CVPN (or tokens) |
| fog_of_war | past the slot input's enumeration bound | the anchored subgame, the query solver inside (`fog_of_war.FogSelfPlay`) | token CVPN |

A recipe is small: its network (`make_network`, `load_network`, `save`),
its worker (`make_worker`: an object with `play_game`, `solve`,
`set_params`, `net`, `stats`, `index`, `config`, which the pipeline's
backends run), its default settings (`defaults`, `network_config`), the
TrainConfig fields it reads beyond the pipeline's (`reads`) and its own
settings (`settings_class`, from `TrainConfig.recipe_settings`). The
pipeline (`trainer.Trainer` over `backends`) never branches on a recipe's
name.
"""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Any

import pyspiel

from open_spiel_sog.algorithms.networks import CheckpointError
from open_spiel_sog.algorithms.networks import NetworkConfig
from open_spiel_sog.algorithms.networks import policy_value
from open_spiel_sog.algorithms.networks import read_npz
from open_spiel_sog.algorithms.sog import cvpn
from open_spiel_sog.algorithms.sog import engine as engine_lib
from open_spiel_sog.algorithms.sog.anchored import needs_anchored
from open_spiel_sog.algorithms.training import fog_of_war
from open_spiel_sog.algorithms.training import perfect_information as pi
from open_spiel_sog.algorithms.training import selfplay
from open_spiel_sog.algorithms.training.config import RECIPES
from open_spiel_sog.algorithms.training.config import SLOT_HISTORIES
from open_spiel_sog.algorithms.training.config import SLOT_HISTORIES_PYTHON
from open_spiel_sog.algorithms.training.config import SLOT_PUBLIC_STATES
from open_spiel_sog.algorithms.training.config import slot_histories
from open_spiel_sog.algorithms.training.replay import FieldBatch
from open_spiel_sog.public_state import enumeration
from open_spiel_sog.public_state import PublicStateObserver
from open_spiel_sog.public_state import search_game
from open_spiel_sog.utils import threads

RECIPE_CHOICES = ("auto",) + RECIPES
BOT_MAX_HISTORIES = 300  # (the sog bot's max_histories)


def _perfect_information(game: pyspiel.Game) -> bool:
  return (game.get_type().information ==
          pyspiel.GameType.Information.PERFECT_INFORMATION)


def choose_recipe(game: pyspiel.Game | str,
                  max_histories: int = BOT_MAX_HISTORIES) -> tuple[str, str]:
  """(recipe, why) for `game`: the search the sog bot's defaults run on it.

  Perfect information with C++ states: the native engine (its Go setting).
  Otherwise the public states where the slot input's walk of the whole
  public tree ends within its bounds (SLOT_PUBLIC_STATES, SLOT_HISTORIES,
  no public state past `max_histories`); past them the anchored subgame,
  which a network trained by the fog_of_war recipe makes the bot search
  (`bots.sog_values.network_for_anchored`). The walk is bounded by counts,
  so every machine picks the same recipe for the same game.
  """
  game = search_game(pyspiel.load_game(game) if isinstance(game, str)
                     else game)
  if _perfect_information(game):
    reason = engine_lib.native_reason(game)
    if reason is None:
      return ("perfect_information", "a perfect-information game of C++ "
              "states: sog searches it on the native engine")
    return ("public_states", "a perfect-information game the native engine "
            f"cannot search ({reason}): sog searches its public states")
  if needs_anchored(game, max_histories):
    return ("fog_of_war", "sog searches it through the anchored subgame "
            f"(a public state holds more than {max_histories} histories)")
  limit = enumeration.enumeration_limit(
      game, max_public_states=SLOT_PUBLIC_STATES,
      max_histories_walked=slot_histories(game), max_histories=max_histories)
  if limit == enumeration.WITHIN:
    return ("public_states", "its public tree enumerates within "
            f"{SLOT_PUBLIC_STATES:,} public states: sound self-play on "
            "exact public states with the slot input")
  why = {enumeration.PUBLIC_STATES: f"more than {SLOT_PUBLIC_STATES:,} "
                                    "public states",
         enumeration.HISTORIES: f"more than {slot_histories(game):,} "
                                "histories",
         enumeration.LARGE: f"a public state of more than {max_histories} "
                            "histories"}[limit]
  return ("fog_of_war", f"its public tree is past the slot input's bound "
          f"({why}): the anchored subgame, which its network makes sog "
          "search")


@dataclasses.dataclass(frozen=True)
class PerfectInformationSettings:
  """The perfect_information recipe's own settings (the shared ones,
  simulations, expansions_per_update, greedy_after, p_td1 and epsilon's
  absence, are TrainConfig's). See `perfect_information.SelfPlayConfig`."""
  cheap_simulations: int = pi.SelfPlayConfig.cheap_simulations
  full_search_probability: float = pi.SelfPlayConfig.full_search_probability
  games: int = pi.SelfPlayConfig.games
  dirichlet_alpha: float = pi.SelfPlayConfig.dirichlet_alpha
  dirichlet_fraction: float = pi.SelfPlayConfig.dirichlet_fraction
  root_value_weight: float = pi.SelfPlayConfig.root_value_weight
  policy_target: str = pi.SelfPlayConfig.policy_target
  c_puct: float = pi.SelfPlayConfig.c_puct
  symmetries: bool = pi.SelfPlayConfig.symmetries
  average_duplicates: bool = pi.SelfPlayConfig.average_duplicates
  simulations_start: int = pi.SelfPlayConfig.simulations_start
  grow_minutes: float = pi.SelfPlayConfig.grow_minutes


@dataclasses.dataclass(frozen=True)
class FogOfWarSettings:
  """The fog_of_war recipe's own settings (the shared ones, simulations,
  solver_simulations, q_search, q_recursive and epsilon, are TrainConfig's).
  See `fog_of_war.FogConfig`; `engine`: where the anchored tree lives
  ("auto": native where it can run, "native", "python")."""
  root_histories: int = fog_of_war.FogConfig.root_histories
  order2_histories: int = fog_of_war.FogConfig.order2_histories
  leaf_batch: int = fog_of_war.FogConfig.leaf_batch
  root_examples: bool = fog_of_war.FogConfig.root_examples
  outcome_weight: float = fog_of_war.FogConfig.outcome_weight
  max_queries: int = fog_of_war.FogConfig.max_queries
  engine: str = "auto"


@dataclasses.dataclass(frozen=True)
class PublicStatesSettings:
  """The public_states recipe has no settings beyond TrainConfig's."""


def _settings(cls, config) -> Any:
  given = dict(config.recipe_settings)
  names = {f.name for f in dataclasses.fields(cls)}
  unknown = sorted(set(given) - names)
  if unknown:
    raise ValueError(f"train: recipe {config.recipe!r} has no setting(s) "
                     f"{unknown}; its settings: {sorted(names) or 'none'}")
  return cls(**given)


class Recipe:
  """What a recipe supplies to the pipeline (see the module docstring)."""

  name = ""
  settings_class: type = PublicStatesSettings
  # TrainConfig fields this recipe reads beyond the pipeline's own.
  reads: tuple[str, ...] = ()
  # Defaults of TrainConfig fields where this recipe's differ.
  defaults: dict[str, Any] = {}
  # Whether query solver processes serve it (`solvers`, `inference`).
  query_solvers = False
  # Whether the trainer can measure its network's SoG exactly
  # (`EvalConfig`: exact exploitability, small games).
  exact_evaluation = False
  # The network input it always has (the policy-value network ignores
  # it), or None: NetworkConfig.input decides ("auto": slots
  # or tokens, `TrainConfig.with_input_resolved`).
  network_input: str | None = None
  # Whether its actors' expansions_per_update may be -1 (the native
  # engine's pacing of CFR+ iterations by work).
  paced = False

  def settings(self, config) -> Any:
    return _settings(self.settings_class, config)

  def network_config(self) -> NetworkConfig:
    raise NotImplementedError

  def make_network(self, config, game: pyspiel.Game):
    raise NotImplementedError

  def load_network(self, path: str, game: pyspiel.Game):
    raise NotImplementedError

  def save(self, net, path: str, game: pyspiel.Game, extra: dict,
           include_optimizer: bool = True) -> None:
    cvpn.save_checkpoint(path, net, game=game, extra=extra,
                         include_optimizer=include_optimizer)

  def make_worker(self, config, *, seed: int, index: int, template=None):
    raise NotImplementedError

  def validate(self, config) -> None:
    """`config`'s recipe-dependent settings, refused in one line each."""
    self.settings(config)
    if not self.query_solvers:
      # (A recipe whose actors solve their queries themselves, if at all.)
      for name, ok in (("solvers", config.solvers == 0),
                       ("inference", config.inference == "local")):
        if not ok:
          raise ValueError(
              f"train: {name}={getattr(config, name)!r} is for the "
              f"query solvers of the public_states recipe; the "
              f"{config.recipe} recipe takes "
              f"{'solvers=0' if name == 'solvers' else 'inference=local'}")
    if config.actor_expansions_per_update == -1 and not self.paced:
      raise ValueError(
          "train: actor_expansions_per_update must be > 0, got -1 (-1 "
          "paces the native engine's CFR+ iterations by work: the "
          "perfect_information recipe's)")

  def resolve(self, config) -> tuple[Any, str]:
    """`config` with its network input decided, and a line that says why."""
    if self.network_input is None:
      return config.with_input_resolved()
    network = dataclasses.replace(config.network, input=self.network_input)
    return (dataclasses.replace(config, network=network),
            f"the {self.name} recipe's network")


# The pipeline's settings every recipe reads (the rest of TrainConfig's
# fields are some recipe's: `Recipe.reads`).
PIPELINE_FIELDS = (
    "game", "recipe", "recipe_settings", "steps", "minutes", "actors",
    "backend", "batch_size", "replay_size", "min_replay",
    "max_updates_per_example", "publish_every", "checkpoint",
    "checkpoint_every", "keep_checkpoints", "snapshot_dir",
    "snapshot_minutes", "seed", "network", "learner_platform",
    "learner_threads", "worker_platform", "ray_address", "inference",
    "actor_simulations", "elapsed_seconds")


class PublicStates(Recipe):
  """Sound self-play (Algorithm 2) on exact or sampled public states."""

  name = "public_states"
  query_solvers = True
  exact_evaluation = True
  reads = ("actor_expansions_per_update", "solver_simulations",
           "solver_expansions_per_update", "solver", "solver_tolerance",
           "solvers", "q_search", "q_recursive", "solver_value_targets",
           "p_td1", "epsilon", "resign_threshold", "p_no_resign",
           "greedy_after", "max_moves", "search_opponent_nodes", "alpha",
           "walks_per_simulation", "max_histories", "idle_solvers_play",
           "max_queued_queries")
  # The settings of the shipped Leduc and Kuhn networks
  # (docs/training.md, "Shipped networks").
  defaults: dict[str, Any] = {"actor_simulations": 100,
                              "solver_simulations": 100, "q_search": 4.0,
                              "solver_value_targets": 8,
                              "max_updates_per_example": 50.0}

  def network_config(self) -> NetworkConfig:
    return NetworkConfig(input="auto")

  def make_network(self, config, game):
    observer = PublicStateObserver(game)
    return cvpn.make_network(observer, config.network,
                             cvpn.make_encoder(observer, config.network))

  def load_network(self, path, game):
    return cvpn.load_checkpoint(path, game)

  def make_worker(self, config, *, seed, index, template=None):
    net = None
    if template is not None:
      net = cvpn.make_network(template.encoder.observer, config.network,
                              template.encoder)
      net.params = template.params
    return selfplay.Worker(config, net, seed=seed, index=index)


class _GameWorker:
  """A worker whose game is its own business (`play_game` returns one
  batch of examples, no queries for other processes)."""

  def __init__(self, config, net, index: int):
    self.config = config
    self.net = net
    self.index = index
    self.stats = selfplay.WorkStats()

  def set_params(self, params) -> None:
    self.net.set_params(params)

  def solve(self, messages):
    del messages
    raise ValueError(f"train: the {self.config.recipe} recipe solves its "
                     "own queries; it has no query solvers")


class PerfectInformationWorker(_GameWorker):
  """`perfect_information.SelfPlay`: `games` games side by side, searched
  on the native engine; `play_game` plays rounds of moves until at least
  one game ends and returns the ended games' examples."""

  def __init__(self, config, net, seed: int, index: int):
    super().__init__(config, net, index)
    self.selfplay = pi.SelfPlay(
        pyspiel.load_game(config.game), net, dataclasses.replace(
            get(config.recipe).self_play_config(config),
            seed=config.seed * 1009 + seed))
    # The growing budget's clock: the run's minutes (a resumed run's
    # earlier minutes included).
    self._started = time.time() - config.elapsed_seconds

  def play_game(self, push=None):
    del push
    sp = self.selfplay
    sp.minutes = (time.time() - self._started) / 60
    before = sp.games_finished
    batches = []
    while sp.games_finished == before:
      moves = sp.moves
      for examples in sp.play_moves():
        if examples is not None:
          batches.append(FieldBatch(dict(zip(
              ("inputs", "legal", "value_target", "policy_target",
               "policy_mask"), examples))))
      self.stats.searches += sp.moves - moves
    self.stats.games = sp.games_finished
    batch = FieldBatch.concatenate(batches)
    self.stats.examples += len(batch)
    return batch, []


class PerfectInformation(Recipe):
  """SoG's Go setting (Table S2): AlphaZero's targets, no query solver."""

  name = "perfect_information"
  paced = True
  network_input = "slots"  # (NetworkConfig's default; the network ignores it)
  settings_class = PerfectInformationSettings
  reads = ("actor_expansions_per_update", "greedy_after", "p_td1")
  # The settings of the shipped connect_four network (docs/training.md),
  # with one actor per core: the learner's updates cost a few percent of
  # a core (connect_four: 7.6 ms a step of 256 examples), so the search
  # leaves none idle.
  defaults = {"actors": threads.usable_cores(),
              "actor_simulations": 160,
              "actor_expansions_per_update":
                  pi.SelfPlayConfig.expansions_per_update,
              "greedy_after": pi.SelfPlayConfig.greedy_after,
              "p_td1": pi.SelfPlayConfig.td1_probability,
              "solvers": 0, "batch_size": 256, "replay_size": 300_000,
              "min_replay": 2_000,
              "max_updates_per_example": 4.0}

  def validate(self, config) -> None:
    super().validate(config)
    reason = policy_value.perfect_information_reason(
        pyspiel.load_game(config.game)) or engine_lib.native_reason(
            pyspiel.load_game(config.game))
    if reason is not None:
      raise ValueError(f"train: the perfect_information recipe cannot "
                       f"train {config.game}: {reason}")
    if not 0.0 < config.p_td1 <= 1.0:
      raise ValueError("train: the perfect_information recipe's p_td1 (the "
                       "share of decisions that are examples) must be in "
                       f"(0, 1], got {config.p_td1}")
    self.self_play_config(config).validate()

  def self_play_config(self, config) -> pi.SelfPlayConfig:
    s = self.settings(config)
    return pi.SelfPlayConfig(
        simulations=config.actor_simulations,
        expansions_per_update=config.actor_expansions_per_update,
        cheap_simulations=s.cheap_simulations,
        full_search_probability=s.full_search_probability, games=s.games,
        greedy_after=config.greedy_after, dirichlet_alpha=s.dirichlet_alpha,
        dirichlet_fraction=s.dirichlet_fraction,
        td1_probability=config.p_td1, root_value_weight=s.root_value_weight,
        policy_target=s.policy_target, c_puct=s.c_puct,
        symmetries=s.symmetries, average_duplicates=s.average_duplicates,
        simulations_start=s.simulations_start, grow_minutes=s.grow_minutes)

  def resolve(self, config) -> tuple[Any, str]:
    """`config` with the network's torso "auto" resolved for the game
    (`policy_value.resolve_torso`), and a line that says which and why."""
    config, _ = super().resolve(config)
    torso = config.network.torso
    game = pyspiel.load_game(config.game)
    resolved = policy_value.resolve_torso(game, torso)
    shape = game.observation_tensor_shape()
    auto = policy_value.resolve_torso(game, "auto")
    if torso == "auto":
      why = f" (auto: its observation tensor is {shape})"
    elif auto != torso:
      why = f" (--network=auto would pick {auto} for its {shape} tensor)"
    else:
      why = ""
    return (dataclasses.replace(config, network=dataclasses.replace(
        config.network, torso=resolved)),
            f"the {self.name} recipe's network, torso {resolved}{why}")

  def network_config(self) -> NetworkConfig:
    return policy_value.default_config()

  def make_network(self, config, game):
    return policy_value.PolicyValueNet(game, config.network)

  def load_network(self, path, game):
    return policy_value.PolicyValueNet.load(path, game)

  def save(self, net, path, game, extra, include_optimizer=True):
    del game
    net.save(path, extra=extra, include_optimizer=include_optimizer)

  def make_worker(self, config, *, seed, index, template=None):
    net = policy_value.PolicyValueNet(pyspiel.load_game(config.game),
                                      config.network)
    if template is not None:
      net.set_params(template.params)
    return PerfectInformationWorker(config, net, seed, index)


class FogOfWarWorker(_GameWorker):
  """`fog_of_war.FogSelfPlay`: `play_game` plays one game on the anchored
  subgame, solving its queries itself."""

  def __init__(self, config, net, seed: int, index: int):
    super().__init__(config, net, index)
    recipe = get(config.recipe)
    game = search_game(pyspiel.load_game(config.game))
    self.selfplay = fog_of_war.FogSelfPlay(
        game, net, recipe.fog_config(config, seed=config.seed * 1009 + seed),
        native=recipe.native(config, game))

  def play_game(self, push=None):
    del push
    sp = self.selfplay
    moves, queries = sp.moves, sp.queries
    examples, _ = sp.play()
    self.stats.games += 1
    self.stats.searches += sp.moves - moves
    self.stats.solves += sp.queries - queries
    self.stats.examples += len(examples)
    if not examples:
      return FieldBatch({}), []
    return cvpn.TokenBatch.stack(examples), []


class FogOfWar(Recipe):
  """The token CVPN on the anchored subgame (DESIGN.md sections 15, 17)."""

  name = "fog_of_war"
  network_input = "tokens"
  settings_class = FogOfWarSettings
  reads = ("solver_simulations", "q_search", "q_recursive", "epsilon")
  defaults = {"actor_simulations": fog_of_war.FogConfig.simulations,
              "solver_simulations": fog_of_war.FogConfig.solver_simulations,
              "q_search": fog_of_war.FogConfig.q_search,
              "q_recursive": fog_of_war.FogConfig.q_recursive,
              "epsilon": fog_of_war.FogConfig.exploration,
              "solvers": 0, "batch_size": 64, "replay_size": 20_000,
              "min_replay": 64, "max_updates_per_example": 4.0}

  def fog_config(self, config, seed: int = 0) -> fog_of_war.FogConfig:
    s = self.settings(config)
    return fog_of_war.FogConfig(
        simulations=config.actor_simulations,
        root_histories=s.root_histories, order2_histories=s.order2_histories,
        leaf_batch=s.leaf_batch, exploration=config.epsilon,
        q_search=config.q_search, q_recursive=config.q_recursive,
        solver_simulations=config.solver_simulations,
        root_examples=s.root_examples, outcome_weight=s.outcome_weight,
        max_queries=s.max_queries, seed=seed)

  def native(self, config, game) -> bool:
    s = self.settings(config)
    reason = engine_lib.native_reason(game)
    if s.engine == "native" and reason is not None:
      raise ValueError(f"train: engine 'native' cannot search {game}: "
                       f"{reason}")
    return s.engine != "python" and reason is None

  def validate(self, config) -> None:
    super().validate(config)
    s = self.settings(config)
    if s.engine not in ("auto", "native", "python"):
      raise ValueError(f"train: unknown engine {s.engine!r}; supported: "
                       "'auto', 'native', 'python'")
    game = search_game(pyspiel.load_game(config.game))
    if _perfect_information(game):
      raise ValueError(f"train: {config.game} is a perfect-information "
                       "game; the fog_of_war recipe trains imperfect-"
                       "information games (--recipe=auto picks "
                       f"{choose_recipe(game)[0]})")
    self.native(config, game)
    self.fog_config(config).validate()

  def network_config(self) -> NetworkConfig:
    return NetworkConfig(input="tokens", token_width=64, hidden=(64, 64),
                         policy_hidden=(64,), conv_channels=(),
                         learning_rate=1e-3)

  def make_network(self, config, game):
    network = dataclasses.replace(config.network, input="tokens")
    observer = PublicStateObserver(game)
    return cvpn.make_network(observer, network,
                             cvpn.make_encoder(observer, network))

  def load_network(self, path, game):
    return cvpn.load_checkpoint(path, game)

  def make_worker(self, config, *, seed, index, template=None):
    game = search_game(pyspiel.load_game(config.game))
    if template is not None:
      net = cvpn.make_network(template.encoder.observer, config.network,
                              template.encoder)
      net.params = template.params
    else:
      net = self.make_network(config, game)
    return FogOfWarWorker(config, net, seed, index)


def checkpoint_meta(path: str) -> dict[str, Any]:
  """The metadata of a checkpoint a recipe wrote, a CVPN's or a
  policy-value network's (CheckpointError where it is neither)."""
  if not os.path.exists(path):
    raise CheckpointError(f"checkpoint {path!r} does not exist")
  for fmt, kind in ((cvpn.CHECKPOINT_FORMAT, "cvpn"),
                    (policy_value.POLICY_VALUE_FORMAT, "policy-value")):
    try:
      return read_npz(path, fmt, kind)[0]
    except CheckpointError:
      continue
  raise CheckpointError(f"{path!r} is not a checkpoint of a CVPN or a "
                        f"policy-value network")


def recipe_of(meta: dict[str, Any]) -> str:
  """The recipe that wrote a checkpoint, from its metadata (networks
  written before the one trainer name their binary instead)."""
  extra = meta.get("extra", {})
  if extra.get("recipe") in RECIPES:
    return extra["recipe"]
  if extra.get("trainer") == "examples/train_fog_of_war.py":
    return "fog_of_war"
  if meta.get("format") == policy_value.POLICY_VALUE_FORMAT:
    return "perfect_information"
  return "public_states"


_RECIPES: dict[str, Recipe] = {
    r.name: r for r in (PerfectInformation(), PublicStates(), FogOfWar())}


def get(name: str) -> Recipe:
  """The recipe called `name` (one of RECIPES)."""
  if name not in _RECIPES:
    raise ValueError(f"train: unknown recipe {name!r}; supported: "
                     f"{', '.join(map(repr, RECIPE_CHOICES))}")
  return _RECIPES[name]


def recipes_reading(field: str) -> list[str]:
  """The recipes that read the TrainConfig field or recipe setting
  `field` (all of them for the pipeline's own fields)."""
  if field in PIPELINE_FIELDS:
    return list(RECIPES)
  return [name for name, r in _RECIPES.items()
          if field in r.reads or field in {
              f.name for f in dataclasses.fields(r.settings_class)}]


def settings_of(recipe: str) -> tuple[str, ...]:
  """The names of `recipe`'s own settings (`TrainConfig.recipe_settings`)."""
  return tuple(f.name for f in dataclasses.fields(get(recipe).settings_class))


__all__ = ["BOT_MAX_HISTORIES", "choose_recipe", "recipe_of", "FogOfWar", "FogOfWarSettings", "get",
           "PerfectInformation", "PerfectInformationSettings",
           "PublicStates", "Recipe", "RECIPE_CHOICES", "RECIPES",
           "recipes_reading", "settings_of", "SLOT_HISTORIES",
           "SLOT_HISTORIES_PYTHON", "SLOT_PUBLIC_STATES", "slot_histories"]
