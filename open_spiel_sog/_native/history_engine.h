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


// The native history engine (DESIGN.md section 16): GT-CFR over a tree of
// histories (history_tree.h) of an OpenSpiel C++ game, grown and solved in
// one call per batch of simulations or up to a deadline.
//
// The CFR+ iteration is algorithms/sog/anchored/history_tree.py's
// (HistoryTree.iterate: alternating updates, the average weighted t^power,
// PCFR+ when `predictive`), so a fully expanded tree solves to the same
// values in both (tests/history_engine_test.py).
//
// Two ways to grow it:
//  * "anchored" (fog-of-war games, section 15): a walk from a root history,
//    the explorer playing half uniform and half its current policy, the other
//    player its current policy; the leaf reached gets all its children.
//  * "puct" (perfect-information games, where a history is an infostate and
//    the tree is the public tree): a walk from the root that samples
//    1/2 PUCT + 1/2 the CFR average policy at each decision (growth.py's
//    rule), and adds the one child it picks where that child is missing
//    (SoG's k = 1).
// Leaves are valued by uniform random rollouts (rollouts.h), or handed to
// Python in one batch per update phase (`pending_leaves` /
// `set_leaf_values`, the hook of a network).
//
// Threads: `Run` releases the GIL. A timed anchored run with rollout leaves
// and `threads` 2 runs on two (RunTwoThreads, Obscuro's expander beside
// its CFR thread); otherwise one. The engine must not be called from two
// Python threads at once (the Python wrapper holds it).

#ifndef OPEN_SPIEL_SOG_NATIVE_HISTORY_ENGINE_H_
#define OPEN_SPIEL_SOG_NATIVE_HISTORY_ENGINE_H_

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "open_spiel/python/pybind11/pybind11.h"
#include "pybind11/numpy.h"
#include "open_spiel/spiel.h"
#include "blake2b.h"  // same folder (blake2b_hex)
#include "history_tree.h"  // same folder

namespace open_spiel_sog {
namespace history_engine {

class HistoryEngine : public HistoryTree {
 public:
  using HistoryTree::HistoryTree;

  // Adds old engine's node n as a root of weight `weight` with its
  // descendants breadth first, at most `budget` nodes (deeper ones become
  // leaves, valued by `values`, old's node values). Returns nodes added.
  int64_t CopySubtree(const HistoryEngine& old, int64_t n, double weight,
                      int64_t enter_seq, int64_t budget) {
    const std::vector<double>& values = old.NodeValues();
    std::unique_ptr<State> state = old.StateOf(n);
    int64_t root = AddRootKeys(*state, weight, enter_seq, values[n],
                               old.key_hashes_[old.key_[0][n]],
                               old.key_hashes_[old.key_[1][n]]);
    std::vector<std::pair<int64_t, int64_t>> queue = {{n, root}}, next;
    int64_t added = 1;
    while (!queue.empty()) {
      next.clear();
      for (auto [o, m] : queue) {
        if (old.leaf_[o] || !old.full_[o] ||
            added + old.child_count_[o] > budget) {
          if (!old.leaf_[o] && actor_[m] != kTerminal && !states_[m]) {
            states_[m] = old.StateOf(o);
          }
          continue;
        }
        const int64_t kids = old.child_count_[o];
        if (actor_[m] >= 0) {
          const Rows& orows = old.rows_[old.actor_[o]];
          const int64_t orow = old.row_[o];
          std::vector<Action> acts(
              orows.action.begin() + orows.offset[orow],
              orows.action.begin() + orows.offset[orow] + orows.count[orow]);
          MakeRow(m, &acts);
        } else {
          ReserveChildren(m, kids);
        }
        for (int64_t i = 0; i < kids; ++i) {
          int64_t k = old.children_[old.child_start_[o] + i];
          std::unique_ptr<State> s =
              old.states_[k] ? old.states_[k]->Clone() : nullptr;
          int64_t c = AddNodeFrom(m, i, old.action_[k], old.edge_[k],
                                  std::move(s),
                                  old.key_hashes_[old.key_[0][k]],
                                  old.key_hashes_[old.key_[1][k]],
                                  old.actor_[k], values[k]);
          next.push_back({k, c});
        }
        Finish(m);
        added += kids;
      }
      std::swap(queue, next);
    }
    return added;
  }

  // --- Network leaves ------------------------------------------------------

  // Leaves made since the last call that wait for a value (network_leaves).
  std::vector<int64_t> PendingLeaves() const { return pending_; }

