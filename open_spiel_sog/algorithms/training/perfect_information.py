"""Learning where information is perfect (DESIGN.md section 17): SoG's Go
setting (Table S2: no query solving, q_search = 0; TD(1) targets), which is
AlphaZero's, with self-play on the native engine.

Self-play (`SelfPlay`): `games` games run side by side in one process, each
searched by `engine.PerfectInformationSearch` with the network at its
leaves; every round each unfinished search grows to its next leaf, and the
round's leaves go to the network in one batch. The move played is drawn
from the search's policy for `greedy_after` moves, then its argmax.

Targets (`targets_of_game`): every decision of a finished game is an example
with probability `td1_probability` (Table S2's p_td1); its value target is
the game's outcome for the acting player (TD(1)), mixed with the search's
root value by `root_value_weight` (0: outcomes alone); its policy target is
the search's root policy. No query is solved.

The perfect_information recipe (`recipes.PerfectInformation`) runs
`SelfPlay` as a worker of the training pipeline (`trainer.Trainer`):
actor processes, the replay ring and the learner are the pipeline's.

What the research note (`shared/research/small_compute_learning.md`)
supports for small machines, each a setting:
  - `policy_target="gumbel"`: Gumbel root selection with completed-Q policy
    targets (Danihelka et al. 2022): the target is softmax(log prior +
    sigma(completed Q)), the move played argmax(g + log prior + sigma(Q))
    with Gumbel noise g while sampling.
  - playout-cap randomisation (KataGo): a search has `simulations` with
    probability `full_search_probability`, else `cheap_simulations` and no
    policy target.
  - `symmetries`: the board's symmetries where the game has them
    (`SYMMETRIES`: connect_four's mirror, tic_tac_toe's eight), each
    example added once per symmetry.
"""

from __future__ import annotations

import collections
import dataclasses
from typing import Callable

import numpy as np
import pyspiel

from open_spiel_sog.algorithms.sog import engine as engine_lib

POLICY_TARGETS = ("search", "gumbel")


def _board_symmetry(shape: tuple[int, int, int], transform: Callable):
  """A symmetry of a board game whose observation has `shape` (planes,
  rows, columns) and whose actions are its columns (connect_four: then
  `transform` must be the left-right mirror) or its cells, row-major
  (tic_tac_toe); `transform` maps [..., rows, columns] arrays."""
  planes, rows, columns = shape

  def apply(inputs: np.ndarray, policy: np.ndarray, legal: np.ndarray):
    obs = transform(inputs.reshape((len(inputs), planes, rows, columns)))
    if policy.shape[1] == columns:
      perm = transform(np.arange(columns)[None, :])[0]
    else:
      perm = transform(np.arange(rows * columns).reshape(rows, columns))
      perm = np.ascontiguousarray(perm).reshape(-1)
    # (perm[i]: the action whose image is action i.)
    return (np.ascontiguousarray(obs).reshape(len(inputs), -1),
            policy[:, perm], legal[:, perm])
  return apply


def _mirror(a):
  return a[..., ::-1]


def _dihedral():
  """The seven non-identity symmetries of a square board."""
  out = []
  for k in range(4):
    for flip in (False, True):
      if k == 0 and not flip:
        continue
      out.append(lambda a, k=k, flip=flip: np.rot90(
          a[..., ::-1] if flip else a, k, axes=(-2, -1)))
  return out


# The symmetries a game's examples are augmented with (the identity is
# implied), by game short name: connect_four's mirror (gravity keeps the
# rest out), tic_tac_toe's square.
SYMMETRIES: dict[str, list[Callable]] = {
    "connect_four": [_board_symmetry((3, 6, 7), _mirror)],
    "tic_tac_toe": [_board_symmetry((3, 3, 3), t) for t in _dihedral()],
}


