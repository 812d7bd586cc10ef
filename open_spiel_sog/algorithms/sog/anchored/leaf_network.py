"""A token CVPN at the anchored subgame's leaves (DESIGN.md section 17).

The anchored subgame is a tree of histories (section 15): it holds no
public states. Its leaves are grouped instead: two leaves whose histories
share an infostate of either player join one group, and a group (a
connected component of that graph, the "derived" public states of
`public_state.partition` drawn from the tree) is a sampled public state.
The token network (section 14) values each group under the current
reaches: one token per infostate of the group (its tensor, its player,
whether it acts, its range: the owner's reach of its sequence in the tree,
normalised in the group), one pair per history (its chance reach, the
root's weight in, normalised in the group), and the public token of the
group's histories (`PublicFeatures.of_histories`). Its per-history value
u_h (player 0's) is the leaf's value.

Batching: the leaves of one update phase (`leaf_batch` of them, made by a
few expansions) are valued by one network call. Where they form many small
groups (an expansion's children share the opponent's infostate but not
each other's), the groups are padded to the largest group's tokens and
histories and stacked along the batch axis: one call per phase however
many groups (the host network's per-token and per-history layers leave
the padding out).

`encode_group` also serves training (`algorithms/training/fog_of_war.py`):
the search's root histories form a group the same way, so the network
learns on the inputs it is asked about.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np
import pyspiel

from open_spiel_sog.algorithms.networks.tokens import INFO_SIZE
from open_spiel_sog.algorithms.sog.cvpn.tokens import EXTRA_PUBLIC
from open_spiel_sog.algorithms.sog.cvpn.tokens import log_feature


class NodeData(NamedTuple):
  """What the network reads of a tree's nodes (`tree.leaf_data`).

  Attributes:
    tensors: [n, 2, T] each player's infostate tensor at the node (None:
      the token source is computed from `states`).
    keys: [n, 2] int each player's infostate key id.
    chance: [n] chance reach from the root, the root's weight in.
    reaches: [n, 2] each player's reach of its sequence (current policy).
    actors: [n] the acting player (-1 at chance).
    actions: [n, L] int the nodes' action sequences, padded with -1
      (`public_state.features.action_matrix`).
    states: the nodes' states (where `tensors` is None or the public
      features read a state), else None.
  """
  tensors: np.ndarray | None
  keys: np.ndarray
  chance: np.ndarray
  reaches: np.ndarray
  actors: np.ndarray
  actions: np.ndarray
  states: list[pyspiel.State] | None


def components(keys: np.ndarray) -> list[np.ndarray]:
  """The groups of nodes whose keys [n, 2] join them (two nodes sharing a
  player's key are in one group), each in node order, groups in order of
  their first node."""
  n = len(keys)
  if n == 0:
    return []
  parent = list(range(n))

  def find(i):
    while parent[i] != i:
      parent[i] = parent[parent[i]]
      i = parent[i]
    return i

  for p in (0, 1):
    first: dict[int, int] = {}
    for i, k in enumerate(keys[:, p].tolist()):
      j = first.setdefault(k, i)
      if j != i:
        ri, rj = find(i), find(j)
        if ri != rj:
          parent[max(ri, rj)] = min(ri, rj)
  label = np.asarray([find(i) for i in range(n)], dtype=np.int64)
  order = np.argsort(label, kind="stable")
  starts = np.flatnonzero(np.r_[True, label[order][1:] != label[order][:-1]])
  return sorted(np.split(order, starts[1:]), key=lambda g: int(g[0]))


def encode_group(encoder, data: NodeData, group: np.ndarray
                 ) -> dict[str, np.ndarray]:
  """The token network's inputs for the histories `group` (indices into
  `data`) as one sampled public state, unpadded: `encode_groups`'s fields
  for it alone, plus "legal" (the acting tokens' legal actions, read from
  `data.states`) for a policy target."""
  ex = {k: v[0] for k, v in encode_groups(encoder, data, [group]).items()}
  acting = ex["info"][:, 2] > 0
  legal = np.zeros((len(acting), encoder.num_actions), dtype=np.float32)
  for i, pair in enumerate(ex["hist"].tolist()):
    for token in pair:
      if acting[token] and not legal[token].any():
        legal[token, data.states[int(group[i])].legal_actions()] = 1.0
  ex["legal"] = legal
  return ex


def encode_groups(encoder, data: NodeData, groups: Sequence[np.ndarray]
                  ) -> dict[str, np.ndarray]:
  """The token network's inputs (`TokenNetwork.FIELDS`) for each of
  `groups` (indices into `data`) as one sampled public state, padded to the
  largest group's tokens and histories and stacked: a phase's many small
  groups in one call, in whole-array operations. Tokens in a group are
  ordered by player, then key (the network does not see the order)."""
  num = len(groups)
  leaves = np.concatenate(groups)
  label = np.repeat(np.arange(num), [len(g) for g in groups])
  size = np.bincount(label, minlength=num)
  position = np.arange(len(leaves)) - np.repeat(
      np.concatenate([[0], np.cumsum(size)[:-1]]), size)
  keys = data.keys[leaves]
  # Each player's tokens: the distinct (group, key) pairs, sorted.
  first, owner, count, slot = [], [], [], []
  for p in (0, 1):
    pair = label * (int(keys[:, p].max(initial=0)) + 1) + keys[:, p]
    _, start, inverse = np.unique(pair, return_index=True,
                                  return_inverse=True)
    first.append(leaves[start])
    owner.append(label[start])
    count.append(np.bincount(owner[p], minlength=num))
    offset = np.concatenate([[0], np.cumsum(count[p])[:-1]])
    slot.append(np.arange(len(start)) - offset[owner[p]])
    slot[p] = slot[p][inverse.reshape(-1)]  # per leaf: its token's slot
  n0, n1 = count
  width = int((n0 + n1).max())
  hh = int(size.max())
  token_slot = [np.arange(len(first[0])) - np.concatenate(
      [[0], np.cumsum(n0)[:-1]])[owner[0]]]
  token_slot.append(n0[owner[1]] + np.arange(len(first[1])) - np.concatenate(
      [[0], np.cumsum(n1)[:-1]])[owner[1]])
  out = {
      "tokens": np.zeros((num, width, encoder.token_size), np.float32),
      "info": np.zeros((num, width, INFO_SIZE), np.float32),
      "player": np.zeros((num, width), np.int32),
      "mask": np.zeros((num, width), np.float32),
      "range": np.zeros((num, width), np.float32),
      "public": np.zeros((num, encoder.public_size), np.float32),
      "hist": np.zeros((num, hh, 2), np.int32),
      "weight": np.zeros((num, hh), np.float32)}
  engine_tensors = data.tensors is not None and encoder.source in (
      "information_state_tensor", "observation_tensor")
  r = np.zeros((num, width))
  norms = np.zeros((num, 2))
  for p in (0, 1):
    at = (owner[p], token_slot[p])
    out["tokens"][at] = (data.tensors[first[p], p] if engine_tensors else [
        encoder.state_tensor(data.states[k], p) for k in first[p]])
    out["player"][at] = p
    out["mask"][at] = 1.0
    raw = data.reaches[first[p], p]
    norms[:, p] = np.bincount(owner[p], weights=raw, minlength=num)
    sizes = np.maximum((n0, n1)[p], 1)[owner[p]]
    norm = norms[owner[p], p]
    r[at] = np.where(norm > 0, raw / np.where(norm > 0, norm, 1.0),
                     1.0 / sizes)
    out["info"][at + (p,)] = 1.0
    out["info"][at + (2,)] = data.actors[first[p]] == p
  chance = data.chance[leaves].astype(np.float64)
  total = np.bincount(label, weights=chance, minlength=num)
  weight = np.where(total[label] > 0, chance / np.where(
      total[label] > 0, total[label], 1.0), 1.0 / size[label])
  h0, h1 = slot[0], n0[label] + slot[1]
  out["hist"][label, position, 0] = h0
  out["hist"][label, position, 1] = h1
  out["weight"][label, position] = weight
  cells = num * width
  mass = (np.bincount(label * width + h0, weights=weight * r[label, h1],
                      minlength=cells) +
          np.bincount(label * width + h1, weights=weight * r[label, h0],
                      minlength=cells)).reshape(num, width)
  out["range"][:] = r
  out["info"][..., 3] = r
  out["info"][..., 4] = log_feature(r)
  out["info"][..., 5] = log_feature(mass)
  out["info"] *= out["mask"][..., None]
  public = out["public"]
  head = encoder.public_size - EXTRA_PUBLIC
  features = encoder.features
  if features is not None and features.kind == "actions":
    public[:, :head] = features.of_actions(data.actions[leaves], label, num)
  elif features is not None:
    for b, g in enumerate(groups):
      public[b, :head] = features.of_histories(data.states[int(g[0])], None)
  actor = data.actors[leaves[np.concatenate([[0], np.cumsum(size)[:-1]])]]
  public[np.arange(num), head + np.where((actor == 0) | (actor == 1), actor,
                                         2)] = 1.0
  public[:, head + 4] = np.log1p(n0) / 10.0
  public[:, head + 5] = np.log1p(n1) / 10.0
  public[:, head + 6] = np.log1p(size) / 10.0
  public[:, head + 7:head + 10] = log_feature(
      np.stack([norms[:, 0], norms[:, 1], total], axis=1))
  return out


class LeafNetwork:
  """Values an anchored subgame's leaf histories with a token CVPN (see
  the module docstring). `net`: a `TokenCVPN` with parameters."""

  def __init__(self, net):
    if getattr(net.encoder, "input", None) != "tokens":
      raise ValueError("the anchored subgame's leaves take a token CVPN "
                       "(train one with examples/train.py, whose "
                       "fog_of_war recipe makes one); this "
                       "network has the slot input")
    self.net = net
    self.encoder = net.encoder
    self.calls = 0
    self.groups = 0

  @property
  def engine_tensors(self) -> bool:
    """Whether the tokens are the game's own tensors (which the engine
    reads), not a compact or hashed encoding of the states."""
    return self.encoder.source in ("information_state_tensor",
                                   "observation_tensor")

  def needs_states(self) -> bool:
    """Whether `tree.leaf_data` must hand over the nodes' states (token or
    public features read from Python)."""
    enc = self.encoder
    return not self.engine_tensors or (enc.features is not None and
                                       enc.features.kind != "actions")

  def values(self, data: NodeData) -> np.ndarray:
    """Each node's value (player 0's, in the game's units): its history's
    u_h in its group."""
    if not len(data.keys):
      return np.zeros(0)
    groups = components(data.keys)
    inputs = encode_groups(self.encoder, data, groups)
    u = self.net.host().history_values(inputs, [len(g) for g in groups])
    out = np.zeros(len(data.keys))
    for b, g in enumerate(groups):
      out[g] = u[b, :len(g)]
    self.calls += 1
    self.groups += len(groups)
    return out * self.encoder.utility_scale
