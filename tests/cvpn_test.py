"""Tests for the CVPN (algorithms/sog/cvpn/): encoding, learning, bucketed
inference, checkpoints and the errors around them.

Networks are tiny and the data comes from a couple of self-play games, so the
file runs in well under a minute on two busy cores.
"""

import gc
import os

import jax
import numpy as np
import pyspiel
import pytest

import open_spiel_sog  # registers "sog"  # pylint: disable=unused-import
from open_spiel_sog.algorithms.sog import cvpn
from open_spiel_sog.algorithms.sog import value_functions
from open_spiel_sog.algorithms.training import TrainConfig
from open_spiel_sog.algorithms.training import selfplay
from open_spiel_sog.public_state import PublicStateObserver

SMALL = cvpn.NetworkConfig(hidden=(32, 32), learning_rate=3e-3)


def _first_decision(observer):
  ps = observer.root()
  while not ps.is_player_node():
    (ps,) = ps.children()
  return ps


def _card(infostate: str) -> int:
  """The private card of a Kuhn infostate string ("0", "1p", ...)."""
  return int(infostate[0])


@pytest.fixture(scope="module")
def kuhn():
  game = pyspiel.load_game("kuhn_poker")
  observer = PublicStateObserver(game)
  return game, observer, cvpn.Encoder(observer)


@pytest.fixture(scope="module")
def selfplay_data(kuhn):
  """Examples of two self-play games on kuhn_poker and of solving their
  queries, made by a Worker with a fresh network."""
  game, observer, encoder = kuhn
  config = TrainConfig(game="kuhn_poker", actor_simulations=10,
                       solver_simulations=10, q_search=2.0, network=SMALL)
  net = cvpn.CVPN(encoder, SMALL)
  net.init(0)
  worker = selfplay.Worker(config, net=net, seed=0)
  batches, messages = [], []
  for _ in range(2):
    batch, pushed = worker.play_game()
    batches.append(batch)
    messages.extend(pushed)
  assert messages, "self-play pushed no queries to solve"
  batch, _ = worker.solve(messages)
  batches.append(batch)
  del game, observer
  return cvpn.Batch.concatenate(batches)


@pytest.fixture(scope="module")
def trained_checkpoint(kuhn, selfplay_data, tmp_path_factory):
  """(path, net): a kuhn network trained a few steps, saved with optimiser
  state."""
  _, _, encoder = kuhn
  net = cvpn.CVPN(encoder, SMALL)
  net.init(1)
  for _ in range(5):
    net.train_step(selfplay_data)
  path = str(tmp_path_factory.mktemp("cvpn") / "kuhn.npz")
  cvpn.save_checkpoint(path, net, game=pyspiel.load_game("kuhn_poker"),
                       extra={"note": "round trip"})
  return path, net


# --- 1. Encoding -------------------------------------------------------------


