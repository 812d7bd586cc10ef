"""The "ismcts_br" bot in OpenSpiel's registry and
examples/approx_exploitability.py, judged by OpenSpiel's exact best
responses."""

import json
import os
import subprocess
import sys

from open_spiel.python import policy as os_policy
from open_spiel.python.algorithms import best_response as os_best_response
from open_spiel.python.algorithms import expected_game_score
import pyspiel
import pytest

import open_spiel_sog  # registers "ismcts_br"  # pylint: disable=unused-import
from open_spiel_sog.algorithms import ismcts_br

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _example(*flags):
  return subprocess.run(
      [sys.executable, os.path.join(ROOT, "examples",
                                    "approx_exploitability.py"), *flags],
      capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture(scope="module")
def kuhn_responder(tmp_path_factory):
  """(path, summary): a responder to uniform_random on kuhn_poker trained
  and saved by the example binary."""
  path = str(tmp_path_factory.mktemp("br") / "kuhn_br.npz")
  result = _example("--game=kuhn_poker", "--opponent=uniform_random",
                    "--steps=60", "--simulations=50", "--eval_games=300",
                    f"--save={path}", "--json", "--noprogress")
  assert result.returncode == 0, result.stderr
  return path, json.loads(result.stdout.strip().splitlines()[-1])


def test_example_prints_exact_values_beside_approximate_ones(kuhn_responder):
  path, summary = kuhn_responder
  game = pyspiel.load_game("kuhn_poker")
  uniform = os_policy.UniformRandomPolicy(game)
  assert os.path.exists(path)
  for seat in (0, 1):
    entry = summary["seats"][str(seat)]
    exact = os_best_response.BestResponsePolicy(game, seat, uniform).value(
        game.new_initial_state())
    assert entry["exact_br_value"] == pytest.approx(exact)
    # ISMCTS-BR is a lower bound: exactly scored, never above the exact BR;
    # and it reaches 95% of it.
    assert entry["approx_br_exact_value"] <= exact + 1e-9
    assert entry["approx_br_exact_value"] >= 0.95 * exact
    # Sampled, within its sampling error of its exact value.
    assert abs(entry["approx_br_value"] - entry["approx_br_exact_value"]) <= (
        4 * entry["stderr"])
  assert summary["approx_nash_conv"] == pytest.approx(
      summary["seats"]["0"]["approx_br_value"] +
      summary["seats"]["1"]["approx_br_value"])
  assert summary["exact_nash_conv"] == pytest.approx(0.5 + 5 / 12)


def test_bot_from_checkpoint_best_responds(kuhn_responder):
  """The bot's decisions, tabulated over its infostates and scored by
  OpenSpiel against uniform random, reach the exact best-response value; it
  also plays through the C++ evaluate_bots."""
  path, _ = kuhn_responder
  game = pyspiel.load_game("kuhn_poker")
  assert "ismcts_br" in pyspiel.bots_that_can_play_game(game)
  uniform = os_policy.UniformRandomPolicy(game)
  for seat in (0, 1):
    bot = pyspiel.load_bot("ismcts_br", game, seat,
                           {"opponent": "uniform_random", "checkpoint": path})
    table = os_policy.TabularPolicy(game)
    for infostate, index in table.state_lookup.items():
      del infostate
      table.action_probability_array[index] = 0.0
    for state in _states_of(game, seat):
      (action, prob), = bot.get_policy(state)
      assert prob == 1.0 and action in state.legal_actions()
      row = table.policy_for_key(state.information_state_string(seat))
      row[:] = 0.0
      row[action] = 1.0
    joint = os_policy.merge_tabular_policies(
        [table if p == seat else os_policy.tabular_policy_from_callable(
            game, uniform) for p in range(2)], game)
    value = expected_game_score.policy_value(game.new_initial_state(),
                                             [joint, joint])[seat]
    exact = os_best_response.BestResponsePolicy(game, seat, uniform).value(
        game.new_initial_state())
    assert exact * 0.95 <= value <= exact + 1e-9
    bots = [bot, pyspiel.make_uniform_random_bot(1 - seat, 5)]
    if seat == 1:
      bots.reverse()
    returns = pyspiel.evaluate_bots(game.new_initial_state(), bots, 7)
    assert sum(returns) == pytest.approx(0.0) and abs(returns[0]) in (1, 2)


def _states_of(game, seat):
  stack = [game.new_initial_state()]
  while stack:
    state = stack.pop()
    if state.is_terminal():
      continue
    if state.current_player() == seat:
      yield state
    if state.is_chance_node():
      stack.extend(state.child(a) for a, _ in state.chance_outcomes())
    else:
      stack.extend(state.child(a) for a in state.legal_actions())


def test_bot_rejects_bad_parameters_clearly(kuhn_responder, tmp_path):
  path, _ = kuhn_responder
  game = pyspiel.load_game("kuhn_poker")
  cases = [
      ({}, "'opponent' parameter is required"),
      ({"opponent": "nope"}, "unknown opponent 'nope'"),
      ({"opponent": "uniform_random", "foo": 1}, "unknown parameter"),
      ({"opponent": "uniform_random", "checkpoint": str(tmp_path / "x.npz")},
       "does not exist"),
  ]
  for params, message in cases:
    with pytest.raises((ValueError, ismcts_br.CheckpointError),
                       match=message):
      pyspiel.load_bot("ismcts_br", game, 0, params)
  with pytest.raises(ismcts_br.CheckpointError, match="kuhn_poker"):
    pyspiel.load_bot("ismcts_br", pyspiel.load_game("leduc_poker"), 0,
                     {"opponent": "uniform_random", "checkpoint": path})


def test_example_rejects_bad_opponent_without_traceback():
  result = _example("--game=tic_tac_toe", "--opponent=always_call",
                    "--steps=1", "--noprogress")
  assert result.returncode == 2
  assert "always_call" in result.stderr and "leduc_poker" in result.stderr
  assert "Traceback" not in result.stderr
