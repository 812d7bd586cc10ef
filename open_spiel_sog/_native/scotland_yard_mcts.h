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

// Nijssen and Winands' MCTS for Scotland Yard: the search and playouts of
// the "scotland_yard_mcts" bot (bots/scotland_yard_mcts.py, whose docstring
// gives the method and its sources), line for line the Python twin's
// (`PythonEngine`): the same rules, the same SplitMix64 draws in the same
// order and the same floating-point operations, so that a seeded counted
// search returns the same visit counts in both
// (tests/scotland_yard_mcts_test.py).
//
// The position is the game's (scotland_yard.h's rules) without its records,
// held in fixed arrays so that a playout clones it without allocating; the
// detectives' possible-location set of Mr. X is a bit mask. One search is
// one call, the GIL released.

#ifndef OPEN_SPIEL_SOG_NATIVE_SCOTLAND_YARD_MCTS_H_
#define OPEN_SPIEL_SOG_NATIVE_SCOTLAND_YARD_MCTS_H_

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "open_spiel/python/pybind11/pybind11.h"
#include "rollouts.h"  // same folder (SplitMix64, Uniform)
#include "scotland_yard.h"  // same folder (Setup)

namespace open_spiel_sog {
namespace scotland_yard_mcts {

namespace py = ::pybind11;
using scotland_yard::kBlack;
using scotland_yard::kFerry;
using scotland_yard::Setup;

constexpr int kTaxi = 0;
constexpr int kMaxStations = 256;
constexpr int kMaxDetectives = 16;
constexpr int kNumCategories = 5;
enum Outcome { kOngoing = 0, kCaught, kMrxStuck, kSurvived, kDetectivesStuck };

// A set of stations.
struct Mask {
  std::array<uint64_t, kMaxStations / 64> w{};
  void Set(int s) { w[s >> 6] |= uint64_t{1} << (s & 63); }
  void Clear(int s) { w[s >> 6] &= ~(uint64_t{1} << (s & 63)); }
  bool Has(int s) const { return (w[s >> 6] >> (s & 63)) & 1; }
  Mask& operator|=(const Mask& o) {
    for (size_t i = 0; i < w.size(); ++i) w[i] |= o.w[i];
    return *this;
  }
  bool SubsetOf(const Mask& o) const {
    for (size_t i = 0; i < w.size(); ++i) {
      if (w[i] & ~o.w[i]) return false;
    }
    return true;
  }
  template <typename F>
  void ForEach(F f) const {
    for (size_t i = 0; i < w.size(); ++i) {
      uint64_t bits = w[i];
      while (bits) {
        const int b = __builtin_ctzll(bits);
        f(static_cast<int>(i * 64 + b));
        bits &= bits - 1;
      }
    }
  }
};

// bots/scotland_yard_mcts.py's `Board`: the set-up, BFS distances over the
// detectives' edges, and the stations each ticket reaches.
struct Board {
  std::shared_ptr<const Setup> setup;
  int n = 0;
  int num_detectives = 0;
  std::vector<int> dist;  // [n * n]
  std::array<std::vector<Mask>, 4> reach;  // [ticket][station]
  Mask taxi_only;

  explicit Board(std::shared_ptr<const Setup> s) : setup(std::move(s)) {
    n = setup->num_stations;
    num_detectives = setup->num_detectives;
    if (n > kMaxStations || num_detectives > kMaxDetectives) {
      throw std::invalid_argument(
          "scotland_yard_mcts: the C++ search takes maps of at most 256 "
          "stations and 16 detectives (use backend=python)");
    }
    dist.assign(static_cast<size_t>(n) * n, n);
    for (int s = 0; s < n; ++s) {
      int* d = &dist[static_cast<size_t>(s) * n];
      d[s] = 0;
      std::vector<int> frontier = {s};
      while (!frontier.empty()) {
        std::vector<int> next;
        for (int p : frontier) {
          for (const auto& [j, t] : setup->adjacency[p]) {
            if (t != kFerry && d[j] == n) {
              d[j] = d[p] + 1;
              next.push_back(j);
            }
          }
        }
        frontier.swap(next);
      }
    }
    for (auto& r : reach) r.assign(n, Mask());
    for (int p = 0; p < n; ++p) {
      bool only_taxi = true;
      for (const auto& [j, t] : setup->adjacency[p]) {
        if (t != kFerry) reach[t][p].Set(j);
        reach[kBlack][p].Set(j);
        if (t != kTaxi) only_taxi = false;
      }
      if (only_taxi) taxi_only.Set(p);
    }
  }

