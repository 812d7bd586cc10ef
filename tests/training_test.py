"""Tests for sound self-play training (algorithms/training/) and
examples/train.py: what a short run on kuhn_poker learns (judged by exact
solves and OpenSpiel's equilibrium), resuming, the process backend, the
binary's contract, and the sog bot playing with a trained checkpoint.

One short inline run is shared by the tests (module-scoped fixture); the
other runs are tiny, so the file stays within a couple of minutes on two busy
cores.
"""

import csv
import dataclasses
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

from absl import flags
import jax
import numpy as np
from open_spiel.python.algorithms import best_response as os_best_response
import pyspiel
import pytest
import train_cli

import open_spiel_sog  # registers "sog"  # pylint: disable=unused-import
from open_spiel_sog.algorithms.sog import cvpn
from open_spiel_sog.algorithms.sog import exact_values
from open_spiel_sog.algorithms.sog import value_functions
from open_spiel_sog.algorithms.training import EvalConfig
from open_spiel_sog.algorithms.training import TrainConfig
from open_spiel_sog.algorithms.training import recipes
from open_spiel_sog.algorithms.training import Trainer
from open_spiel_sog.algorithms.training import selfplay
from open_spiel_sog.public_state import PublicStateObserver

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Kuhn poker's game value for player 0 (OpenSpiel's kuhn_poker docs; the
# equilibrium family of Kuhn 1950).
KUHN_GAME_VALUE = -1 / 18

# The shared run: kuhn_poker, inline backend, SoG(20, 1) actors and solvers
# with the value targets of the shipped runs (four queries per actor search,
# eight value targets per solver search). Reusing examples
# (max_updates_per_example) keeps it short.
STEPS = 1000
NETWORK = cvpn.NetworkConfig(hidden=(128, 128), learning_rate=2e-3,
                             lr_decay_steps=STEPS, lr_decay_rate=0.1)
TOLERANCE = 0.05  # chips


def _train_config(checkpoint, **overrides):
  settings = dict(game="kuhn_poker", steps=STEPS, backend="inline",
                  actor_simulations=20, solver_simulations=20, batch_size=128,
                  min_replay=64, max_updates_per_example=100, q_search=4,
                  solver_value_targets=8,
                  checkpoint=checkpoint, network=NETWORK, seed=0)
  settings.update(overrides)
  return TrainConfig(**settings)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
  """(config, summary) of the shared training run; its checkpoint is
  config.checkpoint (do not overwrite it: copy it first)."""
  path = str(tmp_path_factory.mktemp("train") / "kuhn.npz")
  config = _train_config(path)
  summary = Trainer(config, progress=False, log=lambda s: None).run()
  return config, summary


def _first_decision(observer):
  ps = observer.root()
  while not ps.is_player_node():
    (ps,) = ps.children()
  return ps


def _expected_values(ps, ranges, values):
  """Per-infostate expected values (chips): each counterfactual value divided
  by the chance-weighted opponent-range mass of its infostate."""
  out = []
  for p in range(2):
    o = 1 - p
    ev = np.zeros(ps.num_infostates(p))
    for j in range(ps.num_infostates(p)):
      mask = ps.history_infostate[p] == j
      mass = np.sum(ps.chance_reach[mask] *
                    ranges[o][ps.history_infostate[o][mask]])
      ev[j] = values[p][j] / mass
    out.append(ev)
  return out


def _openspiel_kuhn_card_values():
  """Player 0's expected value with each card (J, Q, K) at its first
  decision, as a best response to OpenSpiel's CFR equilibrium of player 1
  (whose equilibrium strategy is unique, so these values are too)."""
  game = pyspiel.load_game("kuhn_poker")
  solver = pyspiel.CFRSolver(game)
  for _ in range(2000):
    solver.evaluate_and_update_policy()
  policy = solver.average_policy()

  class _Policy:  # the python best response wants action_probabilities
    def action_probabilities(self, state, player_id=None):
      del player_id
      return dict(policy.get_state_policy(state))

  br = os_best_response.BestResponsePolicy(game, 0, _Policy())
  values = np.zeros(3)
  state = game.new_initial_state()
  for c0 in range(3):
    for c1 in range(3):
      if c0 != c1:
        values[c0] += 0.5 * br.value(state.child(c0).child(c1))
  return values


