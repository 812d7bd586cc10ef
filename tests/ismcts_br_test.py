"""Tests for ISMCTS-BR (algorithms/ismcts_br/) and its value-and-prior
network (ismcts_br.ValuePriorNet), judged by OpenSpiel's own answers.

* The exact posterior at Leduc responder states against a non-uniform
  opponent (CFR+ after 2 iterations) equals the normalised product of chance
  reach and opponent reach computed directly from `get_all_states` and the
  solver's own policy table.
* Opponent specs and their errors.
* A short training run against uniform random on Kuhn poker reaches 95% of
  OpenSpiel's exact best-response value in both seats (scored exactly with
  `policy_value`), and the sampled estimate is not above the exact value by
  more than 3 standard errors.
* Network checkpoints: round trip and clear errors.

Networks are tiny and runs short: the file takes well under 90 s on two
cores.
"""

import dataclasses
import json
import os

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as os_policy
from open_spiel.python.algorithms import cfr as os_cfr
from open_spiel.python.algorithms import exploitability as os_exploitability
from open_spiel.python.algorithms import get_all_states

import open_spiel_sog  # registers "sog"  # pylint: disable=unused-import
from open_spiel_sog import registry
from open_spiel_sog.algorithms.sog import cvpn
from open_spiel_sog.algorithms import ismcts_br as ib

SMALL = ib.ISMCTSBRConfig(simulations=100, hidden=(32, 32),
                          policy_hidden=(32,), batch_size=32, games=200,
                          seed=0)


def _play(game, actions):
  state = game.new_initial_state()
  for a in actions:
    state.apply_action(a)
  return state


@pytest.fixture(scope="module")
def kuhn():
  return pyspiel.load_game("kuhn_poker")


@pytest.fixture(scope="module")
def leduc():
  return pyspiel.load_game("leduc_poker")


@pytest.fixture(scope="module")
def trained_kuhn(kuhn):
  """ISMCTS-BR trained briefly against uniform random on kuhn_poker."""
  opponents = {p: ib.make_opponent(kuhn, "uniform_random", p) for p in (0, 1)}
  br = ib.ISMCTSBR(kuhn, opponents, SMALL)
  history = br.train(progress=False)
  return br, history


# --- 1. Exact beliefs --------------------------------------------------------


def _direct_posteriors(game, table, responder):
  """{infostate: {history: Pr(history | infostate)}} for every infostate of
  `responder`, from chance probabilities and the opponent's policy table
  along each history of `get_all_states`."""
  weights = {}
  for state in get_all_states.get_all_states(
      game, include_terminals=False, include_chance_states=False).values():
    if state.current_player() != responder:
      continue
    weight = 1.0
    replay = game.new_initial_state()
    for a in state.history():
      if replay.is_chance_node():
        weight *= dict(replay.chance_outcomes())[a]
      elif replay.current_player() == 1 - responder:
        row = table.policy_for_key(
            replay.information_state_string(1 - responder))
        weight *= row[a]
      replay.apply_action(a)
    key = state.information_state_string(responder)
    weights.setdefault(key, {})[state.history_str()] = (weight, state)
  out = {}
  for key, rows in weights.items():
    total = sum(w for w, _ in rows.values())
    out[key] = ({h: w / total for h, (w, _) in rows.items()},
                next(iter(rows.values()))[1])
  return out


def test_posterior_is_chance_times_opponent_reach_on_leduc(leduc):
  solver = os_cfr.CFRPlusSolver(leduc)
  for _ in range(2):
    solver.evaluate_and_update_policy()
  table = solver.average_policy()
  non_uniform = 0
  for responder in (0, 1):
    opponent = ib.make_opponent(leduc, "cfr_plus:2", 1 - responder)
    posterior = ib.Posterior(leduc, opponent, responder)
    direct = _direct_posteriors(leduc, table, responder)
    assert len(direct) > 400  # every infostate of the responder
    for key, (want, state) in direct.items():
      got = posterior.beliefs(state)
      assert set(got) == set(want), key
      for h, p in want.items():
        assert got[h] == pytest.approx(p, abs=1e-12), (key, h)
      if max(want.values()) - min(want.values()) > 0.01:
        non_uniform += 1
  # The opponent's reach matters: many beliefs are far from uniform.
  assert non_uniform >= 100, non_uniform


