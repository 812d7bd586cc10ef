r"""Self-play training throughput: examples per second against workers,
for each recipe of the one trainer (examples/train.py).

  python benchmarks/training_throughput.py --game=leduc_poker \
      --workers=1+1,2+1 --seconds=60 --backend=process --json
  python benchmarks/training_throughput.py --game=connect_four \
      --workers=1+0,2+0 --seconds=60        # perfect_information
  python benchmarks/training_throughput.py --game=connect_four \
      --backend=inline --workers=1+0

For each `A+S` of --workers, runs the real training loop (`Trainer`, the
learner taking gradient steps as in `examples/train.py`) of --recipe (auto:
the one train.py picks for the game) with A actors and S query solvers
(the public_states recipe's; the others take 0) and measures, once every
worker has delivered its first example and --settle more seconds have
passed, --seconds of steady state:

- examples_per_s: examples the learner received per second in that window
  (symmetries included); searches_per_s: decisions the actors searched per
  second; per_actor_efficiency: examples a second per worker over the first
  row's;
- startup_s: from launch to the learner's first example; warmup_s: from
  launch to the start of the window;
- worker_busy: the share of each worker's time spent searching (self-play
  games, query solves), mean over workers; worker_cpu: its share of CPU time
  (below worker_busy when the machine has fewer cores than processes);
- learner_busy: the learner's share of time in gradient steps; parent_wait:
  its share blocked waiting for examples;
- worker_ready_s and worker_first_example_s: per worker, from its launch to
  its loop starting (imports, set-up, first parameters) and to its first
  example.

The public_states recipe's search settings default to those of the shipped
Leduc network (docs/training.md); the other recipes take their defaults.
`--solver=exact` measures exact query solvers (the liar's dice networks'
settings: docs/training.md).
Progress goes to stderr; --json prints, last, one JSON object with `game`,
`solver`, `cpu_count`, `seconds` and `rows`. docs/training.md ("Training at
scale") holds the measured table.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import re
import statistics
import sys
import time

from absl import app
from absl import flags

from open_spiel_sog.algorithms.sog import cvpn
from open_spiel_sog.algorithms.training import SOLVERS
from open_spiel_sog.algorithms.training import TrainConfig
from open_spiel_sog.algorithms.training import Trainer
from open_spiel_sog.algorithms.training import ingest
from open_spiel_sog.algorithms.training import recipes

_GAME = flags.DEFINE_string("game", "leduc_poker", "Game string.")
_RECIPE = flags.DEFINE_enum("recipe", "auto", list(recipes.RECIPE_CHOICES),
                            "The recipe (auto: the one examples/train.py "
                            "picks for the game).")
_WORKERS = flags.DEFINE_list(
    "workers", ["1+1", "2+1"],
    "Configurations to measure, each ACTORS+SOLVERS (e.g. 1+1,4+2,12+3).")
_SECONDS = flags.DEFINE_float("seconds", 60.0,
                              "Length of the steady-state window.")
_SETTLE = flags.DEFINE_float(
    "settle", 10.0, "Seconds between the last worker's first example and the "
    "start of the window.")
_TIMEOUT = flags.DEFINE_float(
    "startup_timeout", 300.0,
    "Give up on a configuration whose workers have not all delivered an "
    "example this many seconds after launch.")
_BACKEND = flags.DEFINE_enum("backend", "process",
                             ["inline", "process", "ray"],
                             "Training backend (inline: one worker, 1+0).")
_RAY_ADDRESS = flags.DEFINE_string(
    "ray_address", "", "Ray cluster to run on (ray backend; '' starts a "
    "local one).")
_ACTOR_S = flags.DEFINE_integer("simulations", None,
                                "s of the actors' searches (default: 100 "
                                "for public_states, else the recipe's).")
_SOLVER_S = flags.DEFINE_integer("solver_simulations", 100,
                                 "s of the solvers' SoG(s, 1).")
_Q_SEARCH = flags.DEFINE_float("q_search", 4.0,
                               "Queries pushed per actor search.")
_TARGETS = flags.DEFINE_integer("solver_value_targets", 8,
                                "Value targets per solver search.")
_SOLVER = flags.DEFINE_enum(
    "solver", TrainConfig.solver, list(SOLVERS),
    "How query solvers value a query, as examples/train.py's --solver: "
    "search (SoG(solver_simulations, 1) with the network at its leaves) or "
    "exact (the query's subgame solved to --solver_tolerance).")
_SOLVER_TOLERANCE = flags.DEFINE_float(
    "solver_tolerance", TrainConfig.solver_tolerance,
    "With --solver=exact: the subgame exploitability (a fraction of the "
    "utility range) each query is solved to.")
_MAX_UPDATES = flags.DEFINE_float(
    "max_updates_per_example", None, "Cap on minibatch uses per example "
    "added (default: 50 for public_states, else the recipe's).")
_IDLE_PLAY = flags.DEFINE_bool(
    "idle_solvers_play", True,
    "Solvers with no query waiting play self-play games (false: they wait, "
    "as before issue 21).")
_WALKS = flags.DEFINE_integer(
    "walks_per_simulation", 100, "As in examples/train.py (1: the search "
    "the shipped networks were trained with).")
_READ_LOSSES = flags.DEFINE_integer(
    "read_losses_every", 10,
    "The learner reads its steps' losses every this many steps (1: after "
    "every step, waiting for it, as the learner did before issue 51).")
_LEARNER_THREADS = flags.DEFINE_enum(
    "learner_threads", TrainConfig.learner_threads,
    ["auto", "one", "all"],
    "As in examples/train.py: the learner's JAX compute threads on the CPU. "
    "Applies to the first configuration only (a process's JAX keeps its "
    "pool), so measure one setting per run.")
_HIDDEN = flags.DEFINE_list("hidden", None,
                            "MLP widths of the trained network (default: "
                            "the recipe's).")
_INGEST_ONLY = flags.DEFINE_bool(
    "ingest_only", False,
    "Measure the learner alone: the workers are replaced by producer "
    "processes sending synthetic examples of the game's shapes as fast as "
    "the (bounded) example queue takes them (algorithms/training/ingest.py); "
    "each row then gives learner_ingest_per_s. Slot input only.")
_INGEST_BATCH = flags.DEFINE_integer(
    "ingest_batch", 10,
    "With --ingest_only: examples per message (a Leduc worker's messages "
    "held 10.7 on average, median 10, at 1+1).")
_INFERENCE = flags.DEFINE_enum(
    "inference", "local", ["local", "cpu", "gpu"],
    "As in examples/train.py: the workers' network calls in each worker "
    "(local) or in one inference service on the cpu or gpu.")
_INPUT = flags.DEFINE_enum(
    "input", "auto", ["auto", "slots", "tokens"],
    "The CVPN's input, as in examples/train.py.")
_TOKEN_WIDTH = flags.DEFINE_integer("token_width", 64,
                                    "With --input=tokens, as in train.py.")
_CONV = flags.DEFINE_list("conv_channels", ["32", "32"],
                          "With --input=tokens, as in train.py.")
_POLICY_HIDDEN = flags.DEFINE_list("policy_hidden", None,
                                   "The policy torso widths (default: the "
                                   "recipe's).")
_P_TD1 = flags.DEFINE_float("p_td1", 0.0, "As in examples/train.py.")
_JSON = flags.DEFINE_bool("json", False, "Print a JSON summary last.")


def parse_workers(specs: list[str]) -> list[tuple[int, int]]:
  out = []
  for spec in specs:
    m = re.fullmatch(r"\s*(\d+)\s*\+\s*(\d+)\s*", spec)
    if not m or int(m.group(1)) < 1:
      raise app.UsageError(
          f"--workers: {spec!r} is not ACTORS+SOLVERS with at least one "
          "actor (e.g. 1+1, 4+2)")
    out.append((int(m.group(1)), int(m.group(2))))
  return out


class _Window:
  """The trainer's monitor: finds the steady-state window, snapshots its
  ends and stops the run after it."""

  def __init__(self, workers: int, seconds: float, settle: float,
               timeout: float):
    self.workers = workers
    self.seconds = seconds
    self.settle = settle
    self.timeout = timeout
    self.first = None  # seconds from launch to the first example
    self.all_ready = None  # ... to every worker's first example
    self.start = None
    self.end = None
    self.error = None
    self._reported = 0.0

  @staticmethod
  def _snapshot(trainer: Trainer, t: float) -> dict:
    return {"t": t, "examples": trainer.buffer.added,
            "steps": trainer.net.step, "timing": dict(trainer.timing),
            "workers": copy.deepcopy(
                trainer.backend.worker_stats.per_worker)}

  def __call__(self, trainer: Trainer) -> None:
    t = time.perf_counter() - trainer._started  # pylint: disable=protected-access
    per = trainer.backend.worker_stats.per_worker
    if self.first is None and trainer.buffer.added:
      self.first = t
    if self.all_ready is None and len(per) == self.workers:
      self.all_ready = t
    if self.start is None and self.all_ready is not None and (
        t >= self.all_ready + self.settle):
      self.start = self._snapshot(trainer, t)
    if self.start is not None and t >= self.start["t"] + self.seconds:
      self.end = self._snapshot(trainer, t)
      trainer.request_stop("benchmark window over")
    if self.all_ready is None and t > self.timeout:
      self.error = (f"only {len(per)} of {self.workers} workers delivered an "
                    f"example within {self.timeout:.0f} s")
      trainer.request_stop("startup timeout")
    if t - self._reported >= 10:
      self._reported = t
      print(f"  {t:5.0f} s: {trainer.buffer.added} examples, step "
            f"{trainer.net.step}, {len(per)}/{self.workers} workers "
            "delivering", file=sys.stderr, flush=True)


def _share(start: dict, end: dict, key: str, total: str) -> float | None:
  """A worker's share of time in `key` between two of its stats."""
  span = end[total] - start[total]
  return (end[key] - start[key]) / span if span > 0 else None