# --- 6. What the network learns ---------------------------------------------


def _kuhn_queries():
  game = pyspiel.load_game("kuhn_poker")
  observer = PublicStateObserver(game)
  first = _first_decision(observer)
  return game, observer, first


def test_exact_values_agree_with_openspiel_kuhn_equilibrium():
  """The oracle: PublicTreeCFR's counterfactual values at the first decision
  with uniform ranges sum to Kuhn's game value, and player 0's per-card
  values match a best response to OpenSpiel's equilibrium."""
  game, _, ps = _kuhn_queries()
  ranges = (np.ones(3), np.ones(3))
  exact = exact_values.ExactValueFunction(
      game, tolerance=1e-5, warm_start=False).evaluate(
          [value_functions.Query(ps, ranges)])[0]
  assert float(np.sum(exact.values[0])) == pytest.approx(KUHN_GAME_VALUE,
                                                         abs=2e-3)
  assert float(np.sum(exact.values[1])) == pytest.approx(-KUHN_GAME_VALUE,
                                                         abs=2e-3)
  ev0, _ = _expected_values(ps, ranges, exact.values)
  cards = [int(s[0]) for s in ps.infostates(0)]
  openspiel = _openspiel_kuhn_card_values()
  # Analytically: J -1, Q -1/3, K 7/6.
  np.testing.assert_allclose(openspiel, [-1, -1 / 3, 7 / 6], atol=5e-3)
  np.testing.assert_allclose(ev0, openspiel[cards], atol=5e-3)


def _compare(net, game, ps):
  ranges = (np.ones(ps.num_infostates(0)), np.ones(ps.num_infostates(1)))
  query = value_functions.Query(ps, ranges)
  exact = exact_values.ExactValueFunction(
      game, tolerance=1e-5, warm_start=False).evaluate([query])[0]
  (predicted,) = net.evaluate_batch([query])
  return (_expected_values(ps, ranges, exact.values),
          _expected_values(ps, ranges, predicted.values))


def test_trained_values_match_exact_after_first_action(trained):
  """The public states GT-CFR queries the network at when searching from the
  first decision (player 1 to act after player 0 checks or bets): with
  uniform ranges the network's expected values are within TOLERANCE chips of
  PublicTreeCFR's."""
  config, summary = trained
  assert summary["steps"] == STEPS
  game, observer, first = _kuhn_queries()
  net = cvpn.load_checkpoint(config.checkpoint, game, cvpn.Encoder(observer))
  errors = {}
  for ps in first.children():
    exact, predicted = _compare(net, game, ps)
    for p in range(2):
      errors[(ps.describe(), p)] = np.round(predicted[p] - exact[p], 3)
  worst = max(float(np.max(np.abs(e))) for e in errors.values())
  assert worst < TOLERANCE, errors


def test_trained_values_match_exact_at_the_root(trained):
  """At the root of the public tree with uniform ranges (one infostate each,
  whose value is the game value), the network's values are within TOLERANCE
  chips of PublicTreeCFR's, which are Kuhn's game value. (The root's values
  come from the actors' first searches, which solve the root belief.)"""
  config, _ = trained
  game, observer, _ = _kuhn_queries()
  net = cvpn.load_checkpoint(config.checkpoint, game, cvpn.Encoder(observer))
  root = observer.root()
  exact, predicted = _compare(net, game, root)
  assert exact[0][0] == pytest.approx(KUHN_GAME_VALUE, abs=2e-3)
  for p in range(2):
    np.testing.assert_allclose(predicted[p], exact[p], atol=TOLERANCE)


