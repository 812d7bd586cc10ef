"""Settings of sound self-play training (Algorithm 2 and Table S2)."""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any

from open_spiel_sog.algorithms.sog.cvpn import NetworkConfig
from open_spiel_sog.public_state import enumeration
from open_spiel_sog.public_state import search_game
from open_spiel_sog.utils.games import load_game

RECIPES = ("perfect_information", "public_states", "fog_of_war")
BACKENDS = ("inline", "process", "ray")

# The bounds within which the slot input (and so the public_states recipe)
# is chosen: its encoder numbers private parts by a walk of the whole public
# tree (liars_dice(numdice=2,dice_sides=3), the largest game with a shipped
# slot network, has 8,195 public states and 663,511 histories). A game whose
# states are Python (`engine.cpp_game` false) costs about 50 times more a
# history to walk: its bound is 100,000 histories (London's walk reaches it
# in about 25 s; to 1,000,000 it took 8 minutes).
SLOT_PUBLIC_STATES = 20_000
SLOT_HISTORIES = 1_000_000
SLOT_HISTORIES_PYTHON = 100_000


def slot_histories(game) -> int:
  """The most histories the slot input's walk of `game` may visit."""
  from open_spiel_sog.algorithms.sog import engine as engine_lib  # pylint: disable=g-import-not-at-top
  return (SLOT_HISTORIES if engine_lib.cpp_game(game) else
          SLOT_HISTORIES_PYTHON)
SOLVERS = ("search", "exact")
PLATFORMS = ("cpu", "gpu")
LEARNER_THREADS = ("auto", "one", "all")
INFERENCE = ("local", "cpu", "gpu")


