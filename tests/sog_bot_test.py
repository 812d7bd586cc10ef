"""Tests for the "sog" bot through OpenSpiel's bot registry, and for
examples/exploitability.py.

Searches are kept tiny (a few simulations) so that the file runs in well under
a minute and a half on two cores: these tests check the bot's contract with
OpenSpiel (evaluate_bots, policies, errors, determinism), not its strength.
"""

import gc
import json
import math
import os
import subprocess
import sys
import time
import weakref

import numpy as np
from open_spiel.python.algorithms import evaluate_bots as py_evaluate_bots
from open_spiel.python.algorithms import minimax
import open_spiel.python.games  # python_liars_poker  # pylint: disable=unused-import
import pyspiel
import pytest

import open_spiel_sog  # registers "sog"  # pylint: disable=unused-import
from open_spiel_sog.bots import sog
from open_spiel_sog.public_state import expansions

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Game string -> cheap bot parameters for it.
GAMES = {
    "kuhn_poker": {"simulations": 10, "value_function": "exact"},
    "leduc_poker": {"simulations": 10, "value_function": "rollout"},
    "liars_dice(numdice=1,dice_sides=4)": {"simulations": 10,
                                          "value_function": "rollout"},
    # Simultaneous: the bot is handed the simultaneous-move states directly.
    "goofspiel(num_cards=4,imp_info=True)": {"simulations": 10,
                                             "value_function": "rollout"},
    "tic_tac_toe": {"simulations": 10, "value_function": "rollout"},
}


def _sog_bots(game, params, seed=0):
  return [pyspiel.load_bot("sog", game, p, dict(params, seed=seed + p))
          for p in range(2)]


def _assert_valid_outcome(game, state, returns):
  assert state.is_terminal()
  assert len(returns) == 2
  assert list(returns) == pytest.approx(state.returns())
  assert sum(returns) == pytest.approx(0.0)
  for r in returns:
    assert game.min_utility() - 1e-9 <= r <= game.max_utility() + 1e-9


# --- a. Whole games with OpenSpiel's evaluate_bots ---------------------------


@pytest.mark.parametrize("game_string", list(GAMES))
def test_plays_whole_games_with_cpp_evaluate_bots(game_string):
  game = pyspiel.load_game(game_string)
  bots = _sog_bots(game, GAMES[game_string])
  for seed in range(2):  # the same bots, restarted, play a second game
    state = game.new_initial_state()
    returns = pyspiel.evaluate_bots(state, bots, seed)
    _assert_valid_outcome(game, state, returns)


@pytest.mark.parametrize("game_string", list(GAMES))
def test_plays_whole_games_with_python_evaluate_bots(game_string):
  game = pyspiel.load_game(game_string)
  bots = _sog_bots(game, GAMES[game_string], seed=10)
  rng = np.random.RandomState(0)
  for _ in range(2):
    state = game.new_initial_state()
    returns = py_evaluate_bots.evaluate_bots(state, bots, rng)
    _assert_valid_outcome(game, state, returns)


@pytest.mark.parametrize("game_string", list(GAMES))
def test_plays_against_openspiel_uniform_random(game_string):
  game = pyspiel.load_game(game_string)
  params = GAMES[game_string]
  for sog_seat in range(2):
    bots = [pyspiel.load_bot("uniform_random", game, p, {"seed": p})
            for p in range(2)]
    bots[sog_seat] = pyspiel.load_bot("sog", game, sog_seat, params)
    state = game.new_initial_state()
    if sog_seat == 0:
      returns = pyspiel.evaluate_bots(state, bots, 3)
    else:
      returns = py_evaluate_bots.evaluate_bots(state, bots,
                                               np.random.RandomState(3))
    _assert_valid_outcome(game, state, returns)


def test_plays_default_goofspiel_with_exact_value_function():
  # Perfect recall holds at every decision of this game; its terminal
  # infostate strings drop the bids, which the observer makes up for.
  game = pyspiel.load_game("goofspiel(num_cards=3)")
  bots = _sog_bots(game, {"simulations": 5, "value_function": "exact"})
  state = game.new_initial_state()
  returns = pyspiel.evaluate_bots(state, bots, 0)
  _assert_valid_outcome(game, state, returns)


def test_plays_from_a_mid_game_state():
  # evaluate_bots calls restart_at(state) on a state with history.
  game = pyspiel.load_game("leduc_poker")
  bots = _sog_bots(game, GAMES["leduc_poker"])
  state = game.new_initial_state()
  for action in (0, 3, 1, 2):  # deal J, Q; call; raise
    state.apply_action(action)
  returns = py_evaluate_bots.evaluate_bots(state, bots,
                                           np.random.RandomState(0))
  _assert_valid_outcome(game, state, returns)


# --- b. step_with_policy -----------------------------------------------------


def _assert_policy(state, player, policy, action):
  legal = (state.legal_actions(player) if state.is_simultaneous_node()
           else state.legal_actions())
  actions = [a for a, _ in policy]
  assert sorted(actions) == sorted(legal)
  assert len(set(actions)) == len(actions)
  probs = np.array([p for _, p in policy])
  assert np.all(probs >= 0) and np.all(np.isfinite(probs))
  assert probs.sum() == pytest.approx(1.0)
  assert action in legal


