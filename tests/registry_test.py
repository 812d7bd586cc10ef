"""Tests for open_spiel_sog.registry (bots registered with OpenSpiel)."""

import itertools
import os
import random
import subprocess
import sys
import textwrap
from typing import Any, Dict, List, Tuple

import numpy as np
from open_spiel.python.algorithms import evaluate_bots as py_evaluate_bots
import pyspiel
import pytest

from open_spiel_sog import registry

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_name_counter = itertools.count()


def _unique_name(prefix: str) -> str:
  """Bot names are process-global; give every registration its own."""
  return f"sog_test_{prefix}_{next(_name_counter)}"


class UniformRandomBot(pyspiel.Bot):
  """Seeded uniform-random bot; works for sequential and simultaneous games."""

  def __init__(self, player: int, seed: int):
    pyspiel.Bot.__init__(self)
    self.player = player
    self.seed = seed
    self._rng = random.Random(seed)
    self.calls: List[str] = []

  def restart(self) -> None:
    self.calls.append("restart")

  def restart_at(self, state: pyspiel.State) -> None:
    self.calls.append("restart_at")

  def inform_action(self, state: pyspiel.State, player_id: int,
                    action: int) -> None:
    self.calls.append("inform_action")

  def provides_policy(self) -> bool:
    return True

  def step_with_policy(
      self, state: pyspiel.State) -> Tuple[List[Tuple[int, float]], int]:
    legal = state.legal_actions(self.player)
    if not legal:
      return [], pyspiel.INVALID_ACTION
    policy = [(a, 1.0 / len(legal)) for a in legal]
    return policy, self._rng.choice(legal)

  def step(self, state: pyspiel.State) -> int:
    self.calls.append("step")
    return self.step_with_policy(state)[1]


class FixedIndexBot(UniformRandomBot):
  """Plays legal_actions[index % len(legal_actions)]."""

  def __init__(self, player: int, index: int):
    super().__init__(player, seed=0)
    self.index = index

  def step_with_policy(
      self, state: pyspiel.State) -> Tuple[List[Tuple[int, float]], int]:
    legal = state.legal_actions(self.player)
    action = legal[self.index % len(legal)]
    return [(action, 1.0)], action


class StepBoom(Exception):
  pass


class FactoryBoom(Exception):
  pass


class ExplodingBot(UniformRandomBot):

  def step(self, state: pyspiel.State) -> int:
    raise StepBoom("boom in step")


def _random_factory(game: pyspiel.Game, player: int,
                    params: Dict[str, Any]) -> pyspiel.Bot:
  del game
  return UniformRandomBot(player, params.get("seed", 0))


RANDOM_BOT = _unique_name("random")
FIXED_BOT = _unique_name("fixed")
SEEN_PARAMS: List[Dict[str, Any]] = []


def _fixed_factory(game: pyspiel.Game, player: int,
                   params: Dict[str, Any]) -> pyspiel.Bot:
  assert isinstance(game, pyspiel.Game)
  SEEN_PARAMS.append(dict(params))
  return FixedIndexBot(player, params.get("index", 0))


registry.register_bot(RANDOM_BOT, _random_factory)
registry.register_bot(FIXED_BOT, _fixed_factory)


def test_native_registry_is_used():
  assert registry.using_native_registry(), registry.fallback_reason()
  assert registry.fallback_reason() is None


def test_registered_bots_lists_ours():
  names = pyspiel.registered_bots()
  assert RANDOM_BOT in names and FIXED_BOT in names
  assert "uniform_random" in names  # OpenSpiel's own bots are still there
  assert pyspiel.is_bot_registered(RANDOM_BOT)
  assert {RANDOM_BOT, FIXED_BOT} <= set(registry.registered_by_us())


def test_load_with_dict_params():
  game = pyspiel.load_game("tic_tac_toe")
  SEEN_PARAMS.clear()
  bot = pyspiel.load_bot(FIXED_BOT, game, 1, {"index": 4})
  assert isinstance(bot, FixedIndexBot)
  assert bot.player == 1 and bot.index == 4
  assert SEEN_PARAMS == [{"index": 4}]
  # The parameter is really used: after X takes cell 0, O's legal actions
  # are 1..8 and index 4 is cell 5.
  assert bot.step(game.new_initial_state().child(0)) == 5


