"""examples/train.py with its default flags: the public_states recipe's
`--input=auto` picks the network's input for the game (slots where the
public tree enumerates within the bound, tokens otherwise), says which at
start, and a game too large for the slot input is refused with the setting
that gets past it; connect_four and phantom_ttt train with --game alone."""

import dataclasses
import os
import signal
import subprocess
import sys
import time

import pyspiel
import pytest

from open_spiel_sog.algorithms.networks import policy_value
from open_spiel_sog.algorithms.sog import cvpn
from open_spiel_sog.algorithms.training import TrainConfig
from open_spiel_sog.algorithms.training import Trainer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _train_py(*args, timeout=600):
  return subprocess.run(
      [sys.executable, os.path.join(ROOT, "examples", "train.py"), *args],
      capture_output=True, text=True, timeout=timeout, check=False)


@pytest.mark.parametrize("game,expected,reason", [
    ("kuhn_poker", "slots", "its public tree enumerates within 20,000 "
     "public states"),
    ("leduc_poker", "slots", "its public tree enumerates"),
    ("tic_tac_toe", "tokens", "its public tree holds more than 20,000 "
     "public states"),
    ("phantom_ttt", "tokens", "a public state holds more than "
     "max_histories=300 histories, which sog samples"),
])
def test_auto_input_by_the_enumeration_bound(game, expected, reason):
  config = TrainConfig(game=game)
  assert config.network.input == "auto"
  resolved, why = config.with_input_resolved()
  assert resolved.network.input == expected
  assert why == f"input={expected} (auto: {reason})" or (
      why.startswith(f"input={expected} (auto: {reason}"))
  # Everything else is kept; an input asked for is kept as it is.
  assert dataclasses.replace(resolved, network=config.network) == config
  asked = dataclasses.replace(config, network=dataclasses.replace(
      config.network, input="tokens"))
  assert asked.with_input_resolved() == (asked, "input=tokens (as asked)")


def test_a_network_is_built_for_a_resolved_input_only():
  with pytest.raises(ValueError, match="not 'auto'"):
    cvpn.make_network(None, cvpn.NetworkConfig(input="auto"))


def test_slots_on_a_game_past_the_bound_names_the_input_that_trains_it():
  config = TrainConfig(game="tic_tac_toe", backend="inline",
                       network=cvpn.NetworkConfig(input="slots"))
  with pytest.raises(ValueError) as raised:
    Trainer(config, progress=False, log=lambda s: None)
  message = str(raised.value)
  assert message.startswith("train: input=slots numbers private parts by a "
                            "walk of the whole public tree, which "
                            "tic_tac_toe() does not allow (it has more than "
                            "200,000 public states)")
  assert message.endswith("input=tokens (or auto) trains it")


def test_train_py_trains_connect_four_with_its_default_flags(tmp_path):
  """The one command: --game and a bound. connect_four gets SoG's Go
  setting on the native engine (a policy-value network) and the bot takes
  the checkpoint with no other parameter."""
  result = _train_py("--game=connect_four", "--steps=2",
                     f"--run_dir={tmp_path}", "--noprogress")
  assert result.returncode == 0, result.stderr[-3000:]
  assert result.stderr.startswith(
      "train: connect_four(): recipe perfect_information (a "
      "perfect-information game of C++ states: sog searches it on the "
      "native engine)"), result.stderr[:500]
  assert "trained connect_four (perfect_information) at step 2" in (
      result.stderr)
  path = str(tmp_path / "checkpoint.npz")
  net = policy_value.PolicyValueNet.load(path, "connect_four")
  assert net.step == 2 and net.metadata["extra"]["recipe"] == (
      "perfect_information")
  bot = pyspiel.load_bot("sog", pyspiel.load_game("connect_four"), 0,
                         {"checkpoint": path, "simulations": 10})
  assert bot.policy_value is not None


def test_train_py_stops_phantom_ttt_on_sigint_with_its_checkpoint(tmp_path):
  """The fog_of_war recipe, chosen and started with --game alone; a SIGINT
  a few seconds into training (a user's Ctrl-C) stops the workers, writes
  the checkpoint and exits with 130."""
  process = subprocess.Popen(
      [sys.executable, os.path.join(ROOT, "examples", "train.py"),
       "--game=phantom_ttt", f"--run_dir={tmp_path}"],
      stderr=subprocess.PIPE, text=True)
  seen = ""
  try:
    while "train phantom_ttt:" not in seen:  # the progress bar: training
      char = process.stderr.read(1)
      if not char:
        break
      seen += char
    assert seen.startswith(
        "train: phantom_ttt(): recipe fog_of_war (sog searches it through "
        "the anchored subgame"), seen
    time.sleep(3)
    process.send_signal(signal.SIGINT)
    seen += process.stderr.read()
    assert process.wait(timeout=300) == 130, seen
  finally:
    process.kill()
  assert "stopped (SIGINT) phantom_ttt (fog_of_war) at step" in seen, seen
  assert "Traceback" not in seen
  meta = cvpn.read_checkpoint(str(tmp_path / "checkpoint.npz"))[0]
  assert meta["extra"]["recipe"] == "fog_of_war" and meta["has_optimizer"]
