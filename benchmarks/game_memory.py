r"""Memory and decision time over one long game of SoG against SoG.

  python benchmarks/game_memory.py --game=kriegspiel --max_moves=200 --json

Plays one game of `pyspiel.load_bot("sog", ...)` against itself (one bot per
seat, both in this process, as `pyspiel.evaluate_bots` plays them: step,
then inform_action; chance outcomes drawn by --seed) and prints, every
--every decisions, the process's resident memory (as the observer's memory
guard reads it), the peak during that decision (`VmHWM`, reset before each
decision), the decision's seconds, the public states the two observers hold
and their histories (on the pruned
path above the search floor, held or not, and elsewhere). At the end: the
whole game's peak, the slowest and the median decision and how many passed
1.1 times the time limit. Linux only (it reads and resets /proc/self's
memory figures). Progress goes to stderr; --json adds one JSON object on the
last line of stdout.
"""

import json
import statistics
import sys
import time

from absl import app
from absl import flags
import numpy as np
import pyspiel

import open_spiel_sog  # registers "sog"  # pylint: disable=unused-import
from open_spiel_sog.public_state import resident_memory

_GAME = flags.DEFINE_string("game", "kriegspiel", "Game string.")
_MAX_MOVES = flags.DEFINE_integer(
    "max_moves", 200, "Player decisions after which the game is stopped.")
_TIME_LIMIT = flags.DEFINE_float("time_limit", 1.0,
                                 "sog's time_limit (seconds per decision).")
_EVERY = flags.DEFINE_integer("every", 10,
                              "Print a line every this many decisions.")
_SEED = flags.DEFINE_integer("seed", 0,
                             "Seed of the chance outcomes and the bots.")
_SOG_PARAMS = flags.DEFINE_string(
    "sog_params", "", "Other sog parameters, 'name=value,...' (e.g. "
    "engine=python: the public-state path, whose public states the rows "
    "count; the native engine holds none).")
_JSON = flags.DEFINE_bool("json", False,
                          "Also print the figures as JSON on the last line.")


def _peak_mb() -> float:
  """The process's peak resident memory since the last `_reset_peak`
  (`VmHWM` of /proc/self/status) in MB."""
  with open("/proc/self/status") as f:
    for line in f:
      if line.startswith("VmHWM:"):
        return int(line.split()[1]) / 1024
  raise OSError("/proc/self/status has no VmHWM")


def _rss_mb() -> float:
  """Resident memory now, as the observer's memory guard reads it."""
  rss = resident_memory()
  if rss is None:
    raise OSError("/proc/self/statm cannot be read")
  return rss / 2**20


def _reset_peak() -> None:
  """Resets VmHWM to the current resident memory (Linux's clear_refs)."""
  with open("/proc/self/clear_refs", "w") as f:
    f.write("5")


def _held(bots) -> dict:
  """Public states and histories the bots' observers hold, and the
  histories of the anchored searches' kept trees (with the infostate
  policies they remember)."""
  states = path = elsewhere = tree = remembered = 0
  for bot in bots:
    if bot.anchored is not None:
      if bot.anchored.tree is not None:
        tree += len(bot.anchored.tree)
      remembered += len(bot.anchored.policies)
    observer = bot.observer
    for ps in observer.public_states:
      states += 1
      if observer.searchable(ps):
        elsewhere += len(ps.histories)
      else:
        path += len(ps.histories)
  return dict(public_states=states, path_histories=path,
              search_histories=elsewhere, tree_histories=tree,
              remembered_policies=remembered)


def main(argv):
  del argv
  try:
    _rss_mb()
    _peak_mb()
    _reset_peak()
  except OSError as e:
    raise app.UsageError(f"game_memory.py needs Linux's /proc/self ({e})")
  if _MAX_MOVES.value < 1 or _EVERY.value < 1:
    raise app.UsageError("--max_moves and --every must be at least 1")
  try:
    game = pyspiel.load_game(_GAME.value)
    extra = f",{_SOG_PARAMS.value}" if _SOG_PARAMS.value else ""
    bots = [pyspiel.load_bot(
        f"sog(time_limit={_TIME_LIMIT.value},seed={_SEED.value + p}{extra})",
        game, p) for p in range(2)]
  except (ValueError, pyspiel.SpielError) as e:
    raise app.UsageError(f"--game={_GAME.value}: {e}")
  rng = np.random.default_rng(_SEED.value)
  state = game.new_initial_state()
  seconds, rows, peak = [], [], 0.0
  while not state.is_terminal() and len(seconds) < _MAX_MOVES.value:
    if state.is_chance_node():
      actions, probs = zip(*state.chance_outcomes())
      state.apply_action(int(rng.choice(actions, p=probs)))
      continue
    if state.is_simultaneous_node():
      raise app.UsageError(f"{game}: simultaneous games are not supported "
                           "here (use benchmarks/game_coverage.py)")
    player = state.current_player()
    _reset_peak()
    start = time.perf_counter()
    action = bots[player].step(state)
    seconds.append(time.perf_counter() - start)
    bots[1 - player].inform_action(state, player, action)
    state.apply_action(action)
    decision_peak = _peak_mb()
    peak = max(peak, decision_peak)
    if len(seconds) % _EVERY.value == 0:
      row = dict(move=len(seconds), depth=len(state.history()),
                 seconds=round(seconds[-1], 3),
                 rss_mb=round(_rss_mb()),
                 peak_mb=round(decision_peak), **_held(bots))
      rows.append(row)
      print(" ".join(f"{k} {v}" for k, v in row.items()), file=sys.stderr,
            flush=True)
  limit = _TIME_LIMIT.value
  result = dict(
      game=str(game), time_limit=limit, moves=len(seconds),
      terminal=state.is_terminal(), peak_mb=round(peak),
      decision_max=round(max(seconds), 3),
      decision_median=round(statistics.median(seconds), 3),
      decisions_over_1_1x=sum(s > 1.1 * limit for s in seconds), rows=rows)
  print(f"{game}: {result['moves']} moves"
        f"{' (terminal)' if result['terminal'] else ''}, peak "
        f"{result['peak_mb']} MB, decisions {result['decision_median']} s "
        f"median, {result['decision_max']} s max, "
        f"{result['decisions_over_1_1x']} past 1.1 x time_limit")
  if _JSON.value:
    print(json.dumps(result))


if __name__ == "__main__":
  app.run(main)
