"""The anchored subgame (DESIGN.md section 15): its root is the searcher's
infostate and the order-2 set, exactly; where that set is the whole game,
its solve is the game's; decisions keep the time limit; the sog bot uses it
past the enumeration bound and keeps the public-state path elsewhere."""

import time

import numpy as np
import pyspiel
import pytest

import open_spiel_sog  # pylint: disable=unused-import  (registers "sog")
from open_spiel_sog.algorithms.sog.anchored import AnchoredConfig
from open_spiel_sog.algorithms.sog.anchored import AnchoredSearch
from open_spiel_sog.public_state import PublicStateObserver


def _histories_at(game, depth):
  """Every history of `depth` actions (a brute-force walk)."""
  level = [game.new_initial_state()]
  for _ in range(depth):
    level = [s.child(a) for s in level if not s.is_terminal()
             for a in s.legal_actions()]
  return level


def _play(game, actions):
  state = game.new_initial_state()
  for a in actions:
    state.apply_action(a)
  return state


def test_first_search_of_a_small_game_is_the_game_value():
  """At the first decision the root is the game's root (one history): with
  the whole tree grown, the search's value is the game's value, which
  OpenSpiel's CFR+ computes (0.5 for the first player of abrupt dark hex
  2x2)."""
  game = pyspiel.load_game("dark_hex(num_rows=2,num_cols=2,gameversion=adh)")
  solver = pyspiel.CFRPlusSolver(game)
  for _ in range(200):
    solver.evaluate_and_update_policy()
  expected = pyspiel.expected_returns(game.new_initial_state(),
                                      solver.average_policy(), -1, True)[0]
  search = AnchoredSearch(game, 0, AnchoredConfig(simulations=50, seed=1))
  result = search.search(game.new_initial_state())
  assert result.root_histories == (1, 1)
  # The rest of the tree grown (every leaf given its children), then
  # solved by the search's CFR+.
  tree = search.tree
  terminal = int(pyspiel.PlayerId.TERMINAL)
  grown = True
  while grown:
    leaves = [n for n in range(len(tree))
              if tree.children[n] is None and tree.actor[n] != terminal]
    for n in leaves:
      tree.expand(n)
    grown = bool(leaves)
  for t in range(1, 1001):
    tree.iterate(t)
  assert tree.node_values[tree.roots[0]] == pytest.approx(expected, abs=0.01)


def test_prior_search_weighs_the_opponent_s_unseen_move_by_its_policy():
  """goofspiel's second seat bids after the first seat's hidden bid. At the
  second seat's first search no previous search knows that bid's policy:
  weighed uniformly (prior_search=false), the first seat looks weak and the
  search believes itself ahead. The prior search solves the first seat's
  bid first, and the value comes near the game's, which OpenSpiel's CFR+
  computes (0: the game is symmetric)."""
  game = pyspiel.load_game("turn_based_simultaneous_game(game=goofspiel("
                           "num_cards=4,imp_info=True,points_order="
                           "descending))")
  solver = pyspiel.CFRPlusSolver(game)
  for _ in range(200):
    solver.evaluate_and_update_policy()
  expected = pyspiel.expected_returns(game.new_initial_state(),
                                      solver.average_policy(), -1, True)[1]
  assert expected == pytest.approx(0.0, abs=1e-3)
  state = _play(game, [0])
  for seed in (1, 2):
    values = {}
    for prior in (True, False):
      search = AnchoredSearch(game, 1, AnchoredConfig(
          simulations=400, seed=seed, prior_search=prior))
      values[prior] = search.search(state).value
    assert abs(values[True] - expected) < 0.15, values
    assert values[False] - expected > 0.2, values


def test_root_is_the_infostate_and_the_order2_set_with_their_counts():
  """A phantom_ttt decision of o after three moves: the root holds o's
  infostate whole and, for each of its histories, x's infostate there with
  at least the configured number of histories (or all it has), and no
  history outside those sets. The true sets come from walking every
  history of that length with OpenSpiel's states."""
  game = pyspiel.load_game("phantom_ttt")
  state = _play(game, [4, 0, 8])  # x 4, o 0, x 8: o to move
  observer = PublicStateObserver(game)
  key = observer.infostate_string
  everything = [h for h in _histories_at(game, 3)
                if not h.is_terminal() and h.current_player() == 1]
  mine = {tuple(h.history()) for h in everything
          if key(h, 1) == key(state, 1)}
  by_x_key = {}
  for h in everything:
    by_x_key.setdefault(key(h, 0), set()).add(tuple(h.history()))
  order2 = 4
  search = AnchoredSearch(game, 1, AnchoredConfig(
      simulations=20, root_histories=1000, order2_histories=order2, seed=3))
  search.search(state)
  root = search.last_root
  in_root = {tuple(h.state.history()) for h in root}
  assert mine <= in_root  # o's infostate, whole
  x_keys = {key(_play(game, h), 0) for h in mine}
  for x_key in x_keys:
    held = in_root & by_x_key[x_key]
    assert len(held) >= min(order2, len(by_x_key[x_key])), x_key
  allowed = mine.union(*(by_x_key[k] for k in x_keys))
  assert in_root <= allowed  # nothing of order 3
  for h in root:  # the keys the search gave them hash OpenSpiel's
    assert search.keys.readable(h.state) == (key(h.state, 0),
                                             key(h.state, 1))
    assert h.keys == search.keys.root(h.state)


