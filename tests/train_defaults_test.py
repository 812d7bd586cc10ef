"""examples/train.py with its default flags: `--input=auto` picks the
network's input for the game (slots where the public tree enumerates within
the bound, tokens otherwise), says which at start, and a game too large
for the slot input is refused with the setting that gets past it."""

import dataclasses
import os
import signal
import subprocess
import sys
import time

import pytest

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


def test_train_py_trains_connect_four_with_its_default_flags():
  result = _train_py("--game=connect_four", "--steps=2")
  assert result.returncode == 0, result.stderr[-3000:]
  assert ("train: connect_four: input=tokens (auto: its public tree holds "
          "more than 20,000 public states)") in result.stderr
  assert "trained connect_four at step 2" in result.stderr


def test_train_py_starts_phantom_ttt_with_its_default_flags():
  """The token input on sampled public states, chosen and started with no
  flag but --steps=2; stopped by SIGINT a few seconds into self-play, as a
  user's Ctrl-C would, since two steps at the default flags take over ten
  minutes on a 2-core machine (a self-play game of SoG(50, 1) with the
  default widths takes about 220 s of token-network evaluations)."""
  process = subprocess.Popen(
      [sys.executable, os.path.join(ROOT, "examples", "train.py"),
       "--game=phantom_ttt", "--steps=2"], stderr=subprocess.PIPE, text=True)
  seen = ""
  try:
    while "train phantom_ttt:" not in seen:  # the progress bar: training
      char = process.stderr.read(1)
      if not char:
        break
      seen += char
    assert ("train: phantom_ttt: input=tokens (auto: a public state holds "
            "more than max_histories=300 histories, which sog samples)"
            ) in seen, seen
    time.sleep(3)
    process.send_signal(signal.SIGINT)
    seen += process.stderr.read()
    assert process.wait(timeout=300) == 130, seen
  finally:
    process.kill()
  assert "stopped (SIGINT) phantom_ttt at step 0" in seen, seen
  assert "Traceback" not in seen
