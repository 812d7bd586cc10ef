"""The native history engine (DESIGN.md section 16) against its Python twin
(`anchored/history_tree.py`) and OpenSpiel's own answers: the same
infostate keys and root sets, the same solved values on fully expanded
trees, repeatable searches, the time limit kept, flat memory, and the
Python engine wherever the native one cannot run."""

import hashlib
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pyspiel
import pytest

import open_spiel_sog  # pylint: disable=unused-import  (registers "sog")
from open_spiel_sog.algorithms.sog import engine as engine_lib
from open_spiel_sog.algorithms.sog.anchored import AnchoredConfig
from open_spiel_sog.algorithms.sog.anchored import AnchoredSearch
from open_spiel_sog.algorithms.sog.anchored.history_tree import HistoryTree
from open_spiel_sog.algorithms.sog.anchored.native_tree import NativeHistoryTree
from open_spiel_sog.public_state import HistoryKeys

SHIM = engine_lib.native_module()
pytestmark = pytest.mark.skipif(
    SHIM is None, reason="the C++ shim is not built")  # (make test builds it)

TERMINAL = int(pyspiel.PlayerId.TERMINAL)


def _play(game, actions):
  state = game.new_initial_state()
  for a in actions:
    state.apply_action(a)
  return state


def _grow_all(tree, max_nodes=10**6):
  """Gives every leaf of `tree` its children until none is left."""
  frontier = list(tree.roots)
  while frontier:
    nxt = []
    for n in frontier:
      if tree.actor[n] == TERMINAL:
        continue
      if tree.children[n] is None:
        tree.expand(n)
      nxt.extend(tree.children[n])
    frontier = nxt
    assert len(tree) < max_nodes


def test_blake2b_matches_hashlib():
  for data in ["", "abc", "x" * 127, "y" * 128, "z" * 129, "é" * 700]:
    for size in (8, 16):
      assert SHIM.blake2b_hex(data, size) == hashlib.blake2b(
          data.encode(), digest_size=size).hexdigest()


@pytest.mark.parametrize("game_string,moves", [
    ("phantom_ttt", [4, 0]),
    ("dark_hex(num_rows=3,num_cols=3)", [4]),
    # Action-observation histories of thousands of characters.
    ("kriegspiel", []),
])
def test_keys_equal_history_keys(game_string, moves):
  game = pyspiel.load_game(game_string)
  keys = HistoryKeys(game)
  state = _play(game, moves)
  tree = NativeHistoryTree(game, keys, rollouts=1, seed=0)
  tree.add_root(state, keys.root(state), 1.0)
  rng = np.random.default_rng(0)
  frontier, checked, longest = [tree.roots[0]], 0, 0
  # Two levels in full, then one random path 30 actions deep.
  for depth in range(32):
    nxt = []
    for n in frontier:
      if tree.actor[n] == TERMINAL:
        continue
      tree.expand(n)
      nxt.extend(tree.children[n])
    for n in nxt:
      expected = keys.root(tree.history_state(n))
      assert tuple(tree.node_keys[n]) == expected
      assert all(len(k) == 16 and int(k, 16) >= 0 for k in expected)
      longest = max(longest, *map(len, keys.readable(tree.history_state(n))))
      checked += 1
    frontier = nxt if depth < 1 else (
        [nxt[int(rng.integers(len(nxt)))]] if nxt else [])
  assert checked > 20
  if game_string == "kriegspiel":
    assert longest > 2000  # (a key of 16 digits stands for it)


@pytest.mark.parametrize("game_string,games", [
    ("phantom_ttt", 4000), ("dark_hex(num_rows=3,num_cols=3)", 3000),
    ("goofspiel(num_cards=4,imp_info=True)", 2000)])
def test_hashed_keys_split_whole_games_as_readable_keys_do(game_string,
                                                           games):
  # Every history of `games` random whole games: one hashed key per
  # readable key and one readable key per hashed key, per player (no
  # collision, and the incremental hash is a function of the history).
  game = pyspiel.load_game(game_string)
  if game.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
    game = pyspiel.convert_to_turn_based(game)
  keys = HistoryKeys(game)
  rng = np.random.default_rng(0)
  to_hash, to_readable = [{}, {}], [{}, {}]
  for _ in range(games):
    state = game.new_initial_state()
    k = keys.root(state)
    while True:
      readable = keys.readable(state)
      for p in (0, 1):
        assert to_hash[p].setdefault(readable[p], k[p]) == k[p]
        assert to_readable[p].setdefault(k[p], readable[p]) == readable[p]
      if state.is_terminal():
        break
      if state.is_chance_node():
        actions, probs = zip(*state.chance_outcomes())
        a = int(rng.choice(actions, p=probs))
      else:
        a = int(rng.choice(state.legal_actions()))
      child = state.child(a)
      k = keys.child(k, state, a, child)
      state = child
  assert min(len(m) for m in to_hash) > 500


