"""Tests for the CVPN's token input (DESIGN.md section 14): what the network
computes is a function of the public belief state, not of the order its
infostates or histories are listed in; its values are zero-sum by
construction; the fast packed path is the plain one; a sample holding every
history with its chance reach is the exact public state to it; it learns
Kuhn well enough to make SoG less exploitable (OpenSpiel's exact
exploitability); training runs on a board game and on sampled public states
(and a solver's batch of sampled queries is encoded whole); checkpoints
round-trip and the sog bot plays with them; a game it cannot encode is
refused in one line.

Networks are tiny and the training runs short, so the file runs in about
three minutes on two busy cores (most of it compiling the networks).
"""

import os
import subprocess
import sys

import jax
import numpy as np
import pyspiel
import pytest

import open_spiel_sog  # registers "sog"  # pylint: disable=unused-import
from open_spiel_sog.algorithms.sog import cvpn
from open_spiel_sog.algorithms.sog import value_functions
from open_spiel_sog.algorithms.sog.cvpn import tokens
from open_spiel_sog.algorithms.training import TrainConfig
from open_spiel_sog.algorithms.training import Trainer
from open_spiel_sog.algorithms.training import selfplay
from open_spiel_sog.evaluation.exploitability import sog_exploitability
from open_spiel_sog.public_state import ObserverConfig
from open_spiel_sog.public_state import PublicState
from open_spiel_sog.public_state import PublicStateObserver

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SMALL = cvpn.NetworkConfig(input="tokens", hidden=(32,), policy_hidden=(16,),
                           token_width=16)
# Board tensors (connect_four's 3x6x7) go through the convolutional trunk.
BOARD = cvpn.NetworkConfig(input="tokens", hidden=(8,), policy_hidden=(8,),
                           token_width=8, conv_channels=(2,))

# Per token and per history (TokenBatch.examples' fields cut to the
# example's tokens and histories).
PER_TOKEN = ("tokens", "info", "player", "mask", "range", "value_target",
             "value_mask", "policy_target", "policy_mask", "legal")
PER_HISTORY = ("weight",)


def _queries(states, rng, zeros=0.0):
  """A query per public state, with random positive ranges (a share `zeros`
  of the entries set to 0, never a whole range)."""
  out = []
  for ps in states:
    ranges = []
    for p in range(2):
      r = rng.uniform(0.1, 3.0, size=ps.num_infostates(p))
      r[rng.random(len(r)) < zeros] = 0.0
      if not r.any():
        r[0] = 1.0
      ranges.append(r)
    out.append(value_functions.Query(ps, tuple(ranges)))
  return out


def _non_terminal(observer, limit):
  """Up to `limit` non-terminal public states, breadth first from the
  root (chance nodes and decisions)."""
  states = []
  for ps in observer.walk():
    if not ps.is_terminal():
      states.append(ps)
      if len(states) == limit:
        break
  return states


@pytest.fixture(scope="module")
def leduc():
  """(game, observer, untrained SMALL network, its value function, the
  non-terminal public states of leduc_poker)."""
  game = pyspiel.load_game("leduc_poker")
  observer = PublicStateObserver(game)
  net = cvpn.make_network(observer, SMALL)
  assert isinstance(net, cvpn.TokenCVPN)
  net.init(0)
  return (game, observer, net, cvpn.value_function_for(net),
          _non_terminal(observer, 10_000))


# --- 1. Order of infostates and histories ------------------------------------


def _permuted(example, order, hist_order):
  """`example` (as TokenBatch.examples gives it) with its tokens listed in
  `order` (new token k is old token order[k]) and its histories in
  `hist_order`, each history's pair of tokens renumbered to match."""
  new_index = np.argsort(order)  # old token -> new position
  out = dict(example)
  for f in PER_TOKEN:
    out[f] = example[f][order]
  for f in PER_HISTORY:
    out[f] = example[f][hist_order]
  out["hist"] = new_index[example["hist"][hist_order]].astype(np.int32)
  return out


