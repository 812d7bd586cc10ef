"""Public states judged by OpenSpiel's own enumeration of the game."""

import random
import re
import time

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import get_all_states

from open_spiel_sog.public_state import LazyChildren
from open_spiel_sog.public_state import ObserverConfig
from open_spiel_sog.public_state import expansions
from open_spiel_sog.public_state import PublicFeatures
from open_spiel_sog.public_state import PublicStateObserver
from open_spiel_sog.public_state import SlotTable
from open_spiel_sog.public_state import check_public_states
from open_spiel_sog.public_state import resident_memory
from open_spiel_sog.public_state import search_game

GOOFSPIEL = ("turn_based_simultaneous_game(game=goofspiel(num_cards=4,"
             "imp_info=True,points_order=descending))")
LIARS_DICE = "liars_dice(numdice=1,dice_sides=4)"

SMALL_GAMES = {
    "kuhn_poker": "native",
    "leduc_poker": "native",
    GOOFSPIEL: "derived",
    LIARS_DICE: "derived",
}


def _openspiel_decision_infostates(game):
  """{player: set of information_state_string at that player's decisions}."""
  states = get_all_states.get_all_states(
      game, depth_limit=-1, include_terminals=False, include_chance_states=False)
  result = {0: set(), 1: set()}
  for state in states.values():
    p = state.current_player()
    result[p].add(state.information_state_string(p))
  return result


@pytest.mark.parametrize("game_string,source", SMALL_GAMES.items())
def test_acting_infostates_match_openspiel(game_string, source):
  game = pyspiel.load_game(game_string)
  observer = PublicStateObserver(game)
  assert observer.source == source
  ours = {0: [], 1: []}
  for ps in observer.full_tree().public_states:
    p = ps.current_player()
    if p >= 0:
      ours[p].extend(ps.infostates(p))
  expected = _openspiel_decision_infostates(game)
  for p in range(2):
    # Equal as sets, and no infostate in two public states (no duplicates).
    assert set(ours[p]) == expected[p]
    assert len(ours[p]) == len(expected[p])


@pytest.mark.parametrize("game_string", SMALL_GAMES)
def test_check_public_states_passes_exhaustively(game_string):
  summary = check_public_states(game_string)
  assert summary["mode"] == "exhaustive"
  assert summary["public_states"] > 10


def test_tic_tac_toe_on_sampled_paths():
  game = pyspiel.load_game("tic_tac_toe")
  observer = PublicStateObserver(game)
  assert observer.source == "perfect_information"
  summary = check_public_states(game, observer=observer, num_sampled_paths=50)
  assert summary["mode"] == "sampled"
  # Along sampled paths, each public state holds exactly the history played,
  # and its infostate is OpenSpiel's information_state_string there.
  rng = random.Random(1)
  for _ in range(20):
    state = game.new_initial_state()
    while not state.is_terminal():
      ps, index = observer.public_state_of(state)
      assert len(ps.histories) == 1 and index == 0
      p = state.current_player()
      assert ps.current_player() == p
      assert ps.infostates(p) == [state.information_state_string(p)]
      assert ps.legal_actions(0) == state.legal_actions()
      state.apply_action(rng.choice(state.legal_actions()))


