"""A searcher's belief read as what the opponent hides, game by game.

A `Belief` (`algorithms/sog/beliefs.py`) is a probability over histories.
People read it as the thing they cannot see, so `view(game, belief)` sums
it into that:

  * "board": phantom_ttt and dark_hex (all their variants): for each cell,
    the probability that the opponent has a stone there
    (`BeliefView.cells`, [rows, cols]);
  * "mrx": scotland_yard: the probability of Mr. X at each station;
  * "chance": games whose hidden part is what chance dealt (cards, dice):
    the probability of each deal the searcher cannot see (the outcomes of
    the chance steps that differ between the belief's histories);
  * "actions": other games with something hidden (goofspiel's bids): the
    probability of each sequence of opponent actions that differs between
    the histories;
  * "none": nothing hidden (perfect information, or a single history).

`BeliefView.parts` always gives the labelled probabilities, most probable
first, for printing; `describe` writes the text.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pyspiel

from open_spiel_sog.algorithms.sog.beliefs import Belief
from open_spiel_sog.games import scotland_yard

BOARD_GAMES = ("phantom_ttt", "dark_hex", "dark_hex_ir")
KINDS = ("board", "mrx", "chance", "actions", "none")

# How the board games print each player's stones (hex marks stones joined to
# an edge with other letters; the capital is a winning chain).
STONES = ({"x", "y", "z", "X"}, {"o", "p", "q", "O"})
EMPTY = "."

# Kuhn's and Leduc's cards, as people name them (Leduc's card c has rank
# c // 2: a pair of J, of Q, of K).
_KUHN_CARDS = {"Deal:0": "J", "Deal:1": "Q", "Deal:2": "K"}
_LEDUC_CARDS = {f"Chance outcome:{c}": "JQK"[c // 2] for c in range(6)}


@dataclasses.dataclass(frozen=True)
class BeliefView:
  """A belief summed into what the opponent hides.

  Attributes:
    kind: one of KINDS.
    parts: (label, probability) of each hidden part, most probable first
      (board: one per cell with a possible stone, named as the game's
      moves name it (`cell_name`); mrx: one per station, "station S").
    cells: board: [rows, cols] probability of an opponent stone in each
      cell; else None.
    stations: mrx: {station id: probability}; else None.
    histories: how many histories the belief holds; exact: whether they are
      all of the infostate's.
  """
  kind: str
  parts: list[tuple[str, float]]
  cells: np.ndarray | None = None  # [rows, cols]
  stations: dict[int, float] | None = None
  histories: int = 0
  exact: bool = True


def board_of(state: pyspiel.State) -> list[list[str]]:
  """The true board of a phantom_ttt or dark_hex state, as rows of marks."""
  rows = []
  for line in str(state).splitlines():
    line = line.strip()
    if line:
      rows.append(line.split() if " " in line else list(line))
  return rows


def cell_name(row: int, col: int, hexagonal: bool) -> str:
  """A cell as the game's moves name it: phantom_ttt's "(1,2)" (row,
  column), dark_hex's "c2" (column letter, row from 1)."""
  if hexagonal:
    return f"{chr(ord('a') + col)}{row + 1}"
  return f"({row},{col})"


def _board_view(belief: Belief) -> BeliefView:
  opponent = 1 - belief.player
  cells = None
  for state, p in zip(belief.histories, belief.probabilities):
    board = board_of(state)
    if cells is None:
      cells = np.zeros((len(board), max(len(r) for r in board)))
    for r, row in enumerate(board):
      for c, mark in enumerate(row):
        if mark in STONES[opponent]:
          cells[r, c] += p
  hexagonal = belief.histories[0].get_game().get_type().short_name != (
      "phantom_ttt")
  parts = sorted(((cell_name(r, c, hexagonal), float(cells[r, c]))
                  for r, c in zip(*np.nonzero(cells > 1e-12))),
                 key=lambda x: -x[1])
  return BeliefView("board", parts, cells=cells,
                    histories=len(belief.histories), exact=belief.exact)


