// Copyright 2025 The open_spiel_sog Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//      http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.


// A tree of histories of an OpenSpiel C++ game, for GT-CFR (DESIGN.md
// section 16): the nodes, both players' rows, the keys, the Resolve gadget,
// building (roots, expansions, leaves valued by rollouts or left to a
// network) and reading (node values under the average profile, policies,
// the kept tree's lookups). history_engine.h grows and solves it.
//
// Its Python twin is algorithms/sog/anchored/history_tree.py (HistoryTree):
// the same nodes (histories, a chosen leaf gets its children), the same
// rows (a player's infostate: the tree's histories that share its key below
// the same own sequence, `public_state.HistoryKeys`) and the same gadget.
//
// Layout: structure of arrays grown by appending (mctx's Tree). A node's
// parent is always older than the node and a row's parent sequence is
// always older than the row, so passes over the tree are loops over arrays
// in creation order, never a recursion.
//
// The file is long (about 840 lines) for one concern: the tree's data and
// every way to build it or read it; the walks and the CFR+ passes that grow
// and solve it are history_engine.h's.

#ifndef OPEN_SPIEL_SOG_NATIVE_HISTORY_TREE_H_
#define OPEN_SPIEL_SOG_NATIVE_HISTORY_TREE_H_

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <stdexcept>
#include <tuple>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "open_spiel/python/pybind11/pybind11.h"
#include "open_spiel/spiel.h"
#include "blake2b.h"  // same folder
#include "rollouts.h"  // same folder
#include "rows.h"  // same folder

namespace open_spiel_sog {
namespace history_engine {

namespace py = ::pybind11;
using ::open_spiel::Action;
using ::open_spiel::State;

constexpr int kChance = -1;    // pyspiel.PlayerId.CHANCE
constexpr int kTerminal = -4;  // pyspiel.PlayerId.TERMINAL
constexpr int64_t kRoot = -1;  // a sequence's row when it is a root sequence

// A ValueError in Python (pybind11 translates std::invalid_argument); safe
// with the GIL released.
[[noreturn]] inline void Refuse(const std::string& message) {
  throw std::invalid_argument(message);
}

using rollouts::Uniform;
inline uint64_t Mix(uint64_t& state) { return rollouts::SplitMix64(state); }

struct Config {
  std::string growth = "anchored";  // or "puct"
  std::string keys = "string";      // "string", "aoh" or "history"
  int rollouts = 1;
  int64_t rollout_max_moves = 0;
  double draw = 0.0;  // player 0's return of a cut rollout
  bool predictive = false;
  double averaging_power = 1.0;
  // The average policy weighs iteration t by c_t^averaging_power: c_t the
  // iterations so far (false), or the passes' work so far (true: nodes
  // plus both players' sequences, summed over the iterations), the clock
  // of RunTwoThreads' iterations, cheap on a small tree, dear on a large.
  bool average_by_work = false;
  double c_puct = 1.0;
  // PUCT growth samples (1 - cfr_mix) PUCT + cfr_mix the CFR average
  // policy at each decision (GT-CFR's pi_select: 1/2).
  double cfr_mix = 0.5;
  // PUCT's action values: "cfr" (the latest update's counterfactual values
  // over the opponent's reach: GT-CFR's) or "rollouts" (the mean of the
  // leaf values made below each child, as MCTS backs rollouts up).
  std::string q_values = "cfr";
  double utility_range = 1.0;
  // Leaves wait for set_leaf_values (a network's values and priors)
  // instead of rollouts; PUCT growth backs a leaf's value up when it comes.
  bool network_leaves = false;
  // PUCT growth with network leaves: a run returns once this many leaves
  // wait (a larger batch asks the network less often; later walks of the
  // batch see its leaves' visits but not yet their values).
  int64_t leaf_batch = 1;
  uint64_t seed = 0;
  // Threads of a timed anchored run with rollout leaves: 2 grows the tree
  // in one (the expander) while the other runs CFR+ (Obscuro's design);
  // 1, or a counted run, alternates the two in one thread.
  int threads = 1;
};

class HistoryTree {
 public:
  HistoryTree(std::shared_ptr<const open_spiel::Game> game, Config config)
      : game_(std::move(game)), config_(std::move(config)), rng_(config_.seed) {
    if (config_.growth != "anchored" && config_.growth != "puct") {
      Refuse("history engine: unknown growth '" + config_.growth +
             "'; supported: 'anchored', 'puct'");
    }
    if (config_.keys != "string" && config_.keys != "aoh" &&
        config_.keys != "history") {
      Refuse("history engine: unknown keys '" + config_.keys +
             "'; supported: 'string', 'aoh', 'history'");
    }
    if (config_.rollouts < 1) Refuse("history engine: rollouts must be >= 1");
    if (config_.threads < 1 || config_.threads > 2) {
      Refuse("history engine: threads must be 1 or 2, got " +
             std::to_string(config_.threads));
    }
    aoh_uses_infostate_ =
        !game_->GetType().provides_observation_string;
    Clear();
  }