@dataclasses.dataclass
class SelfPlayConfig:
  """Self-play settings (examples/train.py's perfect_information recipe).

  Attributes:
    simulations: a full search's growth simulations (SoG(s, c)'s s).
    expansions_per_update: c; -1 paces the CFR+ iterations by work.
    cheap_simulations, full_search_probability: playout-cap randomisation:
      a search is full with this probability, else it has
      cheap_simulations and gives no policy target (1.0: off).
    games: games played side by side (the network's batch).
    greedy_after: moves drawn from the policy before argmax play.
    dirichlet_alpha, dirichlet_fraction: noise mixed into the root prior of
      full searches (0 fraction: none).
    td1_probability: each decision is an example with this probability
      (Table S2's p_td1: 0.2 in Go, whose games are ten times longer).
    root_value_weight: the value target is (1 - w) * outcome + w * root
      value.
    policy_target: "search" (the root's CFR average policy) or "gumbel"
      (completed-Q).
    c_puct: PUCT's exploration constant.
    symmetries: augment examples with the game's symmetries (`SYMMETRIES`).
    average_duplicates: each example's targets are the mean of the targets
      of every time this self-play met the same position (the acting
      player's observation) among its last `DUPLICATE_WINDOW` positions:
      AlphaZero.jl's position averaging.
    simulations_start, grow_minutes: a growing budget: full searches start
      at simulations_start simulations and grow linearly to `simulations`
      over the run's first grow_minutes (`simulations_at`; 0: off).
    seed: the seed of the games' draws and the searches.
  """
  simulations: int = 100
  expansions_per_update: float = engine_lib.PACED
  cheap_simulations: int = 25
  full_search_probability: float = 1.0
  games: int = 64
  greedy_after: int = 10
  dirichlet_alpha: float = 1.0
  dirichlet_fraction: float = 0.25
  td1_probability: float = 1.0
  root_value_weight: float = 0.5
  policy_target: str = "search"
  c_puct: float = 1.0
  symmetries: bool = True
  average_duplicates: bool = False
  simulations_start: int = 0
  grow_minutes: float = 20.0
  seed: int = 0

  def simulations_at(self, minutes: float) -> int:
    """A full search's simulations `minutes` into the run."""
    if not self.simulations_start or self.grow_minutes <= 0:
      return self.simulations
    share = min(1.0, max(0.0, minutes / self.grow_minutes))
    return int(round(self.simulations_start +
                     share * (self.simulations - self.simulations_start)))

  def validate(self) -> None:
    def bad(msg):
      raise ValueError(f"perfect-information self-play: {msg}")
    if self.simulations < 1 or self.cheap_simulations < 1:
      bad("simulations and cheap_simulations must be >= 1")
    if not 0.0 < self.full_search_probability <= 1.0:
      bad("full_search_probability must be in (0, 1]")
    if self.games < 1:
      bad("games must be >= 1")
    if not 0.0 < self.td1_probability <= 1.0:
      bad("td1_probability must be in (0, 1]")
    if not 0.0 <= self.root_value_weight <= 1.0:
      bad("root_value_weight must be in [0, 1]")
    if not 0.0 <= self.dirichlet_fraction < 1.0 or self.dirichlet_alpha <= 0:
      bad("dirichlet_fraction must be in [0, 1) and dirichlet_alpha > 0")
    if self.simulations_start < 0 or self.grow_minutes < 0:
      bad("simulations_start and grow_minutes must be >= 0")
    if self.simulations_start > self.simulations:
      bad(f"simulations_start ({self.simulations_start}) must be at most "
          f"simulations ({self.simulations}): the budget grows")
    if self.policy_target not in POLICY_TARGETS:
      bad(f"unknown policy_target {self.policy_target!r}; supported: "
          f"{', '.join(map(repr, POLICY_TARGETS))}")


@dataclasses.dataclass
class Decision:
  """One searched decision of a self-play game."""
  inputs: np.ndarray
  legal: np.ndarray
  player: int
  policy: np.ndarray  # the policy target over distinct actions
  root_value: float  # the acting player's
  full: bool  # a full search (it gives a policy target)


def completed_q_policy(prior: np.ndarray, legal: np.ndarray,
                       action_values: dict[int, float],
                       visits: dict[int, float], value: float,
                       utility_scale: float) -> np.ndarray:
  """Gumbel MuZero's improved policy softmax(log prior + sigma(completed
  Q)): Q of the searched actions, the root value for the others, in [0, 1];
  sigma(q) = (c_visit + max visits) * c_scale * q with mctx's c_visit = 50,
  c_scale = 0.1."""
  q = np.full(len(prior), (value / utility_scale + 1) / 2)
  for a, v in action_values.items():
    if visits.get(a, 0) > 0:
      q[a] = (v / utility_scale + 1) / 2
  sigma = (50.0 + max(visits.values(), default=0.0)) * 0.1 * q
  logits = np.where(legal > 0, np.log(np.maximum(prior, 1e-12)) + sigma,
                    -np.inf)
  logits -= logits.max()
  p = np.exp(logits)
  return p / p.sum()


