"""A common-payoff game enumerated into flat history arrays, with the reach
and value passes joint policy search and its CFR baseline run on them."""

from __future__ import annotations

import collections

import numpy as np
import pyspiel
from open_spiel.python import policy as os_policy

_CHANCE, _DECISION, _TERMINAL = 0, 1, 2


def check_game(game: pyspiel.Game) -> None:
  """ValueError unless `game` is a two-player common-payoff sequential game
  with explicit chance and infostate strings."""
  t = game.get_type()
  problems = []
  if game.num_players() != 2:
    problems.append(f"{game.num_players()} players")
  if t.utility != pyspiel.GameType.Utility.IDENTICAL:
    problems.append(f"utility {t.utility.name} (JPS needs IDENTICAL: one "
                    "payoff shared by both players)")
  if t.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
    problems.append("simultaneous moves")
  if t.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC:
    problems.append("sampled chance")
  if not t.provides_information_state_string:
    problems.append("no information_state_string")
  if problems:
    raise ValueError(f"joint policy search needs a two-player common-payoff "
                     f"sequential game with infostate strings; {t.short_name} "
                     f"has {', '.join(problems)}")


class GameArrays:
  """A common-payoff game enumerated breadth first into flat arrays.

  Histories (H, root first, by depth): parent, slot (the parent's action
  position), kind (chance, decision, terminal), infoset (decision nodes;
  -1 otherwise), reward (terminals: the shared payoff), chance_prob (the
  probability of the chance edge into the history; 1 after decisions).
  Decision histories: dec_hist, dec_index (-1 elsewhere) and dec_child
  [decision histories, A] (-1 where none). Infosets (N): player, key, num_actions,
  actions [N, A] (-1 padded), their histories (CSR: iset_start,
  iset_hist). Paths [H, depth]: path_node (the ancestor at each depth),
  path_slot (the action taken there towards the history), path_iset, and
  path_child (where that edge leads).
  """

  def __init__(self, game: pyspiel.Game, max_histories: int = 2_000_000):
    check_game(game)
    self.game = game
    parent, slot, kind, infoset, reward, chance_prob, depth = (
        [], [], [], [], [], [], [])
    children: list[list[int]] = []
    iset_of: dict[str, int] = {}
    iset_player, iset_actions, iset_keys = [], [], []
    queue = collections.deque([(game.new_initial_state(), -1, -1, 1.0, 0)])
    while queue:
      state, par, sl, prob, d = queue.popleft()
      h = len(parent)
      if h >= max_histories:
        raise ValueError(f"{game} has more than {max_histories} histories; "
                         "JPS here enumerates the game")
      parent.append(par)
      slot.append(sl)
      chance_prob.append(prob)
      depth.append(d)
      children.append([])
      if par >= 0:
        children[par].append(h)
      if state.is_terminal():
        kind.append(_TERMINAL)
        infoset.append(-1)
        reward.append(float(state.returns()[0]))
        continue
      reward.append(0.0)
      if state.is_chance_node():
        kind.append(_CHANCE)
        infoset.append(-1)
        for k, (a, p) in enumerate(state.chance_outcomes()):
          queue.append((state.child(a), h, k, float(p), d + 1))
        continue
      kind.append(_DECISION)
      player = state.current_player()
      key = state.information_state_string(player)
      actions = state.legal_actions()
      i = iset_of.get(key)
      if i is None:
        i = iset_of[key] = len(iset_keys)
        iset_keys.append(key)
        iset_player.append(player)
        iset_actions.append(actions)
      elif iset_actions[i] != actions:
        raise ValueError(f"infostate {key!r} has histories with different "
                         "legal actions")
      infoset.append(i)
      for k, a in enumerate(actions):
        queue.append((state.child(a), h, k, 1.0, d + 1))
    self.num_histories = len(parent)
    self.parent = np.asarray(parent, dtype=np.int64)
    self.slot = np.asarray(slot, dtype=np.int64)
    self.kind = np.asarray(kind, dtype=np.int8)
    self.infoset = np.asarray(infoset, dtype=np.int64)
    self.reward = np.asarray(reward)
    self.chance_prob = np.asarray(chance_prob)
    self.depth = np.asarray(depth, dtype=np.int64)
    self.max_actions = max(max((len(c) for c in children), default=1), 1)
    # Children of the decision histories: dec_child[dec_index[h]].
    decisions = np.flatnonzero(self.kind == _DECISION)
    self.dec_hist = decisions
    self.dec_index = np.full(self.num_histories, -1, dtype=np.int64)
    self.dec_index[decisions] = np.arange(len(decisions))
    self.dec_child = np.full((len(decisions), self.max_actions), -1,
                             dtype=np.int64)
    for k, h in enumerate(decisions):
      self.dec_child[k, :len(children[h])] = children[h]
    self.level_bounds = np.searchsorted(self.depth,
                                        np.arange(self.depth.max() + 2))
    self.num_infosets = len(iset_keys)
    self.iset_keys = iset_keys
    self.iset_player = np.asarray(iset_player, dtype=np.int64)
    self.iset_num_actions = np.asarray([len(a) for a in iset_actions],
                                       dtype=np.int64)
    self.iset_actions = np.full((self.num_infosets, self.max_actions), -1,
                                dtype=np.int64)
    for i, a in enumerate(iset_actions):
      self.iset_actions[i, :len(a)] = a
    self.legal = self.iset_actions >= 0
    order = np.argsort(self.infoset[decisions], kind="stable")
    self.iset_hist = decisions[order]
    self.iset_start = np.searchsorted(self.infoset[self.iset_hist],
                                      np.arange(self.num_infosets + 1))
    # Paths: each history's ancestors and the slots taken from them.
    max_depth = int(self.depth.max())
    self.path_node = np.full((self.num_histories, max(max_depth, 1)), -1,
                             dtype=np.int64)
    self.path_slot = np.zeros_like(self.path_node)
    for d in range(1, max_depth + 1):
      lo, hi = self.level_bounds[d], self.level_bounds[d + 1]
      p = self.parent[lo:hi]
      self.path_node[lo:hi, :d - 1] = self.path_node[p, :d - 1]
      self.path_slot[lo:hi, :d - 1] = self.path_slot[p, :d - 1]
      self.path_node[lo:hi, d - 1] = p
      self.path_slot[lo:hi, d - 1] = self.slot[lo:hi]
    self.path_iset = np.where(self.path_node >= 0,
                              self.infoset[np.maximum(self.path_node, 0)], -1)
    # The history the k-th edge of each path leads to (the history itself
    # for the last one): its edge_in is that edge's probability.
    self.path_child = np.full_like(self.path_node, -1)
    if max_depth > 1:
      self.path_child[:, :-1] = self.path_node[:, 1:]
    rows = np.arange(self.num_histories)
    last = self.depth - 1
    ok = last >= 0
    self.path_child[rows[ok], last[ok]] = rows[ok]
    self._succ: dict[tuple[int, int], np.ndarray] = {}
    self._next_decisions = self._first_decisions(children)

  def _first_decisions(self, children: list[list[int]]) -> list[list[int]]:
    """For each history, the first decision nodes at or below it (through
    chance nodes)."""
    out: list[list[int]] = [[] for _ in range(self.num_histories)]
    for h in range(self.num_histories - 1, -1, -1):
      k = self.kind[h]
      if k == _DECISION:
        out[h] = [h]
      elif k == _CHANCE:
        out[h] = [d for c in children[h] for d in out[c]]
    return out

  def histories(self, iset: int) -> np.ndarray:
    return self.iset_hist[self.iset_start[iset]:self.iset_start[iset + 1]]

  def succ(self, iset: int, slot: int) -> np.ndarray:
    """The infosets that come next after `slot` at `iset` (either player's,
    through chance), sorted."""
    key = (iset, slot)
    if key not in self._succ:
      kids = self.dec_child[self.dec_index[self.histories(iset)], slot]
      nodes = [d for c in kids if c >= 0 for d in self._next_decisions[c]]
      self._succ[key] = np.unique(self.infoset[np.asarray(nodes,
                                                          dtype=np.int64)])
    return self._succ[key]

  # --- Policies ------------------------------------------------------------

  def policy_arrays(self, policy: os_policy.Policy | None) -> np.ndarray:
    """[N, A] `policy` at each infoset (read at one of its histories'
    states); uniform where `policy` is None."""
    uniform = self.legal / self.iset_num_actions[:, None]
    if policy is None:
      return uniform
    out = np.zeros((self.num_infosets, self.max_actions))
    if isinstance(policy, os_policy.TabularPolicy):
      for i, key in enumerate(self.iset_keys):
        row = policy.state_lookup.get(key)
        if row is not None:
          probs = policy.action_probability_array[row]
          out[i, :self.iset_num_actions[i]] = probs[
              self.iset_actions[i, :self.iset_num_actions[i]]]
        else:
          out[i] = uniform[i]
      return out
    states = self._states()
    for i in range(self.num_infosets):
      state = states[i]
      probs = policy.action_probabilities(state, state.current_player())
      for k in range(self.iset_num_actions[i]):
        out[i, k] = probs.get(int(self.iset_actions[i, k]), 0.0)
    return out

  def _states(self) -> list[pyspiel.State]:
    """One state per infoset (replayed from the root)."""
    out = []
    for i in range(self.num_infosets):
      h = int(self.histories(i)[0])
      state = self.game.new_initial_state()
      for node, sl in zip(self.path_node[h], self.path_slot[h]):
        if node < 0:
          break
        if self.kind[node] == _CHANCE:
          state.apply_action(state.chance_outcomes()[sl][0])
        else:
          state.apply_action(int(self.iset_actions[self.infoset[node], sl]))
      out.append(state)
    return out

  def tabular_policy(self, probs: np.ndarray) -> os_policy.TabularPolicy:
    """An OpenSpiel TabularPolicy with `probs` at every infoset."""
    policy = os_policy.TabularPolicy(self.game)
    for i, key in enumerate(self.iset_keys):
      row = policy.state_lookup[key]
      policy.action_probability_array[row] = 0.0
      n = self.iset_num_actions[i]
      policy.action_probability_array[row, self.iset_actions[i, :n]] = (
          probs[i, :n])
    return policy

  # --- Passes --------------------------------------------------------------

  def edge_probs(self, probs: np.ndarray) -> np.ndarray:
    """[H] the probability of the edge into each history under `probs`
    (chance's probability after a chance node; 1 at the root)."""
    par = np.maximum(self.parent, 0)
    after_decision = (self.parent >= 0) & (self.kind[par] == _DECISION)
    out = self.chance_prob.copy()
    out[after_decision] = probs[self.infoset[par[after_decision]],
                                self.slot[after_decision]]
    return out

  def reach(self, edge: np.ndarray) -> np.ndarray:
    """[H] total reach (chance and both players), top-down by depth, from
    `edge_probs`."""
    pi = np.zeros(self.num_histories)
    pi[0] = 1.0
    b = self.level_bounds
    for d in range(1, len(b) - 1):
      lo, hi = b[d], b[d + 1]
      pi[lo:hi] = pi[self.parent[lo:hi]] * edge[lo:hi]
    return pi

  def values(self, edge: np.ndarray) -> np.ndarray:
    """[H] expected payoff below each history, bottom-up by depth, from
    `edge_probs`."""
    v = self.reward.copy()
    b = self.level_bounds
    for d in range(len(b) - 2, 0, -1):
      lo, hi = b[d], b[d + 1]
      plo, phi = b[d - 1], b[d]
      v[plo:phi] += np.bincount(self.parent[lo:hi] - plo,
                                weights=edge[lo:hi] * v[lo:hi],
                                minlength=phi - plo)
    return v

  def child_values(self, v: np.ndarray) -> np.ndarray:
    """[decision histories, A] v of each child (0 where none)."""
    kids = self.dec_child
    return np.where(kids >= 0, v[np.maximum(kids, 0)], 0.0)

  def value(self, probs: np.ndarray) -> float:
    """The game value of the joint policy `probs` [N, A]."""
    return float(self.values(self.edge_probs(probs))[0])
