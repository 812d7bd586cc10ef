"""Infostates of games without information_state_string (DESIGN.md section
11): the history in perfect-information games, the action-observation
history otherwise."""

import collections

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import get_all_states
from open_spiel.python.algorithms import minimax

import open_spiel_sog  # pylint: disable=unused-import  (registers "sog")
from open_spiel_sog.algorithms.cfr import PublicTreeCFR
from open_spiel_sog.public_state import (ObserverConfig,
                                                  PublicStateObserver,
                                                  infostate_source)


def _partition(observer, player):
  """Each public state's grouping of its histories by `player`'s infostate,
  as a set of frozensets of history strings, for the whole public tree."""
  groups = set()
  for ps in observer.walk():
    members = collections.defaultdict(set)
    for h, j in zip(ps.histories, ps.history_infostate[player]):
      members[j].add(str(h.history()))
    groups.add(frozenset(frozenset(m) for m in members.values()))
  return groups


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker"])
def test_action_observation_histories_partition_as_infostate_strings(name):
  game = pyspiel.load_game(name)
  strings = PublicStateObserver(game)
  aoh = PublicStateObserver(game, ObserverConfig(infostates="aoh"))
  assert strings.infostate_source == "string"
  assert aoh.infostate_source == "aoh"
  for p in range(2):
    assert _partition(aoh, p) == _partition(strings, p)
  # Public states built from them are the same too.
  assert len(list(aoh.walk())) == len(list(strings.walk()))


def test_action_observation_history_matches_openspiel_at_every_decision():
  """The keys agree with OpenSpiel's strings one-to-one over every history
  where a player acts (OpenSpiel's strings, not ours, are the reference)."""
  game = pyspiel.load_game("leduc_poker")
  aoh = PublicStateObserver(game, ObserverConfig(infostates="aoh"))
  forward, backward = collections.defaultdict(set), collections.defaultdict(set)
  decisions = get_all_states.get_all_states(
      game, include_terminals=False, include_chance_states=False)
  for state in decisions.values():
    for p in range(2):
      ours = aoh.infostate_string(state, p)
      theirs = state.information_state_string(p)
      forward[theirs].add(ours)
      backward[ours].add(theirs)
  assert len(forward) > 900  # both players' infostates of Leduc
  assert all(len(v) == 1 for v in forward.values())
  assert all(len(v) == 1 for v in backward.values())


def test_the_incremental_keys_are_the_replayed_ones():
  """Public states extend their parents' keys; `infostate_string` replays
  the history; both give the same key."""
  game = pyspiel.load_game("leduc_poker")
  aoh = PublicStateObserver(game, ObserverConfig(infostates="aoh"))
  checked = 0
  for ps in aoh.walk():
    if ps.depth % 3:
      continue
    for i, h in enumerate(ps.histories[:5]):
      for p in range(2):
        assert (ps.infostates(p)[ps.history_infostate[p][i]] ==
                aoh.infostate_string(h, p))
        checked += 1
  assert checked > 500


def test_perfect_information_games_without_strings_are_keyed_by_history():
  game = pyspiel.load_game("breakthrough(rows=3,columns=3)")
  assert not game.get_type().provides_information_state_string
  assert infostate_source(game) == "history"
  observer = PublicStateObserver(game)
  for ps in observer.walk():
    assert len(ps.histories) == 1
    assert ps.num_infostates(0) == ps.num_infostates(1) == 1


@pytest.mark.parametrize("name,iterations,tolerance", [
    # Deterministic: OpenSpiel's alpha-beta value.
    ("breakthrough(rows=3,columns=3)", 500, 1e-3),
    # Dice: OpenSpiel's expectiminimax value.
    ("pig(winscore=4,horizon=6)", 500, 1e-3),
])
def test_public_tree_cfr_matches_openspiel_minimax(name, iterations, tolerance):
  game = pyspiel.load_game(name)
  solver = PublicTreeCFR(game)
  solver.run(iterations)
  if game.get_type().chance_mode == pyspiel.GameType.ChanceMode.DETERMINISTIC:
    reference = minimax.alpha_beta_search(game, maximizing_player_id=0)[0]
  else:
    reference, _ = minimax.expectiminimax(game.new_initial_state(), 100,
                                          None, 0)
  assert solver.expected_value(0) == pytest.approx(reference, abs=tolerance)
  # A game that is not trivial: the value is not an end of the range.
  if "pig" in name:
    assert 0.1 < reference < 0.9


def test_forcing_an_infostate_source_the_game_lacks_is_refused():
  with pytest.raises(ValueError, match="not a perfect-information game"):
    PublicStateObserver("kuhn_poker", ObserverConfig(infostates="history"))
  with pytest.raises(ValueError, match="does not provide "
                     "information_state_string"):
    PublicStateObserver("breakthrough(rows=3,columns=3)",
                        ObserverConfig(infostates="string"))
  with pytest.raises(ValueError, match="unknown infostates 'bogus'.*'aoh'"):
    PublicStateObserver("kuhn_poker", ObserverConfig(infostates="bogus"))


@pytest.mark.parametrize("name", ["breakthrough(rows=4,columns=3)",
                                  "pig(winscore=6)", "oware"])
def test_sog_plays_games_without_infostate_strings(name):
  game = pyspiel.load_game(name)
  bots = [pyspiel.load_bot("sog", game, p,
                           {"simulations": 5, "value_function": "rollout",
                            "seed": p}) for p in range(2)]
  rng = np.random.default_rng(0)
  state = game.new_initial_state()
  moves = 0
  while not state.is_terminal() and moves < 6:
    if state.is_chance_node():
      actions, probs = zip(*state.chance_outcomes())
      state.apply_action(int(rng.choice(actions, p=probs)))
      continue
    action = bots[state.current_player()].step(state)
    assert action in state.legal_actions()
    state.apply_action(action)
    moves += 1
  assert moves > 0
