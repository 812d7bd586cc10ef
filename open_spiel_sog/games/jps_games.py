"""Collaborative games of joint policy search, registered with OpenSpiel.

The three two-player common-payoff games of Tian, Gong and Jiang (2020),
"Joint Policy Search for Multi-agent Collaboration with Imperfect
Information" (NeurIPS 2020), section 6 and appendix: both players get the
same reward r (`Utility.IDENTICAL`, returns ``[r, r]``). Player 0 is the
paper's P1, player 1 its P2. One chance node deals the private numbers, each
seen only by its owner; every action after the deal is public.

  jps_comm(length=L): the communication game (Definition 1). Chance deals
    s1 uniform in {0, ..., 2^L - 1} to player 0. Player 0 sends L binary
    public signals (actions 0 and 1), then player 1 guesses s1 (actions
    0 .. 2^L - 1); r = 1 if the guess is s1, else 0.
  simple_bidding(n=N): Simple Bidding (Definition 2), N a power of two.
    Chance deals (s1, s2), each uniform in {0, ..., N-1}. The bids are
    1, 2, 4, ..., N; player 0 must open with a bid, then the players
    alternate, each passing or bidding higher than the last bid; the game
    ends when a player passes (after the highest bid only Pass is legal).
    r = b (the last bid) if s1 + s2 >= b, else 0.
  mini_bridge(n=N): 2-Suit Mini-Bridge (Definition 3). Chance deals
    (s1, s2), each uniform in {0, ..., N}. The bids are 1H < 1S < 2H < 2S
    < ... < NH < NS. Player 0 may open with Pass, after which player 1
    passes (the pass-out, r = 0) or bids; otherwise the game ends when a
    player passes, each bid must be higher than the last and after the
    highest bid only Pass is legal. The final contract kS makes when
    s1 + s2 >= N + k and kH when s1 + s2 <= N - k, for r = 2^(k-1);
    otherwise r = -1.

Actions: jps_comm: the signals are actions 0 and 1, the guess of s1 is
action s1. The bidding games: 0 is Pass; simple_bidding's action i >= 1 bids
2^(i-1); mini_bridge's action 2k-1 bids kH and 2k bids kS. The chance node's
outcomes: jps_comm s1; the bidding games s1 * V + s2 with V the number of
private values (N, and N + 1 for mini_bridge).

Strings: `information_state_string(p)` is the player, its private number and
the public history ("p0 s=3 bids: 1 2", "p1 signals: 1 0 1"); the public
observer (``public_info=True``, ``private_info=PrivateInfoType.NONE``) gives
the public history alone ("bids: 1 2"). Without perfect recall the bidding
games show the last bid, followed by "Pass" once the last action was a pass
("p1 s=0 bid: 2", "bid: 2 Pass"); jps_comm shows the signals in both.

The game trees have as many histories (root, decision and terminal nodes) as
the paper's #States column: jps_comm(length=3) 633, simple_bidding(n=4) 241,
simple_bidding(n=8) 1985, mini_bridge(n=3) 4081, mini_bridge(n=4) 25576.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pyspiel

PASS = 0


def _game_type(short_name: str, long_name: str,
               params: Mapping[str, Any]) -> pyspiel.GameType:
  return pyspiel.GameType(
      short_name=short_name,
      long_name=long_name,
      dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
      chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
      information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
      utility=pyspiel.GameType.Utility.IDENTICAL,
      reward_model=pyspiel.GameType.RewardModel.TERMINAL,
      max_num_players=2,
      min_num_players=2,
      provides_information_state_string=True,
      provides_information_state_tensor=True,
      provides_observation_string=True,
      provides_observation_tensor=True,
      provides_factored_observation_string=True,
      parameter_specification=dict(params))


_JPS_COMM_PARAMS = {"length": 3}
_SIMPLE_BIDDING_PARAMS = {"n": 4}
_MINI_BRIDGE_PARAMS = {"n": 3}

_JPS_COMM_TYPE = _game_type(
    "jps_comm", "JPS communication game (Tian et al. 2020)", _JPS_COMM_PARAMS)
_SIMPLE_BIDDING_TYPE = _game_type(
    "simple_bidding", "JPS Simple Bidding (Tian et al. 2020)",
    _SIMPLE_BIDDING_PARAMS)
_MINI_BRIDGE_TYPE = _game_type(
    "mini_bridge", "JPS 2-Suit Mini-Bridge (Tian et al. 2020)",
    _MINI_BRIDGE_PARAMS)


def _int_param(game: str, params: Mapping[str, Any],
               defaults: Mapping[str, Any], key: str, allowed: str) -> int:
  """The integer parameter `key`; ValueError naming it and what is allowed."""
  unknown = sorted(set(params) - set(defaults))
  if unknown:
    raise ValueError(f"{game}: unknown parameter(s) {', '.join(unknown)}; "
                     f"supported: {', '.join(defaults)}")
  value = params.get(key, defaults[key])
  if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
    raise ValueError(f"{game}: {key} must be an integer ({allowed}), got "
                     f"{value!r}")
  return int(value)


# --- Rules ------------------------------------------------------------------


class _Rules:
  """The rules of one game, shared by its states (immutable).

  Subclasses define: num_values (private values per player; player 1 of
  jps_comm has none), num_actions, max_length, min/max utility, and the
  public-history functions below.
  """
  name = ""
  num_values: tuple[int, int] = (0, 0)
  num_actions = 0
  max_length = 0
  min_utility = 0.0
  max_utility = 0.0

  def __deepcopy__(self, memo):
    return self

  @property
  def num_chance_outcomes(self) -> int:
    v0, v1 = self.num_values
    return v0 * max(v1, 1)

  def deal(self, outcome: int) -> tuple[int, int]:
    """The private numbers (s1, s2) of chance outcome `outcome` (-1: none)."""
    v1 = self.num_values[1]
    if v1 == 0:
      return outcome, -1
    return divmod(outcome, v1)

  def outcome(self, deal: Sequence[int]) -> int:
    v1 = self.num_values[1]
    return deal[0] if v1 == 0 else deal[0] * v1 + deal[1]

  def to_move(self, actions: Sequence[int]) -> int:
    """The player to move after public `actions`, or TERMINAL."""
    raise NotImplementedError

  def legal_actions(self, actions: Sequence[int]) -> list[int]:
    raise NotImplementedError

  def reward(self, deal: Sequence[int], actions: Sequence[int]) -> float:
    raise NotImplementedError

  def action_name(self, player: int, action: int) -> str:
    raise NotImplementedError

  def history_string(self, actions: Sequence[int]) -> str:
    """The public history, e.g. "bids: 1 2" ("bids: -" when empty)."""
    raise NotImplementedError

  def situation_string(self, actions: Sequence[int]) -> str:
    """What a non-recall observation shows of the public history."""
    raise NotImplementedError

  def private_string(self, deal: Sequence[int] | None, player: int) -> str:
    if self.num_values[player] == 0:
      return ""
    if deal is None:
      return "s=?"
    return f"s={deal[player]}"


class _CommRules(_Rules):
  """jps_comm(length=L)."""
  name = "jps_comm"

  def __init__(self, params: Mapping[str, Any]):
    length = _int_param("jps_comm", params, _JPS_COMM_PARAMS, "length",
                        ">= 1: player 0 sends that many binary signals about "
                        "its number in 0..2^length-1")
    if length < 1:
      raise ValueError(f"jps_comm: length must be >= 1 (the number of binary "
                       f"signals; the private number is in 0..2^length-1), "
                       f"got {length}")
    self.length = length
    self.num_values = (2**length, 0)
    self.num_actions = 2**length
    self.max_length = length + 1
    self.min_utility = 0.0
    self.max_utility = 1.0
    self.params = {"length": length}

  def to_move(self, actions):
    if len(actions) < self.length:
      return 0
    if len(actions) == self.length:
      return 1
    return int(pyspiel.PlayerId.TERMINAL)

  def legal_actions(self, actions):
    if len(actions) < self.length:
      return [0, 1]
    if len(actions) == self.length:
      return list(range(self.num_actions))
    return []

  def reward(self, deal, actions):
    return 1.0 if actions[self.length] == deal[0] else 0.0

  def action_name(self, player, action):
    return f"signal {action}" if player == 0 else f"guess {action}"

  def history_string(self, actions):
    signals = " ".join(str(a) for a in actions[:self.length]) or "-"
    text = f"signals: {signals}"
    if len(actions) > self.length:
      text += f" guess: {actions[self.length]}"
    return text

  situation_string = history_string


class _BiddingRules(_Rules):
  """The bidding games: action 0 is Pass, actions 1..num_bids the bids."""
  opening_pass = False
  bid_names: tuple[str, ...] = ()

  @property
  def num_bids(self) -> int:
    return len(self.bid_names)

  def to_move(self, actions):
    if len(actions) >= 2 and actions[-1] == PASS:
      return int(pyspiel.PlayerId.TERMINAL)
    return len(actions) % 2

  def legal_actions(self, actions):
    if len(actions) >= 2 and actions[-1] == PASS:
      return []
    last = self.last_bid(actions)
    bids = list(range(last + 1, self.num_bids + 1))
    if not actions and not self.opening_pass:
      return bids
    return [PASS] + bids

  @staticmethod
  def last_bid(actions: Sequence[int]) -> int:
    """The last bid's action (bids only rise), or 0 when none was made."""
    return max(actions, default=PASS)

  def action_name(self, player, action):
    return "Pass" if action == PASS else self.bid_names[action - 1]

  def history_string(self, actions):
    text = " ".join(self.action_name(0, a) for a in actions) or "-"
    return f"bids: {text}"

  def situation_string(self, actions):
    last = self.last_bid(actions)
    text = "bid: " + (self.action_name(0, last) if last else "-")
    if actions and actions[-1] == PASS:
      text += " Pass"
    return text