  void Clear() {
    for (auto& r : rows_) r.Reset(1);
    for (auto* v : {&parent_, &slot_, &child_start_, &child_count_, &row_,
                    &depth_, &origin_, &origin_index_, &children_, &roots_,
                    &key_[0], &key_[1], &seq_[0], &seq_[1]}) {
      v->clear();
    }
    for (auto* v : {&edge_, &reach_, &value_, &leaf_term_, &backed_sum_,
                    &backed_n_}) {
      v->clear();
    }
    action_.clear();
    actor_.clear();
    leaf_.clear();
    full_.clear();
    states_.clear();
    root_history_.clear();
    gadget_.clear();
    gadget_player_ = -1;
    key_ids_.Clear();
    key_hashes_.clear();
    warm_[0].clear();
    warm_[1].clear();
    freeze_player_ = -1;
    freeze_.clear();
    pending_.clear();
    deferred_.clear();
    prior_start_.clear();
    priors_.clear();
    iterations_ = 0;
    averaging_clock_ = 0.0;
    values_valid_ = false;
    kept_for_ = -1;
  }

  // --- Building ------------------------------------------------------------

  // Root history `state` of chance weight `weight`; the gadget player starts
  // from `enter_seq` (its J's enter sequence, or the root sequence 0).
  // `value`: its value where known (NaN: rollouts). Keys (HistoryKeys',
  // 16 hex digits): empty strings compute them (replaying the history for
  // action-observation keys).
  int64_t AddRoot(const State& state, double weight, int64_t enter_seq,
                  double value, const std::string& key0,
                  const std::string& key1) {
    if (key0.empty() && key1.empty()) {
      auto keys = RootKeys(state);
      return AddRootKeys(state, weight, enter_seq, value, keys.first,
                         keys.second);
    }
    return AddRootKeys(state, weight, enter_seq, value, ParseKey(key0),
                       ParseKey(key1));
  }

  int64_t AddRootKeys(const State& state, double weight, int64_t enter_seq,
                      double value, Key key0, Key key1) {
    std::unique_ptr<State> s = state.Clone();
    const int64_t k0 = KeyId(key0), k1 = KeyId(key1);
    int64_t seqs[2] = {0, 0};
    if (gadget_player_ >= 0) seqs[gadget_player_] = enter_seq;
    std::vector<Action> history = s->History();
    int64_t n = AddNode(-1, -1, -1, weight, weight, std::move(s), k0, k1,
                        seqs, value, 0, -1);
    roots_.push_back(n);
    root_history_.push_back(std::move(history));
    return n;
  }