def test_exact_query_solvers_give_exact_targets_and_learn_kuhn(tmp_path):
  """`solver="exact"`: a query solver's value target at the first decision
  is the exact solve's (within the solver's tolerance of Kuhn's game value),
  and a short run on those targets alone (no solver searches) learns the
  values after the first action within TOLERANCE chips of the exact ones."""
  game, observer, first = _kuhn_queries()
  config = _train_config(str(tmp_path / "exact.npz"), solver="exact",
                         solver_tolerance=1e-4, steps=400,
                         max_updates_per_example=20, q_search=8)
  worker = selfplay.Worker(config, net=cvpn.CVPN(cvpn.Encoder(observer),
                                                  NETWORK))
  worker.set_params(worker.net.params)
  state = game.new_initial_state()
  state.apply_action(0)
  state.apply_action(1)
  ranges = (np.ones(3, np.float32), np.ones(3, np.float32))
  batch, recursive = worker.solve([selfplay.QueryMessage(
      tuple(state.history()), ranges)])
  assert recursive == [] and len(batch) == 1 and worker.stats.solves == 1
  expected = worker.encoder.encode(
      [value_functions.Query(first, tuple(np.ones(3) for _ in range(2)))],
      values=[exact_values.ExactValueFunction(
          game, tolerance=1e-6, warm_start=False).evaluate(
              [value_functions.Query(first, (np.ones(3), np.ones(3)))]
          )[0].values])
  # Within the tolerance: 1e-4 of Kuhn's utility range (4 chips) per unit of
  # reach, in the network's units (utility_scale / slots = 2 / 3 chips).
  np.testing.assert_allclose(batch.value_target, expected.value_target,
                             atol=4e-4 * 3 / 2 * 4)
  summary = Trainer(config, progress=False, log=lambda s: None).run()
  assert summary["steps"] == 400
  assert summary["worker_stats"]["solves"] > 0
  net = cvpn.load_checkpoint(config.checkpoint, game, cvpn.Encoder(observer))
  for ps in first.children():
    exact, predicted = _compare(net, game, ps)
    for p in range(2):
      np.testing.assert_allclose(predicted[p], exact[p], atol=TOLERANCE,
                                 err_msg=ps.describe())


def test_workers_search_with_the_configured_walks_per_simulation():
  _, observer, _ = _kuhn_queries()
  for walks in (1, 100):
    config = _train_config("", walks_per_simulation=walks)
    worker = selfplay.Worker(config, net=cvpn.CVPN(cvpn.Encoder(observer),
                                                    NETWORK))
    search = worker._search_config(config.actor_simulations, 1.0)  # pylint: disable=protected-access
    assert search.walks_per_simulation == walks


def test_exact_solver_settings_are_checked():
  with pytest.raises(ValueError, match="unknown solver 'cfr'; supported: "
                     "'search', 'exact'"):
    _train_config("", solver="cfr").validate()
  with pytest.raises(ValueError, match=r"solver_tolerance must be in \(0, 1\)"):
    _train_config("", solver="exact", solver_tolerance=0.0).validate()


# --- 7. Resume ---------------------------------------------------------------


def test_resume_continues_from_the_checkpoint(trained, tmp_path):
  config, _ = trained
  path = str(tmp_path / "resumed.npz")
  shutil.copy(config.checkpoint, path)
  extra = 20
  logs = []
  trainer = Trainer(_train_config(path, steps=STEPS + extra), resume=True,
                    progress=False, log=logs.append)
  assert trainer.net.step == STEPS
  assert any(f"step {STEPS}" in line for line in logs), logs
  summary = trainer.run()
  assert summary["steps"] == STEPS + extra
  resumed = cvpn.load_checkpoint(path, config.game)
  assert resumed.step == STEPS + extra
  # The examples count carries over from the first run.
  before = cvpn.read_checkpoint(config.checkpoint)[0]["extra"]["examples"]
  assert resumed.metadata["extra"]["examples"] > before

  # Resuming a finished run is a no-op that keeps the step; input "auto"
  # (train.py's default) takes the checkpoint's.
  auto = dataclasses.replace(NETWORK, input="auto")
  summary = Trainer(_train_config(path, steps=STEPS + extra, network=auto),
                    resume=True, progress=False, log=logs.append).run()
  assert summary["steps"] == STEPS + extra
  assert (f"train: kuhn_poker: input={NETWORK.input} (auto: the "
          "checkpoint's)") in logs


