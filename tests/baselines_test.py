"""Tests for open_spiel_sog.bots.baselines and bots.cfr_policy: OpenSpiel's
agents by name.

Each bot is loaded through `pyspiel.load_bot` and plays whole games through
both OpenSpiel's C++ `pyspiel.evaluate_bots` (restart, inform_action) and its
Python `evaluate_bots` (restart_at, inform_action). Searches are small so the
file runs in a few seconds.
"""

from __future__ import annotations

import math
import time

import numpy as np
from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import evaluate_bots as py_evaluate_bots
from open_spiel.python.algorithms import expected_game_score
from open_spiel.python.algorithms import exploitability
from open_spiel.python.algorithms import mcts as os_mcts
import pyspiel
import pytest

from open_spiel_sog import registry
from open_spiel_sog.bots import baselines
from open_spiel_sog.bots import cfr_policy

baselines.register()

NAMES = ("mcts", "ismcts", "cfr_policy")


def _play_both_ways(game, bots, seed):
  """Plays one game with each evaluate_bots; returns both returns."""
  cpp_state = game.new_initial_state()
  cpp_returns = pyspiel.evaluate_bots(cpp_state, bots, seed)
  assert cpp_state.is_terminal()
  assert list(cpp_returns) == pytest.approx(cpp_state.returns())
  py_state = game.new_initial_state()
  py_returns = py_evaluate_bots.evaluate_bots(py_state, bots,
                                              np.random.RandomState(seed))
  assert py_state.is_terminal()
  assert list(py_returns) == pytest.approx(py_state.returns())
  for returns in (cpp_returns, py_returns):
    assert len(returns) == game.num_players()
    for r in returns:
      assert game.min_utility() - 1e-9 <= r <= game.max_utility() + 1e-9
  return cpp_returns, py_returns


# --- Registration -------------------------------------------------------------


def test_register_is_idempotent_and_names_are_registered():
  baselines.register()
  baselines.register()
  names = pyspiel.registered_bots()
  for name in NAMES:
    assert name in names
    assert pyspiel.is_bot_registered(name)
    assert name in registry.registered_by_us()
  # OpenSpiel's own uniform_random is not re-registered by us.
  assert "uniform_random" not in registry.registered_by_us()


def test_register_leaves_a_name_openspiel_already_has(monkeypatch):
  monkeypatch.setattr(registry, "registered_by_us", lambda: [])
  monkeypatch.setattr(pyspiel, "is_bot_registered", lambda name: True)

  def fail(*args, **kwargs):
    raise AssertionError(f"register_bot called with {args} {kwargs}")

  monkeypatch.setattr(registry, "register_bot", fail)
  with pytest.warns(RuntimeWarning, match="already registers a bot called"):
    baselines.register()


def test_uniform_random_loads_by_name_with_a_seed():
  game = pyspiel.load_game("kuhn_poker")
  histories = []
  for _ in range(2):
    bots = [pyspiel.load_bot("uniform_random", game, 0, {"seed": 7}),
            pyspiel.load_bot("uniform_random(seed=8)", game, 1)]
    state = game.new_initial_state()
    pyspiel.evaluate_bots(state, bots, 3)
    histories.append(state.history())
  assert histories[0] == histories[1]


def test_factories_return_new_bots():
  cases = (("mcts", "tic_tac_toe", {"simulations": 5}),
           ("ismcts", "kuhn_poker", {"simulations": 5}),
           ("ismcts", "kuhn_poker", {"simulations": 5, "backend": "python"}),
           ("cfr_policy", "kuhn_poker", {"iterations": 10}))
  for name, game_string, params in cases:
    game = pyspiel.load_game(game_string)
    first = pyspiel.load_bot(name, game, 0, params)
    second = pyspiel.load_bot(name, game, 0, params)
    assert first is not second