def _mean(values) -> float | None:
  values = [v for v in values if v is not None]
  return round(statistics.fmean(values), 4) if values else None


def row_from_window(window: _Window, actors: int, solvers: int,
                    backend: str) -> dict:
  start, end = window.start, window.end
  span = end["t"] - start["t"]
  shares = {k: {} for k in ("busy_s", "cpu_s", "wait_s", "params_s", "io_s")}
  for name, last in sorted(end["workers"].items()):
    first = start["workers"].get(name)
    if first is None:
      continue
    for k, by_worker in shares.items():
      by_worker[name] = _share(first, last, k, "alive_s")
  busy, cpu = shares["busy_s"].values(), shares["cpu_s"].values()
  timing = {k: end["timing"][k] - start["timing"][k] for k in end["timing"]}
  workers = end["workers"]
  return {
      "actors": actors, "solvers": solvers, "backend": backend,
      "idle_solvers_play": _IDLE_PLAY.value,
      "walks_per_simulation": _WALKS.value,
      "examples_per_s": round((end["examples"] - start["examples"]) / span, 2),
      "searches_per_s": round(sum(
          w.get("searches", 0) - start["workers"].get(name, {}).get(
              "searches", 0) for name, w in end["workers"].items()) / span,
                              2),
      "examples_per_s_per_worker": round(
          (end["examples"] - start["examples"]) / span /
          (actors + solvers), 2),
      "steps_per_s": round((end["steps"] - start["steps"]) / span, 2),
      "window_s": round(span, 1),
      "startup_s": round(window.first, 2),
      "warmup_s": round(start["t"], 2),
      "worker_busy": _mean(busy),
      "worker_cpu": _mean(cpu),
      "learner_busy": round(timing["train_s"] / span, 4),
      "parent_wait": round(timing["wait_s"] / span, 4),
      # The learner's other shares of time: receiving ready examples (the
      # queue and unpickling), adding them to the replay buffer, sampling
      # minibatches, its loop's bookkeeping and publishing parameters.
      "learner_poll": round(timing["poll_s"] / span, 4),
      "learner_add": round(timing["add_s"] / span, 4),
      "learner_sample": round(timing["sample_s"] / span, 4),
      "learner_other": round(timing["other_s"] / span, 4),
      "learner_publish": round(timing["publish_s"] / span, 4),
      # Per worker: shares of its time searching, waiting for a query,
      # loading parameters and sending examples, and its CPU share.
      "worker_shares": {
          name: {k[:-2]: None if v[name] is None else round(v[name], 4)
                 for k, v in shares.items()}
          for name in shares["busy_s"]},
      "worker_ready_s": {
          name: round(w["ready_at"] - w["launched_at"], 2)
          for name, w in sorted(workers.items())},
      "worker_first_example_s": {
          name: round(w["first_example_at"] - w["launched_at"], 2)
          for name, w in sorted(workers.items())},
  }


