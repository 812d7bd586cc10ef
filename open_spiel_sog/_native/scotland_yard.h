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

// Scotland Yard as an OpenSpiel C++ game: the twin of the Python game
// (open_spiel_sog/games/scotland_yard/: game.py, observer.py), line for line,
// so that the native engine (history_engine.h) walks and rolls out its
// states with the GIL released. The rules, action encoding, strings, tensors
// and resampling are the Python game's; see its module docstring.
//
// The map and the parameters are resolved in Python
// (games/scotland_yard/native.py: the map's JSON, its validation and every
// error message are the Python game's) and handed here as a `Setup`; shim.cc
// registers the game in OpenSpiel's C++ registry with a creator that asks
// Python for the Setup of each new game (`RegisterScotlandYard`).

#ifndef OPEN_SPIEL_SOG_NATIVE_SCOTLAND_YARD_H_
#define OPEN_SPIEL_SOG_NATIVE_SCOTLAND_YARD_H_

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "open_spiel/observer.h"
#include "open_spiel/spiel.h"
#include "open_spiel/spiel_utils.h"

namespace open_spiel_sog {
namespace scotland_yard {

using ::open_spiel::Action;
using ::open_spiel::Allocator;
using ::open_spiel::Game;
using ::open_spiel::GameParameters;
using ::open_spiel::IIGObservationType;
using ::open_spiel::Observer;
using ::open_spiel::Player;
using ::open_spiel::PrivateInfoType;
using ::open_spiel::State;

// maps.py: TRANSPORTS (taxi, bus, underground, ferry) and TICKETS (taxi,
// bus, underground, black); a ferry takes a black ticket.
constexpr int kFerry = 3;
constexpr int kBlack = 3;
inline const char* const kTickets[4] = {"taxi", "bus", "underground",
                                        "black"};

// rules.py's outcomes.
enum Outcome { kOngoing = 0, kCaught, kMrxStuck, kSurvived, kDetectivesStuck };
inline const char* OutcomeText(int outcome) {
  switch (outcome) {
    case kCaught: return "caught";
    case kMrxStuck: return "Mr. X cannot move";
    case kSurvived: return "Mr. X survived";
    case kDetectivesStuck: return "no detective can move";
  }
  return "ongoing";
}
inline bool MrxWins(int outcome) {
  return outcome == kSurvived || outcome == kDetectivesStuck;
}

// A game's resolved set-up (rules.py's `Rules`), built by native.py.
struct Setup {
  std::string map_name;
  int num_stations = 0;
  std::vector<int> labels;  // [N] the map's station ids
  // [N] (neighbour, transport), sorted, as Rules.adjacency.
  std::vector<std::vector<std::pair<int, int>>> adjacency;
  std::vector<int> mrx_start;  // as given
  std::vector<int> detective_starts;  // fixed starts; empty where drawn
  // The detectives' start cards (station indices); empty: fixed starts.
  std::vector<int> detective_start_cards;
  int num_detectives = 0;
  std::array<int, 3> detective_tickets{};
  std::array<int, 4> mrx_tickets{};
  int doubles = 0;
  int max_rounds = 0;
  std::vector<bool> reveal;  // [max_rounds + 1]: entry r revealed
  bool tickets_to_mrx = false;

  // Derived by Finish(): rules.py's chance, drawn, chance_nodes.
  bool chance = false;
  bool drawn = false;
  int chance_nodes = 0;
  int double_action = 0;
  // Per station, a detective's edges (action, neighbour, transport), ferries
  // left out, sorted by action, as Rules._detective_edges.
  std::vector<std::vector<std::array<int, 3>>> detective_edges;

  void Finish() {
    const int n = num_stations;
    chance = mrx_start.size() > 1;
    drawn = !detective_start_cards.empty();
    chance_nodes = (drawn ? num_detectives : 0) + (chance ? 1 : 0);
    double_action = 4 * n;
    detective_edges.assign(n, {});
    for (int s = 0; s < n; ++s) {
      auto& edges = detective_edges[s];
      for (const auto& [j, t] : adjacency[s]) {
        if (t != kFerry) edges.push_back({t * n + j, j, t});
      }
      std::sort(edges.begin(), edges.end());
      edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
    }
  }

  bool Revealed(int entry) const {
    return entry >= 0 && entry < static_cast<int>(reveal.size()) &&
           reveal[entry];
  }

