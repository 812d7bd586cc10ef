r"""Exploitability of SoG with trained networks, and its training curve.

  python benchmarks/sog_trained.py --seeds=0,1,2,3,4 --simulations=100 \
      --curve_checkpoints='runs/leduc/leduc_poker.step-*.npz' \
      --curve_final=runs/leduc/leduc_poker.npz --curve_png=/tmp/leduc_curve.png

1. For each game of --games (default: every game with a shipped network:
   kuhn_poker, leduc_poker and liar's dice 1x4, 1x5, 1x6 and 2x3; 1x6 and
   2x3 take a few minutes per seed): the exact exploitability (NashConv / 2,
   `sog_exploitability`) of SoG(--simulations, --expansions_per_update;
   default 1) with the game's shipped
   network (open_spiel_sog/data/, or a --checkpoints override) over --seeds:
   min / mean / max, seconds per seed, the goal (GOALS, or --goals) and
   PASS / FAIL, ReBeL's CFR-D figure where its Table 2 has one, the
   network's training wall time, steps and examples (from its metadata),
   and its range-weighted value error at the reference beliefs of
   `evaluation/value_error.py` (the guard of tests/shipped_networks_test.py);
   with --exact_seeds, the same SoG with exact leaf values beside it.
   --params adds sog parameters (e.g. 'alpha=0.25'); the goals are checked
   only at SoG(100, 1) with the bot's defaults.
2. With --curve_png: exploitability against training steps on --curve_game
   for each search size of --curve_simulations (Figure 3 of the SoG paper),
   one point per checkpoint of --curve_checkpoints (a glob, e.g. the
   PATH.step-N.npz files `examples/train.py --keep_checkpoints
   --checkpoint_every=N` writes) and --curve_final; x is the checkpoint's
   step, y the mean exploitability over --curve_seeds, on a log scale. The
   points also go to a CSV next to the PNG (same name, .csv).
3. --json prints one JSON object with everything measured as the last line.

--games= (empty) skips part 1. Progress goes to stderr.
"""

import csv
import functools
import glob
import json
import os
import platform
import sys
import time

from absl import app
from absl import flags
import pyspiel

from open_spiel_sog.algorithms.sog import cvpn
from open_spiel_sog.bots import sog
from open_spiel_sog.evaluation import value_error
from open_spiel_sog.evaluation.exploitability import sog_exploitability
from open_spiel_sog.utils.games import load_game
from open_spiel_sog.utils.progress import progress_bar

_DEFAULT_GAMES = ";".join(cvpn.shipped_games())

_GAMES = flags.DEFINE_string(
    "games", _DEFAULT_GAMES, "Games to measure, separated by ';' (or by ',' "
    "outside parentheses); empty: skip the per-game measurement.")
_CHECKPOINTS = flags.DEFINE_string(
    "checkpoints", "", "Networks to use instead of the shipped ones, as "
    "'game=path;game=path' (e.g. 'leduc_poker=runs/leduc/leduc_poker.npz').")
_SEEDS = flags.DEFINE_string("seeds", "0,1,2,3,4,5,6,7,8,9",
                             "Comma-separated seeds of the per-game "
                             "measurement.")
_EXACT_SEEDS = flags.DEFINE_string(
    "exact_seeds", "", "Comma-separated seeds of the same measurement with "
    "the exact value function instead of the network (leaf subgames solved "
    "to the default tolerance; slow); empty: skip.")
_SIMULATIONS = flags.DEFINE_integer("simulations", 100,
                                    "s of SoG(s, 1) in the per-game "
                                    "measurement.")
_EXPANSIONS_PER_UPDATE = flags.DEFINE_float(
    "expansions_per_update", 1.0,
    "c of SoG(s, c) in the per-game measurement: expansion simulations per "
    "CFR update (0.25: four updates per simulation, 4 s updates in all). The "
    "goals are for SoG(100, 1): with other --simulations or c, none is "
    "checked.")
_PARAMS = flags.DEFINE_string(
    "params", "", "More sog bot parameters for the per-game and exact-leaf "
    "measurements, as 'name=value,name=value' (e.g. 'alpha=0.25,c_puct=0.5';"
    " docs/sog.md lists them). The goals are for the bot's defaults: with "
    "any here, none is checked.")
_AVERAGING_POWER = flags.DEFINE_float(
    "averaging_power", sog.SoGConfig.averaging_power,
    "The sog bot's averaging_power in every measurement: CFR update t "
    "weighs t ** power in the searched policy (1: linear, the bot's default; "
    "2: quadratic, the shipped networks' table in docs/training.md).")
