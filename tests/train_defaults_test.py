"""examples/train.py with its default flags: the public_states recipe's
`--input=auto` picks the network's input for the game (slots where the
public tree enumerates within the bound, tokens otherwise), says which at
start, and a game too large for the slot input is refused with the setting
that gets past it. (tests/one_trainer_test.py trains connect_four and
phantom_ttt with --game alone.)"""

import dataclasses

import pytest

from open_spiel_sog.algorithms.sog import cvpn
from open_spiel_sog.algorithms.training import TrainConfig
from open_spiel_sog.algorithms.training import Trainer


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