  // Values (player 0's) of the pending leaves `nodes`, and where `priors`
  // has a row per node (a distribution over the game's distinct actions),
  // each decision leaf's PUCT prior over its legal actions. PUCT growth's
  // walks that made them back the values up now.
  void SetLeafValues(const std::vector<int64_t>& nodes,
                     const std::vector<double>& values,
                     const std::vector<std::vector<double>>& priors) {
    if (nodes.size() != values.size() ||
        (!priors.empty() && priors.size() != nodes.size())) {
      Refuse("history engine: set_leaf_values needs one value (and one "
             "prior row, if any) per node");
    }
    for (size_t i = 0; i < nodes.size(); ++i) {
      const int64_t n = nodes[i];
      if (n < 0 || n >= Size()) Refuse("history engine: no such node");
      value_[n] = values[i];
      if (leaf_[n]) leaf_term_[n] = reach_[n] * values[i];
      backed_sum_[n] = values[i] * backed_n_[n];
      auto d = deferred_.find(n);
      if (d != deferred_.end()) {
        for (int64_t m : d->second) {
          backed_sum_[m] += values[i];
          backed_n_[m] += 1.0;
        }
        deferred_.erase(d);
      }
      if (priors.empty() || actor_[n] < 0) continue;
      const std::vector<double>& row = priors[i];
      // (The row's slots where the walks of a batch made it already.)
      std::vector<Action> legal;
      if (row_[n] >= 0) {
        const Rows& rows = rows_[actor_[n]];
        const int64_t off = rows.offset[row_[n]];
        legal.assign(rows.action.begin() + off,
                     rows.action.begin() + off + rows.count[row_[n]]);
      } else {
        legal = states_[n]->LegalActions();
      }
      double total = 0.0;
      for (Action a : legal) {
        if (a < 0 || a >= static_cast<Action>(row.size())) {
          Refuse("history engine: a prior row is shorter than the game's "
                 "distinct actions");
        }
        total += std::max(row[a], 0.0);
      }
      prior_start_[n] = static_cast<int64_t>(priors_.size());
      for (Action a : legal) {
        priors_.push_back(total > 0.0 ? std::max(row[a], 0.0) / total
                                      : 1.0 / legal.size());
      }
    }
    pending_.clear();
    values_valid_ = false;
  }

  // --- Searching -----------------------------------------------------------

  // Runs growth simulations and CFR+ iterations until `simulations` (<0: no
  // cap) are done, the tree holds `max_nodes`, or `seconds` (<=0: none)
  // have passed (then the iterations of the last phase end with it).
  // Phases: with `expansions_per_update` c > 0, SoG(s, c): phases of
  // ceil(c) simulations, each followed by ceil(grown / c) iterations. With
  // c <= 0 ("paced"), a phase grows until its work (actions played by its
  // rollouts and steps of its walks) times kVisitsPerAction reaches the
  // work of one iteration (the tree's nodes plus both players' sequences),
  // then one iteration runs: the passes take a bounded share of the search
  // however large the tree (a fixed c makes a search's cost grow with the
  // square of its simulations). Both are counts, so an untimed search is a
  // function of its seed. Returns (simulations, iterations, walks). The GIL
  // is released.
  static constexpr double kVisitsPerAction = 50.0;

