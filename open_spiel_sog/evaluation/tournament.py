"""Round-robin tournaments between registered bots, with Elo ratings, and
two-bot matches in duplicate seats (`duplicate_match`).

    from open_spiel_sog.evaluation import tournament
    result = tournament.round_robin(
        "leduc_poker", "sog(simulations=100);cfr_policy;uniform_random",
        games_per_pair=200, seed=0)

Every pair of bots plays `games_per_pair` deals in each seat order. Duplicate
play: the two games of a deal (A in seat 0 against B in seat 1, then B in
seat 0 against A in seat 1) draw their chance outcomes from the same seed, so
where the game's chance events do not depend on the players' actions (the
cards of a poker deal) both seat orders get the same cards, and the luck of
the deal cancels out of the pair's mean. A pair's score for a deal is the
mean of A's returns in its two games; the table gives the mean over deals
with a 95% normal confidence interval (1.96 standard errors).

Elo ratings are fitted by maximum likelihood (Bradley-Terry: P(A beats B) =
1 / (1 + 10^((R_B - R_A) / 400)); ratings have mean 0) to every deal, scored
as a duplicate match: A wins it when its total return over the deal's two
games (one in each seat) is positive, draws when it is zero. Scoring single
games instead would rate poker bots by how many pots they win, not by how
much: on Leduc a bot that takes many small pots and loses big ones came out
on top. Their 95% intervals are the 2.5 and 97.5 percentiles over
`elo_bootstrap` resamples of the deals of every pair.

Bots are named as `pyspiel.load_bot` takes them, OpenSpiel's and ours alike:
`name` or `name(k=v,...)`, separated by semicolons.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import time
from typing import Any, Sequence

import numpy as np
import pyspiel

from open_spiel_sog.utils.progress import progress_bar

ELO_SCALE = 400.0 / math.log(10.0)


def wilson_interval(score: float, n: int, z: float = 1.96
                    ) -> tuple[float, float]:
  """The 95% Wilson interval of a proportion score / n (draws count half)."""
  if n == 0:
    return (0.0, 1.0)
  p = score / n
  centre = (p + z * z / (2 * n)) / (1 + z * z / n)
  half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
  return (max(0.0, centre - half), min(1.0, centre + half))


@dataclasses.dataclass(frozen=True)
class BotSpec:
  """A bot of a tournament: its label (the spec as written), registry name
  and parameters."""
  label: str
  name: str
  params: dict[str, Any]


def parse_bot(spec: str, who: str = "round_robin") -> BotSpec:
  """A BotSpec from "name" or "name(k=v,...)"; ValueError, prefixed by
  `who`, on a malformed spec."""
  spec = spec.strip()
  try:
    params = dict(pyspiel.game_parameters_from_string(spec))
  except (pyspiel.SpielError, RuntimeError, ValueError) as e:
    raise ValueError(f"{who}: cannot parse bot {spec!r} ({e}); write "
                     "NAME or NAME(k=v,...)") from None
  name = params.pop("name", "")
  if not name:
    raise ValueError(f"{who}: bot {spec!r} has no name")
  return BotSpec(spec, name, params)


def parse_bots(specs: str | Sequence[str]) -> list[BotSpec]:
  """BotSpecs from "a(k=v);b;..." or a list of specs; ValueError on a
  malformed spec or a repeated one."""
  if isinstance(specs, str):
    specs = [s for s in (x.strip() for x in specs.split(";")) if s]
  out = [parse_bot(spec) for spec in specs]
  labels = [b.label for b in out]
  repeated = sorted({x for x in labels if labels.count(x) > 1})
  if repeated:
    raise ValueError(f"round_robin: bot(s) {repeated} listed twice")
  if len(out) < 2:
    raise ValueError(f"round_robin: needs at least two bots, got {labels}")
  return out


def load_bot(game: pyspiel.Game, bot: BotSpec, player: int,
             who: str = "round_robin") -> pyspiel.Bot:
  """`pyspiel.load_bot` for `bot` in `player`'s seat; ValueError, prefixed
  by `who`, naming the registered bots (or those that can play `game`)
  where it cannot be loaded."""
  if not pyspiel.is_bot_registered(bot.name):
    raise ValueError(
        f"{who}: unknown bot {bot.name!r} (in {bot.label!r}); "
        f"registered bots: {', '.join(sorted(pyspiel.registered_bots()))}")
  if bot.name not in pyspiel.bots_that_can_play_game(game, player):
    raise ValueError(f"{who}: bot {bot.label!r} cannot play {game} as "
                     f"player {player}; bots that can: "
                     f"{', '.join(pyspiel.bots_that_can_play_game(game, player))}")
  try:
    return pyspiel.load_bot(bot.name, game, player, bot.params)
  except (ValueError, TypeError, RuntimeError, pyspiel.SpielError) as e:
    raise ValueError(f"{who}: cannot load bot {bot.label!r}: {e}"
                     ) from None


def sample_chance(state: pyspiel.State, rng: np.random.Generator) -> int:
  """A chance outcome of `state` drawn from `rng`."""
  actions, probs = zip(*state.chance_outcomes())
  return int(actions[rng.choice(len(actions), p=np.asarray(probs) /
                                np.sum(probs))])


def play_game(game: pyspiel.Game, bots: Sequence[pyspiel.Bot],
              chance_seed: int) -> list[float]:
  """One game between `bots` (one per seat; each restarted first), chance
  drawn from `chance_seed`; the players' returns. Bots are told of the other
  seats' actions (`inform_action`), as OpenSpiel's C++ evaluate_bots does."""
  rng = np.random.default_rng(chance_seed)
  for bot in bots:
    bot.restart()
  state = game.new_initial_state()
  while not state.is_terminal():
    if state.is_chance_node():
      state.apply_action(sample_chance(state, rng))
    elif state.is_simultaneous_node():
      actions = [bot.step(state) for bot in bots]
      for bot in bots:
        bot.inform_actions(state, actions)
      state.apply_actions(actions)
    else:
      player = state.current_player()
      action = bots[player].step(state)
      for p, bot in enumerate(bots):
        if p != player:
          bot.inform_action(state, player, action)
      state.apply_action(action)
  return list(state.returns())


def fit_elo(num_players: int, games: Sequence[tuple[int, int, float]],
            iterations: int = 200) -> np.ndarray:
  """Maximum-likelihood Elo ratings (mean 0) from (a, b, score of a) games,
  score 1 for a win of a, 0.5 for a draw, 0 for a loss (Bradley-Terry, by
  Newton's method on the log-likelihood with a tiny ridge so that a bot
  that wins or loses everything gets a large finite rating)."""
  r = np.zeros(num_players)
  if not games:
    return r
  a = np.array([g[0] for g in games])
  b = np.array([g[1] for g in games])
  s = np.array([g[2] for g in games], dtype=np.float64)
  ridge = 1e-3
  for _ in range(iterations):
    p = 1.0 / (1.0 + np.exp(-(r[a] - r[b])))
    grad = np.zeros(num_players)
    np.add.at(grad, a, s - p)
    np.add.at(grad, b, p - s)
    grad -= ridge * r
    w = p * (1 - p)
    hess = np.zeros((num_players, num_players))
    np.add.at(hess, (a, a), -w)
    np.add.at(hess, (b, b), -w)
    np.add.at(hess, (a, b), w)
    np.add.at(hess, (b, a), w)
    hess -= ridge * np.eye(num_players)
    step = np.linalg.solve(hess, grad)
    r -= step
    r -= r.mean()
    if np.max(np.abs(step)) < 1e-9:
      break
  return r * ELO_SCALE


def _score(ret: float) -> float:
  return 1.0 if ret > 0 else (0.0 if ret < 0 else 0.5)


def duplicate_match(game: pyspiel.Game, bot, opponent, games: int,
                    progress: bool = False, label: str = "match"
                    ) -> dict[str, Any]:
  """`bot` against `opponent` over `games` games in duplicate seats: games
  2k and 2k + 1 share seed k (their chance outcomes drawn alike), `bot` in
  seat 0, then 1. `bot(seat, k)` and `opponent(seat, k)` make the bots.

  Returns {"games", "wins", "draws", "losses" (the bot's), "score" ((wins +
  draws / 2) / games), "score_95" (its 95% Wilson interval), "seat_scores"
  ([seat 0, seat 1]), "seconds"}.
  """
  if games < 2 or games % 2:
    raise ValueError(f"{label}: games must be even and at least 2 "
                     f"(duplicate seats), got {games}")
  started = time.perf_counter()
  outcomes = {0: [], 1: []}  # seat -> the bot's scores (1, 0.5, 0)
  with progress_bar(games, f"{label} {game}", disable=not progress) as bar:
    for k in range(games // 2):
      for seat in (0, 1):
        bots = [bot(seat, k), opponent(1 - seat, k)]
        if seat == 1:
          bots.reverse()
        outcomes[seat].append(_score(play_game(game, bots, k)[seat]))
        bar.update(1)
  scores = outcomes[0] + outcomes[1]
  total = sum(scores)
  return {"games": len(scores), "wins": scores.count(1.0),
          "draws": scores.count(0.5), "losses": scores.count(0.0),
          "score": total / len(scores),
          "score_95": list(wilson_interval(total, len(scores))),
          "seat_scores": [sum(outcomes[p]) / len(outcomes[p]) for p in (0, 1)],
          "seconds": time.perf_counter() - started}


def round_robin(game: pyspiel.Game | str, bots: str | Sequence[str],
                games_per_pair: int = 100, seed: int = 0,
                elo_bootstrap: int = 200, progress: bool = True
                ) -> dict[str, Any]:
  """Plays the tournament (see the module docstring).

  Returns:
    {"game", "bots" (labels), "games_per_pair", "seed", "games": [{"seats":
     [label, label], "deal", "chance_seed", "returns"}], "mean": [i][j] mean
     return of bot i against bot j over deals (both seat orders),
     "ci95": [i][j] half-width of its 95% interval, "elo": {label: rating},
     "elo_ci95": {label: [low, high]}, "seconds"}.
  """
  if isinstance(game, str):
    game = pyspiel.load_game(game)
  if game.num_players() != 2:
    raise ValueError(f"round_robin: {game} has {game.num_players()} players; "
                     "tournaments are for two-player games")
  if games_per_pair < 1:
    raise ValueError(f"round_robin: games_per_pair must be >= 1, got "
                     f"{games_per_pair}")
  specs = parse_bots(bots)
  loaded = {(i, p): load_bot(game, spec, p) for i, spec in enumerate(specs)
            for p in (0, 1)}
  labels = [s.label for s in specs]
  pairs = list(itertools.combinations(range(len(labels)), 2))
  records = []
  started = time.perf_counter()
  with progress_bar(len(pairs) * games_per_pair * 2,
                    f"round robin {game}", disable=not progress) as bar:
    for i, j in pairs:
      for deal in range(games_per_pair):
        chance_seed = int(np.random.SeedSequence(
            [seed, deal]).generate_state(1)[0])
        for first, second in ((i, j), (j, i)):
          returns = play_game(game, [loaded[(first, 0)], loaded[(second, 1)]],
                              chance_seed)
          records.append({"seats": [labels[first], labels[second]],
                          "deal": deal, "chance_seed": chance_seed,
                          "returns": returns})
          bar.update(1)
        bar.set_postfix_str(f"{labels[i]} vs {labels[j]}")
  result = summarize(str(game), labels, records, seed=seed,
                     elo_bootstrap=elo_bootstrap)
  result["seconds"] = time.perf_counter() - started
  return result


def summarize(game: str, labels: Sequence[str], records: Sequence[dict],
              seed: int = 0, elo_bootstrap: int = 200) -> dict[str, Any]:
  """The tables of a tournament from its games (`round_robin`'s "games":
  seats, deal, returns), e.g. to re-read a saved results.json."""
  labels = list(labels)
  index = {label: k for k, label in enumerate(labels)}
  n = len(labels)
  # totals[(i, j)][deal]: i's total return over the deal's two games (i < j)
  totals: dict[tuple[int, int], dict[int, float]] = {}
  for g in records:
    a, b = (index[x] for x in g["seats"])
    i, j = min(a, b), max(a, b)
    deal_totals = totals.setdefault((i, j), {})
    deal_totals[g["deal"]] = deal_totals.get(g["deal"], 0.0) + (
        g["returns"][0] if a == i else g["returns"][1])
  mean = np.zeros((n, n))
  ci = np.zeros((n, n))
  for (i, j), deal_totals in totals.items():
    x = np.asarray(list(deal_totals.values())) / 2  # mean over seat orders
    m = float(x.mean())
    half = float(1.96 * x.std(ddof=1) / math.sqrt(len(x))) if len(x) > 1 else (
        float("nan"))
    mean[i, j], mean[j, i] = m, -m
    ci[i, j] = ci[j, i] = half
  # Elo: every deal is a duplicate match that i wins when its total over the
  # two seat orders is positive (a draw when it is zero).
  matches = {pair: np.asarray([_score(t) for t in deal_totals.values()])
             for pair, deal_totals in totals.items()}

  def fit(choose):
    return fit_elo(n, [(i, j, float(sc)) for (i, j), scores in matches.items()
                       for sc in choose(scores)])

  elo = fit(lambda scores: scores)
  rng = np.random.default_rng([seed, 1])
  samples = [fit(lambda scores: scores[rng.integers(0, len(scores),
                                                    len(scores))])
             for _ in range(elo_bootstrap)]
  if samples:
    low, high = np.percentile(np.asarray(samples), [2.5, 97.5], axis=0)
  else:
    low = high = np.full(n, float("nan"))
  games_per_pair = max((len(t) for t in totals.values()), default=0)
  return {
      "game": game, "bots": labels, "games_per_pair": games_per_pair,
      "seed": seed, "games": list(records),
      "mean": mean.tolist(), "ci95": ci.tolist(),
      "elo": {label: float(elo[k]) for k, label in enumerate(labels)},
      "elo_ci95": {label: [float(low[k]), float(high[k])]
                   for k, label in enumerate(labels)},
  }


def format_table(result: dict[str, Any]) -> str:
  """The mean-return matrix (row bot's return against the column bot, 95%
  interval) and the Elo ratings, as text."""
  labels = result["bots"]
  width = max(12, max(len(x) for x in labels) + 2)
  lines = [f"{result['game']}: {result['games_per_pair']} deals per pair, "
           "both seats (duplicate chance); row's mean return against column, "
           "+- 95% interval"]
  lines.append(" " * width + "".join(f"{x[:width - 2]:>{width}}"
                                     for x in labels))
  for i, row in enumerate(labels):
    cells = []
    for j in range(len(labels)):
      cells.append(f"{'-':>{width}}" if i == j else
                   f"{result['mean'][i][j]:+.3f}+-{result['ci95'][i][j]:.3f}"
                   .rjust(width))
    lines.append(f"{row:<{width}}" + "".join(cells))
  lines.append("Elo (mean 0; 95% bootstrap interval):")
  for label in sorted(labels, key=lambda x: -result["elo"][x]):
    lo, hi = result["elo_ci95"][label]
    lines.append(f"  {label:<{width}} {result['elo'][label]:+8.1f}  "
                 f"[{lo:+.1f}, {hi:+.1f}]")
  return "\n".join(lines)


def plot_heatmap(result: dict[str, Any], path: str) -> bool:
  """The mean-return matrix as a PNG heatmap; False (and a message) when
  matplotlib is missing."""
  try:
    import matplotlib  # pylint: disable=g-import-not-at-top
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
  except ImportError:
    print("round_robin: matplotlib is not installed; no heatmap written "
          "(pip install 'open_spiel_sog[plot]')")
    return False
  labels = result["bots"]
  mean = np.asarray(result["mean"])
  limit = float(np.max(np.abs(mean))) or 1.0
  size = 1.2 + 1.1 * len(labels)
  fig, ax = plt.subplots(figsize=(size + 1.5, size))
  im = ax.imshow(mean, cmap="RdBu", vmin=-limit, vmax=limit)
  ax.set_xticks(range(len(labels)), labels, rotation=30, ha="right")
  ax.set_yticks(range(len(labels)), labels)
  for i in range(len(labels)):
    for j in range(len(labels)):
      if i != j:
        ax.text(j, i, f"{mean[i, j]:+.2f}\n+-{result['ci95'][i][j]:.2f}",
                ha="center", va="center", fontsize=8)
  fig.colorbar(im, ax=ax, label="row's mean return against column")
  ax.set_title(f"{result['game']}, {result['games_per_pair']} deals per pair")
  fig.tight_layout()
  fig.savefig(path, dpi=100)
  plt.close(fig)
  return True
