"""Learning where information is perfect (DESIGN.md section 17): the native
engine with a network at its leaves, AlphaZero's targets as SoG's Go
setting writes them, the board's symmetries, a tic_tac_toe network trained
here that stops SoG losing to MCTS, and the shipped connect_four network."""

import dataclasses
import functools
import os

import numpy as np
from open_spiel.python.algorithms import minimax
from open_spiel.python.algorithms import mcts
import pyspiel
import pytest

import open_spiel_sog  # pylint: disable=unused-import  (registers "sog")
from open_spiel_sog.algorithms.networks import CheckpointError
from open_spiel_sog.algorithms.networks import policy_value
from open_spiel_sog.algorithms.sog import cvpn
from open_spiel_sog.algorithms.sog import engine as engine_lib
from open_spiel_sog.algorithms.training import perfect_information as pi
from open_spiel_sog.algorithms.training import TrainConfig
from open_spiel_sog.algorithms.training import Trainer
from open_spiel_sog.bots import sog

SHIM = engine_lib.native_module()
pytestmark = pytest.mark.skipif(
    SHIM is None, reason="the C++ shim is not built")  # (make test builds it)

TTT = pyspiel.load_game("tic_tac_toe")
C4 = pyspiel.load_game("connect_four")


def _play(game, actions):
  state = game.new_initial_state()
  for a in actions:
    state.apply_action(a)
  return state


@functools.lru_cache(maxsize=None)
def _ttt_values():
  """{observation of the acting player: its minimax value} of every
  tic_tac_toe decision, from OpenSpiel's returns."""
  table = {}

  def value(state):  # the acting player's
    if state.is_terminal():
      return None
    key = bytes(np.asarray(state.observation_tensor(state.current_player()),
                           np.int8))
    if key not in table:
      best = -2.0
      for a in state.legal_actions():
        child = state.child(a)
        v = (child.returns()[state.current_player()] if child.is_terminal()
             else -value(child))
        best = max(best, v)
      table[key] = best
    return table[key]

  value(TTT.new_initial_state())
  return table


class OracleNet:
  """tic_tac_toe's exact values and a uniform prior, as a network."""

  def evaluate(self, inputs, legal):
    table = _ttt_values()
    values = np.array([table[bytes(np.asarray(x, np.int8))] for x in inputs])
    return values, legal / legal.sum(axis=1, keepdims=True)


class ConstantNet:
  """Value 0 everywhere; a prior that puts `mass` on `favourite`."""

  def __init__(self, favourite=None, mass=0.9):
    self.favourite, self.mass = favourite, mass

  def evaluate(self, inputs, legal):
    priors = legal / legal.sum(axis=1, keepdims=True)
    if self.favourite is not None:
      priors = priors * (1 - self.mass)
      priors[:, self.favourite] += self.mass * legal[:, self.favourite]
      priors /= priors.sum(axis=1, keepdims=True)
    return np.zeros(len(inputs)), priors


def test_oracle_values_solve_positions_as_minimax_does():
  # With exact leaf values, on trees the search covers, the root value and
  # chosen move agree with OpenSpiel's alpha-beta search (GT-CFR's growth
  # adds one child at a time: a node's value counts only the children it
  # has, so an early search of the empty board is not yet minimax).
  for actions in ([0, 4, 8], [4, 0, 8], [0, 3, 1, 4], [0, 4, 8, 2],
                  [1, 4, 7]):
    state = _play(TTT, actions)
    player = state.current_player()
    value, _ = minimax.alpha_beta_search(TTT, state=state.clone(),
                                         maximizing_player_id=player)
    search = engine_lib.PerfectInformationSearch(
        TTT, simulations=2000, network=OracleNet(), seed=1)
    result = search.search(state)
    assert result.value == pytest.approx(value, abs=0.05)
    best = max(result.policy, key=result.policy.get)
    child = state.child(best)
    child_value, _ = (
        (child.returns()[player], None) if child.is_terminal() else
        minimax.alpha_beta_search(TTT, state=child,
                                  maximizing_player_id=player))
    assert child_value == value