def _states_with_decisions(game_string):
  """A few (state, player) decisions of `game_string`, along a fixed line."""
  game = pyspiel.load_game(game_string)
  state = game.new_initial_state()
  rng = np.random.RandomState(1)
  found = []
  while not state.is_terminal() and len(found) < 4:
    if state.is_chance_node():
      outcomes, probs = zip(*state.chance_outcomes())
      state.apply_action(int(rng.choice(outcomes, p=probs)))
    elif state.is_simultaneous_node():
      found.extend((state.clone(), p) for p in range(2))
      state.apply_actions([int(rng.choice(state.legal_actions(p)))
                           for p in range(2)])
    else:
      found.append((state.clone(), state.current_player()))
      state.apply_action(int(rng.choice(state.legal_actions())))
  return game, found


@pytest.mark.parametrize("game_string", list(GAMES))
def test_step_with_policy_is_a_distribution_over_legal_actions(game_string):
  game, decisions = _states_with_decisions(game_string)
  assert decisions
  for state, player in decisions:
    bot = pyspiel.load_bot("sog", game, player,
                           dict(GAMES[game_string], simulations=5))
    assert bot.provides_policy()
    policy, action = bot.step_with_policy(state)
    _assert_policy(state, player, policy, action)
    assert bot.step(state) in (state.legal_actions(player)
                               if state.is_simultaneous_node()
                               else state.legal_actions())


def test_step_at_the_wrong_state_is_an_error():
  game = pyspiel.load_game("kuhn_poker")
  bot = pyspiel.load_bot("sog", game, 1, {"simulations": 5})
  dealt = game.new_initial_state().child(0).child(1)  # player 0 to act
  with pytest.raises(ValueError, match="player 0 acts"):
    bot.step(dealt)
  with pytest.raises(ValueError, match="terminal"):
    bot.step(dealt.child(0).child(0))


# --- c. Errors ---------------------------------------------------------------


def test_unknown_parameter_is_rejected():
  game = pyspiel.load_game("kuhn_poker")
  with pytest.raises(ValueError, match=r"simulatoins.*supported:.*simulations"):
    pyspiel.load_bot("sog", game, 0, {"simulatoins": 10})
  with pytest.raises(ValueError, match=r"bogus.*supported"):
    pyspiel.load_bot("sog(bogus=1)", game, 0)


def test_wrong_parameter_type_is_rejected():
  game = pyspiel.load_game("kuhn_poker")
  with pytest.raises(ValueError, match="simulations.*'many'"):
    pyspiel.load_bot("sog", game, 0, {"simulations": "many"})
  with pytest.raises(ValueError, match="simulations.*'many'"):
    pyspiel.load_bot("sog(simulations=many)", game, 0)
  with pytest.raises(ValueError, match="alternating"):
    pyspiel.load_bot("sog", game, 0, {"alternating": "maybe"})


def test_bad_parameter_values_are_rejected():
  game = pyspiel.load_game("kuhn_poker")
  with pytest.raises(ValueError, match=r"value_function 'magic'.*'exact'"):
    pyspiel.load_bot("sog", game, 0, {"value_function": "magic"})
  for alpha in (-0.1, 1.5):
    with pytest.raises(ValueError, match=r"alpha must be in \[0, 1\]"):
      pyspiel.load_bot("sog", game, 0, {"alpha": alpha})
  with pytest.raises(ValueError, match=r"^sog: simulations must be >= 0 "
                     r"\(a count; with time_limit, a cap\) or -1 \(auto: 100 "
                     r"without time_limit, time alone with it\), got -2$"):
    pyspiel.load_bot("sog", game, 0, {"simulations": -2})
  for limit in (-1.0, math.inf):
    with pytest.raises(ValueError, match="time_limit must be a number of "
                       "seconds >= 0"):
      pyspiel.load_bot("sog", game, 0, {"time_limit": limit})
  for power in (-1.0, math.inf):
    with pytest.raises(ValueError, match="averaging_power must be a number "
                       ">= 0"):
      pyspiel.load_bot("sog", game, 0, {"averaging_power": power})
  for threshold in (-0.1, 1.0):
    with pytest.raises(ValueError, match=r"policy_threshold must be in "
                       r"\[0, 1\)"):
      pyspiel.load_bot("sog", game, 0, {"policy_threshold": threshold})
  with pytest.raises(ValueError, match="walks_per_simulation must be >= 1"):
    pyspiel.load_bot("sog", game, 0, {"walks_per_simulation": 0})


@pytest.mark.parametrize("game_string,limit", [
    ("leduc_poker", 0.4),  # first decision: the root search and its set-up
    ("breakthrough(rows=5,columns=5)", 0.4),  # perfect information, no strings
    ("goofspiel(num_cards=4,imp_info=True)", 0.4),  # simultaneous: 2 searches
    ("go", 1.0),  # 19x19: 361 children, 5 s of rollouts at 8 per history
    # A hive rollout takes 10-16 ms (282 children at move 60): rollouts are
    # cut short.
    ("hive", 1.0),
    # The game's Python observer takes 2 ms a string and deals 20 chance
    # nodes first (was 140 s): sampled public states shrink to fit.
    ("python_liars_poker", 1.0),
    # Perfect information with chance nodes of 7,776 rolls: expansions that
    # would not fit are skipped.
    ("yacht", 1.0),
])
@pytest.mark.alone
def test_time_limit_is_honoured_and_used(game_string, limit):
  """With a simulation cap out of reach, each decision stops by time: no
  later than the limit plus 20% (and a little for a loaded machine), and
  not much earlier either (the budget is used)."""
  # The suite's heap (what 700 tests left: jax's caches above all) is set
  # aside, so the bots meet the heap of a process that plays one game: a
  # full collection of the suite's heap took 0.2-0.7 s, more than a quarter
  # of these limits (test_timed_searches_leave_a_large_heap_to_python
  # covers that case).
  gc.collect()
  gc.freeze()
  try:
    took = _timed_decisions(game_string, limit)
  finally:
    gc.unfreeze()
  assert len(took) >= 2
  assert max(took) <= 1.2 * limit + 0.1, took
  assert np.median(took) >= 0.5 * limit, took


