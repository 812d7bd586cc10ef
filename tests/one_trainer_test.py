"""examples/train.py, the one trainer (DESIGN.md section 18): the recipe
`--recipe=auto` picks for each class of game, each recipe trained a few
steps on worker processes into a checkpoint whose metadata is right and
which the sog bot then uses, a rerun that resumes, a flag foreign to the
recipe refused in one line, and no worker left behind when the trainer is
killed with SIGKILL."""

from importlib import metadata
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pyspiel
import pytest
import train_cli

from open_spiel_sog.algorithms.networks import policy_value
from open_spiel_sog.algorithms.sog import cvpn
from open_spiel_sog.algorithms.sog import engine as engine_lib
from open_spiel_sog.algorithms.training import recipes
from open_spiel_sog.bots import sog_values

ROOT, TRAIN = train_cli.ROOT, train_cli.TRAIN
_NATIVE = engine_lib.native_reason(pyspiel.load_game("tic_tac_toe")) is None
_train_py = train_cli.run


@pytest.mark.parametrize("game,recipe", [
    ("tic_tac_toe", "perfect_information" if _NATIVE else "public_states"),
    ("connect_four", "perfect_information" if _NATIVE else "public_states"),
    ("kuhn_poker", "public_states"),
    ("leduc_poker", "public_states"),
    ("dark_hex(num_rows=2,num_cols=2)", "public_states"),
    ("phantom_ttt", "fog_of_war"),
    ("dark_hex(num_rows=3,num_cols=3)", "fog_of_war"),
    ("kriegspiel", "fog_of_war"),
])
def test_auto_picks_the_recipe_of_the_search_the_bot_runs(game, recipe):
  """Perfect information on C++ states: the native engine's recipe; public
  trees that enumerate: public states; games whose public states pass the
  bot's max_histories (the bot searches them through the anchored
  subgame): fog_of_war."""
  chosen, why = recipes.choose_recipe(game)
  assert chosen == recipe, why
  loaded = pyspiel.load_game(game)
  from open_spiel_sog.algorithms.sog.anchored import needs_anchored  # pylint: disable=g-import-not-at-top
  if recipe == "fog_of_war":
    assert needs_anchored(loaded, recipes.BOT_MAX_HISTORIES)


def test_a_python_game_past_the_slot_walk_trains_on_the_anchored_subgame():
  """London's public states stay under the bot's max_histories, but its
  Python states walk slowly: the slot walk's bound for Python games
  (100,000 histories) sends it to fog_of_war, the recipe of its shipped
  network, while a small map's walk ends within it. (python_scotland_yard:
  scotland_yard is a C++ game where the shim loads.)"""
  assert recipes.slot_histories(pyspiel.load_game("python_scotland_yard")) == (
      recipes.SLOT_HISTORIES_PYTHON)
  assert recipes.choose_recipe("scotland_yard(map=glasses)")[0] == (
      "public_states")


def _metadata(path):
  for reader in (cvpn.read_checkpoint, policy_value.PolicyValueNet.read):
    try:
      return reader(path)[0]
    except cvpn.CheckpointError:
      continue
  raise AssertionError(f"{path} is no checkpoint")