  std::tuple<int64_t, int64_t, int64_t> Run(int64_t simulations,
                                            double expansions_per_update,
                                            double seconds,
                                            int64_t max_nodes) {
    if (roots_.empty()) Refuse("history engine: no root");
    if (std::isnan(expansions_per_update)) {
      Refuse("history engine: expansions_per_update is not a number");
    }
    if (config_.network_leaves) {
      return RunNetwork(simulations, expansions_per_update, seconds,
                        max_nodes);
    }
    py::gil_scoped_release release;
    if (config_.threads == 2 && seconds > 0 && config_.growth == "anchored") {
      return RunTwoThreads(simulations, seconds, max_nodes);
    }
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    const bool timed = seconds > 0;
    const auto deadline =
        start + std::chrono::duration_cast<Clock::duration>(
                    std::chrono::duration<double>(timed ? seconds : 0.0));
    auto past = [&]() { return timed && Clock::now() >= deadline; };
    RootWeights();
    int64_t sims = 0, iterations = 0, walks = 0;
    const bool paced = expansions_per_update <= 0;
    const int64_t phase =
        paced ? INT64_MAX
              : std::max<int64_t>(1, static_cast<int64_t>(std::ceil(
                                         expansions_per_update - 1e-9)));
    const int64_t limit = simulations < 0 ? INT64_MAX : simulations;
    // Walks that add nothing (terminal histories in the tree) end an
    // untimed search after 20 per simulation asked.
    const int64_t walk_cap = limit == INT64_MAX
                                 ? INT64_MAX
                                 : 20 * std::max<int64_t>(limit, 50);
    while (true) {
      int64_t grown = 0;
      work_ = 0;
      const double iteration_work =
          static_cast<double>(Size() + rows_[0].sequences() +
                              rows_[1].sequences());
      for (int64_t i = 0; i < phase; ++i) {
        if (sims >= limit || Size() >= max_nodes || walks >= walk_cap) break;
        ++walks;
        if (Simulate(walks % 2)) {
          ++sims;
          ++grown;
        }
        if (past()) break;
        if ((walks & 1023) == 0) CheckSignals();
        if (paced && static_cast<double>(work_) * kVisitsPerAction >=
                         iteration_work) {
          break;
        }
      }
      if (config_.network_leaves && !pending_.empty()) {
        // The caller values the pending leaves, then calls Run again.
        return {sims, iterations, walks};
      }
      const int64_t updates =
          paced ? 1
                : std::max<int64_t>(
                      1, static_cast<int64_t>(std::ceil(
                             grown / expansions_per_update - 1e-9)));
      for (int64_t i = 0; i < updates; ++i) {
        Iterate();
        ++iterations;
        if (past()) break;
        if ((iterations & 63) == 0) CheckSignals();
      }
      bool done = sims >= limit || Size() >= max_nodes || past() ||
                  walks >= walk_cap;
      if (!timed && limit == INT64_MAX) done = true;
      if (done) break;
    }
    return {sims, iterations, walks};
  }

  // Run's timed anchored search on two threads (Obscuro's design): the
  // CFR thread runs CFR+ iterations back to back over the tree as it
  // stands, while this thread, the expander, walks the same tree (reading
  // the policy of the last commit, copied) and builds the children of the
  // leaves it reaches (states, keys, rollout values) without writing to
  // the tree. Once an iteration has ended since the last commit, the
  // expander asks the CFR thread to pause after its current iteration,
  // walking on until it does, then commits what it built (nodes appended
  // to the structure of arrays, new rows) and lets it go on. No write
  // meets a read: the tree changes only while the CFR thread waits. On a
  // tree with nothing left to grow the CFR thread never waits. Once the
  // tree holds `max_nodes` (or the simulation cap is reached) the
  // expander commits what it built and waits while the CFR thread
  // iterates on to the deadline. At the deadline uncommitted expansions
  // are dropped, and an iteration runs if none has since the last commit,
  // so every leaf of the tree returned has been iterated. Returns
  // (simulations, iterations, walks); called without the GIL.
  std::tuple<int64_t, int64_t, int64_t> RunTwoThreads(int64_t simulations,
                                                      double seconds,
                                                      int64_t max_nodes);