def _timed_decisions(game_string: str, limit: float) -> list[float]:
  """Seconds per decision of the first (up to) 4 of a game between two
  rollout SoG bots at `time_limit=limit`."""
  game = pyspiel.load_game(game_string)
  # (A cap of 5,000 was reached in yacht, whose simulations mostly end at
  # an expansion too slow to make: 5,000 of them took 0.6 s.)
  bots = _sog_bots(game, {"simulations": 1_000_000, "time_limit": limit,
                          "value_function": "rollout"})
  state = game.new_initial_state()
  rng = np.random.default_rng(0)
  took = []
  while not state.is_terminal() and len(took) < 4:
    if state.is_chance_node():
      actions, probs = zip(*state.chance_outcomes())
      state.apply_action(int(rng.choice(actions, p=probs)))
    elif state.is_simultaneous_node():
      start = time.monotonic()
      actions = [bot.step(state) for bot in bots]
      took.append((time.monotonic() - start) / 2)
      state.apply_actions(actions)
    else:
      player = state.current_player()
      start = time.monotonic()
      action = bots[player].step(state)
      took.append(time.monotonic() - start)
      for bot in bots:  # as evaluate_bots does (the opponent searches here)
        bot.inform_action(state, player, action)
      state.apply_action(action)
  return took


class _Cycle:
  pass


def _cyclic_garbage() -> weakref.ref:
  """A weak reference to one of two objects that refer to each other (and
  to nothing else): only a collection frees them."""
  a, b = _Cycle(), _Cycle()
  a.other, b.other = b, a
  return weakref.ref(a)


def _kuhn_after_the_deal():
  game = pyspiel.load_game("kuhn_poker")
  state = game.new_initial_state()
  state.apply_action(0)
  state.apply_action(1)
  return game, state


def test_timed_searches_collect_cyclic_garbage_first():
  """A time-limited decision frees the cyclic garbage made before it (so
  the automatic collector never frees a pile of it inside a later search:
  gin_rummy's decisions took 2.4 s at time_limit=1); an untimed one leaves
  it to Python; a collector the user turned off stays off."""
  game, state = _kuhn_after_the_deal()
  garbage = _cyclic_garbage
  thresholds = gc.get_threshold()
  gc.set_threshold(10**9)  # no automatic collection in between
  try:
    for limit, freed in ((0, False), (5, True)):
      bot = pyspiel.load_bot("sog", game, 0, {
          "simulations": 3, "time_limit": limit, "value_function": "rollout"})
      ref = garbage()
      bot.step(state)
      assert (ref() is None) == freed, limit
    gc.disable()
    ref = garbage()
    bot.step(state)
    assert ref() is not None and not gc.isenabled()
  finally:
    gc.enable()
    gc.set_threshold(*thresholds)


def test_anchored_searches_collect_young_garbage_only():
  """The anchored subgame's tree, in C++ or in the Python engine's arrays,
  leaves no cyclic garbage, so a time-limited decision there collects only
  Python's young generations (a full walk of a network-holding heap is
  70-150 ms of a 0.5 s move): cyclic garbage made since the last
  collection is freed, garbage already in the old generation is left to
  the automatic collector; the public-state path's decision frees both."""
  phantom = pyspiel.load_game("phantom_ttt")
  kuhn, after_deal = _kuhn_after_the_deal()
  engines = ["python"] + (["native"] if sog.engine_lib.native_reason(phantom)
                          is None else [])
  cases = [(phantom, phantom.new_initial_state(), "anchored", engine)
           for engine in engines]
  cases.append((kuhn, after_deal, "public_state", "python"))
  thresholds = gc.get_threshold()
  gc.set_threshold(10**9)  # no automatic collection in between
  try:
    for game, state, subgame, engine in cases:
      bot = pyspiel.load_bot("sog", game, state.current_player(), {
          "subgame": subgame, "engine": engine, "simulations": 20,
          "time_limit": 5, "value_function": "rollout"})
      full = subgame == "public_state"
      assert bot._garbage.full == full
      a, b = _Cycle(), _Cycle()
      a.other, b.other = b, a
      gc.collect()  # (the pair, still referenced, moves to the old generation)
      old = weakref.ref(a)
      del a, b
      young = _cyclic_garbage()
      bot.step(state)
      assert young() is None, (subgame, engine)
      assert (old() is None) == full, (subgame, engine)
  finally:
    gc.set_threshold(*thresholds)
    gc.collect()


def test_the_python_anchored_tree_leaves_no_cyclic_garbage():
  """Why the anchored subgame skips full collections on the Python engine
  too: over a phantom_ttt game's first moves, kept trees pruned as play
  goes on, nothing the bots leave needs the cycle collector."""
  game = pyspiel.load_game("phantom_ttt")
  bots = [pyspiel.load_bot("sog", game, p, {
      "subgame": "anchored", "engine": "python", "simulations": 30,
      "value_function": "rollout", "seed": p}) for p in (0, 1)]
  state = game.new_initial_state()
  gc.collect()
  gc.disable()
  try:
    for _ in range(6):
      if state.is_terminal():
        break
      player = state.current_player()
      action = bots[player].step(state)
      bots[1 - player].inform_action(state, player, action)
      state.apply_action(action)
      assert gc.collect() == 0
  finally:
    gc.enable()


