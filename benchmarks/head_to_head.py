r"""SoG head-to-head against another bot at equal time per move, and its
learning curve over a training run's checkpoints (issue 48).

  # SoG with a network against OpenSpiel's C++ MCTS, 1 s a move each:
  python benchmarks/head_to_head.py --game=connect_four --time_limit=1 \
      --sog_params=checkpoint=open_spiel_sog/data/connect_four.npz \
      --opponent='mcts(time_limit=1,seed={seed})' --num_games=200 --json
  # Score against training minutes, one point per checkpoint, and a PNG:
  python benchmarks/head_to_head.py --game=connect_four --time_limit=0.2 \
      --checkpoints='runs/c4/connect_four.step-*.npz' \
      --opponent='mcts(time_limit=0.2,seed={seed})' --num_games=20 \
      --png=curve.png --json

Games are played in duplicate seats: games 2k and 2k + 1 share seed k
(--first_seed + k), SoG in seat 0, then 1, as OpenSpiel's `evaluate_bots`
plays them (restart, step, inform_action). SoG is `pyspiel.load_bot("sog",
game, seat, {time_limit, seed, simulations: 1000000, **--sog_params})`:
a cap out of reach, so that the time decides (as it also does with
`simulations` not given). The opponent is a bot
string for `pyspiel.load_bot` where '{seed}' stands for the game's seed.
SoG's score is (wins + draws / 2) / games, with a 95% Wilson interval (on
the score as a proportion: draws count half) and a 95% normal interval of
the mean return. Each side's median and total seconds of its own decisions
are reported (SoG's count its searches at the opponent's decisions, made in
inform_action, separately: `sog_inform_seconds`). Games run in --workers
processes. --json prints every row as one JSON object on the last line;
progress goes to stderr.
"""

import glob
import json
import math
import multiprocessing
import os

import statistics
import sys
import time

from absl import app
from absl import flags
import numpy as np
import pyspiel

_GAME = flags.DEFINE_string("game", "connect_four", "Game string.")
_TIME_LIMIT = flags.DEFINE_float(
    "time_limit", 1.0, "SoG's time_limit (seconds per decision); give the "
    "opponent the same in --opponent.")
_SOG_PARAMS = flags.DEFINE_string(
    "sog_params", "", "More sog parameters, 'name=value,name=value' (e.g. "
    "'checkpoint=PATH' or 'value_function=rollout').")
_CHECKPOINTS = flags.DEFINE_string(
    "checkpoints", "", "A glob of checkpoints (e.g. a run's "
    "PATH.step-*.npz): one row per checkpoint, SoG with that network, in "
    "order of training seconds (the learning curve); empty: one row, SoG "
    "with --sog_params.")
_OPPONENT = flags.DEFINE_string(
    "opponent", "mcts(time_limit=1,seed={seed})",
    "The opponent as a bot string, '{seed}' standing for the game's seed.")
_NUM_GAMES = flags.DEFINE_integer("num_games", 200,
                                  "Games per row (duplicate seats: even).")
_FIRST_SEED = flags.DEFINE_integer("first_seed", 0, "Seed of the first pair.")
_WORKERS = flags.DEFINE_integer("workers", 2, "Processes playing games.")
_PNG = flags.DEFINE_string("png", "", "With --checkpoints: plot SoG's score "
                           "against training minutes here (matplotlib).")
_JSON = flags.DEFINE_bool("json", False, "Print the rows as JSON last.")


def _sog_params(text: str) -> dict:
  out = {}
  for item in filter(None, (s.strip() for s in text.split(","))):
    if "=" not in item:
      raise app.UsageError(f"--sog_params: {item!r} is not name=value")
    name, value = item.split("=", 1)
    out[name.strip()] = value.strip()
  return out


def play(args) -> dict:
  """One game (SoG in `seat`): SoG's return and each side's seconds."""
  game_string, seat, seed, time_limit, params, opponent = args
  import open_spiel_sog  # pylint: disable=g-import-not-at-top,unused-import
  from open_spiel_sog.bots import sog  # pylint: disable=g-import-not-at-top
  game = pyspiel.load_game(game_string)
  config = sog.SoGConfig.from_params(
      {"simulations": 1_000_000, **params, "time_limit": time_limit,
       "seed": seed})
  bot = sog.SoGBot(game, seat, config)
  other = pyspiel.load_bot(opponent.replace("{seed}", str(seed)), game,
                           1 - seat)
  bot.restart()
  other.restart()
  rng = np.random.RandomState(seed)
  state = game.new_initial_state()
  own, inform, theirs = [], [], []
  while not state.is_terminal():
    if state.is_chance_node():
      actions, probs = zip(*state.chance_outcomes())
      state.apply_action(int(rng.choice(actions, p=probs)))
      continue
    player = state.current_player()
    start = time.monotonic()
    if player == seat:
      action = bot.step(state)
      own.append(time.monotonic() - start)
      other.inform_action(state, player, action)
    else:
      action = other.step(state)
      theirs.append(time.monotonic() - start)
      start = time.monotonic()
      bot.inform_action(state, player, action)
      inform.append(time.monotonic() - start)
    state.apply_action(action)
  return {"seat": seat, "seed": seed, "return": state.returns()[seat],
          "sog_seconds": own, "sog_inform_seconds": inform,
          "opponent_seconds": theirs}



