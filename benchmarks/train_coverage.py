r"""Which games train, and in how much memory: two modes (--mode).

--mode=defaults: the one command with default flags on every game,

  examples/train.py --game=G --minutes=M --run_dir=TMP --json --noprogress

(the recipe auto picks, M = --minutes, 2 by default), and every process of
the run (the trainer and its workers) sampled from /proc twice a second: the
row gives each one's peak resident memory (VmHWM), and marks the game `over`
where one passes --memory_limit_gb (4). The issue's measurement:

  python benchmarks/train_coverage.py --mode=defaults --json \
      --output=benchmarks/results/training/train_coverage_defaults.json

--mode=tokens (the default): which games a token CVPN trains on
(examples/train.py --recipe=public_states --input=tokens: the sound
self-play recipe on every game, whichever recipe train.py would pick for
it).

  python benchmarks/train_coverage.py --json \
      --output=benchmarks/results/training/train_coverage.json

For every game of `coverage_games()` (benchmarks/coverage_games.py: the
two-player zero-sum or constant-sum games the sog bot plays), or those of
--games, runs

  examples/train.py --game=G --recipe=public_states --input=tokens \
      --backend=inline --steps=S --json --noprogress ...

in a child process of its own: a few steps of sound self-play training with
the token input, one process, a small network (--hidden, --policy_hidden,
--token_width, --conv_channels), few simulations (--simulations,
--solver_simulations), self-play games capped at --max_moves moves, public
states sampled past --max_histories histories (--game_args gives a game
flags of its own: by default python_liars_poker and dark_chess sample
fewer histories, see the flag). --max_updates_per_example defaults to 1, so
a run gathers at least --steps x --batch_size examples: with the defaults
that is more than one self-play game's worth on most games, so the run
also solves the queries a game pushed (the sampled-query path of
training). Every run writes a checkpoint to a temporary folder after each
step.

Each game gets a row: `trains` when the run reached its steps (wall seconds
of the child, imports included; steps; examples; examples per second of the
training run itself, its `seconds`; the run's mean loss, and the last
step's value and policy losses; self-play games and query solves), else
`fails` with the child's last error line (its last stderr line that is not
a log line), or `timeout` when the child ran past --time_limit_per_game
seconds: it then gets SIGTERM (train.py finishes the game or solve in
progress, writes its summary and exits) and, --grace seconds later,
SIGKILL; the row says how many examples and steps it had made, from the
summary or else from the last checkpoint. A run that reached its steps as
the SIGTERM came counts as trains (its seconds show it). Rows are ordered
as the games ran: by default, quickest first by the peak memory
benchmarks/game_coverage.py recorded for each game (--order_from; a proxy
for the size of its public states).

The Markdown table (game | result | s | examples/s | loss) goes to stdout,
then counts; --json adds one JSON object (the settings and the rows) on the
last line, and --output writes the same object to a file. Progress goes to
stderr.
"""

import json
import os
import platform
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time

from absl import app
from absl import flags

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from coverage_games import coverage_games  # pylint: disable=g-import-not-at-top,wrong-import-position

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_TRAIN = os.path.join(_ROOT, "examples", "train.py")

_MODE = flags.DEFINE_enum(
    "mode", "tokens", ["tokens", "defaults"], "tokens: the token CVPN's "
    "sound self-play with the small settings below; defaults: the one "
    "command with default flags for --minutes (the flags below other than "
    "--games, --skip, --grace and the output flags are then unused).")
_MINUTES = flags.DEFINE_float(
    "minutes", 2.0, "--mode=defaults: train.py --minutes for each game.")
_MEMORY_LIMIT = flags.DEFINE_float(
    "memory_limit_gb", 4.0, "A game whose trainer or any worker passes this "
    "peak resident memory is marked `over` (both modes).")