class _SimpleBiddingRules(_BiddingRules):
  """simple_bidding(n=N)."""
  name = "simple_bidding"

  def __init__(self, params: Mapping[str, Any]):
    n = _int_param("simple_bidding", params, _SIMPLE_BIDDING_PARAMS, "n",
                   "a power of two >= 2")
    if n < 2 or n & (n - 1):
      raise ValueError(f"simple_bidding: n must be a power of two >= 2 (the "
                       f"private numbers are 0..n-1 and the bids 1, 2, 4, "
                       f"..., n), got {n}")
    self.n = n
    self.num_values = (n, n)
    self.bid_values = tuple(2**i for i in range(n.bit_length()))
    self.bid_names = tuple(str(b) for b in self.bid_values)
    self.num_actions = 1 + self.num_bids
    # Every bid, then the closing pass.
    self.max_length = self.num_bids + 1
    self.min_utility = 0.0
    self.max_utility = float(n)
    self.params = {"n": n}

  def reward(self, deal, actions):
    last = self.last_bid(actions)
    b = self.bid_values[last - 1]
    return float(b) if deal[0] + deal[1] >= b else 0.0


class _MiniBridgeRules(_BiddingRules):
  """mini_bridge(n=N)."""
  name = "mini_bridge"
  opening_pass = True

  def __init__(self, params: Mapping[str, Any]):
    n = _int_param("mini_bridge", params, _MINI_BRIDGE_PARAMS, "n",
                   ">= 1: private numbers 0..n, bids 1H..nS")
    if n < 1:
      raise ValueError(f"mini_bridge: n must be >= 1 (the private numbers "
                       f"are 0..n and the bids 1H, 1S, ..., nH, nS), got {n}")
    self.n = n
    self.num_values = (n + 1, n + 1)
    self.bid_names = tuple(f"{k}{suit}" for k in range(1, n + 1)
                           for suit in "HS")
    self.num_actions = 1 + self.num_bids
    # The opening pass, every bid, then the closing pass.
    self.max_length = self.num_bids + 2
    self.min_utility = -1.0
    self.max_utility = float(2**(n - 1))
    self.params = {"n": n}

  def reward(self, deal, actions):
    last = self.last_bid(actions)
    if last == PASS:
      return 0.0  # pass-out
    k, spades = (last + 1) // 2, last % 2 == 0
    total = deal[0] + deal[1]
    makes = total >= self.n + k if spades else total <= self.n - k
    return float(2**(k - 1)) if makes else -1.0