def _same_tree(game, roots):
  """Both engines' trees over the same root histories, fully expanded."""
  keys = HistoryKeys(game)
  trees = [HistoryTree(game, keys, rollouts=1, seed=0),
           NativeHistoryTree(game, keys, rollouts=1, seed=0)]
  for tree in trees:
    for state, weight in roots:
      tree.add_root(state, keys.root(state), weight)
    _grow_all(tree)
  assert len(trees[0]) == len(trees[1])
  return trees


def test_solved_values_equal_python_engine_and_openspiel():
  """dark_hex 2x2 from its root, fully expanded: 1,000 CFR+ iterations give
  the Python engine's node values to 1e-6, and the root's value is the
  game's value by OpenSpiel's CFR+."""
  game = pyspiel.load_game("dark_hex(num_rows=2,num_cols=2,gameversion=adh)")
  python, native = _same_tree(game, [(game.new_initial_state(), 1.0)])
  for t in range(1, 1001):
    python.iterate(t)
    native.iterate()
  np.testing.assert_allclose(native.node_values, python.node_values,
                             atol=1e-6)
  solver = pyspiel.CFRPlusSolver(game)
  for _ in range(200):
    solver.evaluate_and_update_policy()
  expected = pyspiel.expected_returns(game.new_initial_state(),
                                      solver.average_policy(), -1, True)[0]
  assert native.node_values[0] == pytest.approx(expected, abs=1e-3)


def test_late_phantom_ttt_with_a_gadget_solves_as_python():
  """phantom_ttt from a late position, several root histories under the
  Resolve gadget: the same node values and root policies as Python."""
  game = pyspiel.load_game("phantom_ttt")
  keys = HistoryKeys(game)
  starts = [_play(game, h) for h in
            ([4, 0, 8, 3, 6, 1, 5], [4, 0, 1, 8, 6, 3, 5],
             [4, 0, 8, 3, 6, 1, 5])]
  trees = [HistoryTree(game, keys, rollouts=1, seed=0),
           NativeHistoryTree(game, keys, rollouts=1, seed=0)]
  for tree in trees:
    enters = tree.add_gadget(1, [0.2, None, -0.1], [0.5, 0.3, 0.2])
    for state, enter, weight in zip(starts, enters, (0.5, 0.3, 0.2)):
      tree.add_root(state, keys.root(state), weight, enter)
    _grow_all(tree)
  python, native = trees
  assert len(python) == len(native)
  for t in range(1, 301):
    python.iterate(t)
    native.iterate()
  np.testing.assert_allclose(native.node_values, python.node_values,
                             atol=1e-6)
  for n in native.roots:
    if native.actor[n] >= 0:
      np.testing.assert_allclose(native.node_policy(n)[1],
                                 python.node_policy(n)[1], atol=1e-6)


@pytest.mark.parametrize("game_string,moves", [
    ("phantom_ttt", [4, 0, 8]),
    ("dark_hex(num_rows=3,num_cols=3)", [4, 0]),
])
def test_root_sets_equal(game_string, moves):
  """The first search at a position draws the same root histories on
  either engine (the draws are Python's, before any tree exists: no prior
  search, whose tree is each engine's own)."""
  game = pyspiel.load_game(game_string)
  state = _play(game, moves)
  player = state.current_player()
  roots = []
  for native in (False, True):
    search = AnchoredSearch(
        game, player,
        AnchoredConfig(simulations=20, seed=3, prior_search=False),
        native=native)
    result = search.search(state)
    roots.append(([tuple(h.state.history()) for h in search.last_root],
                  result.root_histories, result.opponent_infostates))
  assert roots[0] == roots[1]
  assert len(roots[0][0]) > 1


