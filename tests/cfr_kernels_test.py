"""The shim's C++ passes of GT-CFR (open_spiel_sog/_native/cfr_kernels.h)
against their numpy twins (algorithms/cfr/growing_passes.py), on trees grown
by real searches."""

import numpy as np
import pyspiel
import pytest

from open_spiel_sog import _native
from open_spiel_sog.algorithms.cfr import PlayerSequences
from open_spiel_sog.algorithms.cfr import growing_passes
from open_spiel_sog.algorithms.cfr import masked_regret_matching
from open_spiel_sog.algorithms.sog import gt_cfr
from open_spiel_sog.algorithms.sog import network_updates
from open_spiel_sog.algorithms.sog import rollout_values
from open_spiel_sog.algorithms.sog import updates
from open_spiel_sog.algorithms.sog import value_functions
from open_spiel_sog.public_state import PublicStateObserver

_GAMES = ["kuhn_poker", "leduc_poker", "connect_four", "liars_dice",
          "dark_hex(num_rows=2,num_cols=3)"]


@pytest.fixture(name="kernels")
def _kernels_fixture():
  shim, reason = _native.load_shim()
  assert shim is not None, reason  # make test builds the shim
  assert growing_passes.kernels() is shim
  return shim


def _search(game_string: str, native: bool, monkeypatch,
            simulations: int = 60) -> gt_cfr.GTCFR:
  """A finished rollout search from the first decision, with the C++
  passes or the numpy ones."""
  monkeypatch.setattr(growing_passes, "_KERNELS", None if native else False)
  game = pyspiel.load_game(game_string)
  root = PublicStateObserver(game).root()
  while root.is_chance_node():
    root = root.children()[0]
    if root.is_terminal():
      raise AssertionError(game_string)
  search = gt_cfr.GTCFR(
      root, rollout_values.RolloutValueFunction(game, num_rollouts=2,
                                                seed=3),
      gt_cfr.GTCFRConfig(simulations=simulations, record_queries=False),
      rng=np.random.default_rng(5))
  search.run()
  return search