# --- Game and state -----------------------------------------------------------


class JPSGame(pyspiel.Game):
  """One of the collaborative games; `rules` holds what differs."""

  _rules_class: type = _Rules
  _game_type: pyspiel.GameType = _JPS_COMM_TYPE

  def __init__(self, params: Mapping[str, Any] | None = None):
    self.rules = rules = self._rules_class(dict(params or {}))
    game_info = pyspiel.GameInfo(
        num_distinct_actions=rules.num_actions,
        max_chance_outcomes=rules.num_chance_outcomes,
        num_players=2,
        min_utility=rules.min_utility,
        max_utility=rules.max_utility,
        max_game_length=rules.max_length)
    super().__init__(self._game_type, game_info, dict(rules.params))

  def new_initial_state(self) -> "JPSState":
    return JPSState(self)

  def make_py_observer(self, iig_obs_type=None, params=None):
    return JPSObserver(
        self.rules,
        iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False),
        params)

  def max_chance_nodes_in_history(self) -> int:
    return 1


class JPSCommGame(JPSGame):
  """jps_comm(length=L)."""
  _rules_class = _CommRules
  _game_type = _JPS_COMM_TYPE


class SimpleBiddingGame(JPSGame):
  """simple_bidding(n=N)."""
  _rules_class = _SimpleBiddingRules
  _game_type = _SIMPLE_BIDDING_TYPE