@pytest.mark.parametrize("game_string,slots,actions", [
    ("kuhn_poker", 3, 2),  # one slot per card: J, Q, K
    ("leduc_poker", 6, 3),  # one slot per card: 3 ranks x 2 suits
])
def test_encoder_shapes_and_normalised_ranges(game_string, slots, actions):
  game = pyspiel.load_game(game_string)
  assert game.num_distinct_actions() == actions
  observer = PublicStateObserver(game)
  encoder = cvpn.Encoder(observer)
  assert encoder.num_slots == (slots, slots)
  assert encoder.num_rows == 2 * slots
  assert encoder.num_actions == actions
  assert encoder.utility_scale == pytest.approx(
      max(abs(game.max_utility()), abs(game.min_utility())))

  ps = _first_decision(observer)
  rng = np.random.default_rng(0)
  queries = [
      value_functions.Query(ps, tuple(rng.random(ps.num_infostates(p)) * 5
                                      for p in range(2))),
      value_functions.Query(ps, tuple(np.ones(ps.num_infostates(p))
                                      for p in range(2))),
  ]
  batch = encoder.encode(queries)
  n, rows = len(queries), encoder.num_rows
  assert batch.inputs.shape == (n, encoder.input_size)
  assert batch.value_target.shape == (n, rows)
  assert batch.value_mask.shape == (n, rows)
  assert batch.policy_target.shape == (n, rows, actions)
  assert batch.policy_mask.shape == (n, rows)
  assert batch.legal.shape == (n, rows, actions)

  offset = encoder.input_size - rows
  for i, q in enumerate(queries):
    r0 = batch.inputs[i, offset:offset + slots]
    r1 = batch.inputs[i, offset + slots:]
    assert r0.sum() == pytest.approx(1.0, abs=1e-6)
    assert r1.sum() == pytest.approx(1.0, abs=1e-6)
    assert np.all(r0 >= 0) and np.all(r1 >= 0)
    # Every infostate at the first decision holds a distinct card: all slots
    # are present, each with its normalised range.
    for p, region in ((0, r0), (1, r1)):
      np.testing.assert_allclose(
          np.sort(region), np.sort(q.ranges[p] / q.ranges[p].sum()),
          rtol=1e-5)
    # The acting player (0) is flagged, and its legal actions are marked.
    who = batch.inputs[i, offset - 3:offset]
    np.testing.assert_array_equal(who, [1, 0, 0])
    assert batch.legal[i, :slots].sum(axis=1).tolist() == [
        len(ps.legal_actions(0))] * slots
    assert not batch.legal[i, slots:].any()


def test_encoder_puts_kuhn_ranges_in_card_slots(kuhn):
  """Slot = card: the range of the infostate holding card c lands in slot c,
  whatever order the public state lists its infostates in."""
  _, observer, encoder = kuhn
  ps = _first_decision(observer)
  ranges = (np.array([1.0, 2.0, 5.0]), np.array([3.0, 0.0, 1.0]))
  batch = encoder.encode([value_functions.Query(ps, ranges)])
  offset = encoder.input_size - encoder.num_rows
  for p in range(2):
    region = batch.inputs[0, offset + 3 * p:offset + 3 * p + 3]
    for j, infostate in enumerate(ps.infostates(p)):
      assert region[_card(infostate)] == pytest.approx(
          ranges[p][j] / ranges[p].sum())


def test_encoder_is_not_fooled_by_a_new_observer_at_a_reused_address():
  """An encoder may be handed public states of any observer of its game
  (GT-CFR, the sog bot and the exploitability evaluation each build their
  own). Public state ids depend on the order an observer expanded them, and
  a short-lived observer's address can be reused by the next one; the
  encoding must still be that of the public state given."""
  game = pyspiel.load_game("leduc_poker")
  encoder = cvpn.Encoder(PublicStateObserver(game))
  reference = encoder.observer

  def ones(ps):
    return value_functions.Query(ps, (np.ones(ps.num_infostates(0)),
                                      np.ones(ps.num_infostates(1))))

  for trial in range(60):
    observer = PublicStateObserver(game)
    children = _first_decision(observer).children()
    # Expanding the children in another order gives their children other ids.
    order = children if trial % 2 == 0 else children[::-1]
    states = [g for c in order for g in c.children() if not g.is_terminal()]
    got = encoder.encode([ones(ps) for ps in states])
    same = [reference.public_state_of(ps.histories[0])[0] for ps in states]
    want = encoder.encode([ones(ps) for ps in same])
    for i, ps in enumerate(states):
      np.testing.assert_array_equal(
          got.inputs[i], want.inputs[i],
          err_msg=f"trial {trial}: stale encoding of {ps.describe()}")
      np.testing.assert_array_equal(got.legal[i], want.legal[i])
    del observer, children, order, states, got, same, want
    gc.collect()  # public states and their observer form reference cycles


# --- 2. Learning -------------------------------------------------------------


def _policy_entropy(batch):
  t = batch.policy_target
  logs = np.log(np.where(t > 0, t, 1.0))
  entropy = -np.sum(t * logs, axis=-1)
  return float(np.sum(entropy * batch.policy_mask) / batch.policy_mask.sum())