_STARTUP = flags.DEFINE_float(
    "startup_seconds", 240.0, "--mode=defaults: seconds a run may take "
    "beyond --minutes (imports, auto's walk of the public tree, the "
    "workers' start, the last game and checkpoint) before it is stopped as "
    "a timeout.")
_GAMES = flags.DEFINE_string(
    "games", "", "Game strings to train on, separated by ';' (empty: every "
    "game of coverage_games()).")
_SKIP = flags.DEFINE_string(
    "skip", "", "Short names to leave out, separated by ','.")
_STEPS = flags.DEFINE_integer("steps", 3, "train.py --steps: gradient "
                              "updates a run must reach to count as trains.")
_TIME_LIMIT = flags.DEFINE_float(
    "time_limit_per_game", 240.0, "Seconds a game's training run may take "
    "(imports included) before it is stopped and recorded as a timeout.")
_GRACE = flags.DEFINE_float(
    "grace", 15.0, "Seconds between the SIGTERM at the time limit (train.py "
    "then stops after the game or solve in progress and prints its summary) "
    "and SIGKILL.")
_BATCH = flags.DEFINE_integer("batch_size", 8, "train.py --batch_size.")
_MIN_REPLAY = flags.DEFINE_integer("min_replay", 8, "train.py --min_replay.")
_MAX_UPDATES = flags.DEFINE_float(
    "max_updates_per_example", 1.0, "train.py --max_updates_per_example (1: "
    "a run gathers steps x batch_size examples, see the docstring).")
_ACTOR_S = flags.DEFINE_integer("simulations", 5,
                                "train.py --simulations.")
_SOLVER_S = flags.DEFINE_integer("solver_simulations", 5,
                                 "train.py --solver_simulations.")
_MAX_MOVES = flags.DEFINE_integer(
    "max_moves", 10, "train.py --max_moves: moves per self-play game (0: "
    "unlimited).")
_MAX_HISTORIES = flags.DEFINE_integer(
    "max_histories", 100, "train.py --max_histories: public states with more "
    "histories are samples of this many.")
_HIDDEN = flags.DEFINE_string("hidden", "16", "train.py --hidden.")
_POLICY_HIDDEN = flags.DEFINE_string("policy_hidden", "16",
                                     "train.py --policy_hidden.")
_TOKEN_WIDTH = flags.DEFINE_integer("token_width", 16,
                                    "train.py --token_width.")
_CONV_CHANNELS = flags.DEFINE_string("conv_channels", "8",
                                     "train.py --conv_channels.")
_SEED = flags.DEFINE_integer("seed", 0, "train.py --seed.")
_TRAIN_ARGS = flags.DEFINE_string(
    "train_args", "", "More train.py flags for every game (one string, split "
    "as a shell would; later flags win).")
_GAME_ARGS = flags.DEFINE_multi_string(
    "game_args",
    ["python_liars_poker=--max_histories=20", "dark_chess=--max_histories=30"],
    "GAME=FLAGS: more train.py flags for one game (its short name or full "
    "game string), after --train_args; repeatable (giving it replaces the "
    "default). Default: python_liars_poker samples 20 histories, not 100 "
    "(OpenSpiel's Python liars_poker takes about 2 ms per "
    "information_state_string, and a sampled expansion builds up to 4 x "
    "max_histories children: with 100, one query solve took 35 s and the "
    "run timed out at 240 s); dark_chess samples 30 (with 100, 245 s: the "
    "token value function computes the prior of every token over 4,674 "
    "actions at each leaf evaluation, 66 ms a call for 8 public states of "
    "256 tokens against 5 ms for the values alone; with 30, 26 s).")
_ORDER_FROM = flags.DEFINE_string(
    "order_from",
    os.path.join(_ROOT, "benchmarks", "results", "games",
                 "game_coverage_200_moves.json"),
    "A game_coverage JSON file: games run in increasing order of the peak "
    "memory it records (games it lacks last); empty: the order of --games "
    "or of coverage_games().")
