"""examples/train.py, the one trainer (DESIGN.md section 18): the recipe
`--recipe=auto` picks for each class of game, each recipe trained a few
steps on worker processes into a checkpoint whose metadata is right and
which the sog bot then uses, a rerun that resumes, a flag foreign to the
recipe refused in one line, and no worker left behind when the trainer is
killed with SIGKILL."""

from importlib import metadata
import json
import os
import signal
import subprocess
import sys
import time

import pyspiel
import pytest

from open_spiel_sog.algorithms.networks import policy_value
from open_spiel_sog.algorithms.sog import cvpn
from open_spiel_sog.algorithms.sog import engine as engine_lib
from open_spiel_sog.algorithms.training import recipes
from open_spiel_sog.bots import sog_values

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRAIN = os.path.join(ROOT, "examples", "train.py")
_NATIVE = engine_lib.native_reason(pyspiel.load_game("tic_tac_toe")) is None


def _train_py(*args, timeout=600):
  return subprocess.run([sys.executable, TRAIN, *args], capture_output=True,
                        text=True, timeout=timeout, check=False, cwd=ROOT)


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
  network, while a small map's walk ends within it."""
  assert recipes.slot_histories(pyspiel.load_game("scotland_yard")) == (
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


@pytest.mark.parametrize("game,recipe,flags", [
    ("tic_tac_toe", "perfect_information",
     ["--games=4", "--simulations=10", "--min_replay=32", "--batch_size=16",
      "--hidden=16", "--policy_hidden=16"]),
    ("kuhn_poker", "public_states",
     ["--simulations=10", "--solver_simulations=10", "--q_search=1",
      "--solver_value_targets=1", "--min_replay=16", "--batch_size=16",
      "--hidden=16"]),
    ("dark_hex(num_rows=2,num_cols=2)", "fog_of_war",
     ["--recipe=fog_of_war", "--simulations=10", "--solver_simulations=10",
      "--min_replay=16", "--batch_size=16", "--hidden=16",
      "--token_width=16"]),
])
def test_each_recipe_trains_on_processes_into_a_checkpoint_the_bot_uses(
    game, recipe, flags, tmp_path):
  if recipe == "perfect_information" and not _NATIVE:
    pytest.skip("the perfect_information recipe needs the C++ shim")
  run_dir = tmp_path / "run"
  result = _train_py(f"--game={game}", "--steps=3", "--backend=process",
                     f"--run_dir={run_dir}", "--noprogress", "--json", *flags)
  assert result.returncode == 0, result.stderr[-3000:]
  first = [l for l in result.stderr.splitlines() if l.startswith("train:")][0]
  assert first.startswith(f"train: {pyspiel.load_game(game)}: recipe "
                          f"{recipe} ("), first
  summary = json.loads(result.stdout.strip().splitlines()[-1])
  assert summary["steps"] == 3 and summary["recipe"] == recipe
  path = str(run_dir / "checkpoint.npz")
  assert summary["checkpoint"] == path
  meta = _metadata(path)
  extra = meta["extra"]
  assert meta["step"] == 3 and meta["has_optimizer"]
  assert cvpn.same_game(meta["game"], pyspiel.load_game(game))
  assert extra["recipe"] == recipe
  assert extra["train"]["game"] == game
  assert extra["versions"]["open_spiel"] == metadata.version("open_spiel")
  assert extra["examples"] >= 16 and extra["games"] >= 1
  assert 0 < extra["minutes"] < 5
  assert list(meta["network"]["hidden"]) == [16]
  assert (run_dir / "train.log").read_text().startswith(first)
  assert sorted(os.listdir(run_dir / "snapshots")) == ["min_000.npz"]
  # The bot takes it with checkpoint=PATH and no other parameter.
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


def _binary():
  """examples/train.py as a module, loaded once per process (its flags are
  defined when it loads; tests/training_test.py shares it)."""
  import importlib.util  # pylint: disable=g-import-not-at-top
  binary = sys.modules.get("examples_train")
  if binary is None:
    spec = importlib.util.spec_from_file_location("examples_train", TRAIN)
    binary = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(binary)
    sys.modules["examples_train"] = binary
  return binary


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