  // The Resolve gadget for `player`: per root infostate J a row [exit,
  // enter] (enter only where `has_alternative` is false); exit pays
  // alternative[j] (player's value) with weight prior[j]. Returns each J's
  // enter sequence.
  std::vector<int64_t> AddGadget(int player,
                                 const std::vector<double>& alternative,
                                 const std::vector<bool>& has_alternative,
                                 const std::vector<double>& prior) {
    if (!roots_.empty()) Refuse("history engine: the gadget goes first");
    gadget_player_ = player;
    std::vector<int64_t> enters;
    for (size_t j = 0; j < alternative.size(); ++j) {
      std::vector<Action> actions = has_alternative[j]
                                        ? std::vector<Action>{0, 1}
                                        : std::vector<Action>{1};
      int64_t row = NewRow(player,
                           KeyId(blake2b::Digest64("gadget " +
                                                   std::to_string(j))), 0,
                           actions, true);
      gadget_.push_back({row, alternative[j], has_alternative[j], prior[j]});
      enters.push_back(rows_[player].offset[row] +
                       static_cast<int64_t>(actions.size()) - 1);
    }
    return enters;
  }

  // Warm-start regrets of rows made with (player, key).
  void Warm(int player, const std::string& key,
            const std::vector<double>& regrets) {
    warm_[player][ParseKey(key)] = regrets;
  }

  // Player `player`'s rows below root histories whose key is not `own_key`
  // play these fixed policies (1-KLSS), uniform where unknown.
  void Freeze(int player, const std::unordered_map<std::string,
                                                   std::vector<double>>& pol,
              const std::string& own_key) {
    freeze_player_ = player;
    freeze_.clear();
    for (const auto& [key, policy] : pol) freeze_[ParseKey(key)] = policy;
    freeze_key_ = ParseKey(own_key);
  }

  // Gives leaf n all its children (chance and decision nodes alike).
  void Expand(int64_t n) {
    if (actor_[n] == kTerminal || full_[n]) return;
    const State& state = *states_[n];
    if (actor_[n] == kChance) {
      auto outcomes = state.ChanceOutcomes();
      ReserveChildren(n, static_cast<int64_t>(outcomes.size()));
      // PUCT growth adds one decision child per simulation; a chance
      // node's outcomes all join at once, each valued by the chance node's
      // own value until a walk drawn through it grows it (rollouts for
      // every outcome, 36 in backgammon, would not fit one simulation).
      const double inherited =
          config_.growth == "puct" ? value_[n]
                                   : std::numeric_limits<double>::quiet_NaN();
      for (size_t i = 0; i < outcomes.size(); ++i) {
        AddChild(n, static_cast<int64_t>(i), outcomes[i].first,
                 outcomes[i].second, inherited);
      }
    } else {
      MakeRow(n);
      const int64_t k = ChildCount(n);
      for (int64_t i = 0; i < k; ++i) {
        if (children_[child_start_[n] + i] < 0) {
          int p = actor_[n];
          AddChild(n, i, rows_[p].action[rows_[p].offset[row_[n]] + i], 1.0);
        }
      }
    }
    Finish(n);
  }

  // Makes the row of decision leaf n (its infostate) without children.
  void RowOnly(int64_t n) {
    if (actor_[n] >= 0) MakeRow(n);
  }

  // [nodes] player 0's expected return from each node under the average
  // profile (leaves: their values).
  const std::vector<double>& NodeValues() const {
    if (!values_valid_) {
      values_cache_ = ComputeNodeValues();
      values_valid_ = true;
    }
    return values_cache_;
  }

  std::vector<double> ComputeNodeValues() const {
    const int64_t nodes = Size();
    std::vector<double> values(value_.begin(), value_.end());
    std::vector<double> avg;
    for (int64_t n = nodes - 1; n >= 0; --n) {
      if (leaf_[n]) continue;
      const int64_t k = child_count_[n];
      double total = 0.0;
      if (actor_[n] >= 0) {
        const Rows& rows = rows_[actor_[n]];
        avg.resize(k);
        rows.Average(row_[n], avg.data());
        for (int64_t i = 0; i < k; ++i) {
          int64_t c = children_[child_start_[n] + i];
          if (c >= 0) total += avg[i] * values[c];
        }
      } else {
        for (int64_t i = 0; i < k; ++i) {
          int64_t c = children_[child_start_[n] + i];
          total += edge_[c] * values[c];
        }
      }
      values[n] = total;
    }
    return values;
  }

  // --- Reading -------------------------------------------------------------