_JSON = flags.DEFINE_bool("json", False,
                          "Also print the settings and rows as one JSON "
                          "object on the last line.")
_OUTPUT = flags.DEFINE_string(
    "output", "", "Also write that JSON object to this file (e.g. "
    "benchmarks/results/training/train_coverage.json).")
_LOG_DIR = flags.DEFINE_string(
    "logs", "", "Also keep each child's stderr (tracebacks included) as "
    "LOGS/GAME.log.")
_ROWS_FILE = flags.DEFINE_string(
    "rows_file", "", "Also append each game's row to this file as one JSON "
    "line as soon as it is done; games it already holds are not run again "
    "(their rows count), so a stopped coverage run resumes.")


def _log(message: str) -> None:
  print(message, file=sys.stderr, flush=True)


def train_command(game: str, checkpoint: str) -> list[str]:
  """The train.py command line for `game` (its run folder is the
  checkpoint's)."""
  if _MODE.value == "defaults":
    return [sys.executable, _TRAIN, f"--game={game}",
            f"--minutes={_MINUTES.value:g}",
            f"--run_dir={os.path.dirname(checkpoint)}", "--json",
            "--noprogress"]
  args = [sys.executable, _TRAIN, f"--game={game}",
          "--recipe=public_states", "--input=tokens",
          f"--run_dir={os.path.dirname(checkpoint)}",
          "--backend=inline", f"--steps={_STEPS.value}",
          f"--batch_size={_BATCH.value}", f"--min_replay={_MIN_REPLAY.value}",
          f"--max_updates_per_example={_MAX_UPDATES.value}",
          f"--simulations={_ACTOR_S.value}",
          f"--solver_simulations={_SOLVER_S.value}",
          f"--max_moves={_MAX_MOVES.value}",
          f"--max_histories={_MAX_HISTORIES.value}",
          f"--hidden={_HIDDEN.value}",
          f"--policy_hidden={_POLICY_HIDDEN.value}",
          f"--token_width={_TOKEN_WIDTH.value}",
          f"--conv_channels={_CONV_CHANNELS.value}", f"--seed={_SEED.value}",
          f"--checkpoint={checkpoint}", "--checkpoint_every=1",
          "--json", "--noprogress"]
  args += shlex.split(_TRAIN_ARGS.value)
  for entry in _GAME_ARGS.value:
    name, _, more = entry.partition("=")
    if name in (game, game.split("(")[0]):
      args += shlex.split(more)
  return args


def _error_line(stderr: str) -> str:
  """The child's last error line: its last stderr line that is not absl's
  or the trainer's log (I/W lines, 'trained ...', 'stopped ...')."""
  lines = [l.strip() for l in stderr.splitlines() if l.strip()]
  for line in reversed(lines):
    if line[:1] in "IWD" and line[1:5].isdigit():  # absl log prefix
      continue
    if line.startswith(("trained ", "stopped (", "warnings.warn")):
      continue
    return line[:400]
  return "(no output)"


def _summary(stdout: str) -> dict | None:
  for line in reversed(stdout.splitlines()):
    if line.startswith("{"):
      try:
        return json.loads(line)
      except json.JSONDecodeError:
        return None
  return None


def _from_checkpoint(path: str) -> dict | None:
  """Step and examples of the last checkpoint a killed run wrote."""
  if not os.path.exists(path):
    return None
  try:
    from open_spiel_sog.algorithms.sog import cvpn  # pylint: disable=g-import-not-at-top
    meta, _ = cvpn.read_checkpoint(path)
  except Exception:  # pylint: disable=broad-except
    return None
  return {"steps": int(meta.get("step", 0)),
          "examples": int(meta.get("extra", {}).get("examples", 0))}