class MiniBridgeGame(JPSGame):
  """mini_bridge(n=N)."""
  _rules_class = _MiniBridgeRules
  _game_type = _MINI_BRIDGE_TYPE


class JPSState(pyspiel.State):
  """A history: the deal (None before the chance node) and the public
  actions since (a tuple, so clones are cheap)."""

  def __init__(self, game: JPSGame):
    super().__init__(game)
    self.rules = game.rules
    self.deal: tuple[int, int] | None = None
    self.actions: tuple[int, ...] = ()

  def current_player(self) -> int:
    if self.deal is None:
      return int(pyspiel.PlayerId.CHANCE)
    return self.rules.to_move(self.actions)

  def is_terminal(self) -> bool:
    return (self.deal is not None and
            self.rules.to_move(self.actions) == pyspiel.PlayerId.TERMINAL)

  def chance_outcomes(self) -> list[tuple[int, float]]:
    count = self.rules.num_chance_outcomes
    return [(o, 1.0 / count) for o in range(count)]

  def _legal_actions(self, player: int) -> list[int]:
    if self.deal is None or player != self.current_player():
      return []
    return self.rules.legal_actions(self.actions)

  def _apply_action(self, action: int) -> None:
    if self.deal is None:
      self.deal = self.rules.deal(action)
    else:
      self.actions += (action,)

  def _action_to_string(self, player: int, action: int) -> str:
    rules = self.rules
    if player == pyspiel.PlayerId.CHANCE:
      s1, s2 = rules.deal(action)
      return f"Deal s1={s1}" + (f" s2={s2}" if s2 >= 0 else "")
    return rules.action_name(player, action)

  def returns(self) -> list[float]:
    if not self.is_terminal():
      return [0.0, 0.0]
    r = self.rules.reward(self.deal, self.actions)
    return [r, r]

  def __str__(self) -> str:
    if self.deal is None:
      deal = "s=?"
    elif self.deal[1] < 0:
      deal = f"s1={self.deal[0]}"
    else:
      deal = f"s1={self.deal[0]} s2={self.deal[1]}"
    return f"{deal} {self.rules.history_string(self.actions)}"

  def resample_from_infostate(self, player_id: int, probability_sampler
                              ) -> "JPSState":
    """A history of `player_id`'s infostate, drawn in proportion to its
    chance reach: the other player's number is uniform (no action depends
    on it for legality, so every value is consistent)."""
    if self.deal is None:
      return self.clone()
    other = 1 - player_id
    deal = list(self.deal)
    if self.rules.num_values[other]:
      values = self.rules.num_values[other]
      deal[other] = min(int(probability_sampler() * values), values - 1)
    state = self.get_game().new_initial_state()
    state.apply_action(self.rules.outcome(deal))
    for action in self.actions:
      state.apply_action(action)
    return state