def test_leduc_public_state_count():
  """Our public tree of Leduc is OpenSpiel's: its public states are the
  distinct (depth, perfect-recall public observation) pairs of OpenSpiel's
  own public observer over every history, chance and terminal included, and
  the counts are those Leduc's rules give."""
  from open_spiel.python.observation import make_observation  # pylint: disable=g-import-not-at-top
  game = pyspiel.load_game("leduc_poker")
  obs = make_observation(game, pyspiel.IIGObservationType(
      public_info=True, perfect_recall=True,
      private_info=pyspiel.PrivateInfoType.NONE))
  # (depth, public observation) -> the kinds of node (terminal or not) there.
  kinds = {}

  def walk(state, depth):
    kinds.setdefault((depth, obs.string_from(state, 0)), set()).add(
        state.is_terminal())
    if not state.is_terminal():
      for a in state.legal_actions():
        walk(state.child(a), depth + 1)

  walk(game.new_initial_state(), 0)
  assert all(len(k) == 1 for k in kinds.values())
  nonterminal = {key for key, k in kinds.items() if k == {False}}
  terminal = {key for key, k in kinds.items() if k == {True}}
  # Leduc's rules, counted by hand: the first deal, the second deal, 6
  # round-1 betting sequences that await a decision ("", c, r, cr, rr, crr),
  # the 5 that end round 1 with a call (cc, rc, crc, rrc, crrc) and await the
  # public card, and 5 x 6 public cards x 6 round-2 decision sequences.
  assert len(nonterminal) == 1 + 1 + 6 + 5 + 5 * 6 * 6
  # 4 round-1 folds (rf, crf, rrf, crrf), 5 x 6 x 4 round-2 folds, and
  # 5 x 6 x 5 round-2 showdowns, each split three ways (player 0 wins,
  # player 1 wins, tie) because Leduc's public observation shows the payout
  # ("Money: 101 99") at the end.
  assert len(terminal) == 4 + 5 * 6 * 4 + 5 * 6 * 5 * 3
  tree = PublicStateObserver(game).full_tree()
  assert len(tree.public_states) == len(kinds)
  ours = [ps for ps in tree.public_states if not ps.is_terminal()]
  assert len(ours) == len(nonterminal)
  # The root's key is "" (it has no parent to be told apart from); below it,
  # the keys are OpenSpiel's observations, at the right depth and kind.
  assert {(ps.depth, ps.key) for ps in ours if ps.depth > 0} == {
      key for key in nonterminal if key[0] > 0}
  assert {(ps.depth, ps.key) for ps in tree.public_states
          if ps.is_terminal()} == terminal


@pytest.mark.parametrize("game_string", SMALL_GAMES)
def test_histories_and_chance_reach(game_string):
  game = pyspiel.load_game(game_string)
  tree = PublicStateObserver(game).full_tree()
  terminal_reach = 0.0
  count = 0
  for ps in tree.public_states:
    for h, c in zip(ps.histories, ps.chance_reach):
      assert h.current_player() == ps.current_player()
      assert c > 0.0
    if ps.is_terminal():
      terminal_reach += ps.chance_reach.sum()
      count += len(ps.histories)
    # Children partition the successors of this public state's histories.
    if not ps.is_terminal():
      successors = sum(
          len(h.chance_outcomes()) if h.is_chance_node() else
          len(h.legal_actions()) for h in ps.histories)
      assert sum(len(c.histories) for c in ps.children()) == successors
  # Chance reach over the terminal histories of every pure strategy profile
  # sums to 1; over all terminals it is the number of pure action paths
  # weighted by chance, so check the total against OpenSpiel's own walk.
  expected, n = 0.0, 0
  stack = [(game.new_initial_state(), 1.0)]
  while stack:
    state, c = stack.pop()
    if state.is_terminal():
      expected += c
      n += 1
    elif state.is_chance_node():
      stack.extend((state.child(a), c * p) for a, p in state.chance_outcomes())
    else:
      stack.extend((state.child(a), c) for a in state.legal_actions())
  assert count == n
  assert terminal_reach == pytest.approx(expected)


def test_children_grouped_by_public_observation():
  observer = PublicStateObserver("kuhn_poker")
  root = observer.root()
  (deal,) = root.children()
  (decision,) = deal.children()
  assert decision.current_player() == 0
  assert len(decision.histories) == 6  # every card pair
  assert decision.infostates(0) == ["0", "1", "2"]
  assert decision.infostates(1) == ["1", "2", "0"]
  assert [c.key for c in decision.children()] == ["p", "b"]
  # Slots: the private card, whatever order infostates were found in.
  slots = SlotTable(observer)
  assert slots.num_slots(0) == slots.num_slots(1) == 3
  np.testing.assert_array_equal(slots.slots(decision, 1), [1, 2, 0])


