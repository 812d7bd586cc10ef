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
