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

// Uniform random rollouts, shared by the shim's `random_rollouts` (shim.cc)
// and the history engine's leaves (history_engine.h). Its random numbers
// are SplitMix64 (Steele, Lea and Flood 2014), as
// algorithms/sog/rollout_values.py has them in Python, so rollouts give the
// same results with and without the shim. Safe without the GIL: bad input
// is a std::invalid_argument (a ValueError in Python).

#ifndef OPEN_SPIEL_SOG_NATIVE_ROLLOUTS_H_
#define OPEN_SPIEL_SOG_NATIVE_ROLLOUTS_H_

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "open_spiel/spiel.h"

namespace open_spiel_sog {
namespace rollouts {

inline uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// u in [0, 1) from the top 53 bits.
inline double Uniform(uint64_t& state) {
  return static_cast<double>(SplitMix64(state) >> 11) * 0x1.0p-53;
}

// Player 0's return of one game played from `state` to the end with
// uniformly random legal actions, chance outcomes sampled from their
// distribution (u in [0, 1) against the running sum of probabilities, in
// the order ChanceOutcomes lists them). With `max_moves` > 0, a game still
// running after that many actions (chance outcomes included) stops there
// and scores `truncated_value`. Adds the actions played to `*played`.
inline double RandomRollout(const open_spiel::State& state, uint64_t& rng,
                            int64_t max_moves, double truncated_value,
                            int64_t* played) {
  std::unique_ptr<open_spiel::State> s = state.Clone();
  int64_t moves = 0;
  while (!s->IsTerminal()) {
    if (max_moves > 0 && moves == max_moves) break;
    ++moves;
    if (s->IsChanceNode()) {
      open_spiel::ActionsAndProbs outcomes = s->ChanceOutcomes();
      const double u = Uniform(rng);
      double cumulative = 0.0;
      open_spiel::Action chosen = outcomes.back().first;
      for (const auto& [action, probability] : outcomes) {
        cumulative += probability;
        if (u < cumulative) {
          chosen = action;
          break;
        }
      }
      s->ApplyAction(chosen);
    } else {
      std::vector<open_spiel::Action> legal = s->LegalActions();
      if (legal.empty()) {
        throw std::invalid_argument(
            "a non-terminal state has no legal actions: " + s->ToString());
      }
      s->ApplyAction(legal[SplitMix64(rng) % legal.size()]);
    }
  }
  *played += moves;
  return s->IsTerminal() ? s->Returns()[0] : truncated_value;
}

}  // namespace rollouts
}  // namespace open_spiel_sog

#endif  // OPEN_SPIEL_SOG_NATIVE_ROLLOUTS_H_