def test_leaf_inputs_are_openspiel_tensors_and_masks():
  search = engine_lib.PerfectInformationSearch(
      C4, simulations=5, network=ConstantNet())
  state = _play(C4, [3, 3, 2])
  search.begin(state)
  pending = search.advance()
  assert pending == [0]
  inputs, legal, players = search.leaf_inputs(pending)
  np.testing.assert_array_equal(inputs[0], state.observation_tensor(1))
  np.testing.assert_array_equal(np.flatnonzero(legal[0]),
                                state.legal_actions())
  assert players == [1]


def test_run_before_the_leaves_are_valued_is_refused():
  config = SHIM.HistoryEngineConfig()
  config.growth, config.keys, config.network_leaves = "puct", "history", True
  engine = SHIM.HistoryEngine(C4, config)
  engine.add_root(C4.new_initial_state())
  with pytest.raises(ValueError, match="set_leaf_values"):
    engine.run(10, -1.0, 0.0, 1000)
  with pytest.raises(ValueError, match="one value"):
    engine.set_leaf_values([0], [0.0, 1.0])


def test_the_prior_steers_growth_and_every_walk_is_backed_up():
  state = C4.new_initial_state()
  search = engine_lib.PerfectInformationSearch(
      C4, simulations=400, network=ConstantNet(favourite=5), cfr_mix=0.0)
  result = search.search(state)
  assert max(result.visits, key=result.visits.get) == 5
  # Every simulation's leaf value came back up through the root's row.
  assert sum(result.visits.values()) == result.simulations == 400
  uniform = engine_lib.PerfectInformationSearch(
      C4, simulations=400, network=ConstantNet(), cfr_mix=0.0).search(state)
  assert max(uniform.visits.values()) - min(uniform.visits.values()) <= 2


def test_network_search_keeps_the_time_limit():
  import time  # pylint: disable=g-import-not-at-top
  net = policy_value.PolicyValueNet(C4)
  net.init(0)
  search = engine_lib.PerfectInformationSearch(C4, simulations=10**7,
                                               network=net)
  start = time.monotonic()
  result = search.search(C4.new_initial_state(), deadline=start + 0.3)
  assert time.monotonic() - start < 0.6
  assert result.simulations > 100 and result.iterations > 0


def test_targets_follow_table_s2_go_setting():
  # No query solving: every example comes from a played decision; the value
  # target is the outcome (TD(1)) with root_value_weight 0.
  rng = np.random.default_rng(0)
  decisions = [pi.Decision(inputs=np.full(3, i, np.float32),
                           legal=np.ones(7, np.float32), player=i % 2,
                           policy=np.full(7, 1 / 7, np.float32),
                           root_value=0.3, full=i != 1)
               for i in range(5)]
  config = pi.SelfPlayConfig(td1_probability=1.0, root_value_weight=0.0)
  inputs, _, values, _, mask = pi.targets_of_game(decisions, [1.0, -1.0],
                                                  config, rng)
  np.testing.assert_array_equal(inputs[:, 0], [0, 1, 2, 3, 4])
  np.testing.assert_array_equal(values, [1, -1, 1, -1, 1])
  np.testing.assert_array_equal(mask, [1, 0, 1, 1, 1])  # a cheap search
  mixed = pi.SelfPlayConfig(td1_probability=1.0, root_value_weight=0.5)
  _, _, values, _, _ = pi.targets_of_game(decisions, [1.0, -1.0], mixed, rng)
  np.testing.assert_allclose(values, [0.65, -0.35, 0.65, -0.35, 0.65])
  sampled = pi.SelfPlayConfig(td1_probability=0.2)
  kept = sum(len(pi.targets_of_game(decisions * 200, [1.0, -1.0], sampled,
                                    rng)[0]) for _ in range(5))
  assert 0.17 < kept / 5000 < 0.23


def test_selfplay_examples_are_its_decisions():
  net = policy_value.PolicyValueNet(TTT)
  net.init(0)
  actors = pi.SelfPlay(TTT, net, pi.SelfPlayConfig(
      games=4, simulations=20, symmetries=False, seed=3))
  examples = []
  while actors.games_finished < 4:
    examples.extend(e for e in actors.play_moves() if e is not None)
  n = sum(len(e[0]) for e in examples)
  finished_moves = actors.moves - sum(len(d) for d in actors.decisions)
  assert n == finished_moves
  for inputs, legal, values, policy, _ in examples:
    np.testing.assert_allclose(policy.sum(axis=1), 1.0, atol=1e-5)
    assert np.all(policy[legal == 0] == 0)