def test_permuting_infostates_permutes_values_and_priors(leduc):
  """Leduc public states with five or six infostates a player (30 or 20
  histories): each player's tokens shuffled, and the histories' list with
  them, gives each infostate the value and prior it had."""
  _, _, net, _, states = leduc
  decisions = [ps for ps in states if ps.is_player_node()]
  picked = ([ps for ps in decisions if len(ps.histories) == 30][:2] +
            [ps for ps in decisions if len(ps.histories) == 20][:2])
  assert len(picked) == 4
  assert all(min(ps.num_infostates(0), ps.num_infostates(1)) >= 5
             for ps in picked)
  rng = np.random.default_rng(0)
  batch = net.encoder.encode(_queries(picked, rng))
  ev, prior = net.predict(batch)
  examples, orders = [], []
  for ps, example in zip(picked, batch.examples()):
    n0, n1 = ps.num_infostates(0), ps.num_infostates(1)
    order = np.concatenate([rng.permutation(n0), n0 + rng.permutation(n1)])
    assert not np.array_equal(order, np.arange(n0 + n1))
    hist_order = rng.permutation(len(ps.histories))
    examples.append(_permuted(example, order, hist_order))
    orders.append(order)
  shuffled = cvpn.TokenBatch.stack(examples)
  ev_s, prior_s = net.predict(shuffled)
  for i, (ps, order) in enumerate(zip(picked, orders)):
    n = len(order)
    # Not a constant network: the infostates' values differ.
    assert np.ptp(ev[i, :n]) > 1e-3, ps.describe()
    np.testing.assert_allclose(ev_s[i, :n], ev[i, order], rtol=1e-5,
                               atol=1e-6, err_msg=ps.describe())
    np.testing.assert_allclose(prior_s[i, :n], prior[i, order], rtol=1e-5,
                               atol=1e-6, err_msg=ps.describe())
    acting = shuffled.player[i, :n] == ps.current_player()
    assert np.all(prior_s[i, :n][acting][
        shuffled.legal[i, :n][acting] == 0] == 0)


# --- 2. Perfect information --------------------------------------------------


@pytest.fixture(scope="module")
def connect_four():
  """(game, observer, untrained BOARD network, public states of a seeded
  random game of connect_four)."""
  game = pyspiel.load_game("connect_four")
  observer = PublicStateObserver(game)
  net = cvpn.make_network(observer, BOARD)
  net.init(0)
  rng = np.random.default_rng(3)
  state = game.new_initial_state()
  states = []
  while not state.is_terminal() and len(states) < 8:
    states.append(observer.public_state_of(state)[0])
    state.apply_action(int(rng.choice(state.legal_actions())))
  return game, observer, net, states


def test_perfect_information_gives_one_value_per_player(connect_four):
  """One token per player and one history: a value per player, player 1's
  the negation of player 0's expected value (v0 / r1 == -v1 / r0, so
  v0 == -v1 with equal ranges), and a prior over the legal columns."""
  game, _, net, states = connect_four
  # connect_four's observation tensor is a 3x6x7 board: the conv trunk.
  assert net.encoder.tensor_shape == (3, 6, 7)
  assert net._network.board  # pylint: disable=protected-access
  value_fn = cvpn.value_function_for(net)
  rng = np.random.default_rng(1)
  for ps in states:
    static = net.encoder.static(ps)
    assert static.sizes == (1, 1)
    np.testing.assert_array_equal(static.hist, [[0, 1]])
    np.testing.assert_array_equal(static.weight, [1.0])
  for equal in (True, False):
    queries = []
    for ps in states:
      r0 = rng.uniform(0.1, 3.0, size=1)
      r1 = r0.copy() if equal else rng.uniform(0.1, 3.0, size=1)
      queries.append(value_functions.Query(ps, (r0, r1)))
    evaluations = value_fn.evaluate(queries)
    plain = net.evaluate_batch(queries)
    magnitudes = []
    for q, e, f in zip(queries, evaluations, plain):
      v0, v1 = e.values
      assert v0.shape == (1,) and v1.shape == (1,)
      (r0,), (r1,) = q.ranges
      np.testing.assert_allclose(v0 / r1, -v1 / r0, rtol=1e-6, atol=1e-12)
      assert r0 * v0[0] + r1 * v1[0] == pytest.approx(0.0, abs=1e-9)
      if equal:
        assert v0[0] == pytest.approx(-v1[0], abs=1e-9)
      for p in range(2):
        np.testing.assert_allclose(e.values[p], f.values[p], rtol=1e-5,
                                   atol=1e-9)
      legal = q.public_state.legal_actions(0)
      assert e.policy.shape == (1, game.num_distinct_actions())
      np.testing.assert_allclose(e.policy.sum(), 1.0, rtol=1e-6)
      illegal = np.setdiff1d(np.arange(game.num_distinct_actions()), legal)
      assert np.all(e.policy[0, illegal] == 0)
      magnitudes.append(abs(v0[0]))
    assert max(magnitudes) > 0


