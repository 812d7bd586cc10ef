"""The package's notices print once per process and subject
(`utils.notices`), and every time where the `open_spiel_sog` logger is
enabled for DEBUG (absl's `-v 1`)."""

import logging

import pyspiel

import open_spiel_sog  # pylint: disable=unused-import  (registers sog)

_NO_NETWORK = "sog: no trained network ships for hex(board_size=4)"


def _bots(game, n):
  for _ in range(n):
    pyspiel.load_bot("sog", game, 0, {})


def test_a_missing_network_is_told_once_per_game(capsys):
  _bots(pyspiel.load_game("hex(board_size=4)"), 3)
  err = capsys.readouterr().err
  assert err.count(_NO_NETWORK) == 1, err
  _bots(pyspiel.load_game("hex(board_size=3)"), 2)
  err = capsys.readouterr().err
  assert err.count("no trained network ships for hex(board_size=3)") == 1
  assert _NO_NETWORK not in err


def test_debug_logging_shows_every_notice(capsys):
  logger = logging.getLogger("open_spiel_sog")
  level = logger.level
  logger.setLevel(logging.DEBUG)
  try:
    _bots(pyspiel.load_game("hex(board_size=4)"), 3)
  finally:
    logger.setLevel(level)
  assert capsys.readouterr().err.count(_NO_NETWORK) == 3