def run_row(pool, params: dict, label: str) -> dict:
  jobs = [(_GAME.value, g % 2, _FIRST_SEED.value + g // 2, _TIME_LIMIT.value,
           params, _OPPONENT.value) for g in range(_NUM_GAMES.value)]
  games = []
  start = time.monotonic()
  for result in pool.imap_unordered(play, jobs):
    games.append(result)
    print(f"{label}: game {len(games)}/{len(jobs)} seat {result['seat']} "
          f"return {result['return']:+g} ({time.monotonic() - start:.0f} s)",
          file=sys.stderr, flush=True)
  games.sort(key=lambda g: (g["seed"], g["seat"]))
  returns = [g["return"] for g in games]
  n = len(returns)
  wins = sum(r > 0 for r in returns)
  draws = sum(r == 0 for r in returns)
  score = wins + draws / 2
  from open_spiel_sog.evaluation import tournament  # pylint: disable=g-import-not-at-top
  low, high = tournament.wilson_interval(score, n)

  def flat(key):
    return [s for g in games for s in g[key]]

  return {
      "game": _GAME.value, "sog": label, "sog_params": params,
      "opponent": _OPPONENT.value, "time_limit": _TIME_LIMIT.value,
      "games": n, "wins": wins, "draws": draws, "losses": n - wins - draws,
      "score": score / n, "score_95": [low, high],
      "mean_return": float(np.mean(returns)),
      "mean_return_95": (1.96 * float(np.std(returns, ddof=1)) / math.sqrt(n)
                         if n > 1 else 0.0),
      "by_seat": [[sum(r > 0 for r in returns[s::2]),
                   sum(r == 0 for r in returns[s::2]),
                   sum(r < 0 for r in returns[s::2])] for s in (0, 1)],
      "sog_seconds_median": statistics.median(flat("sog_seconds")),
      "sog_seconds_total": sum(flat("sog_seconds")),
      "sog_inform_seconds_total": sum(flat("sog_inform_seconds")),
      "opponent_seconds_median": statistics.median(flat("opponent_seconds")),
      "opponent_seconds_total": sum(flat("opponent_seconds")),
      "wall_seconds": time.monotonic() - start,
  }


def _checkpoint_rows():
  """(training minutes, step, path) of each checkpoint of the glob."""
  from open_spiel_sog.algorithms.sog import cvpn  # pylint: disable=g-import-not-at-top
  rows = []
  for path in glob.glob(_CHECKPOINTS.value):
    meta, _ = cvpn.read_checkpoint(path)
    minutes = float(meta.get("extra", {}).get("train_seconds", 0.0)) / 60
    rows.append((minutes, int(meta["step"]), path))
  if not rows:
    raise app.UsageError(f"--checkpoints: no file matches "
                         f"{_CHECKPOINTS.value!r}")
  return sorted(rows)


def _plot(rows: list[dict], path: str) -> None:
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
  fig, ax = plt.subplots(figsize=(6, 4))
  x = [r["train_minutes"] for r in rows]
  y = [r["score"] for r in rows]
  err = [[r["score"] - r["score_95"][0] for r in rows],
         [r["score_95"][1] - r["score"] for r in rows]]
  ax.errorbar(x, y, yerr=err, marker="o", capsize=3)
  ax.axhline(0.5, color="grey", lw=0.8, ls="--")
  ax.set_xlabel("training minutes")
  ax.set_ylabel("SoG's score (95% interval)")
  ax.set_ylim(0, 1)
  ax.set_title(f"{_GAME.value}: SoG vs\n{_OPPONENT.value},\n"
               f"{_TIME_LIMIT.value:g} s a move", fontsize=8)
  ax.grid(True, alpha=0.3)
  fig.tight_layout()
  fig.savefig(path, dpi=100)
  plt.close(fig)


def _check_opponent() -> None:
  """Refuses, in one line and before any worker starts, a game or an
  opponent bot that does not load (an unknown name, a bad parameter)."""
  import open_spiel_sog  # pylint: disable=g-import-not-at-top,unused-import
  try:
    game = pyspiel.load_game(_GAME.value)
    pyspiel.load_bot(_OPPONENT.value.replace("{seed}", "0"), game, 1)
  except (pyspiel.SpielError, ValueError, RuntimeError) as e:
    words = " ".join(str(e).split()) or repr(e)  # (OpenSpiel's list: one line)
    print(f"head_to_head: --game={_GAME.value} --opponent={_OPPONENT.value}: "
          f"{words}", file=sys.stderr)
    sys.exit(2)


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  if _NUM_GAMES.value < 2 or _NUM_GAMES.value % 2:
    raise app.UsageError("--num_games must be even (duplicate seats)")
  params = _sog_params(_SOG_PARAMS.value)
  _check_opponent()
  rows = []
  ctx = multiprocessing.get_context("spawn")
  with ctx.Pool(_WORKERS.value) as pool:
    if _CHECKPOINTS.value:
      for minutes, step, path in _checkpoint_rows():
        row = run_row(pool, {**params, "checkpoint": path},
                      f"step {step}")
        row.update(train_minutes=minutes, step=step, checkpoint=path)
        rows.append(row)
    else:
      rows.append(run_row(pool, params, "sog"))
  print("| SoG | vs | games | W / D / L | score (95%) | SoG s/move | "
        "opponent s/move |")
  print("|---|---|---|---|---|---|---|")
  for r in rows:
    print(f"| {r['sog']} {r['sog_params']} | {r['opponent']} | {r['games']} "
          f"| {r['wins']} / {r['draws']} / {r['losses']} | {r['score']:.3f} "
          f"({r['score_95'][0]:.3f}-{r['score_95'][1]:.3f}) | "
          f"{r['sog_seconds_median']:.2f} | "
          f"{r['opponent_seconds_median']:.2f} |")
  if _PNG.value and _CHECKPOINTS.value:
    _plot(rows, _PNG.value)
  if _JSON.value:
    print(json.dumps(rows))


if __name__ == "__main__":
  os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
  app.run(main)
