"""Learning a fog-of-war game's token CVPN on the anchored subgame
(DESIGN.md sections 14, 15 and 17).

Self-play: both players search the anchored subgame (`AnchoredSearch`)
with the network being trained at its leaves (`leaf_network.LeafNetwork`).
Two kinds of example, each a sampled public state encoded as the leaves'
groups are (`leaf_network.encode_group`, so the network learns on the
inputs it is asked about), with targets for the infostates present (each
infostate's expected value under a searched average profile, weighted as
the network weighs it: its histories' chance reach times the opponent's
range) and searched policies:

* Queries (SoG's QuerySolver, Algorithm 2): of the network calls of an
  actor's search, `q_search` leaf groups on average are picked (a call
  uniformly, then one of its groups) and each is solved by a separate
  search from that group's histories under the beliefs the network was
  asked about (`AnchoredSearch.solve`, `solver_simulations`, the network
  at its leaves); the targets are the solver's root values and average
  policies at every acting infostate. Each solver search adds
  `q_recursive` queries of its own on average. So the network is trained
  where the search asks it, not only at the actors' roots.
* Roots (`root_examples`): each actor search's root histories (the
  searcher's infostate and the order-2 set), the targets its root values
  and its policy at the searcher's own infostate (the actor as solver:
  SoG's q_search 0).

Values reach back from the game's ends through the network's own leaves,
as in value iteration. With `outcome_weight` w > 0 a root example's targets
at the two infostates the game really passed through (the searcher's and
its opponent's) become (1 - w) x the search's value + w x the game's final
return for their owner, as AlphaZero's targets mix in the outcome: a long
game whose ends the searches rarely reach (London's Mr. X wins at round
24) otherwise learns only from the ends they do reach.

The fog_of_war recipe (`recipes.FogOfWar`) runs `FogSelfPlay` as a worker
of the training pipeline (`trainer.Trainer`): actor processes, the replay
ring and the learner are the pipeline's.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np
import pyspiel

from open_spiel_sog.algorithms.sog.anchored import leaf_network
from open_spiel_sog.algorithms.sog.anchored.search import AnchoredConfig
from open_spiel_sog.algorithms.sog.anchored.search import AnchoredSearch


@dataclasses.dataclass
class FogConfig:
  """Self-play settings (examples/train.py's fog_of_war recipe;
  docs/training.md lists the flags).

  Attributes:
    simulations: growth simulations per search.
    root_histories, order2_histories: the anchored root's sizes.
    leaf_batch: leaves per network call.
    exploration: the share of moves played uniformly at random (else from
      the searched policy).
    q_search: queries solved per actor search, on average (the integer
      part always, the rest by chance; 0: no query solver).
    q_recursive: queries each solver search adds, on average.
    solver_simulations: growth simulations of a query's solver search.
    root_examples: also learn on each actor search's root.
    outcome_weight: the game's return's share of a root example's targets
      at the infostates the game passed through (0: the search's values
      alone, as SoG's recipe).
    max_queries: queries solved per actor search at most (recursion's
      bound).
    seed: the games' and searches' random stream.
  """
  simulations: int = 200
  root_histories: int = 32
  order2_histories: int = 4
  leaf_batch: int = 64
  exploration: float = 0.1
  q_search: float = 1.0
  q_recursive: float = 0.2
  solver_simulations: int = 100
  root_examples: bool = True
  outcome_weight: float = 0.0
  max_queries: int = 8
  seed: int = 0

  def validate(self) -> None:
    for name in ("simulations", "root_histories", "order2_histories",
                 "leaf_batch",
                 "solver_simulations", "max_queries"):
      if getattr(self, name) < 1:
        raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
    for name in ("q_search", "q_recursive"):
      if not 0.0 <= getattr(self, name) < float("inf"):
        raise ValueError(f"{name} must be a number >= 0, got "
                         f"{getattr(self, name)}")
    for name in ("exploration", "outcome_weight"):
      if not 0.0 <= getattr(self, name) <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got "
                         f"{getattr(self, name)}")
    if self.outcome_weight > 0 and not self.root_examples:
      raise ValueError("outcome_weight needs root_examples (the outcome "
                       "goes into the roots' targets)")
    if self.q_search == 0 and not self.root_examples:
      raise ValueError("no examples: q_search is 0 and root_examples is "
                       "off")


def _value_targets(ex: dict[str, np.ndarray], values: np.ndarray,
                   encoder) -> None:
  """Sets `ex`'s value targets: per infostate token, its expected value
  (its owner's) under the histories' `values` (player 0's, in `ex`'s
  history order), weighted by chance reach times the opponent's range."""
  hist, weight, r = ex["hist"], ex["weight"].astype(np.float64), ex["range"]
  n = len(ex["mask"])
  target = np.zeros(n, dtype=np.float32)
  mask = np.zeros(n, dtype=np.float32)
  for p in (0, 1):
    own, opp = hist[:, p], hist[:, 1 - p]
    omega = weight * r[opp]
    norm = np.bincount(own, weights=omega, minlength=n)
    total = np.bincount(own, weights=omega * values, minlength=n)
    ok = (norm > 0) & (ex["player"] == p)
    sign = 1.0 if p == 0 else -1.0
    target[ok] = sign * total[ok] / norm[ok] / encoder.utility_scale
    mask[ok] = 1.0
  ex.update(value_target=target, value_mask=mask)


def root_example(search: AnchoredSearch, encoder) -> dict[str, np.ndarray]:
  """The last search's root as a training example (the network's fields
  with targets; see the module docstring)."""
  tree = search.tree
  roots = list(tree.roots)
  data = tree.leaf_data(roots, tensors=search.network.engine_tensors)
  ex = leaf_network.encode_group(encoder, data, np.arange(len(roots)))
  _value_targets(ex, np.asarray(tree.node_values)[roots], encoder)
  n = len(ex["mask"])
  policy = np.zeros((n, encoder.num_actions), dtype=np.float32)
  policy_mask = np.zeros(n, dtype=np.float32)
  mine = true_tokens(search, ex)[search.player]
  for a, p in search.last_result.policy.items():
    policy[mine, a] = p
  policy_mask[mine] = 1.0
  ex.update(policy_target=policy, policy_mask=policy_mask)
  return ex


def true_tokens(search: AnchoredSearch, ex: dict[str, np.ndarray]
                ) -> tuple[int, int]:
  """The tokens of `root_example(search)`'s `ex` that hold the infostates
  of the history really played (player 0's, player 1's)."""
  tree = search.tree
  true = search.last_root[0].keys  # (the true history comes first)
  return tuple(next(int(ex["hist"][i, p]) for i, n in enumerate(tree.roots)
                    if tree.node_keys[n][p] == true[p]) for p in (0, 1))


def mix_outcome(ex: dict[str, np.ndarray], tokens: tuple[int, int],
                returns, weight: float, encoder) -> None:
  """`ex`'s value targets at `tokens` (player 0's and player 1's true
  infostates) moved `weight` of the way to their owners' `returns`."""
  for p in (0, 1):
    t = tokens[p]
    if ex["value_mask"][t] > 0:
      ex["value_target"][t] = ((1.0 - weight) * ex["value_target"][t] +
                               weight * returns[p] / encoder.utility_scale)


class Query(NamedTuple):
  """A leaf group a network call valued: its histories' `NodeData` (with
  their states) as the network read it, and their (player 0, player 1)
  infostate keys."""
  data: leaf_network.NodeData
  keys: list[tuple[str, str]]


def pick_queries(log: list, mean: float, rng: np.random.Generator
                 ) -> list[Query]:
  """`mean` queries on average (the integer part, and one more with the
  fraction's chance) from a search's network calls `log` (its
  `query_log`): each a call drawn uniformly, then one of its leaf groups
  uniformly."""
  count = int(mean) + int(rng.random() < mean - int(mean))
  if not log or count == 0:
    return []
  out = []
  for c in rng.choice(len(log), count, replace=count > len(log)).tolist():
    tree, nodes, data = log[c]
    groups = leaf_network.components(data.keys)
    g = groups[int(rng.integers(len(groups)))]
    picked = [nodes[i] for i in g.tolist()]
    out.append(Query(leaf_network.NodeData(
        None if data.tensors is None else data.tensors[g], data.keys[g],
        data.chance[g], data.reaches[g], data.actors[g],
        data.actions[g],
        [tree.history_state(n) for n in picked]),
        [tuple(tree.node_keys[n]) for n in picked]))
  return out


def solve_query(solver: AnchoredSearch, query: Query, simulations: int,
                encoder) -> dict[str, np.ndarray] | None:
  """`query` solved by `solver` (`AnchoredSearch.solve`) as an example:
  the query's inputs, the solver's root values and its average policy at
  each acting infostate; None where the query's beliefs weigh nothing.
  The beliefs are the network's: the group's chance reaches and ranges
  as encoded (a player whose histories all have reach 0 has a uniform
  range there)."""
  data = query.data
  ex = leaf_network.encode_group(encoder, data, np.arange(len(query.keys)))
  hist, r = ex["hist"], ex["range"].astype(np.float64)
  weights = ex["weight"] * r[hist[:, 0]] * r[hist[:, 1]]
  if not weights.sum() > 0:
    return None
  tree, _, _ = solver.solve(list(zip(data.states, query.keys, weights)),
                            simulations)
  roots = list(tree.roots)
  _value_targets(ex, np.asarray(tree.node_values)[roots], encoder)
  n = len(ex["mask"])
  policy = np.zeros((n, encoder.num_actions), dtype=np.float32)
  policy_mask = np.zeros(n, dtype=np.float32)
  for i, node in enumerate(roots):
    actor = int(data.actors[i])
    if actor not in (0, 1) or tree.children[node] is None:
      continue
    token = ex["hist"][i, actor]
    if policy_mask[token]:
      continue
    actions, average = tree.node_policy(node)
    if np.sum(average) > 0:
      policy[token, actions] = average
      policy_mask[token] = 1.0
  ex.update(policy_target=policy, policy_mask=policy_mask)
  return ex


class FogSelfPlay:
  """Self-play games of `game` with `net` (a `TokenCVPN`) at both players'
  anchored leaves; `play()` returns one game's examples."""

  def __init__(self, game: pyspiel.Game, net, config: FogConfig,
               native: bool = True):
    self.game = game
    self.net = net
    config.validate()
    self.config = config
    self.rng = np.random.default_rng(config.seed)
    self.leaves = leaf_network.LeafNetwork(net)
    anchored = AnchoredConfig(
        simulations=config.simulations,
        root_histories=config.root_histories,
        order2_histories=config.order2_histories,
        leaf_batch=config.leaf_batch, seed=config.seed)
    self.searches = [
        AnchoredSearch(game, p, dataclasses.replace(
            anchored, seed=config.seed * 2 + p), native=native,
                       network=self.leaves) for p in (0, 1)]
    # The query solver (its searches start afresh: `solve`).
    self.solver = AnchoredSearch(
        game, 0, dataclasses.replace(anchored, seed=config.seed * 2 + 2),
        native=native, network=self.leaves)
    self.games = 0
    self.moves = 0
    self.queries = 0
    self.examples = 0

  def _solve_queries(self, queries: list[Query]) -> list[dict]:
    """Solves `queries` and the recursive ones they add, at most
    `max_queries`; returns their examples."""
    cfg = self.config
    examples = []
    solved = 0
    while queries and solved < cfg.max_queries:
      query = queries.pop()
      self.solver.query_log = log = []
      ex = solve_query(self.solver, query, cfg.solver_simulations,
                       self.net.encoder)
      self.solver.query_log = None
      solved += 1
      if ex is not None:
        examples.append(ex)
      queries += pick_queries(log, cfg.q_recursive, self.rng)
    self.queries += solved
    return examples

  def play(self) -> tuple[list[dict[str, np.ndarray]], float]:
    """One game: (its examples, player 0's return)."""
    state = self.game.new_initial_state()
    for s in self.searches:
      s.reset()
    examples = []
    roots = []  # (a root example, its true infostates' tokens)
    while not state.is_terminal():
      if state.is_chance_node():
        outcomes, probs = zip(*state.chance_outcomes())
        state.apply_action(int(self.rng.choice(outcomes, p=probs)))
        continue
      search = self.searches[state.current_player()]
      search.query_log = log = [] if self.config.q_search > 0 else None
      result = search.search(state)
      search.query_log = None
      if self.config.root_examples:
        examples.append(root_example(search, self.net.encoder))
        if self.config.outcome_weight > 0:
          roots.append((examples[-1], true_tokens(search, examples[-1])))
      if log:
        examples += self._solve_queries(
            pick_queries(log, self.config.q_search, self.rng))
      legal = state.legal_actions()
      if self.rng.random() < self.config.exploration:
        action = int(self.rng.choice(legal))
      else:
        actions = np.asarray(legal)
        probs = np.asarray([max(result.policy.get(a, 0.0), 0.0)
                            for a in legal])
        action = int(self.rng.choice(actions, p=probs / probs.sum())
                     if probs.sum() > 0 else self.rng.choice(actions))
      state.apply_action(action)
      self.moves += 1
    for ex, tokens in roots:
      mix_outcome(ex, tokens, state.returns(), self.config.outcome_weight,
                  self.net.encoder)
    self.examples += len(examples)
    self.games += 1
    return examples, float(state.returns()[0])