def test_timed_searches_pause_full_collections_only():
  """While a time-limited decision searches, Python's automatic full
  collections wait (in goofspiel's heap one of 0.35 s fell inside a search:
  a decision of 1.32 s at time_limit=1) and its young collections go on;
  the thresholds are restored after; an untimed decision changes nothing."""
  game, state = _kuhn_after_the_deal()
  thresholds = gc.get_threshold()
  young = []
  inside = [False]

  def hook(phase, info):
    if phase == "start" and inside[0]:
      young.append(info["generation"])

  gc.set_threshold(50, 10, 10)
  gc.callbacks.append(hook)
  try:
    for limit in (0, 5):
      bot = sog.SoGBot(game, 0, {"simulations": 30, "time_limit": limit,
                                 "value_function": "rollout"})
      search, seen = bot._search, []  # pylint: disable=protected-access

      def watched(*args, search=search, seen=seen, **kwargs):
        seen.append(gc.get_threshold())
        inside[0] = True
        try:
          return search(*args, **kwargs)
        finally:
          inside[0] = False

      bot._search = watched  # pylint: disable=protected-access
      del young[:]
      bot.step(state)
      assert seen and gc.get_threshold() == (50, 10, 10)
      if limit:
        assert all(t[:2] == (50, 10) and t[2] >= 2**30 for t in seen)
        assert 0 in young and 2 not in young
      else:
        assert all(t == (50, 10, 10) for t in seen)
  finally:
    gc.callbacks.remove(hook)
    gc.set_threshold(*thresholds)


def test_timed_searches_leave_a_large_heap_to_python(capsys):
  """Where a full collection takes more than a quarter of the limit (a
  heap of 2 million containers here), the bot stops collecting before its
  searches, says so, and leaves the garbage to Python's collector."""
  game, state = _kuhn_after_the_deal()
  heap = [[i] for i in range(2_000_000)]
  thresholds = gc.get_threshold()
  gc.set_threshold(10**9)
  try:
    start = time.monotonic()
    gc.collect()
    assert time.monotonic() - start > 0.25 * 0.02  # the case under test
    bot = pyspiel.load_bot("sog", game, 0, {
        "simulations": 3, "time_limit": 0.02, "value_function": "rollout"})
    assert "leaving collection to Python's collector" in capsys.readouterr().err
    ref = _cyclic_garbage()
    bot.step(state)
    assert ref() is not None
    gc.collect()
    assert ref() is None
  finally:
    gc.set_threshold(*thresholds)
    del heap


def test_simulations_cap_a_timed_search():
  game = pyspiel.load_game("leduc_poker")
  bot = pyspiel.load_bot("sog", game, 0, {
      "simulations": 2, "time_limit": 30, "value_function": "rollout"})
  state = game.new_initial_state()
  state.apply_action(0)
  state.apply_action(1)
  start = time.monotonic()
  bot.step(state)
  assert time.monotonic() - start < 5
  assert bot.resolver.last_result.updates <= 3


def test_simulations_default_to_100_untimed_and_to_time_alone_timed():
  """simulations=-1 (the default): 100 without a time limit, as before, on
  both paths; under one, no cap (time alone); given, a cap either way."""
  game = pyspiel.load_game("leduc_poker")
  for params, count in (({}, 100), ({"simulations": 7}, 7),
                        ({"time_limit": 1.0}, 10**9),
                        ({"time_limit": 1.0, "simulations": 7}, 7),
                        ({"time_limit": 1.0, "simulations": 0}, 0)):
    config = sog.SoGConfig.from_params(params)
    assert config.search_simulations == count, params
    assert sog.resolve_config(config, game).search.simulations == count
    assert sog.anchored_config(config).simulations == count
  bot = pyspiel.load_bot("sog", game, 0, {"value_function": "rollout"})
  state = game.new_initial_state()
  state.apply_action(0)
  state.apply_action(1)
  bot.step(state)
  assert bot.resolver.last_result.updates == 101  # 100 phases, a last update


def _timed_phantom_ttt_opening(clock: list[float] | None = None):
  """(bot, seconds) of a 0.5 s public-state sog bot's first step in
  phantom_ttt; `clock` gets the step's start."""
  game = pyspiel.load_game("phantom_ttt")
  bot = pyspiel.load_bot("sog", game, 0, {"time_limit": 0.5,
                                          "subgame": "public_state"})
  state = game.new_initial_state()
  start = time.monotonic()
  if clock is not None:
    clock.append(start)
  bot.step(state)
  return bot, time.monotonic() - start


@pytest.mark.alone
def test_time_limit_alone_uses_the_time():
  """Given time_limit and not simulations, a public-state search runs by
  time alone: past the 100 simulations of an untimed search (phantom_ttt
  fits about 800 in a second), stopping by the limit."""
  bot, took = _timed_phantom_ttt_opening()
  assert bot.resolver.last_result.updates > 101
  assert 0.35 <= took <= 1.2 * 0.5 + 0.1, took