  int64_t Size() const { return static_cast<int64_t>(parent_.size()); }

  std::unique_ptr<State> StateOf(int64_t n) const {
    if (states_[n]) return states_[n]->Clone();
    std::unique_ptr<State> s = game_->NewInitialState();
    for (Action a : History(n)) s->ApplyAction(a);
    return s;
  }

  std::vector<Action> History(int64_t n) const {
    std::vector<Action> actions;
    while (parent_[n] >= 0) {
      actions.push_back(action_[n]);
      n = parent_[n];
    }
    std::vector<Action> out = root_history_[origin_index_[n]];
    out.insert(out.end(), actions.rbegin(), actions.rend());
    return out;
  }

  // Node n's (action, actor, row, reach, is leaf).
  py::tuple Node(int64_t n) const {
    if (n < 0 || n >= Size()) {
      Refuse("history engine: no node " + std::to_string(n));
    }
    return py::make_tuple(action_[n], actor_[n], row_[n], reach_[n],
                          static_cast<bool>(leaf_[n]));
  }

  const std::vector<int64_t>& Roots() const { return roots_; }

  std::vector<int64_t> Children(int64_t n) const {
    if (leaf_[n]) return {};
    return std::vector<int64_t>(children_.begin() + child_start_[n],
                                children_.begin() + child_start_[n] +
                                    child_count_[n]);
  }

  std::pair<std::string, std::string> Keys(int64_t n) const {
    return {blake2b::Hex64(key_hashes_[key_[0][n]]),
            blake2b::Hex64(key_hashes_[key_[1][n]])};
  }

  // Player p's rows but the gadget's: [(key, regrets)] (the warm start of
  // the next tree's rows made with that key).
  py::list WarmRows(int p) const {
    const Rows& rows = rows_[p];
    py::list out;
    for (int64_t r = 0; r < rows.size(); ++r) {
      if (IsGadgetRow(p, r)) continue;
      const int64_t off = rows.offset[r], k = rows.count[r];
      out.append(py::make_tuple(
          blake2b::Hex64(key_hashes_[rows.key[r]]),
          std::vector<double>(rows.regrets.begin() + off,
                              rows.regrets.begin() + off + k)));
    }
    return out;
  }

  // The average policy and visits of the row of node n ({action: prob}).
  py::tuple RowPolicy(int64_t n) const {
    if (actor_[n] < 0 || row_[n] < 0) Refuse("history engine: no row there");
    const Rows& rows = rows_[actor_[n]];
    const int64_t r = row_[n], off = rows.offset[r], k = rows.count[r];
    std::vector<double> avg(k);
    rows.Average(r, avg.data());
    std::vector<Action> acts(rows.action.begin() + off,
                             rows.action.begin() + off + k);
    std::vector<double> visits(rows.visits.begin() + off,
                               rows.visits.begin() + off + k);
    return py::make_tuple(acts, avg, visits);
  }

  int64_t iterations() const { return iterations_; }

  // Player p's rows at most `max_level` own actions below the root, but
  // the gadget's: [(key, actions, average policy)].
  py::list NearRootRows(int p, int max_level) const {
    const Rows& rows = rows_[p];
    py::list out;
    std::vector<double> avg;
    for (int64_t r = 0; r < rows.size(); ++r) {
      if (rows.level[r] > max_level || IsGadgetRow(p, r)) continue;
      const int64_t off = rows.offset[r], k = rows.count[r];
      avg.resize(k);
      rows.Average(r, avg.data());
      out.append(py::make_tuple(
          blake2b::Hex64(key_hashes_[rows.key[r]]),
          std::vector<Action>(rows.action.begin() + off,
                              rows.action.begin() + off + k),
          avg));
    }
    return out;
  }