@pytest.mark.parametrize("game_string", ["go(board_size=5)",
                                         "pig(winscore=10)"])
def test_perfect_information_children_are_built_on_first_access(game_string):
  """`child_sequence` builds one child per access; the children are those
  of an eager expansion (same keys, chance reach and infostates), in
  OpenSpiel's order, and `children()` returns the same objects."""
  observer = PublicStateObserver(game_string)
  ps = observer.root()
  while True:  # the first decision, through any chance
    history = ps.histories[0]
    if not history.is_chance_node():
      break
    ps = ps.child_sequence()[0]
  lazy = ps.child_sequence()
  actions = history.legal_actions()
  assert isinstance(lazy, LazyChildren)
  assert len(lazy) == len(actions)
  built = len(observer.public_states)
  child, index = ps.child_of(0, actions[-1])
  assert len(observer.public_states) == built + 1  # one child, not all
  assert index == 0 and child.histories[0].history()[-1] == actions[-1]
  children = ps.children()
  assert children[-1] is child and ps.child_sequence() is children
  eager = observer._expand(ps)  # pylint: disable=protected-access
  assert [c.key for c in children] == [c.key for c in eager]
  for lazy_child, eager_child in zip(children, eager):
    assert lazy_child.histories[0].history() == eager_child.histories[0].history()
    np.testing.assert_array_equal(lazy_child.chance_reach,
                                  eager_child.chance_reach)
    for p in range(2):
      assert lazy_child.infostates(p) == eager_child.infostates(p)
  if not game_string.startswith("pig"):
    return
  chance = next(c for c in children if c.is_chance_node())  # "roll"
  outcomes = chance.histories[0].chance_outcomes()
  assert [c.chance_reach[0] for c in chance.child_sequence()] == pytest.approx(
      [p for _, p in outcomes if p > 0])


@pytest.mark.parametrize("game_string,num_slots", [
    ("kuhn_poker", 3), ("leduc_poker", 6), (LIARS_DICE, 4)])
def test_slots_are_the_private_chance_outcome(game_string, num_slots):
  observer = PublicStateObserver(game_string)
  slots = SlotTable(observer)
  for p in range(2):
    assert slots.num_slots(p) == num_slots
  for ps in observer.full_tree().public_states:
    if ps.is_terminal():
      continue
    for p in range(2):
      s = slots.slots(ps, p)
      assert len(set(s.tolist())) == len(s)
      if len(s) == num_slots:
        # The private chance outcome is the one the infostate's histories
        # agree on; it must equal the slot.
        for j, slot in enumerate(s):
          rows = [h.history() for i, h in enumerate(ps.histories)
                  if ps.history_infostate[p, i] == j]
          assert all(slot in r for r in rows)


@pytest.mark.parametrize("game_string", list(SMALL_GAMES) + ["tic_tac_toe"])
def test_features_have_fixed_width_and_tell_public_states_apart(game_string):
  observer = PublicStateObserver(game_string)
  features = PublicFeatures(observer)
  if game_string == "tic_tac_toe":
    states = [observer.root()] + observer.root().children()
  else:
    states = [ps for ps in observer.full_tree().public_states
              if not ps.is_terminal()]
  vectors = [features(ps) for ps in states]
  assert all(v.shape == (features.size,) for v in vectors)
  assert all(v.dtype == np.float32 for v in vectors)
  decisions = [v.tobytes() for ps, v in zip(states, vectors)
               if ps.is_player_node()]
  assert len(set(decisions)) == len(decisions)


def test_public_state_of_finds_the_history():
  game = pyspiel.load_game("leduc_poker")
  observer = PublicStateObserver(game)
  state = game.new_initial_state()
  for a in [0, 3, 1, 2, 1, 4, 2]:
    state.apply_action(a)
  ps, index = observer.public_state_of(state)
  assert ps.histories[index].history() == state.history()
  assert str(state) in [str(h) for h in ps.histories]


