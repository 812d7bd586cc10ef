r"""Student of Games in about a minute: exact exploitability and a match.

    python examples/sog_demo.py                      # ~1 min on 2 cores
    python examples/sog_demo.py --game=kuhn_poker --match_games=4 --json

1. SoG(--simulations, 1) with the network shipped for --game (the rollout
   value function, with a notice, where none ships): its policy for one seed
   is built by re-solving at every public state and scored exactly
   (`sog_exploitability`).
2. OpenSpiel's IS-MCTS (--ismcts_simulations per move) and uniform random,
   scored the same way: each bot's policy is tabulated at every infostate
   and scored by OpenSpiel's `exploitability` (`bot_exploitability`).
   Exploitability is NashConv / 2, in the game's utility units (chips for
   poker).
3. A match at equal time (`tournament.duplicate_match`): SoG with the
   network shipped for --match_game (connect_four's policy-value network)
   against OpenSpiel's --match_opponent (C++ MCTS), --match_time_limit
   seconds a move each, --match_games games in duplicate seats; SoG's wins
   / draws / losses and its score with a 95% Wilson interval.

Prints a table (agent, exploitability, seconds of its evaluation) and the
match line; with --json the last line of stdout is one JSON object.
OpenSpiel's C++ IS-MCTS is not reproducible from its seed (see
`open_spiel_sog.bots.baselines`) and the match is timed, so IS-MCTS's
exploitability and the match vary from run to run; SoG's and uniform
random's exploitability do not.
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
_MATCH_GAME = flags.DEFINE_string(
    "match_game", "connect_four", "The match's game: SoG searches it with "
    "the network shipped for it (value_function=auto).")
_MATCH_OPPONENT = flags.DEFINE_string(
    "match_opponent", "mcts", "The match's opponent: a registered bot that "
    "takes time_limit and seed (OpenSpiel's C++ mcts; ismcts).")
_MATCH_TIME = flags.DEFINE_float(
    "match_time_limit", 0.1, "Seconds a move of each side in the match "
    "(> 0).")
_MATCH_GAMES = flags.DEFINE_integer(
    "match_games", 10, "Games of the match (even: duplicate seats; 0: no "
    "match).")
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
  match_game: str = "connect_four"
  match_opponent: str = "mcts"
  match_time_limit: float = 0.1
  match_games: int = 10
  progress: bool = True

  def validate(self) -> None:
    """Raises ValueError naming the first out-of-range flag."""
    for name, low in (("simulations", 0), ("ismcts_simulations", 1),
                      ("match_games", 0)):
      if getattr(self, name) < low:
        raise ValueError(f"--{name} must be >= {low}, got "
                         f"{getattr(self, name)}")
    if self.match_games % 2:
      raise ValueError(f"--match_games must be even (duplicate seats), got "
                       f"{self.match_games}")
    if not self.match_time_limit > 0:
      raise ValueError(f"--match_time_limit must be > 0, got "
                       f"{self.match_time_limit}")
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


def _load_game(text: str, flag: str = "--game") -> pyspiel.Game:
  """load_game, with a one-line error for an unknown game's name (OpenSpiel's
  own lists every registered game), naming `flag`."""
  name = pyspiel.game_parameters_from_string(text).get("name")
  if name not in pyspiel.registered_names():
    raise ValueError(f"{flag}: unknown game {name or text!r} "
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
  """Evaluates the three agents and plays the match."""
  config.validate()
  # The match's game and opponent first: a bad one is refused at once.
  setup = _match_setup(config) if config.match_games else None
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
  return {"game": str(game), "seed": config.seed,
          "agents": [sog_agent, ismcts, uniform],
          "match": match(config, *setup) if setup else None}


def _match_setup(config: DemoConfig) -> tuple[pyspiel.Game, Any]:
  """The match's game and opponent (its BotSpec), each checked."""
  game = _load_game(config.match_game, "--match_game")
  opponent = tournament.parse_bot(
      _spec(config.match_opponent, {"time_limit": config.match_time_limit}),
      "--match_opponent")
  tournament.load_bot(game, opponent, 0, "--match_opponent")
  return game, opponent


def match(config: DemoConfig, game: pyspiel.Game, opponent
          ) -> dict[str, Any]:
  """SoG with the shipped network against the opponent at equal time."""
  t = config.match_time_limit
  sog_bot = lambda seat, k: pyspiel.load_bot("sog", game, seat, {
      "time_limit": t, "seed": k})
  other = lambda seat, k: tournament.load_bot(game, dataclasses.replace(
      opponent, params=dict(opponent.params, seed=k)), seat, "sog_demo")
  result = tournament.duplicate_match(game, sog_bot, other,
                                      config.match_games,
                                      progress=config.progress, label="match")
  return dict(result, game=str(game),
              bots=[_spec("sog", {"time_limit": t}), opponent.label])


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
  m = summary["match"]
  if m is not None:
    low, high = m["score_95"]
    lines.append(
        f"match {m['game']}: {m['bots'][0]} vs {m['bots'][1]}, {m['games']} "
        f"games in duplicate seats: SoG won {m['wins']}, drew {m['draws']}, "
        f"lost {m['losses']}; score {m['score']:.3f}, 95% interval "
        f"[{low:.3f}, {high:.3f}] ({m['seconds']:.1f} s)")
  return "\n".join(lines)


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  config = DemoConfig(
      game=_GAME.value, simulations=_SIMULATIONS.value, seed=_SEED.value,
      ismcts_simulations=_ISMCTS_SIMULATIONS.value,
      match_game=_MATCH_GAME.value, match_opponent=_MATCH_OPPONENT.value,
      match_time_limit=_MATCH_TIME.value, match_games=_MATCH_GAMES.value,
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