  // Run with network leaves: grows until `leaf_batch` leaves are pending,
  // or a phase ends (CFR+ iterations are owed by the simulations grown)
  // with leaves pending, or the budget is spent; then returns. The caller
  // values the pending leaves (set_leaf_values) and calls again with what
  // is left of its budget, and the iterations owed run first: no
  // iteration reads a leaf that waits for its value (ReBeL's one network
  // call per iteration, at most). Every walk is a simulation. The phases
  // carry over between calls, and a call that ends the budget ends with
  // the iteration owed. Counts only the call's own simulations, iterations
  // and walks.
  std::tuple<int64_t, int64_t, int64_t> RunNetwork(int64_t simulations,
                                                   double expansions_per_update,
                                                   double seconds,
                                                   int64_t max_nodes) {
    if (!pending_.empty()) {
      Refuse("history engine: run before set_leaf_values valued the pending "
             "leaves");
    }
    if (config_.leaf_batch < 1) Refuse("history engine: leaf_batch must be >= 1");
    // (The roots' weights: anchored growth draws a walk's root by them.)
    if (root_cdf_.size() != roots_.size()) RootWeights();
    py::gil_scoped_release release;
    using Clock = std::chrono::steady_clock;
    const auto deadline =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(
                               seconds > 0 ? seconds : 0.0));
    auto past = [&]() { return seconds > 0 && Clock::now() >= deadline; };
    const bool paced = expansions_per_update <= 0;
    const int64_t limit = simulations < 0 ? INT64_MAX : simulations;
    int64_t sims = 0, iterations = 0, walks = 0;
    auto owed = [&]() -> int64_t {
      if (grown_ == 0) return 0;
      if (paced) {
        const double iteration_work = static_cast<double>(
            Size() + rows_[0].sequences() + rows_[1].sequences());
        return static_cast<double>(work_) * kVisitsPerAction >= iteration_work
                   ? 1 : 0;
      }
      if (static_cast<double>(grown_) < expansions_per_update - 1e-9) return 0;
      return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(
                                      grown_ / expansions_per_update - 1e-9)));
    };
    while (true) {
      const bool done = sims >= limit || Size() >= max_nodes || past() ||
                        walks >= 20 * std::max<int64_t>(limit == INT64_MAX
                                                            ? 1 : limit, 50);
      int64_t updates = owed();
      if (done && (grown_ > 0 || iterations_ == 0)) {
        updates = std::max<int64_t>(updates, 1);
      }
      // (An iteration reads every leaf's value: the phase's leaves are
      // valued first, and the next call runs it.)
      if (updates > 0 && !pending_.empty()) break;
      for (int64_t i = 0; i < updates; ++i) {
        Iterate();
        ++iterations;
      }
      if (updates > 0) {
        grown_ = 0;
        work_ = 0;
      }
      if (done) break;
      ++walks;
      ++walk_count_;
      // (A walk that ends at a terminal history backs its value up, as an
      // MCTS simulation does, and counts as a simulation: a won position
      // does not spin.)
      Simulate(walk_count_ % 2);
      ++sims;
      ++grown_;
      if (static_cast<int64_t>(pending_.size()) >= config_.leaf_batch) break;
      if ((walks & 1023) == 0) CheckSignals();
    }
    return {sims, iterations, walks};
  }

  // The pending leaves' network inputs: (observation tensors, from the
  // acting player's view, player 0's at chance nodes; legal-action masks
  // over the game's distinct actions; the acting players, -1 at chance).
  std::tuple<py::array_t<float>, py::array_t<float>, std::vector<int>>
  LeafInputs(const std::vector<int64_t>& nodes) const {
    const int64_t width = game_->ObservationTensorSize();
    const int64_t actions = game_->NumDistinctActions();
    py::array_t<float> obs({static_cast<int64_t>(nodes.size()), width});
    py::array_t<float> legal({static_cast<int64_t>(nodes.size()), actions});
    float* o = obs.mutable_data();
    float* l = legal.mutable_data();
    std::fill(l, l + nodes.size() * actions, 0.0f);
    std::vector<int> players;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const int64_t n = nodes[i];
      if (n < 0 || n >= Size() || actor_[n] == kTerminal) {
        Refuse("history engine: leaf_inputs takes non-terminal nodes");
      }
      // (A leaf of a batch that later walks of it filled holds no state.)
      std::unique_ptr<State> rebuilt = states_[n] ? nullptr : StateOf(n);
      const State& state = states_[n] ? *states_[n] : *rebuilt;
      const int actor = state.CurrentPlayer();
      players.push_back(actor >= 0 ? actor : -1);
      state.ObservationTensor(
          actor >= 0 ? actor : 0,
          absl::MakeSpan(o + i * width, static_cast<size_t>(width)));
      if (actor >= 0) {
        for (Action a : state.LegalActions()) l[i * actions + a] = 1.0f;
      }
    }
    return {obs, legal, players};
  }

  // What the token network reads of nodes `nodes` (anchored growth's leaf
  // groups, DESIGN.md section 17): (each node's two infostate tensors
  // [n, 2, T], OpenSpiel's information_state_tensor where the game has
  // one, else each player's observation_tensor; both key ids [n, 2]; chance
  // reach, the root weight in [n]; each player's reach of its sequence
  // under the current policy [n, 2]; the acting players, -1 at chance;
  // the nodes' action sequences [n, L], padded with -1, L the longest).
  std::tuple<py::array_t<float>, py::array_t<int64_t>, py::array_t<double>,
             py::array_t<double>, std::vector<int>, py::array_t<int64_t>>
  LeafData(const std::vector<int64_t>& nodes) {
    const bool info = game_->GetType().provides_information_state_tensor;
    const int64_t width = info ? game_->InformationStateTensorSize()
                               : game_->ObservationTensorSize();
    const int64_t n = static_cast<int64_t>(nodes.size());
    Reach(0);
    Reach(1);
    py::array_t<float> tensors({n, int64_t{2}, width});
    py::array_t<int64_t> keys({n, int64_t{2}});
    py::array_t<double> chance(n);
    py::array_t<double> reaches({n, int64_t{2}});
    float* t = tensors.mutable_data();
    int64_t* k = keys.mutable_data();
    double* c = chance.mutable_data();
    double* r = reaches.mutable_data();
    std::vector<int> players;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t m = nodes[i];
      if (m < 0 || m >= Size() || actor_[m] == kTerminal) {
        Refuse("history engine: leaf_data takes non-terminal nodes");
      }
      std::unique_ptr<State> rebuilt = states_[m] ? nullptr : StateOf(m);
      const State& state = states_[m] ? *states_[m] : *rebuilt;
      for (int p = 0; p < 2; ++p) {
        auto span = absl::MakeSpan(t + (i * 2 + p) * width,
                                   static_cast<size_t>(width));
        if (info) {
          state.InformationStateTensor(p, span);
        } else {
          state.ObservationTensor(p, span);
        }
        k[i * 2 + p] = key_[p][m];
        r[i * 2 + p] = rows_[p].reach[seq_[p][m]];
      }
      c[i] = reach_[m];
      players.push_back(actor_[m] >= 0 ? actor_[m] : -1);
    }
    std::vector<std::vector<Action>> histories;
    histories.reserve(nodes.size());
    size_t length = 0;
    for (int64_t m : nodes) {
      histories.push_back(History(m));
      length = std::max(length, histories.back().size());
    }
    py::array_t<int64_t> actions({n, static_cast<int64_t>(length)});
    int64_t* a = actions.mutable_data();
    std::fill(a, a + n * static_cast<int64_t>(length), int64_t{-1});
    for (int64_t i = 0; i < n; ++i) {
      std::copy(histories[i].begin(), histories[i].end(), a + i * length);
    }
    return {tensors, keys, chance, reaches, players, actions};
  }

  // Lets Python's signal handlers run (Ctrl-C raises KeyboardInterrupt
  // out of a long `run`, which holds no GIL otherwise).
  static void CheckSignals() {
    py::gil_scoped_acquire acquire;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  }

  // One CFR+ iteration (HistoryTree.iterate): alternating updates, player
  // 0 first; each player's pass is the leaves' values into its sequences,
  // one backward loop over rows (row values into parent sequences), and one
  // forward loop that adds to the average (own reach of the old policy),
  // updates regrets and rematches the row in place.
  void Iterate() {
    ++iterations_;
    values_valid_ = false;
    averaging_clock_ +=
        config_.average_by_work
            ? static_cast<double>(Size() + rows_[0].sequences() +
                                  rows_[1].sequences())
            : 1.0;
    const double weight =
        std::pow(averaging_clock_, config_.averaging_power);
    Reach(0);
    Reach(1);
    for (int p = 0; p < 2; ++p) {
      const int o = 1 - p;
      Rows& rows = rows_[p];
      const std::vector<double>& other = rows_[o].reach;
      const double sign = p == 0 ? 1.0 : -1.0;
      std::vector<double>& v = rows.value;
      std::fill(v.begin(), v.end(), 0.0);
      {
        const int64_t nodes = Size();
        const int64_t* __restrict sp = seq_[p].data();
        const int64_t* __restrict so = seq_[o].data();
        const double* __restrict term = leaf_term_.data();
        const double* __restrict reach_o = other.data();
        double* __restrict out = v.data();
        for (int64_t n = 0; n < nodes; ++n) {
          out[sp[n]] += sign * term[n] * reach_o[so[n]];
        }
      }
      if (gadget_player_ >= 0) {
        const int g = gadget_player_;
        const double gsign = g == 0 ? 1.0 : -1.0;
        for (const auto& gadget : gadget_) {
          if (!gadget.has_alternative) continue;
          int64_t exit_seq = rows_[g].offset[gadget.row];
          if (p == g) {
            v[exit_seq] += sign * gadget.prior * gsign * gadget.alternative *
                           other[0];
          } else {
            v[0] += sign * gadget.prior * gsign * gadget.alternative *
                    other[exit_seq];
          }
        }
      }
      const double* pol = rows.current.data();
      for (int64_t r = rows.size() - 1; r >= 0; --r) {
        const int64_t off = rows.offset[r], k = rows.count[r];
        double rv = 0.0;
        for (int64_t i = 0; i < k; ++i) rv += pol[off + i] * v[off + i];
        rows.row_value[r] = rv;
        v[rows.parent_seq[r]] += rv;
      }
      const std::vector<double>& own = rows.reach;  // of the old policy
      for (int64_t r = 0; r < rows.size(); ++r) {
        const int64_t off = rows.offset[r], k = rows.count[r];
        const double rv = rows.row_value[r];
        const double w = weight * own[rows.parent_seq[r]];
        const bool frozen = rows.frozen[r];
        for (int64_t i = 0; i < k; ++i) {
          double regret =
              (rows.active[off + i] && !frozen) ? v[off + i] - rv : 0.0;
          double g = rows.regrets[off + i] + regret;
          rows.regrets[off + i] = g > 0.0 ? g : 0.0;
          rows.last[off + i] = regret;
          rows.cumulative[off + i] += w * pol[off + i];
        }
        if (!frozen) {
          rows.Match(r, config_.predictive, rows.current.data() + off);
        }
      }
      if (p == 0) Reach(0);  // player 1 updates against the new policy
    }
  }

 private:
  // Player p's sequence reaches under its current policy.
  void Reach(int p) {
    Rows& rows = rows_[p];
    const std::vector<double>& policy = rows.current;
    std::vector<double>& reach = rows.reach;
    for (int64_t i = 0; i < rows.num_root; ++i) reach[i] = 1.0;
    for (int64_t r = 0; r < rows.size(); ++r) {
      const double base = reach[rows.parent_seq[r]];
      const int64_t off = rows.offset[r], k = rows.count[r];
      for (int64_t i = 0; i < k; ++i) reach[off + i] = base * policy[off + i];
    }
  }

  void RootWeights() {
    root_cdf_.clear();
    double total = 0.0;
    for (int64_t n : roots_) {
      total += reach_[n];
      root_cdf_.push_back(total);
    }
  }

  int64_t Sample(const std::vector<double>& cdf) {
    const double u = Uniform(rng_) * cdf.back();
    auto it = std::upper_bound(cdf.begin(), cdf.end(), u);
    return std::min<int64_t>(it - cdf.begin(),
                             static_cast<int64_t>(cdf.size()) - 1);
  }

  // A leaf's children as the expander builds them off the tree: what
  // Expand(node) adds, committed between rounds (RunTwoThreads).
  struct Prepared {
    int64_t node;
    std::vector<Action> actions;  // legal actions, or chance outcomes
    std::vector<double> probs;    // chance probabilities; 1 at decisions
    std::vector<std::unique_ptr<State>> states;
    std::vector<Key> keys[2];
    std::vector<double> values;  // rollouts; NaN where terminal
  };

  // An anchored walk (Simulate's) that writes nothing to the tree: it
  // reads the policy the last round left (walk_policy_) and returns the
  // leaf it reaches, or -1 at a terminal history.
  int64_t WalkTo(int explorer);

  // A chance node's child slot, drawn by the children's probabilities.
  int64_t ChanceSlot(int64_t n) {
    const int64_t k = child_count_[n];
    double u = Uniform(rng_), total = 0.0;
    for (int64_t i = 0; i < k; ++i) {
      total += edge_[children_[child_start_[n] + i]];
      if (u < total) return i;
    }
    return k - 1;
  }

  // An anchored walk's slot among `k` at a decision: the explorer plays
  // uniformly half the time, otherwise the policy `policy` (its k slots;
  // uniform where it is all zero).
  int64_t PolicySlot(bool explorer, const double* policy, int64_t k) {
    if (explorer && Uniform(rng_) < 0.5) {
      return static_cast<int64_t>(Mix(rng_) % k);
    }
    double total = 0.0;
    for (int64_t i = 0; i < k; ++i) total += policy[i];
    if (total <= 0) return static_cast<int64_t>(Mix(rng_) % k);
    double u = Uniform(rng_) * total, run = 0.0;
    for (int64_t i = 0; i < k; ++i) {
      run += policy[i];
      if (u < run) return i;
    }
    return k - 1;
  }

  // Leaf n's children, keys and rollout values, built without writing to
  // the tree (its state, keys and rows are read only).
  Prepared Prepare(int64_t n);

  // Adds a Prepared expansion to the tree (Expand's result).
  void Commit(Prepared* prep);

  // One walk; true where it added to the tree.
  bool Simulate(int explorer) {
    int64_t n = roots_.size() == 1 ? roots_[0] : roots_[Sample(root_cdf_)];
    const bool puct = config_.growth == "puct";
    path_.clear();
    walk_.clear();
    while (true) {
      const int actor = actor_[n];
      walk_.push_back(n);
      if (actor == kTerminal) {
        for (auto [q, s] : path_) rows_[q].visits[s] += 1.0;
        BackUp(value_[n], 1);
        return false;
      }
      if (actor == kChance) {
        if (leaf_[n]) {
          Expand(n);
          return true;
        }
        n = children_[child_start_[n] + ChanceSlot(n)];
        ++work_;
        continue;
      }
      ++work_;
      if (!puct) {
        if (leaf_[n]) {
          Expand(n);
          return true;
        }
        const Rows& rows = rows_[actor];
        n = children_[child_start_[n] +
                      PolicySlot(actor == explorer,
                                 rows.current.data() + rows.offset[row_[n]],
                                 rows.count[row_[n]])];
        continue;
      }
      // PUCT growth: select a slot; add its child where missing.
      MakeRow(n);
      const int64_t slot = Select(n);
      Rows& rows = rows_[actor];
      path_.push_back({actor, rows.offset[row_[n]] + slot});
      int64_t c = children_[child_start_[n] + slot];
      if (c < 0) {
        c = AddChild(n, slot, rows.action[rows.offset[row_[n]] + slot], 1.0);
        Finish(n);
        for (auto [q, s] : path_) rows_[q].visits[s] += 1.0;
        if (!pending_.empty() && pending_.back() == c) {
          deferred_[c] = walk_;  // backed up by set_leaf_values
        } else {
          BackUp(value_[c], 0);
        }
        return true;
      }
      n = c;
    }
  }

  // Adds a leaf value to the walk's nodes' backed-up means (the last
  // `skip_last` nodes already count it).
  void BackUp(double v, int skip_last) {
    const size_t end = walk_.size() - static_cast<size_t>(skip_last);
    for (size_t i = 0; i < end; ++i) {
      backed_sum_[walk_[i]] += v;
      backed_n_[walk_[i]] += 1.0;
    }
  }

  // growth.py's Growth.select with no virtual loss; the prior is uniform
  // unless set_leaf_values gave one.
  int64_t Select(int64_t n) {
    const int p = actor_[n];
    const Rows& rows = rows_[p];
    const int64_t r = row_[n], off = rows.offset[r], k = rows.count[r];
    const double normaliser = reach_[n] * rows_[1 - p].reach[seq_[1 - p][n]];
    const double fpu = rows.row_value[r];
    double visit_total = 0.0;
    for (int64_t i = 0; i < k; ++i) visit_total += rows.visits[off + i];
    const double sqrt_total = std::sqrt(visit_total + 1.0);
    const double u_range = config_.utility_range;
    const double uniform = 1.0 / static_cast<double>(k);
    const double* priors =
        prior_start_[n] >= 0 ? priors_.data() + prior_start_[n] : nullptr;
    int64_t best = 0;
    double best_score = 0.0;
    const bool backed = config_.q_values == "rollouts";
    const double sign = p == 0 ? 1.0 : -1.0;
    for (int64_t i = 0; i < k; ++i) {
      double q = 0.0;
      if (backed) {
        const int64_t c = children_[child_start_[n] + i];
        q = c >= 0 ? sign * backed_sum_[c] / backed_n_[c]
                   : sign * backed_sum_[n] / backed_n_[n];
      } else if (normaliser > 0.0 && iterations_ > 0) {
        q = (rows.active[off + i] ? rows.value[off + i] : fpu) / normaliser;
      }
      const double prior = priors != nullptr ? priors[i] : uniform;
      const double score = q + config_.c_puct * u_range * prior * sqrt_total /
                                   (1.0 + rows.visits[off + i]);
      if (i == 0 || score > best_score) {
        best = i;
        best_score = score;
      }
    }
    cfr_.assign(k, 0.0);
    double avg_total = 0.0, cfr_total = 0.0;
    for (int64_t i = 0; i < k; ++i) {
      cfr_[i] = rows.active[off + i] ? rows.cumulative[off + i] : 0.0;
      avg_total += cfr_[i];
    }
    for (int64_t i = 0; i < k; ++i) {
      cfr_[i] = avg_total > 0.0 ? cfr_[i] / avg_total : rows.current[off + i];
      cfr_total += cfr_[i];
    }
    if (cfr_total <= 0.0) {
      // (A row with no active slot yet: the CFR half is uniform.)
      for (int64_t i = 0; i < k; ++i) cfr_[i] = 1.0 / static_cast<double>(k);
      cfr_total = 1.0;
    }
    const double mix = config_.cfr_mix;
    if (mix <= 0.0) return best;
    const double u = Uniform(rng_);
    double running = 0.0;
    for (int64_t i = 0; i < k; ++i) {
      running += (1.0 - mix) * (i == best ? 1.0 : 0.0) +
                 mix * cfr_[i] / cfr_total;
      if (u < running) return i;
    }
    return k - 1;
  }

  int64_t grown_ = 0;       // RunNetwork: walks since the last update
  int64_t walk_count_ = 0;  // RunNetwork: walks (the explorer's parity)
  std::vector<int64_t> walk_;                  // the nodes of a walk
  std::vector<double> root_cdf_;
  std::vector<std::pair<int, int64_t>> path_;
  std::vector<double> cfr_;
  std::vector<double> walk_policy_[2];  // RunTwoThreads: the round's policy
};

}  // namespace history_engine
}  // namespace open_spiel_sog