# --- 3. Zero-sum -------------------------------------------------------------


@pytest.mark.parametrize("game_string", [
    "leduc_poker", "liars_dice(numdice=1,dice_sides=4)"])
def test_values_are_zero_sum_under_any_belief(game_string):
  """sum r0 * v0 + sum r1 * v1 == 0 for an untrained network, at public
  states of either player, chance nodes and the root, with random ranges
  that leave some infostates out."""
  game = pyspiel.load_game(game_string)
  observer = PublicStateObserver(game)
  net = cvpn.make_network(observer, SMALL)
  net.init(1)
  states = _non_terminal(observer, 64)
  assert any(min(ps.num_infostates(0), ps.num_infostates(1)) > 1
             for ps in states)
  queries = _queries(states, np.random.default_rng(2), zeros=0.2)
  evaluations = cvpn.TokenValueFunction(net).evaluate(queries)
  for q, e in zip(queries, evaluations):
    parts = [float(np.dot(q.ranges[p], e.values[p])) for p in range(2)]
    scale = sum(float(np.sum(np.abs(q.ranges[p] * e.values[p])))
                for p in range(2))
    assert scale > 0, q.public_state.describe()
    assert abs(parts[0] + parts[1]) <= 1e-5 * scale, (
        q.public_state.describe(), parts)


# --- 4. The packed fast path -------------------------------------------------


def test_packed_path_equals_the_plain_encoding(leduc):
  """TokenValueFunction's packed path (layouts cached under the packed key,
  ranges scattered in, values gathered out) gives TokenCVPN.evaluate_batch's
  values and priors (TokenEncoder.encode, predict, decode) on 40 leduc public
  states, for two sets of ranges over one cached layout."""
  _, _, net, _, states = leduc
  picked = states[:40]
  assert any(ps.is_chance_node() for ps in picked)
  assert any(ps.is_player_node() for ps in picked)
  value_fn = cvpn.TokenValueFunction(net)
  rng = np.random.default_rng(4)
  for trial in range(2):
    queries = _queries(picked, rng, zeros=0.1 * trial)
    packed = value_functions.PackedQueries(
        picked, tuple(np.concatenate([q.ranges[p] for q in queries])
                      for p in range(2)), key="leduc-40")
    (v0, v1), priors = value_fn.evaluate_packed(packed)
    assert len(value_fn._layouts) == 1  # pylint: disable=protected-access
    plain = net.evaluate_batch(queries)
    offsets = [0, 0]
    for i, (q, e) in enumerate(zip(queries, plain)):
      for p, packed_values in ((0, v0), (1, v1)):
        n = q.public_state.num_infostates(p)
        np.testing.assert_allclose(
            packed_values[offsets[p]:offsets[p] + n], e.values[p],
            rtol=1e-5, atol=1e-9, err_msg=q.public_state.describe())
        offsets[p] += n
      if e.policy is None:
        assert priors[i] is None
      else:
        np.testing.assert_allclose(priors[i], e.policy, rtol=1e-5,
                                   atol=1e-7)
    assert offsets == [len(v0), len(v1)]
    # `evaluate` (what GT-CFR calls without a key) is the same path.
    for e, f in zip(value_fn.evaluate(queries), plain):
      for p in range(2):
        np.testing.assert_allclose(e.values[p], f.values[p], rtol=1e-5,
                                   atol=1e-9)


# --- 5. Sampled public states ------------------------------------------------


def _as_sample(ps, order):
  """A public state holding `ps`'s histories in `order`, with their chance
  reach, marked as a sample (as the observer marks the public states it
  samples), from an observer of its own (a fresh id space)."""
  sample = PublicState(PublicStateObserver(ps.observer.game), 0, ps.parent,
                       ps.key, [ps.histories[i] for i in order],
                       ps.chance_reach[order], ps.parent_history[order],
                       ps.parent_action[order])
  sample.sampled = True
  sample.exact = False
  return sample


