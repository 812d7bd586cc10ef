"""A seeded search without a time limit repeats itself in every process.

Each bot below plays the first decisions of a self-play game (chance drawn
from a fixed seed) in two fresh processes whose string hashes differ
(PYTHONHASHSEED), so that neither the clock nor the iteration order of a
set of strings can decide a search. Every searched policy, value and action
must be the same to the last digit. The cases cover both paths of `sog`
(public states, exact or sampled, and the anchored subgame), a shipped
network (leduc_poker), a Python game (scotland_yard), the package's own
`oos` and `dls`, and the baselines docs/tournaments.md says repeat
themselves.
"""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (bot string, game string, decisions played).
CASES = [
    ("sog(simulations=50,seed=0)", "phantom_ttt", 3),
    ("sog(simulations=50,seed=0)", "dark_hex(num_rows=3,num_cols=3)", 3),
    ("sog(simulations=50,seed=0)", "connect_four", 3),
    ("sog(simulations=50,seed=0)", "leduc_poker", 3),
    ("sog(simulations=30,seed=0)", "scotland_yard(map=glasses)", 3),
    ("oos(simulations=200,seed=0)", "phantom_ttt", 3),
    ("dls(seed=0)", "kuhn_poker", 3),
    # The baselines docs/tournaments.md names reproducible.
    ("mcts(simulations=100,seed=0)", "tic_tac_toe", 3),
    ("cfr_policy(iterations=100,seed=0)", "kuhn_poker", 3),
    ("ismcts(backend=python,simulations=100,seed=0)", "leduc_poker", 3),
]

# Plays each case and prints one JSON line per case: every decision's
# played policy (floats by repr), action and, for sog, the searched policy
# and value of `last_decision()`.
_SCRIPT = r"""
import json, sys
import numpy as np
import pyspiel
import open_spiel_sog

for bot_string, game_string, decisions in json.loads(sys.argv[1]):
  game = pyspiel.load_game(game_string)
  bots = [pyspiel.load_bot(bot_string, game, p) for p in (0, 1)]
  rng = np.random.default_rng(1)
  state = game.new_initial_state()
  record = []
  while len(record) < decisions and not state.is_terminal():
    if state.is_chance_node():
      actions, probs = zip(*state.chance_outcomes())
      state.apply_action(actions[rng.choice(len(actions), p=probs)])
      continue
    player = state.current_player()
    policy, action = bots[player].step_with_policy(state)
    entry = {"action": int(action),
             "policy": [[int(a), repr(float(p))] for a, p in policy]}
    decision = getattr(bots[player], "last_decision", lambda: None)()
    if decision is not None:
      entry["searched"] = [[int(a), repr(float(p))]
                           for a, p in sorted(decision.policy.items())]
      entry["value"] = repr(float(decision.value))
    record.append(entry)
    for other in bots:
      if other is not bots[player]:
        other.inform_action(state, player, action)
    state.apply_action(action)
  print(json.dumps([bot_string, game_string, record]))
"""


def _play(hash_seed: str) -> dict[tuple[str, str], list]:
  env = dict(os.environ, PYTHONHASHSEED=hash_seed)
  result = subprocess.run(
      [sys.executable, "-c", _SCRIPT, json.dumps(CASES)], cwd=ROOT, env=env,
      capture_output=True, text=True, timeout=600, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  played = {}
  for line in result.stdout.splitlines():
    if line.startswith("["):
      bot, game, record = json.loads(line)
      played[(bot, game)] = record
  return played


@pytest.fixture(scope="module")
def two_processes():
  return _play("1"), _play("2")


@pytest.mark.parametrize("bot,game,decisions", CASES)
def test_a_seeded_search_repeats_itself_across_processes(two_processes, bot,
                                                         game, decisions):
  first, second = (played[(bot, game)] for played in two_processes)
  assert len(first) == decisions, first
  assert first == second
  if bot.startswith("sog"):
    assert all("value" in entry for entry in first)