def _check_run(run_dir, game: str, recipe: str, first: str, steps: int,
               hidden: list[int] | None = None, finished: bool = True) -> None:
  """The run folder of a run that stopped at `steps`: a checkpoint whose
  metadata is right, the log, the snapshot a finished run ends with, and a
  bot that takes the checkpoint with checkpoint=PATH and no other
  parameter."""
  path = str(run_dir / "checkpoint.npz")
  meta = _metadata(path)
  extra = meta["extra"]
  assert meta["step"] == steps and meta["has_optimizer"]
  assert cvpn.same_game(meta["game"], pyspiel.load_game(game))
  assert extra["recipe"] == recipe
  assert extra["train"]["game"] == game
  assert extra["train"]["backend"] == "process"
  assert extra["versions"]["open_spiel"] == metadata.version("open_spiel")
  assert extra["examples"] >= 16 and extra["games"] >= 1
  assert 0 < extra["minutes"] < 5
  if hidden is not None:
    assert list(meta["network"]["hidden"]) == hidden
  assert (run_dir / "train.log").read_text().startswith(first)
  if finished:
    # One snapshot, named by the run's minute (a slow machine may pass 0.5).
    (snapshot,) = os.listdir(run_dir / "snapshots")
    assert re.fullmatch(r"min_\d{3}\.npz", snapshot), snapshot
    assert abs(int(snapshot[4:7]) - extra["minutes"]) <= 1, snapshot
  loaded = pyspiel.load_game(game)
  bot = pyspiel.load_bot("sog", loaded, 0, {"checkpoint": path,
                                            "simulations": 5})
  state = loaded.new_initial_state()
  while state.is_chance_node():
    state.apply_action(state.chance_outcomes()[0][0])
  assert bot.step(state) in state.legal_actions()
  if recipe == "fog_of_war":
    assert sog_values.anchored_leaves(path)
    assert bot.anchored is not None  # (it searches where it was trained)
  if recipe == "perfect_information":
    assert bot.policy_value is not None and bot.native is not None


@pytest.mark.parametrize("game,recipe,flags", [
    # The one command: --game and a bound (SoG's Go setting on the native
    # engine, a policy-value network), its learning curve's point short.
    ("connect_four", "perfect_information",
     ["--curve_games=2", "--curve_time_limit=0.05"]),
    ("kuhn_poker", "public_states",
     ["--simulations=10", "--solver_simulations=10", "--q_search=1",
      "--solver_value_targets=1", "--min_replay=16", "--batch_size=16",
      "--hidden=16"]),
])
def test_each_recipe_trains_on_processes_into_a_checkpoint_the_bot_uses(
    game, recipe, flags, tmp_path):
  if recipe == "perfect_information" and not _NATIVE:
    pytest.skip("the perfect_information recipe needs the C++ shim")
  run_dir = tmp_path / "run"
  result = _train_py(f"--game={game}", "--steps=2", f"--run_dir={run_dir}",
                     "--noprogress", "--json", *flags)
  assert result.returncode == 0, result.stderr[-3000:]
  first = result.stderr.splitlines()[0]
  assert first.startswith(f"train: {pyspiel.load_game(game)}: recipe "
                          f"{recipe} ("), first
  assert f"trained {game} ({recipe}) at step 2" in result.stderr
  summary = json.loads(result.stdout.strip().splitlines()[-1])
  assert summary["steps"] == 2 and summary["recipe"] == recipe
  assert summary["checkpoint"] == str(run_dir / "checkpoint.npz")
  _check_run(run_dir, game, recipe, first, 2,
             [16] if "--hidden=16" in flags else None)
  if recipe == "perfect_information":
    # The learning curve: the finished run's snapshot against mcts.
    (point,) = summary["curve"]
    (snapshot,) = os.listdir(run_dir / "snapshots")
    assert int(point["minutes"]) == int(snapshot[4:7])
    assert point["games"] == "2"
    assert float(point["score_low"]) <= float(point["score"]) <= float(
        point["score_high"])
    assert re.search(r"curve: min \d+: [0-9.]+ \[[0-9.]+, [0-9.]+\] against "
                     r"mcts\(time_limit=0\.05\) \(2 games", result.stderr)
    assert (run_dir / "curve.png").exists()
  else:
    assert "curve" not in summary