  int Dist(int a, int b) const { return dist[static_cast<size_t>(a) * n + b]; }
};

// bots/scotland_yard_mcts.py's `SimState`.
struct Sim {
  const Board* board = nullptr;
  int mrx = -1;
  std::array<int, kMaxDetectives> det{};
  std::array<std::array<int, 3>, kMaxDetectives> det_tickets{};
  std::array<int, 4> mrx_tickets{};
  int doubles = 0;
  int log_len = 0;
  int turn = -1;  // -1 chance, 0 Mr. X, 1 + k detective k
  int pending = 1;
  bool in_double = false;
  int outcome = kOngoing;
  int catcher = -1;
  int placed = 0;
  Mask possible;

  explicit Sim(const Board* b) : board(b) {
    const Setup& r = *b->setup;
    for (int k = 0; k < b->num_detectives; ++k) {
      det[k] = r.drawn ? -1 : r.detective_starts[k];
      det_tickets[k] = r.detective_tickets;
    }
    placed = r.drawn ? 0 : b->num_detectives;
    mrx_tickets = r.mrx_tickets;
    doubles = r.doubles;
  }

  static Sim FromHistory(const Board* b, const std::vector<int64_t>& history) {
    Sim s(b);
    const Setup& r = *b->setup;
    if (!r.drawn && !r.chance) {
      s.mrx = r.mrx_start[0];
      s.possible.Set(s.mrx);
      s.StartMrxTurn();
    }
    for (int64_t a : history) {
      if (s.outcome != kOngoing) {
        throw std::invalid_argument("scotland_yard_mcts: history past the end");
      }
      s.Apply(static_cast<int>(a));
    }
    return s;
  }

  bool Occupied(int j) const {
    for (int k = 0; k < board->num_detectives; ++k) {
      if (det[k] == j) return true;
    }
    return false;
  }

  // Rules.mrx_moves, from `position`.
  void MrxMovesFrom(int position, std::vector<int>* out) const {
    const int n = board->n;
    out->clear();
    for (const auto& [j, t] : board->setup->adjacency[position]) {
      if (Occupied(j)) continue;
      if (t != kFerry && mrx_tickets[t] > 0) out->push_back(t * n + j);
      if (mrx_tickets[kBlack] > 0) out->push_back(kBlack * n + j);
    }
    std::sort(out->begin(), out->end());
    out->erase(std::unique(out->begin(), out->end()), out->end());
  }

  bool MrxCanMoveFrom(int position) const {
    for (const auto& [j, t] : board->setup->adjacency[position]) {
      if (Occupied(j)) continue;
      if ((t != kFerry && mrx_tickets[t] > 0) || mrx_tickets[kBlack] > 0) {
        return true;
      }
    }
    return false;
  }

  bool DetectiveCanMove(int k) const {
    for (const auto& e : board->setup->detective_edges[det[k]]) {
      if (!det_tickets[k][e[2]]) continue;
      bool free = true;
      for (int o = 0; o < board->num_detectives; ++o) {
        if (o != k && det[o] == e[1]) {
          free = false;
          break;
        }
      }
      if (free) return true;
    }
    return false;
  }

  // Move filtering (CIG'11 IV-D).
  bool BlackFiltered() const {
    const int entry = log_len + 1;
    return entry <= 2 || board->setup->Revealed(entry) ||
           possible.SubsetOf(board->taxi_only);
  }

  void LegalActions(bool black_filter, std::vector<int>* out) const {
    out->clear();
    if (outcome != kOngoing || turn < 0) return;
    const Setup& r = *board->setup;
    const int n = board->n;
    if (turn == 0) {
      MrxMovesFrom(mrx, out);
      if (black_filter && BlackFiltered()) {
        bool any_other = false;
        for (int a : *out) {
          if (a / n != kBlack) {
            any_other = true;
            break;
          }
        }
        if (any_other) {
          out->erase(std::remove_if(out->begin(), out->end(),
                                    [n](int a) { return a / n == kBlack; }),
                     out->end());
        }
      }
      if (doubles > 0 && !in_double && !out->empty() &&
          log_len + 2 <= r.max_rounds) {
        out->push_back(r.double_action);
      }
      return;
    }
    const int k = turn - 1;
    for (const auto& e : r.detective_edges[det[k]]) {
      if (!det_tickets[k][e[2]]) continue;
      bool free = true;
      for (int o = 0; o < board->num_detectives; ++o) {
        if (o != k && det[o] == e[1]) {
          free = false;
          break;
        }
      }
      if (free) out->push_back(e[0]);
    }
  }