def test_duplicate_positions_average_their_targets():
  # A position met three times (values 1, -1, 1; the second a cheap search
  # without a policy target) and another once: the repeats carry the mean
  # of the targets met so far, the policy over the full searches only.
  averager = pi.DuplicateAverager(window=2)
  a, b = np.zeros((1, 3), np.float32), np.ones((1, 3), np.float32)
  legal = np.ones((1, 2), np.float32)

  def meet(inputs, value, policy, full):
    return averager((inputs, legal, np.float32([value]),
                     np.float32([policy]), np.float32([full])))

  meet(a, 1.0, [1.0, 0.0], 1)
  _, _, v, p, m = meet(a, -1.0, [0.5, 0.5], 0)
  assert v[0] == 0.0 and p[0].tolist() == [1.0, 0.0] and m[0] == 1
  _, _, v, p, m = meet(a, 1.0, [0.0, 1.0], 1)
  assert v[0] == pytest.approx(1 / 3)
  np.testing.assert_allclose(p[0], [0.5, 0.5])
  _, _, v, _, _ = meet(b, -1.0, [1.0, 0.0], 1)
  assert v[0] == -1.0
  assert (averager.meetings, averager.repeats) == (4, 2)
  meet(np.full((1, 3), 2, np.float32), 0.5, [1.0, 0.0], 1)  # (a leaves)
  _, _, v, _, _ = meet(a, -1.0, [1.0, 0.0], 1)
  assert v[0] == -1.0


def test_averaged_selfplay_values_are_the_mean_outcome_of_the_opening():
  # root_value_weight 0: every game's first example is the empty board,
  # valued by the first player's return (OpenSpiel's). Averaging changes
  # targets, not play, so the same seed without it gives the raw returns;
  # with it, game k's opening target is the mean of the first k returns.
  net = policy_value.PolicyValueNet(TTT)
  net.init(0)

  def openings(average):
    actors = pi.SelfPlay(TTT, net, pi.SelfPlayConfig(
        games=1, simulations=8, symmetries=False, root_value_weight=0.0,
        average_duplicates=average, seed=5))
    out = []
    while len(out) < 8:
      out.extend(float(e[2][0]) for e in actors.play_moves())
    return out

  raw, averaged = openings(False), openings(True)
  assert set(raw) <= {-1.0, 0.0, 1.0} and len(set(raw)) > 1
  np.testing.assert_allclose(
      averaged, np.cumsum(raw) / np.arange(1, len(raw) + 1), atol=1e-6)


def test_a_growing_budget_reaches_the_full_search_at_grow_minutes():
  config = pi.SelfPlayConfig(simulations=100, simulations_start=20,
                             grow_minutes=10)
  assert [config.simulations_at(m) for m in (0, 5, 10, 30)] == [
      20, 60, 100, 100]
  assert pi.SelfPlayConfig(simulations=100).simulations_at(0) == 100
  with pytest.raises(ValueError, match="simulations_start .* at most"):
    pi.SelfPlayConfig(simulations=10, simulations_start=20).validate()
  net = policy_value.PolicyValueNet(TTT)
  net.init(0)
  actors = pi.SelfPlay(TTT, net, dataclasses.replace(
      config, games=2, symmetries=False))
  actors.play_moves()
  assert [s.simulations for s in actors.searches] == [20, 20]
  actors.minutes = 5.0
  actors.play_moves()
  assert [s.simulations for s in actors.searches] == [60, 60]
  # An actor of a resumed run counts the run's earlier minutes.
  from open_spiel_sog.algorithms.training import recipes  # pylint: disable=g-import-not-at-top
  train = TrainConfig(game="tic_tac_toe", recipe="perfect_information",
                      actor_simulations=100, p_td1=1.0, network=net.config,
                      elapsed_seconds=600.0,
                      recipe_settings={"simulations_start": 20,
                                       "grow_minutes": 10, "games": 1})
  worker = recipes.get("perfect_information").make_worker(
      train, seed=0, index=0, template=net)
  worker.play_game()
  assert worker.selfplay.searches[0].simulations == 100