def recipe_name() -> str:
  if _RECIPE.value != "auto":
    return _RECIPE.value
  return recipes.choose_recipe(_GAME.value)[0]


def train_config(actors: int, solvers: int) -> TrainConfig:
  """The run's TrainConfig; app.UsageError when the flags do not make one."""
  name = recipe_name()
  recipe = recipes.get(name)
  network = recipe.network_config()
  widths = {}
  if name == "public_states":  # (the shipped Leduc network's settings)
    network = cvpn.NetworkConfig(
        hidden=(256, 256, 256), policy_hidden=(64, 64), input=_INPUT.value,
        token_width=_TOKEN_WIDTH.value,
        conv_channels=tuple(int(c) for c in _CONV.value))
    fields = dict(
        actor_simulations=_ACTOR_S.value or 100,
        solver_simulations=_SOLVER_S.value, q_search=_Q_SEARCH.value,
        solver_value_targets=_TARGETS.value, solver=_SOLVER.value,
        solver_tolerance=_SOLVER_TOLERANCE.value,
        max_updates_per_example=_MAX_UPDATES.value or 50.0,
        idle_solvers_play=_IDLE_PLAY.value,
        walks_per_simulation=_WALKS.value, inference=_INFERENCE.value,
        p_td1=_P_TD1.value)
  else:
    fields = dict(recipe.defaults)
    if _ACTOR_S.value:
      fields["actor_simulations"] = _ACTOR_S.value
    if _MAX_UPDATES.value:
      fields["max_updates_per_example"] = _MAX_UPDATES.value
  for flag, name_ in ((_HIDDEN, "hidden"), (_POLICY_HIDDEN, "policy_hidden")):
    if flag.value is not None:
      widths[name_] = tuple(int(h) for h in flag.value)
  fields["solvers"] = solvers
  fields["actors"] = actors
  config = TrainConfig(
      game=_GAME.value, recipe=name, steps=10**9,
      backend=_BACKEND.value, ray_address=_RAY_ADDRESS.value,
      learner_threads=_LEARNER_THREADS.value,
      network=dataclasses.replace(network, **widths), **fields)
  try:
    config.validate()
  except ValueError as e:
    raise app.UsageError(str(e)) from None
  return config