def test_bots_that_can_play_game():
  def can_play(game_string):
    return set(pyspiel.bots_that_can_play_game(pyspiel.load_game(game_string)))

  kuhn = can_play("kuhn_poker")
  assert {"ismcts", "cfr_policy", "uniform_random"} <= kuhn
  assert "mcts" not in kuhn
  leduc = can_play("leduc_poker")
  assert {"ismcts", "cfr_policy"} <= leduc and "mcts" not in leduc
  ttt = can_play("tic_tac_toe")
  assert "mcts" in ttt
  assert "ismcts" not in ttt  # perfect information: mcts's game
  assert "cfr_policy" not in ttt  # 549,946 histories > MAX_CFR_HISTORIES
  # liars_dice implements no resample_from_infostate (ismcts samples worlds
  # from public states) and is too large for CFR+.
  liars = can_play("liars_dice")
  assert "ismcts" in liars and not {"mcts", "cfr_policy"} & liars
  # Simultaneous moves: none of them.
  assert not {"mcts", "ismcts", "cfr_policy"} & can_play(
      "goofspiel(num_cards=4,imp_info=True)")
  # Three players: ismcts and CFR+ (no guarantees) play it.
  assert {"ismcts", "cfr_policy"} <= can_play("kuhn_poker(players=3)")
  game = pyspiel.load_game("kuhn_poker")
  assert "cfr_policy" in pyspiel.bots_that_can_play_game(game, 1)


def test_count_histories():
  assert cfr_policy.count_histories(pyspiel.load_game("kuhn_poker")) == 58
  assert cfr_policy.count_histories(pyspiel.load_game("leduc_poker")) == 9457
  assert cfr_policy.count_histories(pyspiel.load_game("chess")) is None


# --- mcts ---------------------------------------------------------------------


def test_mcts_plays_tic_tac_toe_and_beats_uniform_random():
  game = pyspiel.load_game("tic_tac_toe")
  wins = losses = 0
  for seed in range(6):
    seat = seed % 2
    bots = [None, None]
    bots[seat] = pyspiel.load_bot("mcts", game, seat,
                                  {"simulations": 200, "seed": seed})
    bots[1 - seat] = pyspiel.load_bot("uniform_random", game, 1 - seat,
                                      {"seed": seed})
    for returns in _play_both_ways(game, bots, seed):
      wins += returns[seat] > 0
      losses += returns[seat] < 0
  assert wins >= 8 and losses == 0, (wins, losses)  # 12 games


def test_mcts_string_form_self_play_and_policy():
  game = pyspiel.load_game("tic_tac_toe")
  bots = [pyspiel.load_bot(f"mcts(simulations=50,uct_c=1.5,seed={p},"
                           "solve=false,rollouts=2)", game, p)
          for p in range(2)]
  assert bots[0].max_simulations == 50 and bots[0].uct_c == 1.5
  assert not bots[0].solve
  _play_both_ways(game, bots, 0)
  state = game.new_initial_state()
  policy, action = bots[0].step_with_policy(state)
  assert dict(policy)[action] == 1.0


def test_mcts_is_reproducible_from_its_seed():
  game = pyspiel.load_game("tic_tac_toe")
  histories = []
  for _ in range(2):
    bots = [pyspiel.load_bot("mcts", game, p, {"simulations": 20, "seed": 4})
            for p in range(2)]
    state = game.new_initial_state()
    pyspiel.evaluate_bots(state, bots, 0)
    histories.append(state.history())
  assert histories[0] == histories[1]


def test_mcts_time_limit_zero_is_the_python_bot_unchanged():
  game = pyspiel.load_game("tic_tac_toe")
  histories = []
  for params in ({"simulations": 20, "seed": 4},
                 {"simulations": 20, "seed": 4, "time_limit": 0.0}):
    bots = [pyspiel.load_bot("mcts", game, p, params) for p in range(2)]
    assert type(bots[0]) is os_mcts.MCTSBot  # pylint: disable=unidiomatic-typecheck
    state = game.new_initial_state()
    pyspiel.evaluate_bots(state, bots, 0)
    histories.append(state.history())
  assert histories[0] == histories[1]


def test_mcts_time_limit_runs_openspiel_cpp_search_for_that_long():
  game = pyspiel.load_game("connect_four")
  state = game.new_initial_state()
  # The Python bot's rate here, for comparison.
  python_bot = pyspiel.load_bot("mcts", game, 0, {"simulations": 300})
  start = time.perf_counter()
  python_bot.step(state)
  python_rate = 300 / (time.perf_counter() - start)
  # simulations (1) is ignored with a time limit.
  bot = pyspiel.load_bot("mcts(time_limit=0.2,simulations=1)", game, 0)
  assert isinstance(bot._search, pyspiel.MCTSBot)  # pylint: disable=protected-access
  for _ in range(2):
    start = time.perf_counter()
    action = bot.step(state)
    seconds = time.perf_counter() - start
    assert action in state.legal_actions()
    assert 0.1 <= seconds <= 1.0, seconds
    assert bot.search_seconds <= seconds
    cpp_rate = bot.simulations_run / bot.search_seconds
    assert cpp_rate > 3 * python_rate, (cpp_rate, python_rate)
  policy, action = bot.step_with_policy(state)
  assert dict(policy)[action] == 1.0
  assert sorted(a for a, _ in policy) == state.legal_actions()