def test_perfect_information_solve_is_minimax():
  """tic_tac_toe from a late position, its whole tree grown: the engine's
  root value is the minimax value (OpenSpiel's alpha-beta)."""
  from open_spiel.python.algorithms import minimax  # pylint: disable=g-import-not-at-top
  game = pyspiel.load_game("tic_tac_toe")
  for moves in ([4, 0, 8, 2], [0, 4, 8, 2, 6]):
    state = _play(game, moves)
    expected, _ = minimax.alpha_beta_search(game, state.clone(),
                                            maximizing_player_id=0)
    search = engine_lib.PerfectInformationSearch(game, simulations=3000,
                                                 rollouts=1, seed=0)
    result = search.search(state)
    sign = 1.0 if state.current_player() == 0 else -1.0
    assert sign * result.value == pytest.approx(expected, abs=0.02)
    best = max(result.policy, key=result.policy.get)
    assert sign * result.action_values[best] == pytest.approx(expected,
                                                              abs=0.02)


def test_searches_repeat_from_a_seed():
  game = pyspiel.load_game("connect_four")
  state = _play(game, [3, 3, 2])
  out = []
  for _ in range(2):
    search = engine_lib.PerfectInformationSearch(game, simulations=500,
                                                 seed=7)
    out.append([search.search(state).policy for _ in range(2)])
  assert out[0] == out[1]
  assert out[0][0] != out[0][1]  # (the stream goes on between searches)
  game = pyspiel.load_game("phantom_ttt")
  results = []
  for _ in range(2):
    search = AnchoredSearch(game, 0, AnchoredConfig(simulations=300, seed=2),
                            native=True)
    r = search.search(game.new_initial_state())
    results.append((r.policy, r.value, r.nodes, r.iterations))
  assert results[0] == results[1]


@pytest.mark.parametrize("game_string,params", [
    ("connect_four", ""), ("phantom_ttt", ""),
    ("phantom_ttt", "value_function=rollout,threads=2,")])
def test_time_limit_is_kept(game_string, params):
  game = pyspiel.load_game(game_string)
  bot = pyspiel.load_bot(f"sog({params}time_limit=0.5,engine=native,seed=1)",
                         game, 0)
  state = game.new_initial_state()
  decisions = 0
  while decisions < 3 and not state.is_terminal():
    if state.current_player() != 0:
      state.apply_action(state.legal_actions()[-1])
      continue
    begin = time.monotonic()
    action = bot.step(state)
    seconds = time.monotonic() - begin
    assert seconds <= 0.5 * 1.1 + 0.05, seconds
    state.apply_action(action)
    decisions += 1
  assert decisions == 3


def _rss_mb() -> float:
  with open("/proc/self/statm") as f:
    return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def test_memory_stays_flat_over_200_searches():
  game = pyspiel.load_game("connect_four")
  search = engine_lib.PerfectInformationSearch(game, simulations=2000,
                                               seed=0)
  state = _play(game, [3, 3])
  for _ in range(20):
    search.search(state)
  before = _rss_mb()
  for _ in range(180):
    search.search(state)
  assert _rss_mb() - before < 10.0


def test_python_games_and_no_shim_fall_back_to_python():
  game = pyspiel.load_game("python_tic_tac_toe")
  bot = pyspiel.load_bot("sog(simulations=20)", game, 0)
  assert bot.native is None
  assert bot.step(game.new_initial_state()) in range(9)
  with pytest.raises(ValueError, match="engine=native cannot search.*Python"):
    pyspiel.load_bot("sog(engine=native)", game, 0)
  code = ("import pyspiel, open_spiel_sog\n"
          "g = pyspiel.load_game('connect_four')\n"
          "b = pyspiel.load_bot('sog(simulations=20)', g, 0)\n"
          "assert b.native is None\n"
          "print('move', b.step(g.new_initial_state()))\n"
          "g = pyspiel.load_game('phantom_ttt')\n"
          "b = pyspiel.load_bot('sog(simulations=20)', g, 0)\n"
          "assert not b.anchored.native\n"
          "print('move', b.step(g.new_initial_state()))\n")
  env = dict(os.environ, OPEN_SPIEL_SOG_DISABLE_SHIM="1")
  out = subprocess.run([sys.executable, "-c", code], env=env,
                       capture_output=True, text=True, timeout=300)
  assert out.returncode == 0, out.stderr
  assert out.stdout.count("move") == 2


