"""The example and benchmark binaries run end to end and keep their contract:
with --json the last line of stdout is one JSON object."""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(script, *flags):
  result = subprocess.run(
      [sys.executable, os.path.join(ROOT, script), *flags],
      capture_output=True, text=True, timeout=300, check=False)
  return result


def test_solve_prints_json_summary_and_converges():
  result = _run("examples/solve.py", "--game=kuhn_poker", "--iterations=500",
                "--eval_every=100", "--json", "--noprogress")
  assert result.returncode == 0, result.stderr
  summary = json.loads(result.stdout.strip().splitlines()[-1])
  assert summary["iterations"] == 500
  assert [it for it, _ in summary["exploitability"]] == [100, 200, 300, 400,
                                                         500]
  assert summary["final_exploitability"] < 2e-3
  assert summary["game_value"] == pytest.approx(-1 / 18, abs=2e-3)


def test_solve_rejects_unsupported_game_clearly():
  result = _run("examples/solve.py", "--game=kuhn_poker(players=3)",
                "--iterations=10")
  assert result.returncode != 0
  assert "two-player" in result.stderr
  assert "Traceback" not in result.stderr


def test_benchmark_reports_ratio_and_both_exploitabilities():
  result = _run("benchmarks/public_tree_cfr_vs_openspiel.py",
                "--game=kuhn_poker", "--iterations=200", "--repeats=1",
                "--json")
  assert result.returncode == 0, result.stderr
  summary = json.loads(result.stdout.strip().splitlines()[-1])
  assert summary["median_ratio"] > 0
  # Same algorithm, same iterations: both solvers reach a similar quality.
  assert summary["ours_exploitability"] < 5e-3
  assert summary["openspiel_exploitability"] < 5e-3


def test_game_coverage_records_plays_and_refusals():
  result = _run("benchmarks/game_coverage.py",
                "--games=breakthrough(rows=4,columns=3);kuhn_poker(players=3);"
                "tic_tac_toe", "--time_limit=0.05", "--simulations=20",
                "--max_moves=4", "--random_games=2", "--json")
  assert result.returncode == 0, result.stderr
  summary = json.loads(result.stdout.strip().splitlines()[-1])
  rows = {row["game"]: row for row in summary["rows"]}
  assert summary["games"] == 3
  breakthrough = rows["breakthrough(rows=4,columns=3)"]
  assert breakthrough["status"] == "plays"
  assert breakthrough["moves"] == 4 and breakthrough["stopped_at_cap"]
  assert breakthrough["vs_random_games"] == 2
  assert 0 < breakthrough["decision_max"] < 1.0
  # The child's peak memory in MiB (Python, pyspiel and numpy: tens of MiB).
  assert 50 < breakthrough["max_rss_mb"] < 20000
  # Refused with a one-line reason.
  refused = rows["kuhn_poker(players=3)"]
  assert refused["status"] == "error"
  assert refused["error"].startswith("ValueError: ")
  assert "two-player" in refused["error"]
  assert rows["tic_tac_toe"]["status"] == "plays"
  assert "| breakthrough(rows=4,columns=3) | plays |" in result.stdout
  assert f"| {breakthrough['max_rss_mb']} |" in result.stdout


def test_train_coverage_records_trains_fails_and_timeouts(tmp_path):
  output = tmp_path / "train_coverage.json"
  result = _run("benchmarks/train_coverage.py",
                "--games=kuhn_poker;kuhn_poker(players=3)", "--order_from=",
                "--time_limit_per_game=120", "--json", f"--output={output}")
  assert result.returncode == 0, result.stderr
  summary = json.loads(result.stdout.strip().splitlines()[-1])
  assert summary == json.loads(output.read_text())
  assert (summary["trains"], summary["fails"], summary["timeout"]) == (1, 1, 0)
  rows = {row["game"]: row for row in summary["rows"]}
  kuhn = rows["kuhn_poker"]
  assert kuhn["status"] == "trains" and kuhn["steps"] == 3
  assert kuhn["examples"] >= 24 and kuhn["games"] > 0 and kuhn["solves"] > 0
  assert kuhn["examples_per_s"] > 0 and kuhn["loss"] > 0
  # Refused with train.py's one-line reason, no traceback.
  refused = rows["kuhn_poker(players=3)"]
  assert refused["status"] == "fails" and "traceback" not in refused
  assert refused["error"].startswith("exit 2: train: ")
  assert "two-player" in refused["error"]
  assert "| kuhn_poker | public_states | trains (3 steps" in result.stdout
  # Stopped at the bound (here while train.py is still importing).
  result = _run("benchmarks/train_coverage.py", "--games=kuhn_poker",
                "--time_limit_per_game=1", "--grace=5", "--json")
  assert result.returncode == 0, result.stderr
  row = json.loads(result.stdout.strip().splitlines()[-1])["rows"][0]
  assert row["status"] == "timeout"
  assert row["error"].startswith("timeout after 1 s (")
  assert row["examples"] == 0 and row["steps"] == 0