  // The nodes where `actor` acts whose player-q key is `key` (an index
  // built once per tree: the kept tree's lookups).
  std::vector<int64_t> KeptNodes(int actor, int q, const std::string& key) {
    if (kept_for_ != Size() || kept_actor_ != actor) {
      kept_index_.clear();
      for (int64_t n = 0; n < Size(); ++n) {
        if (actor_[n] != actor) continue;
        for (int p = 0; p < 2; ++p) {
          kept_index_[key_[p][n] * 2 + p].push_back(n);
        }
      }
      kept_for_ = Size();
      kept_actor_ = actor;
    }
    const int64_t id = key_ids_.Find(ParseKey(key), 0);
    if (id < 0) return {};
    auto it = kept_index_.find(id * 2 + q);
    return it == kept_index_.end() ? std::vector<int64_t>() : it->second;
  }

  // --- The network hook ----------------------------------------------------

  // Rollouts per new leaf and their cut (0: none; a cut rollout scores the
  // draw value), e.g. fitted to a time limit.
  void SetRollouts(int rollouts, int64_t max_moves) {
    if (rollouts < 1) Refuse("history engine: rollouts must be >= 1");
    config_.rollouts = rollouts;
    config_.rollout_max_moves = max_moves;
  }

 protected:
  struct Gadget {
    int64_t row;
    double alternative;
    bool has_alternative;
    double prior;
  };

  // (AddGadget goes before any root, so the gadget's rows are the gadget
  // player's first.)
  bool IsGadgetRow(int p, int64_t r) const {
    return p == gadget_player_ && r < static_cast<int64_t>(gadget_.size());
  }

  int64_t KeyId(Key key) {
    const int64_t found = key_ids_.Find(key, 0);
    if (found >= 0) return found;
    int64_t id = static_cast<int64_t>(key_hashes_.size());
    key_ids_.Insert(key, 0, id);
    key_hashes_.push_back(key);
    return id;
  }

  // A key from Python: HistoryKeys' 16 hex digits.
  static Key ParseKey(const std::string& text) {
    Key key;
    if (!blake2b::ParseHex64(text, &key)) {
      Refuse("history engine: a key is 16 hex digits (HistoryKeys'), got '" +
             text.substr(0, 40) + "'");
    }
    return key;
  }

  // infostates.py's HistoryKeys, for one history: the digest of the
  // information_state_string, a waiting player's and a finished game's
  // marked as such.
  Key StringKey(const State& s, int p) const {
    const int actor = s.IsTerminal() ? kTerminal : s.CurrentPlayer();
    std::string key = s.InformationStateString(p);
    if (actor != p) {
      key += actor == kTerminal ? " [game over]" : " [not acting]";
    }
    return blake2b::Digest64(key);
  }

  std::string Observe(const State& s, int p) const {
    return aoh_uses_infostate_ ? s.InformationStateString(p)
                               : s.ObservationString(p);
  }

  // infostates.py's _hash_extend: an action-observation history's key
  // extended by one step, the digest of the parent key's hex digits (none
  // at the root), the player's own action where it acted, and what it
  // observes now.
  // (The message is built in a buffer of the thread's own: no allocation
  // once it has grown, where concatenated strings cost several.)
  static Key AohExtend(const Key* parent, Action own, bool has_own,
                       const std::string& obs) {
    thread_local std::string message;
    message.clear();
    if (parent != nullptr) blake2b::AppendHex64(*parent, &message);
    if (has_own) {
      char digits[24];
      const int n = std::snprintf(digits, sizeof(digits), " a%lld",
                                  static_cast<long long>(own));
      message.append(digits, n);
    }
    message += " | ";
    message += obs;
    return blake2b::Digest64(message);
  }

  std::pair<Key, Key> RootKeys(const State& s) const {
    if (config_.keys == "history") return {0, 0};
    if (config_.keys == "string") return {StringKey(s, 0), StringKey(s, 1)};
    std::unique_ptr<State> replay = game_->NewInitialState();
    Key k[2] = {AohExtend(nullptr, 0, false, Observe(*replay, 0)),
                AohExtend(nullptr, 0, false, Observe(*replay, 1))};
    for (Action a : s.History()) {
      const int actor = replay->CurrentPlayer();
      replay->ApplyAction(a);
      for (int p = 0; p < 2; ++p) {
        k[p] = AohExtend(&k[p], a, actor == p, Observe(*replay, p));
      }
    }
    return {k[0], k[1]};
  }