@pytest.mark.parametrize("game_string,reason", [
    ("kuhn_poker(players=3)", "two-player"),
    ("goofspiel(num_cards=4)", "turn_based_simultaneous_game"),
    ("matrix_rps", "turn_based_simultaneous_game"),
    ("coop_box_pushing", "two-player|zero-sum|turn_based"),
])
def test_unsupported_games_raise_clear_errors(game_string, reason):
  with pytest.raises(ValueError, match=reason):
    PublicStateObserver(game_string)


def test_non_zero_sum_game_is_rejected():
  # Efg game with a general-sum payoff.
  efg = """EFG 2 R "general sum" { "P1" "P2" } ""
p "" 1 1 "" { "a" "b" } 0
t "" 1 "" { 1, 1 }
t "" 2 "" { 2, 0 }
"""
  with pytest.raises(ValueError, match="zero-sum"):
    PublicStateObserver(pyspiel.load_efg_game(efg))


def test_size_bounds_raise_instead_of_hanging():
  with pytest.raises(ValueError, match="max_public_states"):
    PublicStateObserver("tic_tac_toe",
                        ObserverConfig(max_public_states=1000)).full_tree()
  with pytest.raises(ValueError, match="max_histories_per_public_state"):
    observer = PublicStateObserver(
        "leduc_poker", ObserverConfig(max_histories_per_public_state=10))
    observer.full_tree()


def test_an_expansion_too_large_for_memory_is_refused_before_it_is_built():
  # gin_rummy deals ten cards each, one at a time, into one public state:
  # 52 * 51 * 50 * 49 histories four cards in. Unbounded, that expansion
  # took over 20 GB and the kernel killed the process.
  observer = PublicStateObserver("gin_rummy",
                                 ObserverConfig(max_children=20_000))
  start = time.monotonic()
  with pytest.raises(ValueError, match="more than max_children=20000 child "
                     "histories"):
    for _ in observer.walk():
      pass
  assert time.monotonic() - start < 30
  assert max(len(ps.histories) for ps in observer.public_states) <= 20_000


def test_an_expansion_past_the_memory_budget_is_refused():
  # A gin_rummy history takes about 50 KB: 300 MB more is reached while
  # dealing the third card, long before the count bounds would stop it.
  rss = resident_memory()
  assert rss is not None  # Linux
  observer = PublicStateObserver(
      "gin_rummy", ObserverConfig(max_memory_bytes=rss + 300 * 2**20))
  with pytest.raises(ValueError, match=r"past \d+\.\d GiB of memory") as e:
    for _ in observer.walk():
      pass
  # Stopped part way through the expansion (52 * 51 * 50 children in all).
  built = int(re.search(r"(\d+) children built", str(e.value)).group(1))
  assert built < 52 * 51 * 50


def test_unknown_source_is_rejected():
  with pytest.raises(ValueError, match="unknown public-state source"):
    PublicStateObserver("kuhn_poker", ObserverConfig(source="magic"))
  with pytest.raises(ValueError, match="no public observer"):
    PublicStateObserver(LIARS_DICE, ObserverConfig(source="native"))


def test_derived_source_agrees_with_native_on_kuhn_and_leduc():
  # The common-knowledge partition is the finest public partition; on these
  # games it must give the same decision public states as the native observer.
  for game_string in ("kuhn_poker", "leduc_poker"):
    trees = [PublicStateObserver(game_string, ObserverConfig(source=s))
             .full_tree() for s in ("native", "derived")]
    groups = [
        sorted(tuple(sorted(str(h) for h in ps.histories))
               for ps in tree.public_states if ps.is_player_node())
        for tree in trees
    ]
    assert groups[0] == groups[1]