  void Apply(int action) {
    const Setup& r = *board->setup;
    const int n = board->n;
    const int d = board->num_detectives;
    if (turn == -1) {
      if (placed < d) {
        det[placed] = action;
        ++placed;
        if (placed == d && !r.chance) {
          mrx = r.mrx_start[0];
          possible = Mask();
          possible.Set(mrx);
          StartMrxTurn();
        }
        return;
      }
      mrx = action;
      possible = Mask();
      for (int s : r.mrx_start) {
        if (!Occupied(s)) possible.Set(s);
      }
      StartMrxTurn();
      return;
    }
    if (turn == 0) {
      if (action == r.double_action) {
        --doubles;
        pending = 2;
        in_double = true;
        return;
      }
      const int ticket = action / n, dest = action % n;
      --mrx_tickets[ticket];
      mrx = dest;
      ++log_len;
      if (r.Revealed(log_len)) {
        possible = Mask();
        possible.Set(dest);
      } else {
        Mask next;
        const auto& reach = board->reach[ticket];
        possible.ForEach([&](int p) { next |= reach[p]; });
        for (int k = 0; k < d; ++k) next.Clear(det[k]);
        possible = next;
      }
      --pending;
      if (pending > 0) {
        if (!MrxCanMoveFrom(mrx)) outcome = kMrxStuck;
        return;
      }
      in_double = false;
      bool any = false;
      for (int k = 0; k < d && !any; ++k) any = DetectiveCanMove(k);
      if (!any) {
        outcome = kDetectivesStuck;
        return;
      }
      NextDetective(0);
      return;
    }
    const int k = turn - 1;
    const int ticket = action / n, dest = action % n;
    det[k] = dest;
    --det_tickets[k][ticket];
    if (r.tickets_to_mrx) ++mrx_tickets[ticket];
    if (dest == mrx) {
      outcome = kCaught;
      catcher = k;
      return;
    }
    possible.Clear(dest);
    NextDetective(k + 1);
  }

  void StartMrxTurn() {
    turn = 0;
    pending = 1;
    if (!MrxCanMoveFrom(mrx)) outcome = kMrxStuck;
  }

  void NextDetective(int k) {
    for (; k < board->num_detectives; ++k) {
      if (DetectiveCanMove(k)) {
        turn = 1 + k;
        return;
      }
    }
    if (log_len >= board->setup->max_rounds) {
      outcome = kSurvived;
    } else {
      StartMrxTurn();
    }
  }

  std::vector<int> PossibleLocations() const {
    std::vector<int> out;
    const bool at_mrx = turn == 0 && outcome == kOngoing;
    possible.ForEach([&](int p) {
      if (!at_mrx || MrxCanMoveFrom(p)) out.push_back(p);
    });
    return out;
  }
};

// bots/scotland_yard_mcts.py's `rewards` (coalition reduction).
inline void Rewards(int outcome, int catcher, int num_detectives, double r,
                    std::vector<double>* out) {
  out->assign(1 + num_detectives, 0.0);
  if (outcome == kSurvived || outcome == kDetectivesStuck) {
    (*out)[0] = 1.0;
    return;
  }
  for (int k = 0; k < num_detectives; ++k) {
    (*out)[1 + k] =
        outcome == kCaught ? (k == catcher ? 1.0 : 1.0 - r) : 1.0;
  }
}

// bots/scotland_yard_mcts.py's `Config`.
struct Config {
  int64_t playouts = 0;  // 0: no cap
  double time_limit = 0.0;
  double uct_c = 0.5;
  double ph_w = 5.0;
  double cr = 0.1;
  double eps_mrx = 0.1;
  double eps_det = 0.2;
  bool lc = true;
  std::vector<double> lc_weights;
  bool black_filter = true;
  bool mtd = true;  // Mr. X's search: detectives play MTD, not CAL