def _descendants(pid: int) -> list[int]:
  """`pid` and its descendants, from /proc (Linux)."""
  parent = {}
  for entry in os.listdir("/proc"):
    if entry.isdigit():
      try:
        with open(f"/proc/{entry}/stat") as f:
          parent[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
      except (OSError, IndexError, ValueError):
        continue
  out, frontier = [pid], [pid]
  while frontier:
    frontier = [p for p, q in parent.items() if q in frontier]
    out += frontier
  return out


def _peak_kb(pid: int) -> int | None:
  try:
    with open(f"/proc/{pid}/status") as f:
      for line in f:
        if line.startswith("VmHWM:"):
          return int(line.split()[1])
  except OSError:
    pass
  return None


class MemorySampler:
  """Samples the peak resident memory (VmHWM) of a process and its
  descendants every `interval` seconds until `stop()`; `peaks()` gives
  {"trainer" | "worker K" (in order of first sight): MB}. A process's
  VmHWM is its peak since it started, so a sample misses only what a
  process reached in its last `interval` before it ended."""

  def __init__(self, pid: int, interval: float = 0.5):
    self._pid, self._interval = pid, interval
    self._peak: dict[int, int] = {}
    self._done = threading.Event()
    self._thread = threading.Thread(target=self._run, daemon=True)
    self._thread.start()

  def _run(self) -> None:
    while not self._done.is_set():
      for pid in _descendants(self._pid):
        kb = _peak_kb(pid)
        if kb is not None:
          self._peak[pid] = max(kb, self._peak.get(pid, 0))
      self._done.wait(self._interval)

  def stop(self) -> dict[str, float]:
    self._done.set()
    self._thread.join()
    return self.peaks()

  def peaks(self) -> dict[str, float]:
    out, k = {}, 0
    for pid, kb in self._peak.items():
      if pid == self._pid:
        name = "trainer"
      else:
        k += 1
        name = f"worker {k}"
      out[name] = round(kb / 1024, 1)
    return out


def _recipe_line(stderr: str) -> str | None:
  """The recipe train.py's first line names ('train: G: recipe X (why)')."""
  for line in stderr.splitlines():
    if line.startswith("train: ") and ": recipe " in line:
      return line.split(": recipe ", 1)[1].split(" ", 1)[0]
  return None


def run_game(game: str) -> dict:
  """Trains on `game` in a child process and returns its row."""
  row = {"game": game}
  with tempfile.TemporaryDirectory(prefix="train_coverage-") as tmp:
    checkpoint = os.path.join(tmp, "net.npz")
    args = train_command(game, checkpoint)
    row["command"] = " ".join(
        shlex.quote(a) for a in ["examples/train.py"] + [
            "--checkpoint=TMP/net.npz" if a.startswith("--checkpoint=") else a
            for a in args[2:]])
    out_path, err_path = os.path.join(tmp, "out"), os.path.join(tmp, "err")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join(
        [_ROOT] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                   if p])
    start = time.monotonic()
    timed_out = killed = False
    time_limit = (_MINUTES.value * 60 + _STARTUP.value
                  if _MODE.value == "defaults" else _TIME_LIMIT.value)
    with open(out_path, "w") as out, open(err_path, "w") as err:
      child = subprocess.Popen(args, stdout=out, stderr=err, cwd=_ROOT,
                               env=env)
      sampler = MemorySampler(child.pid)
      try:
        child.wait(timeout=time_limit)
      except subprocess.TimeoutExpired:
        timed_out = True
        child.send_signal(signal.SIGTERM)
        try:
          child.wait(timeout=_GRACE.value)
        except subprocess.TimeoutExpired:
          killed = True
          child.kill()
          child.wait()
      peaks = sampler.stop()
    seconds = time.monotonic() - start
    with open(out_path) as f:
      stdout = f.read()
    with open(err_path) as f:
      stderr = f.read()
    summary = _summary(stdout)
    if _LOG_DIR.value:
      os.makedirs(_LOG_DIR.value, exist_ok=True)
      name = "".join(c if c.isalnum() or c in "_-=," else "_" for c in game)
      with open(os.path.join(_LOG_DIR.value, f"{name}.log"), "w") as f:
        f.write(stderr)
    row["seconds"] = round(seconds, 1)
    row["returncode"] = child.returncode
    row["recipe"] = _recipe_line(stderr)
    row["peak_mb"] = peaks
    row["max_peak_mb"] = max(peaks.values(), default=None)
    if summary is not None:
      run_s = float(summary.get("seconds") or 0.0)
      stats = summary.get("worker_stats") or {}
      row.update(steps=summary.get("steps"), examples=summary.get("examples"),
                 train_seconds=round(run_s, 1),
                 examples_per_s=(round(summary["examples"] / run_s, 2)
                                 if run_s > 0 else None),
                 loss=summary.get("loss"),
                 value_loss=(summary.get("last") or {}).get("value_loss"),
                 policy_loss=(summary.get("last") or {}).get("policy_loss"),
                 games=int(stats.get("games", 0)),
                 solves=int(stats.get("solves", 0)))
    needed = 1 if _MODE.value == "defaults" else _STEPS.value
    finished = (summary is not None and not summary.get("stopped") and
                (summary.get("steps") or 0) >= needed)
    if finished and (child.returncode == 0 or timed_out):
      # (A run that reached its steps as the time limit came, and got the
      # SIGTERM while it wrote its summary, trains: its seconds show it.)
      row["status"] = "trains"
    elif timed_out:
      row["status"] = "timeout"
      if summary is None:
        saved = _from_checkpoint(checkpoint)
        row.update(saved or {"steps": 0, "examples": 0})
        row["from_checkpoint"] = saved is not None
      how = "killed" if killed else "stopped by SIGTERM"
      row["error"] = (f"timeout after {time_limit:.0f} s ({how}; "
                      f"{row.get('examples', 0)} examples, "
                      f"{row.get('steps', 0)} steps)")
    elif (_MODE.value == "defaults" and child.returncode == 0 and
          summary is not None and not summary.get("stopped")):
      row["status"] = "gathering"  # (its replay never reached min_replay)
      row["error"] = (f"no update in {_MINUTES.value:g} minutes "
                      f"({summary.get('examples', 0)} examples)")
    else:
      row["status"] = "fails"
      row["error"] = f"exit {child.returncode}: {_error_line(stderr)}"
      if summary is None and "Traceback" in stderr:
        row["traceback"] = True
    if (row["max_peak_mb"] or 0) > _MEMORY_LIMIT.value * 1024:
      row["over"] = row["status"]
      row["status"] = "over"
      row["error"] = (f"a process peaked at {row['max_peak_mb']:.0f} MB, "
                      f"past {_MEMORY_LIMIT.value:g} GB "
                      f"({row.get('error', row['over'])})")
  return row