def test_engine_parameter():
  game = pyspiel.load_game("connect_four")
  assert pyspiel.load_bot("sog", game, 0).native is not None
  assert pyspiel.load_bot("sog(engine=python)", game, 0).native is None
  with pytest.raises(ValueError, match="unknown engine 'fast'"):
    pyspiel.load_bot("sog(engine=fast)", game, 0)
  game = pyspiel.load_game("phantom_ttt")
  assert pyspiel.load_bot("sog", game, 0).anchored.native
  assert not pyspiel.load_bot("sog(engine=python)", game, 0).anchored.native
  bot = pyspiel.load_bot("sog(threads=1)", game, 0)
  assert bot.anchored.config.threads == 1
  for bad in ("3", "0"):
    with pytest.raises(ValueError, match="threads must be 1 or 2"):
      pyspiel.load_bot(f"sog(threads={bad})", game, 0)


def test_puct_values_parameter():
  game = pyspiel.load_game("connect_four")
  state = _play(game, [3, 3])
  policies = []
  for values in ("backed_up", "cfr"):
    bot = pyspiel.load_bot(f"sog(simulations=300,puct_values={values})",
                           game, 0)
    bot.step(state)
    policies.append(bot.last_decision().policy)
  assert policies[0] != policies[1]  # (different trees grown)
  with pytest.raises(ValueError, match="unknown puct_values 'mean'"):
    pyspiel.load_bot("sog(puct_values=mean)", game, 0)


def test_network_hook_hands_leaves_over_in_one_batch():
  """With network_leaves, a run stops after the simulation whose new
  leaves wait for values (an anchored expansion: all of a node's
  children); Python sets them in one call and the solve uses them (here:
  every pending leaf valued as a loss for player 0, whose rollouts value
  the position near a win, moves the root's value down)."""
  game = pyspiel.load_game("phantom_ttt")
  keys = HistoryKeys(game)
  values = []
  for network in (False, True):
    config = SHIM.HistoryEngineConfig()
    config.keys = keys.source
    config.network_leaves = network
    config.seed = 3
    engine = SHIM.HistoryEngine(game, config)
    state = _play(game, [4, 0])
    engine.add_root(state, 1.0, 0, float("nan"), *keys.root(state))
    if network:  # (the root waits for its value first)
      assert engine.pending_leaves() == [0]
      engine.set_leaf_values([0], [0.0])
    sims, _, _ = engine.run(5, 5.0, 0.0, 10**6)
    if network:
      pending = engine.pending_leaves()
      assert sims == 1 and len(pending) > 5
      engine.set_leaf_values(pending, [-1.0] * len(pending))
      assert not engine.pending_leaves()
      with pytest.raises(ValueError, match="one value"):
        engine.set_leaf_values(pending, [1.0])
    for _ in range(50):
      engine.iterate()
    values.append(engine.node_values()[0])
  assert values[1] < -0.9 and values[0] > values[1] + 0.5


def _assert_ctrl_c_interrupts(setup: str, search: str, wait: float) -> None:
  """Runs `setup` then `search` (Python lines) in a child process, sends it
  SIGINT `wait` seconds into the search, and asserts that KeyboardInterrupt
  came out of the search within 5 s."""
  # (The child restores Python's SIGINT handler: a pytest-xdist worker
  # may run with SIGINT ignored, which its children inherit.)
  code = ("import signal, sys, time, pyspiel, open_spiel_sog\n"
          "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
          f"{setup}\n"
          "print('searching', flush=True)\n"
          "try:\n"
          f"  {search}\n"
          "except KeyboardInterrupt:\n"
          "  print('interrupted', flush=True)\n")
  proc = subprocess.Popen([sys.executable, "-c", code],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)
  assert proc.stdout.readline().strip() == "searching"
  time.sleep(wait)
  proc.send_signal(signal.SIGINT)
  begin = time.monotonic()
  out, err = proc.communicate(timeout=60)
  assert "interrupted" in out, (proc.returncode, out, err[-2000:])
  assert time.monotonic() - begin < 5.0


def test_ctrl_c_stops_a_long_search():
  """A search holds no GIL while it runs; Ctrl-C (SIGINT) still raises
  KeyboardInterrupt out of it within a moment, not at its end."""
  _assert_ctrl_c_interrupts(
      "from open_spiel_sog.algorithms.sog import engine\n"
      "g = pyspiel.load_game('connect_four')\n"
      "s = engine.PerfectInformationSearch(g, simulations=10**8)",
      "s.search(g.new_initial_state())", wait=1.0)


# --- Two threads: the expander beside the CFR thread (issue "fog speed") ---