def test_a_sample_holding_every_history_is_the_exact_public_state(leduc):
  """A sampled public state that holds every history of an exact one, each
  with its chance reach, in another order (so its infostates are listed in
  another order too) gets, infostate by infostate, the exact public state's
  values and priors. The observer's Sampler keeps a sample's chance mass
  (each stratum's draws carry the stratum's reach), as this sample does."""
  game, observer, net, value_fn, states = leduc
  assert value_fn.accepts_sampled_public_states
  picked = [ps for ps in states if ps.is_player_node() and
            len(ps.histories) in (30, 20)]
  picked = [next(ps for ps in picked if len(ps.histories) == h)
            for h in (30, 20)]
  # What the Sampler keeps: a sample of leduc's first decision has its
  # public state's chance mass.
  sampling = PublicStateObserver(game, ObserverConfig(max_histories=12,
                                                      sample_seed=0))
  state = picked[0].histories[0]
  drawn, _ = sampling.public_state_of(state)
  exact, _ = observer.public_state_of(state)
  assert not drawn.exact and len(drawn.histories) < len(exact.histories)
  assert drawn.chance_reach.sum() == pytest.approx(exact.chance_reach.sum())

  rng = np.random.default_rng(5)
  for ps in picked:
    sample = _as_sample(ps, rng.permutation(len(ps.histories)))
    assert sample.sampled and not sample.exact
    assert sample.content_key is None
    assert sorted(sample.infostates(0)) == sorted(ps.infostates(0))
    assert sample.infostates(0) != ps.infostates(0)
    (query,) = _queries([ps], rng)
    where = [[ps.infostates(p).index(k) for k in sample.infostates(p)]
             for p in range(2)]
    sample_query = value_functions.Query(
        sample, tuple(query.ranges[p][where[p]] for p in range(2)))
    for evaluate in (value_fn.evaluate, net.evaluate_batch):
      e, s = evaluate([query, sample_query])
      for p in range(2):
        np.testing.assert_allclose(s.values[p], e.values[p][where[p]],
                                   rtol=1e-5, atol=1e-9,
                                   err_msg=ps.describe())
      q = ps.current_player()
      np.testing.assert_allclose(s.policy, e.policy[where[q]], rtol=1e-5,
                                 atol=1e-7)


# --- 6. What training on Kuhn gives SoG --------------------------------------

# The shipped Kuhn guard's protocol (tests/shipped_networks_test.py):
# SoG(100, 1) with linear averaging and walks_per_simulation=1, so that the
# network values the leaves, seeds 0 and 1, the worse seed judged.
KUHN_SOG = {"simulations": 100, "averaging_power": 1,
            "walks_per_simulation": 1}
KUHN_SEEDS = [0, 1]
# A small token network trained with exact query solves (cheap on Kuhn);
# about 15 s of CPU (40 s on two busy cores). SoG's exploitability (the worse
# of seeds 0 and 1) measured with this run and training seeds 0, 1, 2:
# 0.00211, 0.00210, 0.00154 trained against 0.00373, 0.00250, 0.00271 for
# the same networks untrained. The margin is not robust to the run: 800
# steps gave 0.00251, 0.00296 (seed 1: worse than untrained), 0.00158; the
# search solver (the paper's) 0.00163, 0.00412, 0.00267 after 300 steps and
# 0.00235, 0.00161, 0.00391 after 800 (seed 1 or 2 worse than untrained).
KUHN_NETWORK = cvpn.NetworkConfig(input="tokens", hidden=(32, 32),
                                  policy_hidden=(16,), token_width=32,
                                  learning_rate=2e-3)