def test_training_steps_lower_the_loss_on_selfplay_data(kuhn, selfplay_data):
  _, _, encoder = kuhn
  data = selfplay_data
  # Both kinds of targets are present: policies from the actors' searches,
  # values from solving the queries.
  assert data.value_mask.sum() > 0
  assert data.policy_mask.sum() > 0
  net = cvpn.CVPN(encoder, SMALL)
  net.init(0)
  before = net.loss(data)
  for _ in range(50):
    net.train_step(data)
  after = net.loss(data)
  assert net.step == 50
  assert after["loss"] < before["loss"]
  assert after["value_loss"] < 0.5 * before["value_loss"]
  # Cross-entropy cannot go below the targets' entropy; the gap to it (the
  # KL divergence) must halve.
  entropy = _policy_entropy(data)
  assert before["policy_loss"] > entropy
  assert after["policy_loss"] - entropy < 0.5 * (before["policy_loss"] -
                                                 entropy)


# --- 3. Bucketed inference ---------------------------------------------------


def test_jitted_predict_compiles_once_per_bucket(kuhn):
  _, _, encoder = kuhn
  net = cvpn.CVPN(encoder, cvpn.NetworkConfig(hidden=(8,)))
  net.init(0)
  rng = np.random.default_rng(0)
  inputs = rng.random((40, encoder.input_size)).astype(np.float32)
  legal = np.ones((40, encoder.num_rows, encoder.num_actions), np.float32)
  assert net._predict._cache_size() == 0  # pylint: disable=protected-access
  full_v, full_p = net.predict_jitted(inputs, legal)
  assert full_v.shape == (40, encoder.num_rows)
  assert full_p.shape == (40, encoder.num_rows, encoder.num_actions)
  for _ in range(2):
    for n in range(1, 41):
      v, p = net.predict_jitted(inputs[:n], legal[:n])
      assert v.shape == (n, encoder.num_rows)
      # Padding never changes the rows that were asked for.
      np.testing.assert_allclose(v, full_v[:n], rtol=1e-5, atol=1e-6)
      np.testing.assert_allclose(p, full_p[:n], rtol=1e-5, atol=1e-6)
  # Buckets 8, 16, 32 and 64: one compiled function each, never one per call.
  assert net._predict._cache_size() == 4  # pylint: disable=protected-access


@pytest.mark.parametrize("config", [
    cvpn.NetworkConfig(hidden=(8,)),
    cvpn.NetworkConfig(hidden=(32, 16), policy_hidden=(8, 8, 8),
                       prior_temperature=0.5)])