  static Config FromDict(const py::dict& d) {
    Config c;
    c.playouts = py::cast<int64_t>(d["playouts"]);
    c.time_limit = py::cast<double>(d["time_limit"]);
    c.uct_c = py::cast<double>(d["uct_c"]);
    c.ph_w = py::cast<double>(d["progressive_history"]);
    c.cr = py::cast<double>(d["coalition_reduction"]);
    c.eps_mrx = py::cast<double>(d["eps_mrx"]);
    c.eps_det = py::cast<double>(d["eps_det"]);
    c.lc = py::cast<bool>(d["location_categorization"]);
    c.lc_weights = py::cast<std::vector<double>>(d["lc_weights"]);
    c.black_filter = py::cast<bool>(d["black_ticket_filter"]);
    c.mtd = py::cast<bool>(d["mrx_search_mtd"]);
    if (c.lc_weights.size() != kNumCategories) {
      throw std::invalid_argument("scotland_yard_mcts: lc_weights needs 5");
    }
    return c;
  }
};

// The shortest distance from `location` to a detective.
inline int MinDistToDetectives(const Board& b, int location, const Sim& s) {
  int d = std::numeric_limits<int>::max();
  for (int k = 0; k < b.num_detectives; ++k) {
    d = std::min(d, b.Dist(location, s.det[k]));
  }
  return d;
}

// Collects in `ties` the actions whose score is best (`better(d, best)`
// says d beats best; the first scored action always counts), skipping
// `skip`, and draws one of them uniformly.
template <typename Score, typename Better>
inline int PickBest(const std::vector<int>& actions, int skip, Score score,
                    Better better, uint64_t& rng, std::vector<int>* ties) {
  bool first = true;
  int best = 0;
  for (int a : actions) {
    if (a == skip) continue;
    const int d = score(a);
    if (first || better(d, best)) {
      first = false;
      best = d;
      ties->clear();
      ties->push_back(a);
    } else if (d == best) {
      ties->push_back(a);
    }
  }
  return (*ties)[rollouts::SplitMix64(rng) % ties->size()];
}

// bots/scotland_yard_mcts.py's `_playout_action`.
inline int PlayoutAction(const Sim& s, const Config& config, bool mtd,
                         uint64_t& rng, std::vector<int>* actions,
                         std::vector<int>* ties) {
  const Board& b = *s.board;
  const int n = b.n;
  s.LegalActions(config.black_filter, actions);
  ties->clear();
  if (s.turn == 0) {
    if (rollouts::Uniform(rng) < config.eps_mrx) {
      return (*actions)[rollouts::SplitMix64(rng) % actions->size()];
    }
    return PickBest(
        *actions, b.setup->double_action,
        [&](int a) { return MinDistToDetectives(b, a % n, s); },
        [](int d, int best) { return d > best; }, rng, ties);
  }
  if (rollouts::Uniform(rng) < config.eps_det) {
    return (*actions)[rollouts::SplitMix64(rng) % actions->size()];
  }
  // CAL: the distance to Mr. X; MTD: the total distance to his possible
  // locations (CAL where the set is empty).
  bool any_possible = false;
  if (mtd) {
    for (uint64_t w : s.possible.w) any_possible = any_possible || w != 0;
  }
  return PickBest(
      *actions, /*skip=*/-1,
      [&](int a) {
        const int dest = a % n;
        if (!any_possible) return b.Dist(dest, s.mrx);
        int d = 0;
        s.possible.ForEach([&](int p) { d += b.Dist(dest, p); });
        return d;
      },
      [](int d, int best) { return d < best; }, rng, ties);
}

inline int Category(const Board& b, int location, const Sim& s) {
  const int d = MinDistToDetectives(b, location, s);
  return std::min(std::max(d, 1), kNumCategories) - 1;
}

struct Node {
  std::vector<std::pair<int, int>> children;  // (action, node index)
  int64_t visits = 0;
  int64_t avail = 0;
  int value = 0;  // offset of the node's summed rewards, one per mover