def test_a_trained_token_network_makes_sog_less_exploitable(tmp_path):
  config = TrainConfig(
      game="kuhn_poker", steps=400, backend="inline", actor_simulations=20,
      solver_simulations=20, solver="exact", solver_tolerance=1e-4,
      batch_size=64, min_replay=64, max_updates_per_example=20, q_search=8,
      solver_value_targets=8, network=KUHN_NETWORK, seed=0,
      checkpoint=str(tmp_path / "kuhn_tokens.npz"))
  trainer = Trainer(config, progress=False, log=lambda s: None)
  untrained_path = str(tmp_path / "untrained.npz")
  # The network training starts from (Trainer initialises it with the seed).
  cvpn.save_checkpoint(untrained_path, trainer.net, game=config.game)
  summary = trainer.run()
  assert summary["steps"] == config.steps
  assert summary["worker_stats"]["solves"] > 0
  results = {}
  for name, path in (("untrained", untrained_path),
                     ("trained", config.checkpoint)):
    assert isinstance(cvpn.load_checkpoint(path, config.game),
                      cvpn.TokenCVPN)
    results[name] = sog_exploitability(
        config.game, dict(KUHN_SOG, checkpoint=path), KUHN_SEEDS)
  assert results["trained"]["max"] < results["untrained"]["max"], {
      k: v["values"] for k, v in results.items()}


# --- 7. Training: a board game and sampled public states ---------------------


@pytest.fixture(scope="module")
def connect_four_run(tmp_path_factory):
  """(config, summary, trainer) of a few inline training steps on
  connect_four with a tiny board network."""
  path = str(tmp_path_factory.mktemp("tokens") / "connect_four.npz")
  config = TrainConfig(
      game="connect_four", steps=3, backend="inline", actor_simulations=4,
      solver_simulations=4, batch_size=8, min_replay=8, max_moves=8,
      network=BOARD, checkpoint=path, seed=0)
  trainer = Trainer(config, progress=False, log=lambda s: None)
  return config, trainer.run(), trainer


def test_training_runs_on_connect_four(connect_four_run):
  config, summary, trainer = connect_four_run
  assert summary["steps"] == config.steps
  assert summary["examples"] >= config.min_replay
  assert summary["worker_stats"]["games"] >= 1
  assert np.isfinite(summary["loss"])
  assert isinstance(trainer.net, cvpn.TokenCVPN)
  assert cvpn.load_checkpoint(config.checkpoint, config.game).step == 3


def test_training_runs_on_sampled_public_states(tmp_path, monkeypatch):
  """phantom_ttt with max_histories=8: the public states past the first
  moves hold more histories than that, so the searches, the targets and the
  examples are on samples."""
  encoded = []
  encode = cvpn.TokenEncoder.encode

  def recording(self, queries, *args, **kwargs):
    encoded.extend((q.public_state.exact, len(q.public_state.histories))
                   for q in queries)
    return encode(self, queries, *args, **kwargs)

  monkeypatch.setattr(cvpn.TokenEncoder, "encode", recording)
  config = TrainConfig(
      game="phantom_ttt", steps=3, backend="inline", actor_simulations=4,
      solver_simulations=4, batch_size=8, min_replay=8, max_moves=8,
      max_histories=8, checkpoint=str(tmp_path / "phantom.npz"), seed=0,
      network=cvpn.NetworkConfig(input="tokens", hidden=(8,),
                                 policy_hidden=(8,), token_width=8))
  summary = Trainer(config, progress=False, log=lambda s: None).run()
  assert summary["steps"] == config.steps
  assert summary["worker_stats"]["solves"] > 0
  sampled = [h for exact, h in encoded if not exact]
  assert sampled, encoded
  loaded = cvpn.load_checkpoint(config.checkpoint, config.game)
  assert isinstance(loaded, cvpn.TokenCVPN) and loaded.step == 3


@pytest.mark.parametrize("solver", ["search", "exact"])
def test_a_solver_batch_over_sampled_public_states_is_encoded(leduc, solver):
  """Queries at leduc's second-round deal (a chance node, sampled with
  max_histories=8) from six deals, solved in one batch: building a query
  resamples the samples on its way that lack its history, dropping the
  earlier queries' public states with their histories. Every query still
  gives its examples (this once failed: "public state #22 (depth 4) was
  dropped by its observer")."""
  game, _, net, _, _ = leduc
  config = TrainConfig(game="leduc_poker", backend="inline", solver=solver,
                       solver_simulations=4, solver_value_targets=3,
                       max_histories=8, network=SMALL, seed=0)
  worker = selfplay.Worker(config, net=net)
  messages = []
  for deal in ([0, 1], [2, 3], [4, 5], [1, 4], [3, 0], [5, 2]):
    state = game.new_initial_state()
    for action in deal + [1, 1]:  # the deal, then both players call
      state.apply_action(action)
    ps, _ = worker.observer.public_state_of(state)
    assert ps.is_chance_node() and not ps.exact
    messages.append(worker.message(value_functions.Query(
        ps, tuple(np.ones(ps.num_infostates(p)) for p in range(2)))))
  batch, _ = worker.solve(messages)
  assert worker.stats.solves == len(messages)
  assert len(batch) >= len(messages)
  assert batch.value_mask.sum() > 0
  assert np.all(np.isfinite(batch.value_target))


