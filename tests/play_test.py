"""examples/play.py: a human seat on stdin, SoG's printed analysis and
pictures, and the beliefs it reads (bots.sog.SoGBot.last_decision,
evaluation/beliefs.py) checked against OpenSpiel's own states."""

import json
import os
import subprocess
import sys

import numpy as np
import pyspiel
import pytest

import open_spiel_sog  # pylint: disable=unused-import
from open_spiel_sog.evaluation import beliefs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLAY = os.path.join(ROOT, "examples", "play.py")
# Kuhn's cards as play.py names them.
CARDS = "JQK"


def _play(stdin, *flags):
  return subprocess.run([sys.executable, PLAY, *flags], input=stdin,
                        capture_output=True, text=True, timeout=300,
                        check=False)


def test_a_scripted_human_plays_kuhn_against_sog_to_the_end():
  # Enough moves for any line of play: a bet, then a call if asked.
  result = _play("Bet\n1\n1\n", "--game=kuhn_poker", "--player0=human",
                 "--player1=sog", "--seed=3")
  assert result.returncode == 0, result.stderr
  out = result.stdout
  assert "player 0 (you), legal moves: 0 Pass, 1 Bet" in out
  assert "returns: " in out
  returns = [float(x) for x in
             out.split("returns: ")[1].splitlines()[0].split(" / ")]
  assert sum(returns) == 0 and abs(returns[0]) in (1, 2)
  assert "score after 1 game(s): player 0 (human)" in out
  # SoG's belief is shown at once; its policy and value (which tell its
  # card) only after the game.
  assert "belief (what chance dealt the opponent, over 2 histories)" in out
  after = out.split("what the bots played and searched:")[1]
  assert "searched policy:" in after and "value of its position:" in after
  assert "searched policy:" not in out.split(
      "what the bots played and searched:")[0]
  assert "Traceback" not in result.stderr
  # The shipped network ran JAX: its no-TPU start-up line is not shown.
  assert "Unable to initialize backend" not in result.stderr


def test_bad_moves_are_asked_again_with_a_reason():
  result = _play("7\nraise\n\nbet\n1\n1\n", "--game=kuhn_poker",
                 "--player0=human", "--player1=sog")
  assert result.returncode == 0, result.stderr
  out = result.stdout
  assert "7 is not a legal move here; legal: 0, 1" in out
  assert ("'raise' is neither a legal action index nor a legal move's name; "
          "legal: 0 Pass, 1 Bet") in out
  assert "returns: " in out  # "bet" (any case) was taken


@pytest.mark.parametrize("stdin", ["", "Pass\n"])
def test_end_of_input_ends_the_match_cleanly(stdin):
  result = _play(stdin, "--game=kuhn_poker", "--player0=human",
                 "--player1=sog", "--games=3", "--json")
  assert result.returncode == 0, result.stderr
  assert "Traceback" not in result.stderr
  assert "match stopped (end of input)" in result.stderr
  summary = json.loads(result.stdout.strip().splitlines()[-1])
  assert summary["stopped"] == "end of input"
  assert summary["games"] == len(summary["returns"]) <= 1


def test_bad_flags_are_one_line_errors():
  result = _play("", "--game=kuhn_poker", "--player1=no_such_bot")
  assert result.returncode == 2
  assert "play: unknown bot 'no_such_bot'" in result.stderr
  assert "Traceback" not in result.stderr
  result = _play("", "--game=kuhn_poker(players=3)")
  assert result.returncode == 2 and "two-player games only" in result.stderr
  # A bot that does not load: its reason, "play:" once, no JAX start-up line.
  result = _play("", "--game=kuhn_poker", "--player0=sog(simulatoins=3)")
  assert result.returncode == 2
  lines = [l for l in result.stderr.splitlines() if "play:" in l]
  assert len(lines) == 1, result.stderr
  assert lines[0].startswith("play: cannot load bot 'sog(simulatoins=3)': "
                             "sog: unknown parameter(s) 'simulatoins'")


def _png_count(path):
  names = sorted(os.listdir(path))
  for name in names:
    with open(os.path.join(path, name), "rb") as f:
      assert f.read(8) == b"\x89PNG\r\n\x1a\n", name
  return len(names)


@pytest.mark.parametrize("game,sog_seat,kind", [
    ("phantom_ttt", 0, "board"),
    ("scotland_yard(map=glasses)", 1, "mrx"),
])
def test_png_dir_writes_one_picture_per_sog_decision(tmp_path, game,
                                                     sog_seat, kind):
  seats = ["uniform_random", "uniform_random"]
  seats[sog_seat] = "sog(time_limit=0.2)"
  result = _play("", f"--game={game}", f"--player0={seats[0]}",
                 f"--player1={seats[1]}", f"--png_dir={tmp_path}", "--json")
  assert result.returncode == 0, result.stderr
  summary = json.loads(result.stdout.strip().splitlines()[-1])
  # The SoG moves the text announces, counted apart from the pictures.
  moves = result.stderr.count(f"player {sog_seat} (sog(time_limit=0.2)) "
                              "plays ")
  assert moves >= 2
  assert _png_count(tmp_path) == moves == len(summary["pictures"])
  assert {d["belief_kind"] for d in summary["decisions"]} == {kind}