  int Child(int action) const {
    for (const auto& [a, i] : children) {
      if (a == action) return i;
    }
    return -1;
  }
};

struct SearchResult {
  int action = -1;
  std::vector<std::pair<int, int64_t>> visits;
  int64_t playouts = 0;
  uint64_t rng_state = 0;
  double seconds = 0.0;
};

// bots/scotland_yard_mcts.py's `_search`.
inline SearchResult Search(const Board& board,
                           const std::vector<int64_t>& history, int player,
                           const Config& config, uint64_t rng) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto elapsed = [&]() {
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  SearchResult result;
  const Sim root_state = Sim::FromHistory(&board, history);
  const int movers = 1 + board.num_detectives;
  std::vector<int> legal;
  root_state.LegalActions(config.black_filter, &legal);
  if (root_state.outcome != kOngoing || legal.empty()) {
    throw std::invalid_argument(
        "scotland_yard_mcts: the position is terminal or a chance node");
  }
  const int acting = root_state.turn == 0 ? 0 : 1;
  if (acting != player) {
    throw std::invalid_argument(
        "scotland_yard_mcts: asked to act for player " +
        std::to_string(player) + " at a state where player " +
        std::to_string(acting) + " acts");
  }
  if (legal.size() == 1) {
    result.action = legal[0];
    result.visits = {{legal[0], 0}};
    result.rng_state = rng;
    result.seconds = elapsed();
    return result;
  }
  const bool mtd = player == 0 && config.mtd;
  std::vector<int> locations;
  std::vector<double> weights;
  if (player == 1) {
    root_state.possible.ForEach([&](int p) { locations.push_back(p); });
    if (config.lc) {
      for (int p : locations) {
        weights.push_back(config.lc_weights[Category(board, p, root_state)]);
      }
    }
  } else {
    locations.push_back(root_state.mrx);
  }
  std::vector<Node> nodes(1);
  std::vector<double> values(movers, 0.0);
  const int num_actions = board.setup->double_action + 1;
  std::vector<double> hist_sum(static_cast<size_t>(movers) * num_actions, 0.0);
  std::vector<int64_t> hist_cnt(static_cast<size_t>(movers) * num_actions, 0);
  std::vector<int> actions, untried, ties, path;
  std::vector<std::pair<int, int>> played;
  std::vector<double> reward;
  const double c = config.uct_c, w_ph = config.ph_w;
  int64_t done = 0;
  while ((config.playouts <= 0 || done < config.playouts) &&
         (config.time_limit <= 0 || done == 0 ||
          elapsed() < config.time_limit)) {
    Sim s = root_state;
    // The determinization (_determinize).
    if (weights.empty()) {
      s.mrx = locations[rollouts::SplitMix64(rng) % locations.size()];
    } else {
      double total = 0.0;
      for (double w : weights) total += w;
      const double u = rollouts::Uniform(rng) * total;
      double acc = 0.0;
      s.mrx = locations.back();
      for (size_t i = 0; i < weights.size(); ++i) {
        acc += weights[i];
        if (u < acc) {
          s.mrx = locations[i];
          break;
        }
      }
    }
    int node = 0;
    path.clear();
    played.clear();
    // Selection and expansion.
    while (s.outcome == kOngoing) {
      s.LegalActions(config.black_filter, &actions);
      const int mover = s.turn;
      untried.clear();
      for (int a : actions) {
        const int child = nodes[node].Child(a);
        if (child < 0) {
          untried.push_back(a);
        } else {
          ++nodes[child].avail;
        }
      }
      if (!untried.empty()) {
        const int a = untried[rollouts::SplitMix64(rng) % untried.size()];
        const int child = static_cast<int>(nodes.size());
        nodes.emplace_back();
        nodes.back().avail = 1;
        nodes.back().value = static_cast<int>(values.size());
        values.resize(values.size() + movers, 0.0);
        nodes[node].children.emplace_back(a, child);
        s.Apply(a);
        path.push_back(child);
        played.emplace_back(mover, a);
        break;
      }
      int best_a = -1, best_child = -1;
      double best_score = -std::numeric_limits<double>::infinity();
      const double* sums = &hist_sum[static_cast<size_t>(mover) * num_actions];
      const int64_t* counts =
          &hist_cnt[static_cast<size_t>(mover) * num_actions];
      for (int a : actions) {
        const int child = nodes[node].Child(a);
        const Node& ch = nodes[child];
        const double v = values[ch.value + mover];
        const double visits = static_cast<double>(ch.visits);
        const double mean = v / visits;
        double score =
            mean + c * std::sqrt(std::log(static_cast<double>(ch.avail)) /
                                 visits);
        if (w_ph > 0 && counts[a] > 0) {
          score += (sums[a] / static_cast<double>(counts[a])) * w_ph /
                   (visits - v + 1.0);
        }
        if (score > best_score) {
          best_a = a;
          best_child = child;
          best_score = score;
        }
      }
      node = best_child;
      s.Apply(best_a);
      path.push_back(node);
      played.emplace_back(mover, best_a);
    }
    // Playout.
    while (s.outcome == kOngoing) {
      const int mover = s.turn;
      const int a = PlayoutAction(s, config, mtd, rng, &actions, &ties);
      s.Apply(a);
      played.emplace_back(mover, a);
    }
    Rewards(s.outcome, s.catcher, board.num_detectives, config.cr, &reward);
    for (int i : path) {
      Node& nd = nodes[i];
      ++nd.visits;
      for (int m = 0; m < movers; ++m) values[nd.value + m] += reward[m];
    }
    if (w_ph > 0) {
      for (const auto& [mover, a] : played) {
        const size_t at = static_cast<size_t>(mover) * num_actions + a;
        hist_sum[at] += reward[mover];
        ++hist_cnt[at];
      }
    }
    ++done;
  }
  int64_t best = -1;
  for (int a : legal) {
    const int child = nodes[0].Child(a);
    const int64_t v = child < 0 ? 0 : nodes[child].visits;
    result.visits.emplace_back(a, v);
    if (v > best) {
      best = v;
      result.action = a;
    }
  }
  result.playouts = done;
  result.rng_state = rng;
  result.seconds = elapsed();
  return result;
}

// The Python surface: one object per game (its Board), a handful of calls.
class Engine {
 public:
  explicit Engine(std::shared_ptr<const Setup> setup)
      : board_(std::make_unique<Board>(std::move(setup))) {}