def test_resume_errors_are_clear(trained, tmp_path):
  config, _ = trained
  with pytest.raises(cvpn.CheckpointError,
                     match=r"kuhn_poker.*leduc_poker"):
    Trainer(_train_config(config.checkpoint, game="leduc_poker"),
            resume=True, progress=False, log=lambda s: None)
  missing = str(tmp_path / "missing.npz")
  with pytest.raises(cvpn.CheckpointError, match="does not exist"):
    Trainer(_train_config(missing), resume=True, progress=False,
            log=lambda s: None)
  assert not os.path.exists(missing)
  with pytest.raises(ValueError, match="resume needs a checkpoint"):
    Trainer(_train_config(""), resume=True, progress=False,
            log=lambda s: None)
  with pytest.raises(cvpn.CheckpointError, match="network settings"):
    Trainer(_train_config(config.checkpoint,
                          network=cvpn.NetworkConfig(hidden=(8,))),
            resume=True, progress=False, log=lambda s: None)
  with pytest.raises(ValueError, match="needs EvalConfig.measure"):
    Trainer(_train_config(str(tmp_path / "x.npz")),
            evaluation=EvalConfig(every=5), progress=False,
            log=lambda s: None)


# --- 8. The process backend --------------------------------------------------


def test_process_backend_trains_and_writes_a_checkpoint(tmp_path):
  path = str(tmp_path / "process.npz")
  steps = 20
  config = TrainConfig(game="kuhn_poker", steps=steps, backend="process",
                       actors=1, solvers=1, actor_simulations=10,
                       solver_simulations=10, batch_size=16, min_replay=16,
                       publish_every=10, checkpoint=path,
                       network=cvpn.NetworkConfig(hidden=(16,)))
  summary = Trainer(config, progress=False, log=lambda s: None).run()
  assert summary["steps"] == steps
  # Never more than max_updates_per_example uses per example.
  assert summary["examples"] * 10 >= steps * 16
  assert summary["worker_stats"]["games"] >= 1
  net = cvpn.load_checkpoint(path, "kuhn_poker")
  assert net.step == steps
  assert net.metadata["extra"]["train"]["backend"] == "process"


# --- 9. examples/train.py ----------------------------------------------------


# (Where runs/<game> lands for runs that pass no --run_dir.)
_RUNS = tempfile.mkdtemp(prefix="train-runs-")


def _train_py(*args):
  return train_cli.run(*args, timeout=300, cwd=_RUNS)


@pytest.fixture(scope="module")
def train_binary():
  """examples/train.py as a module (its flags defined, never parsed here)."""
  return train_cli.module()


def _binary_flags(module) -> dict[str, flags.Flag]:
  """The flags examples/train.py defines, by name."""
  return {holder.name: flags.FLAGS[holder.name]
          for holder in vars(module).values()
          if isinstance(holder, flags.FlagHolder)}


# TrainConfig fields a command does not set flag by flag: the game, the
# recipe and its settings (`recipe_settings`: each setting has its own flag),
# the network (each of its fields has one), and the run's bounds (--steps
# and --minutes, whose defaults depend on each other), and what the trainer
# sets for its workers (elapsed_seconds).
_NOT_ONE_FLAG = ("game", "recipe", "recipe_settings", "network", "steps",
                 "minutes", "elapsed_seconds")
# Flags named other than their TrainConfig or NetworkConfig field.
_FLAG_OF = {"actor_simulations": "simulations",
            "actor_expansions_per_update": "expansions_per_update",
            "torso": "network"}