@pytest.mark.alone
def test_one_slow_phase_does_not_stop_the_search(monkeypatch):
  """A phase the process loses its core in (a 0.2 s sleep in the first
  expansions past 0.2 s of a 0.5 s search here) does not stop the search
  early: the next phase is estimated by the median of the latest three,
  not by the stalled one (which would reserve 0.2 s and stop at 0.4 s)."""
  from open_spiel_sog.algorithms.sog import gt_cfr  # pylint: disable=g-import-not-at-top
  expand = gt_cfr.GTCFR.run_expansions
  clock = []
  stalls = []

  def stalled(self, count):
    if clock and not stalls and time.monotonic() - clock[0] > 0.2:
      stalls.append(time.monotonic() - clock[0])
      time.sleep(0.2)
    return expand(self, count)

  monkeypatch.setattr(gt_cfr.GTCFR, "run_expansions", stalled)
  _, took = _timed_phantom_ttt_opening(clock)
  assert stalls and stalls[0] < 0.3, stalls
  assert 0.45 <= took <= 1.2 * 0.5 + 0.1, took


@pytest.mark.alone
def test_time_limit_alone_in_a_game_searched_to_the_end():
  """In Kuhn poker the search tree is complete within milliseconds; under
  time alone the search goes on updating until the limit, then stops."""
  game, state = _kuhn_after_the_deal()
  bot = pyspiel.load_bot("sog", game, 0, {"time_limit": 0.3,
                                          "value_function": "exact"})
  start = time.monotonic()
  policy, action = bot.step_with_policy(state)
  took = time.monotonic() - start
  assert action in state.legal_actions()
  assert sum(p for _, p in policy) == pytest.approx(1.0)
  assert bot.resolver.last_result.updates > 101
  assert 0.2 <= took <= 1.2 * 0.3 + 0.1, took


@pytest.mark.parametrize("subgame", ["public_state", "anchored"])
def test_given_simulations_cap_a_timed_search_on_both_paths(subgame):
  game = pyspiel.load_game("phantom_ttt")
  # (Rollouts: the cap, not loading phantom_ttt's shipped network, is
  # what this times.)
  bot = pyspiel.load_bot("sog", game, 0, {
      "simulations": 10, "time_limit": 5, "subgame": subgame,
      "value_function": "rollout"})
  start = time.monotonic()
  bot.step(game.new_initial_state())
  assert time.monotonic() - start < 2.5
  if subgame == "anchored":
    assert bot.anchored.last_result.simulations == 10
  else:
    assert bot.resolver.last_result.updates == 11


@pytest.mark.parametrize("game_string,message", [
    ("kuhn_poker(players=3)", "two-player"),
    ("matching_pennies_3p", "two-player"),  # simultaneous, 3 players
    ("matrix_pd", "zero-sum"),  # simultaneous, general-sum
    ("sheriff", "zero-sum"),  # sequential, general-sum
])
def test_unsupported_games_are_rejected(game_string, message):
  game = pyspiel.load_game(game_string)
  with pytest.raises(ValueError, match=message):
    pyspiel.load_bot("sog", game, 0, {})
  assert "sog" not in pyspiel.bots_that_can_play_game(game, 0)


def test_supported_games_are_listed():
  for game_string in GAMES:
    game = pyspiel.load_game(game_string)
    assert "sog" in pyspiel.bots_that_can_play_game(game), game_string


# --- d. Determinism ----------------------------------------------------------


@pytest.mark.parametrize("value_function", ["rollout", "exact"])
def test_same_seed_same_policy(value_function):
  game = pyspiel.load_game("kuhn_poker")
  state = game.new_initial_state().child(0).child(2)  # first decision
  params = {"simulations": 10, "value_function": value_function, "seed": 7}
  first = pyspiel.load_bot("sog", game, 0, params).step_with_policy(state)
  second = pyspiel.load_bot("sog", game, 0, params).step_with_policy(state)
  assert first == second
  # Also when a bot with the seed is created from a string.
  third = pyspiel.load_bot(
      f"sog(simulations=10,value_function={value_function},seed=7)", game,
      0).step_with_policy(state)
  assert third == first


def test_averaging_power_reaches_the_search():
  """The default averages linearly; other powers average the same
  updates differently (the search itself does not change: same seed, same
  tree)."""
  game = pyspiel.load_game("kuhn_poker")
  state = game.new_initial_state().child(0).child(2)  # first decision
  params = {"simulations": 30, "value_function": "rollout", "seed": 7}
  policies = {
      power: dict(pyspiel.load_bot("sog", game, 0, dict(
          params, averaging_power=power)).get_policy(state))
      for power in (0, 1, 2)
  }
  default = dict(pyspiel.load_bot("sog", game, 0, params).get_policy(state))
  assert default == policies[1]
  for a, b in [(0, 1), (1, 2), (0, 2)]:
    assert policies[a] != pytest.approx(policies[b], abs=1e-6), policies