def test_buggy_public_observer_is_caught():
  # A "public" partition that splits histories a player cannot tell apart
  # (here: by player 1's private card) must fail the check.
  observer = PublicStateObserver("kuhn_poker",
                                 ObserverConfig(share_expansions=False))
  original = observer._partition  # pylint: disable=protected-access

  def leaky(children, actions, keys, actors):
    labels = original(children, actions, keys, actors)
    return [f"{label}|{h.history()[1] if len(h.history()) > 1 else ''}"
            for label, h in zip(labels, children)]

  observer._partition = leaky  # pylint: disable=protected-access
  with pytest.raises(ValueError, match="lies in two public states|connected"):
    check_public_states("kuhn_poker", observer=observer)


def test_slots_of_several_dice_are_the_unordered_dice():
  """Liar's dice 2x3: an infostate holds its owner's dice sorted (its
  histories deal them in both orders), so the slot is the unordered pair:
  six per player at every decision, each always the same pair."""
  observer = PublicStateObserver("liars_dice(numdice=2,dice_sides=3)")
  slots = SlotTable(observer)
  assert slots.num_slots(0) == slots.num_slots(1) == 6
  seen = [{}, {}]
  decisions = 0
  for ps in observer.walk():
    if not ps.is_player_node():
      continue
    decisions += 1
    for p in range(2):
      s = slots.slots(ps, p).tolist()
      dice = [i.split(" ")[0] for i in ps.infostates(p)]
      assert len(set(s)) == len(s) == 6
      assert sorted(dice) == ["11", "12", "13", "22", "23", "33"]
      for d, slot in zip(dice, s):
        assert seen[p].setdefault(d, slot) == slot
    if decisions == 300:
      break
  assert decisions == 300


def _content(tree):
  """What each public state of `tree` holds, ids aside."""
  return [(ps.key, ps.depth, [h.history() for h in ps.histories],
           ps.chance_reach.tolist(), ps.history_infostate.tolist(),
           ps.parent_history.tolist(), ps.parent_action.tolist(),
           [ps.infostates(p) for p in range(2)],
           [ps.legal_actions(j) for j in range(ps.num_infostates(
               ps.current_player()))] if ps.is_player_node() else None)
          for ps in tree.public_states]


@pytest.mark.parametrize("game_string", ["leduc_poker", LIARS_DICE, GOOFSPIEL])
def test_shared_expansions_give_the_public_states_built_anew(game_string):
  # A fresh observer over a warm ExpansionCache (the second walk reuses
  # every expansion of the first) builds the public tree that an observer
  # sharing nothing builds, and PublicTreeCFR's compiled arrays agree.
  expansions.EXPANSIONS.clear()
  first = PublicStateObserver(game_string).full_tree()
  hits = expansions.EXPANSIONS.hits
  second = PublicStateObserver(game_string).full_tree()
  assert expansions.EXPANSIONS.hits - hits == sum(
      1 for ps in second.public_states if not ps.is_terminal())
  alone = PublicStateObserver(
      game_string, ObserverConfig(share_expansions=False)).full_tree()
  assert _content(second) == _content(alone) == _content(first)
  for p in range(2):
    a, b = second.players[p], alone.players[p]
    for name in ("row_parent_seq", "legal_mask", "row_actions", "entry_seq"):
      np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
  np.testing.assert_array_equal(second.terminals.weight, alone.terminals.weight)
  # The second observer's public states hold the first's arrays, read-only
  # (a write would change the first observer's too), and what is derived
  # from them; an observer sharing nothing holds arrays of its own.
  shared = [(a, b) for a, b in zip(first.public_states, second.public_states)
            if a.parent is not None]
  assert shared and all(a.chance_reach is b.chance_reach and
                        a.parent_action is b.parent_action and
                        not b.chance_reach.flags.writeable
                        for a, b in shared)
  with pytest.raises(ValueError, match="read-only"):
    shared[0][1].chance_reach[0] = 0.0
  for b, c in zip(second.public_states, alone.public_states):
    if b.parent is not None:
      for p in range(2):
        assert b.parent_links(p) == c.parent_links(p)