@dataclasses.dataclass(frozen=True)
class TrainConfig:
  """Everything a training run needs (Table S2 names in brackets).

  Attributes:
    game: the game's string (pyspiel.load_game accepts it).
    recipe: what the actors play and the network learns (`recipes`):
      "perfect_information", "public_states" or "fog_of_war".
    recipe_settings: the recipe's own settings by name (`recipes`'
      PerfectInformationSettings, FogOfWarSettings); the defaults where
      absent.
    steps: gradient updates to run in total (a resumed run continues to
      it); 0: no bound on steps (then `minutes` bounds the run).
    minutes: wall-clock minutes of training in total, a resumed run's
      earlier minutes included (0: no bound; then `steps` bounds it).
    snapshot_dir: where a copy of the network goes every `snapshot_minutes`
      (min_MMM.npz, without optimiser state), for the learning curve (""
      for nowhere).
    snapshot_minutes: minutes between snapshots.
    actor_simulations, actor_expansions_per_update: SoG(s, c) of the
      actors' searches (every recipe's; the fog_of_war recipe's c is its
      anchored search's own).
    solver_simulations, solver_expansions_per_update: SoG(s, c) of the query
      solvers' searches.
    solver: how a query solver values a query: "search" (the paper's:
      SoG(solver_simulations, solver_expansions_per_update) from the query,
      with the network at the search's leaves) or "exact" (the query's whole
      subgame solved with `ExactValueFunction` to `solver_tolerance`, as
      DeepStack's training data was: exact targets for games whose subgames
      are small, such as liar's dice; one value target per query, no
      recursive queries, so `solver_simulations`, `q_recursive` and
      `solver_value_targets` do not apply).
    solver_tolerance: with solver "exact", each query is solved until its
      subgame's exploitability under the query's ranges is at most this
      fraction of the game's utility range.
    actors, solvers: worker processes (backend "process" or "ray").
    backend: "inline" (one process: play, solve and learn in turn; for tests
      and debugging), "process" (multiprocessing, spawn) or "ray".
    batch_size: examples per gradient update.
    replay_size: sliding-window replay buffer capacity [replay buffer size].
    replay_memory_mb: the replay ring's memory bound in MB (0: none); where
      replay_size examples would pass it, the ring keeps the newest examples
      that fit, and the learner starts once it is full.
    min_replay: examples in the buffer before learning starts.
    max_updates_per_example: learning waits for data once steps * batch_size
      exceeds this many uses per example added [max grad updates per example].
    q_search: queries pushed per actor search, on average [q_search].
    q_recursive: queries pushed per solver search, on average [q_recursive].
    solver_value_targets: value targets per solver search: the query's root
      (the paper's target), plus up to this many minus one interior public
      states of the solver's tree, each with its ranges under the average
      profile and its iterate-averaged counterfactual values. The restriction
      of an equilibrium to a public subtree is an equilibrium of that subtree
      for the ranges that reach it, so these are targets of the same kind,
      at no extra search cost (an extension of the paper; 1 turns it off).
    p_td1: probability that a main-line public state gets a TD(1) value
      target from the game's outcome [p_td1].
    epsilon: uniform mix of the self-play policy [epsilon].
    resign_threshold: resign when the acting player's expected value at its
      infostate (in utility units) is below this; None disables resigning.
    p_no_resign: share of games played to the end even with resigning on.
    greedy_after: play greedily after this many moves (0: never).
    max_moves: cap on moves per self-play game (0: unlimited).
    search_opponent_nodes: each seat also re-solves at the other's decisions
      (as the sog bot does).
    alpha: the re-solving gadget's mix with the previous opponent range.
    max_histories: with the token input (`network.input` "tokens"), public
      states with more histories than this are samples of this many, as in
      the sog bot (its `max_histories`); 0 keeps every public state exact.
      The slot input always uses exact public states.
    walks_per_simulation: walks a search's expansion simulation may draw
      (GTCFRConfig.walks_per_simulation, the sog bot's parameter): 100, the
      default, redraws walks that end at terminals already in the tree; 1
      is the search the shipped networks were trained with.
    idle_solvers_play: a query solver that finds no query waiting plays a
      self-play game, as an actor does, instead of waiting for one (with one
      actor, a Leduc solver otherwise waits for queries 30% of its time).
    max_queued_queries: the query queue's capacity (new queries are dropped
      when it is full).
    publish_every: the learner publishes parameters to the workers every this
      many steps.
    checkpoint: where to write checkpoints ("" for nowhere).
    checkpoint_every: steps between checkpoints (the final one is always
      written); 0 writes only the final one.
    keep_checkpoints: also keep a copy of every periodic checkpoint as
      PATH.step-N.npz.
    seed: seed of the network initialisation and all sampling.
    network: the CVPN and optimiser settings. Its input "auto" (the
      default here) is resolved when training starts
      (`with_input_resolved`): slots where the game's public tree
      enumerates within SLOT_PUBLIC_STATES public states and
      `slot_histories(game)` histories, none of its public states holding more
      than `max_histories`; tokens otherwise.
    learner_platform: where the learner's gradient steps run: "cpu" or "gpu"
      (an error when JAX sees no GPU).
    learner_threads: the compute threads of the learner's JAX on the CPU:
      "all" (XLA's default: a pool as wide as the machine, each step's
      matrix products split across it), "one" (one thread: the workers
      keep their cores), or "auto": "one" when the workers (actors +
      solvers, process or ray backend) take every core but one, "all"
      otherwise. Applied when the learner's JAX starts (it cannot change
      after: a process that has already used JAX keeps its pool).
    worker_platform: where the workers' JAX runs: "cpu" (the default; their
      searches are faster there and they never take accelerator memory) or
      "gpu" (memory taken as needed).
    ray_address: the Ray cluster the "ray" backend connects to ("" starts a
      local Ray instance; "auto" finds a running one).
    inference: where the workers' network calls run: "local" (each worker
      runs its own copy of the network in numpy) or "cpu" / "gpu" (one
      inference service process on that platform batches every worker's
      leaf batches into one jitted forward pass: `training.inference`; on
      the ray backend a Ray actor on the learner's node,
      `ray_backend.start_service`; process or ray backend and slot input
      only; "gpu" is an error when JAX sees no GPU).
    elapsed_seconds: seconds the run trained before this start (a resumed
      run's); the trainer sets it for its workers (no flag): the clock of
      schedules over the run, such as the growing simulation budget.
  """
  game: str = "kuhn_poker"
  recipe: str = "public_states"
  recipe_settings: dict = dataclasses.field(default_factory=dict)
  steps: int = 1000
  minutes: float = 0.0
  snapshot_dir: str = ""
  snapshot_minutes: float = 10.0
  actor_simulations: int = 50
  actor_expansions_per_update: float = 1.0
  solver_simulations: int = 50
  solver_expansions_per_update: float = 1.0
  solver: str = "search"
  solver_tolerance: float = 1e-3
  actors: int = 1
  solvers: int = 1
  backend: str = "process"
  batch_size: int = 128
  replay_size: int = 100_000
  replay_memory_mb: int = 2048
  min_replay: int = 256
  max_updates_per_example: float = 10.0
  q_search: float = 1.0
  q_recursive: float = 0.2
  solver_value_targets: int = 1
  p_td1: float = 0.0
  epsilon: float = 0.1
  resign_threshold: float | None = None
  p_no_resign: float = 0.2
  greedy_after: int = 0
  max_moves: int = 0
  search_opponent_nodes: bool = True
  alpha: float = 0.5
  walks_per_simulation: int = 100
  max_histories: int = 300
  idle_solvers_play: bool = True
  max_queued_queries: int = 10_000
  publish_every: int = 50
  checkpoint: str = ""
  checkpoint_every: int = 0
  keep_checkpoints: bool = False
  seed: int = 0
  network: NetworkConfig = NetworkConfig(input="auto")
  learner_platform: str = "cpu"
  learner_threads: str = "auto"
  worker_platform: str = "cpu"
  ray_address: str = ""
  inference: str = "local"
  elapsed_seconds: float = 0.0

  def validate(self) -> None:
    def positive(name, strict=True):
      value = getattr(self, name)
      if (value <= 0) if strict else (value < 0):
        raise ValueError(f"train: {name} must be {'>' if strict else '>='} 0, "
                         f"got {value}")
    if self.recipe not in RECIPES:
      raise ValueError(f"train: unknown recipe {self.recipe!r}; supported: "
                       f"{', '.join(map(repr, RECIPES))}")
    if self.steps < 0 or self.minutes < 0 or not (self.steps or
                                                  self.minutes):
      raise ValueError(f"train: steps and minutes must be >= 0 and one of "
                       f"them > 0 (the run's bound), got steps="
                       f"{self.steps}, minutes={self.minutes}")
    if not self.snapshot_minutes > 0:
      raise ValueError(f"train: snapshot_minutes must be > 0, got "
                       f"{self.snapshot_minutes}")
    for name in ("batch_size", "replay_size", "actor_simulations",
                 "solver_value_targets",
                 "solver_simulations", "actor_expansions_per_update",
                 "solver_expansions_per_update", "max_updates_per_example",
                 "max_queued_queries", "publish_every",
                 "walks_per_simulation"):
      if (name == "actor_expansions_per_update" and
          self.actor_expansions_per_update == -1):
        continue  # (-1 paces CFR+ iterations by work: `recipes` checks)
      positive(name)
    for name in ("min_replay", "replay_memory_mb", "q_search", "q_recursive",
                 "greedy_after",
                 "max_moves", "checkpoint_every", "max_histories"):
      positive(name, strict=False)
    if self.backend not in BACKENDS:
      raise ValueError(f"train: unknown backend {self.backend!r}; supported: "
                       f"{', '.join(map(repr, BACKENDS))}")
    if self.solver not in SOLVERS:
      raise ValueError(f"train: unknown solver {self.solver!r}; supported: "
                       f"{', '.join(map(repr, SOLVERS))}")
    if not 0.0 < self.solver_tolerance < 1.0:
      raise ValueError("train: solver_tolerance must be in (0, 1) (a "
                       "fraction of the utility range), got "
                       f"{self.solver_tolerance}")
    if self.backend != "inline" and (self.actors < 1 or self.solvers < 0):
      raise ValueError("train: needs at least one actor and zero or more "
                       f"solvers, got actors={self.actors}, "
                       f"solvers={self.solvers}")
    for name in ("p_td1", "epsilon", "p_no_resign", "alpha"):
      if not 0.0 <= getattr(self, name) <= 1.0:
        raise ValueError(f"train: {name} must be in [0, 1], got "
                         f"{getattr(self, name)}")
    for name in ("learner_platform", "worker_platform"):
      if getattr(self, name) not in PLATFORMS:
        raise ValueError(f"train: unknown {name} {getattr(self, name)!r}; "
                         f"supported: {', '.join(map(repr, PLATFORMS))}")
    if self.learner_threads not in LEARNER_THREADS:
      raise ValueError(f"train: unknown learner_threads "
                       f"{self.learner_threads!r}; supported: "
                       f"{', '.join(map(repr, LEARNER_THREADS))}")
    if self.inference not in INFERENCE:
      raise ValueError(f"train: unknown inference {self.inference!r}; "
                       f"supported: {', '.join(map(repr, INFERENCE))}")
    if self.inference != "local" and self.backend == "inline":
      raise ValueError(
          f"train: inference {self.inference!r} (one inference service for "
          "every worker) needs the process or ray backend; backend "
          f"{self.backend!r} takes inference 'local'")
    if self.inference != "local" and self.network.input == "tokens":
      raise ValueError(
          f"train: inference {self.inference!r} serves the slot network "
          "only; input 'tokens' takes inference 'local' (or input=slots, "
          "for games whose public tree enumerates)")
    if self.ray_address and self.backend != "ray":
      raise ValueError(f"train: ray_address is for the ray backend, not "
                       f"{self.backend!r}")
    if self.min_replay > self.replay_size:
      raise ValueError("train: min_replay exceeds replay_size")
    self.network.validate()
    load_game(self.game, "train")

  def with_input_resolved(self) -> tuple["TrainConfig", str]:
    """This config with `network.input` "auto" made "slots" or "tokens",
    and a line that says which and why. The walk is bounded by counts, so
    every machine picks the same input for the same game."""
    if self.network.input != "auto":
      return self, f"input={self.network.input} (as asked)"
    game = search_game(load_game(self.game, "train"))
    histories = slot_histories(game)
    limit = enumeration.enumeration_limit(
        game, max_public_states=SLOT_PUBLIC_STATES,
        max_histories_walked=histories, max_histories=self.max_histories)
    chosen = "slots" if limit == enumeration.WITHIN else "tokens"
    reason = {
        enumeration.WITHIN: "its public tree enumerates within "
                            f"{SLOT_PUBLIC_STATES:,} public states",
        enumeration.PUBLIC_STATES: "its public tree holds more than "
                                   f"{SLOT_PUBLIC_STATES:,} public "
                                   "states",
        enumeration.HISTORIES: "its public tree holds more than "
                               f"{histories:,} histories",
        enumeration.LARGE: ("a public state holds more than "
                            f"max_histories={self.max_histories} histories, "
                            "which sog samples" if self.max_histories else
                            "a public state is too large to build exactly"),
    }[limit]
    network = dataclasses.replace(self.network, input=chosen)
    return (dataclasses.replace(self, network=network),
            f"input={chosen} (auto: {reason})")

  def resolved_learner_threads(self, cpu_count: int | None = None) -> str:
    """"one" or "all": `learner_threads` with "auto" resolved for a machine
    of `cpu_count` cores (default: this one's)."""
    if self.learner_threads != "auto":
      return self.learner_threads
    cores = cpu_count or os.cpu_count() or 1
    workers = 0 if self.backend == "inline" else self.actors + self.solvers
    return "one" if workers and workers >= cores - 1 else "all"

  def to_json(self) -> dict[str, Any]:
    d = dataclasses.asdict(self)
    d["network"] = self.network.to_json()
    return d

  @classmethod
  def from_json(cls, d: dict[str, Any]) -> "TrainConfig":
    d = dict(d)
    fields = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(d) - fields)
    if unknown:
      raise ValueError(f"train: unknown setting(s) {unknown}")
    if "network" in d:
      d["network"] = NetworkConfig.from_json(d["network"])
    return cls(**d)

  def dumps(self) -> str:
    return json.dumps(self.to_json(), sort_keys=True)
