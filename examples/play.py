r"""Play any two-player game against SoG (or watch bots play), and see what
SoG believes about what it cannot see.

    python examples/play.py --game=kuhn_poker --player0=human \
        --player1="sog(time_limit=1)"
    python examples/play.py --game=phantom_ttt --player0="sog(time_limit=1)" \
        --player1="ismcts(time_limit=1)" --games=3 --png_dir=/tmp/pttt
    python examples/play.py --game="scotland_yard(map=glasses)" \
        --player0=uniform_random --player1="sog(time_limit=1)" --png_dir=/tmp/sy

Each seat is `human` or a bot as `pyspiel.load_bot` takes it (`sog(...)`,
`ismcts(...)`, `mcts(...)`, `uniform_random`, ...). A human seat shows what
that player sees (its information state), the legal moves with their
strings, and reads a move as an action index or as its string (`quit`, end
of file or Ctrl-C end the match with its summary). After each move of a SoG
bot the match prints its searched policy (likeliest actions), the value of
its position (its expected return) and its belief over what it cannot see:
the opponent's likeliest cards or dice, where the opponent's stones may be,
or where Mr. X may be. With a human seat in an imperfect-information game,
the bots' moves are shown only as that human sees them, and SoG's policy and
value (which tell its hidden cards) wait for the end of the game; its belief
(over the human's hidden parts) is shown at once. --reveal shows everything
at once. With --png_dir, one PNG per SoG decision: the belief drawn (a
board heat map, the Scotland Yard map, a bar chart of cards or dice) beside
the searched policy (docs/play.md). At the end of each game: the returns and
the running score over --games; --json prints the match as one JSON line
(the text then goes to stderr).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from typing import Any, TextIO

from absl import app
from absl import flags
import numpy as np
import pyspiel

import open_spiel_sog  # registers the package's bots and games  # pylint: disable=unused-import
from open_spiel_sog.evaluation import beliefs
from open_spiel_sog.evaluation import tournament

HUMAN = "human"

_GAME = flags.DEFINE_string("game", "kuhn_poker",
                            "Game string for pyspiel.load_game (two players).")
_PLAYER0 = flags.DEFINE_string(
    "player0", HUMAN, "Seat 0: 'human' or a bot, NAME or NAME(k=v,...), as "
    "pyspiel.load_bot takes it.")
_PLAYER1 = flags.DEFINE_string("player1", "sog(time_limit=1)",
                               "Seat 1: 'human' or a bot (as --player0).")
_GAMES = flags.DEFINE_integer("games", 1, "Games to play (same seats).")
_SEED = flags.DEFINE_integer("seed", 0, "Seed of the chance outcomes "
                             "(game g draws from seed + g).")
_TOP = flags.DEFINE_integer("top", 5, "Actions and hidden parts to print "
                            "after each SoG move.")
_PNG_DIR = flags.DEFINE_string(
    "png_dir", "", "Write one PNG per SoG decision here "
    "(gGGG_dDDD_pP.png: game, decision, player).")
_REVEAL = flags.DEFINE_bool(
    "reveal", False, "With a human seat in an imperfect-information game, "
    "still print every move and SoG's policy and value at once.")
_JSON = flags.DEFINE_bool("json", False, "Print the match as one JSON line "
                          "on stdout (the text goes to stderr).")


class Stop(Exception):
  """The human ended the match (quit, end of file or Ctrl-C)."""


class Human:
  """A human seat: reads moves from `stream`, writes to `out`."""

  def __init__(self, player: int, stream: TextIO, out: TextIO):
    self.player = player
    self._in = stream
    self._out = out

  def _say(self, text: str) -> None:
    print(text, file=self._out, flush=True)

  def choose(self, state: pyspiel.State) -> int:
    p = self.player
    legal = (state.legal_actions(p) if state.is_simultaneous_node() else
             state.legal_actions())
    names = {a: state.action_to_string(p, a) for a in legal}
    self._say(f"\n{_view(state, p)}")
    self._say(f"player {p} (you), legal moves: " +
              ", ".join(f"{a} {n}" for a, n in names.items()))
    while True:
      print(f"player {p} move> ", end="", file=self._out, flush=True)
      try:
        line = self._in.readline()
      except KeyboardInterrupt:
        raise Stop("interrupted") from None
      if not line:
        raise Stop("end of input")
      text = line.strip()
      if text in ("quit", "exit"):
        raise Stop(text)
      if not text:
        continue
      action, reason = parse_move(text, names)
      if action is not None:
        return action
      self._say(reason)


def parse_move(text: str, names: dict[int, str]) -> tuple[int | None, str]:
  """(action, "") for a legal action index or action string (case and
  surrounding space ignored), else (None, a one-line reason)."""
  if text.lstrip("-").isdigit():
    action = int(text)
    if action in names:
      return action, ""
    return None, (f"{action} is not a legal move here; legal: "
                  f"{', '.join(map(str, names))}")
  matches = [a for a, n in names.items() if n.strip().lower() == text.lower()]
  if len(matches) == 1:
    return matches[0], ""
  return None, (f"{text!r} is neither a legal action index nor a legal "
                "move's name; legal: " +
                ", ".join(f"{a} {n}" for a, n in names.items()))


def _view(state: pyspiel.State, player: int) -> str:
  """What `player` sees: the whole state in perfect-information games, its
  information state otherwise (its observation where the game has none)."""
  game_type = state.get_game().get_type()
  if (game_type.information ==
      pyspiel.GameType.Information.PERFECT_INFORMATION):
    return str(state)
  if game_type.provides_information_state_string:
    return state.information_state_string(player)
  return state.observation_string(player)


@dataclasses.dataclass
class Seat:
  label: str
  human: Human | None = None
  bot: Any = None


def _seats(game: pyspiel.Game, specs: list[str], out: TextIO) -> list[Seat]:
  seats = []
  for p, spec in enumerate(specs):
    if spec.strip() == HUMAN:
      seats.append(Seat(HUMAN, human=Human(p, sys.stdin, out)))
    else:
      bot = tournament.load_bot(game, tournament.parse_bot(spec, "play"), p,
                                "play")
      seats.append(Seat(spec.strip(), bot=bot))
  return seats


class Match:
  """Plays the games and prints them (module doc)."""

  def __init__(self, game: pyspiel.Game, name: str, seats: list[Seat],
               out: TextIO, top: int, png_dir: str, reveal: bool):
    self.game = game
    self.name = name  # the game string as given (str(game) lists defaults)
    self.seats = seats
    self.out = out
    self.top = top
    self.png_dir = png_dir
    humans = any(s.human is not None for s in seats)
    perfect = (game.get_type().information ==
               pyspiel.GameType.Information.PERFECT_INFORMATION)
    self.hide = humans and not perfect and not reveal
    self.returns: list[list[float]] = []
    self.decisions: list[dict[str, Any]] = []
    self.pictures: list[str] = []

  def say(self, text: str) -> None:
    print(text, file=self.out, flush=True)

  def _analysis(self, seat: Seat, state: pyspiel.State, player: int,
                g: int, n: int) -> tuple[list[str], list[str]]:
    """(lines shown at once, lines held to the game's end) about a SoG
    bot's decision, and its record and picture."""
    last = getattr(seat.bot, "last_decision", None)
    decision = last() if callable(last) else None
    if decision is None:
      return [], []
    view = beliefs.view(self.game, decision.belief)
    ranked = sorted(decision.policy.items(), key=lambda x: -x[1])
    policy = ", ".join(f"{state.action_to_string(player, a)} {p:.2f}"
                       for a, p in ranked[:self.top] if p >= 0.005)
    private = [f"  searched policy: {policy}",
               f"  value of its position: {decision.value:+.3f}"]
    public = [f"  {beliefs.describe(view, self.top)}"]
    self.decisions.append({
        "game": g, "player": player, "policy": {
            str(a): p for a, p in decision.policy.items()},
        "value": decision.value, "belief_kind": view.kind,
        "belief": view.parts[:self.top], "histories": view.histories})
    if self.png_dir:
      from open_spiel_sog.evaluation import pictures  # pylint: disable=g-import-not-at-top
      path = os.path.join(self.png_dir, f"g{g:03d}_d{n:03d}_p{player}.png")
      pictures.draw_decision(
          path, self.game, decision, view,
          f"{self.name}  game {g + 1}, decision {n + 1}: {seat.label} "
          f"(player {player})")
      self.pictures.append(path)
    return (public, private) if self.hide else (public + private, [])

  def play(self, g: int, rng: np.random.Generator) -> list[float]:
    for seat in self.seats:
      if seat.bot is not None:
        seat.bot.restart()
    state = self.game.new_initial_state()
    held: list[str] = []
    n = 0
    while not state.is_terminal():
      if state.is_chance_node():
        state.apply_action(tournament.sample_chance(state, rng))
        continue
      players = ([0, 1] if state.is_simultaneous_node() else
                 [state.current_player()])
      actions = []
      for p in players:
        seat = self.seats[p]
        if seat.human is not None:
          actions.append(seat.human.choose(state))
          continue
        action = seat.bot.step(state)
        actions.append(action)
        name = state.action_to_string(p, action)
        shown, later = self._analysis(seat, state, p, g, n)
        n += bool(shown or later)
        if self.hide:
          self.say(f"player {p} ({seat.label}) moved")
          held.append(f"player {p} ({seat.label}) played {name}")
          held.extend(later)
        else:
          self.say(f"player {p} ({seat.label}) plays {name}")
        for line in shown:
          self.say(line)
      if state.is_simultaneous_node():
        for seat in self.seats:
          if seat.bot is not None:
            seat.bot.inform_actions(state, actions)
        state.apply_actions(actions)
      else:
        p, action = players[0], actions[0]
        for q, seat in enumerate(self.seats):
          if q != p and seat.bot is not None:
            seat.bot.inform_action(state, p, action)
        state.apply_action(action)
    if held:
      self.say("\nwhat the bots played and searched:")
      for line in held:
        self.say(line)
    self.say(f"\nfinal state:\n{state}")
    returns = [float(r) for r in state.returns()]
    self.returns.append(returns)
    return returns

  def score_line(self) -> str:
    played = len(self.returns)
    if not played:
      return "no game finished"
    mean = np.mean(self.returns, axis=0)
    wins = sum(r[0] > r[1] for r in self.returns)
    losses = sum(r[0] < r[1] for r in self.returns)
    return (f"score after {played} game(s): player 0 ({self.seats[0].label}) "
            f"{wins} won, {played - wins - losses} drawn, {losses} lost; "
            f"mean returns {mean[0]:+.3f} / {mean[1]:+.3f}")


def run(game_string: str, specs: list[str], games: int, seed: int,
        top: int, png_dir: str, reveal: bool, out: TextIO
        ) -> tuple[Match, str]:
  """Plays the match; (the match, why it stopped early or "")."""
  game = pyspiel.load_game(game_string)
  if game.num_players() != 2:
    raise ValueError(f"play: {game_string} has {game.num_players()} players; "
                     "two-player games only")
  if games < 1:
    raise ValueError(f"play: --games must be >= 1, got {games}")
  seats = _seats(game, specs, out)
  if png_dir:
    os.makedirs(png_dir, exist_ok=True)
  match = Match(game, game_string, seats, out, top, png_dir, reveal)
  for g in range(games):
    match.say(f"\n=== game {g + 1} of {games}: {game_string} ===")
    try:
      returns = match.play(g, np.random.default_rng(seed + g))
    except Stop as e:
      return match, str(e)
    except KeyboardInterrupt:
      return match, "interrupted"
    match.say(f"returns: {returns[0]:+g} / {returns[1]:+g}")
    match.say(match.score_line())
  return match, ""


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  out = sys.stderr if _JSON.value else sys.stdout
  try:
    match, stopped = run(_GAME.value, [_PLAYER0.value, _PLAYER1.value],
                         _GAMES.value, _SEED.value, _TOP.value,
                         _PNG_DIR.value, _REVEAL.value, out)
  except (ValueError, OSError, pyspiel.SpielError) as e:
    message = str(e)  # (the match's own errors name play: already)
    print(message if message.startswith("play: ") else f"play: {message}",
          file=sys.stderr)
    return 2
  except KeyboardInterrupt:  # while the bots load
    print("\nplay: interrupted", file=sys.stderr)
    return 130
  if stopped:
    print(f"\nmatch stopped ({stopped}); {match.score_line()}", file=out)
  if _JSON.value:
    print(json.dumps({
        "game": _GAME.value, "players": [s.label for s in match.seats],
        "games": len(match.returns), "stopped": stopped or None,
        "returns": match.returns,
        "mean_returns": (np.mean(match.returns, axis=0).tolist()
                         if match.returns else None),
        "decisions": match.decisions, "pictures": match.pictures}))
  return 0


if __name__ == "__main__":
  app.run(main)