def _ordered(games: list[str]) -> list[str]:
  if not _ORDER_FROM.value or not os.path.exists(_ORDER_FROM.value):
    return games
  with open(_ORDER_FROM.value) as f:
    recorded = json.load(f)
  rows = list(recorded.get("rows", []))
  rows += recorded.get("rerun", {}).get("rows", [])
  memory = {r["game"]: r.get("max_rss_mb", float("inf")) for r in rows}
  return sorted(games, key=lambda g: memory.get(g, float("inf")))


def _fmt(value, spec: str) -> str:
  return "" if value is None else format(value, spec)


def _markdown(rows: list[dict]) -> str:
  lines = ["| game | recipe | result | s | examples/s | loss | peak MB "
           "(trainer; workers) |", "|---|---|---|---|---|---|---|"]
  for r in rows:
    peaks = dict(r.get("peak_mb") or {})
    trainer = peaks.pop("trainer", None)
    peak = (f"{_fmt(trainer, '.0f')}; "
            f"{', '.join(format(v, '.0f') for v in peaks.values()) or '-'}")
    if r["status"] == "trains":
      result = (f"trains ({r['steps']} steps, {r['examples']} examples, "
                f"{r['games']} games, {r['solves']} solves)")
    else:
      result = f"{r['status']}: {r.get('error', '')}".replace("|", "\\|")
    lines.append(f"| {r['game']} | {r.get('recipe') or ''} | {result} | "
                 f"{r['seconds']:.0f} | "
                 f"{_fmt(r.get('examples_per_s'), '.2f')} | "
                 f"{_fmt(r.get('loss'), '.4f')} | {peak} |")
  return "\n".join(lines)