def test_mcts_cpp_backend_runs_exactly_its_simulations():
  game = pyspiel.load_game("connect_four")
  state = game.new_initial_state()
  bot = pyspiel.load_bot("mcts(simulations=700,backend=cpp,seed=2)", game, 0)
  assert isinstance(bot._search, pyspiel.MCTSBot)  # pylint: disable=protected-access
  assert bot.step(state) in state.legal_actions()
  assert bot.simulations_run == 700
  with pytest.raises(ValueError, match="unknown backend 'gpu'"):
    pyspiel.load_bot("mcts(backend=gpu)", game, 0)
  with pytest.raises(ValueError, match="backend=python takes simulations"):
    pyspiel.load_bot("mcts(backend=python,time_limit=1)", game, 0)


def test_mcts_time_limit_with_no_time_for_the_root_plays_a_legal_action():
  game = pyspiel.load_game("connect_four")
  state = game.new_initial_state()
  bot = pyspiel.load_bot("mcts", game, 0, {"time_limit": 1e-12})
  assert bot.step(state) in state.legal_actions()
  assert bot.simulations_run < 2


def test_mcts_time_limit_beats_uniform_random():
  game = pyspiel.load_game("tic_tac_toe")
  wins = losses = 0
  for seed in range(2):
    for seat in range(2):
      bots = [None, None]
      bots[seat] = pyspiel.load_bot("mcts", game, seat,
                                    {"time_limit": 0.05, "seed": seed})
      bots[1 - seat] = pyspiel.load_bot("uniform_random", game, 1 - seat,
                                        {"seed": seed})
      for returns in _play_both_ways(game, bots, seed):
        wins += returns[seat] > 0
        losses += returns[seat] < 0
  assert wins >= 5 and losses == 0, (wins, losses)  # 8 games (7 wins here)


def test_mcts_time_limit_rejects_python_games():
  from open_spiel.python.games import tic_tac_toe  # pylint: disable=g-import-not-at-top,unused-import
  game = pyspiel.load_game("python_tic_tac_toe")
  with pytest.raises(ValueError, match=r"^mcts: time_limit runs OpenSpiel's "
                     r"C\+\+ MCTSBot, which cannot play python_tic_tac_toe "
                     r"\(a Python game\); time_limit is supported for "
                     r"OpenSpiel's C\+\+ games only"):
    pyspiel.load_bot("mcts", game, 0, {"time_limit": 0.1})
  # Without time_limit, OpenSpiel's Python bot plays it.
  assert pyspiel.load_bot("mcts(simulations=5)", game, 0).step(
      game.new_initial_state()) in range(9)


def test_is_python_game():
  from open_spiel.python.games import tic_tac_toe  # pylint: disable=g-import-not-at-top,unused-import
  # C++ games with their own bound classes (pyspiel.connect_four...) too.
  for name in ("kuhn_poker", "connect_four", "tic_tac_toe"):
    assert not baselines.is_python_game(pyspiel.load_game(name))
  assert baselines.is_python_game(pyspiel.load_game("python_tic_tac_toe"))


# --- ismcts -------------------------------------------------------------------


@pytest.mark.parametrize("game_string", ["kuhn_poker", "leduc_poker"])
@pytest.mark.parametrize("params", [
    {},
    {"final_policy": "normalized_visit_count", "max_world_samples": 10},
    {"child_selection": "puct"},
    {"backend": "python", "final_policy": "max_value"},
])
def test_ismcts_plays_whole_games(game_string, params):
  game = pyspiel.load_game(game_string)
  params = dict(params, simulations=50)
  bots = [pyspiel.load_bot("ismcts", game, p, dict(params, seed=p))
          for p in range(2)]
  if params.get("child_selection") == "puct" or params.get("backend"):
    assert not isinstance(bots[0], pyspiel.ISMCTSBot)
  else:
    assert isinstance(bots[0], pyspiel.ISMCTSBot)  # OpenSpiel's C++ bot
  for seed in range(2):
    _play_both_ways(game, bots, seed)
  # Against uniform_random, from the string form.
  bots = [pyspiel.load_bot("ismcts(simulations=50,seed=3)", game, 0),
          pyspiel.load_bot("uniform_random", game, 1, {"seed": 3})]
  _play_both_ways(game, bots, 5)


