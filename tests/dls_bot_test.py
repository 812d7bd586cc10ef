"""The "dls" bot: nested depth-limited solving, judged by OpenSpiel's exact
exploitability of the policy it plays, and played through OpenSpiel's
evaluate_bots."""

import numpy as np
from open_spiel.python.algorithms import evaluate_bots as py_evaluate_bots
import pyspiel
import pytest

import open_spiel_sog  # registers "dls"  # pylint: disable=unused-import
from open_spiel_sog.bots import dls
from open_spiel_sog.evaluation import exploitability as ev


def test_bot_with_continuations_is_as_safe_as_its_root_solve():
  """Re-solving with the gadget after the first subgame keeps the bot near
  its blueprint; with the blueprint's values alone (k=1) it is not."""
  fast = dict(iterations=300)
  safe = ev.dls_exploitability("leduc_poker", dict(fast, strategies="bias",
                                                   k=4))
  unsafe = ev.dls_exploitability("leduc_poker", dict(fast, strategies="bias",
                                                     k=1))
  assert safe["blueprint_exploitability"] < 1e-3
  assert safe["exploitability"] < 0.003
  assert unsafe["exploitability"] > 0.05
  assert safe["solves"] > 100  # every decision public state re-solves


def test_depth_frontier_bot_is_near_its_blueprint():
  result = ev.dls_exploitability(
      "liars_dice(numdice=1,dice_sides=3)",
      dict(frontier="depth", depth=3, strategies="self_generative", k=4,
           iterations=500))
  assert result["exploitability"] < 1e-4


def test_bot_plays_what_the_tabulated_policy_says():
  game = pyspiel.load_game("leduc_poker")
  params = dict(strategies="bias", k=3, iterations=200)
  table, _ = ev.dls_policy(game, dls.DLSBotConfig.from_params(params))
  bots = [pyspiel.load_bot("dls", game, p, params) for p in range(2)]
  rng = np.random.default_rng(0)
  for _ in range(5):
    state = game.new_initial_state()
    for bot in bots:
      bot.restart_at(state)
    while not state.is_terminal():
      if state.is_chance_node():
        outcomes, probs = zip(*state.chance_outcomes())
        state.apply_action(int(rng.choice(outcomes, p=probs)))
        continue
      p = state.current_player()
      policy, action = bots[p].step_with_policy(state)
      expected = table[state.information_state_string()]
      assert dict(policy) == pytest.approx(expected, abs=1e-12)
      assert action in state.legal_actions()
      state.apply_action(action)


def test_bot_plays_through_evaluate_bots_against_random():
  game = pyspiel.load_game("kuhn_poker")
  bots = [pyspiel.load_bot("dls", game, 0, {"iterations": 200}),
          pyspiel.load_bot("uniform_random", game, 1,
                           {"seed": 1})]
  rng = np.random.RandomState(0)
  returns = [py_evaluate_bots.evaluate_bots(game.new_initial_state(), bots,
                                            rng) for _ in range(20)]
  assert all(sum(r) == pytest.approx(0.0) for r in returns)
  # C++ evaluate_bots (restart and inform_action) too.
  for seed in range(5):
    r = pyspiel.evaluate_bots(game.new_initial_state(), bots, seed)
    assert sum(r) == pytest.approx(0.0)


def test_a_processs_caches_keep_the_latest_games_together():
  """The shared observers, blueprints and resolvers are kept per game for
  the latest MAX_CACHED_GAMES games; a game dropped from them gets a new
  observer and a resolver built on it, and a bot made before keeps
  playing."""
  kuhn = pyspiel.load_game("kuhn_poker")
  bot = pyspiel.load_bot("dls", kuhn, 0, {"iterations": 50})
  state = kuhn.new_initial_state()
  state.apply_action(0)
  state.apply_action(1)
  before = bot.get_policy(state)
  first = dls.observer_for(kuhn)
  others = ["leduc_poker", "liars_dice", "tic_tac_toe",
            "liars_dice(dice_sides=4,numdice=1)"]
  assert len(others) == dls.MAX_CACHED_GAMES
  for name in others:
    dls.observer_for(pyspiel.load_game(name))
  assert len(dls._GAMES) == dls.MAX_CACHED_GAMES  # pylint: disable=protected-access
  assert str(kuhn) not in dls._GAMES  # pylint: disable=protected-access
  config = dls.DLSBotConfig.from_params({"iterations": 50})
  resolver = dls.resolver_for(kuhn, 0, config)
  assert dls.observer_for(kuhn) is not first
  assert resolver.root_solver.root.observer is dls.observer_for(kuhn)
  assert bot.get_policy(state) == before
  # A new bot takes the new resolver, which solves as the old one did.
  after = pyspiel.load_bot("dls", kuhn, 0, {"iterations": 50}).get_policy(
      state)
  assert dict(after) == pytest.approx(dict(before), abs=1e-12)


@pytest.mark.parametrize("game,params,message", [
    ("leduc_poker", {"strategy": "bias"}, "unknown parameter"),
    ("leduc_poker", {"frontier": "rounds"}, "unknown frontier 'rounds'"),
    ("leduc_poker", {"k": 0}, "k must be >= 1"),
    ("leduc_poker", {"blueprint_iterations": 0}, "blueprint_iterations"),
    ("kuhn_poker(players=3)", {}, "3 players"),
    ("goofspiel", {}, "simultaneous moves"),
])
def test_bad_input_is_named(game, params, message):
  with pytest.raises(Exception, match=message) as info:
    pyspiel.load_bot("dls", pyspiel.load_game(game), 0, params)
  assert "dls" in str(info.value)


def test_step_for_the_wrong_player_is_refused():
  game = pyspiel.load_game("kuhn_poker")
  bot = pyspiel.load_bot("dls", game, 1, {"iterations": 50})
  state = game.new_initial_state()
  state.apply_action(0)
  state.apply_action(1)
  with pytest.raises(Exception, match="does not act"):
    bot.step(state)


def test_bot_plays_in_a_round_robin():
  from open_spiel_sog.evaluation import tournament
  result = tournament.round_robin(
      "kuhn_poker", "dls(iterations=200);uniform_random", games_per_pair=10,
      progress=False)
  assert result["bots"] == ["dls(iterations=200)", "uniform_random"]
  assert len(result["games"]) == 20
  assert all(sum(g["returns"]) == pytest.approx(0.0)
             for g in result["games"])
  assert set(result["elo"]) == set(result["bots"])
