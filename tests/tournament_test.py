"""Round-robin tournaments (open_spiel_sog.evaluation.tournament) and
examples/round_robin.py."""

import json
import math
import os
import subprocess
import sys

import numpy as np
import pyspiel
import pytest

import open_spiel_sog  # registers the package's bots  # pylint: disable=unused-import
from open_spiel_sog.evaluation import tournament

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def kuhn_result():
  return tournament.round_robin(
      "kuhn_poker", "cfr_policy(iterations=300);uniform_random;"
      "sog(simulations=10)", games_per_pair=60, seed=3, elo_bootstrap=40,
      progress=False)


def test_cfr_policy_does_not_lose_to_uniform_random(kuhn_result):
  bots = kuhn_result["bots"]
  i, j = bots.index("cfr_policy(iterations=300)"), bots.index("uniform_random")
  mean, half = kuhn_result["mean"][i][j], kuhn_result["ci95"][i][j]
  assert math.isfinite(half) and half > 0
  assert mean >= -half, (mean, half)
  assert kuhn_result["mean"][j][i] == pytest.approx(-mean)


def test_every_pair_plays_every_deal_in_both_seats_with_the_same_chance(
    kuhn_result):
  games = kuhn_result["games"]
  assert len(games) == 3 * 60 * 2
  by_deal = {}
  for g in games:
    assert sum(g["returns"]) == pytest.approx(0.0)
    pair = tuple(sorted(g["seats"]))
    by_deal.setdefault((pair, g["deal"]), []).append(g)
  for (pair, _), both in by_deal.items():
    assert len(both) == 2
    assert both[0]["seats"] == list(reversed(both[1]["seats"]))
    assert both[0]["chance_seed"] == both[1]["chance_seed"]
    assert set(both[0]["seats"]) == set(pair)


def test_duplicate_play_deals_the_same_cards_in_both_seat_orders():
  game = pyspiel.load_game("kuhn_poker")
  bots = [pyspiel.make_uniform_random_bot(p, 1) for p in (0, 1)]
  for seed in range(5):
    deals = []
    for _ in range(2):
      rng = np.random.default_rng(seed)
      state = game.new_initial_state()
      while state.is_chance_node():
        state.apply_action(tournament._chance(state, rng))  # pylint: disable=protected-access
      deals.append(state.history())
    assert deals[0] == deals[1]
    assert len(tournament.play_game(game, bots, seed)) == 2


def test_elo_ordering_agrees_with_the_pairwise_scores(kuhn_result):
  """Elo is fitted to duplicate matches (a deal's two games): where one bot
  beats another head to head and does at least as well against the third,
  it is rated higher."""
  bots = kuhn_result["bots"]
  totals = {}
  for g in kuhn_result["games"]:
    for seat, label in enumerate(g["seats"]):
      key = (label, g["seats"][1 - seat], g["deal"])
      totals[key] = totals.get(key, 0.0) + g["returns"][seat]
  scores = {}
  for (a, b, _), total in totals.items():
    scores.setdefault((a, b), []).append(
        1.0 if total > 0 else 0.0 if total < 0 else 0.5)
  checked = 0
  for a in bots:
    for b in bots:
      c = [x for x in bots if x not in (a, b)]
      if a != b and np.mean(scores[(a, b)]) > 0.5 and np.mean(
          scores[(a, c[0])]) >= np.mean(scores[(b, c[0])]):
        assert kuhn_result["elo"][a] > kuhn_result["elo"][b], (a, b)
        checked += 1
  assert checked >= 1
  assert sum(kuhn_result["elo"].values()) == pytest.approx(0.0, abs=1e-6)
  for label, (lo, hi) in kuhn_result["elo_ci95"].items():
    assert lo <= kuhn_result["elo"][label] + 1e-6 and hi >= lo


def test_summarize_rebuilds_the_tables_from_the_games(kuhn_result):
  again = tournament.summarize(kuhn_result["game"], kuhn_result["bots"],
                               kuhn_result["games"], seed=3, elo_bootstrap=40)
  assert again["mean"] == kuhn_result["mean"]
  assert again["elo"] == kuhn_result["elo"]
  assert again["games_per_pair"] == 60


def test_fit_elo_recovers_the_logistic_rating_difference():
  # A wins 3 of every 4 games against B: 400 * log10(3) = 190.8 Elo apart.
  games = [(0, 1, 1.0)] * 300 + [(0, 1, 0.0)] * 100
  elo = tournament.fit_elo(2, games)
  assert elo[0] - elo[1] == pytest.approx(400 * math.log10(3), abs=1.0)
  assert elo.sum() == pytest.approx(0.0, abs=1e-9)
  # Draws count half: all draws means equal ratings.
  assert np.allclose(tournament.fit_elo(2, [(0, 1, 0.5)] * 10), 0.0)


@pytest.mark.parametrize("bots,message", [
    ("uniform_random;no_such_bot", "unknown bot 'no_such_bot'"),
    ("uniform_random", "at least two bots"),
    ("uniform_random;uniform_random", "listed twice"),
    ("uniform_random;sog(simulations=bad)", "cannot load bot"),
    ("uniform_random;sog(nonsense=1)", "nonsense"),
    ("uniform_random;mcts", "cannot play"),
])
def test_bad_bots_are_rejected_clearly(bots, message):
  with pytest.raises(ValueError, match=message):
    tournament.round_robin("kuhn_poker", bots, games_per_pair=1,
                           progress=False)


def _round_robin_py(*flags):
  return subprocess.run(
      [sys.executable, os.path.join(ROOT, "examples", "round_robin.py"),
       *flags], capture_output=True, text=True, timeout=300, check=False)


def test_example_writes_every_game_table_and_heatmap(tmp_path):
  out = str(tmp_path / "rr")
  result = _round_robin_py("--game=kuhn_poker",
                           "--bots=cfr_policy(iterations=100);uniform_random",
                           "--games_per_pair=10", "--elo_bootstrap=10",
                           f"--out={out}", "--json", "--noprogress")
  assert result.returncode == 0, result.stderr
  summary = json.loads(result.stdout.strip().splitlines()[-1])
  assert summary["bots"] == ["cfr_policy(iterations=100)", "uniform_random"]
  with open(os.path.join(out, "results.json")) as f:
    assert len(json.load(f)["games"]) == 20
  with open(os.path.join(out, "heatmap.png"), "rb") as f:
    assert f.read(8) == b"\x89PNG\r\n\x1a\n"
  assert "Elo" in open(os.path.join(out, "table.txt")).read()
  again = _round_robin_py(f"--results={out}/results.json", "--elo_bootstrap=10",
                          "--json", "--noprogress")
  assert again.returncode == 0, again.stderr
  resummarized = json.loads(again.stdout.strip().splitlines()[-1])
  assert resummarized["mean"] == summary["mean"]
  assert resummarized["elo"] == summary["elo"]
  bad = _round_robin_py(f"--results={out}/table.txt", "--noprogress")
  assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_example_rejects_a_bad_bot_without_traceback():
  result = _round_robin_py("--game=kuhn_poker", "--bots=uniform_random;nope",
                           "--games_per_pair=1", "--noprogress")
  assert result.returncode == 2
  assert "unknown bot 'nope'" in result.stderr
  assert "Traceback" not in result.stderr