def targets_of_game(decisions: list[Decision], returns: list[float],
                    config: SelfPlayConfig, rng: np.random.Generator):
  """The examples of a finished game (Table S2's TD(1) sampling): arrays
  (inputs, legal, value_target, policy_target, policy_mask)."""
  rows = [d for d in decisions if rng.random() < config.td1_probability]
  if not rows:
    return None
  w = config.root_value_weight
  values = np.array([(1 - w) * returns[d.player] + w * d.root_value
                     for d in rows], np.float32)
  return (np.stack([d.inputs for d in rows]),
          np.stack([d.legal for d in rows]), values,
          np.stack([d.policy for d in rows]).astype(np.float32),
          np.array([1.0 if d.full else 0.0 for d in rows], np.float32))


# Positions remembered by `DuplicateAverager` (a few hundred bytes each).
DUPLICATE_WINDOW = 50_000


class DuplicateAverager:
  """Position averaging (AlphaZero.jl's `use_position_averaging`): the
  targets of a position met again are the mean of its targets so far. A
  position is the acting player's observation and legal actions; the
  value target averages over every meeting, the policy target over the
  full searches' (the examples `targets_of_game` masks out give none).
  Keeps the last `window` positions met (least recently met go first)."""

  def __init__(self, window: int = DUPLICATE_WINDOW):
    self.window = window
    self.seen: collections.OrderedDict = collections.OrderedDict()
    self.meetings = 0
    self.repeats = 0

  def __call__(self, examples):
    if examples is None:
      return None
    inputs, legal, values, policy, mask = (np.array(a) for a in examples)
    for k in range(len(values)):
      key = inputs[k].tobytes() + legal[k].tobytes()
      entry = self.seen.pop(key, None)
      self.meetings += 1
      if entry is None:
        entry = [0, 0.0, 0, np.zeros_like(policy[k], np.float64)]
      else:
        self.repeats += 1
      entry[0] += 1
      entry[1] += float(values[k])
      if mask[k] > 0:
        entry[2] += 1
        entry[3] += policy[k]
      self.seen[key] = entry
      values[k] = entry[1] / entry[0]
      if entry[2]:
        policy[k] = entry[3] / entry[2]
        mask[k] = 1.0
      if len(self.seen) > self.window:
        self.seen.popitem(last=False)
    return inputs, legal, values, policy.astype(np.float32), mask


def augment(game: pyspiel.Game, examples, enabled: bool = True):
  """`examples` followed by their images under the game's symmetries."""
  if not enabled or examples is None:
    return examples
  inputs, legal, values, policy, mask = examples
  out = [examples]
  for sym in SYMMETRIES.get(game.get_type().short_name, []):
    i2, p2, l2 = sym(inputs, policy, legal)
    out.append((i2, l2, values, p2, mask))
  return tuple(np.concatenate([o[k] for o in out]) for k in range(5))