def test_posterior_past_the_public_state_bound_enumerates_the_infostate(
    leduc):
  """Where public states pass the observer's bound (phantom_ttt's do at
  depth 8), the posterior enumerates the responder's infostate instead:
  on Leduc, with the bound at 1, the same beliefs as the exact public
  states give."""
  from open_spiel_sog.public_state import ObserverConfig  # pylint: disable=g-import-not-at-top
  from open_spiel_sog.public_state import PublicStateObserver  # pylint: disable=g-import-not-at-top
  tight = PublicStateObserver(leduc, ObserverConfig(
      max_histories_per_public_state=1))
  checked = 0
  for responder in (0, 1):
    opponent = ib.make_opponent(leduc, "cfr_plus:2", 1 - responder)
    exact = ib.Posterior(leduc, opponent, responder)
    enumerated = ib.Posterior(leduc, opponent, responder, tight)
    for actions in ([0, 1], [0, 1, 1], [2, 3, 1, 1], [4, 1, 2, 1, 3, 1]):
      state = _play(leduc, actions)
      if state.is_terminal() or state.current_player() != responder:
        continue
      want = exact.beliefs(state)
      got = enumerated.beliefs(state)
      assert set(got) == set(want)
      for h, p in want.items():
        assert got[h] == pytest.approx(p, abs=1e-12)
      checked += 1
  assert checked >= 3


def test_posterior_falls_back_to_chance_where_the_opponent_never_goes(kuhn):
  # always_fold in seat 1 never bets, so player 0 never faces a bet.
  opponent = ib.make_opponent(kuhn, "always_fold", 1)
  posterior = ib.Posterior(kuhn, opponent, 0)
  state = _play(kuhn, [0, 1, 0, 1])  # J; passed, opponent bet
  assert posterior.beliefs(state) == {"0, 1, 0, 1": pytest.approx(0.5),
                                      "0, 2, 0, 1": pytest.approx(0.5)}
  assert state.information_state_string(0) in posterior.unreached
  rng = np.random.default_rng(0)
  drawn = {posterior.sample(state, rng).history_str() for _ in range(50)}
  assert drawn == {"0, 1, 0, 1", "0, 2, 0, 1"}


# --- 2. Opponents ------------------------------------------------------------


def test_poker_chumps(kuhn, leduc):
  def act(game, spec, actions):
    state = _play(game, actions)
    return ib.make_opponent(game, spec, state.current_player()
                            ).action_probabilities(state)

  # Kuhn: Pass = 0, Bet = 1.
  assert act(kuhn, "always_call", [0, 1]) == {0: 1.0}  # check
  assert act(kuhn, "always_call", [0, 1, 1]) == {1: 1.0}  # call the bet
  assert act(kuhn, "always_raise", [0, 1, 0]) == {1: 1.0}
  assert act(kuhn, "always_fold", [0, 1, 1]) == {0: 1.0}
  # Leduc: Fold = 0, Call = 1, Raise = 2.
  assert act(leduc, "always_raise", [0, 1]) == {2: 1.0}
  assert act(leduc, "always_raise", [0, 1, 2, 2]) == {1: 1.0}  # capped
  assert act(leduc, "always_fold", [0, 1]) == {1: 1.0}  # nothing to fold to
  assert act(leduc, "always_fold", [0, 1, 2]) == {0: 1.0}
  assert act(leduc, "always_call", [0, 1, 2]) == {1: 1.0}


def test_cfr_plus_and_uniform_opponents_match_openspiel(kuhn):
  solver = os_cfr.CFRPlusSolver(kuhn)
  for _ in range(3):
    solver.evaluate_and_update_policy()
  table = solver.average_policy()
  opponent = ib.make_opponent(kuhn, "cfr_plus:3", 1)
  uniform = ib.make_opponent(kuhn, "uniform_random", 1)
  for state in get_all_states.get_all_states(
      kuhn, include_terminals=False, include_chance_states=False).values():
    if state.current_player() != 1:
      continue
    row = table.policy_for_key(state.information_state_string(1))
    got = opponent.action_probabilities(state)
    for a in state.legal_actions():
      assert got.get(a, 0.0) == pytest.approx(row[a])
    assert uniform.action_probabilities(state) == {0: 0.5, 1: 0.5}


