r"""Student of Games in three minutes: exact exploitability and a match.

    python examples/sog_demo.py                      # leduc_poker, ~2 min
    python examples/sog_demo.py --game=kuhn_poker --deals=20 --json

1. SoG(--simulations, 1) with the network shipped for the game (the rollout
   value function, with a notice, where none ships): its policy for one seed
   is built by re-solving at every public state and scored exactly
   (`sog_exploitability`).
2. OpenSpiel's IS-MCTS (--ismcts_simulations per move) and uniform random,
   scored the same way: each bot's policy is tabulated at every infostate
   and scored by OpenSpiel's `exploitability` (`bot_exploitability`).
   Exploitability is NashConv / 2, in the game's utility units (chips for
   poker).
3. A duplicate head-to-head, SoG against IS-MCTS (`tournament.round_robin`):
   --deals deals, each played in both seat orders with the same chance
   outcomes; SoG's mean return per game with its 95% interval.

Prints a table (agent, exploitability, seconds of its evaluation) and the
head-to-head line; with --json the last line of stdout is one JSON object.
OpenSpiel's C++ IS-MCTS is not reproducible from its seed (see
`open_spiel_sog.bots.baselines`), so its exploitability and the head-to-head
vary from run to run (on leduc_poker we saw IS-MCTS at 0.80 to 1.29);
SoG's and uniform random's exploitability do not.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from typing import Any

from absl import app
from absl import flags
import pyspiel

import open_spiel_sog  # pylint: disable=unused-import (registers bots)
from open_spiel_sog.bots import sog
from open_spiel_sog.evaluation import tournament
from open_spiel_sog.evaluation.exploitability import bot_exploitability
from open_spiel_sog.evaluation.exploitability import sog_exploitability

_GAME = flags.DEFINE_string(
    "game", "leduc_poker", "OpenSpiel game string: a two-player zero-sum "
    "game small enough for exact exploitability, whose states IS-MCTS can "
    "resample (kuhn_poker, leduc_poker).")
_SIMULATIONS = flags.DEFINE_integer(
    "simulations", 100, "SoG's GT-CFR simulations per search (>= 0).")
_SEED = flags.DEFINE_integer(
    "seed", 0, "Seed (>= 0) of SoG's policy construction, of every bot and of "
    "the head-to-head's chance outcomes.")
_ISMCTS_SIMULATIONS = flags.DEFINE_integer(
    "ismcts_simulations", 1000, "IS-MCTS simulations per move (>= 1).")
_DEALS = flags.DEFINE_integer(
    "deals", 50, "Deals of the SoG vs IS-MCTS head-to-head (>= 2, for an "
    "interval), each played in both seat orders; on leduc_poker a deal "
    "(two games) takes about 1.3 s on one core.")
_PROGRESS = flags.DEFINE_bool("progress", True,
                              "Show progress bars on stderr.")
_JSON = flags.DEFINE_bool("json", False,
                          "Print a JSON summary as the last line of stdout.")

_MAX_SEED = 2**31 - 1


@dataclasses.dataclass(frozen=True)
class DemoConfig:
  """What the demo runs (one field per flag)."""
  game: str = "leduc_poker"
  simulations: int = 100
  seed: int = 0
  ismcts_simulations: int = 1000
  deals: int = 50
  progress: bool = True

  def validate(self) -> None:
    """Raises ValueError naming the first out-of-range flag."""
    for name, low in (("simulations", 0), ("ismcts_simulations", 1),
                      ("deals", 2)):
      if getattr(self, name) < low:
        raise ValueError(f"--{name} must be >= {low}, got "
                         f"{getattr(self, name)}")
    if not 0 <= self.seed <= _MAX_SEED:
      raise ValueError(f"--seed must be in [0, {_MAX_SEED}], got {self.seed}")

  @property
  def sog_params(self) -> dict[str, Any]:
    return {"simulations": self.simulations}

  @property
  def ismcts_params(self) -> dict[str, Any]:
    return {"simulations": self.ismcts_simulations}


def _spec(name: str, params: dict[str, Any]) -> str:
  """'name(k=v,...)', as pyspiel.load_bot and round_robin take bots."""
  inner = ",".join(f"{k}={v}" for k, v in params.items())
  return f"{name}({inner})" if inner else name


def _load_game(text: str) -> pyspiel.Game:
  """load_game, with a one-line error for an unknown game's name (OpenSpiel's
  own lists every registered game)."""
  name = pyspiel.game_parameters_from_string(text).get("name")
  if name not in pyspiel.registered_names():
    raise ValueError(f"--game: unknown game {name or text!r} "
                     "(pyspiel.registered_names() lists the known ones)")
  return pyspiel.load_game(text)


def _agent(name: str, params: dict[str, Any], evaluate) -> dict[str, Any]:
  """{name, bot, params, exploitability, seconds} of one evaluation."""
  start = time.perf_counter()
  summary = evaluate()
  return {"name": _spec(name, params), "bot": name, "params": params,
          "exploitability": summary["mean"],
          "seconds": time.perf_counter() - start}


def run(config: DemoConfig) -> dict[str, Any]:
  """Evaluates the three agents and plays the head-to-head."""
  config.validate()
  # The game SoG searches (a simultaneous game's turn-based form); raises
  # ValueError for games it does not support (not two-player zero-sum, ...).
  game = sog.search_game(_load_game(config.game))
  seeds = [config.seed]
  # The cheap evaluations first: a game IS-MCTS cannot play fails at once.
  uniform = _agent("uniform_random", {}, lambda: bot_exploitability(
      game, "uniform_random", {}, seeds, progress=config.progress))
  ismcts = _agent("ismcts", config.ismcts_params, lambda: bot_exploitability(
      game, "ismcts", config.ismcts_params, seeds, progress=config.progress))
  sog_agent = _agent("sog", config.sog_params, lambda: sog_exploitability(
      game, config.sog_params, seeds, progress=config.progress))
  labels = [_spec(bot, dict(params, seed=config.seed)) for bot, params in
            (("sog", config.sog_params), ("ismcts", config.ismcts_params))]
  start = time.perf_counter()
  result = tournament.round_robin(game, labels, games_per_pair=config.deals,
                                  seed=config.seed, elo_bootstrap=0,
                                  progress=config.progress)
  mean, ci95 = result["mean"][0][1], result["ci95"][0][1]
  return {
      "game": str(game),
      "seed": config.seed,
      "agents": [sog_agent, ismcts, uniform],
      "head_to_head": {
          "bots": labels,
          "deals": result["games_per_pair"],
          "games": len(result["games"]),
          "mean": mean,
          "ci95": ci95,
          "low": mean - ci95,
          "high": mean + ci95,
          "seconds": time.perf_counter() - start,
      },
  }


def format_summary(summary: dict[str, Any]) -> str:
  """The agents' table and the head-to-head line, as text."""
  agents = summary["agents"]
  width = max(len("agent"), *(len(a["name"]) for a in agents)) + 2
  lines = [f"{summary['game']}, seed {summary['seed']}; exploitability = "
           "NashConv / 2 in the game's units (exact)",
           f"{'agent':<{width}}{'exploitability':>16}{'seconds':>10}"]
  for a in agents:
    lines.append(f"{a['name']:<{width}}{a['exploitability']:>16.6f}"
                 f"{a['seconds']:>10.1f}")
  h = summary["head_to_head"]
  lines.append(
      f"head-to-head {h['bots'][0]} vs {h['bots'][1]}: {h['deals']} deals x "
      f"2 seats = {h['games']} games, SoG's mean return {h['mean']:+.3f} per "
      f"game, 95% interval [{h['low']:+.3f}, {h['high']:+.3f}] "
      f"({h['seconds']:.1f} s)")
  return "\n".join(lines)


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  config = DemoConfig(
      game=_GAME.value, simulations=_SIMULATIONS.value, seed=_SEED.value,
      ismcts_simulations=_ISMCTS_SIMULATIONS.value, deals=_DEALS.value,
      progress=_PROGRESS.value)
  try:
    summary = run(config)
  except (ValueError, pyspiel.SpielError) as e:
    print(f"sog_demo: {e}", file=sys.stderr)
    return 2
  print(format_summary(summary), flush=True)
  if _JSON.value:
    print(json.dumps(summary))
  return 0


if __name__ == "__main__":
  app.run(main)