def test_load_with_string_params():
  game = pyspiel.load_game("tic_tac_toe")
  SEEN_PARAMS.clear()
  bot = pyspiel.load_bot(f"{FIXED_BOT}(index=2)", game, 0)
  assert isinstance(bot, FixedIndexBot) and bot.index == 2
  assert SEEN_PARAMS == [{"index": 2}]  # no "name" key
  assert bot.step(game.new_initial_state()) == 2
  default = pyspiel.load_bot(FIXED_BOT, game, 0)
  assert default.index == 0 and default.step(game.new_initial_state()) == 0


def test_seed_param_reaches_bot():
  game = pyspiel.load_game("tic_tac_toe")
  a = pyspiel.load_bot(f"{RANDOM_BOT}(seed=7)", game, 0)
  b = pyspiel.load_bot(RANDOM_BOT, game, 0, {"seed": 7})
  c = pyspiel.load_bot(RANDOM_BOT, game, 0, {"seed": 8})
  assert (a.seed, b.seed, c.seed) == (7, 7, 8)
  state = game.new_initial_state()
  seq_a = [a.step(state) for _ in range(20)]
  seq_b = [b.step(state) for _ in range(20)]
  seq_c = [c.step(state) for _ in range(20)]
  assert seq_a == seq_b
  assert seq_a != seq_c


def test_each_load_returns_a_new_bot():
  game = pyspiel.load_game("kuhn_poker")
  a = pyspiel.load_bot(RANDOM_BOT, game, 0)
  b = pyspiel.load_bot(RANDOM_BOT, game, 0)
  assert a is not b
  a.seed = 123  # Python-side state survives the trip through C++
  assert a.seed == 123 and b.seed == 0


@pytest.mark.parametrize("game_name", ["kuhn_poker", "tic_tac_toe",
                                       "matrix_rps"])
def test_plays_with_cpp_evaluate_bots(game_name):
  game = pyspiel.load_game(game_name)
  for seed in range(5):
    bots = [pyspiel.load_bot(f"{RANDOM_BOT}(seed={seed * 10 + p})", game, p)
            for p in range(game.num_players())]
    returns = pyspiel.evaluate_bots(game.new_initial_state(), bots, seed)
    assert len(returns) == 2
    assert sum(returns) == pytest.approx(0.0)
    assert "restart" in bots[0].calls and "step" in bots[0].calls


@pytest.mark.parametrize("game_name", ["kuhn_poker", "tic_tac_toe",
                                       "matrix_rps"])
def test_plays_with_python_evaluate_bots(game_name):
  game = pyspiel.load_game(game_name)
  rng = np.random.RandomState(0)
  for seed in range(5):
    bots = [pyspiel.load_bot(RANDOM_BOT, game, p, {"seed": seed * 10 + p})
            for p in range(game.num_players())]
    returns = py_evaluate_bots.evaluate_bots(game.new_initial_state(), bots,
                                             rng)
    assert sum(returns) == pytest.approx(0.0)
    assert bots[0].calls[0] == "restart_at" and "step" in bots[0].calls


def test_plays_against_openspiel_bot():
  game = pyspiel.load_game("kuhn_poker")
  bots = [pyspiel.load_bot(FIXED_BOT, game, 0, {"index": 1}),
          pyspiel.load_bot("uniform_random", game, 1, {"seed": 3})]
  returns = pyspiel.evaluate_bots(game.new_initial_state(), bots, 5)
  assert sum(returns) == pytest.approx(0.0)
  # Index 1 is always "bet": player 0 never folds, so it never loses 1 chip
  # by folding; its result is +-1 or +-2.
  assert returns[0] in (-2.0, -1.0, 1.0, 2.0)


def test_bots_that_can_play_game_respects_can_play():
  name = _unique_name("kuhn_p0")
  registry.register_bot(
      name, _random_factory,
      can_play=lambda g, p: g.get_type().short_name == "kuhn_poker" and p == 0)
  kuhn = pyspiel.load_game("kuhn_poker")
  ttt = pyspiel.load_game("tic_tac_toe")
  assert name in pyspiel.bots_that_can_play_game(kuhn, 0)
  assert name not in pyspiel.bots_that_can_play_game(kuhn, 1)
  assert name not in pyspiel.bots_that_can_play_game(kuhn)  # not all players
  assert name not in pyspiel.bots_that_can_play_game(ttt, 0)
  # The default can_play accepts every game and player.
  assert RANDOM_BOT in pyspiel.bots_that_can_play_game(ttt, 1)
  assert RANDOM_BOT in pyspiel.bots_that_can_play_game(ttt)