def test_game_memory_reports_memory_and_decisions_over_a_game():
  result = _run("benchmarks/game_memory.py",
                "--game=breakthrough(rows=4,columns=3)", "--time_limit=0.05",
                "--max_moves=4", "--every=2", "--sog_params=engine=python",
                "--json")
  assert result.returncode == 0, result.stderr
  summary = json.loads(result.stdout.strip().splitlines()[-1])
  # (No game of 4x3 breakthrough ends before its fifth move: a pawn needs
  # three moves to cross.)
  assert summary["moves"] == 4 and not summary["terminal"]
  assert [row["move"] for row in summary["rows"]] == [2, 4]
  assert 50 < summary["peak_mb"] < 20000
  assert 0 < summary["decision_median"] <= summary["decision_max"] < 1.0
  # Every search starts at its own state and prunes what is above it: after
  # 2k decisions, player 0's path holds 2k - 2 one-history public states
  # and player 1's 2k - 1 (the opponent's decisions are not searched).
  assert [row["path_histories"] for row in summary["rows"]] == [1, 5]
  refused = _run("benchmarks/game_memory.py", "--game=kuhn_poker(players=3)")
  assert refused.returncode != 0
  assert "two-player" in refused.stderr and "Traceback" not in refused.stderr


def test_opening_values_reports_the_first_search_by_sample_size():
  """dark_hex 2x2 is won by the first player (OpenSpiel's CFR+ gives 1):
  the exact path's first search values it close to that, a bound above
  every public state gives the same numbers, and a sample of two
  histories a public state values it near nothing."""
  import pyspiel  # pylint: disable=g-import-not-at-top
  game = pyspiel.load_game("dark_hex(num_rows=2,num_cols=2)")
  solver = pyspiel.CFRPlusSolver(game)
  for _ in range(200):
    solver.evaluate_and_update_policy()
  value = pyspiel.expected_returns(game.new_initial_state(),
                                   solver.average_policy(), -1, True)[0]
  result = _run("benchmarks/opening_values.py",
                "--game=dark_hex(num_rows=2,num_cols=2)",
                "--max_histories=0,1000,2", "--simulations=50", "--seeds=2",
                "--json")
  assert result.returncode == 0, result.stderr
  summary = json.loads(result.stdout.strip().splitlines()[-1])
  rows = {(r["max_histories"], r["seed"]): r for r in summary["rows"]}
  assert len(rows) == 6
  for seed in range(2):
    exact = rows[(0, seed)]
    assert exact["value"] == pytest.approx(value, abs=0.05)
    assert rows[(1000, seed)]["value"] == exact["value"]
    assert rows[(1000, seed)]["policy"] == exact["policy"]
    assert sum(exact["policy"].values()) == pytest.approx(1.0)
    assert set(exact["action_values"]) == {"0", "1", "2", "3"}
    assert abs(rows[(2, seed)]["value"]) < 0.5
  assert "| 1000 |" in result.stdout
  refused = _run("benchmarks/opening_values.py", "--max_histories=-3")
  assert refused.returncode != 0
  assert "max_histories" in refused.stderr
  assert "Traceback" not in refused.stderr