def test_policy_threshold_drops_the_tail_of_the_searched_policy():
  """With policy_threshold, the bot plays the searched policy (the same
  search: same seed) without the actions below the threshold, renormalised;
  a threshold above every probability keeps the most probable action."""
  game = pyspiel.load_game("leduc_poker")
  state = game.new_initial_state().child(0).child(3)  # first decision
  params = {"simulations": 10, "value_function": "rollout", "seed": 3}
  searched = dict(pyspiel.load_bot("sog", game, 0, params).get_policy(state))
  probs = sorted(searched.values())
  assert probs[0] > 0.0 and len(set(probs)) == len(probs), searched
  threshold = (probs[0] + probs[1]) / 2  # drops the least probable action
  bot = pyspiel.load_bot("sog", game, 0, dict(params,
                                               policy_threshold=threshold))
  played, _ = bot.step_with_policy(state)
  dropped = min(searched, key=searched.get)
  kept_total = 1.0 - searched[dropped]
  for action, p in played:
    expected = 0.0 if action == dropped else searched[action] / kept_total
    assert p == pytest.approx(expected), (action, played, searched)
  assert dict(bot.get_policy(state)) == pytest.approx(dict(played))
  for seed in range(20):
    bot = pyspiel.load_bot("sog", game, 0, dict(
        params, policy_threshold=threshold))
    bot._rng = np.random.default_rng(seed)  # pylint: disable=protected-access
    assert bot.step(state) != dropped
  top = pyspiel.load_bot("sog", game, 0, dict(params, policy_threshold=0.99))
  best = max(searched, key=searched.get)
  assert dict(top.get_policy(state)) == {
      a: float(a == best) for a in searched}


@pytest.mark.parametrize("game_string", [
    "connect_four", "breakthrough(rows=6,columns=6)"])
def test_perfect_information_games_play_the_top_move(game_string):
  """purify (the default) plays the searched policy's argmax, the lowest of
  equals; purify=false draws from the searched policy; imperfect-
  information games on the public-state path keep drawing from it."""
  game = pyspiel.load_game(game_string)
  state = game.new_initial_state()
  for _ in range(2):
    bot = pyspiel.load_bot("sog", game, state.current_player(),
                           {"simulations": 30})
    played, action = bot.step_with_policy(state)
    searched = bot.last_decision().policy
    best = max(searched.values())
    assert action == min(a for a, p in searched.items() if p == best)
    assert dict(played) == {a: float(a == action) for a in searched}
    assert sum(p > 0 for p in searched.values()) > 1, searched
    state.apply_action(action)
  sampled = pyspiel.load_bot("sog", game, state.current_player(),
                             {"simulations": 30, "purify": False})
  played, _ = sampled.step_with_policy(state)
  assert dict(played) == pytest.approx(sampled.last_decision().policy)
  leduc = pyspiel.load_game("leduc_poker")
  bot = pyspiel.load_bot("sog", leduc, 0, {"simulations": 10,
                                           "value_function": "rollout"})
  first = leduc.new_initial_state().child(0).child(3)
  played, _ = bot.step_with_policy(first)
  assert dict(played) == pytest.approx(bot.last_decision().policy)


# --- e. examples/exploitability.py ------------------------------------------


def _run_example(*flags):
  return subprocess.run(
      [sys.executable, os.path.join(ROOT, "examples", "exploitability.py"),
       *flags], capture_output=True, text=True, timeout=300, check=False)


def test_exploitability_example_prints_json_summary():
  result = _run_example("--game=kuhn_poker",
                        "--bot_params=simulations=20,value_function=exact",
                        "--seeds=0", "--json")
  assert result.returncode == 0, result.stderr
  summary = json.loads(result.stdout.strip().splitlines()[-1])
  for key in ("min", "mean", "max"):
    value = summary[key]
    assert isinstance(value, float) and math.isfinite(value), summary
    assert value >= 0.0, summary
  assert summary["min"] <= summary["mean"] <= summary["max"]
  assert summary["seeds"] == [0]
  assert "mbb/g" in result.stdout


def test_exploitability_example_accepts_empty_params():
  result = _run_example("--game=kuhn_poker", "--bot_params=", "--seeds=0,1",
                        "--noprogress", "--json")
  assert result.returncode == 0, result.stderr
  summary = json.loads(result.stdout.strip().splitlines()[-1])
  assert summary["params"] == {} and summary["seeds"] == [0, 1]
  assert len(summary["values"]) == 2
  assert all(math.isfinite(v) and v >= 0 for v in summary["values"])


def test_exploitability_example_scores_other_bots():
  result = _run_example("--game=kuhn_poker", "--bot=uniform_random",
                        "--seeds=0", "--noprogress", "--json")
  assert result.returncode == 0, result.stderr
  summary = json.loads(result.stdout.strip().splitlines()[-1])
  assert summary["bot"] == "uniform_random"
  assert summary["mean"] == pytest.approx(11 / 24)  # OpenSpiel's uniform


def test_exploitability_example_rejects_an_unknown_bot():
  result = _run_example("--game=kuhn_poker", "--bot=nosuchbot", "--seeds=0",
                        "--noprogress")
  assert result.returncode != 0
  assert "Unknown bot 'nosuchbot'" in result.stderr
  assert "Traceback" not in result.stderr


@pytest.mark.parametrize("bot_params,message", [
    ("simulations", "malformed"),
    ("simulations=10,=3", "malformed"),
    ("simulatoins=10", "simulatoins"),
    ("simulations=many", "simulations"),
])
def test_exploitability_example_rejects_bad_params_readably(bot_params,
                                                            message):
  result = _run_example("--game=kuhn_poker", f"--bot_params={bot_params}",
                        "--seeds=0", "--noprogress")
  assert result.returncode != 0
  assert message in result.stderr
  assert "Traceback" not in result.stderr


# --- Loading: a checkpoint is read once per process --------------------------


def _leduc_round_one_state(game):
  state = game.new_initial_state()
  state.apply_action(0)  # the private cards
  state.apply_action(3)
  return state