@pytest.mark.parametrize("game_string", _GAMES)
def test_each_pass_matches_numpy(game_string, kernels, monkeypatch):
  """Reach, sequence values, entry values, the CFR+ step and regret matching
  give the numpy passes' numbers (to rounding) on random inputs over a grown
  tree."""
  search = _search(game_string, True, monkeypatch)
  tree = search.tree
  assert len(tree.nodes) > 8
  compiled = tree.compiled()
  rng = np.random.default_rng(0)
  for p in range(2):
    c, side = compiled[p], tree.sides[p]
    n = side.num_rows
    assert n > 0
    # Policies over the active actions, positive root ranges.
    policy = np.where(side.active, rng.random(side.active.shape), 0.0)
    policy /= np.maximum(policy.sum(axis=1, keepdims=True), 1e-300)
    root_range = rng.random(c.num_root) + 0.1
    np.testing.assert_allclose(
        growing_passes.reach(c, policy, root_range),
        growing_passes.numpy_reach(c, policy, root_range),
        rtol=0, atol=1e-14)
    direct = rng.normal(size=c.num_seq)
    seq_k, rows_k = growing_passes.values(c, policy, direct.copy())
    seq_n, rows_n = growing_passes.numpy_values(c, policy, direct.copy())
    np.testing.assert_allclose(seq_k, seq_n, rtol=0, atol=1e-12)
    np.testing.assert_allclose(rows_k, rows_n, rtol=0, atol=1e-12)
    # The propagation changes the values (the tree has interior entries).
    values = rng.normal(size=c.num_entries)
    values_k, values_n = values.copy(), values.copy()
    growing_passes.propagate_entry_values(c, policy, values_k)
    growing_passes.numpy_propagate_entry_values(c, policy, values_n)
    np.testing.assert_allclose(values_k, values_n, rtol=0, atol=1e-12)
    assert not np.allclose(values_k, values)
    # The CFR+ step, on two copies of the side's arrays.
    own = rng.random(n)
    regrets = rng.normal(size=side.regrets.shape).clip(0, None)
    results = []
    for step in (growing_passes.regret_update,
                 growing_passes.numpy_regret_update):
      copy = PlayerSequences()
      copy.__dict__.update({k: (v.copy() if isinstance(v, np.ndarray) else v)
                            for k, v in side.__dict__.items()})
      copy.regrets = regrets.copy()
      step(copy, c, seq_n, rows_n, own, 3.0)
      results.append(copy)
    for name in ("regrets", "avg", "policy"):
      np.testing.assert_allclose(getattr(results[0], name)[:n],
                                 getattr(results[1], name)[:n], rtol=0,
                                 atol=1e-12, err_msg=name)
    # Regret matching: rows sum to one over their active actions.
    np.testing.assert_allclose(results[0].policy[:n].sum(axis=1), 1.0)
    assert not np.any(results[0].policy[:n][~side.active[:n]])
    # Regret matching alone, on a block of rows (some regrets all zero).
    regrets[: n // 2] = 0.0
    matched = np.full_like(side.policy, -1.0)
    kernels.cfr_regret_matching(regrets, side.active, matched, 0, n)
    np.testing.assert_allclose(
        matched[:n],
        masked_regret_matching(regrets[:n], side.active[:n]),
        rtol=0, atol=1e-15)


@pytest.mark.parametrize("game_string", _GAMES)
def test_the_fused_update_matches_the_numpy_passes(game_string, kernels,
                                                   monkeypatch):
  """cfr_fixed_update (one player's whole update from fixed history
  values) gives the numbers of the passes composed as gt_cfr.py's general
  update composes them: reaches, entry and sequence values, the
  propagation, row values and the CFR+ step. (Composed from the C++ passes,
  which sum in the same order; the numpy passes sum by tree level, and the
  1e-17 apart values can flip a regret of zero to positive.)"""
  search = _search(game_string, True, monkeypatch)
  tree = search.tree
  compiled = tree.compiled()
  e0, e1, w, s0, s1 = search.leaves.fixed_histories(compiled)
  assert len(w) > 0
  rng = np.random.default_rng(1)
  policies = [np.where(s.active, rng.random(s.active.shape), 0.0)
              for s in tree.sides]
  for policy in policies:
    policy /= np.maximum(policy.sum(axis=1, keepdims=True), 1e-300)
  ranges = [rng.random(c.num_root) + 0.1 for c in compiled]
  for p in range(2):
    o = 1 - p
    c, side = compiled[p], tree.sides[p]
    n = side.num_rows
    regrets = rng.normal(size=side.regrets.shape).clip(0, None)
    avg = rng.random(side.avg.shape)
    reach = [growing_passes.reach(compiled[q], policies[q], ranges[q])
             for q in range(2)]
    if p == 0:
      entries = np.bincount(e0, weights=w * reach[1][s1],
                            minlength=c.num_entries)
    else:
      entries = np.bincount(e1, weights=-w * reach[0][s0],
                            minlength=c.num_entries)
    direct = np.bincount(c.entry_seq, weights=entries, minlength=c.num_seq)
    propagated = entries.copy()
    growing_passes.propagate_entry_values(c, policies[p], propagated)
    seq, rows = growing_passes.values(c, policies[p], direct)
    expected = PlayerSequences()
    expected.__dict__.update(side.__dict__)
    expected.regrets, expected.avg = regrets.copy(), avg.copy()
    expected.policy = policies[p].copy()
    growing_passes.regret_update(expected, c, seq, rows,
                          reach[p][c.row_parent_seq], 2.0)
    for propagate in (True, False):
      got_regrets, got_avg = regrets.copy(), avg.copy()
      got_policy = policies[p].copy()
      own, opp, got_seq, got_rows, got_entries = kernels.cfr_fixed_update(
          c.row_parent_seq, got_policy, got_regrets, got_avg, side.active,
          ranges[p], c.width, compiled[o].row_parent_seq, policies[o],
          ranges[o], compiled[o].width, e0 if p == 0 else e1,
          s1 if p == 0 else s0, w, 1.0 if p == 0 else -1.0, c.entry_seq,
          propagate, c.entry_row, c.entry_parent_row, c.entry_parent_slot,
          c.entry_parent, 2.0)
      for got, want in ((own, reach[p]), (opp, reach[o]), (got_seq, seq),
                        (got_rows, rows),
                        (got_entries, propagated if propagate else entries),
                        (got_regrets[:n], expected.regrets[:n]),
                        (got_avg[:n], expected.avg[:n]),
                        (got_policy[:n], expected.policy[:n])):
        np.testing.assert_array_equal(got, want)
  # A history naming an entry past the tree's is refused.
  c = compiled[0]
  with pytest.raises(ValueError, match="missing entry"):
    kernels.cfr_fixed_update(
        c.row_parent_seq, policies[0].copy(), tree.sides[0].regrets.copy(),
        tree.sides[0].avg.copy(), tree.sides[0].active, ranges[0], c.width,
        compiled[1].row_parent_seq, policies[1], ranges[1], compiled[1].width,
        np.full(len(e0), c.num_entries), s1, w, 1.0, c.entry_seq, False,
        c.entry_row, c.entry_parent_row, c.entry_parent_slot,
        c.entry_parent, 1.0)


@pytest.mark.parametrize("game_string", _GAMES)
def test_selection_matches_numpy_at_the_same_uniform(game_string, kernels,
                                                     monkeypatch):
  """The C++ selection picks the slot numpy's Generator.choice picks from
  the same generator state, with and without values, visits and virtual
  losses."""
  del kernels
  search = _search(game_string, True, monkeypatch)
  tree = search.tree
  rng = np.random.default_rng(2)
  compared = 0
  for p in range(2):
    side = tree.sides[p]
    virtual = np.zeros((side.capacity, side.width))
    for row in range(side.num_rows):
      k = len(side.row_actions[row])
      virtual[row, :k] = rng.integers(0, 3, size=k)
      for normaliser in (0.0, float(rng.random() + 0.5)):
        for seed in range(4):
          picks = []
          for native in (True, False):
            monkeypatch.setattr(growing_passes, "_KERNELS",
                                None if native else False)
            search.growth.rng = np.random.default_rng(seed)
            picks.append(search.growth.select(p, row, normaliser, virtual))
          assert picks[0] == picks[1], (p, row, normaliser, seed)
          compared += 1
  assert compared >= 16


@pytest.mark.parametrize("game_string", ["kuhn_poker", "leduc_poker"])
def test_whole_searches_agree(game_string, monkeypatch):
  """A search with the C++ passes grows the same tree as one with the numpy
  passes and ends at the same root values (to rounding)."""
  native = _search(game_string, True, monkeypatch, simulations=100)
  numpy = _search(game_string, False, monkeypatch, simulations=100)
  assert len(native.tree.nodes) == len(numpy.tree.nodes)
  a, b = native.result(), numpy.result()
  for p in range(2):
    np.testing.assert_allclose(a.root_values[p], b.root_values[p], rtol=0,
                               atol=1e-9)


def test_a_network_search_without_leaves_takes_the_fused_update(
    kernels, monkeypatch):
  """A network's search of a small subgame (Leduc after the public card)
  expands it whole; its later updates, with only terminal values, are the
  fused C++ update, and end where the general update does."""
  del kernels
  from open_spiel_sog.algorithms.sog import cvpn  # pylint: disable=g-import-not-at-top
  game = pyspiel.load_game("leduc_poker")
  observer = PublicStateObserver(game)
  ps = next(p for p in observer.walk() if p.is_player_node() and p.depth >= 6)
  net = cvpn.CVPN(cvpn.Encoder(observer), cvpn.NetworkConfig(hidden=(16,)))
  net.init(0)
  fused = []
  update = updates.RegretUpdates._fused_update  # pylint: disable=protected-access

  def counted(self, *args):
    fused.append(1)
    return update(self, *args)

  monkeypatch.setattr(updates.RegretUpdates, "_fused_update", counted)
  results = []
  for native in (True, False):
    monkeypatch.setattr(growing_passes, "_KERNELS", None if native else False)
    ranges = [np.linspace(1.0, 2.0, ps.num_infostates(p)) for p in range(2)]
    results.append(gt_cfr.search(
        ps, cvpn.CVPNValueFunction(net), gt_cfr.GTCFRConfig(simulations=50),
        ranges=ranges, rng=np.random.default_rng(0)))
  # Two updates (one per player) per iteration; most find no leaf left.
  assert len(fused) > results[0].updates, (len(fused), results[0].updates)
  assert not results[0].tree.leaves()
  for p in range(2):
    np.testing.assert_allclose(results[0].root_values[p],
                               results[1].root_values[p], rtol=0, atol=1e-9)
  for a, b in zip(results[0].policy(ps), results[1].policy(ps)):
    assert a.keys() == b.keys()
    for action in a:
      assert abs(a[action] - b[action]) < 1e-9


def _network_search(game: pyspiel.Game, value_fn, native_update: bool,
                    monkeypatch, **kwargs) -> gt_cfr.SearchResult:
  """A search from the game's first decision with `value_fn` (a network),
  its updates through the C++ network update or, with `native_update`
  False, through the passes called one by one (C++ where they have one)."""
  if not native_update:
    monkeypatch.setattr(network_updates.NetworkUpdates, "plan",
                        lambda self, *args: None)
  root = PublicStateObserver(game).root()
  while root.is_chance_node():
    root = root.children()[0]
  search = gt_cfr.GTCFR(root, value_fn, rng=np.random.default_rng(7),
                        **kwargs)
  result = search.run()
  monkeypatch.undo()
  return search, result


@pytest.mark.parametrize("game_string,value_players", [
    ("leduc_poker", (0, 1)), ("leduc_poker", (0,)),
    ("liars_dice(numdice=1,dice_sides=5)", (0, 1))])
def test_the_network_update_matches_the_passes_to_the_bit(
    game_string, value_players, kernels, monkeypatch):
  """GT-CFR's update with a network (`cfr_leaf_inputs`, the network call,
  `cfr_network_update`) gives the numbers of the passes called one by one:
  the same tree, queries, policies, root values and averaged entry values,
  bit for bit, with the shipped network on 80 simulations."""
  del kernels
  from open_spiel_sog.algorithms.sog import cvpn  # pylint: disable=g-import-not-at-top
  game = pyspiel.load_game(game_string)
  net = cvpn.shared_network(cvpn.shipped_checkpoint(game), game)
  calls = []
  network_update = updates.RegretUpdates._network_update  # pylint: disable=protected-access

  def counted(self, *args):
    calls.append(1)
    return network_update(self, *args)

  out = []
  for native_update in (True, False):
    monkeypatch.setattr(updates.RegretUpdates, "_network_update", counted)
    out.append(_network_search(
        game, cvpn.CVPNValueFunction(net), native_update, monkeypatch,
        config=gt_cfr.GTCFRConfig(simulations=80, averaging_power=2),
        value_players=value_players))
    if native_update:
      # Every update of the first search had leaves to value.
      assert len(calls) == 2 * out[0][0].updates, len(calls)
  assert len(calls) == 2 * out[0][0].updates  # none in the second
  (fused, a), (passes, b) = out
  assert len(fused.tree.nodes) == len(passes.tree.nodes)
  assert len(a.queries) == len(b.queries) > 100
  for i in range(0, len(a.queries), 97):
    for p in range(2):
      np.testing.assert_array_equal(a.queries[i].ranges[p],
                                    b.queries[i].ranges[p])
  for p in range(2):
    np.testing.assert_array_equal(a.root_values[p], b.root_values[p])
    np.testing.assert_array_equal(fused.tree.sides[p].regrets,
                                  passes.tree.sides[p].regrets)
    np.testing.assert_array_equal(fused.tree.sides[p].avg,
                                  passes.tree.sides[p].avg)
    np.testing.assert_array_equal(
        fused.updater.averages.sums[p], passes.updater.averages.sums[p])
  # Entry values are averaged for the value players only.
  assert (len(fused.updater.averages.sums[1]) > 0) == (1 in value_players)
  for node in fused.tree.nodes:
    if node.rows is not None:
      assert a.policy(node.ps) == b.policy(passes.tree.nodes[node.index].ps)


def test_bad_network_updates_are_refused_with_a_reason(kernels):
  """Leaf sequences or entries outside the tree are refused by name."""
  heads = np.zeros((1, 2), dtype=np.float32)
  eq, col, sizes = (np.zeros(1, np.int64), np.asarray([2]),
                    np.ones(1, np.int64))
  parent, policy = np.zeros(0, np.int64), np.zeros((0, 1))
  root = np.ones(1)
  with pytest.raises(ValueError, match="leaf entry 0 names a missing seq"):
    kernels.cfr_leaf_inputs(root, root, parent, policy, 1, parent, policy, 1,
                            np.asarray([1]), np.asarray([0]), heads, eq, eq,
                            col, col, sizes, sizes, np.ones(1), 3)
  empty = np.zeros(0, np.int64)
  values = np.zeros((1, 1), dtype=np.float32)
  args = dict(
      values=values, scale=np.ones(1), own_reach=root, opp_reach=root,
      avg_weight=1.0, entry_query=eq, value_rows=np.zeros(1, np.int64),
      unit=1.0, leaf_entries=np.asarray([3]),
      leaf_seqs=np.zeros(1, np.int64), own_entries=empty, own_seqs=empty,
      opp_seqs=empty, weights=np.zeros(0), sign=1.0, r_parent_seq=parent, policy=policy,
      regrets=np.zeros((0, 1)), avg=np.zeros((0, 1)),
      active=np.zeros((0, 1), bool), num_root=1, width=1, num_entries=1,
      propagate=True, entry_row=-np.ones(1, np.int64),
      e_prow=-np.ones(1, np.int64), e_pslot=-np.ones(1, np.int64),
      e_parent=-np.ones(1, np.int64), entry_sum=np.zeros(1),
      entry_weight=np.zeros(1))
  with pytest.raises(ValueError, match="leaf entry 0 names a missing entry"):
    kernels.cfr_network_update(**args)
  with pytest.raises(ValueError, match="leaf entry 0 names a missing seq"):
    kernels.cfr_network_update(**dict(args, leaf_seqs=np.asarray([5])))


def test_bad_layouts_are_refused_with_a_reason(kernels):
  """A row whose parent sequence is not an earlier row's, and arrays that
  are too small, get a ValueError naming the problem."""
  policy = np.full((2, 2), 0.5)
  with pytest.raises(ValueError, match="parent sequence"):
    kernels.cfr_reach(np.asarray([0, 5]), policy, np.ones(1), 2)
  with pytest.raises(ValueError, match="policy"):
    kernels.cfr_reach(np.asarray([0, 1]), np.full((1, 2), 0.5), np.ones(1), 2)
  with pytest.raises(ValueError, match="direct"):
    kernels.cfr_values(np.asarray([0, 1]), policy, np.zeros(3), 1, 2)
  with pytest.raises(ValueError, match="at least one action"):
    kernels.cfr_select(np.zeros(0), np.zeros(0), 1, 2,
                       np.ones((2, 2), bool), policy, policy, policy, policy,
                       policy, 0, 0, 0.0, 1.0, 1.0, 1.0, 0.5)
  # In-place arrays must be float64 already (a converted copy would lose the
  # result).
  with pytest.raises(TypeError):
    kernels.cfr_values(np.asarray([0]), np.ones((1, 1)),
                       np.zeros(2, dtype=np.float32), 1, 1)


@pytest.mark.parametrize("game_string", _GAMES)
def test_arrays_extended_as_the_tree_grows_equal_arrays_built_anew(
    game_string, monkeypatch):
  """The compiled arrays, extended after every growth of a search, are
  those a compilation from scratch of the final tree gives."""
  search = _search(game_string, True, monkeypatch)
  tree = search.tree
  extended = tree.compiled()
  for side in tree.sides:
    side.last_compiled = None
  tree._compiled = None  # pylint: disable=protected-access
  fresh = tree.compiled()
  for p in range(2):
    for name, value in vars(fresh[p]).items():
      if isinstance(value, np.ndarray):
        np.testing.assert_array_equal(getattr(extended[p], name), value,
                                      err_msg=name)
      else:
        assert getattr(extended[p], name) == value, name


@pytest.mark.parametrize("game_string", ["leduc_poker", "liars_dice",
                                         "connect_four"])
def test_actions_are_active_exactly_when_their_children_are_in_the_tree(
    game_string, monkeypatch):
  """After a search that adds children one at a time (top_k=1), an action
  of an infostate is active exactly where every child it leads to (from
  any history of that infostate) is in the tree: adding a child re-marks
  the actions of every infostate leading into it, not just the walked
  one."""
  monkeypatch.setattr(growing_passes, "_KERNELS", None)
  game = pyspiel.load_game(game_string)
  root = PublicStateObserver(game).root()
  while root.is_chance_node():
    root = root.children()[0]
  search = gt_cfr.GTCFR(
      root, rollout_values.RolloutValueFunction(game, num_rollouts=1,
                                                seed=3),
      gt_cfr.GTCFRConfig(simulations=150, top_k=1, record_queries=False),
      rng=np.random.default_rng(5))
  search.run()
  tree = search.tree
  checked = partial = 0
  for node in tree.nodes:
    if node.rows is None:
      continue
    side = tree.sides[node.player]
    for j, row in enumerate(node.rows.tolist()):
      for k, a in enumerate(side.row_actions[row]):
        kids = [node.transition(h, a) for h in node.infostate_histories()[j]]
        want = all(t is not None and t[0] in node.children for t in kids)
        assert bool(side.active[row, k]) == want, (node.index, j, a)
        checked += 1
        partial += 0 < sum(t[0] in node.children for t in kids) < len(kids)
  assert checked > 20
  if game_string == "leduc_poker":
    assert partial > 0  # some actions were only partly in the tree


@pytest.mark.parametrize("game_string", [
    "leduc_poker", "liars_dice(numdice=2,dice_sides=3)"])
def test_packed_network_queries_match_numpy_to_the_bit(game_string, kernels,
                                                       monkeypatch):
  """The shim's packing of a CVPN's leaf queries (inputs, scales, values)
  gives numpy's numbers exactly, zero ranges (uniform inputs) included,
  with the shipped network on the leaves of a real search."""
  del kernels
  from open_spiel_sog.algorithms.sog import cvpn  # pylint: disable=g-import-not-at-top
  game = pyspiel.load_game(game_string)
  value_fn = cvpn.CVPNValueFunction.from_checkpoint(
      cvpn.shipped_checkpoint(game), game)
  root = PublicStateObserver(game).root()
  while not root.is_player_node():
    root = root.children()[0]
  search = gt_cfr.GTCFR(root, value_fn,
                        gt_cfr.GTCFRConfig(simulations=30),
                        rng=np.random.default_rng(0))
  search.run()
  leaves = [search.tree.nodes[i].ps for i in search.tree.leaves()]
  assert len(leaves) > 5
  rng = np.random.default_rng(1)
  ranges = []
  for p in range(2):
    parts = [rng.random(ps.num_infostates(p)) for ps in leaves]
    if p == 0:
      # No mass for player 0 in the first query: its inputs are uniform,
      # player 1's values there scale to 0, player 0's do not.
      parts[0][:] = 0.0
    ranges.append(np.concatenate(parts))
  out = []
  for native in (True, False):
    monkeypatch.setattr(cvpn.value_function, "_PACK_KERNELS",
                        None if native else False)
    packed = value_functions.PackedQueries(leaves, tuple(ranges))
    out.append(value_fn.evaluate_packed(packed))
  for p in range(2):
    np.testing.assert_array_equal(out[0][0][p], out[1][0][p])
  assert out[0][0][0][:leaves[0].num_infostates(0)].any()
  for k in out[0][1].defined:
    np.testing.assert_array_equal(out[0][1][k], out[1][1][k])


def test_bad_packed_queries_are_refused_with_a_reason(kernels):
  heads = np.zeros((2, 3), dtype=np.float32)
  eq, col = np.asarray([0, 1]), np.asarray([3, 4])
  ranges, sizes = np.ones(2), np.ones(2, dtype=np.int64)
  with pytest.raises(ValueError, match="missing query or input column"):
    kernels.cvpn_pack_inputs(heads, eq, eq, col, np.asarray([3, 9]), ranges,
                             ranges, sizes, sizes, np.ones(2), 6)
  with pytest.raises(ValueError, match="heads"):
    kernels.cvpn_pack_inputs(heads, eq, eq, col, col, ranges, ranges, sizes,
                             sizes, np.ones(3), 6)
  with pytest.raises(ValueError, match="missing query or row"):
    kernels.cvpn_unpack_values(np.zeros((2, 2), np.float32), eq,
                               np.asarray([0, 2]), 1.0, np.ones(2))