class SelfPlay:
  """`config.games` self-play games side by side, searched on the native
  engine with `network` (`PolicyValueNet`) at the leaves."""

  def __init__(self, game: pyspiel.Game, network, config: SelfPlayConfig):
    config.validate()
    reason = engine_lib.native_reason(game)
    if reason is not None:
      raise ValueError(f"perfect-information self-play needs the native "
                       f"engine: {reason}")
    self.game = game
    self.network = network
    self.config = config
    self.rng = np.random.default_rng(config.seed)
    self.searches = [
        engine_lib.PerfectInformationSearch(
            game, simulations=config.simulations,
            expansions_per_update=config.expansions_per_update,
            c_puct=config.c_puct, seed=config.seed * 1009 + i,
            network=network)
        for i in range(config.games)]
    self.states = [game.new_initial_state() for _ in self.searches]
    self.decisions: list[list[Decision]] = [[] for _ in self.searches]
    self.games_finished = 0
    self.moves = 0
    self.leaves = 0
    self.averager = (DuplicateAverager() if config.average_duplicates
                     else None)
    self.minutes = 0.0  # (the run's minutes: the growing budget's clock)

  def _chance(self, i: int) -> None:
    state = self.states[i]
    while state.is_chance_node():
      actions, probs = zip(*state.chance_outcomes())
      state.apply_action(int(self.rng.choice(actions, p=probs)))

  def play_moves(self) -> list:
    """Plays one move in every game (one batched search each); returns the
    examples (`targets_of_game`, augmented) of the games that ended; those
    restart."""
    cfg = self.config
    n = len(self.searches)
    full = [cfg.full_search_probability >= 1.0 or
            self.rng.random() < cfg.full_search_probability
            for _ in range(n)]
    root_prior: list[np.ndarray | None] = [None] * n
    for i, search in enumerate(self.searches):
      self._chance(i)
      search.simulations = (cfg.simulations_at(self.minutes) if full[i]
                            else cfg.cheap_simulations)
      search.begin(self.states[i])
    active = list(range(n))
    while active:
      pending, owners = [], []
      still = []
      for i in active:
        nodes = self.searches[i].advance()
        if nodes:
          still.append(i)
          pending.append(nodes)
          owners.append(i)
      active = still
      if not owners:
        break
      inputs, legal, players, counts = [], [], [], []
      for i, nodes in zip(owners, pending):
        x, l, p = self.searches[i].leaf_inputs(nodes)
        inputs.append(x)
        legal.append(l)
        players.append(p)
        counts.append(len(nodes))
      values, priors = self.network.evaluate(np.concatenate(inputs),
                                             np.concatenate(legal))
      self.leaves += len(values)
      at = 0
      for j, (i, nodes, p, k) in enumerate(zip(owners, pending, players,
                                               counts)):
        v, pr = values[at:at + k], priors[at:at + k]
        at += k
        if nodes[0] == 0 and root_prior[i] is None:
          root_prior[i] = pr[0].copy()
          if full[i] and cfg.dirichlet_fraction > 0:
            legal_actions = np.flatnonzero(legal[j][0])
            noise = self.rng.dirichlet(
                [cfg.dirichlet_alpha] * len(legal_actions))
            pr = pr.copy()
            pr[0, legal_actions] = ((1 - cfg.dirichlet_fraction) *
                                    pr[0, legal_actions] +
                                    cfg.dirichlet_fraction * noise)
        self.searches[i].set_leaves(nodes, v, pr, p)
    finished = []
    for i, search in enumerate(self.searches):
      result = search.finish()
      finished_examples = self._play(i, result, root_prior[i], full[i])
      if finished_examples is not None:
        finished.append(finished_examples)
    return finished

  def _play(self, i: int, result, prior, full: bool):
    cfg = self.config
    state = self.states[i]
    player = state.current_player()
    num_actions = self.game.num_distinct_actions()
    legal = np.zeros(num_actions, np.float32)
    legal[state.legal_actions()] = 1.0
    policy = np.zeros(num_actions)
    for a, p in result.policy.items():
      policy[a] = p
    scale = float(max(abs(self.game.max_utility()),
                      abs(self.game.min_utility()))) or 1.0
    sampling = state.move_number() < cfg.greedy_after
    if cfg.policy_target == "gumbel" and prior is not None:
      target = completed_q_policy(prior, legal, result.action_values,
                                  result.visits, result.value, scale)
      logits = np.where(legal > 0, np.log(np.maximum(target, 1e-12)),
                        -np.inf)
      if sampling:
        logits = logits + self.rng.gumbel(size=num_actions)
      action = int(np.argmax(logits))
    else:
      target = policy / max(policy.sum(), 1e-12)
      if sampling:
        action = int(self.rng.choice(num_actions, p=target))
      else:
        action = int(np.argmax(target))
    self.decisions[i].append(Decision(
        inputs=np.asarray(state.observation_tensor(player), np.float32),
        legal=legal, player=player, policy=target.astype(np.float32),
        root_value=float(result.value), full=full))
    state.apply_action(action)
    self.moves += 1
    if not state.is_terminal():
      return None
    examples = targets_of_game(self.decisions[i], state.returns(), cfg,
                               self.rng)
    self.decisions[i] = []
    self.states[i] = self.game.new_initial_state()
    self.games_finished += 1
    if self.averager is not None:
      examples = self.averager(examples)
    return augment(self.game, examples, cfg.symmetries)


__all__ = ["augment", "completed_q_policy", "Decision", "DuplicateAverager",
           "DUPLICATE_WINDOW", "POLICY_TARGETS",
           "SelfPlay", "SelfPlayConfig", "SYMMETRIES", "targets_of_game"]