def test_ismcts_policy():
  game = pyspiel.load_game("kuhn_poker")
  state = game.new_initial_state()
  state.apply_action(0)
  state.apply_action(1)
  for backend in ("cpp", "python"):
    bot = pyspiel.load_bot("ismcts", game, 0, {
        "simulations": 50, "backend": backend,
        "final_policy": "normalized_visit_count"})
    assert bot.provides_policy()
    policy, action = bot.step_with_policy(state)
    assert sorted(a for a, _ in policy) == state.legal_actions()
    assert sum(p for _, p in policy) == pytest.approx(1.0)
    assert action in state.legal_actions()


def test_ismcts_python_backend_is_reproducible_from_its_seed():
  game = pyspiel.load_game("leduc_poker")
  histories = []
  for _ in range(2):
    bots = [pyspiel.load_bot("ismcts", game, p,
                             {"simulations": 30, "backend": "python",
                              "seed": p}) for p in range(2)]
    state = game.new_initial_state()
    pyspiel.evaluate_bots(state, bots, 1)
    histories.append(state.history())
  assert histories[0] == histories[1]


def test_ismcts_time_limit_stops_the_search_and_changes_nothing_else():
  game = pyspiel.load_game("leduc_poker")
  state = game.new_initial_state()
  state.apply_action(0)
  state.apply_action(3)
  # With a limit it never reaches, the timed search is OpenSpiel's own:
  # the same policy from the same seed.
  policies = []
  for time_limit in (0.0, 60.0):
    bot = pyspiel.load_bot("ismcts", game, 0, {
        "simulations": 200, "seed": 7, "time_limit": time_limit,
        "backend": "python", "final_policy": "normalized_visit_count"})
    policies.append(bot.step_with_policy(state)[0])
    assert bot.simulations_run == 200
  assert policies[0] == policies[1]
  # A limit it reaches: the search stops there, far below the cap.
  bot = pyspiel.load_bot("ismcts(simulations=10000000,time_limit=0.2)",
                         game, 0)
  assert not isinstance(bot, pyspiel.ISMCTSBot)  # auto: the Python port
  start = time.monotonic()
  action = bot.step(state)
  seconds = time.monotonic() - start
  assert action in state.legal_actions()
  assert 0.2 <= seconds < 0.2 * 1.2 + 0.1, seconds
  assert 1 <= bot.simulations_run < 10_000_000


@pytest.mark.alone
def test_ismcts_time_limit_without_simulations_searches_by_time_alone():
  """simulations=-1 (the default): 1000 without a time limit, no cap with
  one (Leduc fits about 20,000 Python simulations in a second); given
  simulations cap a timed search."""
  game = pyspiel.load_game("leduc_poker")
  state = game.new_initial_state()
  state.apply_action(0)
  state.apply_action(3)
  bot = pyspiel.load_bot("ismcts", game, 0, {"backend": "python"})
  bot.step(state)
  assert bot.simulations_run == 1000
  bot = pyspiel.load_bot("ismcts(time_limit=0.3)", game, 0)
  start = time.monotonic()
  bot.step(state)
  seconds = time.monotonic() - start
  assert 0.3 <= seconds < 0.3 * 1.2 + 0.1, seconds
  assert bot.simulations_run > 1000
  bot = pyspiel.load_bot("ismcts(time_limit=5,simulations=50)", game, 0)
  start = time.monotonic()
  bot.step(state)
  assert time.monotonic() - start < 2.5
  assert bot.simulations_run == 50


# --- cfr_policy ---------------------------------------------------------------


def test_cfr_policy_plays_whole_games_and_provides_its_policy():
  game = pyspiel.load_game("kuhn_poker")
  bots = [pyspiel.load_bot("cfr_policy", game, p, {"seed": p})
          for p in range(2)]
  for seed in range(3):
    _play_both_ways(game, bots, seed)
  table = cfr_policy.cfr_plus_average_policy(game, 1000)
  state = game.new_initial_state()
  state.apply_action(2)
  state.apply_action(0)
  assert bots[0].provides_policy()
  assert bots[0].get_policy(state) == table[state.information_state_string()]
  policy, action = bots[0].step_with_policy(state)
  assert policy == table[state.information_state_string()]
  assert action in state.legal_actions()
  with pytest.raises(ValueError, match="does not act"):
    bots[1].step(state)