def _settings(recipe: str) -> list[tuple[tuple[str, ...], str]]:
  """(path of the setting in (TrainConfig, EvalConfig), its flag's name) for
  every field of TrainConfig, of the NetworkConfig it holds, of `recipe`'s
  own settings and of EvalConfig: a new field makes a row, so it must have
  a flag. EvalConfig's `measure` is a function the binary passes, not a
  setting."""
  rows = []
  defaults = TrainConfig()
  for field in dataclasses.fields(TrainConfig):
    if field.name in _NOT_ONE_FLAG:
      continue
    rows.append((("train", field.name), _FLAG_OF.get(field.name, field.name)))
  rows += [(("train", "network", f.name), _FLAG_OF.get(f.name, f.name))
           for f in dataclasses.fields(defaults.network)]
  rows += [(("train", "recipe_settings", name), name)
           for name in recipes.settings_of(recipe)]
  rows += [(("eval", field.name), "eval_" + field.name)
           for field in dataclasses.fields(EvalConfig)
           if field.name != "measure"]
  return rows


def _probe(flag: flags.Flag) -> tuple[str, object]:
  """A command-line argument setting `flag` to a value other than its
  default, and the value its setting must then have."""
  kind = flag.flag_type()
  if kind == "bool":
    return (f"--no{flag.name}" if flag.default else f"--{flag.name}",
            not flag.default)
  if kind == "int":
    return f"--{flag.name}={(flag.default or 4) + 3}", (flag.default or 4) + 3
  if kind == "float":
    value = (flag.default or 0.0) + 0.25
    return f"--{flag.name}={value!r}", value
  if kind.endswith("enum"):
    value = next(v for v in flag.parser.enum_values if v != flag.default)
    return f"--{flag.name}={value}", value
  if "list" in kind:
    return f"--{flag.name}=3,5", (3, 5)
  return f"--{flag.name}=probe-{flag.name}", f"probe-{flag.name}"


@pytest.mark.parametrize("recipe", recipes.RECIPES)
def test_every_setting_has_a_documented_flag_with_help(train_binary, recipe):
  defined = _binary_flags(train_binary)
  missing = [name for _, name in _settings(recipe) if name not in defined]
  assert not missing, f"settings without a flag in examples/train.py: {missing}"
  assert not [n for n, f in defined.items() if not f.help.strip()]
  with open(os.path.join(ROOT, "docs", "training.md")) as f:
    documented = set(re.findall(r"`--([a-z0-9_]+)", f.read()))
  undocumented = sorted(set(defined) - documented)
  assert not undocumented, f"flags docs/training.md lacks: {undocumented}"


@pytest.mark.parametrize("recipe", recipes.RECIPES)
def test_config_from_flags_maps_every_flag_to_its_setting(train_binary,
                                                          recipe):
  """Each setting's flag that `recipe` uses, set away from its default,
  reaches the setting (config_from_flags is the one place flags become
  configs); the others keep the recipe's defaults."""
  defined = _binary_flags(train_binary)
  rows = [(path, name) for path, name in _settings(recipe)
          if recipe in train_binary.flag_recipes(name)]
  probes = {name: _probe(defined[name]) for _, name in rows}
  try:
    flags.FLAGS(["train.py", "--game=kuhn_poker"] +
                [arg for arg, _ in probes.values()])
    config, evaluation = train_binary.config_from_flags(recipe, "/tmp/run")
  finally:
    flags.FLAGS.unparse_flags()
  roots = {"train": config, "eval": evaluation}
  wrong = {}
  for path, name in rows:
    value = roots[path[0]]
    for key in path[1:]:
      value = value[key] if isinstance(value, dict) else getattr(value, key)
    if value != probes[name][1]:
      wrong[name] = (value, probes[name][1])
  assert not wrong, f"flag -> (setting, expected): {wrong}"
  assert config.recipe == recipe and config.minutes == 60.0


def test_unset_flags_take_the_recipes_defaults(train_binary):
  try:
    flags.FLAGS(["train.py", "--game=tic_tac_toe"])
    config, _ = train_binary.config_from_flags("perfect_information", "r")
  finally:
    flags.FLAGS.unparse_flags()
  recipe = recipes.get("perfect_information")
  for name, value in recipe.defaults.items():
    assert getattr(config, name) == value, name
  assert config.network == recipe.network_config()
  assert config.checkpoint == os.path.join("r", "checkpoint.npz")
  assert config.snapshot_dir == os.path.join("r", "snapshots")
  assert config.recipe_settings == dataclasses.asdict(
      recipes.PerfectInformationSettings())