def test_new_games_strength_splits_seats_and_times_the_opponent():
  result = _run("benchmarks/new_games_strength.py", "--games=kuhn_poker",
                "--num_games=4", "--time_limit=0.05", "--simulations=10",
                "--opponent=ismcts(simulations=1000000,time_limit=0.05,"
                "seed={seed})", "--params=averaging_power=2", "--json")
  assert result.returncode == 0, result.stderr
  row = json.loads(result.stdout.strip().splitlines()[-1])["rows"][0]
  assert row["player"] == "sog" and row["params"] == {"averaging_power": 2.0}
  assert len(row["returns"]) == 4
  for seat in (0, 1):
    assert sum(row[f"seat_{seat}"]) == 2
    assert row[f"seat_{seat}"][0] == sum(r > 0 for r in row["returns"][seat::2])
  assert [row["wins"], row["draws"], row["losses"]] == [
      a + b for a, b in zip(row["seat_0"], row["seat_1"])]
  # The opponent's time limit holds: it stops at 0.05 s, not at its cap.
  assert 0.04 < row["opponent_seconds_median"] < 0.2
  # Another bot in SoG's seat.
  result = _run("benchmarks/new_games_strength.py", "--games=kuhn_poker",
                "--num_games=2", "--player=ismcts(simulations=20,seed={seed})",
                "--opponent=uniform_random", "--json")
  assert result.returncode == 0, result.stderr
  row = json.loads(result.stdout.strip().splitlines()[-1])["rows"][0]
  assert row["player"] == "ismcts(simulations=20,seed={seed})"
  assert row["games"] == 2


@pytest.mark.parametrize("flags,message", [
    (("--params=seed=3",), "--params: seed is set by a flag of its own "
     "(--first_seed)"),
    (("--params=bogus=1",), "unknown parameter(s) 'bogus'"),
    (("--params=alpha",), "malformed entry 'alpha'"),
    (("--player=ismcts", "--params=alpha=0.3"), "with --player"),
])
def test_new_games_strength_rejects_bad_params_in_one_line(flags, message):
  result = _run("benchmarks/new_games_strength.py", "--games=kuhn_poker",
                *flags)
  assert result.returncode != 0
  assert "Traceback" not in result.stderr
  assert message in result.stderr, result.stderr


def test_simulation_cost_times_both_searches_side_by_side():
  result = _run("benchmarks/simulation_cost.py", "--games=connect_four",
                "--simulations=5,20", "--positions=2", "--repeats=1",
                "--engines=native,python",
                "--anchored_games=phantom_ttt;leduc_poker",
                "--anchored_seconds=0.2", "--json")
  assert result.returncode == 0, result.stderr
  out = json.loads(result.stdout.strip().splitlines()[-1])
  rows = out["rows"]
  assert [(r["simulations"], r["engine"]) for r in rows] == [
      (5, "native"), (5, "python"), (20, "native"), (20, "python")]
  for row in rows:
    assert row["decisions"] == 2
    assert row["sog_seconds"] > 0 and row["mcts_seconds"] > 0
    assert row["ratio"] == pytest.approx(row["sog_seconds"] /
                                         row["mcts_seconds"])
  anchored = out["anchored"][0]
  # (Rollouts by default: phantom_ttt's shipped network would otherwise
  # take the leaves, and the engines' own work would not be compared.)
  assert anchored["value_function"] == "rollout"
  assert anchored["native"]["histories"] > 0
  assert anchored["native"]["simulations"] >= 1
  assert anchored["python"]["iterations"] > 0
  assert anchored["histories_ratio"] == pytest.approx(
      anchored["native"]["histories"] / anchored["python"]["histories"])
  # (Leduc starts with chance draws: its first decision is searched.)
  leduc = out["anchored"][1]
  assert leduc["game"] == "leduc_poker"
  assert leduc["native"]["simulations"] >= 1
  refused = _run("benchmarks/simulation_cost.py", "--games=kuhn_poker")
  assert refused.returncode == 2
  assert "not a perfect-information game" in refused.stderr
  assert "Traceback" not in refused.stderr