def test_host_inference_is_the_haiku_network(kuhn, config):
  """`predict` (numpy on the host, what searches use) computes what the
  jitted Haiku network computes, on random inputs and legal masks, one row
  at a time or many, and follows new parameters."""
  _, _, encoder = kuhn
  net = cvpn.CVPN(encoder, config)
  rng = np.random.default_rng(1)
  inputs = rng.normal(size=(37, encoder.input_size)).astype(np.float32)
  legal = (rng.random((37, encoder.num_rows, encoder.num_actions)) < 0.6
           ).astype(np.float32)
  legal[:, :, 0] = 1.0
  values = []
  for seed in (0, 1):
    net.init(seed)
    v, p = net.predict(inputs, legal)
    values.append(v)
    jv, jp = net.predict_jitted(inputs, legal)
    np.testing.assert_allclose(v, jv, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(p, jp, rtol=1e-5, atol=1e-6)
    assert np.all(p[legal == 0] == 0)
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, rtol=1e-6)
    v1, p1 = net.predict(inputs[5:6], legal[5:6])
    np.testing.assert_allclose(v1[0], jv[5], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(p1[0], jp[5], rtol=1e-5, atol=1e-6)
  # New parameters are used (the host copy is not stale).
  assert not np.allclose(values[0], values[1], atol=1e-3)


# --- 4. Checkpoints ----------------------------------------------------------


def test_checkpoint_round_trip(kuhn, trained_checkpoint):
  game, observer, _ = kuhn
  path, net = trained_checkpoint
  loaded = cvpn.load_checkpoint(path, game)
  assert loaded.step == net.step == 5
  assert loaded.config == net.config
  assert loaded.metadata["game"] == str(game)
  assert loaded.metadata["extra"] == {"note": "round trip"}
  for a, b in zip(jax.tree_util.tree_leaves(net.params),
                  jax.tree_util.tree_leaves(loaded.params)):
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
  saved_opt = jax.tree_util.tree_leaves(net.opt_state)
  loaded_opt = jax.tree_util.tree_leaves(loaded.opt_state)
  assert len(saved_opt) == len(loaded_opt) > 0
  for a, b in zip(saved_opt, loaded_opt):
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))

  ps = _first_decision(observer)
  queries = [value_functions.Query(c, (np.ones(c.num_infostates(0)),
                                       np.ones(c.num_infostates(1))))
             for c in [ps] + ps.children()]
  for a, b in zip(net.evaluate_batch(queries), loaded.evaluate_batch(queries)):
    for p in range(2):
      np.testing.assert_array_equal(a.values[p], b.values[p])
    np.testing.assert_array_equal(a.policy, b.policy)

  # The loaded optimiser state is usable: one more step matches on both.
  batch = cvpn.Encoder(observer).encode(queries, values=[
      (np.ones(q.public_state.num_infostates(0)),
       np.ones(q.public_state.num_infostates(1))) for q in queries])
  clone = cvpn.load_checkpoint(path, game)
  clone.train_step(batch)
  loaded.train_step(batch)
  assert clone.step == 6
  for a, b in zip(jax.tree_util.tree_leaves(clone.params),
                  jax.tree_util.tree_leaves(loaded.params)):
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_checkpoint_saved_with_game_string_loads(kuhn, trained_checkpoint,
                                                tmp_path):
  """save_checkpoint takes `game` as a pyspiel.Game or a string; a network
  saved with the string the game was loaded from must load for that game."""
  game, _, _ = kuhn
  _, net = trained_checkpoint
  path = str(tmp_path / "by_name.npz")
  cvpn.save_checkpoint(path, net, game="kuhn_poker")
  for g in ("kuhn_poker", game):
    loaded = cvpn.load_checkpoint(path, g)
    assert loaded.step == net.step


def test_checkpoint_without_optimizer(kuhn, trained_checkpoint, tmp_path):
  game, _, _ = kuhn
  _, net = trained_checkpoint
  path = str(tmp_path / "params_only.npz")
  cvpn.save_checkpoint(path, net, game=game, include_optimizer=False)
  meta, arrays = cvpn.read_checkpoint(path)
  assert meta["has_optimizer"] is False
  assert not any(k.startswith("opt_state/") for k in arrays)
  loaded = cvpn.load_checkpoint(path, game)
  for a, b in zip(jax.tree_util.tree_leaves(net.params),
                  jax.tree_util.tree_leaves(loaded.params)):
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_value_function_from_checkpoint_evaluates_queries(kuhn,
                                                          trained_checkpoint):
  game, observer, _ = kuhn
  path, net = trained_checkpoint
  value_fn = cvpn.CVPNValueFunction.from_checkpoint(path, game)
  assert value_fn.evaluate([]) == []
  ps = _first_decision(observer)
  query = value_functions.Query(ps, (np.array([1.0, 2.0, 3.0]),
                                     np.array([0.5, 0.5, 1.0])))
  (ev,) = value_fn.evaluate([query])
  (expected,) = net.evaluate_batch([query])
  for p in range(2):
    assert ev.values[p].shape == (3,)
    np.testing.assert_allclose(ev.values[p], expected.values[p], rtol=1e-6)
  assert ev.policy.shape == (3, game.num_distinct_actions())
  np.testing.assert_allclose(ev.policy.sum(axis=1), 1.0)


