"""Tests for Online Outcome Sampling (`open_spiel_sog.algorithms.oos`) and the
"oos" bot (`open_spiel_sog.bots.oos`).

Searches are small so that the file runs in a few seconds on two cores.
"""

from __future__ import annotations

import numpy as np
from open_spiel.python.algorithms import evaluate_bots as py_evaluate_bots
from open_spiel.python.algorithms import exploitability
import pyspiel
import pytest

from open_spiel_sog import registry
from open_spiel_sog.algorithms import oos
from open_spiel_sog.bots import oos as oos_bot


def _state(game, actions):
  state = game.new_initial_state()
  for a in actions:
    state.apply_action(a)
  return state


def _assert_valid_outcome(game, state, returns):
  assert state.is_terminal()
  assert list(returns) == pytest.approx(state.returns())
  assert sum(returns) == pytest.approx(0.0)
  for r in returns:
    assert game.min_utility() - 1e-9 <= r <= game.max_utility() + 1e-9


# --- The algorithm -----------------------------------------------------------


def test_root_oos_converges_on_kuhn():
  game = pyspiel.load_game("kuhn_poker")
  solver = oos.OOSSolver(game, oos.OOSConfig(seed=0))
  solver.run(20000)
  assert solver.num_infostates == 12
  assert exploitability.exploitability(game, solver.average_policy()) < 0.05


def test_root_oos_improves_on_leduc():
  game = pyspiel.load_game("leduc_poker")
  solver = oos.OOSSolver(game, {"seed": 1})
  solver.run(1000)
  early = exploitability.exploitability(game, solver.average_policy())
  solver.run(19000)
  late = exploitability.exploitability(game, solver.average_policy())
  assert late < 0.8 * early
  assert late < 1.5


def test_incremental_tree_adds_one_infostate_per_sample_at_most():
  game = pyspiel.load_game("leduc_poker")
  solver = oos.OOSSolver(game)
  solver.run(10)
  assert 0 < solver.num_infostates <= 20
  assert solver.stats.playouts == solver.num_infostates
  assert solver.stats.samples == 20


def test_targeted_search_stays_consistent():
  # With delta < 1 the untargeted samples keep the whole game converging.
  game = pyspiel.load_game("kuhn_poker")
  target = _state(game, [0, 1, 0])  # player 1 holds Q, player 0 passed.
  solver = oos.OOSSolver(game, {"delta": 0.5, "seed": 3})
  solver.run(20000, target_state=target)
  assert exploitability.exploitability(game, solver.average_policy()) < 0.1
  # The equilibrium checks behind a pass with the Q.
  policy = solver.infostate_policy(target.information_state_string(),
                                   target.legal_actions())
  assert policy[0] > 0.8


@pytest.mark.parametrize("targeting", ["infostate", "public_state"])
def test_targeting_directs_the_samples(targeting):
  game = pyspiel.load_game("leduc_poker")
  # Second round: player 0 holds card 0, public card 4, both checked.
  target = _state(game, [0, 3, 1, 1, 4])
  visits = {}
  for mode in (targeting, "none"):
    solver = oos.OOSSolver(game, {"targeting": mode, "seed": 0})
    stats = solver.run(500, target_state=target)
    visits[mode] = stats.target_visits
    if mode == "none":
      assert stats.targeted_samples == 0
      assert solver.target_weight == 1.0
    else:
      assert stats.targeted_samples > 0.8 * stats.samples
      assert solver.target_weight > 1.0
      assert target.information_state_string() in solver
  assert visits[targeting] > 5 * visits["none"]


def test_infostate_targeting_reaches_the_target_when_targeted():
  game = pyspiel.load_game("leduc_poker")
  target = _state(game, [0, 3, 2])  # player 1 faces a raise.
  solver = oos.OOSSolver(game, {"delta": 1.0})
  stats = solver.run(300, target_state=target)
  # Every targeted sample goes through the infostate unless a playout
  # starts before it (only while the tree is being built).
  assert (stats.targeted_target_visits + stats.missed_targets ==
          stats.targeted_samples)
  assert stats.missed_targets < 10