def test_search_speed_times_a_network_search_against_cfr_plus():
  result = _run("benchmarks/search_speed.py", "--simulations=5", "--deals=1",
                "--repeats=1", "--cfr_iterations=3", "--cfr_repeats=2",
                "--json")
  assert result.returncode == 0, result.stderr
  summary = json.loads(result.stdout.strip().splitlines()[-1])
  assert summary["decisions"] == 2  # player 0's first, player 1's after
  assert summary["walks_per_simulation"] == 100
  assert len(summary["cfr_runs"]) == 2
  assert summary["ratio"] == pytest.approx(summary["sog_seconds"] /
                                           summary["cfr_seconds"])
  for decision in summary["policies"]:
    assert sum(p for _, p in decision["policy"]) == pytest.approx(1.0)
  refused = _run("benchmarks/search_speed.py", "--game=tic_tac_toe")
  assert refused.returncode == 2
  # (tic_tac_toe's shipped network is a policy-value network, not a CVPN.)
  assert "no CVPN network ships for tic_tac_toe()" in refused.stderr
  assert "Traceback" not in refused.stderr
  refused = _run("benchmarks/search_speed.py", "--walks_per_simulation=0")
  assert refused.returncode == 2
  assert "--walks_per_simulation must be at least 1" in refused.stderr


def test_sog_trained_passes_c_and_params_to_the_search():
  """--expansions_per_update and --params reach the bot: the figure is
  sog_exploitability's (OpenSpiel's exploitability) with the same
  parameters, and no goal is checked away from SoG(100, 1)'s defaults."""
  result = _run("benchmarks/sog_trained.py", "--games=kuhn_poker",
                "--seeds=0", "--simulations=20", "--expansions_per_update=0.5",
                "--params=alpha=0.25,alternating=false", "--noprogress",
                "--json")
  assert result.returncode == 0, result.stderr
  summary = json.loads(result.stdout.strip().splitlines()[-1])
  assert summary["settings"]["params"] == {"alpha": 0.25,
                                           "alternating": False}
  (row,) = summary["games"]
  assert row["goal"] is None and row["passed"] is None
  # Imported here: the other tests of this file only run subprocesses.
  from open_spiel_sog.evaluation.exploitability import sog_exploitability  # pylint: disable=g-import-not-at-top
  expected = sog_exploitability(
      "kuhn_poker", {"simulations": 20, "expansions_per_update": 0.5,
                     "alpha": 0.25, "alternating": False}, seeds=[0])
  assert row["values"] == pytest.approx(expected["values"], abs=1e-12)
  default = sog_exploitability("kuhn_poker", {"simulations": 20}, seeds=[0])
  assert row["values"] != pytest.approx(default["values"], abs=1e-6)
  for flag, message in [("--params=alpha=x", "--params: sog: parameter "
                                             "'alpha' must be of type float"),
                        ("--params=seed=3", "--params: seed is set by its "
                                            "own flag"),
                        ("--expansions_per_update=0",
                         "--expansions_per_update: sog: expansions_per_update"
                         " must be")]:
    refused = _run("benchmarks/sog_trained.py", "--games=kuhn_poker", flag)
    assert refused.returncode != 0
    assert message in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr


def test_sog_demo_scores_agents_and_plays_duplicate_head_to_head():
  # Imported here: the other tests of this file only run subprocesses.
  # pylint: disable-next=g-import-not-at-top
  from open_spiel_sog.evaluation.exploitability import sog_exploitability
  result = _run("examples/sog_demo.py", "--game=kuhn_poker",
                "--simulations=20", "--ismcts_simulations=50",
                "--match_game=tic_tac_toe", "--match_time_limit=0.02",
                "--match_games=2", "--seed=0", "--json", "--noprogress")
  assert result.returncode == 0, result.stderr
  summary = json.loads(result.stdout.strip().splitlines()[-1])
  assert summary["game"] == "kuhn_poker()"
  assert summary["seed"] == 0
  agents = {a["bot"]: a for a in summary["agents"]}
  assert [a["bot"] for a in summary["agents"]] == ["sog", "ismcts",
                                                    "uniform_random"]
  for agent in summary["agents"]:
    assert set(agent) >= {"name", "exploitability", "seconds"}
    assert agent["seconds"] >= 0
  # OpenSpiel's exploitability of the uniform policy in Kuhn poker: 11/24.
  assert agents["uniform_random"]["exploitability"] == pytest.approx(
      11 / 24, abs=1e-9)
  assert 0 <= agents["ismcts"]["exploitability"] <= 11 / 24 + 1e-9
  # SoG's policy construction is deterministic given its seed: the same
  # number in this process as in the demo's.
  expected = sog_exploitability("kuhn_poker", {"simulations": 20}, [0])
  assert agents["sog"]["exploitability"] == pytest.approx(expected["mean"],
                                                          abs=1e-9)
  match = summary["match"]
  assert match["game"] == "tic_tac_toe()" and match["games"] == 2
  assert match["bots"] == ["sog(time_limit=0.02)", "mcts(time_limit=0.02)"]
  assert match["wins"] + match["draws"] + match["losses"] == 2
  low, high = match["score_95"]
  assert low <= match["score"] <= high
  assert "match tic_tac_toe(): sog(time_limit=0.02) vs mcts" in result.stdout