def test_factory_exception_reaches_caller():
  name = _unique_name("factory_raises")

  def factory(game, player, params):
    raise FactoryBoom(f"no bot for player {player}")

  registry.register_bot(name, factory)
  game = pyspiel.load_game("kuhn_poker")
  with pytest.raises(FactoryBoom, match="no bot for player 1"):
    pyspiel.load_bot(name, game, 1)
  with pytest.raises(FactoryBoom):
    pyspiel.load_bot(f"{name}(x=1)", game, 0)
  # The registry still works afterwards.
  assert isinstance(pyspiel.load_bot(RANDOM_BOT, game, 0), UniformRandomBot)


def test_step_exception_reaches_caller():
  name = _unique_name("step_raises")
  registry.register_bot(name, lambda g, p, params: ExplodingBot(p, 0))
  game = pyspiel.load_game("tic_tac_toe")
  bots = [pyspiel.load_bot(name, game, 0),
          pyspiel.load_bot(RANDOM_BOT, game, 1)]
  with pytest.raises(StepBoom, match="boom in step"):
    pyspiel.evaluate_bots(game.new_initial_state(), bots, 0)
  with pytest.raises(StepBoom):
    py_evaluate_bots.evaluate_bots(game.new_initial_state(), bots,
                                   np.random.RandomState(0))


def test_can_play_exception_reaches_caller_and_replace():
  name = _unique_name("can_play_raises")

  def can_play(game, player):
    raise FactoryBoom("cannot decide")

  registry.register_bot(name, _random_factory, can_play)
  game = pyspiel.load_game("kuhn_poker")
  try:
    with pytest.raises(FactoryBoom, match="cannot decide"):
      pyspiel.bots_that_can_play_game(game, 0)
  finally:
    # Replace it, or every later bots_that_can_play_game call would raise.
    registry.register_bot(name, _fixed_factory, None, replace=True)
  assert name in pyspiel.bots_that_can_play_game(game, 0)
  assert isinstance(pyspiel.load_bot(name, game, 0), FixedIndexBot)


def test_duplicate_registration_is_rejected():
  with pytest.raises(ValueError, match="already registered.*replace=True"):
    registry.register_bot(RANDOM_BOT, _fixed_factory)
  with pytest.raises(ValueError, match="already registered in OpenSpiel"):
    registry.register_bot("uniform_random", _random_factory)
  with pytest.raises(ValueError, match="already registered in OpenSpiel"):
    registry.register_bot("uniform_random", _random_factory, replace=True)
  # Nothing changed.
  game = pyspiel.load_game("kuhn_poker")
  assert isinstance(pyspiel.load_bot(RANDOM_BOT, game, 0), UniformRandomBot)
  assert not isinstance(
      pyspiel.load_bot("uniform_random", game, 0, {"seed": 1}),
      UniformRandomBot)


def test_invalid_registrations_are_rejected():
  with pytest.raises(ValueError, match="invalid bot name"):
    registry.register_bot("bad(name", _random_factory)
  with pytest.raises(ValueError, match="invalid bot name"):
    registry.register_bot("", _random_factory)
  with pytest.raises(TypeError, match="callable"):
    registry.register_bot(_unique_name("not_callable"), 42)
  with pytest.raises(TypeError, match="callable"):
    registry.register_bot(_unique_name("bad_can_play"), _random_factory, 3)


def test_factory_returning_same_python_bot_twice():
  name = _unique_name("same_py_bot")
  bot = UniformRandomBot(0, 0)
  registry.register_bot(name, lambda g, p, params: bot)
  game = pyspiel.load_game("kuhn_poker")
  assert pyspiel.load_bot(name, game, 0) is bot
  with pytest.raises(ValueError, match=f"{name}.*new bot each call"):
    pyspiel.load_bot(name, game, 0)


def test_factory_returning_same_cpp_bot_twice():
  name = _unique_name("same_cpp_bot")
  bot = pyspiel.make_uniform_random_bot(0, 1)
  registry.register_bot(name, lambda g, p, params: bot)
  game = pyspiel.load_game("kuhn_poker")
  first = pyspiel.load_bot(name, game, 0)
  assert isinstance(first, pyspiel.Bot)
  # The first load moved the C++ bot into OpenSpiel's ownership; the second
  # cannot take it again and must fail cleanly.
  with pytest.raises(ValueError, match=f"{name}.*new bot each call"):
    pyspiel.load_bot(name, game, 0)
  assert first.step(game.new_initial_state().child(0).child(1)) in (0, 1)


