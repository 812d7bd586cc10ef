"""Pictures of a searcher's decision (matplotlib, the `plot` extra): what it
believes beside the policy it searched.

`draw_decision(path, game, decision, view, title)` writes one PNG:

  * phantom_ttt, dark_hex: the board as a heat map of where the opponent's
    stones may be, the searcher's own stones marked;
  * scotland_yard: the map, each station shaded by the probability of
    Mr. X there, the detectives marked;
  * card and dice games (a belief over what chance dealt): the belief as a
    bar chart;
  * and, beside each of those and alone for any other game, the searched
    policy as a bar chart.

Everything drawn comes from the decision's belief (its histories agree on
what the searcher sees), never from the true state, so a picture shows only
what the searcher knows.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pyspiel

from open_spiel_sog.evaluation import beliefs
from open_spiel_sog.games import scotland_yard

# Bars drawn at most (the likeliest; the rest are summed in one bar).
MAX_BARS = 12

_TRANSPORT_COLOURS = ("#d9b300", "#2e8b57", "#c0392b", "#222222")


def _pyplot():
  try:
    import matplotlib  # pylint: disable=g-import-not-at-top
  except ImportError:
    raise ValueError("pictures need matplotlib: pip install -e '.[plot]' "
                     "(make install installs it)") from None
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
  return plt


def _bars(ax, parts: list[tuple[str, float]], title: str, colour: str):
  shown = parts[:MAX_BARS]
  rest = sum(p for _, p in parts[MAX_BARS:])
  if rest > 0:
    shown = shown + [(f"{len(parts) - MAX_BARS} others", rest)]
  labels = [label for label, _ in shown][::-1]
  values = [p for _, p in shown][::-1]
  ax.barh(range(len(values)), values, color=colour)
  ax.set_yticks(range(len(values)))
  ax.set_yticklabels(labels, fontsize=8)
  ax.set_xlim(0, 1)
  ax.set_xlabel("probability")
  ax.set_title(title, fontsize=10)
  for y, v in enumerate(values):
    ax.text(min(v + 0.02, 0.85), y, f"{v:.2f}", va="center", fontsize=7)


def _policy_parts(state: pyspiel.State, player: int,
                  policy: dict[int, float]) -> list[tuple[str, float]]:
  parts = sorted(((state.action_to_string(player, a), p)
                  for a, p in policy.items()), key=lambda x: -x[1])
  # (Actions the search gave nothing are left out.)
  return [x for x in parts if x[1] >= 0.005] or parts


def _board(ax, plt, game: pyspiel.Game, view: beliefs.BeliefView,
           belief, player: int) -> None:
  cells = view.cells
  own_marks = beliefs.board_of(belief.histories[0])
  own = beliefs.STONES[player]
  hexagonal = game.get_type().short_name != "phantom_ttt"
  cmap = plt.get_cmap("Reds")
  rows, cols = cells.shape
  from matplotlib.patches import RegularPolygon  # pylint: disable=g-import-not-at-top
  for r in range(rows):
    for c in range(cols):
      if hexagonal:
        x, y = c + 0.5 * r, -r * np.sqrt(3) / 2
        ax.add_patch(RegularPolygon((x, y), numVertices=6,
                                    radius=1 / np.sqrt(3),
                                    facecolor=cmap(cells[r, c]),
                                    edgecolor="grey"))
      else:
        x, y = c, -r
        ax.add_patch(plt.Rectangle((x - 0.5, y - 0.5), 1, 1,
                                   facecolor=cmap(cells[r, c]),
                                   edgecolor="grey"))
      mark = own_marks[r][c] if c < len(own_marks[r]) else beliefs.EMPTY
      if mark in own:
        ax.text(x, y, "xo"[player], ha="center", va="center", fontsize=18,
                color="#1f4e99", fontweight="bold")
      elif cells[r, c] > 0.005:
        ax.text(x, y, f"{cells[r, c]:.2f}", ha="center", va="center",
                fontsize=9, color="white" if cells[r, c] > 0.6 else "black")
  ax.set_xlim(-0.8, cols - 0.2 + (0.5 * (rows - 1) if hexagonal else 0))
  ax.set_ylim(-(rows - 1) * (np.sqrt(3) / 2 if hexagonal else 1) - 0.8, 0.8)
  ax.set_aspect("equal")
  ax.axis("off")
  ax.set_title(f"where the opponent's stones ({'xo'[1 - player]}) may be\n"
               f"(own stones: {'xo'[player]})", fontsize=10)


@functools.lru_cache(maxsize=8)
def spring_layout(num_nodes: int, edges: tuple[tuple[int, int], ...],
                  seed: int = 0, iterations: int = 300) -> np.ndarray:
  """[N, 2] positions in [0, 1]^2 of a graph's nodes by Fruchterman and
  Reingold's force-directed layout (edges pull, all pairs push), from a
  seeded random start: the same picture for the same map every time."""
  rng = np.random.default_rng(seed)
  pos = rng.random((num_nodes, 2))
  k = np.sqrt(1.0 / num_nodes)
  a = np.asarray([e[0] for e in edges], dtype=np.int64)
  b = np.asarray([e[1] for e in edges], dtype=np.int64)
  temperature = 0.1
  for _ in range(iterations):
    delta = pos[:, None, :] - pos[None, :, :]  # [N, N, 2]
    dist = np.maximum(np.linalg.norm(delta, axis=-1), 1e-3)
    force = (delta * (k * k / dist ** 2)[..., None]).sum(axis=1)
    d = pos[a] - pos[b]
    length = np.maximum(np.linalg.norm(d, axis=-1, keepdims=True), 1e-3)
    pull = d * length / k
    np.add.at(force, a, -pull)
    np.add.at(force, b, pull)
    norm = np.maximum(np.linalg.norm(force, axis=-1, keepdims=True), 1e-9)
    pos += force / norm * np.minimum(norm, temperature)
    temperature *= 0.985
  pos -= pos.min(axis=0)
  return pos / np.maximum(pos.max(axis=0), 1e-9)


def _map(ax, plt, view: beliefs.BeliefView, belief) -> None:
  state = scotland_yard.native.state_view(belief.histories[0])
  game_map = state.rules.map
  pos = spring_layout(game_map.num_stations,
                      tuple((a, b) for a, b, _ in game_map.edges))
  for a, b, transport in game_map.edges:
    ax.plot(*zip(pos[a], pos[b]), color=_TRANSPORT_COLOURS[transport],
            linewidth=2 if transport else 1, zorder=1)
  cmap = plt.get_cmap("Reds")
  probs = np.asarray([view.stations.get(s, 0.0) for s in game_map.stations])
  size = 320 if game_map.num_stations <= 40 else 60
  ax.scatter(pos[:, 0], pos[:, 1], s=size, c=cmap(probs), edgecolors="grey",
             zorder=2)
  font = 8 if game_map.num_stations <= 40 else 4
  for i, station in enumerate(game_map.stations):
    ax.text(pos[i, 0], pos[i, 1], str(station), ha="center", va="center",
            fontsize=font, zorder=3)
    if probs[i] > 0.005 and game_map.num_stations <= 40:
      ax.text(pos[i, 0], pos[i, 1] - 0.06, f"{probs[i]:.2f}", ha="center",
              va="center", fontsize=7, color="#8b0000", zorder=3)
  for k, d in enumerate(state.detectives):
    ax.scatter([pos[d, 0]], [pos[d, 1]], s=size * 1.8, marker="s",
               facecolors="none", edgecolors="#1f4e99", linewidths=2,
               zorder=4)
    ax.text(pos[d, 0] + 0.05, pos[d, 1] + 0.05, f"D{k + 1}", color="#1f4e99",
            fontsize=8, fontweight="bold", zorder=4)
  ax.set_xlim(-0.1, 1.1)
  ax.set_ylim(-0.12, 1.1)
  ax.set_aspect("equal")
  ax.axis("off")
  ax.set_title("P(Mr. X at each station); detectives in blue squares",
               fontsize=10)


def draw_decision(path: str, game: pyspiel.Game, decision: Any,
                  view: beliefs.BeliefView, title: str) -> None:
  """Writes a PNG of `decision` (a `bots.sog.Decision`: policy, value,
  belief) at `path`: the belief drawn per `view.kind` beside the policy
  (module doc)."""
  plt = _pyplot()
  belief = decision.belief
  player = belief.player
  state = belief.histories[0]
  policy_parts = _policy_parts(state, player, decision.policy)
  if view.kind in ("board", "mrx", "chance"):
    width = 2.2 if view.kind == "chance" else 1.6
    fig, (left, right) = plt.subplots(
        1, 2, figsize=(10, 4.8), gridspec_kw={"width_ratios": [width, 1]})
    if view.kind == "board":
      _board(left, plt, game, view, belief, player)
    elif view.kind == "mrx":
      _map(left, plt, view, belief)
    else:
      _bars(left, view.parts, "belief: what chance dealt the opponent",
            "#c0392b")
  else:
    fig, right = plt.subplots(figsize=(6, 4.8))
  _bars(right, policy_parts, f"searched policy (value {decision.value:+.2f})",
        "#1f4e99")
  fig.suptitle(title, fontsize=11)
  fig.tight_layout(rect=(0, 0, 1, 0.93))
  fig.savefig(path, dpi=90)
  plt.close(fig)