def _full_native_trees(game, starts, gadget=None):
  """Two native trees over the same root histories, fully expanded: one
  on one thread, one on two."""
  keys = HistoryKeys(game)
  trees = [NativeHistoryTree(game, keys, rollouts=1, seed=0, threads=t)
           for t in (1, 2)]
  for tree in trees:
    enters = ([0] * len(starts) if gadget is None else
              tree.add_gadget(*gadget))
    for state, enter in zip(starts, enters):
      tree.add_root(state, keys.root(state), 1.0 / len(starts), enter)
    _grow_all(tree)
  return trees


@pytest.mark.parametrize("game_string,histories,gadget", [
    ("dark_hex(num_rows=2,num_cols=2,gameversion=adh)", [[]], None),
    ("phantom_ttt", [[4, 0, 8, 3, 6, 1, 5], [4, 0, 1, 8, 6, 3, 5]],
     (1, [0.2, -0.1], [0.5, 0.5])),
])
def test_two_threads_solve_a_full_tree_as_one_thread_does(game_string,
                                                          histories,
                                                          gadget):
  """On a fully expanded tree the expander finds nothing to add, and the
  CFR thread's iterations are the one-thread engine's: the same node
  values to 1e-6 after the same number of iterations."""
  game = pyspiel.load_game(game_string)
  one, two = _full_native_trees(game, [_play(game, h) for h in histories],
                                gadget)
  size = len(two)
  sims, iterations, walks = two.run(10**9, -1, time.monotonic() + 0.3,
                                    10**6)
  assert (sims, len(two)) == (0, size) and walks > 0
  assert iterations > 10
  for _ in range(iterations):
    one.iterate()
  np.testing.assert_allclose(two.node_values, one.node_values, atol=1e-6)


def test_two_threads_grow_dark_hex_and_solve_it():
  """dark_hex 2x2 from its root on two threads for 1 s: the expander grows
  the tree the policies reach and the root's value is OpenSpiel's CFR+
  value of the game."""
  game = pyspiel.load_game("dark_hex(num_rows=2,num_cols=2,gameversion=adh)")
  full, _ = _full_native_trees(game, [game.new_initial_state()])
  keys = HistoryKeys(game)
  tree = NativeHistoryTree(game, keys, rollouts=1, seed=3, threads=2)
  state = game.new_initial_state()
  tree.add_root(state, keys.root(state), 1.0)
  sims, iterations, _ = tree.run(10**9, -1, time.monotonic() + 1.0, 10**6)
  assert len(full) > len(tree) > 200 and sims > 0 and iterations > 100
  solver = pyspiel.CFRPlusSolver(game)
  for _ in range(200):
    solver.evaluate_and_update_policy()
  expected = pyspiel.expected_returns(state, solver.average_policy(), -1,
                                      True)[0]
  assert tree.node_values[0] == pytest.approx(expected, abs=0.02)


def test_counted_searches_repeat_from_a_seed_with_two_threads():
  game = pyspiel.load_game("phantom_ttt")
  results = []
  for _ in range(2):
    search = AnchoredSearch(game, 0, AnchoredConfig(simulations=300, seed=2,
                                                    threads=2), native=True)
    r = search.search(game.new_initial_state())
    results.append((r.policy, r.value, r.nodes, r.iterations))
  assert results[0] == results[1]


def test_memory_stays_flat_over_200_two_thread_searches():
  game = pyspiel.load_game("phantom_ttt")
  bot = pyspiel.load_bot("sog(time_limit=0.02,threads=2,seed=0)", game, 0)
  state = game.new_initial_state()
  assert bot.anchored is not None
  for _ in range(20):
    bot.restart()
    bot.step(state)
  before = _rss_mb()
  for _ in range(180):
    bot.restart()
    bot.step(state)
  assert _rss_mb() - before < 10.0


def test_ctrl_c_stops_a_two_thread_search():
  """Ctrl-C raises KeyboardInterrupt out of a timed two-thread anchored
  search within a moment; the CFR thread is joined on the way out."""
  _assert_ctrl_c_interrupts(
      "from open_spiel_sog.algorithms.sog.anchored import AnchoredConfig\n"
      "from open_spiel_sog.algorithms.sog.anchored import AnchoredSearch\n"
      "g = pyspiel.load_game('phantom_ttt')\n"
      "s = AnchoredSearch(g, 0, AnchoredConfig(simulations=10**9,\n"
      "    threads=2, max_nodes=10**8), native=True)",
      "s.search(g.new_initial_state(), time.monotonic() + 120)", wait=1.5)
