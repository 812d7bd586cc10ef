"""Checks that the test environment (Bazel or `make test`) is the intended one."""

import os

import pyspiel

import open_spiel_sog


def test_pyspiel_loads_games():
  game = pyspiel.load_game("kuhn_poker")
  assert game.num_players() == 2
  assert game.get_type().short_name == "kuhn_poker"


def test_package_is_imported_from_the_tree_under_test():
  # Under Bazel the package must come from the runfiles tree (the sources
  # declared in BUILD), not from some other installed copy.
  package_dir = os.path.dirname(os.path.abspath(open_spiel_sog.__file__))
  tests_dir = os.path.dirname(os.path.abspath(__file__))
  assert os.path.dirname(package_dir) == os.path.dirname(tests_dir)