def test_phantom_ttt_trains_with_game_alone_and_stops_on_sigint(tmp_path):
  """The fog_of_war recipe, chosen and started with --game alone, on worker
  processes; a SIGINT once it has made an update (a user's Ctrl-C) stops
  the workers, writes the checkpoint and exits with 130. Each searched move
  and each solved query is an example."""
  run_dir = tmp_path / "run"
  process = subprocess.Popen(
      [sys.executable, TRAIN, "--game=phantom_ttt", f"--run_dir={run_dir}",
       "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
      cwd=ROOT)
  watchdog = threading.Timer(300, process.kill)
  watchdog.start()
  seen = ""
  try:
    # (the progress bar at its first update)
    while not re.search(r"train phantom_ttt: [1-9]\d*it", seen):
      char = process.stderr.read(1)
      if not char:
        break
      seen += char
    assert seen.startswith(
        "train: phantom_ttt(): recipe fog_of_war (sog searches it through "
        "the anchored subgame"), seen
    process.send_signal(signal.SIGINT)
    out, rest = process.communicate(timeout=300)
    seen += rest
    assert process.returncode == 130, seen[-3000:]
  finally:
    watchdog.cancel()
    process.kill()
  assert "Traceback" not in seen
  stopped = re.search(r"stopped \(SIGINT\) phantom_ttt \(fog_of_war\) at "
                      r"step (\d+)", seen)
  assert stopped, seen[-3000:]
  summary = json.loads(out.strip().splitlines()[-1])
  work = summary["worker_stats"]
  assert work["games"] > 0 and work["examples"] == (
      work["searches"] + work["solves"])
  _check_run(run_dir, "phantom_ttt", "fog_of_war", seen.splitlines()[0],
             int(stopped.group(1)), finished=False)


def test_a_rerun_resumes_and_noresume_starts_over(tmp_path):
  args = ["--game=kuhn_poker", "--backend=inline", f"--run_dir={tmp_path}",
          "--simulations=5", "--solver_simulations=5", "--min_replay=8",
          "--batch_size=8", "--hidden=8", "--noprogress", "--json"]
  first = _train_py("--steps=4", *args)
  assert first.returncode == 0, first.stderr[-3000:]
  before = _metadata(str(tmp_path / "checkpoint.npz"))["extra"]
  again = _train_py("--steps=7", *args)
  assert again.returncode == 0, again.stderr[-3000:]
  assert "train: resuming" in again.stderr
  assert json.loads(again.stdout.splitlines()[-1])["steps"] == 7
  after = _metadata(str(tmp_path / "checkpoint.npz"))["extra"]
  assert after["examples"] > before["examples"]
  assert after["train_seconds"] > before["train_seconds"]
  fresh = _train_py("--steps=2", "--noresume", *args)
  assert fresh.returncode == 0, fresh.stderr[-3000:]
  assert "train: resuming" not in fresh.stderr
  assert _metadata(str(tmp_path / "checkpoint.npz"))["step"] == 2


_binary = train_cli.module


def _settings_of(args: list[str], recipe: str | None = None):
  """The TrainConfig examples/train.py makes of `args` for `recipe`
  (default: --recipe, or the one auto picks), validated as the trainer
  validates it; raises ValueError as train.py would refuse it."""
  from absl import flags  # pylint: disable=g-import-not-at-top
  binary = _binary()
  try:
    flags.FLAGS(["train.py"] + args)
    if recipe is None:
      recipe = flags.FLAGS.recipe
      if recipe == "auto":
        recipe = recipes.choose_recipe(flags.FLAGS.game)[0]
    config, _ = binary.config_from_flags(recipe, "/tmp/run")
  finally:
    flags.FLAGS.unparse_flags()
  config.validate()
  recipes.get(config.recipe).validate(config)
  return config


@pytest.mark.parametrize("args,line", [
    (["--game=tic_tac_toe", "--root_histories=5"],
     "train: --root_histories is not used by the perfect_information recipe; "
     "it is for fog_of_war (--recipe picks one)"),
    (["--game=kuhn_poker", "--games=8"],
     "train: --games is not used by the public_states recipe; it is for "
     "perfect_information (--recipe picks one)"),
    (["--game=phantom_ttt", "--solvers=2"],
     "train: --solvers is not used by the fog_of_war recipe; it is for "
     "public_states (--recipe picks one)"),
    (["--game=phantom_ttt", "--expansions_per_update=2"],
     "train: --expansions_per_update is not used by the fog_of_war recipe; "
     "it is for perfect_information and public_states (--recipe picks one)"),
    (["--game=kuhn_poker", "--recipe=perfect_information"],
     "train: the perfect_information recipe cannot train kuhn_poker"),
    (["--game=tic_tac_toe", "--recipe=fog_of_war"],
     "train: tic_tac_toe is a perfect-information game"),
])
def test_a_flag_or_recipe_foreign_to_the_game_is_refused_in_one_line(
    args, line):
  with pytest.raises(ValueError) as refused:
    _settings_of(args)
  assert str(refused.value).startswith(line), str(refused.value)
  assert "\n" not in str(refused.value)


def test_train_py_refuses_a_foreign_flag_with_exit_2_and_no_folder(tmp_path):
  result = _train_py("--game=tic_tac_toe", "--root_histories=5", "--steps=1",
                     f"--run_dir={tmp_path / 'run'}")
  assert result.returncode == 2, result.stderr[-2000:]
  assert "Traceback" not in result.stderr
  assert result.stderr.splitlines()[-1].startswith(
      "train: --root_histories is not used by the perfect_information")
  assert not os.path.exists(tmp_path / "run")


@pytest.mark.parametrize("args,line", [
    (["--game=phantom_ttt", "--resume", "--checkpoint={tmp}/none.npz"],
     "train: cannot resume: checkpoint '{tmp}/none.npz' does not exist "
     "(rerunning without --resume starts the run)"),
    (["--game=phantom_ttt", "--resume", "--checkpoint={shipped}"],
     "train: cannot resume from '{shipped}': it holds no optimiser state"),
    (["--game=kuhn_poker", "--steps=0"], "train: steps must be > 0, got 0"),
    (["--game=tic_tac_toe", "--curve_games=3"],
     "train: --curve_games must be even (duplicate seats; 0: no curve) and "
     "--curve_time_limit > 0, got 3 and 0.5"),
    (["--game=kuhn_poker", "--curve_games=4"],
     "train: --curve_games is not used by the public_states recipe; it is "
     "for perfect_information and fog_of_war (--recipe picks one)"),
])
def test_train_py_refuses_what_it_cannot_resume_or_bound_in_one_line(
    args, line, tmp_path, capsys):
  """main() returns 2 with one line, before any worker starts."""
  from absl import flags  # pylint: disable=g-import-not-at-top
  shipped = cvpn.shipped_checkpoint(pyspiel.load_game("phantom_ttt"))
  fill = lambda a: a.format(tmp=tmp_path, shipped=shipped)
  binary = _binary()
  try:
    flags.FLAGS(["train.py", f"--run_dir={tmp_path / 'run'}"] +
                [fill(a) for a in args])
    assert binary.main(["train.py"]) == 2
  finally:
    flags.FLAGS.unparse_flags()
  err = capsys.readouterr().err.strip().splitlines()
  assert err[-1].startswith(fill(line)), err
  assert not os.path.exists(tmp_path / "run")


def _children(pid: int) -> list[int]:
  out = []
  for entry in os.listdir("/proc"):
    if entry.isdigit():
      try:
        with open(f"/proc/{entry}/stat") as f:
          fields = f.read().rsplit(")", 1)[1].split()
      except OSError:
        continue
      if int(fields[1]) == pid:
        out.append(int(entry))
  return out


def _alive(pid: int) -> bool:
  try:
    with open(f"/proc/{pid}/stat") as f:
      return f.read().rsplit(")", 1)[1].split()[0] != "Z"
  except OSError:
    return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")
def test_killing_the_trainer_with_sigkill_leaves_no_worker_behind(tmp_path):
  process = subprocess.Popen(
      [sys.executable, TRAIN, "--game=kuhn_poker", "--minutes=5",
       "--actors=2", "--solvers=1", "--simulations=5", "--hidden=8",
       f"--run_dir={tmp_path}", "--noprogress"], cwd=ROOT,
      stderr=subprocess.DEVNULL)
  try:
    workers = []
    deadline = time.monotonic() + 120
    while len(workers) < 3 and time.monotonic() < deadline:
      time.sleep(0.5)
      workers = [p for p in _children(process.pid)
                 if "spawn" in open(f"/proc/{p}/cmdline").read()]
    assert len(workers) == 3, workers
    time.sleep(2)  # (the workers are past their start)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    deadline = time.monotonic() + 10
    while any(map(_alive, workers)) and time.monotonic() < deadline:
      time.sleep(0.2)
    assert not [p for p in workers if _alive(p)]
  finally:
    process.kill()
    for p in _children(process.pid):
      os.kill(p, signal.SIGKILL)



def _documented_commands() -> list[tuple[str, list[str]]]:
  """(where, flags) of every examples/train.py command in README.md and
  docs/*.md: the code blocks' command lines (continuations joined) and the
  commands of docs/training.md's shipped-networks table (cells that start
  with --game=)."""
  import glob  # pylint: disable=g-import-not-at-top
  import re  # pylint: disable=g-import-not-at-top
  import shlex  # pylint: disable=g-import-not-at-top
  out = []
  for path in [os.path.join(ROOT, "README.md")] + sorted(
      glob.glob(os.path.join(ROOT, "docs", "*.md"))):
    with open(path) as f:
      lines = f.read().splitlines()
    name = os.path.relpath(path, ROOT)
    i = 0
    while i < len(lines):
      line = lines[i].strip()
      if re.match(r"^(\.venv/bin/)?python3? examples/train\.py\b", line):
        text = line
        while text.endswith("\\") and i + 1 < len(lines):
          i += 1
          text = text[:-1] + " " + lines[i].strip()
        text = text.split("  #")[0]
        out.append((f"{name}:{i + 1}",
                    [a for a in shlex.split(text) if a.startswith("--")]))
      for cell in re.findall(r"`(--game=[^`]*)`", lines[i]):
        out.append((f"{name}:{i + 1}", shlex.split(cell)))
      i += 1
  return out


def test_every_documented_training_command_runs_with_the_binarys_flags():
  """Each command's flags parse, are used by the recipe it trains and make
  settings that validate (nothing is trained). Where a network ships for
  the game, the recipe is the one that trained it (the walk that picks it
  for London takes 40 s here; `test_auto_picks_...` holds auto to the
  bot's search on the others)."""
  from absl import flags  # pylint: disable=g-import-not-at-top
  _binary()  # (its flags defined, whichever test ran first)
  commands = _documented_commands()
  assert len(commands) >= 15, commands
  bad = {}
  for where, args in commands:
    try:
      flags.FLAGS(["train.py"] + args)
      game, recipe = flags.FLAGS.game, flags.FLAGS.recipe
      flags.FLAGS.unparse_flags()
      shipped = cvpn.shipped_checkpoint(game)
      if recipe == "auto" and shipped is not None:
        recipe = recipes.recipe_of(_metadata(shipped))
      _settings_of(args, None if recipe == "auto" else recipe)
    except Exception as e:  # pylint: disable=broad-except
      bad[where] = f"{' '.join(args)}: {type(e).__name__}: {e}"
    finally:
      flags.FLAGS.unparse_flags()
  assert not bad, bad


def test_the_shipped_networks_recipes_are_the_ones_auto_picks():
  """Where auto's walk is quick, it picks the recipe that trained the
  network shipped for the game."""
  for game in ("connect_four", "kuhn_poker", "leduc_poker",
               "liars_dice(numdice=1,dice_sides=4)", "phantom_ttt",
               "dark_hex(num_rows=3,num_cols=3)"):
    meta = _metadata(cvpn.shipped_checkpoint(game))
    assert recipes.choose_recipe(game)[0] == recipes.recipe_of(meta), game