def test_infostate_targeting_where_infostate_strings_forget():
  # phantom_ttt's public states key infostates by action-observation
  # histories (its strings forget); the target's histories are found by the
  # observer's own key of the target, not the game's string.
  game = pyspiel.load_game("phantom_ttt")
  target = _state(game, [4])  # o to move, not knowing where x played.
  solver = oos.OOSSolver(game, {"delta": 1.0})
  stats = solver.run(200, target_state=target)
  assert stats.untargeted_fallbacks == 0
  assert stats.targeted_target_visits > 0.5 * stats.targeted_samples
  state = game.new_initial_state()
  bots = [pyspiel.load_bot("oos", game, p, {"simulations": 50})
          for p in (0, 1)]
  _assert_valid_outcome(game, state, pyspiel.evaluate_bots(state, bots, 3))


def test_compensation_can_be_turned_off():
  game = pyspiel.load_game("leduc_poker")
  target = _state(game, [0, 3, 1, 1, 4])
  solver = oos.OOSSolver(game, {"target_compensation": False})
  solver.run(10, target_state=target)
  assert solver.target_weight == 1.0


def test_average_policy_is_an_openspiel_policy():
  game = pyspiel.load_game("kuhn_poker")
  solver = oos.OOSSolver(game, {"playout": "current"})
  solver.run(100)
  tabular = solver.average_policy().to_tabular()
  assert tabular.action_probability_array.shape == (12, 2)
  np.testing.assert_allclose(tabular.action_probability_array.sum(axis=1), 1)
  current = solver.current_policy()
  probs = current.action_probabilities(_state(game, [0, 1]))
  assert sum(probs.values()) == pytest.approx(1.0)
  solver.reset()
  assert solver.num_infostates == 0 and solver.stats.iterations == 0


def test_solver_errors_are_clear():
  game = pyspiel.load_game("kuhn_poker")
  with pytest.raises(ValueError, match="delta must be in"):
    oos.OOSSolver(game, oos.OOSConfig(delta=1.5))
  with pytest.raises(ValueError, match="iterations must be an integer"):
    oos.OOSSolver(game).run(-1)
  with pytest.raises(ValueError, match="chance node"):
    oos.OOSSolver(game).run(1, target_state=_state(game, [0]))
  with pytest.raises(ValueError, match="terminal"):
    oos.OOSSolver(game).run(1, target_state=_state(game, [0, 1, 0, 0]))
  with pytest.raises(ValueError, match="oos cannot play"):
    oos.OOSSolver(pyspiel.load_game("kuhn_poker(players=3)"))


# --- The bot -----------------------------------------------------------------


@pytest.fixture(scope="module", autouse=True)
def _registered():
  oos_bot.register()
  oos_bot.register()  # idempotent
  assert "oos" in registry.registered_by_us()
  assert pyspiel.is_bot_registered("oos")


@pytest.mark.parametrize("game_string", ["kuhn_poker", "leduc_poker"])
def test_plays_games_with_cpp_evaluate_bots(game_string):
  game = pyspiel.load_game(game_string)
  random_bot = pyspiel.load_bot("uniform_random", game, 1, {"seed": 5})
  for bot in (oos_bot.OOSBot(game, 0, {"simulations": 100}),
              pyspiel.load_bot("oos", game, 0, {"simulations": 100}),
              pyspiel.load_bot("oos(simulations=100,targeting=public_state)",
                               game, 0)):
    for seed in range(3):
      state = game.new_initial_state()
      returns = pyspiel.evaluate_bots(state, [bot, random_bot], seed)
      _assert_valid_outcome(game, state, returns)
  # The other seat.
  bots = [pyspiel.load_bot("uniform_random", game, 0, {"seed": 5}),
          pyspiel.load_bot("oos", game, 1, {"simulations": 100})]
  state = game.new_initial_state()
  _assert_valid_outcome(game, state, pyspiel.evaluate_bots(state, bots, 7))


@pytest.mark.parametrize("game_string", ["kuhn_poker", "leduc_poker"])
def test_plays_games_with_python_evaluate_bots(game_string):
  game = pyspiel.load_game(game_string)
  bots = [oos_bot.OOSBot(game, 0, {"simulations": 50, "seed": 1}),
          oos_bot.OOSBot(game, 1, {"simulations": 50, "seed": 2})]
  rng = np.random.default_rng(0)
  for _ in range(3):
    state = game.new_initial_state()
    returns = py_evaluate_bots.evaluate_bots(state, bots, rng)
    _assert_valid_outcome(game, state, returns)
  bots[0].restart_at(game.new_initial_state())
  assert bots[0].solver.num_infostates == 0


