r"""What SoG's first search believes the game is worth, by sample size.

  python benchmarks/opening_values.py --json \
      --game=phantom_ttt --max_histories=30,300,3000
  python benchmarks/opening_values.py --json --game=phantom_ttt \
      --subgame=anchored --time_limit=1 --max_histories=300 --seeds=5

For each value of --max_histories and each of --seeds seeds, one
`pyspiel.load_bot("sog", game, 0, {"simulations": --simulations,
"max_histories": N, "seed": k})` makes the first decision of player 0
(chance outcomes before it drawn by the seed), and this prints what its
search ended with: player 0's value at the searched state (the root
counterfactual value of its infostate under the search's average profile,
which at the game's first decision is the expected return), the value of
each of its actions (the counterfactual value of the infostate that action
leads to, where the next public state is the search tree's), the searched
policy, the CFR updates and the tree's public states. Public states with
more than N histories are sampled (0: none is; see docs/public_states.md);
a bound at or above the largest public state gives the exact path's numbers.

Why: in phantom_ttt a sample thins every infostate to a few histories, so
each player knows more in the sampled game than in the real one, and the
sampled game drifts toward ordinary tic-tac-toe (a draw, every opening
equal; docs/games.md, "Where the gap is"). Simulations, not time, bound each
search, so the figures are the same on any machine; with --time_limit the
search runs by time alone, or to --simulations where that is given (the sog
bot's rule: `--subgame=public_state --time_limit=1 --simulations=100` is
what `sog(time_limit=1)` searched before a budget meant the time). Progress
goes to stderr; --json adds one JSON object on the last line.
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
from open_spiel_sog.bots import sog

_GAME = flags.DEFINE_string("game", "phantom_ttt", "Game string.")
_MAX_HISTORIES = flags.DEFINE_list(
    "max_histories", ["30", "300", "3000"],
    "sog's max_histories values to compare (0: exact public states).")
_SIMULATIONS = flags.DEFINE_integer(
    "simulations", 300, "sog's simulations per search; with --time_limit, "
    "given: the cap (sog's rule), not given: time alone.")
_SEEDS = flags.DEFINE_integer("seeds", 3, "Seeds (decisions) per value.")
_SUBGAME = flags.DEFINE_enum(
    "subgame", "public_state", ["public_state", "anchored", "auto"],
    "sog's subgame: 'public_state' (GT-CFR over public states, sampled past "
    "--max_histories), 'anchored' (the searcher's infostate and the order-2 "
    "set, grown by histories; --max_histories does not apply) or 'auto'.")
_TIME_LIMIT = flags.DEFINE_float(
    "time_limit", 0.0, "sog's time_limit in seconds (0: --simulations "
    "bound each search).")
_PURIFY = flags.DEFINE_bool(
    "purify", True, "sog's purify: in perfect-information games and the "
    "anchored subgame, play the searched policy's top move (--nopurify: "
    "draw from it).")
_JSON = flags.DEFINE_bool("json", False,
                          "Also print the rows as JSON on the last line.")
_SOG_PARAMS = flags.DEFINE_string(
    "sog_params", "", "More sog parameters, 'name=value,...' (e.g. "
    "value_function=rollout,threads=1).")


def _extra_params() -> dict:
  """--sog_params as typed sog parameters (checked by SoGConfig)."""
  own = "is set by a flag of its own; use that instead"
  try:
    return sog.SoGConfig.params_from_text(
        _SOG_PARAMS.value, dict.fromkeys(
            ("simulations", "max_histories", "seed", "subgame", "time_limit",
             "purify"), own), flag="--sog_params")
  except ValueError as e:
    raise app.UsageError(str(e)) from None


def _bounds() -> list[int]:
  try:
    bounds = [int(v) for v in _MAX_HISTORIES.value]
  except ValueError:
    bounds = []
  if not bounds or min(bounds) < 0:
    raise app.UsageError("--max_histories takes integers >= 0, separated by "
                         f"commas; got {','.join(_MAX_HISTORIES.value)}")
  return bounds


def first_decision(game: pyspiel.Game, seed: int) -> pyspiel.State:
  """The game's first state where player 0 decides (chance drawn by seed)."""
  rng = np.random.RandomState(seed)
  state = game.new_initial_state()
  while not state.is_terminal():
    if state.is_chance_node():
      actions, probs = zip(*state.chance_outcomes())
      state.apply_action(int(rng.choice(actions, p=probs)))
    elif state.current_player() == 0:
      return state
    else:
      raise ValueError(f"{game}: player {state.current_player()} decides "
                       "before player 0; this benchmark searches player 0's "
                       "first decision")
  raise ValueError(f"{game}: the game ends before player 0 decides")