def test_factory_returning_non_bot():
  name = _unique_name("not_a_bot")
  registry.register_bot(name, lambda g, p, params: "bot")
  with pytest.raises(TypeError, match=f"{name}.*pyspiel.Bot"):
    pyspiel.load_bot(name, pyspiel.load_game("kuhn_poker"), 0)


_SUBPROCESS_SCRIPT = textwrap.dedent("""
    import random
    import warnings
    warnings.simplefilter("always")  # would show a repeated warning

    import pyspiel
    from open_spiel_sog import registry

    class Bot(pyspiel.Bot):
      def __init__(self, player, seed):
        pyspiel.Bot.__init__(self)
        self.player, self.seed = player, seed
        self.rng = random.Random(seed)
      def restart(self): pass
      def restart_at(self, state): pass
      def inform_action(self, state, player_id, action): pass
      def step(self, state):
        return self.rng.choice(state.legal_actions(self.player))

    def factory(game, player, params):
      return Bot(player, params.get("seed", 0))

    registry.register_bot("sub_random", factory)
    registry.register_bot("sub_other", factory,
                          lambda g, p: g.num_players() == 2)
    registry.register_bot("sub_other", factory, replace=True)
    print("NATIVE", registry.using_native_registry())
    assert "sub_random" in pyspiel.registered_bots(), pyspiel.registered_bots()
    assert "uniform_random" in pyspiel.registered_bots()
    assert pyspiel.is_bot_registered("sub_random")
    assert not pyspiel.is_bot_registered("sub_missing")
    # registered by import open_spiel_sog
    ours = ("sog", "ismcts_br", "mcts", "ismcts", "cfr_policy", "oos", "dls",
            "scotland_yard_mcts")
    assert [n for n in registry.registered_by_us() if n not in ours] == [
        "sub_other", "sub_random"]
    game = pyspiel.load_game("kuhn_poker")
    assert "sub_random" in pyspiel.bots_that_can_play_game(game)
    assert "sub_random" in pyspiel.bots_that_can_play_game(game, 1)
    b0 = pyspiel.load_bot("sub_random(seed=3)", game, 0)
    b1 = pyspiel.load_bot("sub_random", game, 1, {"seed": 4})
    assert (type(b0).__name__, b0.seed, b1.seed) == ("Bot", 3, 4)
    rnd = pyspiel.load_bot("uniform_random(seed=1)", game, 1)
    for seed in range(3):
      for bots in ([b0, b1], [b0, rnd]):
        returns = pyspiel.evaluate_bots(game.new_initial_state(), bots, seed)
        assert sum(returns) == 0, returns
    KEEP_ALIVE_AT_EXIT = [b0, b1, rnd, factory]
    print("SCRIPT OK")
""")


def _run_script(tmp_path, extra_env: Dict[str, str]):
  script = tmp_path / "register_and_play.py"
  script.write_text(_SUBPROCESS_SCRIPT)
  env = dict(os.environ)
  env.pop("OPEN_SPIEL_SOG_DISABLE_SHIM", None)
  env.update(extra_env)
  env["PYTHONPATH"] = os.pathsep.join(
      [REPO_ROOT] + [p for p in [env.get("PYTHONPATH")] if p])
  return subprocess.run([sys.executable, str(script)], env=env, cwd=tmp_path,
                        capture_output=True, text=True, timeout=120,
                        check=False)


def _assert_clean_exit(proc):
  output = proc.stdout + proc.stderr
  assert proc.returncode == 0, output
  assert "SCRIPT OK" in proc.stdout, output
  for bad in ("terminate called", "Segmentation fault", "Fatal Python error",
              "Traceback"):
    assert bad not in output, output


def test_subprocess_native_registers_plays_and_exits_cleanly(tmp_path):
  proc = _run_script(tmp_path, {})
  _assert_clean_exit(proc)
  assert "NATIVE True" in proc.stdout
  assert "RuntimeWarning" not in proc.stderr, proc.stderr


def test_subprocess_fallback_works_and_warns_once(tmp_path):
  proc = _run_script(tmp_path, {"OPEN_SPIEL_SOG_DISABLE_SHIM": "1"})
  _assert_clean_exit(proc)
  assert "NATIVE False" in proc.stdout
  assert proc.stderr.count("RuntimeWarning") == 1, proc.stderr
  assert "OPEN_SPIEL_SOG_DISABLE_SHIM=1" in proc.stderr, proc.stderr