  // Rules.mrx_moves: Mr. X's move actions from `position`, sorted.
  std::vector<Action> MrxMoves(int position, const std::array<int, 4>& tickets,
                               const std::vector<int>& detectives) const {
    const int n = num_stations;
    std::vector<Action> actions;
    for (const auto& [j, t] : adjacency[position]) {
      if (std::find(detectives.begin(), detectives.end(), j) !=
          detectives.end()) {
        continue;
      }
      if (t != kFerry && tickets[t] > 0) actions.push_back(t * n + j);
      if (tickets[kBlack] > 0) actions.push_back(kBlack * n + j);
    }
    std::sort(actions.begin(), actions.end());
    actions.erase(std::unique(actions.begin(), actions.end()), actions.end());
    return actions;
  }

  bool MrxCanMove(int position, const std::array<int, 4>& tickets,
                  const std::vector<int>& detectives) const {
    for (const auto& [j, t] : adjacency[position]) {
      if (std::find(detectives.begin(), detectives.end(), j) !=
          detectives.end()) {
        continue;
      }
      if ((t != kFerry && tickets[t] > 0) || tickets[kBlack] > 0) return true;
    }
    return false;
  }

  // Rules.detective_moves / detective_can_move (with `first_only`).
  std::vector<Action> DetectiveMoves(
      int k, const std::vector<int>& positions,
      const std::vector<std::array<int, 3>>& tickets,
      bool first_only = false) const {
    std::vector<Action> actions;
    const auto& own = tickets[k];
    for (const auto& [action, j, t] : detective_edges[positions[k]]) {
      if (!own[t]) continue;
      bool free = true;
      for (int other = 0; other < num_detectives; ++other) {
        if (other != k && positions[other] == j) {
          free = false;
          break;
        }
      }
      if (!free) continue;
      actions.push_back(action);
      if (first_only) break;
    }
    return actions;
  }

  bool DetectiveCanMove(int k, const std::vector<int>& positions,
                        const std::vector<std::array<int, 3>>& tickets) const {
    return !DetectiveMoves(k, positions, tickets, /*first_only=*/true).empty();
  }

  std::string Label(int station) const {
    return station >= 0 ? std::to_string(labels[station]) : "?";
  }