# Goal exploitability per game (issue 16's table: at most ReBeL's Table 2
# figure on liar's dice, 0.030 on Leduc; Kuhn's from issue 8), and ReBeL's
# CFR-D figure (1,024 iterations) printed beside ours.
GOALS = {
    "kuhn_poker()": 0.005,
    "leduc_poker()": 0.030,
    "liars_dice(dice_sides=4,numdice=1)": 0.012,
    "liars_dice(dice_sides=5,numdice=1)": 0.015,
    "liars_dice(dice_sides=6,numdice=1)": 0.024,
    "liars_dice(dice_sides=3,numdice=2)": 0.017,
}
REBEL = {
    "liars_dice(dice_sides=4,numdice=1)": 0.017,
    "liars_dice(dice_sides=5,numdice=1)": 0.015,
    "liars_dice(dice_sides=6,numdice=1)": 0.024,
    "liars_dice(dice_sides=3,numdice=2)": 0.017,
}
_GOALS = flags.DEFINE_string(
    "goals", "", "Goal exploitability per game, overriding the defaults "
    "(GOALS), as 'game=goal;game=goal' (e.g. 'leduc_poker=0.05').")
_GOAL_STATISTIC = flags.DEFINE_enum(
    "goal_statistic", "mean", ["min", "mean", "max"],
    "Which statistic over seeds must be at most the goal for PASS.")
_CURVE_PNG = flags.DEFINE_string(
    "curve_png", "", "Where to write the exploitability-vs-steps plot (the "
    "points go to the same name with .csv); empty: no curve.")
_CURVE_GAME = flags.DEFINE_string("curve_game", "leduc_poker",
                                  "Game of the curve's checkpoints.")
_CURVE_CHECKPOINTS = flags.DEFINE_string(
    "curve_checkpoints", "", "Glob of the curve's checkpoints, e.g. "
    "'runs/leduc/leduc_poker.step-*.npz'.")
_CURVE_FINAL = flags.DEFINE_string(
    "curve_final", "", "Optionally one more checkpoint for the curve (e.g. "
    "the final one); skipped when a --curve_checkpoints file has its step.")
_CURVE_SIMULATIONS = flags.DEFINE_string(
    "curve_simulations", "10,100", "Comma-separated s of the curve's "
    "SoG(s, 1), one line each.")
_CURVE_SEEDS = flags.DEFINE_string("curve_seeds", "0", "Comma-separated seeds "
                                   "of each curve point (y is their mean).")
_PROGRESS = flags.DEFINE_bool("progress", True, "Show progress on stderr.")
_JSON = flags.DEFINE_bool("json", False, "Print a JSON summary as the last "
                          "line.")


def _split_games(text):
  """'a;b(x=1,y=2),c' -> ['a', 'b(x=1,y=2)', 'c']."""
  out, depth, current = [], 0, []
  for c in text:
    if c == "(":
      depth += 1
    elif c == ")":
      depth -= 1
    if c == ";" or (c == "," and depth == 0):
      out.append("".join(current))
      current = []
    else:
      current.append(c)
  out.append("".join(current))
  return [g.strip() for g in out if g.strip()]


def _parse_ints(text, flag):
  try:
    values = [int(s) for s in text.split(",") if s.strip()]
  except ValueError:
    raise ValueError(f"--{flag}: expected comma-separated integers, got "
                     f"{text!r}") from None
  if not values:
    raise ValueError(f"--{flag}: give at least one value")
  return values


def _load_game(text, flag):
  return load_game(text, f"--{flag}")


def _parse_checkpoints(text, games):
  """'game=path;...' -> {str(load_game(game)): path}."""
  out = {}
  for entry in text.split(";"):
    entry = entry.strip()
    if not entry:
      continue
    # Game strings may hold '=' themselves: prefer a --games entry as prefix.
    key = next((g for g in games if entry.startswith(g + "=")), None)
    if key is not None:
      path = entry[len(key) + 1:]
    else:
      key, sep, path = entry.rpartition("=")
      if not sep or not key.strip():
        raise ValueError(f"--checkpoints: malformed entry {entry!r}; expected "
                         "'game=path;game=path'")
    path = path.strip()
    if not path:
      raise ValueError(f"--checkpoints: no path in {entry!r}")
    name = str(_load_game(key.strip(), "checkpoints"))
    if name in out:
      raise ValueError(f"--checkpoints: {key.strip()!r} given twice")
    out[name] = path
  return out