def _bots_policy(game, bots, state):
  """The policy of `bots` (one per seat) at `state`, each restarted, then
  searching at its own decisions and told of the other's moves (as in play)
  along the state's history."""
  for bot in bots:
    bot.restart()
  replay = game.new_initial_state()
  for a in state.history():
    if not replay.is_chance_node():
      p = replay.current_player()
      bots[p].step_with_policy(replay)
      bots[1 - p].inform_action(replay, p, a)
    replay.apply_action(a)
  return dict(bots[state.current_player()].step_with_policy(state)[0])


def test_sog_opponent_plays_as_the_registered_sog_bot(kuhn):
  """The sog opponent is the policy the registered "sog" bot plays with the
  same parameters, at every decision of Kuhn poker. The two are equal by
  construction with these parameters: with simulations=0 GT-CFR draws no
  random numbers (10 CFR updates, expansions_per_update=0.1, on the
  re-solving branch) and the CVPN value function keeps no state between
  queries, so the opponent table's searches (each conditioned on the same
  seat's search at the previous decision) are the searches the bots run in
  play."""
  spec = "sog(simulations=0,expansions_per_update=0.1,value_function=cvpn)"
  params = {"simulations": 0, "expansions_per_update": 0.1,
            "value_function": "cvpn"}
  opponents = [ib.make_opponent(kuhn, spec, p) for p in range(2)]
  bots = [pyspiel.load_bot("sog", kuhn, p, params) for p in range(2)]
  # Another configuration must not be served the first one's table: one CFR
  # update (expansions_per_update=1) leaves the average policy uniform.
  one_update = [ib.make_opponent(
      kuhn, "sog(simulations=0,expansions_per_update=1,value_function=cvpn)",
      p) for p in range(2)]
  # A bot string whose parameters name a file is a bot, not a policy file:
  # here the shipped network that value_function=cvpn loads by itself.
  from open_spiel_sog.algorithms.sog import cvpn  # pylint: disable=g-import-not-at-top
  named = [ib.make_opponent(kuhn, spec[:-1] + ",checkpoint=" +
                            cvpn.shipped_checkpoint(kuhn) + ")", p)
           for p in range(2)]
  far_from_uniform = 0
  states = get_all_states.get_all_states(
      kuhn, include_terminals=False, include_chance_states=False)
  for state in states.values():
    p = state.current_player()
    want = _bots_policy(kuhn, bots, state)
    got = opponents[p].action_probabilities(state)
    assert named[p].action_probabilities(state) == pytest.approx(got)
    for a in state.legal_actions():
      assert got.get(a, 0.0) == pytest.approx(want.get(a, 0.0), abs=1e-9), (
          state.history(), got, want)
    far_from_uniform += max(want.values()) > 0.7
    assert one_update[p].action_probabilities(state) == pytest.approx(
        {0: 0.5, 1: 0.5})
  assert far_from_uniform >= 6
  # A registered OpenSpiel bot that provides policies: fixed_action_preference
  # plays the first legal action.
  state = _play(kuhn, [2, 0, 1])
  fixed = ib.make_opponent(kuhn, "fixed_action_preference", 1)
  assert fixed.action_probabilities(state) == {0: 1.0}


class _NoPolicyBot(pyspiel.Bot):

  def __init__(self):
    pyspiel.Bot.__init__(self)

  def step(self, state):
    return state.legal_actions()[0]

  def provides_policy(self):
    return False


def test_opponent_spec_errors(kuhn, tmp_path):
  with pytest.raises(ValueError, match="unknown opponent 'nonsense'.*"
                     "uniform_random.*cfr_plus:N.*PATH.json.*BOT"):
    ib.make_opponent(kuhn, "nonsense", 1)
  with pytest.raises(ValueError, match="'nosuchbot' is not a registered bot"):
    ib.make_opponent(kuhn, "nosuchbot(x=1)", 1)
  with pytest.raises(ValueError, match="kuhn_poker and leduc_poker only, "
                     "not tic_tac_toe"):
    ib.make_opponent("tic_tac_toe", "always_call", 1)
  with pytest.raises(ValueError, match="positive integer"):
    ib.make_opponent(kuhn, "cfr_plus:many", 1)
  with pytest.raises(ValueError, match="player must be 0 or 1"):
    ib.make_opponent(kuhn, "uniform_random", 2)
  name = "ismcts_br_test_no_policy"
  registry.register_bot(name, lambda g, p, params: _NoPolicyBot(),
                        replace=True)
  with pytest.raises(ValueError, match="ISMCTS-BR needs a bot that provides "
                     "policies"):
    ib.make_opponent(kuhn, name, 1)
  # Asked where it does not act.
  opponent = ib.make_opponent(kuhn, "uniform_random", 1)
  with pytest.raises(ValueError, match="sits in seat 1 .* player 0 acts"):
    opponent.action_probabilities(_play(kuhn, [0, 1]))