@pytest.mark.alone
def test_load_bot_reads_a_checkpoint_once_and_shares_no_search_state(
    monkeypatch, tmp_path):
  import shutil  # pylint: disable=g-import-not-at-top
  import time  # pylint: disable=g-import-not-at-top
  from open_spiel_sog.algorithms.sog import cvpn  # pylint: disable=g-import-not-at-top
  game = pyspiel.load_game("leduc_poker")
  path = str(tmp_path / "leduc.npz")
  shutil.copy(cvpn.shipped_checkpoint(game), path)
  reads = []
  real_read = cvpn.read_checkpoint
  monkeypatch.setattr(cvpn.checkpoints, "read_checkpoint",
                      lambda p: reads.append(p) or real_read(p))
  params = {"simulations": 5, "checkpoint": path}
  first = pyspiel.load_bot("sog", game, 0, params)
  assert len(reads) == 1
  seconds, bots = [], []
  for i in range(30):
    start = time.perf_counter()
    bots.append(pyspiel.load_bot("sog", game, i % 2, params))
    seconds.append(time.perf_counter() - start)
  assert len(reads) == 1, "the checkpoint was read again"
  assert max(seconds) < 0.1, seconds
  # One network, read-only; everything a search changes is per bot.
  assert all(b.value_fn.net is first.value_fn.net for b in bots)
  assert len({id(b.value_fn) for b in bots + [first]}) == 31
  assert len({id(b.resolver) for b in bots + [first]}) == 31
  with pytest.raises(ValueError, match="shared"):
    first.value_fn.net.set_params(first.value_fn.net.params)
  # Games played by other bots of the process change no later bot's play.
  state = _leduc_round_one_state(game)
  before = bots[0].step_with_policy(state)[0]
  pyspiel.evaluate_bots(game.new_initial_state(), [first, bots[1]], 3)
  after = pyspiel.load_bot("sog", game, 0, params).step_with_policy(state)[0]
  assert after == before
  # A new file at the same path is read again.
  shutil.copy(cvpn.shipped_checkpoint(game), path + ".new")
  os.replace(path + ".new", path)
  pyspiel.load_bot("sog", game, 0, params)
  assert len(reads) == 2


def _play_recording(game, bots, seed):
  """Plays one game as `evaluate_bots` does (restart, step, inform_action),
  recording each decision's policy and, after it, each bot's live public
  states; returns (policies, live counts per bot, the final state)."""
  rng = np.random.default_rng(seed)
  state = game.new_initial_state()
  for bot in bots:
    bot.restart()
  policies, live = [], []
  while not state.is_terminal():
    if state.is_chance_node():
      actions, probs = zip(*state.chance_outcomes())
      action = int(rng.choice(actions, p=probs))
    else:
      policy, action = bots[state.current_player()].step_with_policy(state)
      policies.append(policy)
      live.append([len(bot.observer.public_states) for bot in bots])
    for bot in bots:
      bot.inform_action(state, state.current_player(), action)
    state.apply_action(action)
  return policies, live, state


def _reachable(bot, state):
  """What pruning may keep: the path to `state`'s public state, the
  path's children, and the subtree of the latest search's root."""
  keep = bot.resolver.last_result.tree.root_ps
  allowed = set()
  stack = [keep]
  while stack:
    ps = stack.pop()
    allowed.add(ps.id)
    stack.extend(bot.observer._built_children(ps))  # pylint: disable=protected-access
  node = keep
  while node.parent is not None:
    node = node.parent
    allowed.add(node.id)
    allowed.update(c.id for c in bot.observer._built_children(node))  # pylint: disable=protected-access
  return allowed


@pytest.mark.parametrize("game_string,params", [
    ("leduc_poker", {"simulations": 30, "value_function": "rollout"}),
    # (The public-state path: the native engine keeps no public states.)
    ("breakthrough(rows=5,columns=5)", {"simulations": 30,
                                        "engine": "python"}),
    # Sampled public states, replaced when play leaves the sample.
    ("dark_hex(num_rows=3,num_cols=3)", {"simulations": 20, "max_histories": 8, "subgame": "public_state",
                                         "value_function": "rollout"}),
])
def test_pruning_bounds_memory_and_changes_no_decision(game_string, params):
  """Each bot drops the public states play can no longer reach: live ones
  are only the path, its children and the latest search tree, and they do
  not pile up over a game; decisions are exactly those of bots that keep
  everything; a second game starts from the root alone."""
  game = pyspiel.load_game(game_string)
  pruned = _sog_bots(game, params)
  policies, live, state = _play_recording(game, pruned, seed=1)
  kept = _sog_bots(game, params)
  for bot in kept:
    bot.observer.prune = lambda keep: []
  kept_policies, kept_live, kept_state = _play_recording(game, kept, seed=1)
  assert policies == kept_policies  # bit for bit
  assert state.history() == kept_state.history()
  assert len(policies) >= 4
  for bot in pruned:
    assert {ps.id for ps in bot.observer.public_states} <= _reachable(
        bot, state)
    # The value function keeps nothing for public states no search can
    # start at any more (the path above the floor): kriegspiel's growth-
    # root priors, megabytes each, piled up to gigabytes over a game.
    under, stack = set(), [bot.observer.search_floor()]
    while stack:
      ps = stack.pop()
      under.add(ps.id)
      stack.extend(bot.observer._built_children(ps))  # pylint: disable=protected-access
    cached = set(bot.value_fn._cache) | set(bot.value_fn._policies)  # pylint: disable=protected-access
    assert cached and cached <= under
    # Replaced samples (and what was built under them) are not held.
    assert not bot.observer._replaced  # pylint: disable=protected-access
  # Without pruning the observers hold every search's tree.
  assert sum(live[-1]) < 0.7 * sum(kept_live[-1]), (live, kept_live)
  # A new game: ids are not reused, and the root is all that is left.
  bot = pruned[0]
  last_id = max(ps.id for ps in bot.observer.public_states)
  bot.restart()
  assert [ps.id for ps in bot.observer.public_states] == [
      bot.observer.root().id]
  _, second_live, second = _play_recording(game, pruned, seed=2)
  assert second.is_terminal()
  assert min(ps.id for ps in bot.observer.public_states
             if ps.parent is not None) > last_id