def _mrx_view(belief: Belief) -> BeliefView:
  stations: dict[int, float] = {}
  for state, p in zip(belief.histories, belief.probabilities):
    state = scotland_yard.native.state_view(state)
    if state.mrx >= 0:
      station = state.rules.labels[state.mrx]
      stations[station] = stations.get(station, 0.0) + float(p)
  parts = sorted(((f"station {s}", p) for s, p in stations.items()),
                 key=lambda x: -x[1])
  return BeliefView("mrx", parts, stations=stations,
                    histories=len(belief.histories), exact=belief.exact)


def _differing(belief: Belief, chance: bool) -> list[tuple[str, ...]] | None:
  """Per history, the labels of its steps that differ between the belief's
  histories: chance outcomes (`chance`) or the opponent's actions, the k-th
  such step of each history compared with the k-th of the others. None
  where nothing differs."""
  actor = pyspiel.PlayerId.CHANCE if chance else 1 - belief.player
  steps = [[item.action for item in state.full_history()
            if item.player == actor] for state in belief.histories]
  longest = max(len(s) for s in steps)
  differ = {k for k in range(longest)
            if len({s[k] if k < len(s) else None for s in steps}) > 1}
  if not differ:
    return None
  game = belief.histories[0].get_game()
  name = game.get_type().short_name
  labels = []
  for history in belief.histories:
    # Replayed, so that each action is named in the state it was taken in
    # (a chess move's name depends on the board).
    state = game.new_initial_state()
    label, k = [], 0
    for item in history.full_history():
      if item.player == actor:
        if k in differ:
          label.append(_action_label(name, state.action_to_string(
              item.player, item.action)))
        k += 1
      state.apply_action(item.action)
    labels.append(tuple(label))
  return labels


def _action_label(game_name: str, text: str) -> str:
  # universal_poker's "player=-1 move=Deal Kc"
  text = text.split("move=", 1)[-1]
  if game_name == "kuhn_poker":
    return _KUHN_CARDS.get(text, text)
  if game_name == "leduc_poker":
    return _LEDUC_CARDS.get(text, text)
  return text


def _joined(labels: tuple[str, ...]) -> str:
  """("Deal 8h", "Deal Ad") as "Deal 8h Ad"."""
  words = [label.split(" ", 1) for label in labels]
  if len(words) > 1 and all(len(w) == 2 and w[0] == words[0][0]
                            for w in words):
    return words[0][0] + " " + " ".join(w[1] for w in words)
  return " ".join(labels)


def view(game: pyspiel.Game, belief: Belief) -> BeliefView:
  """`belief` summed into what the opponent hides in `game` (module doc)."""
  name = game.get_type().short_name
  if name in BOARD_GAMES:
    return _board_view(belief)
  if name in ("scotland_yard", scotland_yard.native.PYTHON_NAME):
    return _mrx_view(belief)
  for kind, chance in (("chance", True), ("actions", False)):
    labels = _differing(belief, chance)
    if labels is None:
      continue
    groups: dict[tuple[str, ...], float] = {}
    for label, p in zip(labels, belief.probabilities):
      groups[label] = groups.get(label, 0.0) + float(p)
    parts = sorted(((_joined(k), p) for k, p in groups.items()),
                   key=lambda x: -x[1])
    return BeliefView(kind, parts, histories=len(belief.histories),
                      exact=belief.exact)
  return BeliefView("none", [], histories=len(belief.histories),
                    exact=belief.exact)


_WHAT = {"board": "opponent's stones", "mrx": "Mr. X",
         "chance": "what chance dealt the opponent",
         "actions": "the opponent's hidden moves"}


def describe(belief_view: BeliefView, top: int = 5) -> str:
  """One line: the `top` likeliest hidden parts with their probabilities
  (those of at least 0.005; the rest are counted)."""
  if belief_view.kind == "none":
    return "belief: nothing hidden"
  n = belief_view.histories
  histories = f"{n} histor{'y' if n == 1 else 'ies'}"
  over = histories if belief_view.exact else f"a sample of {histories}"
  if not belief_view.parts:
    return f"belief ({_WHAT[belief_view.kind]}, over {over}): none possible"

  listed = [(label, p) for label, p in belief_view.parts[:top] if p >= 0.005]
  shown = ", ".join(f"{label} {p:.2f}" for label, p in listed)
  more = len(belief_view.parts) - len(listed)
  tail = f", +{more} more" if more > 0 else ""
  return f"belief ({_WHAT[belief_view.kind]}, over {over}): {shown}{tail}"