# --- 8. Games the input cannot encode ----------------------------------------


def test_a_game_too_wide_for_a_token_is_refused_in_one_line():
  """hex 61x61: OpenSpiel's observation tensor is 9 x 61 x 61 = 33,489
  entries, more than a token carries."""
  name = "hex(num_cols=61,num_rows=61)"
  game = pyspiel.load_game(name)
  assert not game.get_type().provides_information_state_tensor
  shape = game.observation_tensor_shape()
  assert shape == [9, 61, 61]
  assert 9 * 61 * 61 > tokens.MAX_TOKEN_SIZE
  observer = PublicStateObserver(game)
  for build in (lambda: cvpn.TokenEncoder(observer),
                lambda: cvpn.make_network(observer, SMALL)):
    with pytest.raises(ValueError) as info:
      build()
    message = str(info.value)
    assert message.startswith(
        f"cvpn: the token input cannot encode {name}: ")
    assert "\n" not in message
    assert "33489" in message and str(tokens.MAX_TOKEN_SIZE) in message
  result = subprocess.run(
      [sys.executable, os.path.join(ROOT, "examples", "train.py"),
       f"--game={name}", "--recipe=public_states", "--input=tokens",
       "--backend=inline", "--steps=2", "--noprogress"],
      capture_output=True, text=True, timeout=300, check=False)
  assert result.returncode != 0
  assert "Traceback" not in result.stderr, result.stderr
  lines = [l for l in result.stderr.splitlines() if "cvpn:" in l]
  assert len(lines) == 1, result.stderr
  assert lines[0].startswith(
      f"train: cvpn: the token input cannot encode {name}: "), lines[0]


# --- 9. Checkpoints and the bot ----------------------------------------------


def test_checkpoint_round_trip_and_the_bot_plays_with_it(connect_four_run,
                                                         connect_four,
                                                         tmp_path):
  _, _, trainer = connect_four_run
  game, _, _, states = connect_four
  net = trainer.net
  path = str(tmp_path / "saved.npz")
  cvpn.save_checkpoint(path, net, game=game, extra={"note": "tokens"})
  loaded = cvpn.load_checkpoint(path, game)
  assert isinstance(loaded, cvpn.TokenCVPN)
  assert loaded.config == net.config and loaded.step == net.step == 3
  assert loaded.metadata["spec"]["input"] == "tokens"
  assert loaded.metadata["extra"] == {"note": "tokens"}
  for a, b in zip(jax.tree_util.tree_leaves(net.params),
                  jax.tree_util.tree_leaves(loaded.params)):
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
  for a, b in zip(jax.tree_util.tree_leaves(net.opt_state),
                  jax.tree_util.tree_leaves(loaded.opt_state)):
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
  queries = _queries(states, np.random.default_rng(6))
  for a, b in zip(cvpn.value_function_for(net).evaluate(queries),
                  cvpn.value_function_for(loaded).evaluate(queries)):
    for p in range(2):
      np.testing.assert_array_equal(a.values[p], b.values[p])
    np.testing.assert_array_equal(a.policy, b.policy)

  bot = pyspiel.load_bot("sog", game, 0, {"checkpoint": path,
                                          "simulations": 20, "seed": 0})
  assert isinstance(bot.value_fn, cvpn.TokenValueFunction)
  opponent = pyspiel.make_uniform_random_bot(1, 7)
  state = game.new_initial_state()
  moves = 0
  while not state.is_terminal():
    player = state.current_player()
    action = (bot if player == 0 else opponent).step(state)
    assert action in state.legal_actions(), (moves, action)
    if player == 0:
      opponent.inform_action(state, 0, action)
    else:
      bot.inform_action(state, 1, action)
    state.apply_action(action)
    moves += 1
  assert moves >= 7
  assert sum(state.returns()) == pytest.approx(0.0)