@pytest.mark.parametrize("game_string,params", [
    # (The public-state path: the native engine keeps no public states.)
    ("breakthrough(rows=5,columns=5)", {"simulations": 30,
                                        "engine": "python"}),
    ("dark_hex(num_rows=3,num_cols=3)", {"simulations": 20, "max_histories": 8, "subgame": "public_state",
                                         "value_function": "rollout"}),
])
def test_dropped_and_path_states_are_freed_without_the_cyclic_collector(
    game_string, params):
  """The histories (pyspiel states) of dropped public states go as soon as
  the next search starts, and those of the pruned path above the search
  floor are not held, both without Python's cyclic collector (late in long
  games they were gigabytes of garbage between collections); reading a
  path public state's histories rebuilds the ones it held."""
  game = pyspiel.load_game(game_string)
  bots = _sog_bots(game, params)
  for bot in bots:
    bot.restart()
  rng = np.random.default_rng(3)
  state = game.new_initial_state()
  refs, path_histories = [], {}
  enabled = gc.isenabled()
  gc.disable()
  try:
    for move in range(8):
      if state.is_terminal():
        break
      action = bots[state.current_player()].step(state)
      for bot in bots:
        bot.inform_action(state, state.current_player(), action)
      if move == 1:  # every history the observers hold after two searches
        for bot in bots:
          for ps in bot.observer.public_states:
            refs.extend(weakref.ref(h) for h in ps.histories)
            path_histories[(id(bot), ps.id)] = [h.history()
                                                for h in ps.histories]
      state.apply_action(action)
    assert move >= 4
    # Held by design: the process-wide cache of exact expansions (bounded).
    held = {id(h) for entry in expansions.EXPANSIONS._entries.values()  # pylint: disable=protected-access
            for h in entry.children}
    for bot in bots:
      observer = bot.observer
      for ps in observer.public_states + observer._unreleased:  # pylint: disable=protected-access
        if isinstance(ps.histories, list):
          held.update(id(h) for h in ps.histories)
    alive = [r() for r in refs if r() is not None]
    assert refs and len(alive) < len(refs) / 2
    assert not [h for h in alive if id(h) not in held], (
        "states held by no live public state, waiting for the collector")
  finally:
    if enabled:
      gc.enable()
  for bot in bots:
    observer = bot.observer
    floor = observer.search_floor()
    node, checked = floor.parent, 0
    while node is not None:
      recorded = path_histories.get((id(bot), node.id))
      if recorded is not None:
        assert [h.history() for h in node.histories] == recorded
        checked += 1
      node = node.parent
    assert checked
  # A dropped public state's histories cannot be read by mistake.
  bot = bots[0]
  dropped = bot.observer.search_floor()
  bot.restart()
  with pytest.raises(RuntimeError, match="dropped"):
    dropped.histories[0]  # pylint: disable=pointless-statement


def test_pruning_a_perfect_information_tree_makes_no_infostate_strings():
  """Dropping a perfect-information search tree reads no infostate string
  (none was checked in, so none needs checking out): a late yacht search
  had made those of 10,000 dropped public states, 0.3 s after its
  deadline."""
  game = pyspiel.load_game("breakthrough(rows=5,columns=5)")
  bot = pyspiel.load_bot("sog", game, 0, {"simulations": 40, "seed": 0,
                                         "engine": "python"})
  state = game.new_initial_state()
  bot.step(state)
  observer = bot.observer
  made = []
  original = observer.infostate_string
  observer.infostate_string = lambda h, p: made.append(p) or original(h, p)
  state.apply_action(state.legal_actions()[0])
  state.apply_action(state.legal_actions()[0])
  bot.step(state)
  made.clear()
  state.apply_action(state.legal_actions()[0])
  state.apply_action(state.legal_actions()[0])
  ps, _ = observer.public_state_of(state)
  dropped = observer.prune(ps)
  assert len(dropped) > 20
  assert not made


def test_perfect_information_searches_start_at_the_state():
  """In a perfect-information game a search starts at its own state (no
  branch from the game's root, no gadget), its root value is the state's
  minimax value (OpenSpiel's alpha-beta), and the opponent's decisions are
  not searched."""
  game = pyspiel.load_game("tic_tac_toe")
  bots = _sog_bots(game, {"simulations": 60, "value_function": "exact"})
  state = game.new_initial_state()
  for action in (4, 0, 8):  # player 1 to move
    state.apply_action(action)
  player = state.current_player()
  bots[player].step(state)
  result = bots[player].resolver.last_result
  ps, _ = bots[player].observer.public_state_of(state)
  assert result.tree.root_ps is ps
  value, _ = minimax.alpha_beta_search(game, state=state.clone(),
                                       maximizing_player_id=player)
  assert result.root_values[player][0] == pytest.approx(value, abs=0.05)
  other = bots[1 - player]
  other.inform_action(state, player, 2)
  assert other.resolver.last_result is None