def test_average_checkpoints_is_the_mean_of_the_parameters(
    kuhn, trained_checkpoint, selfplay_data, tmp_path):
  game, _, encoder = kuhn
  path, net = trained_checkpoint
  later = cvpn.load_checkpoint(path, game)
  for _ in range(3):
    later.train_step(selfplay_data)
  later_path = str(tmp_path / "later.npz")
  cvpn.save_checkpoint(later_path, later, game=game)

  averaged = cvpn.average_checkpoints([later_path, path])
  assert averaged.step == 8
  assert averaged.metadata["extra"]["averaged_steps"] == [5, 8]
  assert averaged.opt_state is None
  leaves = zip(*(jax.tree_util.tree_leaves(n.params)
                 for n in (net, later, averaged)))
  for a, b, mean in leaves:
    assert not np.array_equal(np.asarray(a), np.asarray(b))
    np.testing.assert_allclose(np.asarray(mean),
                               (np.asarray(a) + np.asarray(b)) / 2,
                               rtol=1e-6, atol=1e-7)
  out = str(tmp_path / "avg.npz")
  cvpn.save_checkpoint(out, averaged, game=game,
                       extra=averaged.metadata["extra"])
  meta, _ = cvpn.read_checkpoint(out)
  assert meta["has_optimizer"] is False
  assert meta["extra"]["averaged_steps"] == [5, 8]
  value_fn = cvpn.CVPNValueFunction.from_checkpoint(out, game)
  assert value_fn.net.step == 8
  del encoder


def test_average_checkpoints_rejects_mixed_runs(kuhn, trained_checkpoint,
                                                tmp_path):
  game, _, encoder = kuhn
  path, _ = trained_checkpoint
  with pytest.raises(cvpn.CheckpointError, match="no checkpoints"):
    cvpn.average_checkpoints([])
  with pytest.raises(cvpn.CheckpointError, match=r"kuhn_poker.*leduc_poker"):
    cvpn.average_checkpoints([path], "leduc_poker")
  other = cvpn.CVPN(encoder, cvpn.NetworkConfig(hidden=(16,)))
  other.init(0)
  other_path = str(tmp_path / "other.npz")
  cvpn.save_checkpoint(other_path, other, game=game)
  with pytest.raises(cvpn.CheckpointError, match="network settings"):
    cvpn.average_checkpoints([path, other_path])
  with pytest.raises(cvpn.CheckpointError, match="does not exist"):
    cvpn.average_checkpoints([path, str(tmp_path / "missing.npz")])


# --- 5. Errors ---------------------------------------------------------------


def test_checkpoint_for_another_game_is_rejected(trained_checkpoint):
  path, _ = trained_checkpoint
  with pytest.raises(cvpn.CheckpointError,
                     match=r"kuhn_poker.*leduc_poker") as info:
    cvpn.load_checkpoint(path, "leduc_poker")
  assert isinstance(info.value, ValueError)
  with pytest.raises(cvpn.CheckpointError, match="kuhn_poker"):
    cvpn.CVPNValueFunction.from_checkpoint(path,
                                           pyspiel.load_game("leduc_poker"))


def test_corrupt_checkpoints_are_rejected(trained_checkpoint, tmp_path):
  path, _ = trained_checkpoint
  with open(path, "rb") as f:
    data = f.read()
  garbage = tmp_path / "garbage.npz"
  garbage.write_bytes(np.random.default_rng(0).bytes(4096))
  with pytest.raises(cvpn.CheckpointError, match="corrupt"):
    cvpn.load_checkpoint(str(garbage), "kuhn_poker")
  for fraction in (0.1, 0.5, 0.99):
    truncated = tmp_path / f"truncated_{fraction}.npz"
    truncated.write_bytes(data[:int(len(data) * fraction)])
    with pytest.raises(cvpn.CheckpointError, match="corrupt"):
      cvpn.load_checkpoint(str(truncated), "kuhn_poker")
  empty = tmp_path / "empty.npz"
  empty.write_bytes(b"")
  with pytest.raises(cvpn.CheckpointError):
    cvpn.load_checkpoint(str(empty), "kuhn_poker")


def test_npz_that_is_not_a_checkpoint_is_rejected(tmp_path):
  path = str(tmp_path / "other.npz")
  np.savez(path, x=np.zeros(3))
  with pytest.raises(cvpn.CheckpointError, match="not a cvpn checkpoint"):
    cvpn.load_checkpoint(path, "kuhn_poker")