def test_cfr_policy_is_solved_once_per_game_and_iterations():
  game = pyspiel.load_game("kuhn_poker")
  first = cfr_policy.cfr_plus_average_policy(game, 1000)
  assert cfr_policy.cfr_plus_average_policy(
      pyspiel.load_game("kuhn_poker"), 1000) is first
  assert cfr_policy.cfr_plus_average_policy(game, 10) is not first


class _TablePolicy(policy_lib.Policy):
  """A Python policy reading a cfr_plus_average_policy table."""

  def __init__(self, game, table):
    super().__init__(game, list(range(game.num_players())))
    self._table = table

  def action_probabilities(self, state, player_id=None):
    return dict(self._table[state.information_state_string()])


def test_cfr_policy_is_near_nash_and_scores_its_expected_value():
  game = pyspiel.load_game("kuhn_poker")
  cfr = _TablePolicy(game, cfr_policy.cfr_plus_average_policy(game, 1000))
  assert exploitability.exploitability(game, cfr) < 0.01
  uniform = policy_lib.UniformRandomPolicy(game)
  num_games = 400
  for seat in range(2):
    policies = [uniform, uniform]
    policies[seat] = cfr
    exact = expected_game_score.policy_value(game.new_initial_state(),
                                             policies)[seat]
    returns = []
    for seed in range(num_games):
      bots = [None, None]
      bots[seat] = pyspiel.load_bot("cfr_policy", game, seat, {"seed": seed})
      bots[1 - seat] = pyspiel.load_bot("uniform_random", game, 1 - seat,
                                        {"seed": seed + 10_000})
      returns.append(pyspiel.evaluate_bots(game.new_initial_state(), bots,
                                           seed)[seat])
    mean = float(np.mean(returns))
    stderr = float(np.std(returns)) / math.sqrt(num_games)
    assert abs(mean - exact) < 4 * stderr, (seat, mean, exact, stderr)
  # Nash in Kuhn poker gains against uniform random play.
  assert expected_game_score.policy_value(
      game.new_initial_state(), [cfr, uniform])[0] > 0


# --- Errors -------------------------------------------------------------------


@pytest.mark.parametrize("name,game_string,params,match", [
    ("mcts", "tic_tac_toe", {"sims": 3},
     r"mcts: unknown parameter\(s\) 'sims'; supported: backend, rollouts, "
     r"seed, simulations, solve, time_limit, uct_c"),
    ("mcts", "tic_tac_toe", {"simulations": "many"},
     r"mcts: parameter 'simulations' must be of type int.*supported"),
    ("mcts", "tic_tac_toe", {"simulations": 0}, r"mcts: simulations must be"),
    ("mcts", "tic_tac_toe", {"seed": -1}, r"mcts: seed must be in"),
    ("mcts", "kuhn_poker", {},
     r"mcts plays perfect-information.*kuhn_poker\(\) is not a perfect-"
     r"information game \(use ismcts or cfr_policy\)"),
    ("mcts", "tic_tac_toe", {"time_limit": -0.5},
     r"^mcts: time_limit must be >= 0.0, got -0.5$"),
    ("mcts", "tic_tac_toe", {"time_limit": float("inf")},
     r"^mcts: time_limit must be finite"),
    ("mcts", "kuhn_poker", {"time_limit": 1.0},
     r"mcts plays perfect-information.*kuhn_poker"),
    ("ismcts", "kuhn_poker", {"max_worlds": 3},
     r"ismcts: unknown parameter\(s\) 'max_worlds'; supported: "
     r"allow_inconsistent_action_sets, backend, child_selection, "
     r"final_policy, max_world_samples"),
    ("ismcts", "kuhn_poker", {"final_policy": "best"},
     r"ismcts: unknown final_policy 'best'; supported: 'max_visit_count'"),
    ("ismcts", "kuhn_poker", {"child_selection": "greedy"},
     r"ismcts: unknown child_selection 'greedy'"),
    ("ismcts", "kuhn_poker", {"child_selection": "puct", "backend": "cpp"},
     r"C\+\+ ISMCTS has no PUCT"),
    ("ismcts", "kuhn_poker", {"max_world_samples": 0},
     r"ismcts: max_world_samples must be -1"),
    ("ismcts", "kuhn_poker", {"time_limit": -1.0},
     r"ismcts: time_limit must be >= 0"),
    ("ismcts", "kuhn_poker", {"time_limit": float("inf")},
     r"^ismcts: time_limit must be finite"),
    ("ismcts", "kuhn_poker", {"simulations": -2},
     r"^ismcts: simulations must be >= 1 \(a count; with time_limit, a cap\) "
     r"or -1 \(auto: 1000 without time_limit, time alone with it\), got -2$"),
    ("ismcts", "kuhn_poker", {"simulations": 0},
     r"^ismcts: simulations must be >= 1 .*, got 0$"),
    ("ismcts", "kuhn_poker", {"time_limit": 1.0, "backend": "cpp"},
     r"C\+\+ ISMCTS has no time limit; use backend=python"),
    ("ismcts", "tic_tac_toe", {}, r"ismcts plays imperfect-information.*use "
     r"mcts"),
    ("ismcts", "liars_dice", {"backend": "cpp"},
     r"do not implement resample_from_infostate.*backend=python"),
    ("cfr_policy", "kuhn_poker", {"iterations": 0},
     r"cfr_policy: iterations must be >= 1"),
    ("cfr_policy", "kuhn_poker", {"iters": 5},
     r"cfr_policy: unknown parameter\(s\) 'iters'; supported: iterations, "
     r"seed"),
    ("cfr_policy", "liars_dice", {}, r"cfr_policy cannot play liars_dice\(\)"
     r".*more than 100000 histories"),
    ("cfr_policy", "goofspiel(num_cards=3)", {}, r"sequential moves"),
])
def test_bad_params_and_games_give_clear_errors(name, game_string, params,
                                                match):
  game = pyspiel.load_game(game_string)
  with pytest.raises(ValueError, match=match):
    pyspiel.load_bot(name, game, 0, params)