@functools.cache
def _goals() -> dict[str, float]:
  """GOALS with --goals' overrides, keyed by the game's string (parsed
  once)."""
  goals = dict(GOALS)
  for entry in filter(None, (e.strip() for e in _GOALS.value.split(";"))):
    name, sep, value = entry.rpartition("=")
    if not sep or not name:
      raise ValueError(f"--goals: malformed entry {entry!r}; expected "
                       "'game=goal;game=goal'")
    game = str(_load_game(name.strip(), "goals"))
    try:
      goals[game] = float(value)
    except ValueError:
      raise ValueError(f"--goals: goal {value!r} of {game} is not a "
                       "number") from None
  return goals


def _extra_params() -> dict:
  """--params as typed sog parameters (checked by SoGConfig)."""
  own = "is set by its own flag (or by the benchmark); use that instead"
  return sog.SoGConfig.params_from_text(
      _PARAMS.value, dict.fromkeys(
          ("simulations", "expansions_per_update", "averaging_power",
           "value_function", "checkpoint", "seed"), own))


def _goal(game):
  return _goals().get(str(game))


def _checkpoint_info(path):
  """Training facts from a checkpoint's metadata."""
  meta, _ = cvpn.read_checkpoint(path)
  extra = meta.get("extra") or {}
  train = extra.get("train") or {}
  return {
      "checkpoint": path,
      "game": meta.get("game"),
      "step": int(meta.get("step", 0)),
      "configured_steps": train.get("steps"),
      "train_seconds": extra.get("train_seconds"),
      "examples": extra.get("examples"),
      "averaged_steps": extra.get("averaged_steps"),
      "train": train or None,
  }


def _resolve_checkpoint(game, overrides):
  """The checkpoint to evaluate `game` with; ValueError naming what is
  missing."""
  name = str(game)
  if name in overrides:
    path = overrides[name]
    if not os.path.exists(path):
      raise ValueError(f"{name}: the --checkpoints file {path!r} does not "
                       "exist")
    return path, "override"
  path = cvpn.shipped_checkpoint(game)
  if path is None:
    missing = os.path.join(cvpn.DATA_DIR, cvpn.shipped_checkpoint_name(game))
    raise ValueError(
        f"{name}: no shipped network: {missing} does not exist; train one "
        "(examples/train.py, see README.md \"Shipped networks\") or pass "
        f"--checkpoints='{name}=PATH'")
  return path, "shipped"


def _hours(seconds):
  if seconds is None:
    return "unknown"
  return f"{seconds:.0f} s ({seconds / 3600:.2f} h)"


def _measure_games(games, overrides, seeds, simulations, progress,
                   exact_seeds, extra):
  rows = []
  for game, (path, source) in zip(games, [_resolve_checkpoint(g, overrides)
                                          for g in games]):
    info = _checkpoint_info(path)
    c = _EXPANSIONS_PER_UPDATE.value
    params = {"simulations": simulations, "expansions_per_update": c,
              "value_function": "cvpn", "checkpoint": path,
              "averaging_power": _AVERAGING_POWER.value, **extra}
    summary = sog_exploitability(game, params, seeds, progress=progress)
    errors = value_error.value_error(
        cvpn.CVPNValueFunction.from_checkpoint(path, game),
        value_error.reference_queries(game))
    exact = None
    if exact_seeds:
      exact = sog_exploitability(
          game, {"simulations": simulations, "expansions_per_update": c,
                 "value_function": "exact",
                 "averaging_power": _AVERAGING_POWER.value,
                 **extra},
          exact_seeds, progress=progress)
    # The goals are SoG(100, 1)'s, with the bot's defaults.
    goal = (_goal(game) if (simulations, c) == (100, 1.0) and
            not extra else None)
    statistic = summary[_GOAL_STATISTIC.value]
    row = dict(summary)
    row.update({
        "params": params,
        "checkpoint_source": source,
        "seconds_per_seed": sum(summary["seconds"]) / len(seeds),
        "goal": goal,
        "goal_statistic": _GOAL_STATISTIC.value,
        "passed": None if goal is None else bool(statistic <= goal),
        "rebel_cfr_d": REBEL.get(str(game)),
        "training": info,
        # The guard of tests/shipped_networks_test.py: range-weighted value
        # error at evaluation.value_error.reference_queries (default beliefs).
        "value_error": errors["mean"],
        "exact": exact,
    })
    rows.append(row)
    verdict = ("no goal" if goal is None else
               f"goal {goal:.4f} ({_GOAL_STATISTIC.value}) "
               f"{'PASS' if row['passed'] else 'FAIL'}")
    if row["rebel_cfr_d"] is not None:
      verdict += f"; ReBeL CFR-D {row['rebel_cfr_d']:.3f}"
    steps = str(info["step"])
    if info["configured_steps"] not in (None, 0, info["step"]):
      steps += f" (of {info['configured_steps']} configured)"
    if info["averaged_steps"]:
      steps += (" (weights averaged over steps "
                f"{', '.join(map(str, info['averaged_steps']))})")
    examples = ("unknown" if info["examples"] is None
                else str(info["examples"]))
    print(f"{row['game']}: SoG({simulations}, {c:g}), averaging_power "
          f"{_AVERAGING_POWER.value:g}"
          + "".join(f", {k}={v}" for k, v in extra.items())
          + f", {len(seeds)} seed(s): "
          f"exploitability min {row['min']:.6f}  mean {row['mean']:.6f}  "
          f"max {row['max']:.6f}; {row['seconds_per_seed']:.1f} s per seed; "
          f"{verdict}", flush=True)
    print(f"  network {path} ({source}): trained "
          f"{_hours(info['train_seconds'])}, {steps} steps, {examples} "
          f"examples; value error {row['value_error']:.4f}", flush=True)
    if exact is not None:
      print(f"  exact leaf values, {len(exact_seeds)} seed(s): exploitability "
            f"min {exact['min']:.6f}  mean {exact['mean']:.6f}  max "
            f"{exact['max']:.6f}; "
            f"{sum(exact['seconds']) / len(exact_seeds):.1f} s per seed",
            flush=True)
  return rows