def test_policy_files(kuhn, leduc, tmp_path):
  solver = os_cfr.CFRPlusSolver(kuhn)
  solver.evaluate_and_update_policy()
  table = solver.average_policy()
  path = str(tmp_path / "kuhn_cfr.json")
  ib.save_policy(path, kuhn, table)
  with open(path) as f:
    data = json.load(f)
  assert data["format"] == "open_spiel_sog.policy/1"
  assert data["game"] == "kuhn_poker()"
  loaded = ib.load_policy(path, kuhn)
  assert loaded["1"] == pytest.approx(
      dict(enumerate(table.policy_for_key("1"))))
  opponent = ib.make_opponent(kuhn, path, 0)
  state = _play(kuhn, [1, 2])
  assert opponent.action_probabilities(state) == pytest.approx(
      dict(enumerate(table.policy_for_key("1"))))

  with pytest.raises(ib.PolicyFileError, match="does not exist"):
    ib.make_opponent(kuhn, str(tmp_path / "missing.json"), 0)
  corrupt = tmp_path / "corrupt.json"
  corrupt.write_text("{not json")
  with pytest.raises(ib.PolicyFileError, match="not readable JSON"):
    ib.make_opponent(kuhn, str(corrupt), 0)
  other = tmp_path / "other.json"
  other.write_text(json.dumps({"format": "something/else"}))
  with pytest.raises(ib.PolicyFileError, match="not a policy file"):
    ib.load_policy(str(other), kuhn)
  with pytest.raises(ib.PolicyFileError, match="is for kuhn_poker\\(\\), "
                     "not leduc_poker\\(\\)"):
    ib.make_opponent(leduc, path, 0)
  # A table that misses an infostate says which one.
  partial = str(tmp_path / "partial.json")
  ib.save_policy(partial, kuhn, {"0": {0: 1.0}})
  opponent = ib.make_opponent(kuhn, partial, 0)
  with pytest.raises(ValueError, match="no entry for player 0's infostate "
                     "'1'"):
    opponent.action_probabilities(state)


# --- 3. Learning a best response ---------------------------------------------


def test_kuhn_vs_uniform_reaches_95_percent_of_the_exact_best_response(
    kuhn, trained_kuhn):
  br, history = trained_kuhn
  assert len(history) == SMALL.games
  assert {e["seat"] for e in history} == {0, 1}
  assert "loss" in history[-1] and np.isfinite(history[-1]["loss"])
  uniform = os_policy.UniformRandomPolicy(kuhn)
  for seat in (0, 1):
    exact = ib.exact_best_response_value(kuhn, br.opponents[1 - seat], seat)
    # OpenSpiel's own best response value to the uniform policy.
    openspiel = os_exploitability.best_response(kuhn, uniform, seat)
    assert exact == pytest.approx(openspiel["best_response_value"])
    value = br.exact_value(seat)
    assert value >= 0.95 * exact, (seat, value, exact)
    assert value <= exact + 1e-9


@pytest.mark.parametrize("game_string,spec,games", [
    ("leduc_poker", "always_call", 300),
    ("liars_dice(numdice=1,dice_sides=4)", "uniform_random", 1000),
])
def test_reaches_95_percent_of_openspiels_best_response(game_string, spec,
                                                        games):
  """Tables 1 and 2 of the paper, where they are fast: the trained
  responder's greedy policy, scored exactly, reaches 95% of OpenSpiel's
  exact best-response value in both seats (and never exceeds it)."""
  game = pyspiel.load_game(game_string)
  config = ib.ISMCTSBRConfig(games=games, seed=0)
  result = ib.approximate_exploitability(game, spec, config, exact=True,
                                         num_games=500)
  for seat in (0, 1):
    entry = result["seats"][seat]
    # OpenSpiel's BestResponsePolicy value against the opponent's policy.
    openspiel = entry["exact_br_value"]
    if spec == "uniform_random":
      assert openspiel == pytest.approx(os_exploitability.best_response(
          game, os_policy.UniformRandomPolicy(game), seat)[
              "best_response_value"])
    assert entry["approx_br_exact_value"] >= 0.95 * openspiel, (seat, entry)
    assert entry["approx_br_exact_value"] <= openspiel + 1e-9
    assert entry["approx_br_value"] <= openspiel + 4 * entry["stderr"]


