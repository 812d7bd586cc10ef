"""What the Scotland Yard benchmarks (scotland_yard_mcts_validate.py,
scotland_yard_balance.py, scotland_yard_lc_table.py) share: one game between
registered bots (the starts drawn from the game's seed, each seat's bot
seeded from it, and how the game ended), and their results files' header
and default path."""

import datetime
import os
import platform
import random
import subprocess
import sys
import time

import pyspiel

from open_spiel_sog.games.scotland_yard import native

OUTCOMES = {1: "caught", 2: "Mr. X cannot move", 3: "Mr. X survived",
            4: "no detective can move"}


def play_bots(game: pyspiel.Game, seats: list[tuple[str, dict]],
              seed: int) -> dict:
  """One game: seat p (0 Mr. X, 1 the detectives) is the registered bot
  seats[p] = (name, params), seeded 2 * seed + p; the starts are drawn from
  `seed`."""
  cpu_start = time.process_time()
  bots = [pyspiel.load_bot(name, game, p, dict(params, seed=2 * seed + p))
          for p, (name, params) in enumerate(seats)]
  rng = random.Random(seed)
  state = game.new_initial_state()
  decisions = 0
  while not state.is_terminal():
    if state.is_chance_node():
      state.apply_action(rng.choice([a for a, _ in state.chance_outcomes()]))
      continue
    state.apply_action(bots[state.current_player()].step(state))
    decisions += 1
  view = native.state_view(state)
  return {"seed": seed, "detectives_win": state.returns()[1] > 0,
          "outcome": OUTCOMES[view.outcome], "rounds": len(view.log),
          "decisions": decisions,
          "cpu_seconds": round(time.process_time() - cpu_start, 3)}


def header(what: str) -> dict:
  """A results file's provenance: what it holds, the command, commit, date
  and machine."""
  return {
      "what": what,
      "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
      "commit": subprocess.run(["git", "rev-parse", "HEAD"],
                               capture_output=True, text=True).stdout.strip(),
      "date": datetime.date.today().isoformat(),
      "machine": platform.platform(),
      "cpu": platform.processor() or platform.machine(),
  }


def results_path(name: str, date: str) -> str:
  """benchmarks/results/scotland_yard/<name>_<date>.json."""
  return os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                      "scotland_yard", f"{name}_{date}.json")