@pytest.mark.parametrize("flag, message", [
    ("--game=no_such_game", "unknown game 'no_such_game'"),
    ("--game=kuhn_poker(players=3)", "two-player"),
    ("--simulations=-1", "--simulations"),
    ("--match_games=3", "--match_games must be even"),
    ("--match_time_limit=0", "--match_time_limit must be > 0"),
    ("--match_game=no_such_game", "--match_game: unknown game"),
    ("--match_opponent=no_such_bot", "unknown bot 'no_such_bot'"),
])
def test_sog_demo_rejects_bad_flags_in_one_line(flag, message):
  result = _run("examples/sog_demo.py", flag, "--noprogress")
  assert result.returncode != 0
  assert "Traceback" not in result.stderr
  errors = [line for line in result.stderr.splitlines()
            if line.startswith("sog_demo:")]
  assert len(errors) == 1 and message in errors[0], result.stderr


def test_depth_limited_prints_both_exploitabilities():
  result = _run("examples/depth_limited.py", "--game=leduc_poker",
                "--frontier=round", "--strategies=bias", "--k=4",
                "--blueprint_iterations=1000", "--json")
  assert result.returncode == 0, result.stderr
  summary = json.loads(result.stdout.strip().splitlines()[-1])
  assert summary["k"] == [4, 4]
  assert summary["blueprint_exploitability"] < 1e-3
  assert summary["exploitability"] <= 1e-3


def test_depth_limited_rejects_bad_input_clearly():
  for flags, message in [
      (["--game=kuhn_poker(players=3)"], "3 players"),
      (["--game=goofspiel"], "simultaneous moves"),
      (["--k=0"], "k must be >= 1")]:
    result = _run("examples/depth_limited.py", *flags)
    assert result.returncode != 0
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_jps_prints_start_and_final_per_seed():
  result = _run("examples/jps.py", "--game=jps_comm(length=3)", "--seeds=3",
                "--cfr_iterations=300", "--json")
  assert result.returncode == 0, result.stderr
  summary = json.loads(result.stdout.strip().splitlines()[-1])
  assert summary["game"] == "jps_comm(length=3)"
  assert len(summary["start"]) == len(summary["final"]) == 3
  assert summary["final"] == pytest.approx([1.0, 1.0, 1.0])
  assert all(f >= s for s, f in zip(summary["start"], summary["final"]))


def test_jps_rejects_a_zero_sum_game_clearly():
  result = _run("examples/jps.py", "--game=kuhn_poker")
  assert result.returncode != 0
  assert "IDENTICAL" in result.stderr
  assert "Traceback" not in result.stderr


def test_head_to_head_refuses_an_opponent_that_does_not_load():
  result = _run("benchmarks/head_to_head.py", "--game=phantom_ttt",
                "--opponent=random(seed={seed})", "--num_games=2")
  assert result.returncode == 2
  assert "--opponent=random(seed={seed}): Unknown bot 'random'" in (
      result.stderr)
  assert "uniform_random" in result.stderr.splitlines()[-1]
  assert "Traceback" not in result.stderr