  // Rules.mrx_start_choices: Mr. X's starts (sorted) that no detective
  // holds.
  std::vector<int> MrxStartChoices(const std::vector<int>& detectives) const {
    std::vector<int> out;
    for (int s : mrx_start) {
      if (std::find(detectives.begin(), detectives.end(), s) ==
          detectives.end()) {
        out.push_back(s);
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // Rules.card_choices: the detective start cards (sorted) not yet drawn;
  // `placed`: the detectives drawn so far (the first of `detectives`).
  std::vector<int> CardChoices(const std::vector<int>& detectives,
                               int placed) const {
    std::vector<int> out;
    for (int s : detective_start_cards) {
      if (std::find(detectives.begin(), detectives.begin() + placed, s) ==
          detectives.begin() + placed) {
        out.push_back(s);
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // The width of the compact infostate tensor (game.py).
  int CompactSize() const {
    const int n = num_stations, d = num_detectives;
    return 1 + n + d * n + d * 3 + 5 + (1 + d) + 1 + 1;
  }
};

// One step of the record (game.py's `events`): ("dstart", k, s) |
// ("start", s) | ("double",) | ("x", ticket, dest, revealed) |
// ("d", k, ticket, dest) | ("end", outcome).
struct Event {
  enum Kind : int { kStart, kDouble, kX, kD, kEnd, kDStart };
  Kind kind;
  int a = 0, b = 0, c = 0;  // start: s; x: ticket, dest, revealed;
                            // d: k, ticket, dest (in `d`); end: outcome;
                            // dstart: k, s
  int d = 0;
};

// A travel-log entry: (ticket, revealed station or -1, part of a double).
struct LogEntry {
  int ticket;
  int revealed;
  bool in_double;
};

class ScotlandYardGame;

class ScotlandYardState : public State {
 public:
  explicit ScotlandYardState(std::shared_ptr<const Game> game,
                             std::shared_ptr<const Setup> setup)
      : State(std::move(game)), setup_(std::move(setup)) {
    const Setup& r = *setup_;
    mrx_ = r.chance ? -1 : r.mrx_start[0];
    if (r.drawn) {
      detectives_.assign(r.num_detectives, -1);
      placed_ = 0;
    } else {
      detectives_ = r.detective_starts;
      placed_ = r.num_detectives;
    }
    detective_tickets_.assign(r.num_detectives, r.detective_tickets);
    mrx_tickets_ = r.mrx_tickets;
    doubles_ = r.doubles;
    if (!r.chance) path_.push_back(mrx_);
    turn_ = r.chance_nodes ? -1 : 0;
  }
  ScotlandYardState(const ScotlandYardState&) = default;

  Player CurrentPlayer() const override {
    if (outcome_ != kOngoing) return open_spiel::kTerminalPlayerId;
    if (turn_ == -1) return open_spiel::kChancePlayerId;
    return turn_ == 0 ? 0 : 1;
  }

  bool IsTerminal() const override { return outcome_ != kOngoing; }

  std::vector<double> Returns() const override {
    if (outcome_ == kOngoing) return {0.0, 0.0};
    return MrxWins(outcome_) ? std::vector<double>{1.0, -1.0}
                             : std::vector<double>{-1.0, 1.0};
  }

  open_spiel::ActionsAndProbs ChanceOutcomes() const override {
    const Setup& r = *setup_;
    const std::vector<int> starts =
        placed_ < r.num_detectives ? r.CardChoices(detectives_, placed_)
                                   : r.MrxStartChoices(detectives_);
    open_spiel::ActionsAndProbs outcomes;
    for (int s : starts) outcomes.push_back({s, 1.0 / starts.size()});
    return outcomes;
  }

  std::vector<Action> LegalActions() const override {
    if (outcome_ != kOngoing) return {};
    if (turn_ == -1) return LegalChanceOutcomes();
    const Setup& r = *setup_;
    if (turn_ == 0) {
      std::vector<Action> moves = r.MrxMoves(mrx_, mrx_tickets_, detectives_);
      if (doubles_ > 0 && !in_double_ && !moves.empty() &&
          static_cast<int>(log_.size()) + 2 <= r.max_rounds) {
        moves.push_back(r.double_action);
      }
      return moves;
    }
    return r.DetectiveMoves(turn_ - 1, detectives_, detective_tickets_);
  }

  std::string ActionToString(Player player, Action action) const override {
    const Setup& r = *setup_;
    const int n = r.num_stations;
    if (player == open_spiel::kChancePlayerId) {
      if (placed_ < r.num_detectives) {
        return absl::StrCat("D", placed_ + 1, " starts at ",
                            r.Label(static_cast<int>(action)));
      }
      return "Mr. X starts at " + r.Label(static_cast<int>(action));
    }
    if (action == r.double_action) return "double move";
    const int ticket = static_cast<int>(action / n);
    const int dest = static_cast<int>(action % n);
    if (action < 0 || ticket < 0 || ticket >= 4) {
      return "invalid action " + std::to_string(action);
    }
    return std::string(kTickets[ticket]) + " to " + r.Label(dest);
  }

  std::string ToString() const override { return SituationString(true, true); }

  std::string InformationStateString(Player player) const override {
    SPIEL_CHECK_GE(player, 0);
    SPIEL_CHECK_LT(player, 2);
    return HistoryString(true, player == 0);
  }

  std::string ObservationString(Player player) const override {
    SPIEL_CHECK_GE(player, 0);
    SPIEL_CHECK_LT(player, 2);
    return SituationString(true, player == 0);
  }

  void InformationStateTensor(Player player,
                              absl::Span<float> values) const override;
  void ObservationTensor(Player player,
                         absl::Span<float> values) const override;

  std::unique_ptr<State> Clone() const override {
    return std::make_unique<ScotlandYardState>(*this);
  }

  std::unique_ptr<State> ResampleFromInfostate(
      int player_id, std::function<double()> rng) const override;

  // game.py's ScotlandYardGame.compact_infostate_tensor.
  std::vector<float> CompactInfostateTensor(int player) const {
    const Setup& r = *setup_;
    const int n = r.num_stations, d = r.num_detectives;
    std::vector<float> out(r.CompactSize(), 0.0f);
    if (player == 0 && mrx_ >= 0) {
      out[1 + mrx_] = 1.0f;
    } else if (player != 0) {
      out[0] = 1.0f;
    }
    int at = 1 + n;
    for (int k = 0; k < d; ++k) {
      if (detectives_[k] >= 0) out[at + k * n + detectives_[k]] = 1.0f;
    }
    at += d * n;
    for (int k = 0; k < d; ++k) {
      for (int i = 0; i < 3; ++i) {
        const double start = std::max(r.detective_tickets[i], 1);
        out[at + 3 * k + i] =
            static_cast<float>(detective_tickets_[k][i] / start);
      }
    }
    at += 3 * d;
    for (int i = 0; i < 5; ++i) {
      const int have = i < 4 ? mrx_tickets_[i] : doubles_;
      const double start = std::max(i < 4 ? r.mrx_tickets[i] : r.doubles, 1);
      out[at + i] = static_cast<float>(have / start);
    }
    at += 5;
    if (outcome_ == kOngoing && turn_ >= 0) out[at + turn_] = 1.0f;
    at += 1 + d;
    out[at] = in_double_ ? 1.0f : 0.0f;
    out[at + 1] = static_cast<float>(static_cast<double>(log_.size()) /
                                     std::max(r.max_rounds, 1));
    return out;
  }

  // What the Python state holds, for native.py's views and the tests.
  int mrx() const { return mrx_; }
  const std::vector<int>& detectives() const { return detectives_; }
  const std::vector<std::array<int, 3>>& detective_tickets() const {
    return detective_tickets_;
  }
  const std::array<int, 4>& mrx_tickets() const { return mrx_tickets_; }
  int doubles() const { return doubles_; }
  int turn() const { return turn_; }
  int placed() const { return placed_; }
  int pending() const { return pending_; }
  bool in_double() const { return in_double_; }
  int outcome() const { return outcome_; }
  const std::vector<LogEntry>& log() const { return log_; }
  const std::vector<int>& path() const { return path_; }
  const Setup& setup() const { return *setup_; }

  // observer.py's situation_string: what is on the board now.
  std::string SituationString(bool show_public, bool show_mrx) const {
    const Setup& r = *setup_;
    std::vector<std::string> parts;
    if (show_public) {
      parts.push_back("round " + std::to_string(log_.size()) + "/" +
                      std::to_string(r.max_rounds));
      parts.push_back("to move: " + ToMove());
      for (int k = 0; k < r.num_detectives; ++k) {
        const auto& t = detective_tickets_[k];
        parts.push_back(absl::StrCat("D", k + 1, "@", r.Label(detectives_[k]),
                                     " (t", t[0], " b", t[1], " u", t[2],
                                     ")"));
      }
      const auto& t = mrx_tickets_;
      parts.push_back(absl::StrCat("X tickets (t", t[0], " b", t[1], " u",
                                   t[2], " k", t[3], " d", doubles_, ")"));
      std::string log = "log: ";
      if (log_.empty()) log += "-";
      for (size_t i = 0; i < log_.size(); ++i) {
        if (i) log += " ";
        log += kTickets[log_[i].ticket];
        if (log_[i].in_double) log += "*";
        if (log_[i].revealed >= 0) log += "@" + r.Label(log_[i].revealed);
      }
      parts.push_back(log);
    }
    if (mrx_ >= 0 && (show_mrx || (show_public && outcome_ == kCaught))) {
      parts.push_back("X@" + r.Label(mrx_));
    }
    return absl::StrJoin(parts, ", ");
  }

  // observer.py's _history_string: the set-up, then the public (and, with
  // `show_mrx`, Mr. X's private) record.
  std::string HistoryString(bool show_public, bool show_mrx) const {
    const Setup& r = *setup_;
    std::string text;
    auto add = [&text](const std::string& part) {
      if (!text.empty()) text += " ";
      text += part;
    };
    if (show_public) {
      if (!r.drawn) {
        std::vector<std::string> starts;
        for (int s : r.detective_starts) starts.push_back(r.Label(s));
        add("D@" + absl::StrJoin(starts, "/"));
      }
      if (!r.chance) add("X@" + r.Label(r.mrx_start[0]));
    }
    for (const Event& e : events_) {
      switch (e.kind) {
        case Event::kDStart:
          if (!show_public) continue;
          add(absl::StrCat("D", e.a + 1, "@", r.Label(e.b)));
          break;
        case Event::kStart:
          if (!(show_mrx || show_public)) continue;
          add(show_mrx ? "X@" + r.Label(e.a) : std::string("X@?"));
          break;
        case Event::kDouble:
          if (!show_public) continue;
          add("X:double");
          break;
        case Event::kX: {
          if (!show_public && !show_mrx) continue;
          std::string part = std::string("X:") + kTickets[e.a];
          if (show_mrx) {
            part += "@" + r.Label(e.b);
          } else if (e.c >= 0) {
            part += "@" + r.Label(e.c) + "!";
          }
          add(part);
          break;
        }
        case Event::kD:
          if (!show_public) continue;
          add(absl::StrCat("D", e.a + 1, ":", kTickets[e.b], "@",
                           r.Label(e.d)));
          break;
        case Event::kEnd:
          if (!show_public) continue;
          add(std::string("[") + OutcomeText(e.a) + "]");
          break;
      }
    }
    return text;
  }

  // observer.py's ScotlandYardObserver.set_from.
  void WriteObservation(bool show_public, bool recall, PrivateInfoType priv,
                        bool shows_mrx, Allocator* allocator) const {
    const Setup& r = *setup_;
    const int n = r.num_stations, d = r.num_detectives, rounds = r.max_rounds;
    if (show_public) {
      auto round = allocator->Get("round", {rounds + 1});
      round.at(static_cast<int>(log_.size())) = 1.0f;
      auto to_move = allocator->Get("to_move", {d + 1});
      if (outcome_ == kOngoing && turn_ >= 0) to_move.at(turn_) = 1.0f;
      auto pending = allocator->Get("double_pending", {1});
      pending.at(0) = in_double_ ? 1.0f : 0.0f;
      auto outcome = allocator->Get("outcome", {2});
      if (outcome_ != kOngoing) outcome.at(MrxWins(outcome_) ? 0 : 1) = 1.0f;
      auto positions = allocator->Get("detective_positions", {d, n});
      auto tickets = allocator->Get("detective_tickets", {d, 3});
      for (int k = 0; k < d; ++k) {
        if (detectives_[k] >= 0) positions.at(k, detectives_[k]) = 1.0f;
        for (int i = 0; i < 3; ++i) {
          tickets.at(k, i) = static_cast<float>(detective_tickets_[k][i]);
        }
      }
      auto mrx_tickets = allocator->Get("mrx_tickets", {5});
      for (int i = 0; i < 4; ++i) {
        mrx_tickets.at(i) = static_cast<float>(mrx_tickets_[i]);
      }
      mrx_tickets.at(4) = static_cast<float>(doubles_);
      auto log_tickets = allocator->Get("log_tickets", {rounds, 4});
      auto log_double = allocator->Get("log_double", {rounds});
      auto log_revealed = allocator->Get("log_revealed", {rounds, n});
      for (size_t i = 0; i < log_.size(); ++i) {
        log_tickets.at(i, log_[i].ticket) = 1.0f;
        log_double.at(i) = log_[i].in_double ? 1.0f : 0.0f;
        if (log_[i].revealed >= 0) log_revealed.at(i, log_[i].revealed) = 1.0f;
      }
      if (outcome_ == kCaught && !log_.empty()) {
        log_revealed.at(static_cast<int>(log_.size()) - 1, mrx_) = 1.0f;
      }
      if (recall) {
        auto moves = allocator->Get("detective_moves", {rounds, d, n + 3});
        int entries = 0;
        for (const Event& e : events_) {
          if (e.kind == Event::kX) {
            ++entries;
          } else if (e.kind == Event::kD && entries > 0) {
            moves.at(entries - 1, e.a, e.d) = 1.0f;
            moves.at(entries - 1, e.a, n + e.b) = 1.0f;
          }
        }
        if (r.drawn) {
          auto starts = allocator->Get("detective_starts", {d, n});
          for (const Event& e : events_) {
            if (e.kind == Event::kDStart) starts.at(e.a, e.b) = 1.0f;
          }
        }
      }
    }
    if (priv != PrivateInfoType::kNone) {
      auto position = allocator->Get("mrx_position", {n});
      if (shows_mrx && mrx_ >= 0) position.at(mrx_) = 1.0f;
      if (recall) {
        auto path = allocator->Get("mrx_path", {rounds + 1, n});
        if (shows_mrx) {
          for (size_t i = 0; i < path_.size(); ++i) path.at(i, path_[i]) = 1.0f;
        }
      }
    }
  }

 protected:
  void DoApplyAction(Action action) override {
    const Setup& r = *setup_;
    const int n = r.num_stations;
    if (turn_ == -1 && placed_ < r.num_detectives) {
      const int k = placed_++;
      detectives_[k] = static_cast<int>(action);
      events_.push_back({Event::kDStart, k, detectives_[k]});
      if (placed_ == r.num_detectives && !r.chance) StartMrxTurn();
      return;
    }
    if (turn_ == -1) {
      mrx_ = static_cast<int>(action);
      path_.assign(1, mrx_);
      events_.push_back({Event::kStart, mrx_});
      StartMrxTurn();
      return;
    }
    if (turn_ == 0) {
      if (action == r.double_action) {
        --doubles_;
        pending_ = 2;
        in_double_ = true;
        events_.push_back({Event::kDouble});
        return;
      }
      const int ticket = static_cast<int>(action / n);
      const int dest = static_cast<int>(action % n);
      --mrx_tickets_[ticket];
      mrx_ = dest;
      const int entry = static_cast<int>(log_.size()) + 1;
      const int revealed = r.Revealed(entry) ? dest : -1;
      log_.push_back({ticket, revealed, in_double_});
      path_.push_back(dest);
      events_.push_back({Event::kX, ticket, dest, revealed});
      if (--pending_ > 0) {
        if (!r.MrxCanMove(mrx_, mrx_tickets_, detectives_)) End(kMrxStuck);
        return;
      }
      in_double_ = false;
      StartDetectivesTurn();
      return;
    }
    const int k = turn_ - 1;
    const int ticket = static_cast<int>(action / n);
    const int dest = static_cast<int>(action % n);
    detectives_[k] = dest;
    --detective_tickets_[k][ticket];
    if (r.tickets_to_mrx) ++mrx_tickets_[ticket];
    Event e{Event::kD, k, ticket, 0};
    e.d = dest;
    events_.push_back(e);
    if (dest == mrx_) {
      End(kCaught);
      return;
    }
    NextDetective(k + 1);
  }

 private:
  friend class ScotlandYardGame;

  std::string ToMove() const {
    if (outcome_ != kOngoing) return OutcomeText(outcome_);
    if (turn_ == -1) return "chance";
    if (turn_ == 0) return pending_ == 2 ? "Mr. X (double)" : "Mr. X";
    return "D" + std::to_string(turn_);
  }

  void End(int outcome) {
    outcome_ = outcome;
    events_.push_back({Event::kEnd, outcome});
  }

  void StartMrxTurn() {
    turn_ = 0;
    pending_ = 1;
    if (!setup_->MrxCanMove(mrx_, mrx_tickets_, detectives_)) End(kMrxStuck);
  }

  void StartDetectivesTurn() {
    const Setup& r = *setup_;
    for (int k = 0; k < r.num_detectives; ++k) {
      if (r.DetectiveCanMove(k, detectives_, detective_tickets_)) {
        NextDetective(0);
        return;
      }
    }
    End(kDetectivesStuck);
  }

  void NextDetective(int k) {
    const Setup& r = *setup_;
    for (; k < r.num_detectives; ++k) {
      if (r.DetectiveCanMove(k, detectives_, detective_tickets_)) {
        turn_ = 1 + k;
        return;
      }
    }
    if (static_cast<int>(log_.size()) >= r.max_rounds) {
      End(kSurvived);
    } else {
      StartMrxTurn();
    }
  }

  std::shared_ptr<const Setup> setup_;
  int mrx_;
  std::vector<int> detectives_;
  std::vector<std::array<int, 3>> detective_tickets_;
  std::array<int, 4> mrx_tickets_;
  int doubles_;
  std::vector<LogEntry> log_;
  std::vector<int> path_;
  int turn_;
  int placed_ = 0;
  int pending_ = 1;
  bool in_double_ = false;
  int outcome_ = kOngoing;
  std::vector<Event> events_;
};

// observer.py's ScotlandYardObserver, for every IIGObservationType.
class ScotlandYardObserver : public Observer {
 public:
  explicit ScotlandYardObserver(IIGObservationType type)
      : Observer(/*has_string=*/true, /*has_tensor=*/true), type_(type) {}

  void WriteTensor(const State& observed_state, int player,
                   Allocator* allocator) const override {
    const auto& state = static_cast<const ScotlandYardState&>(observed_state);
    state.WriteObservation(type_.public_info, type_.perfect_recall,
                           type_.private_info, ShowsMrx(player), allocator);
  }

  std::string StringFrom(const State& observed_state,
                         int player) const override {
    const auto& state = static_cast<const ScotlandYardState&>(observed_state);
    const bool mrx =
        type_.private_info != PrivateInfoType::kNone && ShowsMrx(player);
    return type_.perfect_recall ? state.HistoryString(type_.public_info, mrx)
                                : state.SituationString(type_.public_info, mrx);
  }

 private:
  bool ShowsMrx(int player) const {
    if (type_.private_info == PrivateInfoType::kAllPlayers) return true;
    return type_.private_info == PrivateInfoType::kSinglePlayer && player == 0;
  }

  IIGObservationType type_;
};

inline open_spiel::GameType GameTypeNamed(const std::string& short_name,
                                          GameParameters specification) {
  open_spiel::GameType type;
  type.short_name = short_name;
  type.long_name = "Scotland Yard (open_spiel_sog)";
  type.dynamics = open_spiel::GameType::Dynamics::kSequential;
  type.chance_mode = open_spiel::GameType::ChanceMode::kExplicitStochastic;
  type.information = open_spiel::GameType::Information::kImperfectInformation;
  type.utility = open_spiel::GameType::Utility::kZeroSum;
  type.reward_model = open_spiel::GameType::RewardModel::kTerminal;
  type.max_num_players = 2;
  type.min_num_players = 2;
  type.provides_information_state_string = true;
  type.provides_information_state_tensor = true;
  type.provides_observation_string = true;
  type.provides_observation_tensor = true;
  type.parameter_specification = std::move(specification);
  type.provides_factored_observation_string = true;
  return type;
}

class ScotlandYardGame : public Game {
 public:
  ScotlandYardGame(open_spiel::GameType type, const GameParameters& params,
                   std::shared_ptr<const Setup> setup)
      : Game(std::move(type), params),
        setup_(std::move(setup)),
        default_observer_(std::make_shared<ScotlandYardObserver>(
            open_spiel::kDefaultObsType)),
        info_state_observer_(std::make_shared<ScotlandYardObserver>(
            open_spiel::kInfoStateObsType)) {}

  int NumDistinctActions() const override { return 4 * setup_->num_stations + 1; }
  std::unique_ptr<State> NewInitialState() const override {
    return std::make_unique<ScotlandYardState>(shared_from_this(), setup_);
  }
  int MaxChanceOutcomes() const override {
    return setup_->chance_nodes ? setup_->num_stations : 0;
  }
  int NumPlayers() const override { return 2; }
  double MinUtility() const override { return -1.0; }
  double MaxUtility() const override { return 1.0; }
  absl::optional<double> UtilitySum() const override { return 0.0; }
  int MaxGameLength() const override {
    return setup_->max_rounds * (1 + setup_->num_detectives) +
           std::min(setup_->doubles, setup_->max_rounds);
  }
  int MaxChanceNodesInHistory() const override { return setup_->chance_nodes; }

  std::vector<int> InformationStateTensorShape() const override {
    return {TensorSize(open_spiel::kInfoStateObsType)};
  }
  std::vector<int> ObservationTensorShape() const override {
    return {TensorSize(open_spiel::kDefaultObsType)};
  }

  std::shared_ptr<Observer> MakeObserver(
      absl::optional<IIGObservationType> iig_obs_type,
      const GameParameters& params) const override {
    if (!params.empty()) {
      open_spiel::SpielFatalError(
          "scotland_yard: observation parameters are not supported; passed " +
          open_spiel::GameParametersToString(params));
    }
    return std::make_shared<ScotlandYardObserver>(
        iig_obs_type.value_or(open_spiel::kDefaultObsType));
  }

  const Setup& setup() const { return *setup_; }

 private:
  friend class ScotlandYardState;

  // observer.py's piece sizes.
  int TensorSize(IIGObservationType type) const {
    const Setup& r = *setup_;
    const int n = r.num_stations, d = r.num_detectives, rounds = r.max_rounds;
    int size = 0;
    if (type.public_info) {
      size += (rounds + 1) + (d + 1) + 1 + 2 + d * n + d * 3 + 5 + rounds * 4 +
              rounds + rounds * n;
      if (type.perfect_recall) size += rounds * d * (n + 3);
      if (type.perfect_recall && r.drawn) size += d * n;
    }
    if (type.private_info != PrivateInfoType::kNone) {
      size += n;
      if (type.perfect_recall) size += (rounds + 1) * n;
    }
    return size;
  }

  std::shared_ptr<const Setup> setup_;

 public:
  const std::shared_ptr<Observer> default_observer_;
  const std::shared_ptr<Observer> info_state_observer_;
};

inline void ScotlandYardState::InformationStateTensor(
    Player player, absl::Span<float> values) const {
  open_spiel::ContiguousAllocator allocator(values);
  const auto& game = static_cast<const ScotlandYardGame&>(*game_);
  game.info_state_observer_->WriteTensor(*this, player, &allocator);
}

inline void ScotlandYardState::ObservationTensor(
    Player player, absl::Span<float> values) const {
  open_spiel::ContiguousAllocator allocator(values);
  const auto& game = static_cast<const ScotlandYardGame&>(*game_);
  game.default_observer_->WriteTensor(*this, player, &allocator);
}

namespace internal {

// game.py's _draw: u in [0, 1) against the running sum, keys sorted.
inline int Draw(const std::map<int, double>& weights,
                const std::function<double()>& rng) {
  if (weights.empty()) {
    open_spiel::SpielFatalError(
        "scotland_yard: no path of Mr. X is consistent with the record");
  }
  double total = 0.0;
  for (const auto& [key, w] : weights) total += w;
  const double u = rng() * total;
  double acc = 0.0;
  for (const auto& [key, w] : weights) {
    acc += w;
    if (u < acc) return key;
  }
  return weights.rbegin()->first;
}

struct Layer {
  std::map<int, double> counts;
  std::map<int, std::vector<int>> step;
};

}  // namespace internal

// game.py's resample_from_infostate and _path_counts: Mr. X's path drawn
// uniformly from those the public record allows (forward counts, backward
// sampling), the rest of the history kept.
inline std::unique_ptr<State> ScotlandYardState::ResampleFromInfostate(
    int player_id, std::function<double()> rng) const {
  if (player_id == 0 || mrx_ < 0) return Clone();
  const Setup& r = *setup_;
  std::vector<int> detectives =
      r.drawn ? std::vector<int>(r.num_detectives, -1) : r.detective_starts;
  std::array<int, 4> mrx_tickets = r.mrx_tickets;
  std::map<int, double> counts;
  for (int s : r.mrx_start) counts[s] = 1.0;
  std::vector<internal::Layer> layers;
  auto keep = [&counts](auto&& predicate) {
    for (auto it = counts.begin(); it != counts.end();) {
      it = predicate(it->first) ? std::next(it) : counts.erase(it);
    }
  };
  auto on_detective = [&detectives](int p) {
    return std::find(detectives.begin(), detectives.end(), p) !=
           detectives.end();
  };
  for (size_t position = 0; position < events_.size(); ++position) {
    const Event& e = events_[position];
    if (e.kind == Event::kDStart) {
      // A drawn detective's station is no start of Mr. X's (he draws next).
      detectives[e.a] = e.b;
      counts.erase(e.b);
    } else if (e.kind == Event::kX) {
      const int ticket = e.a, revealed = e.c;
      internal::Layer layer;
      std::map<int, double> next;
      for (const auto& [p, c] : counts) {
        std::vector<int> reach;
        for (const auto& [j, t] : r.adjacency[p]) {
          if (on_detective(j)) continue;
          if ((t == ticket && t != kFerry) || ticket == kBlack) {
            if (revealed < 0 || j == revealed) reach.push_back(j);
          }
        }
        std::sort(reach.begin(), reach.end());
        reach.erase(std::unique(reach.begin(), reach.end()), reach.end());
        for (int j : reach) next[j] += c;
        layer.step[p] = std::move(reach);
      }
      layer.counts = std::move(counts);
      layers.push_back(std::move(layer));
      counts = std::move(next);
      --mrx_tickets[ticket];
    } else if (e.kind == Event::kD) {
      detectives[e.a] = e.d;
      if (r.tickets_to_mrx) ++mrx_tickets[e.b];
      const bool caught = position + 1 < events_.size() &&
                          events_[position + 1].kind == Event::kEnd &&
                          events_[position + 1].a == kCaught;
      if (!caught) keep([&](int p) { return !on_detective(p); });
    } else if (e.kind == Event::kEnd) {
      if (e.a == kCaught) {
        keep(on_detective);
      } else if (e.a == kMrxStuck) {
        keep([&](int p) { return !r.MrxCanMove(p, mrx_tickets, detectives); });
      }
    }
  }
  if (CurrentPlayer() == 0 && outcome_ == kOngoing) {
    keep([&](int p) { return r.MrxCanMove(p, mrx_tickets, detectives); });
  }
  // Backward sampling of one path through the layers.
  std::vector<int> path;
  int next = internal::Draw(counts, rng);
  path.push_back(next);
  for (auto layer = layers.rbegin(); layer != layers.rend(); ++layer) {
    std::map<int, double> candidates;
    for (const auto& [p, c] : layer->counts) {
      auto found = layer->step.find(p);
      if (found != layer->step.end() &&
          std::binary_search(found->second.begin(), found->second.end(),
                             next)) {
        candidates[p] = c;
      }
    }
    next = internal::Draw(candidates, rng);
    path.push_back(next);
  }
  std::reverse(path.begin(), path.end());
  std::unique_ptr<State> state = game_->NewInitialState();
  const int n = r.num_stations;
  int moves_made = 0;
  for (Action action : History()) {
    if (state->IsChanceNode()) {
      // The detectives' drawn starts are public: only Mr. X's is redrawn.
      const auto& s = static_cast<const ScotlandYardState&>(*state);
      state->ApplyAction(s.placed() < r.num_detectives ? action : path[0]);
    } else if (state->CurrentPlayer() == 0 && action != r.double_action) {
      ++moves_made;
      state->ApplyAction((action / n) * n + path[moves_made]);
    } else {
      state->ApplyAction(action);
    }
  }
  return state;
}

}  // namespace scotland_yard
}  // namespace open_spiel_sog

#endif  // OPEN_SPIEL_SOG_NATIVE_SCOTLAND_YARD_H_