def test_connect_four_mirror_is_openspiel_mirrored_game():
  moves = [3, 2, 2, 6, 0, 1]
  state, mirrored = _play(C4, moves), _play(C4, [6 - a for a in moves])
  player = state.current_player()
  policy = np.zeros((1, 7), np.float32)
  policy[0, 1] = 0.7
  policy[0, 4] = 0.3
  legal = np.ones((1, 7), np.float32)
  examples = (np.asarray([state.observation_tensor(player)], np.float32),
              legal, np.zeros(1, np.float32), policy,
              np.ones(1, np.float32))
  inputs, _, _, policies, _ = pi.augment(C4, examples)
  assert len(inputs) == 2
  np.testing.assert_array_equal(inputs[1], mirrored.observation_tensor(player))
  assert policies[1, 5] == pytest.approx(0.7)
  assert policies[1, 2] == pytest.approx(0.3)


def test_completed_q_moves_mass_to_better_actions():
  prior = np.full(3, 1 / 3)
  legal = np.ones(3)
  same = pi.completed_q_policy(prior, legal, {0: 0.0, 1: 0.0, 2: 0.0},
                               {0: 5, 1: 5, 2: 5}, 0.0, 1.0)
  np.testing.assert_allclose(same, prior)
  better = pi.completed_q_policy(prior, legal, {0: 0.5, 1: -0.5},
                                 {0: 5, 1: 5}, 0.0, 1.0)
  assert better[0] > better[2] > better[1]  # action 2: the root's value


def _score_against_mcts(checkpoint, games=20):
  """(losses, games) of SoG(50) with `checkpoint` against OpenSpiel's MCTS
  at 50 simulations, seats alternating."""
  losses = 0
  for g in range(games):
    seat = g % 2
    bot = sog.SoGBot(TTT, seat, {"simulations": 50, "checkpoint": checkpoint,
                                 "seed": g})
    rng = np.random.RandomState(g)
    other = mcts.MCTSBot(TTT, 2.0, 50, mcts.RandomRolloutEvaluator(1, rng),
                         random_state=rng)
    state = TTT.new_initial_state()
    while not state.is_terminal():
      actor = bot if state.current_player() == seat else other
      state.apply_action(actor.step(state))
    losses += state.returns()[seat] < 0
  return losses


def test_a_network_trained_here_stops_sog_losing_to_mcts(tmp_path):
  """The perfect_information recipe on the pipeline's inline backend (a
  count of steps, not minutes: the same network on any machine)."""
  game = TTT
  net = policy_value.PolicyValueNet(game)
  net.init(0)
  untrained = str(tmp_path / "untrained.npz")
  net.save(untrained)
  trained = str(tmp_path / "trained.npz")
  config = TrainConfig(
      game="tic_tac_toe", recipe="perfect_information", backend="inline",
      steps=2_000, actor_simulations=50, actor_expansions_per_update=-1,
      solvers=0, p_td1=1.0, greedy_after=10, batch_size=256,
      min_replay=500, max_updates_per_example=8.0, replay_size=200_000,
      checkpoint=trained, network=policy_value.default_config(),
      recipe_settings={"games": 32, "root_value_weight": 0.0})
  Trainer(config, progress=False, log=lambda s: None).run()
  assert _score_against_mcts(untrained) > 0
  assert _score_against_mcts(trained) == 0


def test_policy_value_checkpoints_refuse_bad_files(tmp_path):
  with pytest.raises(CheckpointError, match="does not exist"):
    policy_value.PolicyValueNet.load(str(tmp_path / "none.npz"), C4)
  bad = tmp_path / "bad.npz"
  bad.write_bytes(b"not a zip")
  with pytest.raises(CheckpointError, match="corrupt"):
    policy_value.PolicyValueNet.load(str(bad), C4)
  net = policy_value.PolicyValueNet(TTT)
  net.init(0)
  path = str(tmp_path / "ttt.npz")
  net.save(path)
  with pytest.raises(CheckpointError, match="tic_tac_toe"):
    policy_value.PolicyValueNet.load(path, C4)
  with pytest.raises(ValueError, match="perfect-information"):
    policy_value.PolicyValueNet("kuhn_poker")
  with pytest.raises(ValueError, match="engine=python"):
    sog.SoGBot(TTT, 0, {"checkpoint": path, "engine": "python"})


SHIPPED = os.path.join(cvpn.DATA_DIR, "connect_four.npz")