def measure(config: TrainConfig) -> dict:
  actors, solvers = config.actors, config.solvers
  window = _Window(actors + solvers, _SECONDS.value, _SETTLE.value,
                   _TIMEOUT.value)
  if _INGEST_ONLY.value:
    trainer = Trainer(config, progress=False,
                      backend_factory=lambda cfg, net: ingest.IngestBackend(
                          cfg, net, _INGEST_BATCH.value),
                      read_losses_every=_READ_LOSSES.value)
  else:
    trainer = Trainer(config, progress=False,
                      read_losses_every=_READ_LOSSES.value)
  trainer.run(monitor=window)
  if window.error or window.end is None:
    raise SystemExit(f"training_throughput: {actors}+{solvers}: "
                     f"{window.error or 'the run ended before the window'}")
  row = row_from_window(window, actors, solvers, _BACKEND.value)
  row["recipe"] = config.recipe
  row["learner_threads"] = config.resolved_learner_threads()
  row["read_losses_every"] = _READ_LOSSES.value
  # The example rate at which the learner's steps, at the rate they ran,
  # would use every example max_updates_per_example times: above the
  # workers' rate, the learner keeps up (and waits).
  row["learner_sustained_per_s"] = round(
      row["steps_per_s"] * config.batch_size /
      config.max_updates_per_example, 1)
  if _INGEST_ONLY.value:
    row["learner_ingest_per_s"] = row["examples_per_s"]
    row["ingest_batch"] = _INGEST_BATCH.value
  return row


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  if _INGEST_ONLY.value and _BACKEND.value != "process":
    raise app.UsageError("--ingest_only measures the process backend's "
                         "learner; drop --backend or use --backend=process")
  # Every configuration is built (and checked) before any run.
  configs = [train_config(actors, solvers)
             for actors, solvers in parse_workers(_WORKERS.value)]
  rows = []
  for config in configs:
    actors, solvers = config.actors, config.solvers
    what = (f"{actors + solvers} producers of synthetic examples"
            if _INGEST_ONLY.value else f"{actors} actors + {solvers} solvers")
    print(f"training_throughput: {_GAME.value}, {what} ({_BACKEND.value})",
          file=sys.stderr, flush=True)
    row = measure(config)
    rows.append(row)
    print(f"{actors}+{solvers}: {row['examples_per_s']} examples/s, "
          f"{row['searches_per_s']} decisions/s "
          f"({row['examples_per_s_per_worker']} per worker), startup "
          f"{row['startup_s']} s, workers busy {row['worker_busy']} (CPU "
          f"{row['worker_cpu']}), learner busy {row['learner_busy']}, "
          f"waiting {row['parent_wait']}", flush=True)
  base = rows[0]["examples_per_s_per_worker"]
  for row in rows:
    n = row["actors"] + row["solvers"]
    row["scaling"] = round(row["examples_per_s"] / (n * base), 3) if base else None
    row["per_actor_efficiency"] = row["scaling"]
  summary = {"game": _GAME.value, "recipe": recipe_name(),
             "solver": _SOLVER.value,
             "ingest_only": _INGEST_ONLY.value,
             "cpu_count": os.cpu_count(), "seconds": _SECONDS.value,
             "rows": rows}
  if _JSON.value:
    print(json.dumps(summary))


if __name__ == "__main__":
  app.run(main)