def test_expansion_cache_is_bounded_and_keeps_only_exact_public_states():
  cache = expansions.ExpansionCache(max_histories=200)
  saved = expansions.EXPANSIONS
  expansions.EXPANSIONS = cache
  try:
    observer = PublicStateObserver("leduc_poker")
    sizes = []
    for ps in observer.walk():
      if not ps.is_terminal():
        sizes.append(len(ps.children()))
        assert cache._histories <= 200  # pylint: disable=protected-access
    assert 0 < len(cache) < len(sizes)
    # A sampled public state has no content key, and nothing below it is
    # kept: phantom_ttt's second move is sampled from 9 * 9 histories.
    sampled = PublicStateObserver("phantom_ttt",
                                  ObserverConfig(max_histories=20))
    cache.clear()
    root = sampled.root()
    (child,) = root.children()
    grandchildren = child.children()
    assert root.content_key is not None and child.content_key is not None
    # (81 child histories, past 4 * 20: drawn before they are built, so
    # even the groups of 20 or fewer are a sample.)
    assert any(g.sampled for g in grandchildren)
    assert all(g.content_key is None for g in grandchildren)
    before = len(cache)
    for g in grandchildren:
      if not g.is_terminal():
        g.children()
    assert len(cache) == before
  finally:
    expansions.EXPANSIONS = saved


def test_enumeration_limit_names_what_stops_the_walk():
  """A walk bounded by counts: within its budget, or which budget stops
  it (kuhn_poker has 11 public states; its histories are OpenSpiel's 58
  states, chance and terminal ones included)."""
  from open_spiel_sog.public_state import enumeration  # pylint: disable=g-import-not-at-top
  kuhn = pyspiel.load_game("kuhn_poker")
  histories = len(get_all_states.get_all_states(
      kuhn, include_terminals=True, include_chance_states=True))
  assert histories == 58
  limit = enumeration.enumeration_limit
  assert limit(kuhn, max_public_states=12,
               max_histories_walked=histories + 1) == enumeration.WITHIN
  assert limit(kuhn, max_public_states=11,
               max_histories_walked=10_000) == enumeration.PUBLIC_STATES
  assert limit(kuhn, max_public_states=100,
               max_histories_walked=histories) == enumeration.HISTORIES
  # The deal's public state holds Kuhn's 6 deals.
  assert limit(kuhn, max_public_states=100, max_histories_walked=10_000,
               max_histories=5) == enumeration.LARGE
  assert limit(pyspiel.load_game("phantom_ttt"), max_public_states=2000,
               max_histories_walked=6000,
               max_histories=300) == enumeration.LARGE


def test_enumeration_limit_builds_no_more_than_its_budget(monkeypatch):
  """The walk's budget counts the public states it builds, not only those
  it has walked: oshi_zumo's public states have up to 51 x 51 children
  (both players' bids), and a walk that counted only the states it had
  reached held tens of millions of waiting children (5.5 GB and 164 s
  for the trainer's budget of 20,000)."""
  from open_spiel_sog.public_state import enumeration  # pylint: disable=g-import-not-at-top
  from open_spiel_sog.public_state import state as state_lib  # pylint: disable=g-import-not-at-top
  built = []
  children = state_lib.PublicState.children

  def counted(self, *args, **kwargs):
    out = children(self, *args, **kwargs)
    built.append(len(out))
    return out

  monkeypatch.setattr(state_lib.PublicState, "children", counted)
  game = search_game(pyspiel.load_game("oshi_zumo"))
  budget = 2650  # (past the 2,604 public states of the first bids)
  assert enumeration.enumeration_limit(
      game, max_public_states=budget,
      max_histories_walked=10**6) == enumeration.PUBLIC_STATES
  widest = game.num_distinct_actions() ** 2  # (both players' bids)
  assert sum(built) < budget + widest, built