def test_the_shipped_connect_four_network_is_chosen_by_auto(capsys):
  assert cvpn.shipped_checkpoint(C4) == SHIPPED
  net = policy_value.PolicyValueNet.load(SHIPPED, C4)
  assert os.path.getsize(SHIPPED) < 10 * 2**20
  bot = sog.SoGBot(C4, 0, {"simulations": 200})
  assert bot.policy_value is not None
  assert bot.native is not None and bot.native.network is bot.policy_value
  # engine=python cannot use it: auto falls back to rollouts, with a notice.
  python_bot = sog.SoGBot(C4, 0, {"simulations": 20, "engine": "python"})
  assert python_bot.policy_value is None and python_bot.native is None
  assert "searches on the native engine" in capsys.readouterr().err
  # It blocks an open three (x threatens 0-1-2-3 on the bottom row).
  state = _play(C4, [0, 6, 1, 6, 2])
  assert bot_step(state) == 3
  del net


ZOO = ["breakthrough(rows=6,columns=6)", "othello", "tic_tac_toe"]


@pytest.mark.parametrize("name", ZOO)
def test_each_zoo_network_is_chosen_by_auto_and_plays(name):
  """The zoo's networks: `auto` picks each for the native engine, its model
  card names the one command that trained it and its matches, and two bots
  with it play a whole game."""
  game = pyspiel.load_game(name)
  path = cvpn.shipped_checkpoint(game)
  assert path == os.path.join(cvpn.DATA_DIR,
                              cvpn.shipped_checkpoint_name(game))
  assert os.path.getsize(path) < 10 * 2**20
  meta, _ = policy_value.PolicyValueNet.read(path)
  card = meta["extra"]["model_card"]
  assert card["command"].startswith("examples/train.py --game=")
  assert card["minutes"] > 0 and card["games"] > 0 and card["matches"]
  for match in card["matches"]:
    assert os.path.exists(os.path.join(
        os.path.dirname(os.path.dirname(cvpn.DATA_DIR)), match["results"]))
  bots = [sog.SoGBot(game, p, {"simulations": 20, "seed": p})
          for p in (0, 1)]
  for bot in bots:
    assert bot.policy_value is not None and bot.native is not None
  returns = pyspiel.evaluate_bots(game.new_initial_state(), bots, 0)
  assert sum(returns) == 0 and all(r in (-1.0, 0.0, 1.0) for r in returns)


def test_the_shipped_tic_tac_toe_network_never_loses_to_mcts():
  # The zoo's goal, at 50 simulations each (the trained-here test's match).
  assert _score_against_mcts(cvpn.shipped_checkpoint(TTT)) == 0


def bot_step(state):
  bot = sog.SoGBot(C4, state.current_player(), {"simulations": 400})
  return bot.step(state)


def test_tic_tac_toe_symmetries_are_openspiel_images():
  # Each of the eight images of a position's example is the example of the
  # position played with the image's moves.
  moves = [0, 4, 5]
  state = _play(TTT, moves)
  player = state.current_player()
  legal = np.zeros((1, 9), np.float32)
  legal[0, state.legal_actions()] = 1
  policy = legal / legal.sum()
  policy[0, 1] += 0.5
  policy /= policy.sum()
  examples = (np.asarray([state.observation_tensor(player)], np.float32),
              legal, np.zeros(1, np.float32), policy, np.ones(1, np.float32))
  inputs, legals, _, policies, _ = pi.augment(TTT, examples)
  assert len(inputs) == 8
  cells = np.arange(9).reshape(3, 3)
  seen = set()
  for image in range(8):
    # The board transform whose replayed moves give this image.
    for t in [lambda a: a] + pi._dihedral():  # pylint: disable=protected-access
      mapped = np.ascontiguousarray(t(cells)).reshape(-1)
      where = {int(c): i for i, c in enumerate(mapped)}
      imaged = _play(TTT, [where[m] for m in moves])
      if np.array_equal(inputs[image], imaged.observation_tensor(player)):
        assert policies[image, where[1]] == pytest.approx(policy[0, 1])
        np.testing.assert_array_equal(
            np.flatnonzero(legals[image]), imaged.legal_actions())
        seen.add(image)
        break
  assert seen == set(range(8))