def test_sampled_value_is_consistent_with_the_exact_values(kuhn, trained_kuhn):
  br, _ = trained_kuhn
  for seat in (0, 1):
    estimate = br.play(4000, seat, seed=1)
    exact = ib.exact_best_response_value(kuhn, br.opponents[1 - seat], seat)
    assert estimate.games == 4000 and estimate.stderr > 0
    assert estimate.mean <= exact + 3 * estimate.stderr
    # `play` and `exact_value` score the same (memoised greedy) policy.
    assert abs(estimate.mean - br.exact_value(seat)) <= 4 * estimate.stderr


def test_approximate_exploitability_report(kuhn, trained_kuhn):
  br, _ = trained_kuhn
  report = ib.approximate_exploitability(kuhn, None, SMALL, num_games=500,
                                         br=br)
  want = os_exploitability.nash_conv(kuhn, os_policy.UniformRandomPolicy(kuhn))
  assert report["exact_nash_conv"] == pytest.approx(want)
  assert report["approx_nash_conv_exact"] >= 0.95 * want
  assert report["nash_conv_percentage"] >= 95
  for seat in (0, 1):
    entry = report["seats"][seat]
    assert entry["exact_percentage"] >= 95
    assert entry["stderr"] > 0 and entry["games"] == 500
  assert report["approx_nash_conv"] == pytest.approx(
      sum(report["seats"][s]["approx_br_value"] for s in (0, 1)))


def test_approximate_exploitability_trains_from_a_spec(kuhn):
  config = ib.ISMCTSBRConfig(simulations=20, hidden=(8,), policy_hidden=(8,),
                             batch_size=4, games=6)
  report = ib.approximate_exploitability("kuhn_poker", "always_call", config,
                                         seats=(1,), num_games=50)
  assert list(report["seats"]) == [1]
  assert report["games"] == 6
  assert report["exact_nash_conv"] == pytest.approx(1 / 3)


def test_search_tree_value_targets(leduc):
  """Training searches give value targets at the non-root responder
  infostates enough simulations passed through: mean returns, within the
  game's utilities, with visit-count prior targets over legal actions."""
  config = dataclasses.replace(SMALL, simulations=200, tree_value_targets=10)
  opponents = {1: ib.make_opponent(leduc, "always_raise", 1)}
  br = ib.ISMCTSBR(leduc, opponents, config)
  state = _play(leduc, [0, 3])  # both dealt; player 0 acts first
  examples = []
  br.search(state, tree_examples=examples)
  assert examples
  for x, legal, target, mask, value in examples:
    assert x.shape == (br.net.input_size,) and mask == 1.0
    assert leduc.min_utility() <= value <= leduc.max_utility()
    assert target.sum() == pytest.approx(1.0)
    assert np.all(target[legal == 0] == 0)
  records, _ = br._episode(0)  # pylint: disable=protected-access
  own = [r for r in records if r[4] is not None]
  assert own and len(records) > len(own)
  off = dataclasses.replace(config, tree_value_targets=0)
  records, _ = ib.ISMCTSBR(leduc, opponents, off)._episode(0)  # pylint: disable=protected-access
  assert all(r[4] is None for r in records)


# --- 4. Configuration and usage errors ---------------------------------------


@pytest.mark.parametrize("field,value,message", [
    ("simulations", 0, "simulations must be >= 1"),
    ("dirichlet_fraction", 1.5, "dirichlet_fraction must be in"),
    ("c_puct", -1.0, "c_puct must be a finite number >= 0"),
    ("epsilon", 2.0, "epsilon must be in"),
    ("batch_size", 20_000, "batch_size .* must be <= replay_size"),
    ("hidden", (), "hidden must be positive widths"),
    ("tree_value_targets", -1, "tree_value_targets must be >= 0"),
])
def test_config_validation(field, value, message):
  with pytest.raises(ValueError, match=message):
    ib.ISMCTSBRConfig(**{field: value}).validate()