def search(game: pyspiel.Game, bound: int, seed: int, extra: dict) -> dict:
  """Player 0's first decision at `bound` (more sog parameters: `extra`):
  the figures the docstring names."""
  bot = pyspiel.load_bot("sog", game, 0, {
      "simulations": (-1 if _TIME_LIMIT.value and not _SIMULATIONS.present
                      else _SIMULATIONS.value),
      "max_histories": bound, "seed": seed, "subgame": _SUBGAME.value,
      "time_limit": _TIME_LIMIT.value, "purify": _PURIFY.value, **extra})
  state = first_decision(game, seed)
  start = time.monotonic()
  _, played = bot.step_with_policy(state)
  seconds = time.monotonic() - start
  # The searched policy (what the bot plays is its top move where purify
  # applies).
  policy = bot.last_decision().policy
  if bot.anchored is not None:
    anchored = bot.anchored.last_result
    return {
        "max_histories": bound, "seed": seed, "value": anchored.value,
        "action_values": {str(a): v for a, v in
                          sorted(anchored.action_values.items())},
        "policy": {str(a): p for a, p in sorted(policy.items())},
        "largest_probability": max(policy.values()), "played": played,
        "updates": anchored.iterations, "public_states": 0,
        "histories": anchored.nodes, "seconds": seconds,
    }
  result = bot.resolver.last_result
  ps, h = bot.observer.public_state_of(state)
  j = int(ps.history_infostate[0][h])
  node = result.tree.node(ps)
  action_values = {}
  for child_index in (node.children or {}).values():
    child = result.tree.nodes[child_index].ps
    summary = result.summaries.get(child.id)
    if summary is None:
      continue
    # Histories of the child reached from player 0's history by an action.
    for k in np.nonzero(child.parent_history == h)[0].tolist():
      infostate = int(child.history_infostate[0][k])
      action_values[int(child.parent_action[k])] = float(
          summary.values[0][infostate])
  return {
      "max_histories": bound, "seed": seed,
      "value": float(result.root_values[0][j]),
      "action_values": {str(a): v for a, v in sorted(action_values.items())},
      "policy": {str(a): p for a, p in sorted(policy.items())},
      "largest_probability": max(policy.values()), "played": played,
      "updates": int(result.updates), "public_states": len(result.tree),
      "seconds": seconds,
  }


def main(argv):
  del argv
  bounds = _bounds()
  extra = _extra_params()
  try:
    game = pyspiel.load_game(_GAME.value)
  except pyspiel.SpielError as e:
    raise app.UsageError(f"--game={_GAME.value}: {e}") from None
  rows = []
  for bound in bounds:
    for seed in range(_SEEDS.value):
      rows.append(search(game, bound, seed, extra))
      r = rows[-1]
      print(f"max_histories={bound} seed {seed}: value {r['value']:+.3f}, "
            f"largest probability {r['largest_probability']:.2f} "
            f"({r['seconds']:.1f} s)", file=sys.stderr, flush=True)
  budget = ", ".join(
      ([f"time_limit={_TIME_LIMIT.value:g}"] if _TIME_LIMIT.value else []) +
      ([f"simulations={_SIMULATIONS.value}"]
       if _SIMULATIONS.present or not _TIME_LIMIT.value else []))
  print(f"{_GAME.value}: SoG's first decision as player 0, {budget}, "
        f"subgame={_SUBGAME.value}, seeds 0-{_SEEDS.value - 1}\n")
  print("| max_histories | value (median; per seed) | action values "
        "(min-max, median seed) | largest probability (median) | move "
        "played (per seed) | updates | public states | histories | s per "
        "search |")
  print("|---|---|---|---|---|---|---|---|---|")
  for bound in bounds:
    mine = [r for r in rows if r["max_histories"] == bound]
    values = [r["value"] for r in mine]
    middle = sorted(mine, key=lambda r: r["value"])[len(mine) // 2]
    spread = list(middle["action_values"].values())
    span = f"{min(spread):+.2f} to {max(spread):+.2f}" if spread else "-"
    print(f"| {bound} | {statistics.median(values):+.3f}; "
          f"{' / '.join(f'{v:+.3f}' for v in values)} | {span} | "
          f"{statistics.median(r['largest_probability'] for r in mine):.2f} "
          f"| {' / '.join(str(r['played']) for r in mine)} "
          f"| {statistics.median(r['updates'] for r in mine):.0f} | "
          f"{statistics.median(r['public_states'] for r in mine):.0f} | "
          f"{statistics.median(r.get('histories', 0) for r in mine):.0f} | "
          f"{statistics.median(r['seconds'] for r in mine):.1f} |")
  if _JSON.value:
    print(json.dumps({"game": _GAME.value, "subgame": _SUBGAME.value,
                      "time_limit": _TIME_LIMIT.value,
                      "purify": _PURIFY.value,
                      "simulations": (_SIMULATIONS.value
                                      if _SIMULATIONS.present or
                                      not _TIME_LIMIT.value else None),
                      "sog_params": _SOG_PARAMS.value,
                      "command": "python " + " ".join(sys.argv),
                      "rows": rows}))


if __name__ == "__main__":
  app.run(main)