def main(argv):
  del argv
  games = ([g for g in _GAMES.value.split(";") if g] if _GAMES.value
           else coverage_games())
  skip = {s for s in _SKIP.value.split(",") if s}
  games = _ordered([g for g in games if g.split("(")[0] not in skip])
  rows = []
  if _ROWS_FILE.value and os.path.exists(_ROWS_FILE.value):
    with open(_ROWS_FILE.value) as f:
      done = {r["game"]: r for r in map(json.loads, filter(str.strip, f))}
    rows = [done[g] for g in games if g in done]
    games = [g for g in games if g not in done]
    _log(f"{len(rows)} games' rows from {_ROWS_FILE.value}")
  start = time.monotonic()
  for k, game in enumerate(games):
    _log(f"[{k + 1}/{len(games)}] {game} ...")
    row = run_game(game)
    rows.append(row)
    if _ROWS_FILE.value:
      with open(_ROWS_FILE.value, "a") as f:
        f.write(json.dumps(row) + "\n")
    _log(f"[{k + 1}/{len(games)}] {game}: {row['status']} "
         f"{row.get('error', '')} ({row['seconds']:.0f} s; "
         f"{time.monotonic() - start:.0f} s in all)")
  print(_markdown(rows))
  counts = {s: sum(r["status"] == s for r in rows)
            for s in ("trains", "gathering", "fails", "timeout", "over")}
  peak = max((r.get("max_peak_mb") or 0 for r in rows), default=0)
  bound = (f"minutes={_MINUTES.value:g}" if _MODE.value == "defaults" else
           f"steps={_STEPS.value}, time_limit_per_game="
           f"{_TIME_LIMIT.value:.0f} s")
  print(f"\n{counts['trains']} of {len(rows)} games train, "
        f"{counts['gathering']} gather without an update, "
        f"{counts['fails']} fail, {counts['timeout']} time out, "
        f"{counts['over']} pass {_MEMORY_LIMIT.value:g} GB; the largest "
        f"process peaked at {peak:.0f} MB ({bound}).")
  result = {
      "mode": _MODE.value, "minutes": _MINUTES.value,
      "memory_limit_gb": _MEMORY_LIMIT.value, "max_peak_mb": peak,
      "steps": _STEPS.value, "time_limit_per_game": _TIME_LIMIT.value,
      "grace": _GRACE.value, "batch_size": _BATCH.value,
      "min_replay": _MIN_REPLAY.value,
      "max_updates_per_example": _MAX_UPDATES.value,
      "actor_simulations": _ACTOR_S.value,
      "solver_simulations": _SOLVER_S.value, "max_moves": _MAX_MOVES.value,
      "max_histories": _MAX_HISTORIES.value, "hidden": _HIDDEN.value,
      "policy_hidden": _POLICY_HIDDEN.value,
      "token_width": _TOKEN_WIDTH.value,
      "conv_channels": _CONV_CHANNELS.value, "seed": _SEED.value,
      "train_args": _TRAIN_ARGS.value, "game_args": _GAME_ARGS.value,
      **counts, "games": len(rows),
      "python": platform.python_version(), "rows": rows}
  if _OUTPUT.value:
    with open(_OUTPUT.value, "w") as f:
      json.dump(result, f, indent=1)
      f.write("\n")
  if _JSON.value:
    print(json.dumps(result))


if __name__ == "__main__":
  app.run(main)