  // Both players' keys at `child`, reached from node n (its state
  // `parent`) by `a`. Reads the tree, writes nothing.
  std::pair<Key, Key> ChildKeyHashes(int64_t n, const State& parent,
                                     Action a, const State& child) const {
    if (config_.keys == "history") return {0, 0};
    if (config_.keys == "string") {
      return {StringKey(child, 0), StringKey(child, 1)};
    }
    const int actor = parent.CurrentPlayer();
    Key keys[2];
    for (int p = 0; p < 2; ++p) {
      keys[p] = AohExtend(&key_hashes_[key_[p][n]], a, actor == p,
                          Observe(child, p));
    }
    return {keys[0], keys[1]};
  }

  std::pair<int64_t, int64_t> ChildKeys(int64_t n, const State& parent,
                                        Action a, const State& child) {
    auto keys = ChildKeyHashes(n, parent, a, child);
    return {KeyId(keys.first), KeyId(keys.second)};
  }

  int64_t AddNode(int64_t parent, int64_t slot, Action action, double edge,
                  double reach, std::unique_ptr<State> state, int64_t k0,
                  int64_t k1, const int64_t seqs[2], double value,
                  int64_t depth, int64_t origin) {
    const int64_t n = Size();
    const int actor = state == nullptr ? kTerminal
                      : state->IsTerminal() ? kTerminal
                                            : state->CurrentPlayer();
    if (actor != kTerminal && actor != kChance && (actor < 0 || actor > 1)) {
      Refuse("history engine: player " + std::to_string(actor) +
             " acts at a history; the engine takes two-player turn-based "
             "games");
    }
    if (actor == kTerminal && state != nullptr) {
      value = state->Returns()[0];
    } else if (std::isnan(value)) {
      if (config_.network_leaves) {
        value = 0.0;  // until set_leaf_values
        pending_.push_back(n);
      } else {
        value = Rollout(*state);
      }
    }
    values_valid_ = false;
    parent_.push_back(parent);
    backed_sum_.push_back(value);
    backed_n_.push_back(1.0);
    prior_start_.push_back(-1);
    slot_.push_back(slot);
    action_.push_back(action);
    edge_.push_back(edge);
    reach_.push_back(reach);
    actor_.push_back(actor);
    key_[0].push_back(k0);
    key_[1].push_back(k1);
    seq_[0].push_back(seqs[0]);
    seq_[1].push_back(seqs[1]);
    value_.push_back(value);
    leaf_term_.push_back(reach * value);
    child_start_.push_back(-1);
    child_count_.push_back(0);
    row_.push_back(-1);
    depth_.push_back(depth);
    origin_.push_back(origin < 0 ? n : origin);
    origin_index_.push_back(origin < 0 ? static_cast<int64_t>(roots_.size())
                                       : origin_index_[origin]);
    leaf_.push_back(1);
    full_.push_back(actor == kTerminal);
    states_.push_back(actor == kTerminal ? nullptr : std::move(state));
    return n;
  }

  // A child of n in slot `slot` from a state (its keys given).
  int64_t AddNodeFrom(int64_t n, int64_t slot, Action a, double edge,
                      std::unique_ptr<State> state, Key key0, Key key1,
                      int actor, double value) {
    int64_t seqs[2] = {seq_[0][n], seq_[1][n]};
    if (actor_[n] >= 0) {
      seqs[actor_[n]] = rows_[actor_[n]].offset[row_[n]] + slot;
    }
    const int64_t c = Size();
    if (state == nullptr && actor != kTerminal) {
      // (Old leaves always hold their state; interior nodes are rebuilt.)
      state = StateOf(n);
      state->ApplyAction(a);
    }
    AddNode(n, slot, a, edge, reach_[n] * edge, std::move(state), KeyId(key0),
            KeyId(key1), seqs, value, depth_[n] + 1, origin_[n]);
    if (actor == kTerminal) {
      actor_[c] = kTerminal;
      full_[c] = 1;
    }
    children_[child_start_[n] + slot] = c;
    leaf_[n] = 0;
    leaf_term_[n] = 0.0;
    return c;
  }