# --- Observations -------------------------------------------------------------


class JPSObserver:
  """Tensors and strings for every IIGObservationType.

  Pieces: "player" (2; with private info) the observing player; "private"
  (2, V) one-hot private numbers (the observer's own row with SINGLE_PLAYER,
  both rows with ALL_PLAYERS); with public info and perfect recall "history"
  (max_game_length, num_distinct_actions), one row per public action;
  without perfect recall jps_comm keeps "history" and the bidding games show
  "last_bid" (1 + num_bids; entry 0: no bid yet) and "passed" (1: the last
  action was a pass).
  """

  def __init__(self, rules: _Rules, iig_obs_type, params):
    if params:
      raise ValueError(f"{rules.name}: observation parameters are not "
                       f"supported; passed {params}")
    self.rules = rules
    self.public = bool(iig_obs_type.public_info)
    self.recall = bool(iig_obs_type.perfect_recall)
    self.private = iig_obs_type.private_info
    bidding = isinstance(rules, _BiddingRules)
    pieces = []
    if self.private != pyspiel.PrivateInfoType.NONE:
      values = max(rules.num_values)
      pieces += [("player", 2, (2,)), ("private", 2 * values, (2, values))]
    if self.public:
      if self.recall or not bidding:
        pieces.append(("history", rules.max_length * rules.num_actions,
                       (rules.max_length, rules.num_actions)))
      else:
        pieces += [("last_bid", rules.num_actions, (rules.num_actions,)),
                   ("passed", 1, (1,))]
    size = sum(p[1] for p in pieces)
    self.tensor = np.zeros(size, np.float32)
    self.dict = {}
    offset = 0
    for name, length, shape in pieces:
      self.dict[name] = self.tensor[offset:offset + length].reshape(shape)
      offset += length

  def _shown(self, player: int) -> tuple[int, ...]:
    """The players whose private numbers this observer shows `player`."""
    if self.private == pyspiel.PrivateInfoType.ALL_PLAYERS:
      return (0, 1)
    if self.private == pyspiel.PrivateInfoType.SINGLE_PLAYER:
      return (player,)
    return ()

  def set_from(self, state: JPSState, player: int) -> None:
    self.tensor.fill(0.0)
    d = self.dict
    if "player" in d:
      d["player"][player] = 1.0
    if "private" in d and state.deal is not None:
      for p in self._shown(player):
        if state.deal[p] >= 0:
          d["private"][p, state.deal[p]] = 1.0
    if "history" in d:
      for i, action in enumerate(state.actions):
        d["history"][i, action] = 1.0
    if "last_bid" in d:
      d["last_bid"][_BiddingRules.last_bid(state.actions)] = 1.0
      d["passed"][0] = float(bool(state.actions) and state.actions[-1] == PASS)

  def string_from(self, state: JPSState, player: int) -> str:
    rules = self.rules
    parts = []
    if self.private != pyspiel.PrivateInfoType.NONE:
      parts.append(f"p{player}")
      for p in self._shown(player):
        text = rules.private_string(state.deal, p)
        if text:
          parts.append(text if self.private ==
                       pyspiel.PrivateInfoType.SINGLE_PLAYER else
                       f"{text[0]}{p + 1}{text[1:]}")
    if self.public:
      parts.append(rules.history_string(state.actions) if self.recall
                   else rules.situation_string(state.actions))
    return " ".join(parts)


pyspiel.register_game(_JPS_COMM_TYPE, JPSCommGame)
pyspiel.register_game(_SIMPLE_BIDDING_TYPE, SimpleBiddingGame)
pyspiel.register_game(_MINI_BRIDGE_TYPE, MiniBridgeGame)