def test_kept_tree_carries_into_the_next_search():
  """After x's first search, x's second decision reads its infostate off
  the kept tree: its histories' subtrees come along."""
  game = pyspiel.load_game("phantom_ttt")
  search = AnchoredSearch(game, 0, AnchoredConfig(simulations=400, seed=0))
  state = game.new_initial_state()
  search.search(state)
  state = _play(game, [4, 2])
  result = search.search(state)
  assert result.kept > 0
  assert result.root_histories[0] == 8  # o's 8 replies, all of them
  assert set(result.policy) == set(state.legal_actions())
  assert sum(result.policy.values()) == pytest.approx(1.0)


def test_frozen_other_selves_play_the_previous_policy():
  """With freeze_other_selves (1-KLSS) our rows under root histories
  outside our infostate keep the previous search's policy."""
  game = pyspiel.load_game("phantom_ttt")
  search = AnchoredSearch(game, 0, AnchoredConfig(
      simulations=300, freeze_other_selves=True, seed=0))
  search.search(game.new_initial_state())
  before = dict(search.policies)
  search.search(_play(game, [4, 2]))
  tree = search.tree
  rows = tree.rows[0]
  key_me = search.last_root[0].keys[0]
  frozen = [r for r in range(len(rows)) if rows.frozen[r] is not None]
  assert frozen
  for r in frozen:
    expected = before.get(rows.key[r])
    if expected is not None:
      np.testing.assert_allclose(rows.average(r), [
          expected[a] for a in rows.actions[r]])
  mine = [r for r in range(len(rows)) if rows.key[r] == key_me]
  assert mine and all(rows.frozen[r] is None for r in mine)


@pytest.mark.alone
def test_decisions_keep_the_time_limit():
  """Each anchored decision of a phantom_ttt game at time_limit=0.5 ends
  within the limit plus 20% (and a little for a loaded machine)."""
  game = pyspiel.load_game("phantom_ttt")
  bots = [pyspiel.load_bot("sog", game, p, {
      "time_limit": 0.5, "simulations": 10**6, "seed": p}) for p in (0, 1)]
  assert all(bot.anchored is not None for bot in bots)
  state = game.new_initial_state()
  took = []
  while not state.is_terminal():
    start = time.monotonic()
    action = bots[state.current_player()].step(state)
    took.append(time.monotonic() - start)
    state.apply_action(action)
  assert max(took) <= 1.2 * 0.5 + 0.1, took
  assert np.median(took) >= 0.4, took


def test_bot_picks_the_subgame_by_the_enumeration_bound():
  """auto: anchored in phantom_ttt (public states past max_histories),
  the public-state path in Kuhn poker and wherever subgame says so."""
  assert pyspiel.load_bot("sog", pyspiel.load_game("phantom_ttt"), 0,
                          {}).anchored is not None
  assert pyspiel.load_bot("sog", pyspiel.load_game("kuhn_poker"), 0,
                          {}).anchored is None
  assert pyspiel.load_bot("sog", pyspiel.load_game("phantom_ttt"), 0, {
      "subgame": "public_state"}).anchored is None
  with pytest.raises(ValueError, match="unknown subgame 'tree'"):
    pyspiel.load_bot("sog", pyspiel.load_game("phantom_ttt"), 0,
                     {"subgame": "tree"})
  with pytest.raises(ValueError, match="unknown gadget"):
    pyspiel.load_bot("sog", pyspiel.load_game("phantom_ttt"), 0,
                     {"gadget": "maxmargin"})
  with pytest.raises(ValueError, match=r"value_function='exact' cannot "
                     r"serve the anchored subgame .*\(subgame='anchored'\)"):
    pyspiel.load_bot("sog", pyspiel.load_game("phantom_ttt"), 0, {
        "subgame": "anchored", "value_function": "exact"})


@pytest.mark.parametrize("game_string", [
    "phantom_ttt", "dark_hex(num_rows=3,num_cols=3)",
    "phantom_ttt(gameversion=abrupt)"])
@pytest.mark.parametrize("gadget", ["resolve", "none"])
def test_anchored_bot_plays_whole_games(game_string, gadget):
  game = pyspiel.load_game(game_string)
  bots = [pyspiel.load_bot("sog", game, p, {
      "simulations": 30, "seed": p, "gadget": gadget}) for p in (0, 1)]
  for seed in range(2):
    state = game.new_initial_state()
    returns = pyspiel.evaluate_bots(state, bots, seed)
    assert state.is_terminal() and sum(returns) == pytest.approx(0.0)


def test_purified_play_is_the_searched_policy_s_top_action():
  """purify (the default) plays the most probable action of the searched
  policy; without it the bot gives the searched policy itself."""
  game = pyspiel.load_game("phantom_ttt")
  state = game.new_initial_state()
  for purify in (True, False):
    bot = pyspiel.load_bot("sog", game, 0, {"simulations": 200, "seed": 0,
                                            "purify": purify})
    policy = dict(bot.get_policy(state))
    searched = bot.anchored.last_result.policy
    if purify:
      best = max(searched, key=searched.get)
      assert policy == {a: float(a == best) for a in state.legal_actions()}
    else:
      assert policy == pytest.approx(searched)
      assert max(policy.values()) < 1.0