  void ReserveChildren(int64_t n, int64_t k) {
    if (child_start_[n] >= 0) return;
    child_start_[n] = static_cast<int64_t>(children_.size());
    child_count_[n] = k;
    children_.resize(children_.size() + k, -1);
  }

  int64_t ChildCount(int64_t n) const { return child_count_[n]; }

  // The row of decision node n (made where new, with `actions` or its
  // state's legal actions); reserves its child slots.
  int64_t MakeRow(int64_t n, const std::vector<Action>* actions = nullptr) {
    if (row_[n] >= 0) return row_[n];
    const int p = actor_[n];
    std::vector<Action> legal =
        actions != nullptr ? *actions : states_[n]->LegalActions();
    int64_t row = -1;
    const bool puct = config_.growth == "puct";
    if (config_.keys == "history") {
      row = NewRow(p, 0, seq_[p][n], legal, !puct);
    } else {
      const Key key = key_hashes_[key_[p][n]];
      const int64_t found = rows_[p].index.Find(key, seq_[p][n]);
      if (found >= 0) {
        row = found;
      } else {
        row = NewRow(p, key_[p][n], seq_[p][n], legal, !puct);
        rows_[p].index.Insert(key, seq_[p][n], row);
        Rows& rows = rows_[p];
        const int64_t off = rows.offset[row], k = rows.count[row];
        if (freeze_player_ == p &&
            key_hashes_[key_[p][origin_[n]]] != freeze_key_) {
          auto f = freeze_.find(key);
          rows.frozen[row] = 1;
          for (int64_t i = 0; i < k; ++i) {
            rows.current[off + i] =
                (f != freeze_.end() &&
                 static_cast<int64_t>(f->second.size()) == k)
                    ? f->second[i]
                    : 1.0 / static_cast<double>(k);
          }
        }
        auto w = warm_[p].find(key);
        if (w != warm_[p].end() &&
            static_cast<int64_t>(w->second.size()) == k) {
          for (int64_t i = 0; i < k; ++i) rows.regrets[off + i] = w->second[i];
        }
      }
    }
    row_[n] = row;
    ReserveChildren(n, rows_[p].count[row]);
    return row;
  }

  int64_t NewRow(int p, int64_t key, int64_t parent_seq,
                 const std::vector<Action>& actions, bool active) {
    Rows& rows = rows_[p];
    const int64_t row = rows.size();
    rows.key.push_back(key);
    rows.parent_seq.push_back(parent_seq);
    rows.offset.push_back(rows.sequences());
    rows.count.push_back(static_cast<int32_t>(actions.size()));
    int32_t level = 0;
    if (parent_seq >= rows.num_root) {
      // (The row owning parent_seq: the last whose offset is <= it.)
      auto it = std::upper_bound(rows.offset.begin(), rows.offset.end() - 1,
                                 parent_seq);
      level = rows.level[(it - rows.offset.begin()) - 1] + 1;
    }
    rows.level.push_back(level);
    rows.frozen.push_back(0);
    rows.row_value.push_back(0.0);
    const double k = static_cast<double>(actions.size());
    for (Action a : actions) {
      rows.AddSequence(a);
      rows.active.back() = active ? 1 : 0;
      rows.current.back() = active ? 1.0 / k : 0.0;
      rows.reach.back() = 0.0;
    }
    return row;
  }

  int64_t AddChild(int64_t n, int64_t slot, Action a, double prob,
                   double value = std::numeric_limits<double>::quiet_NaN()) {
    const State& state = *states_[n];
    std::unique_ptr<State> child = state.Child(a);
    auto keys = ChildKeys(n, state, a, *child);
    return AttachChild(n, slot, a, prob, std::move(child), keys.first,
                       keys.second, value);
  }