def test_train_binary_evaluates_and_prints_json(tmp_path):
  checkpoint = str(tmp_path / "bin.npz")
  eval_csv = str(tmp_path / "eval.csv")
  eval_png = str(tmp_path / "eval.png")
  steps = 20
  result = _train_py(
      "--game=kuhn_poker", "--backend=inline", f"--steps={steps}",
      "--hidden=16", "--batch_size=32", "--min_replay=32",
      "--simulations=10", "--solver_simulations=10",
      f"--eval_every={steps}", "--eval_simulations=10",
      f"--eval_csv={eval_csv}", f"--eval_png={eval_png}",
      f"--checkpoint={checkpoint}", "--json", "--noprogress")
  assert result.returncode == 0, result.stderr
  summary = json.loads(result.stdout.strip().splitlines()[-1])
  assert summary["steps"] == steps
  assert summary["checkpoint"] == checkpoint
  with open(eval_csv) as f:
    rows = list(csv.DictReader(f))
  assert rows and set(rows[0]) >= {"step", "exploitability"}
  assert int(rows[-1]["step"]) == steps
  exploitability = float(rows[-1]["exploitability"])
  assert math.isfinite(exploitability) and 0 <= exploitability <= 2
  assert len(rows) == 1  # eval_every == steps: evaluated once, not twice
  assert os.path.getsize(eval_png) > 0
  with open(eval_png, "rb") as f:
    assert f.read(8) == b"\x89PNG\r\n\x1a\n"
  assert cvpn.load_checkpoint(checkpoint, "kuhn_poker").step == steps


def test_train_binary_resume_without_checkpoint_exits_2(tmp_path):
  missing = str(tmp_path / "missing.npz")
  result = _train_py("--game=kuhn_poker", "--backend=inline", "--steps=5",
                     f"--checkpoint={missing}", "--resume", "--noprogress")
  assert result.returncode == 2, result.stderr
  assert "missing.npz" in result.stderr
  assert "does not exist" in result.stderr
  assert "Traceback" not in result.stderr


@pytest.mark.parametrize("flag,message", [
    ("--game=nosuchgame",
     "train: cannot load game 'nosuchgame' (Unknown game 'nosuchgame'.)"),
    ("--game=leduc_poker(bogus=1)",
     "train: cannot load game 'leduc_poker(bogus=1)' (Unknown parameter "
     "'bogus'."),
    ("--steps=0", "train: steps must be > 0, got 0"),
    ("--walks_per_simulation=0",
     "train: walks_per_simulation must be > 0, got 0"),
])
def test_train_binary_rejects_bad_settings_in_one_line(flag, message):
  result = _train_py("--game=kuhn_poker", "--backend=inline", "--steps=5",
                     flag, "--noprogress")
  assert result.returncode == 2, result.stderr
  assert "Traceback" not in result.stderr, result.stderr
  # (The first line names the recipe; the last refuses the setting.)
  line = [l for l in result.stderr.splitlines() if l.startswith("train:")][-1]
  assert line.startswith(message), line