def test_bad_params_in_the_string_form():
  game = pyspiel.load_game("tic_tac_toe")
  with pytest.raises(ValueError, match=r"mcts: unknown parameter\(s\) 'sims'"):
    pyspiel.load_bot("mcts(sims=3)", game, 0)


def test_bad_player():
  game = pyspiel.load_game("kuhn_poker")
  with pytest.raises(ValueError, match=r"cfr_policy: player must be in"):
    pyspiel.load_bot("cfr_policy", game, 2, {})
  with pytest.raises(ValueError, match=r"ismcts: player must be in"):
    pyspiel.load_bot("ismcts", game, -1, {})


def test_ismcts_samples_worlds_from_public_states_where_the_game_cannot():
  """phantom_ttt's states do not implement resample_from_infostate: ismcts
  plays it with worlds drawn from the player's infostate in its public
  state, each one consistent with what the player saw."""
  game = pyspiel.load_game("phantom_ttt")
  bot = pyspiel.load_bot("ismcts(simulations=50,seed=1)", game, 1)
  state = game.new_initial_state()
  state.apply_action(4)
  resampler = bot._resampler_cb  # pylint: disable=protected-access
  seen = set()
  for _ in range(40):
    world = resampler(state, 1)
    assert (world.information_state_string(1) ==
            state.information_state_string(1))
    seen.add(tuple(world.history()))
  assert len(seen) == 9  # player 0's first move is any of the 9 cells
  action = bot.step(state)
  assert action in state.legal_actions()


def test_ismcts_worlds_from_sampled_public_states_do_not_favour_the_truth():
  """Four moves into phantom_ttt the public state is sampled (3,024
  histories); player 0's infostate holds the 42 orders of player 1's two
  unseen stones. The worlds cover all of them, the true one about as often
  as any (a sample in proportion to chance reach alone drew the true world
  54% of the time, from 2 worlds)."""
  game = pyspiel.load_game("phantom_ttt")
  bot = pyspiel.load_bot("ismcts(simulations=50,seed=1)", game, 0)
  state = game.new_initial_state()
  for a in (4, 0, 8, 2):
    state.apply_action(a)
  resampler = bot._resampler_cb  # pylint: disable=protected-access
  worlds = [tuple(resampler(state, 0).history()) for _ in range(400)]
  assert len(set(worlds)) == 42
  assert worlds.count(tuple(state.history())) / len(worlds) < 0.06