  // Child `child` of n in slot `slot` (its key ids k0, k1; value NaN:
  // rollouts, or its return where terminal).
  int64_t AttachChild(int64_t n, int64_t slot, Action a, double prob,
                      std::unique_ptr<State> child, int64_t k0, int64_t k1,
                      double value) {
    int64_t seqs[2] = {seq_[0][n], seq_[1][n]};
    const int p = actor_[n];
    if (p >= 0) {
      Rows& rows = rows_[p];
      seqs[p] = rows.offset[row_[n]] + slot;
      if (!rows.active[seqs[p]]) {
        rows.active[seqs[p]] = 1;
        // (A slot joins its row with no regret; the row rematches.)
        rows.Match(row_[n], config_.predictive,
                   rows.current.data() + rows.offset[row_[n]]);
      }
    }
    const int64_t c =
        AddNode(n, slot, a, prob, reach_[n] * prob, std::move(child), k0, k1,
                seqs, value, depth_[n] + 1, origin_[n]);
    children_[child_start_[n] + slot] = c;
    leaf_[n] = 0;
    leaf_term_[n] = 0.0;
    return c;
  }

  // After n gained children: drop its state once it has all of them.
  void Finish(int64_t n) {
    for (int64_t i = 0; i < child_count_[n]; ++i) {
      if (children_[child_start_[n] + i] < 0) return;
    }
    full_[n] = 1;
    states_[n].reset();
  }

  // Player 0's mean return over `rollouts` random games from `state`
  // (rollouts.h); their actions count as the phase's work.
  double Rollout(const State& state) {
    double total = 0.0;
    for (int k = 0; k < config_.rollouts; ++k) {
      total += rollouts::RandomRollout(state, rng_, config_.rollout_max_moves,
                                       config_.draw, &work_);
    }
    return total / config_.rollouts;
  }

  std::shared_ptr<const open_spiel::Game> game_;
  Config config_;
  uint64_t rng_;
  bool aoh_uses_infostate_ = false;
  Rows rows_[2];
  // Per node.
  std::vector<int64_t> parent_, slot_, child_start_, child_count_, row_,
      depth_, origin_, origin_index_;
  std::vector<Action> action_;
  std::vector<double> edge_, reach_, value_;
  // A CFR+ pass's term of each node: reach_ times value_ at a leaf, 0 once
  // it has children (Iterate sweeps it without a branch).
  std::vector<double> leaf_term_;
  std::vector<double> backed_sum_, backed_n_;  // leaf values made below
  std::vector<int> actor_;
  std::vector<int64_t> key_[2], seq_[2];
  std::vector<uint8_t> leaf_, full_;
  std::vector<std::unique_ptr<State>> states_;
  std::vector<int64_t> children_;
  std::vector<int64_t> roots_;
  std::vector<std::vector<Action>> root_history_;
  std::vector<Gadget> gadget_;
  int gadget_player_ = -1;
  FlatIndex key_ids_;  // key -> key id
  std::vector<Key> key_hashes_;  // by key id
  std::unordered_map<Key, std::vector<double>> warm_[2];
  int freeze_player_ = -1;
  std::unordered_map<Key, std::vector<double>> freeze_;
  Key freeze_key_ = 0;
  std::vector<int64_t> pending_;
  // Pending leaves' walks, backed up when their values come (PUCT growth).
  std::unordered_map<int64_t, std::vector<int64_t>> deferred_;
  // A decision node's PUCT priors over its legal actions start at
  // priors_[prior_start_[n]] (-1: uniform).
  std::vector<int64_t> prior_start_;
  std::vector<double> priors_;
  int64_t iterations_ = 0;
  double averaging_clock_ = 0.0;
  // NodeValues' result, until a node, an iteration or a leaf value changes
  // it (AddNode, Iterate, SetLeafValues).
  mutable std::vector<double> values_cache_;
  mutable bool values_valid_ = false;
  std::unordered_map<int64_t, std::vector<int64_t>> kept_index_;
  int64_t kept_for_ = -1;
  int kept_actor_ = -1;
  int64_t work_ = 0;  // actions played and walk steps in this phase
};

}  // namespace history_engine
}  // namespace open_spiel_sog

#endif  // OPEN_SPIEL_SOG_NATIVE_HISTORY_TREE_H_
