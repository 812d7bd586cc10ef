"""Presets by game class (training/presets.py): the one command's defaults
follow what the game declares and what its random games show, no table
names a game, and a flag given always wins."""

from absl import flags
import pyspiel
import pytest

from open_spiel_sog.algorithms.training import perfect_information as pi
from open_spiel_sog.algorithms.training import presets
from open_spiel_sog.algorithms.training import recipes

import train_cli


@pytest.mark.parametrize("name", ["tic_tac_toe", "connect_four", "othello",
                                  "go(board_size=7)", "hex(board_size=5)"])
def test_the_class_is_what_the_game_declares(name):
  game = pyspiel.load_game(name)
  cls = presets.game_class(game)
  assert cls.board_planes == (len(game.observation_tensor_shape()) == 3)
  assert cls.max_length == game.max_game_length()
  assert not cls.chance
  assert cls.symmetries == (game.get_type().short_name in pi.SYMMETRIES)
  # A random game ends within the declared bound, and a decision has at
  # least one and at most num_distinct_actions legal actions.
  assert 1 <= cls.mean_length <= game.max_game_length()
  assert 1 <= cls.mean_legal <= game.num_distinct_actions()
  # Counts, not seconds: the same numbers every time.
  assert presets.game_class(game) == cls


def test_tic_tac_toe_random_games_are_counted_exactly():
  # tic_tac_toe's random games last 5 to 9 moves; their legal actions a
  # move are 9 - (moves made), so the mean is fixed by the lengths alone.
  cls = presets.game_class(pyspiel.load_game("tic_tac_toe"), playouts=200)
  assert 5 <= cls.mean_length <= 9
  # Over a game of n moves the legal counts are 9, 8, ..., 10 - n.
  assert 9 - cls.mean_length < cls.mean_legal < 9


def test_a_chance_game_is_marked():
  assert presets.game_class(pyspiel.load_game("backgammon"),
                            playouts=1).chance


def _cls(**changes):
  base = dict(board_planes=True, max_length=40, chance=False,
              symmetries=False, mean_length=20.0, mean_legal=7.0)
  base.update(changes)
  return presets.GameClass(**base)


def _values(cls):
  return {name: value for name, (value, _) in
          presets.for_class(cls, "perfect_information").items()}


def test_each_rule_follows_its_property():
  assert _values(_cls()) == {"greedy_after": 10, "dirichlet_alpha": 1.0,
                             "p_td1": 1.0, "symmetries": False}
  # Longer games: more moves drawn from the policy, capped at AlphaZero's 30.
  assert _values(_cls(max_length=100))["greedy_after"] == 25
  assert _values(_cls(max_length=722))["greedy_after"] == 30
  # Wider branching: less concentrated noise (AlphaZero: chess 0.3, Go 0.03).
  assert _values(_cls(mean_legal=33.0))["dirichlet_alpha"] == 0.3
  assert _values(_cls(mean_legal=361.0))["dirichlet_alpha"] == 0.03
  # Games ten times longer than chess's sample fewer decisions (Table S2's
  # 0.2 in Go).
  assert _values(_cls(mean_length=500.0))["p_td1"] == 0.2
  assert _values(_cls(symmetries=True))["symmetries"] is True
  # Recipes without presets get none.
  for recipe in set(recipes.RECIPES) - set(presets.RECIPES):
    assert presets.for_class(_cls(), recipe) == {}


def _config(args):
  binary = train_cli.module()  # (defines the flags)
  try:
    flags.FLAGS(["train.py"] + args)
    config, _ = binary.config_from_flags("perfect_information", "/tmp/run")
    line = binary.presets_line("perfect_information")
  finally:
    flags.FLAGS.unparse_flags()
  return config, line


def test_train_py_takes_the_presets_and_a_given_flag_wins():
  config, line = _config(["--game=go(board_size=7)"])
  expected = _values(presets.game_class(pyspiel.load_game("go(board_size=7)")))
  assert config.greedy_after == expected["greedy_after"] == 24
  assert config.p_td1 == expected["p_td1"]
  assert config.recipe_settings["dirichlet_alpha"] == (
      expected["dirichlet_alpha"])
  assert line.startswith("train: presets for its class: greedy_after=24 "
                         "(a quarter of its longest game, 98 moves")
  config, line = _config(["--game=go(board_size=7)", "--greedy_after=5",
                          "--dirichlet_alpha=0.3"])
  assert config.greedy_after == 5
  assert config.recipe_settings["dirichlet_alpha"] == 0.3
  assert "greedy_after=5 (as given)" in line
  assert "dirichlet_alpha=0.3 (as given)" in line
  recipes.get("perfect_information").validate(config)


def test_the_shipped_small_games_keep_the_recipes_defaults():
  # tic_tac_toe and connect_four were trained with the recipe's defaults
  # before presets: their presets are those defaults.
  for name in ("tic_tac_toe", "connect_four"):
    config, _ = _config([f"--game={name}"])
    defaults = recipes.get("perfect_information").defaults
    assert config.greedy_after == defaults["greedy_after"]
    assert config.p_td1 == defaults["p_td1"]
    assert config.recipe_settings["dirichlet_alpha"] == (
        pi.SelfPlayConfig.dirichlet_alpha)