  std::vector<std::vector<int>> Distances() const {
    std::vector<std::vector<int>> out(board_->n);
    for (int a = 0; a < board_->n; ++a) {
      for (int b = 0; b < board_->n; ++b) out[a].push_back(board_->Dist(a, b));
    }
    return out;
  }

  std::vector<int> PossibleLocations(const std::vector<int64_t>& history) const {
    return Sim::FromHistory(board_.get(), history).PossibleLocations();
  }

  std::vector<int> LegalActions(const std::vector<int64_t>& history,
                                bool black_filter) const {
    std::vector<int> out;
    Sim::FromHistory(board_.get(), history).LegalActions(black_filter, &out);
    return out;
  }

  std::pair<int, uint64_t> PlayoutActionAt(const std::vector<int64_t>& history,
                                           int mrx, int searcher,
                                           const py::dict& config,
                                           uint64_t rng) const {
    Sim s = Sim::FromHistory(board_.get(), history);
    s.mrx = mrx;
    std::vector<int> actions, ties;
    const Config c = Config::FromDict(config);
    const int a = PlayoutAction(s, c, searcher == 0 && c.mtd, rng, &actions,
                                &ties);
    return {a, rng};
  }

  py::dict SearchFrom(const std::vector<int64_t>& history, int player,
                      const py::dict& config, uint64_t rng) const {
    const Config c = Config::FromDict(config);
    SearchResult r;
    {
      py::gil_scoped_release release;
      r = Search(*board_, history, player, c, rng);
    }
    py::dict out;
    out["action"] = r.action;
    py::dict visits;
    for (const auto& [a, v] : r.visits) visits[py::int_(a)] = v;
    out["visits"] = visits;
    out["playouts"] = r.playouts;
    out["rng_state"] = r.rng_state;
    out["seconds"] = r.seconds;
    return out;
  }

 private:
  std::unique_ptr<Board> board_;
};

// `setup_from(dict)`: shim.cc's reader of native.py's `cpp_setup` dict.
template <typename SetupFrom>
inline void Define(py::module_& m, SetupFrom setup_from) {
  py::class_<Engine>(m, "ScotlandYardMCTS",
                     "Nijssen and Winands' MCTS for Scotland Yard on one "
                     "game's set-up (bots/scotland_yard_mcts.py).")
      .def(py::init([setup_from](const py::dict& setup) {
             return std::make_unique<Engine>(setup_from(setup));
           }),
           py::arg("setup"))
      .def("distances", &Engine::Distances)
      .def("possible_locations", &Engine::PossibleLocations,
           py::arg("history"))
      .def("legal_actions", &Engine::LegalActions, py::arg("history"),
           py::arg("black_filter"))
      .def("playout_action", &Engine::PlayoutActionAt, py::arg("history"),
           py::arg("mrx"), py::arg("searcher"), py::arg("config"),
           py::arg("rng_state"))
      .def("search", &Engine::SearchFrom, py::arg("history"),
           py::arg("player"), py::arg("config"), py::arg("rng_state"));
}

}  // namespace scotland_yard_mcts
}  // namespace open_spiel_sog

#endif  // OPEN_SPIEL_SOG_NATIVE_SCOTLAND_YARD_MCTS_H_