def test_usage_errors(kuhn, trained_kuhn):
  br, _ = trained_kuhn
  uniform1 = ib.make_opponent(kuhn, "uniform_random", 1)
  with pytest.raises(ValueError, match="opponents\\[0\\] sits in seat 1"):
    ib.ISMCTSBR(kuhn, {0: uniform1}, SMALL)
  with pytest.raises(ValueError, match="is for kuhn_poker\\(\\), not "
                     "leduc_poker"):
    ib.ISMCTSBR("leduc_poker", {1: uniform1}, SMALL)
  one_seat = ib.ISMCTSBR(kuhn, {1: uniform1}, SMALL, net=br.net)
  with pytest.raises(ValueError, match="no opponent for responder seat 1"):
    one_seat.play(10, seat=1)
  with pytest.raises(ValueError, match="needs a state where a responder"):
    one_seat.search(_play(kuhn, [0, 1, 0]))
  with pytest.raises(ValueError, match="seats must be a non-empty subset"):
    ib.approximate_exploitability(kuhn, "uniform_random", SMALL, seats=(2,))


# --- 5. The network ----------------------------------------------------------


def test_network_learns_and_round_trips(kuhn, trained_kuhn, tmp_path):
  br, _ = trained_kuhn
  path = str(tmp_path / "br.npz")
  br.save(path)
  restored = ib.ISMCTSBR.from_checkpoint(path, kuhn, br.opponents)
  assert restored.config == br.config
  assert restored.games_played == br.games_played
  assert restored.net.step == br.net.step > 0
  states = [_play(kuhn, [c, (c + 1) % 3]) for c in range(3)]
  x = np.stack([br.net.features(s, 0) for s in states])
  legal = np.stack([br.net.legal_mask(s) for s in states])
  v0, p0 = br.net.predict(x, legal)
  v1, p1 = restored.net.predict(x, legal)
  np.testing.assert_allclose(v0, v1, rtol=1e-6)
  np.testing.assert_allclose(p0, p1, rtol=1e-6)
  np.testing.assert_allclose(p0.sum(axis=1), 1.0, rtol=1e-5)
  # The network has learned something: holding the king (card 2) as player
  # 0 against uniform random is worth more than holding the jack.
  assert v0[2] > v0[0]

  # Steps on one fixed batch lower its loss.
  net = ib.ValuePriorNet(kuhn, SMALL.network())
  net.init(3)
  target = np.array([1.0, -1.0, 2.0])
  policy = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
  before = net.loss(x, legal, target, policy)["loss"]
  for _ in range(30):
    net.train_step(x, legal, target, policy)
  assert net.loss(x, legal, target, policy)["loss"] < 0.5 * before


def test_network_errors(kuhn, leduc, trained_kuhn, tmp_path):
  br, _ = trained_kuhn
  path = str(tmp_path / "br.npz")
  br.save(path)
  with pytest.raises(ib.CheckpointError, match="does not exist"):
    ib.ValuePriorNet.load(str(tmp_path / "missing.npz"), kuhn)
  corrupt = tmp_path / "corrupt.npz"
  corrupt.write_bytes(b"this is not a zip file")
  with pytest.raises(ib.CheckpointError, match="not a readable"):
    ib.ValuePriorNet.load(str(corrupt), kuhn)
  with pytest.raises(ib.CheckpointError,
                     match="trained for kuhn_poker\\(\\), not leduc_poker"):
    ib.ValuePriorNet.load(path, leduc)
  shipped = cvpn.shipped_checkpoint(kuhn)
  if shipped is not None:  # a CVPN checkpoint is not a value-prior one
    with pytest.raises(ib.CheckpointError,
                       match="unsupported checkpoint format"):
      ib.ValuePriorNet.load(shipped, kuhn)
  fresh = ib.ValuePriorNet(kuhn, SMALL.network())
  with pytest.raises(ValueError, match="not initialised"):
    fresh.save(str(tmp_path / "none.npz"))
  fresh.init(0)
  with pytest.raises(ValueError, match="legal has shape"):
    fresh.train_step(np.zeros((2, fresh.input_size)), np.zeros((2, 5)),
                     np.zeros(2), np.zeros((2, 2)))
  assert not os.path.exists(str(tmp_path / "none.npz"))