def _deal_states(game, player, information_state):
  """OpenSpiel's histories of `player`'s `information_state` (Kuhn: after
  the deal and the given bets), each with its chance probability."""
  out = []

  def walk(state, chance):
    if state.is_chance_node():
      for a, p in state.chance_outcomes():
        walk(state.child(a), chance * p)
      return
    if state.information_state_string(player) == information_state:
      out.append((state, chance))
      return
    if state.is_terminal():
      return
    for a in state.legal_actions():
      walk(state.child(a), chance)

  walk(game.new_initial_state(), 1.0)
  return out


@pytest.mark.parametrize("cards,moves,sog", [
    ((0, 1), [], 0),        # SoG (J) first to act: chance alone
    ((2, 1), [1], 1),       # SoG (Q) facing a bet
    ((1, 0), [1], 1),       # SoG (J) facing a bet
    ((0, 2), [0, 1], 0),    # SoG (J) passed and faces a bet
])
def test_kuhn_belief_is_the_reach_weighted_belief_of_openspiel_states(
    cards, moves, sog):
  game = pyspiel.load_game("kuhn_poker")
  bot = pyspiel.load_bot("sog", game, sog, {"seed": 1})
  state = game.new_initial_state()
  for card in cards:
    state.apply_action(card)
  for action in moves:
    player = state.current_player()
    if player == sog:
      # The bot searches its move; the script's move (one its policy
      # gives weight to) is played.
      assert bot.get_policy(state)[action][1] > 0.05
    else:
      bot.inform_action(state, player, action)
    state.apply_action(action)
  bot.step(state)
  decision = bot.last_decision()
  opponent = 1 - sog
  # From OpenSpiel's states: every history of the bot's infostate, weighed
  # by its chance probability and the opponent's reach there.
  expected = {}
  for h, chance in _deal_states(game, sog,
                                state.information_state_string(sog)):
    card = CARDS[h.history()[opponent]]
    reach = decision.opponent_reach[h.information_state_string(opponent)]
    expected[card] = expected.get(card, 0.0) + chance * reach
  total = sum(expected.values())
  expected = {c: w / total for c, w in expected.items()}
  view = beliefs.view(game, decision.belief)
  assert view.kind == "chance"
  assert dict(view.parts) == pytest.approx(expected, abs=1e-9)
  assert sorted(expected) == sorted(CARDS[c] for c in range(3)
                                    if c != cards[sog])
  if not moves:
    assert dict(view.parts) == pytest.approx({c: 0.5 for c in expected})
  assert sum(decision.policy.values()) == pytest.approx(1.0)


def test_kuhn_value_is_the_expected_return_under_the_search():
  # SoG holding J facing a bet: folding loses 1, calling loses 2, so its
  # expected return lies in [-2, -1]; holding K, calling wins 2.
  game = pyspiel.load_game("kuhn_poker")
  values = {}
  for card, other in ((0, 1), (2, 1)):
    bot = pyspiel.load_bot("sog", game, 1, {})
    state = game.new_initial_state()
    state.apply_action(other)
    state.apply_action(card)
    bot.inform_action(state, 0, 1)
    state.apply_action(1)
    bot.step(state)
    values[card] = bot.last_decision().value
  assert -2.0 - 1e-6 <= values[0] <= -1.0 + 1e-6
  assert values[2] == pytest.approx(2.0, abs=0.05)


def test_anchored_belief_holds_only_histories_of_the_bots_infostate():
  game = pyspiel.load_game("phantom_ttt")
  bot = pyspiel.load_bot("sog", game, 1, {"subgame": "anchored",
                                          "time_limit": 0.3})
  state = game.new_initial_state()
  rng = np.random.default_rng(0)
  seen = 0
  while not state.is_terminal() and seen < 2:
    if state.current_player() == 1:
      action = bot.step(state)
      decision = bot.last_decision()
      seen += 1
      key = state.information_state_string(1)
      assert all(h.information_state_string(1) == key
                 for h in decision.belief.histories)
      assert decision.belief.probabilities.sum() == pytest.approx(1.0)
      view = beliefs.view(game, decision.belief)
      # At o's k-th decision x has placed k stones in every history, so the
      # cells' probabilities of an x stone sum to k.
      assert view.cells.sum() == pytest.approx(seen)
    else:
      action = int(rng.choice(state.legal_actions()))
      bot.inform_action(state, 0, action)
    state.apply_action(action)
  assert seen == 2