def test_missing_checkpoint_is_rejected(tmp_path):
  path = str(tmp_path / "missing.npz")
  with pytest.raises(cvpn.CheckpointError, match="does not exist"):
    cvpn.load_checkpoint(path, "kuhn_poker")


def test_sog_bot_with_missing_checkpoint_fails_clearly():
  game = pyspiel.load_game("kuhn_poker")
  with pytest.raises(ValueError, match=r"/nonexistent\.npz.*does not exist"):
    pyspiel.load_bot("sog", game, 0, {"checkpoint": "/nonexistent.npz"})


def test_sog_bot_rejects_checkpoint_with_another_value_function(
    trained_checkpoint):
  path, _ = trained_checkpoint
  game = pyspiel.load_game("kuhn_poker")
  with pytest.raises(ValueError, match="checkpoint.*exact"):
    pyspiel.load_bot("sog", game, 0,
                     {"value_function": "exact", "checkpoint": path})


def test_sog_bot_cvpn_without_network_needs_checkpoint():
  game_string = "goofspiel(num_cards=3)"
  game = pyspiel.load_game(game_string)
  assert cvpn.shipped_checkpoint(game_string) is None
  assert cvpn.shipped_checkpoint(
      pyspiel.convert_to_turn_based(game)) is None
  with pytest.raises(ValueError, match="needs checkpoint"):
    pyspiel.load_bot("sog", game, 0, {"value_function": "cvpn"})


def test_a_game_named_with_its_defaults_finds_its_shipped_network():
  """OpenSpiel's liars_dice is 1 die of 6 faces: the network shipped for
  liars_dice(numdice=1,dice_sides=6) is its network; other parameters are
  other games."""
  spelled = cvpn.shipped_checkpoint("liars_dice(numdice=1,dice_sides=6)")
  assert spelled is not None
  assert cvpn.shipped_checkpoint("liars_dice") == spelled
  assert cvpn.shipped_checkpoint(pyspiel.load_game("liars_dice")) == spelled
  assert cvpn.shipped_checkpoint("liars_dice(dice_sides=6,numdice=2)") is None
  assert cvpn.same_game("liars_dice(dice_sides=6,numdice=1)",
                        pyspiel.load_game("liars_dice"))
  assert not cvpn.same_game("liars_dice(dice_sides=6,numdice=1)",
                            pyspiel.load_game("liars_dice(numdice=2)"))
  net = cvpn.load_checkpoint(spelled, "liars_dice")
  assert net.encoder.observer.game.get_parameters()["dice_sides"] == 6


def test_sog_bot_loads_checkpoint_of_another_game_with_clear_error(
    trained_checkpoint):
  path, _ = trained_checkpoint
  game = pyspiel.load_game("leduc_poker")
  with pytest.raises(ValueError, match=r"kuhn_poker.*leduc_poker"):
    pyspiel.load_bot("sog", game, 0, {"checkpoint": path})


def test_network_config_rejects_unknown_keys():
  with pytest.raises(ValueError, match="unknown network setting.*hiden"):
    cvpn.NetworkConfig.from_json({"hiden": [8]})
  config = cvpn.NetworkConfig.from_json({"hidden": [8, 4],
                                         "optimizer": "sgd"})
  assert config.hidden == (8, 4)
  assert cvpn.NetworkConfig.from_json(config.to_json()) == config
  with pytest.raises(ValueError, match="unknown optimizer"):
    cvpn.NetworkConfig.from_json({"optimizer": "adagrad"})


def test_untrained_network_cannot_step_or_save(kuhn, tmp_path):
  _, _, encoder = kuhn
  net = cvpn.CVPN(encoder, cvpn.NetworkConfig(hidden=(4,)))
  with pytest.raises(ValueError, match="not initialised"):
    net.train_step(None)
  path = str(tmp_path / "none.npz")
  with pytest.raises(ValueError, match="no parameters"):
    cvpn.save_checkpoint(path, net, game="kuhn_poker")
  assert not os.path.exists(path)
