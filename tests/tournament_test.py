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
from open_spiel.python import policy as os_policy
from open_spiel.python.algorithms import expected_game_score

import open_spiel_sog  # registers the package's bots  # pylint: disable=unused-import
from open_spiel_sog import registry
from open_spiel_sog.evaluation import tournament

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# Seeded: without a seed, OpenSpiel's uniform_random draws a fresh one at
# every load, and the games are not reproducible.
UNIFORM = "uniform_random(seed=2)"
CFR = "cfr_policy(iterations=300)"


@pytest.fixture(scope="module")
def kuhn_result():
  return tournament.round_robin(
      "kuhn_poker", f"{CFR};{UNIFORM};sog(simulations=10)", games_per_pair=60,
      seed=3, elo_bootstrap=40, progress=False)


@pytest.fixture(scope="module")
def fixed_policy_result():
  """CFR+'s average policy against uniform random, 2,000 deals (a second)."""
  return tournament.round_robin("kuhn_poker", f"{CFR};{UNIFORM}",
                                games_per_pair=2000, seed=5, elo_bootstrap=20,
                                progress=False)


def _duplicate_totals(result):
  """{(a, b): [a's total return over each deal's two games]} for a != b,
  from the raw games."""
  totals = {}
  for g in result["games"]:
    for seat, label in enumerate(g["seats"]):
      key = (label, g["seats"][1 - seat])
      totals.setdefault(key, {}).setdefault(g["deal"], 0.0)
      totals[key][g["deal"]] += g["returns"][seat]
  return {key: np.asarray([t[d] for d in sorted(t)])
          for key, t in totals.items()}


def test_mean_returns_match_openspiels_policy_values(fixed_policy_result):
  """Fixed-policy bots: the mean returns in each seat and the table's
  duplicate mean lie within 3 standard errors of their exact expected values
  (OpenSpiel's policy_value of CFR+'s average policy, solved here with
  OpenSpiel's CFRPlusSolver, against the uniform policy)."""
  game = pyspiel.load_game("kuhn_poker")
  solver = pyspiel.CFRPlusSolver(game)
  for _ in range(300):
    solver.evaluate_and_update_policy()
  cfr = os_policy.pyspiel_policy_to_python_policy(
      game, solver.tabular_average_policy())
  uniform = os_policy.UniformRandomPolicy(game)
  root = game.new_initial_state()
  exact = [expected_game_score.policy_value(root, [cfr, uniform])[0],
           expected_game_score.policy_value(root, [uniform, cfr])[1]]
  games = fixed_policy_result["games"]
  for seat in range(2):
    x = np.asarray([g["returns"][seat] for g in games
                    if g["seats"][seat] == CFR])
    assert len(x) == 2000
    se = x.std(ddof=1) / math.sqrt(len(x))
    assert abs(x.mean() - exact[seat]) <= 3 * se, (seat, x.mean(), exact, se)
    # Seats swapped, the mean would be the other bot's: far outside.
    assert abs(-exact[1 - seat] - exact[seat]) > 6 * se
  x = _duplicate_totals(fixed_policy_result)[(CFR, UNIFORM)] / 2
  se = x.std(ddof=1) / math.sqrt(len(x))
  bots = fixed_policy_result["bots"]
  mean = fixed_policy_result["mean"][bots.index(CFR)][bots.index(UNIFORM)]
  assert abs(mean - np.mean(exact)) <= 3 * se, (mean, exact, se)
  assert np.mean(exact) > 6 * se  # a sign error would show


@pytest.mark.parametrize("fixture", ["kuhn_result", "fixed_policy_result"])
def test_table_is_the_mean_over_deals_of_both_seat_orders(fixture, request):
  """The table, recomputed from the raw games: bot a's mean over deals of
  its mean return in the deal's two games, and 1.96 standard errors."""
  result = request.getfixturevalue(fixture)
  bots = result["bots"]
  # Every pair plays every deal once in each seat order.
  seat_orders = {}
  for g in result["games"]:
    seat_orders.setdefault((frozenset(g["seats"]), g["deal"]), []).append(
        tuple(g["seats"]))
  pairs = len(bots) * (len(bots) - 1) // 2
  assert len(seat_orders) == pairs * result["games_per_pair"]
  for orders in seat_orders.values():
    assert sorted(orders) == sorted([orders[0], orders[0][::-1]])
  totals = _duplicate_totals(result)
  assert set(totals) == {(a, b) for a in bots for b in bots if a != b}
  for (a, b), t in totals.items():
    x = t / 2
    assert len(x) == result["games_per_pair"]
    i, j = bots.index(a), bots.index(b)
    assert result["mean"][i][j] == pytest.approx(x.mean(), abs=1e-12)
    assert result["ci95"][i][j] == pytest.approx(
        1.96 * x.std(ddof=1) / math.sqrt(len(x)), rel=1e-9)