def test_beats_uniform_random_on_kuhn():
  game = pyspiel.load_game("kuhn_poker")
  total = 0.0
  for g in range(60):
    seat = g % 2
    bots = [None, None]
    bots[seat] = oos_bot.OOSBot(game, seat, {"simulations": 300, "seed": g})
    bots[1 - seat] = pyspiel.load_bot("uniform_random", game, 1 - seat,
                                      {"seed": g})
    total += pyspiel.evaluate_bots(game.new_initial_state(), bots, g)[seat]
  assert total / 60 > 0.0


def test_policy_contract():
  game = pyspiel.load_game("leduc_poker")
  bot = pyspiel.load_bot("oos", game, 1, {"simulations": 50})
  assert bot.provides_policy()
  state = _state(game, [0, 3, 2])
  policy, action = bot.step_with_policy(state)
  assert [a for a, _ in policy] == state.legal_actions()
  assert sum(p for _, p in policy) == pytest.approx(1.0)
  assert action in state.legal_actions()
  assert dict(bot.get_policy(state)).keys() == dict(policy).keys()
  bot.inform_action(state, 1, action)  # no-op
  with pytest.raises(ValueError, match="player 0 acts"):
    bot.step(_state(game, [0, 3]))
  with pytest.raises(ValueError, match="terminal"):
    bot.step(_state(game, [0, 3, 0]))


def test_solver_carries_over_and_resets_on_a_new_game():
  game = pyspiel.load_game("leduc_poker")
  bot = oos_bot.OOSBot(game, 0, {"simulations": 30})
  bot.step(_state(game, [0, 3]))
  first = bot.solver.stats.iterations
  bot.step(_state(game, [0, 3, 2, 2]))  # same game, later decision
  assert bot.solver.stats.iterations == first + 30
  bot.step(_state(game, [1, 4]))  # another deal: a new game
  assert bot.solver.stats.iterations == 30
  bot.restart()
  assert bot.solver.num_infostates == 0


def test_seeded_bots_are_deterministic():
  game = pyspiel.load_game("leduc_poker")

  def actions(seed):
    bot = oos_bot.OOSBot(game, 0, {"simulations": 40, "seed": seed})
    return [bot.step(_state(game, deal)) for deal in ([0, 3], [1, 5], [4, 2])]

  assert actions(7) == actions(7)


@pytest.mark.parametrize("params,match", [
    ({"simulation": 5}, r"unknown parameter\(s\) 'simulation'; supported: "
     r"delta, epsilon, gamma, playout, seed, simulations, "
     r"target_compensation, targeting"),
    ({"delta": 2}, r"delta must be in \[0, 1\]"),
    ({"epsilon": 0}, r"epsilon must be in \(0, 1\]"),
    ({"gamma": -0.1}, r"gamma must be in \[0, 1\]"),
    ({"targeting": "history"}, r"unknown targeting 'history'; supported: "
     r"'infostate', 'public_state', 'none'"),
    ({"playout": "mcts"}, r"unknown playout 'mcts'"),
    ({"simulations": "many"}, r"oos: parameter 'simulations' must be of type "
     r"int, got 'many'"),
    ({"simulations": -3}, r"simulations must be an integer >= 0"),
    ({"target_compensation": "maybe"}, r"'target_compensation' must be of "
     r"type bool"),
])
def test_bad_params_give_clear_errors(params, match):
  game = pyspiel.load_game("kuhn_poker")
  with pytest.raises(ValueError, match=match):
    oos_bot.OOSBot(game, 0, params)
  with pytest.raises(ValueError, match=match):
    pyspiel.load_bot("oos", game, 0, params)


def test_can_play_and_unsupported_games():
  assert "oos" in pyspiel.bots_that_can_play_game(
      pyspiel.load_game("leduc_poker"))
  for name in ("kuhn_poker(players=3)", "goofspiel(num_cards=3)"):
    game = pyspiel.load_game(name)
    assert "oos" not in pyspiel.bots_that_can_play_game(game, 0)
    with pytest.raises(ValueError, match="oos cannot play"):
      oos_bot.OOSBot(game, 0)
  with pytest.raises(ValueError, match="player must be 0 or 1"):
    oos_bot.OOSBot(pyspiel.load_game("kuhn_poker"), 2)