@pytest.mark.parametrize("missing", ["tensorflow", "tensorboard"])
def test_train_binary_tensorboard_without_extra_exits_before_training(
    tmp_path, missing):
  """Without the tensorboard extra, --tensorboard_dir stops the run at start-up
  with one line naming the install command: no traceback, no checkpoint, no
  event file. `missing` is shadowed by a package whose import fails, so the
  test means the same in a venv that has the extra (make test-tensorboard)."""
  shadow = tmp_path / "shadow" / missing
  shadow.mkdir(parents=True)
  (shadow / "__init__.py").write_text(
      f"raise ImportError(\"No module named {missing!r} (shadowed)\")\n")
  checkpoint = tmp_path / "k.npz"
  logdir = tmp_path / "tb"
  env = dict(os.environ)
  env["PYTHONPATH"] = os.pathsep.join(
      [str(tmp_path / "shadow")] +
      ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
  result = subprocess.run(
      [sys.executable, os.path.join(ROOT, "examples", "train.py"),
       "--game=kuhn_poker", "--backend=inline", "--steps=5", "--hidden=16",
       "--batch_size=4", "--min_replay=4", "--simulations=2",
       "--solver_simulations=2", f"--checkpoint={checkpoint}",
       f"--tensorboard_dir={logdir}", "--noprogress"],
      capture_output=True, text=True, timeout=300, check=False, env=env)
  assert result.returncode != 0, result.stderr
  assert "Traceback" not in result.stderr, result.stderr
  errors = [line for line in result.stderr.splitlines()
            if "--tensorboard_dir" in line]
  assert len(errors) == 1, result.stderr
  assert "pip install 'open_spiel_sog[tensorboard]'" in errors[0]
  assert "trained" not in result.stderr
  assert not checkpoint.exists()
  assert not logdir.exists()


def _average_py(*args):
  return subprocess.run(
      [sys.executable, os.path.join(ROOT, "examples", "average_checkpoints.py"),
       *args], capture_output=True, text=True, timeout=300, check=False)


def test_average_checkpoints_binary_averages_kept_checkpoints(tmp_path):
  checkpoint = str(tmp_path / "run.npz")
  result = _train_py(
      "--game=kuhn_poker", "--backend=inline", "--steps=30", "--hidden=16",
      "--batch_size=32", "--min_replay=32", "--simulations=10",
      "--solver_simulations=10", "--checkpoint_every=10", "--keep_checkpoints",
      f"--checkpoint={checkpoint}", "--noprogress")
  assert result.returncode == 0, result.stderr
  output = str(tmp_path / "avg.npz")
  result = _average_py(f"--checkpoints={tmp_path}/run.step-*.npz",
                       "--min_step=20", f"--output={output}")
  assert result.returncode == 0, result.stderr
  assert "steps [20, 30]" in result.stdout
  averaged = cvpn.load_checkpoint(output, "kuhn_poker")
  assert averaged.metadata["extra"]["averaged_steps"] == [20, 30]
  kept = [cvpn.load_checkpoint(str(tmp_path / f"run.step-{s}.npz"),
                               "kuhn_poker") for s in (20, 30)]
  for mean, a, b in zip(*(jax.tree_util.tree_leaves(n.params)
                          for n in [averaged] + kept)):
    np.testing.assert_allclose(np.asarray(mean),
                               (np.asarray(a) + np.asarray(b)) / 2,
                               rtol=1e-6, atol=1e-7)
  # An averaged checkpoint holds no optimiser state: resuming says so.
  result = _train_py("--game=kuhn_poker", "--backend=inline", "--steps=40",
                     "--hidden=16", f"--checkpoint={output}", "--resume",
                     "--noprogress")
  assert result.returncode == 2
  assert "optimiser state" in result.stderr
  assert "Traceback" not in result.stderr

  for args, message in [
      ([f"--checkpoints={tmp_path}/nothing-*.npz"], "no checkpoint matches"),
      ([f"--checkpoints={tmp_path}/run.step-*.npz", "--min_step=99"],
       "has a step in"),
      ([f"--checkpoints={tmp_path}/run.step-*.npz", "--game=leduc_poker"],
       "leduc_poker")]:
    result = _average_py(*args, f"--output={tmp_path}/bad.npz")
    assert result.returncode == 1, (args, result.stderr)
    assert message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
  assert not os.path.exists(f"{tmp_path}/bad.npz")


# --- 10. The sog bot with a trained checkpoint -------------------------------


def test_sog_bot_plays_with_trained_checkpoint(trained):
  config, _ = trained
  game = pyspiel.load_game("kuhn_poker")
  outcomes = set()
  for seat in range(2):
    sog_bot = pyspiel.load_bot(
        "sog", game, seat, {"checkpoint": config.checkpoint,
                            "simulations": 10, "seed": seat})
    bots = [None, None]
    bots[seat] = sog_bot
    bots[1 - seat] = pyspiel.make_uniform_random_bot(1 - seat, 7)
    for seed in range(3):
      returns = pyspiel.evaluate_bots(game.new_initial_state(), bots, seed)
      assert len(returns) == 2
      assert sum(returns) == pytest.approx(0.0)
      assert abs(returns[0]) in (1, 2)
      outcomes.add(tuple(returns))
  assert outcomes


def _token_example(k: int, tokens: int = 4, width: int = 64) -> dict:
  """A token example whose tokens are all k (the fields' shapes as the
  token encoder gives them)."""
  per_token = {"tokens": np.full((tokens, width), k, np.float32),
               "info": np.zeros((tokens, 3), np.float32),
               "player": np.zeros(tokens, np.int32),
               "mask": np.ones(tokens, np.float32),
               "range": np.ones(tokens, np.float32),
               "value_target": np.zeros(tokens, np.float32),
               "value_mask": np.ones(tokens, np.float32),
               "policy_target": np.zeros((tokens, 2), np.float32),
               "policy_mask": np.zeros(tokens, np.float32),
               "legal": np.ones((tokens, 2), np.float32)}
  return {**per_token, "public": np.zeros(5, np.float32),
          "hist": np.zeros((2, 2), np.int32),
          "weight": np.ones(2, np.float32)}


def test_the_replay_ring_keeps_the_newest_token_examples_within_its_memory():
  """Past max_bytes the oldest go, whatever the capacity; the learner may
  start once the ring is at its bound; samples come from what is kept."""
  from open_spiel_sog.algorithms.sog.cvpn import TokenBatch  # pylint: disable=g-import-not-at-top
  from open_spiel_sog.algorithms.training.replay import ReplayBuffer  # pylint: disable=g-import-not-at-top
  one = sum(a.astype(np.float16).nbytes if f == "tokens" else a.nbytes
            for f, a in _token_example(0).items())
  ring = ReplayBuffer(capacity=100, max_bytes=3 * one + one // 2)
  for k in range(10):
    ring.add(TokenBatch.stack([_token_example(k)]))
  assert (len(ring), ring.added, ring.nbytes) == (3, 10, 3 * one)
  assert ring.at_memory_bound
  drawn = ring.sample(64, np.random.default_rng(0))
  assert set(np.unique(drawn.tokens[:, :4])) == {7.0, 8.0, 9.0}
  # By count alone (no bound): the newest `capacity`.
  ring = ReplayBuffer(capacity=4)
  ring.add(TokenBatch.stack([_token_example(k) for k in range(10)]))
  assert len(ring) == 4 and not ring.at_memory_bound
  drawn = ring.sample(64, np.random.default_rng(0))
  assert set(np.unique(drawn.tokens[:, :4])) == {6.0, 7.0, 8.0, 9.0}


def test_the_replay_ring_of_fixed_shapes_shrinks_to_its_memory_and_says_so():
  from open_spiel_sog.algorithms.training.replay import FieldBatch  # pylint: disable=g-import-not-at-top
  from open_spiel_sog.algorithms.training.replay import ReplayBuffer  # pylint: disable=g-import-not-at-top
  batch = FieldBatch({"x": np.arange(50, dtype=np.float32)[:, None] *
                           np.ones((1, 256), np.float32),
                      "y": np.arange(50, dtype=np.int64)})
  ring = ReplayBuffer(capacity=1_000_000, max_bytes=10 * (256 * 4 + 8))
  ring.add(batch)
  assert ring.capacity == 10 and len(ring) == 10 and ring.added == 50
  assert ring.note == ("replay: 1,000,000 examples of 1,032 bytes pass the "
                       "memory bound of 0 MB; keeping the newest 10")
  assert ring.at_memory_bound
  assert set(ring.sample(100, np.random.default_rng(0)).arrays["y"]) == set(
      range(40, 50))
  with pytest.raises(ValueError, match="max_bytes must be >= 1"):
    ReplayBuffer(10, max_bytes=0)
