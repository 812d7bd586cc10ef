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

// The history engine's two-thread anchored run (DESIGN.md section 16;
// Obscuro's expander beside its CFR thread): HistoryEngine::RunTwoThreads
// and the expander's read-only walk, off-tree expansion and commit.
// history_engine.h declares them and includes this file after its class.

#ifndef OPEN_SPIEL_SOG_NATIVE_EXPANDER_H_
#define OPEN_SPIEL_SOG_NATIVE_EXPANDER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

namespace open_spiel_sog {
namespace history_engine {

inline std::tuple<int64_t, int64_t, int64_t> HistoryEngine::RunTwoThreads(
    int64_t simulations, double seconds, int64_t max_nodes) {
  using Clock = std::chrono::steady_clock;
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(seconds));
  auto past = [&]() { return Clock::now() >= deadline; };
  RootWeights();
  const int64_t limit = simulations < 0 ? INT64_MAX : simulations;
  int64_t sims = 0, walks = 0;
  for (int p = 0; p < 2; ++p) walk_policy_[p] = rows_[p].current;
  std::vector<uint8_t> claimed(Size(), 0);
  std::vector<Prepared> built;
  int64_t new_nodes = 0;
  // Control, under mu: pause requests and the CFR thread's answers.
  std::mutex mu;
  std::condition_variable cv;
  int64_t requested = 0, resumed = 0;
  bool quit = false;
  std::atomic<int64_t> acknowledged{0}, iterated{0};
  std::thread cfr([&]() {
    while (true) {
      {
        std::unique_lock<std::mutex> lock(mu);
        if (requested != acknowledged.load(std::memory_order_relaxed)) {
          acknowledged.store(requested, std::memory_order_release);
          cv.wait(lock, [&]() { return quit || resumed == requested; });
        }
        if (quit) return;
      }
      Iterate();
      iterated.fetch_add(1, std::memory_order_release);
    }
  });
  // (Joins the CFR thread however this function ends: Ctrl-C raises out
  // of CheckSignals.)
  struct Join {
    std::mutex& mu;
    std::condition_variable& cv;
    bool& quit;
    std::thread& thread;
    ~Join() {
      {
        std::lock_guard<std::mutex> lock(mu);
        quit = true;
      }
      cv.notify_all();
      if (thread.joinable()) thread.join();
    }
  } join{mu, cv, quit, cfr};
  int64_t iterated_at_commit = 0, pausing = 0;
  while (!past()) {
    // (Full: the tree holds max_nodes or the simulations are spent; the
    // CFR thread iterates on to the deadline while this thread commits
    // what it built and waits.)
    const bool full = sims + static_cast<int64_t>(built.size()) >= limit ||
                      Size() + new_nodes >= max_nodes;
    if (!full) {
      ++walks;
      const int64_t leaf = WalkTo(walks % 2);
      if (leaf >= 0 && !claimed[leaf]) {
        claimed[leaf] = 1;
        built.push_back(Prepare(leaf));
        new_nodes += static_cast<int64_t>(built.back().actions.size());
      }
      if ((walks & 1023) == 0) CheckSignals();
    }
    if (pausing == 0 && !built.empty() &&
        (full ||
         iterated.load(std::memory_order_acquire) > iterated_at_commit)) {
      std::lock_guard<std::mutex> lock(mu);
      pausing = ++requested;
    }
    if (pausing == 0 && full) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      CheckSignals();
    }
    if (pausing == 0 ||
        acknowledged.load(std::memory_order_acquire) != pausing) {
      if (full) std::this_thread::yield();
      continue;
    }
    // The CFR thread waits: commit.
    for (Prepared& prep : built) {
      if (Size() + static_cast<int64_t>(prep.actions.size()) > max_nodes) {
        break;
      }
      Commit(&prep);
      ++sims;
    }
    built.clear();
    new_nodes = 0;
    for (int p = 0; p < 2; ++p) walk_policy_[p] = rows_[p].current;
    claimed.assign(Size(), 0);
    iterated_at_commit = iterated.load(std::memory_order_acquire);
    {
      std::lock_guard<std::mutex> lock(mu);
      resumed = pausing;
    }
    cv.notify_all();
    pausing = 0;
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    quit = true;
  }
  cv.notify_all();
  cfr.join();
  int64_t iterations = iterated.load();
  if (iterations == iterated_at_commit && sims > 0) {
    Iterate();
    ++iterations;
  }
  return {sims, iterations, walks};
}

inline int64_t HistoryEngine::WalkTo(int explorer) {
  int64_t n = roots_.size() == 1 ? roots_[0] : roots_[Sample(root_cdf_)];
  while (true) {
    const int actor = actor_[n];
    if (actor == kTerminal) return -1;
    if (leaf_[n]) return n;
    ++work_;
    n = children_[child_start_[n] +
                  (actor == kChance
                       ? ChanceSlot(n)
                       : PolicySlot(actor == explorer,
                                    walk_policy_[actor].data() +
                                        rows_[actor].offset[row_[n]],
                                    child_count_[n]))];
  }
}

inline HistoryEngine::Prepared HistoryEngine::Prepare(int64_t n) {
  Prepared out;
  out.node = n;
  const State& state = *states_[n];
  if (actor_[n] == kChance) {
    for (const auto& [a, p] : state.ChanceOutcomes()) {
      out.actions.push_back(a);
      out.probs.push_back(p);
    }
  } else if (row_[n] >= 0) {
    const Rows& rows = rows_[actor_[n]];
    const int64_t off = rows.offset[row_[n]];
    out.actions.assign(rows.action.begin() + off,
                       rows.action.begin() + off + rows.count[row_[n]]);
    out.probs.assign(out.actions.size(), 1.0);
  } else {
    out.actions = state.LegalActions();
    out.probs.assign(out.actions.size(), 1.0);
  }
  for (Action a : out.actions) {
    std::unique_ptr<State> child = state.Child(a);
    auto keys = ChildKeyHashes(n, state, a, *child);
    out.keys[0].push_back(keys.first);
    out.keys[1].push_back(keys.second);
    out.values.push_back(child->IsTerminal()
                             ? std::numeric_limits<double>::quiet_NaN()
                             : Rollout(*child));
    out.states.push_back(std::move(child));
  }
  return out;
}

inline void HistoryEngine::Commit(Prepared* prep) {
  const int64_t n = prep->node;
  const int64_t k = static_cast<int64_t>(prep->actions.size());
  if (actor_[n] == kChance) {
    ReserveChildren(n, k);
  } else {
    // (A row made since, by another history of the infostate, has the
    // same legal actions in the same order.)
    MakeRow(n, &prep->actions);
    if (ChildCount(n) != k) {
      Refuse("history engine: an infostate's histories disagree on their "
             "legal actions (" + std::to_string(ChildCount(n)) + " and " +
             std::to_string(k) + ")");
    }
  }
  for (int64_t i = 0; i < k; ++i) {
    if (children_[child_start_[n] + i] >= 0) continue;
    AttachChild(n, i, prep->actions[i], prep->probs[i],
                std::move(prep->states[i]), KeyId(prep->keys[0][i]),
                KeyId(prep->keys[1][i]), prep->values[i]);
  }
  Finish(n);
}

}  // namespace history_engine
}  // namespace open_spiel_sog

#endif  // OPEN_SPIEL_SOG_NATIVE_EXPANDER_H_