def _curve_checkpoints(game, pattern, final):
  """[(step, path, info)] sorted by step; ValueError on a bad input."""
  paths = []
  if pattern:
    paths = sorted(glob.glob(pattern))
    if not paths:
      raise ValueError(f"--curve_checkpoints: no file matches {pattern!r}")
  points = {}
  for path in paths:
    info = _checkpoint_info(path)
    if info["step"] in points:
      raise ValueError(f"--curve_checkpoints: {path} and "
                       f"{points[info['step']][0]} both hold step "
                       f"{info['step']}")
    points[info["step"]] = (path, info)
  if final:
    info = _checkpoint_info(final)
    if info["step"] not in points:
      points[info["step"]] = (final, info)
  if not points:
    raise ValueError("--curve_png needs --curve_checkpoints or --curve_final")
  for path, info in points.values():
    if info["game"] != str(game):
      raise ValueError(f"curve checkpoint {path} was trained for "
                       f"{info['game']}, not {game} (set --curve_game)")
  return [(step, path, info) for step, (path, info) in sorted(points.items())]


def _measure_curve(game, checkpoints, simulations, seeds, progress):
  points = []
  with progress_bar(len(checkpoints) * len(simulations),
                    f"curve {game}", disable=not progress) as bar:
    for step, path, info in checkpoints:
      value_fn = cvpn.CVPNValueFunction.from_checkpoint(path, game)
      for s in simulations:
        bar.set_postfix_str(f"step {step} SoG({s}, 1)")
        params = {"simulations": s, "value_function": "cvpn",
                  "checkpoint": path,
                  "averaging_power": _AVERAGING_POWER.value}
        summary = sog_exploitability(game, params, seeds, value_fn=value_fn)
        point = {
            "step": step, "simulations": s, "mean": summary["mean"],
            "min": summary["min"], "max": summary["max"],
            "values": summary["values"], "seeds": seeds,
            "seconds_per_seed": sum(summary["seconds"]) / len(seeds),
            "checkpoint": path, "train_seconds": info["train_seconds"],
            "examples": info["examples"],
        }
        points.append(point)
        bar.update(1)
        if not progress:
          print(f"step {step} SoG({s}, 1): exploitability {point['mean']:.6f}",
                flush=True)
  return points