#include "expander.h"  // same folder (HistoryEngine's two-thread run)

namespace open_spiel_sog {
namespace history_engine {

inline void Define(py::module_& m) {
  py::class_<Config>(m, "HistoryEngineConfig")
      .def(py::init<>())
      .def_readwrite("growth", &Config::growth)
      .def_readwrite("keys", &Config::keys)
      .def_readwrite("rollouts", &Config::rollouts)
      .def_readwrite("rollout_max_moves", &Config::rollout_max_moves)
      .def_readwrite("draw", &Config::draw)
      .def_readwrite("predictive", &Config::predictive)
      .def_readwrite("averaging_power", &Config::averaging_power)
      .def_readwrite("average_by_work", &Config::average_by_work)
      .def_readwrite("c_puct", &Config::c_puct)
      .def_readwrite("cfr_mix", &Config::cfr_mix)
      .def_readwrite("q_values", &Config::q_values)
      .def_readwrite("utility_range", &Config::utility_range)
      .def_readwrite("network_leaves", &Config::network_leaves)
      .def_readwrite("leaf_batch", &Config::leaf_batch)
      .def_readwrite("seed", &Config::seed)
      .def_readwrite("threads", &Config::threads);
  py::class_<HistoryEngine>(m, "HistoryEngine")
      .def(py::init<std::shared_ptr<const open_spiel::Game>, Config>(),
           py::arg("game"), py::arg("config"))
      .def("clear", &HistoryEngine::Clear)
      .def("add_root", &HistoryEngine::AddRoot, py::arg("state"),
           py::arg("weight") = 1.0, py::arg("enter_seq") = 0,
           py::arg("value") = std::numeric_limits<double>::quiet_NaN(),
           py::arg("key0") = "", py::arg("key1") = "")
      .def("add_gadget", &HistoryEngine::AddGadget)
      .def("warm", &HistoryEngine::Warm)
      .def("freeze", &HistoryEngine::Freeze)
      .def("expand", &HistoryEngine::Expand)
      .def("row_only", &HistoryEngine::RowOnly)
      .def("copy_subtree", &HistoryEngine::CopySubtree)
      .def("run", &HistoryEngine::Run, py::arg("simulations"),
           py::arg("expansions_per_update"), py::arg("seconds"),
           py::arg("max_nodes"))
      .def("iterate", &HistoryEngine::Iterate)
      .def("node_values", &HistoryEngine::NodeValues)
      .def("children", &HistoryEngine::Children)
      .def("keys", &HistoryEngine::Keys)
      .def("node", &HistoryEngine::Node)
      .def("roots", [](const HistoryEngine& e) { return e.Roots(); })
      .def("near_root_rows", &HistoryEngine::NearRootRows)
      .def("kept_nodes", &HistoryEngine::KeptNodes)
      .def("history", &HistoryEngine::History)
      .def("state", &HistoryEngine::StateOf)
      .def("warm_rows", &HistoryEngine::WarmRows)
      .def("row_policy", &HistoryEngine::RowPolicy)
      .def("set_rollouts", &HistoryEngine::SetRollouts)
      .def("pending_leaves", &HistoryEngine::PendingLeaves)
      .def("set_leaf_values", &HistoryEngine::SetLeafValues,
           py::arg("nodes"), py::arg("values"),
           py::arg("priors") = std::vector<std::vector<double>>())
      .def("leaf_inputs", &HistoryEngine::LeafInputs)
      .def("leaf_data", &HistoryEngine::LeafData)
      .def_property_readonly("iterations", &HistoryEngine::iterations)
      .def("__len__", &HistoryEngine::Size);
  m.def("blake2b_hex", &blake2b::HexDigest, py::arg("data"),
        py::arg("digest_size"),
        "hashlib.blake2b(data, digest_size=n).hexdigest() (the engine's "
        "long action-observation keys).");
}

}  // namespace history_engine
}  // namespace open_spiel_sog

#endif  // OPEN_SPIEL_SOG_NATIVE_HISTORY_ENGINE_H_