@pytest.mark.parametrize("fixture", ["kuhn_result", "fixed_policy_result"])
def test_elo_is_the_bradley_terry_fit_of_the_duplicate_matches(fixture,
                                                               request):
  """Elo, refitted here by maximum likelihood (scipy) from the raw games:
  every deal is a match that a wins when its total over the two games is
  positive (a draw, half a win, when it is zero), P(a beats b) = 1 / (1 +
  10^((R_b - R_a) / 400)), ratings of mean 0."""
  from scipy import optimize  # pylint: disable=g-import-not-at-top
  result = request.getfixturevalue(fixture)
  bots = result["bots"]
  pairs, scores = [], []
  for (a, b), t in _duplicate_totals(result).items():
    if bots.index(a) < bots.index(b):
      for total in t:
        pairs.append((bots.index(a), bots.index(b)))
        scores.append(1.0 if total > 0 else 0.0 if total < 0 else 0.5)
  pairs, scores = np.asarray(pairs), np.asarray(scores)
  # Every pair has wins both ways (or draws), so the maximum exists.
  for key in set(map(tuple, pairs.tolist())):
    s = scores[(pairs == key).all(axis=1)]
    assert 0 < s.mean() < 1, (key, s.mean())

  def negative_log_likelihood(r):
    d = (r[pairs[:, 0]] - r[pairs[:, 1]]) * math.log(10) / 400
    return float(np.sum(scores * np.logaddexp(0, -d) +
                        (1 - scores) * np.logaddexp(0, d)))

  fit = optimize.minimize(negative_log_likelihood, np.zeros(len(bots)),
                          method="BFGS", options={"gtol": 1e-8})
  elo = fit.x - fit.x.mean()
  for k, label in enumerate(bots):
    assert result["elo"][label] == pytest.approx(elo[k], abs=0.5), (
        label, result["elo"], elo)
    lo, hi = result["elo_ci95"][label]
    assert lo <= result["elo"][label] + 1e-6 and hi >= lo


class _Recorder(pyspiel.Bot):
  """Plays uniformly at random and logs, per game, the history it sees (the
  states it acts at and the moves it is told of) in `_RECORDS`."""

  def __init__(self, tag, player):
    pyspiel.Bot.__init__(self)
    self._tag, self._player = tag, player
    self._rng = np.random.default_rng([ord(c) for c in tag] + [player])
    self._game = None

  def restart(self):
    self._game = {"tag": self._tag, "player": self._player, "history": []}
    _RECORDS.append(self._game)

  def restart_at(self, state):
    del state
    self.restart()

  def step(self, state):
    legal = state.legal_actions()
    action = legal[int(self._rng.integers(len(legal)))]
    self._game["history"] = state.history() + [action]
    return action

  def inform_action(self, state, player_id, action):
    del player_id
    self._game["history"] = state.history() + [action]

  def provides_policy(self):
    return False


_RECORDS = []


def test_duplicate_games_of_a_deal_see_the_same_chance_outcomes():
  """Leduc between two recording bots: each game is played by the bots its
  record names, in the recorded seats, its recorded returns are OpenSpiel's
  for the history the bots saw, and the two games of a deal draw the same
  cards (the public card too, where both games get to it), while the deals
  differ."""
  registry.register_bot("tournament_test_recorder",
                        lambda game, player, params: _Recorder(
                            params["tag"], player), replace=True)
  del _RECORDS[:]
  game = pyspiel.load_game("leduc_poker")
  labels = [f"tournament_test_recorder(tag={t})" for t in ("a", "b")]
  result = tournament.round_robin(game, labels, games_per_pair=100, seed=4,
                                  elo_bootstrap=0, progress=False)
  games = result["games"]
  assert len(_RECORDS) == 2 * len(games) == 400
  chance = {}
  for k, g in enumerate(games):
    seen = _RECORDS[2 * k:2 * k + 2]
    for seat in range(2):
      assert seen[seat]["player"] == seat
      assert g["seats"][seat] == labels["ab".index(seen[seat]["tag"])]
    assert seen[0]["history"] == seen[1]["history"]
    state = game.new_initial_state()
    outcomes = []
    for a in seen[0]["history"]:
      if state.is_chance_node():
        outcomes.append(a)
      state.apply_action(a)
    assert state.is_terminal()
    assert g["returns"] == state.returns()
    chance.setdefault(g["deal"], []).append(outcomes)
  both_public = 0
  for first, second in chance.values():
    common = min(len(first), len(second))
    assert first[:common] == second[:common], (first, second)
    both_public += common == 3
  assert both_public >= 10
  # 30 ordered pairs of private cards: 100 deals show most of them.
  assert len({tuple(o[0][:2]) for o in chance.values()}) >= 20


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


def test_wilson_interval_matches_the_textbook_values():
  # 94 of 100: Wilson's 95% interval is [0.8752, 0.9722]; none of 10:
  # [0, 0.2775]; an empty sample says nothing.
  low, high = tournament.wilson_interval(94, 100)
  assert (round(low, 4), round(high, 4)) == (0.8752, 0.9722)
  low, high = tournament.wilson_interval(0, 10)
  assert low == 0.0 and round(high, 4) == 0.2775
  assert tournament.wilson_interval(0, 0) == (0.0, 1.0)


def test_duplicate_match_scores_each_seat():
  """Both sides play the first legal square: in tic_tac_toe x then holds 0,
  2, 4 and 6 and wins on the 2-4-6 diagonal, so the bot wins every game in
  seat 0 and loses every one in seat 1 (OpenSpiel's rules decide)."""
  game = pyspiel.load_game("tic_tac_toe")
  first = lambda seat, k: pyspiel.load_bot(
      "fixed_action_preference", game, seat, {"actions": "0:1:2:3:4:5:6:7:8"})
  match = tournament.duplicate_match(game, first, first, 6)
  assert (match["wins"], match["draws"], match["losses"]) == (3, 0, 3)
  assert match["seat_scores"] == [1.0, 0.0] and match["score"] == 0.5
  assert match["score_95"] == pytest.approx(
      list(tournament.wilson_interval(3, 6)))
  with pytest.raises(ValueError, match="games must be even"):
    tournament.duplicate_match(game, first, first, 3)