def _write_curve(points, game, png):
  stem = os.path.splitext(png)[0]
  csv_path = stem + ".csv"
  directory = os.path.dirname(os.path.abspath(png))
  os.makedirs(directory, exist_ok=True)
  columns = ["step", "simulations", "mean", "min", "max", "seconds_per_seed",
             "train_seconds", "examples", "checkpoint"]
  with open(csv_path, "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(["step", "simulations", "exploitability_mean",
                     "exploitability_min", "exploitability_max",
                     "seconds_per_seed", "train_seconds", "examples",
                     "checkpoint"])
    for p in points:
      writer.writerow(["" if p[c] is None else p[c] for c in columns])
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
  fig, ax = plt.subplots(figsize=(6, 4))
  for s in sorted({p["simulations"] for p in points}):
    line = [p for p in points if p["simulations"] == s]
    ax.plot([p["step"] for p in line], [p["mean"] for p in line],
            marker="o", label=f"SoG({s}, 1)")
  ax.set_yscale("log")
  ax.set_xlabel("training steps")
  ax.set_ylabel("exploitability (NashConv / 2)")
  ax.set_title(f"SoG on {game}")
  ax.grid(True, which="both", alpha=0.3)
  ax.legend()
  fig.tight_layout()
  fig.savefig(png, dpi=120)
  plt.close(fig)
  return csv_path


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  started = time.perf_counter()
  try:
    game_names = _split_games(_GAMES.value)
    games = [sog.search_game(_load_game(g, "games")) for g in game_names]
    overrides = _parse_checkpoints(_CHECKPOINTS.value, game_names)
    unused = sorted(set(overrides) - {str(g) for g in games})
    if unused:
      raise ValueError(f"--checkpoints: {', '.join(unused)} not in --games")
    seeds = _parse_ints(_SEEDS.value, "seeds")
    exact_seeds = (_parse_ints(_EXACT_SEEDS.value, "exact_seeds")
                   if _EXACT_SEEDS.value.strip() else [])
    if _SIMULATIONS.value < 1:
      raise ValueError("--simulations must be >= 1")
    for flag, value in (("averaging_power", _AVERAGING_POWER.value),
                        ("expansions_per_update",
                         _EXPANSIONS_PER_UPDATE.value)):
      try:
        sog.SoGConfig.from_params({flag: value})
      except ValueError as e:
        raise ValueError(f"--{flag}: {e}") from None
    extra = _extra_params()
    _goals()  # a malformed --goals is refused before anything is measured
    curve = None
    if _CURVE_PNG.value:
      curve_game = sog.search_game(_load_game(_CURVE_GAME.value,
                                              "curve_game"))
      curve_sims = _parse_ints(_CURVE_SIMULATIONS.value, "curve_simulations")
      curve_seeds = _parse_ints(_CURVE_SEEDS.value, "curve_seeds")
      curve = _curve_checkpoints(curve_game, _CURVE_CHECKPOINTS.value,
                                 _CURVE_FINAL.value)
    elif _CURVE_CHECKPOINTS.value or _CURVE_FINAL.value:
      raise ValueError("--curve_checkpoints / --curve_final need --curve_png")
  except (ValueError, pyspiel.SpielError) as e:
    raise app.UsageError(str(e)) from None
  errors = []
  for g in games:
    try:
      _resolve_checkpoint(g, overrides)
    except ValueError as e:
      errors.append(str(e))
  if errors:
    print("sog_trained: missing networks:\n  " + "\n  ".join(errors),
          file=sys.stderr)
    return 1

  import jax  # pylint: disable=g-import-not-at-top
  summary = {
      "settings": {"games": [str(g) for g in games], "seeds": seeds,
                   "exact_seeds": exact_seeds,
                   "simulations": _SIMULATIONS.value,
                   "expansions_per_update": _EXPANSIONS_PER_UPDATE.value,
                   "averaging_power": _AVERAGING_POWER.value,
                   "params": extra,
                   "goal_statistic": _GOAL_STATISTIC.value},
      "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                  "jax_backend": jax.default_backend()},
  }
  rows = _measure_games(games, overrides, seeds, _SIMULATIONS.value,
                        _PROGRESS.value, exact_seeds, extra)
  summary["games"] = rows
  graded = [r["passed"] for r in rows if r["passed"] is not None]
  summary["all_passed"] = all(graded) if graded else None
  if rows:
    print("all goals met" if summary["all_passed"] else
          "some goals not met" if graded else "no goals to check", flush=True)

  summary["curve"] = None
  if curve is not None:
    print(f"curve: {len(curve)} checkpoint(s) of {curve_game} (steps "
          f"{', '.join(str(c[0]) for c in curve)}), SoG(s, 1) for s in "
          f"{curve_sims}, seeds {curve_seeds}", flush=True)
    points = _measure_curve(curve_game, curve, curve_sims, curve_seeds,
                            _PROGRESS.value)
    csv_path = _write_curve(points, curve_game, _CURVE_PNG.value)
    for s in curve_sims:
      line = ", ".join(f"{p['step']}: {p['mean']:.5f}" for p in points
                       if p["simulations"] == s)
      print(f"  SoG({s}, 1): {line}")
    print(f"curve written to {_CURVE_PNG.value} and {csv_path}", flush=True)
    summary["curve"] = {"game": str(curve_game), "simulations": curve_sims,
                        "seeds": curve_seeds, "png": _CURVE_PNG.value,
                        "csv": csv_path, "points": points}
  summary["seconds"] = time.perf_counter() - started
  if _JSON.value:
    print(json.dumps(summary))


if __name__ == "__main__":
  app.run(main)
