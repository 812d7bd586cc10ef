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

// A history tree's infostate keys and its players' rows (DESIGN.md section
// 16): the flat sequence arrays CFR+ passes over, and regret matching and
// averaging of one row. history_tree.h builds them; history_engine.h's
// passes read them.

#ifndef OPEN_SPIEL_SOG_NATIVE_ROWS_H_
#define OPEN_SPIEL_SOG_NATIVE_ROWS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "open_spiel/spiel.h"

namespace open_spiel_sog {
namespace history_engine {

using ::open_spiel::Action;

// An infostate key: 64 bits of BLAKE2b (blake2b::Digest64), shown as its
// 16 hex digits where Python or a person reads it (HistoryKeys' keys).
using Key = uint64_t;

// A flat open-addressing map from (a, b) pairs of 64-bit integers to
// non-negative ids, for the keys of a search's histories and rows: no
// allocation per entry and one probe in the common case, where
// std::unordered_map allocates a node per insert (a tenth of a growth
// step's time in phantom_ttt). `a` is a BLAKE2b digest, already mixed.
class FlatIndex {
 public:
  // The id of (a, b), or -1.
  int64_t Find(uint64_t a, int64_t b) const {
    if (slots_.empty()) return -1;
    for (size_t i = Home(a, b);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.id < 0) return -1;
      if (s.a == a && s.b == b) return s.id;
    }
  }

  // Adds (a, b) -> id; (a, b) must not be present.
  void Insert(uint64_t a, int64_t b, int64_t id) {
    if (2 * (size_ + 1) > slots_.size()) Grow();
    Place(a, b, id);
    ++size_;
  }

  void Clear() {
    slots_.clear();
    mask_ = 0;
    size_ = 0;
  }

  size_t size() const { return size_; }

 private:
  struct Slot {
    uint64_t a;
    int64_t b;
    int64_t id;  // -1: empty
  };

  size_t Home(uint64_t a, int64_t b) const {
    uint64_t h = a ^ (static_cast<uint64_t>(b) * 0x9e3779b97f4a7c15ULL);
    h ^= h >> 29;
    return static_cast<size_t>(h) & mask_;
  }

  void Place(uint64_t a, int64_t b, int64_t id) {
    size_t i = Home(a, b);
    while (slots_[i].id >= 0) i = (i + 1) & mask_;
    slots_[i] = {a, b, id};
  }

  void Grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    const size_t n = old.empty() ? 1024 : 2 * old.size();
    slots_.assign(n, Slot{0, 0, -1});
    mask_ = n - 1;
    for (const Slot& s : old) {
      if (s.id >= 0) Place(s.a, s.b, s.id);
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

// One player's rows: infostates where it acts, each a run of slots (its
// legal actions) in the flat sequence arrays, after `num_root` root
// sequences (the sequence index of row r's slot k is offset[r] + k).
struct Rows {
  int64_t num_root = 1;
  FlatIndex index;  // (key, sequence) -> row
  std::vector<int64_t> key;                        // key id
  std::vector<int64_t> parent_seq;
  std::vector<int64_t> offset;
  std::vector<int32_t> count;
  std::vector<int32_t> level;
  std::vector<uint8_t> frozen;
  std::vector<double> row_value;  // the latest update's
  // Per sequence (root sequences first).
  std::vector<Action> action;
  std::vector<uint8_t> active;  // in the tree (k = 1 adds slots one by one)
  std::vector<double> regrets, cumulative, current, last, value, reach,
      visits;

  int64_t size() const { return static_cast<int64_t>(offset.size()); }
  int64_t sequences() const { return static_cast<int64_t>(action.size()); }

  void Reset(int64_t roots) {
    *this = Rows();
    num_root = roots;
    for (int64_t i = 0; i < roots; ++i) AddSequence(-1);
    reach.assign(roots, 1.0);
  }

  void AddSequence(Action a) {
    action.push_back(a);
    active.push_back(1);
    for (auto* v : {&regrets, &cumulative, &current, &last, &value, &reach,
                    &visits}) {
      v->push_back(0.0);
    }
  }

  // Regret matching (+) of row r into `out` (its slots): positive regrets
  // (plus the last instantaneous ones with `predictive`) over active slots,
  // or uniform over them.
  void Match(int64_t r, bool predictive, double* out) const {
    const int64_t o = offset[r], k = count[r];
    double positive = 0.0;
    int64_t n = 0;
    for (int64_t i = 0; i < k; ++i) {
      if (!active[o + i]) continue;
      double g = regrets[o + i] + (predictive ? last[o + i] : 0.0);
      positive += g > 0.0 ? g : 0.0;
      ++n;
    }
    if (n == 0) {  // (no slot in the tree yet: uniform)
      for (int64_t i = 0; i < k; ++i) out[i] = 1.0 / static_cast<double>(k);
      return;
    }
    for (int64_t i = 0; i < k; ++i) {
      if (!active[o + i]) {
        out[i] = 0.0;
        continue;
      }
      double g = regrets[o + i] + (predictive ? last[o + i] : 0.0);
      out[i] = positive > 0.0 ? (g > 0.0 ? g : 0.0) / positive
                              : 1.0 / static_cast<double>(n);
    }
  }

  // The average policy of row r over its slots (frozen: its fixed policy).
  void Average(int64_t r, double* out) const {
    const int64_t o = offset[r], k = count[r];
    if (frozen[r]) {
      for (int64_t i = 0; i < k; ++i) out[i] = current[o + i];
      return;
    }
    double total = 0.0;
    int64_t n = 0;
    for (int64_t i = 0; i < k; ++i) {
      if (active[o + i]) {
        total += cumulative[o + i];
        ++n;
      }
    }
    if (n == 0) {
      for (int64_t i = 0; i < k; ++i) out[i] = 1.0 / static_cast<double>(k);
      return;
    }
    for (int64_t i = 0; i < k; ++i) {
      out[i] = !active[o + i] ? 0.0
               : total > 0.0  ? cumulative[o + i] / total
                              : 1.0 / static_cast<double>(n);
    }
  }
};

}  // namespace history_engine
}  // namespace open_spiel_sog

#endif  // OPEN_SPIEL_SOG_NATIVE_ROWS_H_
