"""The policy-value network's residual convolutional torso (torso "conv"):
"auto" picks it for [C, H, W] observation tensors, its host inference in
numpy is the JAX forward's, it learns, its checkpoints keep it, checkpoints
from before it load as the MLP they are, and examples/train.py's --network
is the perfect_information recipe's alone."""

import dataclasses

import numpy as np
import pyspiel
import pytest
import train_cli

from open_spiel_sog.algorithms.networks import NetworkConfig
from open_spiel_sog.algorithms.networks import policy_value
from open_spiel_sog.algorithms.networks.mlp import masked_softmax
from open_spiel_sog.algorithms.sog import cvpn
from open_spiel_sog.algorithms.training import recipes

# Small layers: the compiles, not the arithmetic, take a test's time.
SMALL = dataclasses.replace(policy_value.default_config(), hidden=(16,),
                            policy_hidden=(16,), res_channels=8,
                            res_blocks=2)


def _net(game, **changes):
  net = policy_value.PolicyValueNet(
      game, dataclasses.replace(SMALL, **changes))
  net.init(1)
  return net


def _rows(net, n=5, seed=0):
  """`n` random 0/1 input rows and legal masks (one legal action at least)."""
  rng = np.random.default_rng(seed)
  inputs = (rng.random((n, net.input_size)) < 0.3).astype(np.float32)
  legal = (rng.random((n, net.num_actions)) < 0.5).astype(np.float32)
  legal[:, 0] = 1.0
  return inputs, legal


@pytest.mark.parametrize("game,board,torso", [
    ("connect_four", (3, 6, 7), "conv"),
    ("breakthrough(rows=6,columns=6)", (3, 6, 6), "conv"),
    ("tic_tac_toe", (3, 3, 3), "conv"),
    ("mancala", None, "mlp"),  # a [16] tensor
])
def test_auto_picks_conv_for_board_tensors(game, board, torso):
  net = _net(pyspiel.load_game(game), torso="auto")
  assert net.config.torso == torso and net.board == board
  inputs, legal = _rows(net, n=3)
  values, logits = net._network.forward(net.params, inputs)  # pylint: disable=protected-access
  assert values.shape == (3,) and logits.shape == (3, net.num_actions)
  if board:
    channels = board[0]
    assert net.params["conv_stem"]["w"].shape == (3, 3, channels, 8)
    assert net.params["res_1_b"]["w"].shape == (3, 3, 8, 8)
    assert net.params["value_reduce"]["w"].shape == (1, 1, 8, 2)
    assert net.params["torso/~/linear_0"]["w"].shape == (
        board[1] * board[2] * 2, 16)
  else:
    assert "conv_stem" not in net.params


@pytest.mark.parametrize("game", ["connect_four",
                                  "breakthrough(rows=6,columns=6)"])
def test_host_evaluate_is_the_jax_forward(game):
  net = _net(pyspiel.load_game(game), torso="conv", res_channels=32,
             res_blocks=3)
  for n in (1, 7):
    inputs, legal = _rows(net, n=n, seed=n)
    values, priors = net.evaluate(inputs, legal)
    jax_values, logits = net._network.forward(net.params, inputs)  # pylint: disable=protected-access
    np.testing.assert_allclose(
        values, np.tanh(np.asarray(jax_values)) * net.utility_scale,
        atol=1e-5)
    np.testing.assert_allclose(
        priors, masked_softmax(np.asarray(logits), legal, 1.0), atol=1e-5)


def test_train_steps_lower_the_loss_on_a_fixed_batch():
  net = _net(pyspiel.load_game("connect_four"), torso="conv",
             learning_rate=1e-2)
  inputs, legal = _rows(net, n=32)
  rng = np.random.default_rng(1)
  values = rng.choice([-1.0, 1.0], size=32)
  policy = np.eye(net.num_actions)[np.argmax(legal * rng.random(
      legal.shape), axis=1)]  # (one-hot: a loss that can reach 0)
  losses = [net.train_step(inputs, legal, values, policy, np.ones(32))["loss"]
            for _ in range(20)]
  assert all(np.diff(losses) < 0) and losses[-1] < 0.8 * losses[0], losses


def test_a_checkpoint_keeps_the_torso_and_its_outputs(tmp_path):
  game = pyspiel.load_game("connect_four")
  net = _net(game, torso="auto")
  path = str(tmp_path / "conv.npz")
  net.save(path)
  meta, _ = policy_value.PolicyValueNet.read(path)
  assert meta["network"]["torso"] == "conv"
  assert meta["network"]["res_blocks"] == 2
  loaded = policy_value.PolicyValueNet.load(path, game)
  assert loaded.config == net.config and loaded.board == (3, 6, 7)
  inputs, legal = _rows(net)
  for a, b in zip(net.evaluate(inputs, legal), loaded.evaluate(inputs,
                                                                legal)):
    np.testing.assert_array_equal(a, b)


def test_a_checkpoint_from_before_the_torso_loads_as_its_mlp():
  game = pyspiel.load_game("connect_four")
  path = cvpn.shipped_checkpoint(game)
  meta, _ = policy_value.PolicyValueNet.read(path)
  assert "torso" not in meta["network"]
  net = policy_value.PolicyValueNet.load(path, game)
  assert net.config.torso == "mlp" and net.board is None


def test_settings_json_round_trip_and_one_line_refusals():
  config = dataclasses.replace(SMALL, torso="conv")
  assert NetworkConfig.from_json(config.to_json()) == config
  with pytest.raises(ValueError) as refused:
    NetworkConfig(torso="resnet").validate()
  assert str(refused.value) == (
      "policy-value network: unknown torso 'resnet'; supported: 'auto', "
      "'mlp', 'conv'")
  with pytest.raises(ValueError, match="res_channels must be >= 1"):
    NetworkConfig(res_channels=0).validate()
  with pytest.raises(ValueError, match=r"torso 'conv' reads a \[C, H, W\]"):
    policy_value.PolicyValueNet("mancala", NetworkConfig(torso="conv"))


def _settings_of(args, recipe):
  """The validated TrainConfig examples/train.py makes of `args` for
  `recipe` (tests/one_trainer_test.py's way)."""
  from absl import flags  # pylint: disable=g-import-not-at-top
  binary = train_cli.module()  # (defines the flags)
  try:
    flags.FLAGS(["train.py"] + args)
    config, _ = binary.config_from_flags(recipe, "/tmp/run")
  finally:
    flags.FLAGS.unparse_flags()
  recipes.get(recipe).validate(config)
  return config


def test_train_py_network_flags_are_the_perfect_information_recipes():
  config = _settings_of(["--game=connect_four", "--network=mlp",
                         "--res_channels=8", "--res_blocks=1"],
                        "perfect_information")
  assert (config.network.torso, config.network.res_channels,
          config.network.res_blocks) == ("mlp", 8, 1)
  plain = _settings_of(["--game=connect_four"], "perfect_information")
  assert plain.network.torso == "mlp"  # (the default)
  auto = _settings_of(["--game=connect_four", "--network=auto"],
                      "perfect_information")
  resolved, why = recipes.get("perfect_information").resolve(auto)
  assert resolved.network.torso == "conv"
  assert why == ("the perfect_information recipe's network, torso conv "
                 "(auto: its observation tensor is [3, 6, 7])")
  with pytest.raises(ValueError) as refused:
    _settings_of(["--game=kuhn_poker", "--network=conv"], "public_states")
  assert str(refused.value) == (
      "train: --network is not used by the public_states recipe; it is for "
      "perfect_information (--recipe picks one)")