def test_learning_curve_keeps_the_points_of_rows(tmp_path):
  """--rows: points already measured are kept, not played again (the
  snapshot here is an empty file, which a match would refuse), and drawn;
  a file that is not a list of points is refused in one line."""
  (tmp_path / "min_005.npz").write_bytes(b"")
  label = "vs ismcts(time_limit=0.1), 0.1 s each"
  point = {"label": label, "train_minutes": 5.0, "wins": 3, "draws": 1,
           "losses": 2, "score": 0.583, "score_95": [0.3, 0.8]}
  rows = tmp_path / "rows.json"
  rows.write_text(json.dumps([point]))
  flags = ["--game=phantom_ttt", f"--snapshots={tmp_path / 'min_*.npz'}",
           "--ladder=", "--time_limit=0.1",
           "--opponent=ismcts(time_limit={t},seed={seed})", "--num_games=2"]
  png = tmp_path / "curve.png"
  result = _run("benchmarks/learning_curve.py", *flags, f"--rows={rows}",
                f"--png={png}", "--json")
  assert result.returncode == 0, result.stderr
  assert json.loads(result.stdout.strip().splitlines()[-1]) == [point]
  assert png.stat().st_size > 0
  rows.write_text(json.dumps({"label": label}))
  refused = _run("benchmarks/learning_curve.py", *flags, f"--rows={rows}")
  assert refused.returncode != 0
  assert "is not a list of this script's points" in refused.stderr
  assert "Traceback" not in refused.stderr


def test_decision_collection_times_both_collections_in_one_game():
  result = _run("benchmarks/decision_collection.py", "--game=phantom_ttt",
                "--sog_params=value_function=rollout", "--time_limit=0.05",
                "--moves=4", "--json")
  assert result.returncode == 0, result.stderr
  out = json.loads(result.stdout.strip().splitlines()[-1])
  assert out["full"]["decisions"] == out["young"]["decisions"] == 2
  assert out["young"]["simulations"] >= 1 and out["full"]["simulations"] >= 1
  assert out["ratio"] == pytest.approx(out["young"]["simulations"] /
                                       out["full"]["simulations"])
  refused = _run("benchmarks/decision_collection.py",
                 "--sog_params=time_limit=1")
  assert refused.returncode != 0
  assert "time_limit is this script's own" in refused.stderr
  assert "Traceback" not in refused.stderr


def test_scotland_yard_balance_alternates_roles_and_resumes(tmp_path):
  """Each deal of a mixed pairing is played with either bot as Mr. X from
  the same starts; the summary counts every game once per role; a rerun
  of the same command plays nothing again; a bot that does not load is
  refused in one line."""
  out = tmp_path / "balance.json"
  flags = ["--game=scotland_yard(map=glasses)", "--games=4",
           "--time_limit=0.02", "--pairings=scotland_yard_mcts:ismcts",
           f"--out={out}"]
  result = _run("benchmarks/scotland_yard_balance.py", *flags)
  assert result.returncode == 0, result.stderr
  saved = json.loads(out.read_text())
  games = sorted(saved["per_game"], key=lambda g: g["index"])
  assert [g["mr_x"] for g in games] == ["scotland_yard_mcts", "ismcts"] * 2
  assert [g["seed"] for g in games] == [0, 0, 1, 1]
  (row,) = saved["rows"]
  assert row["games"] == 4
  assert row["detective_wins"] == sum(g["detectives_win"] for g in games)
  for bot in ("scotland_yard_mcts", "ismcts"):
    assert row[bot]["as_mr_x"][1] == row[bot]["as_detectives"][1] == 2
  mine = row["scotland_yard_mcts"]
  theirs = row["ismcts"]
  assert mine["as_mr_x"][0] + theirs["as_detectives"][0] == 2
  assert mine["score"] + theirs["score"] == 1.0
  again = _run("benchmarks/scotland_yard_balance.py", *flags)
  assert again.returncode == 0, again.stderr
  assert "0 games to play (4 already in" in again.stdout
  refused = _run("benchmarks/scotland_yard_balance.py", "--games=2",
                 "--pairings=ismcts:nobot", f"--out={tmp_path / 'x.json'}")
  assert refused.returncode != 0
  assert "--pairings: nobot does not load for seat" in refused.stderr
  assert "Traceback" not in refused.stderr
