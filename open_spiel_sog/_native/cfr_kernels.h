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

// The passes of one GT-CFR regret update (algorithms/sog/updates.py) over one
// player's sequence arrays, in C++. algorithms/cfr/growing_passes.py has
// each of them in numpy as well (`reach`, `values`, `propagate_entry_values`,
// the regret and average update with regret matching), used without the
// shim; tests check that both give the same numbers.
//
// Layout (algorithms/cfr/growing.py's PlayerSequences and
// CompiledSequences): a player's sequences are the `num_root` root
// sequences, then `width` slots per row (decision infostate), so row r's
// action k is sequence num_root + r * width + k. Each row has a
// parent sequence (the player's last own action before it, or a root
// sequence). Rows and entries are numbered in the order the tree grew, so a
// row's parent sequence belongs to an earlier row and an entry's parent
// entry comes before it; the passes rely on that order and check it.
//
// Each pass is a loop over rows or entries; numpy needs a few calls per
// level of the tree for the same work, which dominated small searches.

#ifndef OPEN_SPIEL_SOG_NATIVE_CFR_KERNELS_H_
#define OPEN_SPIEL_SOG_NATIVE_CFR_KERNELS_H_

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "open_spiel/python/pybind11/pybind11.h"

namespace open_spiel_sog {
namespace cfr_kernels {

namespace py = ::pybind11;

using Doubles = py::array_t<double, py::array::c_style>;
using Int64s = py::array_t<int64_t, py::array::c_style>;
using Bools = py::array_t<bool, py::array::c_style>;

[[noreturn]] inline void Fail(const std::string& message) {
  throw py::value_error("cfr kernel: " + message);
}

// Checks that `a` holds at least `count` elements (and, where `cols` > 0, is
// a 2-d array with `cols` columns).
template <typename T>
void CheckSize(const py::array_t<T, py::array::c_style>& a, int64_t count,
               const char* name, int64_t cols = 0) {
  if (cols > 0 && (a.ndim() != 2 || a.shape(1) != cols)) {
    Fail(std::string(name) + " must be a 2-d array with " +
         std::to_string(cols) + " columns");
  }
  if (a.size() < count) {
    Fail(std::string(name) + " has " + std::to_string(a.size()) +
         " elements, needs " + std::to_string(count));
  }
}

// Checks that rows' parent sequences come before the rows themselves.
inline void CheckRowOrder(const int64_t* parent_seq, int64_t rows,
                          int64_t num_root, int64_t width) {
  for (int64_t r = 0; r < rows; ++r) {
    if (parent_seq[r] < 0 || parent_seq[r] >= num_root + r * width) {
      Fail("row " + std::to_string(r) + " has parent sequence " +
           std::to_string(parent_seq[r]) + ", not one of an earlier row");
    }
  }
}

// growing_passes.reach: the reach of every sequence under `policy`
// [rows', width] (rows' >= rows), from `root_range` at the root sequences.
inline Doubles Reach(const Int64s& r_parent_seq, const Doubles& policy,
                     const Doubles& root_range, int64_t width) {
  const int64_t rows = r_parent_seq.size();
  const int64_t num_root = root_range.size();
  if (rows > 0) CheckSize(policy, rows * width, "policy", width);
  const int64_t* parent = r_parent_seq.data();
  CheckRowOrder(parent, rows, num_root, width);
  Doubles out(num_root + rows * width);
  double* reach = out.mutable_data();
  const double* pol = policy.data();
  const double* root = root_range.data();
  for (int64_t i = 0; i < num_root; ++i) reach[i] = root[i];
  for (int64_t r = 0; r < rows; ++r) {
    const double base = reach[parent[r]];
    double* seq = reach + num_root + r * width;
    const double* p = pol + r * width;
    for (int64_t k = 0; k < width; ++k) seq[k] = base * p[k];
  }
  return out;
}

// growing_passes.values: turns `direct` (each sequence's value from terminals
// and leaves reached right after it) into sequence values, in place, and
// returns each row's value under `policy`.
inline Doubles Values(const Int64s& r_parent_seq, const Doubles& policy,
                      Doubles direct, int64_t num_root, int64_t width) {
  const int64_t rows = r_parent_seq.size();
  CheckSize(direct, num_root + rows * width, "direct");
  if (rows > 0) CheckSize(policy, rows * width, "policy", width);
  const int64_t* parent = r_parent_seq.data();
  CheckRowOrder(parent, rows, num_root, width);
  Doubles out(rows);
  double* row_values = out.mutable_data();
  double* seq = direct.mutable_data();
  const double* pol = policy.data();
  for (int64_t r = rows - 1; r >= 0; --r) {
    const double* a = seq + num_root + r * width;
    const double* p = pol + r * width;
    double v = 0.0;
    for (int64_t k = 0; k < width; ++k) v += a[k] * p[k];
    row_values[r] = v;
    seq[parent[r]] += v;
  }
  return out;
}

// growing_passes.propagate_entry_values: `values` [E] holds each entry's
// value from its own leaves and terminals; in place, an entry with a row
// (entry_row >= 0) takes the value of its actions under `policy`, and every
// entry adds its value to its parent: to the slot of the action that led to
// it (e_prow, e_pslot) where its player acted last, else to its parent entry
// (e_parent; -1 at the root).
inline void EntryValues(Doubles values, const Int64s& entry_row,
                        const Int64s& e_prow, const Int64s& e_pslot,
                        const Int64s& e_parent, const Doubles& policy,
                        int64_t rows, int64_t width) {
  const int64_t n = values.size();
  CheckSize(entry_row, n, "entry_row");
  CheckSize(e_prow, n, "e_prow");
  CheckSize(e_pslot, n, "e_pslot");
  CheckSize(e_parent, n, "e_parent");
  if (rows > 0) CheckSize(policy, rows * width, "policy", width);
  std::vector<double> action_values(rows * width, 0.0);
  double* v = values.mutable_data();
  const int64_t* row_of = entry_row.data();
  const int64_t* prow = e_prow.data();
  const int64_t* pslot = e_pslot.data();
  const int64_t* parent = e_parent.data();
  const double* pol = policy.data();
  for (int64_t e = n - 1; e >= 0; --e) {
    const int64_t r = row_of[e];
    if (r >= 0) {
      if (r >= rows) Fail("entry_row names a row past `rows`");
      double total = 0.0;
      for (int64_t k = 0; k < width; ++k) {
        total += action_values[r * width + k] * pol[r * width + k];
      }
      v[e] = total;
    }
    if (prow[e] >= 0) {
      if (prow[e] >= rows || pslot[e] < 0 || pslot[e] >= width) {
        Fail("entry " + std::to_string(e) + " names a missing row slot");
      }
      action_values[prow[e] * width + pslot[e]] += v[e];
    } else if (parent[e] >= 0) {
      if (parent[e] >= e) {
        Fail("entry " + std::to_string(e) + " has a later parent entry");
      }
      v[parent[e]] += v[e];
    }
  }
}

// Regret matching of one row of `width` slots, in place in `pol`: its
// positive regrets over the active slots, normalised, or uniform over the
// active slots where none is positive (0 elsewhere).
inline void MatchRow(const double* reg, const bool* act, double* pol,
                     int64_t width) {
  double positive = 0.0;
  int64_t count = 0;
  for (int64_t k = 0; k < width; ++k) {
    if (act[k]) {
      positive += reg[k] > 0.0 ? reg[k] : 0.0;
      ++count;
    }
  }
  for (int64_t k = 0; k < width; ++k) {
    if (!act[k]) {
      pol[k] = 0.0;
    } else if (positive > 0.0) {
      pol[k] = (reg[k] > 0.0 ? reg[k] : 0.0) / positive;
    } else {
      pol[k] = 1.0 / static_cast<double>(count);
    }
  }
}

// The CFR+ step of RegretUpdates._update (sog/updates.py) for one player's
// first `rows` rows, in place: the average policy gains weight * own reach *
// policy; regrets gain (action value - row value) at active actions and are
// clipped at 0; the policy becomes regret matching over the active actions
// (uniform over them where no regret is positive).
inline void RegretUpdate(Doubles regrets, Doubles avg, Doubles policy,
                         const Bools& active, const Doubles& seq_values,
                         const Doubles& row_values, const Doubles& own_reach,
                         double weight, int64_t num_root, int64_t rows,
                         int64_t width) {
  if (rows == 0) return;
  CheckSize(regrets, rows * width, "regrets", width);
  CheckSize(avg, rows * width, "avg", width);
  CheckSize(policy, rows * width, "policy", width);
  CheckSize(active, rows * width, "active", width);
  CheckSize(seq_values, num_root + rows * width, "seq_values");
  CheckSize(row_values, rows, "row_values");
  CheckSize(own_reach, rows, "own_reach");
  double* reg = regrets.mutable_data();
  double* av = avg.mutable_data();
  double* pol = policy.mutable_data();
  const bool* act = active.data();
  const double* q = seq_values.data() + num_root;
  const double* rv = row_values.data();
  const double* own = own_reach.data();
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t o = r * width;
    const double w = weight * own[r];
    for (int64_t k = 0; k < width; ++k) {
      av[o + k] += w * pol[o + k];
      const double g = reg[o + k] + (act[o + k] ? q[o + k] - rv[r] : 0.0);
      reg[o + k] = g > 0.0 ? g : 0.0;
    }
    MatchRow(reg + o, act + o, pol + o, width);
  }
}

// growing_passes.rematch_rows on rows [begin, end), in place in `policy`: each
// row's positive regrets over its active actions, normalised, or uniform
// over the active actions where none is positive (0 elsewhere).
inline void RegretMatching(const Doubles& regrets, const Bools& active,
                           Doubles policy, int64_t begin, int64_t end) {
  const int64_t width = policy.ndim() == 2 ? policy.shape(1) : 0;
  if (begin < 0 || end < begin || end > policy.shape(0)) {
    Fail("rows [" + std::to_string(begin) + ", " + std::to_string(end) +
         ") are not rows of policy");
  }
  CheckSize(regrets, end * width, "regrets", width);
  CheckSize(active, end * width, "active", width);
  const double* reg = regrets.data();
  const bool* act = active.data();
  double* pol = policy.mutable_data();
  for (int64_t r = begin; r < end; ++r) {
    MatchRow(reg + r * width, act + r * width, pol + r * width, width);
  }
}

// Growth.select (sog/growth.py): samples an action slot of `row` (its first `k`
// slots) from 1/2 PUCT + 1/2 the CFR average policy, by inverting the
// cumulative distribution at `u` in [0, 1) as numpy's Generator.choice does
// (so the same uniform gives the same slot). PUCT scores each slot by its
// sequence value from the latest update (the row's value for inactive
// slots) divided by `normaliser` (0 where it is not positive, or where no
// values are known: `seq_values` empty or `row` past `row_values`), minus
// the virtual loss of the `pending` visits, plus the prior's exploration
// bonus; ties go to the first slot. The CFR part is the average policy over
// active slots, else the current policy, else uniform over active slots.
// The 2-d arrays have one row per decision row, any number of columns >= k.
inline int64_t Select(const Doubles& seq_values, const Doubles& row_values,
                      int64_t num_root, int64_t values_width,
                      const Bools& active, const Doubles& visits,
                      const Doubles& pending, const Doubles& prior,
                      const Doubles& avg, const Doubles& policy, int64_t row,
                      int64_t k, double normaliser, double utility_range,
                      double c_puct, double virtual_loss, double u) {
  if (k < 1) Fail("a row needs at least one action");
  const auto check = [&](auto& a, const char* name) {
    if (a.ndim() != 2 || a.shape(1) < k || a.shape(0) <= row || row < 0) {
      Fail(std::string(name) + " has no row " + std::to_string(row) +
           " with " + std::to_string(k) + " actions");
    }
    return a.shape(1);
  };
  const int64_t wa = check(active, "active"), wv = check(visits, "visits"),
                wp = check(pending, "pending"), wr = check(prior, "prior"),
                wg = check(avg, "avg"), wo = check(policy, "policy");
  const bool* act = active.data() + row * wa;
  const double* vis = visits.data() + row * wv;
  const double* pend = pending.data() + row * wp;
  const double* pri = prior.data() + row * wr;
  const double* av = avg.data() + row * wg;
  const double* pol = policy.data() + row * wo;
  std::vector<double> q(k, 0.0);
  if (seq_values.size() > 0 && row < row_values.size() && normaliser > 0.0) {
    const int64_t base = num_root + row * values_width;
    if (base + k > seq_values.size()) Fail("seq_values is too short");
    const double fpu = row_values.data()[row];
    for (int64_t i = 0; i < k; ++i) {
      q[i] = (act[i] ? seq_values.data()[base + i] : fpu) / normaliser;
    }
  }
  double visit_total = 0.0, pending_total = 0.0;
  for (int64_t i = 0; i < k; ++i) visit_total += vis[i];
  for (int64_t i = 0; i < k; ++i) pending_total += pend[i];
  const double sqrt_total = std::sqrt(visit_total + pending_total + 1.0);
  int64_t best = 0;
  double best_score = 0.0;
  for (int64_t i = 0; i < k; ++i) {
    const double denominator = 1.0 + vis[i] + pend[i];
    const double score =
        q[i] - virtual_loss * utility_range * pend[i] / denominator +
        c_puct * utility_range * pri[i] * sqrt_total / denominator;
    if (i == 0 || score > best_score) {
      best = i;
      best_score = score;
    }
  }
  std::vector<double> cfr(k, 0.0);
  double avg_total = 0.0;
  for (int64_t i = 0; i < k; ++i) {
    cfr[i] = act[i] ? av[i] : 0.0;
    avg_total += cfr[i];
  }
  double cfr_total = 0.0;
  for (int64_t i = 0; i < k; ++i) {
    cfr[i] = avg_total > 0.0 ? cfr[i] / avg_total : pol[i];
    cfr_total += cfr[i];
  }
  if (cfr_total <= 0.0) {
    int64_t count = 0;
    for (int64_t i = 0; i < k; ++i) count += act[i] ? 1 : 0;
    for (int64_t i = 0; i < k; ++i) {
      cfr[i] = act[i] ? 1.0 / static_cast<double>(count > 0 ? count : 1) : 0.0;
    }
  }
  std::vector<double> cdf(k);
  double running = 0.0;
  for (int64_t i = 0; i < k; ++i) {
    running += 0.5 * (i == best ? 1.0 : 0.0) + 0.5 * cfr[i];
    cdf[i] = running;
  }
  for (int64_t i = 0; i < k; ++i) {
    if (u < cdf[i] / running) return i;
  }
  return k - 1;
}

// The end of one player's update: the sequence values from `seq_values`
// (the direct values, in place) and the row values (`Values`), then, where
// there are rows, the regret and average update with regret matching
// (`RegretUpdate`, own reach of each row's parent sequence, weight
// `avg_weight`). Returns the row values.
inline Doubles ValuesAndRegretUpdate(const Int64s& r_parent_seq,
                                     Doubles policy, Doubles regrets,
                                     Doubles avg, const Bools& active,
                                     Doubles seq_values,
                                     const Doubles& own_reach,
                                     double avg_weight, int64_t num_root,
                                     int64_t width) {
  const int64_t rows = r_parent_seq.size();
  Doubles row_values = Values(r_parent_seq, policy, seq_values, num_root,
                              width);
  if (rows > 0) {
    CheckSize(own_reach, num_root + rows * width, "own_reach");
    Doubles own(rows);
    double* o = own.mutable_data();
    const double* reach = own_reach.data();
    const int64_t* parent = r_parent_seq.data();
    for (int64_t r = 0; r < rows; ++r) o[r] = reach[parent[r]];
    RegretUpdate(regrets, avg, policy, active, seq_values, row_values, own,
                 avg_weight, num_root, rows, width);
  }
  return row_values;
}

// One player's whole CFR+ update of RegretUpdates._update where every leaf
// value is a fixed sum over histories (terminals and folded rollout leaves),
// in one call: both players' reaches under their current policies (`Reach`);
// each entry's value, sign * weights[i] * opponent reach of opp_seqs[i]
// summed into own_entries[i] in history order (numpy's bincount order);
// each sequence's direct value, the entry values summed by e_seq in entry
// order; with `propagate`, the entry values propagated up the tree under the
// current policy (`EntryValues`); the sequence and row values (`Values`);
// and, where there are rows, the regret and average update with regret
// matching (`RegretUpdate`, own reach of each row's parent sequence, weight
// `avg_weight`). Returns (own reach, opponent reach, sequence values, row
// values, entry values): the same numbers as those passes called one by one
// from sog/updates.py.
inline py::tuple FixedUpdate(
    const Int64s& r_parent_seq, Doubles policy, Doubles regrets, Doubles avg,
    const Bools& active, const Doubles& root_range, int64_t width,
    const Int64s& opp_r_parent_seq, const Doubles& opp_policy,
    const Doubles& opp_root_range, int64_t opp_width,
    const Int64s& own_entries, const Int64s& opp_seqs, const Doubles& weights,
    double sign, const Int64s& e_seq, bool propagate, const Int64s& entry_row,
    const Int64s& e_prow, const Int64s& e_pslot, const Int64s& e_parent,
    double avg_weight) {
  Doubles own_reach = Reach(r_parent_seq, policy, root_range, width);
  Doubles opp_reach =
      Reach(opp_r_parent_seq, opp_policy, opp_root_range, opp_width);
  const int64_t rows = r_parent_seq.size();
  const int64_t num_root = root_range.size();
  const int64_t num_seq = num_root + rows * width;
  const int64_t num_entries = e_seq.size();
  const int64_t n = own_entries.size();
  CheckSize(opp_seqs, n, "opp_seqs");
  CheckSize(weights, n, "weights");
  Doubles entry_values(num_entries);
  double* ev = entry_values.mutable_data();
  for (int64_t e = 0; e < num_entries; ++e) ev[e] = 0.0;
  const int64_t* entries = own_entries.data();
  const int64_t* seqs = opp_seqs.data();
  const double* w = weights.data();
  const double* opp = opp_reach.data();
  const int64_t opp_size = opp_reach.size();
  for (int64_t i = 0; i < n; ++i) {
    if (entries[i] < 0 || entries[i] >= num_entries || seqs[i] < 0 ||
        seqs[i] >= opp_size) {
      Fail("history " + std::to_string(i) + " names a missing entry or "
           "opponent sequence");
    }
    ev[entries[i]] += (sign * w[i]) * opp[seqs[i]];
  }
  Doubles seq_values(num_seq);
  double* direct = seq_values.mutable_data();
  for (int64_t s = 0; s < num_seq; ++s) direct[s] = 0.0;
  const int64_t* es = e_seq.data();
  for (int64_t e = 0; e < num_entries; ++e) {
    if (es[e] < 0 || es[e] >= num_seq) {
      Fail("entry " + std::to_string(e) + " names a missing sequence");
    }
    direct[es[e]] += ev[e];
  }
  if (propagate) {
    EntryValues(entry_values, entry_row, e_prow, e_pslot, e_parent, policy,
                rows, width);
  }
  Doubles row_values =
      ValuesAndRegretUpdate(r_parent_seq, policy, regrets, avg, active,
                            seq_values, own_reach, avg_weight, num_root,
                            width);
  return py::make_tuple(own_reach, opp_reach, seq_values, row_values,
                        entry_values);
}

// --- A CVPN's packed leaf queries (cvpn.CVPNValueFunction.evaluate_packed) --
//
// GT-CFR values its leaves with one network call per update; around it,
// numpy took some fifty small calls to normalise the ranges, fill the input
// rows and scale the outputs back, as long as the network itself on Leduc.
// These do the same arithmetic in the same order (the numbers are equal to
// the bit; tests compare them with the numpy path).

using Floats = py::array_t<float, py::array::c_style>;

// Player p's entries i (of query eq[i]) at input column col[i]: the range
// normalised per query (r / its sum, uniform 1 / max(size, 1) where the sum
// is 0) written into the inputs; returns the per-query sums.
inline std::vector<double> FillRanges(float* in, int64_t num, int64_t width,
                                      const Int64s& eq, const Int64s& col,
                                      const Doubles& range,
                                      const Int64s& sizes, const char* name) {
  const int64_t n = range.size();
  if (eq.size() != n || col.size() != n) {
    Fail(std::string(name) + ": entry_query, column and range differ in "
         "length");
  }
  if (sizes.size() != num) {
    Fail(std::string(name) + ": sizes must have one entry per query");
  }
  const int64_t* q = eq.data();
  const int64_t* c = col.data();
  const double* r = range.data();
  std::vector<double> norms(num, 0.0);
  for (int64_t i = 0; i < n; ++i) {
    if (q[i] < 0 || q[i] >= num || c[i] < 0 || c[i] >= width) {
      Fail(std::string(name) + ": entry " + std::to_string(i) +
           " names a missing query or input column");
    }
    norms[q[i]] += r[i];
  }
  const int64_t* size = sizes.data();
  for (int64_t i = 0; i < n; ++i) {
    const double norm = norms[q[i]];
    const double v = norm > 0 ? r[i] / norm
                              : 1.0 / static_cast<double>(
                                          size[q[i]] > 1 ? size[q[i]] : 1);
    in[q[i] * width + c[i]] = static_cast<float>(v);
  }
  return norms;
}

inline py::tuple PackInputs(const Floats& heads, const Int64s& eq0,
                            const Int64s& eq1, const Int64s& col0,
                            const Int64s& col1, const Doubles& range0,
                            const Doubles& range1, const Int64s& sizes0,
                            const Int64s& sizes1, const Doubles& chance,
                            int64_t input_size) {
  const int64_t num = chance.size();
  if (heads.ndim() != 2 || heads.shape(0) != num ||
      heads.shape(1) > input_size) {
    Fail("heads must be [queries, width <= input_size]");
  }
  const int64_t head_width = heads.shape(1);
  Floats inputs({num, input_size});
  float* in = inputs.mutable_data();
  const float* h = heads.data();
  for (int64_t q = 0; q < num; ++q) {
    float* row = in + q * input_size;
    for (int64_t k = 0; k < head_width; ++k) row[k] = h[q * head_width + k];
    for (int64_t k = head_width; k < input_size; ++k) row[k] = 0.0f;
  }
  std::vector<double> norm0 = FillRanges(in, num, input_size, eq0, col0,
                                         range0, sizes0, "player 0");
  std::vector<double> norm1 = FillRanges(in, num, input_size, eq1, col1,
                                         range1, sizes1, "player 1");
  Doubles scale0(num), scale1(num);
  double* s0 = scale0.mutable_data();
  double* s1 = scale1.mutable_data();
  const double* ch = chance.data();
  for (int64_t q = 0; q < num; ++q) {
    s0[q] = norm1[q] * ch[q];
    s1[q] = norm0[q] * ch[q];
  }
  return py::make_tuple(inputs, scale0, scale1);
}

// values[eq[i], rows[i]] * unit * scale[eq[i]], in double.
inline Doubles UnpackValues(const Floats& values, const Int64s& eq,
                            const Int64s& rows, double unit,
                            const Doubles& scale) {
  if (values.ndim() != 2) Fail("values must be a 2-d array");
  const int64_t num = values.shape(0), cols = values.shape(1);
  const int64_t n = eq.size();
  if (rows.size() != n || scale.size() != num) {
    Fail("entry_query and rows differ in length, or scales are not one per "
         "query");
  }
  Doubles out(n);
  double* o = out.mutable_data();
  const float* v = values.data();
  const int64_t* q = eq.data();
  const int64_t* r = rows.data();
  const double* s = scale.data();
  for (int64_t i = 0; i < n; ++i) {
    if (q[i] < 0 || q[i] >= num || r[i] < 0 || r[i] >= cols) {
      Fail("entry " + std::to_string(i) + " names a missing query or row");
    }
    o[i] = static_cast<double>(v[q[i] * cols + r[i]]) * unit * s[q[i]];
  }
  return out;
}

// --- One player's update of a search whose leaves a network values -------
//
// GT-CFR's `_update` with a CVPN (cvpn.CVPNValueFunction) made some forty
// numpy calls around each network call: the reaches, the leaves' ranges, the
// packing, the unpacking, the sums per sequence and per entry, the
// propagation, the regret update. `LeafInputs` does everything before the
// network call and `NetworkUpdate` everything after it, with the arithmetic
// of those calls in the same order (tests compare the two paths bit for bit).

// The leaves' entries as a network reads them: for each player, the entries
// of `leaves` (node indices; node i's entries are start[i] .. start[i] +
// count[i] - 1) in leaf order, and per entry its query (the leaf's
// position), value row (`entry_rows`, per entry of the tree), input column
// (head_width + value row) and sequence (`e_seq`). Returns (entries0,
// entries1, sizes0, sizes1, entry_query0, entry_query1, value_rows0,
// value_rows1, columns0, columns1, seqs0, seqs1).
inline py::tuple LeafLayout(const Int64s& leaves, const Int64s& start0,
                            const Int64s& count0, const Int64s& start1,
                            const Int64s& count1, const Int64s& entry_rows0,
                            const Int64s& entry_rows1, const Int64s& e_seq0,
                            const Int64s& e_seq1, int64_t head_width) {
  const int64_t num = leaves.size();
  const int64_t* leaf = leaves.data();
  const Int64s* starts[2] = {&start0, &start1};
  const Int64s* counts[2] = {&count0, &count1};
  const Int64s* rows_of[2] = {&entry_rows0, &entry_rows1};
  const Int64s* seq_of[2] = {&e_seq0, &e_seq1};
  py::tuple result(12);
  for (int p = 0; p < 2; ++p) {
    const int64_t nodes = starts[p]->size();
    CheckSize(*counts[p], nodes, "count");
    const int64_t* start = starts[p]->data();
    const int64_t* count = counts[p]->data();
    const int64_t num_entries = seq_of[p]->size();
    CheckSize(*rows_of[p], num_entries, "entry_rows");
    int64_t total = 0;
    for (int64_t k = 0; k < num; ++k) {
      if (leaf[k] < 0 || leaf[k] >= nodes) {
        Fail("leaf " + std::to_string(k) + " names a missing node");
      }
      if (start[leaf[k]] < 0 || count[leaf[k]] < 0 ||
          start[leaf[k]] + count[leaf[k]] > num_entries) {
        Fail("leaf " + std::to_string(k) + " names missing entries");
      }
      total += count[leaf[k]];
    }
    Int64s entries(total), sizes(num), query(total), rows(total),
        columns(total), seqs(total);
    int64_t* e = entries.mutable_data();
    int64_t* sz = sizes.mutable_data();
    int64_t* q = query.mutable_data();
    int64_t* r = rows.mutable_data();
    int64_t* c = columns.mutable_data();
    int64_t* s = seqs.mutable_data();
    const int64_t* entry_rows = rows_of[p]->data();
    const int64_t* e_seq = seq_of[p]->data();
    int64_t i = 0;
    for (int64_t k = 0; k < num; ++k) {
      sz[k] = count[leaf[k]];
      for (int64_t j = 0; j < count[leaf[k]]; ++j, ++i) {
        const int64_t entry = start[leaf[k]] + j;
        e[i] = entry;
        q[i] = k;
        r[i] = entry_rows[entry];
        c[i] = head_width + entry_rows[entry];
        s[i] = e_seq[entry];
      }
    }
    result[p] = entries;
    result[2 + p] = sizes;
    result[4 + p] = query;
    result[6 + p] = rows;
    result[8 + p] = columns;
    result[10 + p] = seqs;
  }
  return result;
}

// Both players' reaches under their current policies (`Reach`), the leaves'
// ranges (reach of each leaf entry's sequence, `leaf_seq0` / `leaf_seq1`) and
// the network's inputs for them (`PackInputs`). Returns (reach0, reach1,
// inputs, scale0, scale1, range0, range1).
inline py::tuple LeafInputs(
    const Doubles& root_range0, const Doubles& root_range1,
    const Int64s& r_parent_seq0, const Doubles& policy0, int64_t width0,
    const Int64s& r_parent_seq1, const Doubles& policy1, int64_t width1,
    const Int64s& leaf_seq0, const Int64s& leaf_seq1, const Floats& heads,
    const Int64s& eq0, const Int64s& eq1, const Int64s& col0,
    const Int64s& col1, const Int64s& sizes0, const Int64s& sizes1,
    const Doubles& chance, int64_t input_size) {
  Doubles reach0 = Reach(r_parent_seq0, policy0, root_range0, width0);
  Doubles reach1 = Reach(r_parent_seq1, policy1, root_range1, width1);
  const auto gather = [](const Doubles& reach, const Int64s& seqs,
                         const char* name) {
    const int64_t n = seqs.size(), num_seq = reach.size();
    Doubles out(n);
    double* o = out.mutable_data();
    const double* r = reach.data();
    const int64_t* s = seqs.data();
    for (int64_t i = 0; i < n; ++i) {
      if (s[i] < 0 || s[i] >= num_seq) {
        Fail(std::string(name) + ": leaf entry " + std::to_string(i) +
             " names a missing sequence");
      }
      o[i] = r[s[i]];
    }
    return out;
  };
  Doubles range0 = gather(reach0, leaf_seq0, "player 0");
  Doubles range1 = gather(reach1, leaf_seq1, "player 1");
  py::tuple packed = PackInputs(heads, eq0, eq1, col0, col1, range0, range1,
                                sizes0, sizes1, chance, input_size);
  return py::make_tuple(reach0, reach1, packed[0], packed[1], packed[2],
                        range0, range1);
}

// After the network call: player p's CFR+ update. The leaves' values
// (`UnpackValues` of `values` for p's leaf entries), summed per sequence
// (`leaf_seqs`, in leaf entry order) and added to the terminals' sums
// (sign * weights[i] * opponent reach of opp_seqs[i] into own_seqs[i], in
// history order); with `propagate`, each entry's value (the leaf value at
// `leaf_entries`, plus the terminals' sum per entry into own_entries) is
// propagated up the tree (`EntryValues`) and added, times `avg_weight`, to
// `entry_sum` (and `avg_weight` to `entry_weight`), in place; then the
// sequence and row values and the regret and average update
// (`ValuesAndRegretUpdate`). Returns (sequence values, row values).
inline py::tuple NetworkUpdate(
    const Floats& values, const Doubles& scale, const Doubles& own_reach,
    const Doubles& opp_reach, double avg_weight, const Int64s& eq,
    const Int64s& value_rows, double unit, const Int64s& leaf_entries,
    const Int64s& leaf_seqs, const Int64s& own_entries,
    const Int64s& own_seqs, const Int64s& opp_seqs, const Doubles& weights,
    double sign, const Int64s& r_parent_seq, Doubles policy, Doubles regrets,
    Doubles avg, const Bools& active, int64_t num_root, int64_t width,
    int64_t num_entries, bool propagate, const Int64s& entry_row,
    const Int64s& e_prow, const Int64s& e_pslot, const Int64s& e_parent,
    Doubles entry_sum, Doubles entry_weight) {
  const int64_t rows = r_parent_seq.size();
  const int64_t num_seq = num_root + rows * width;
  Doubles leaf = UnpackValues(values, eq, value_rows, unit, scale);
  const int64_t num_leaf = leaf.size();
  CheckSize(leaf_seqs, num_leaf, "leaf_seqs");
  CheckSize(leaf_entries, num_leaf, "leaf_entries");
  const double* lv = leaf.data();
  const int64_t* ls = leaf_seqs.data();
  const int64_t* le = leaf_entries.data();
  const int64_t n = own_seqs.size();
  CheckSize(opp_seqs, n, "opp_seqs");
  CheckSize(weights, n, "weights");
  if (propagate) CheckSize(own_entries, n, "own_entries");
  const int64_t* os = own_seqs.data();
  const int64_t* xs = opp_seqs.data();
  const double* w = weights.data();
  const double* opp = opp_reach.data();
  const int64_t opp_size = opp_reach.size();
  // numpy: terminal sums + leaf sums, each a bincount of its own.
  std::vector<double> leaf_sum(num_seq, 0.0);
  for (int64_t i = 0; i < num_leaf; ++i) {
    if (ls[i] < 0 || ls[i] >= num_seq) {
      Fail("leaf entry " + std::to_string(i) + " names a missing sequence");
    }
    leaf_sum[ls[i]] += lv[i];
  }
  // Each terminal history's value, summed per sequence and (to propagate)
  // per entry.
  Doubles seq_values(num_seq);
  double* direct = seq_values.mutable_data();
  for (int64_t s = 0; s < num_seq; ++s) direct[s] = 0.0;
  std::vector<double> terminal(propagate ? num_entries : 0, 0.0);
  const int64_t* oe = own_entries.data();
  for (int64_t i = 0; i < n; ++i) {
    if (os[i] < 0 || os[i] >= num_seq || xs[i] < 0 || xs[i] >= opp_size) {
      Fail("terminal history " + std::to_string(i) + " names a missing "
           "sequence");
    }
    const double v = (sign * w[i]) * opp[xs[i]];
    direct[os[i]] += v;
    if (propagate) {
      if (oe[i] < 0 || oe[i] >= num_entries) {
        Fail("terminal history " + std::to_string(i) + " names a missing "
             "entry");
      }
      terminal[oe[i]] += v;
    }
  }
  for (int64_t s = 0; s < num_seq; ++s) direct[s] += leaf_sum[s];
  if (propagate) {
    Doubles entry_values(num_entries);
    double* ev = entry_values.mutable_data();
    for (int64_t e = 0; e < num_entries; ++e) ev[e] = 0.0;
    for (int64_t i = 0; i < num_leaf; ++i) {
      if (le[i] < 0 || le[i] >= num_entries) {
        Fail("leaf entry " + std::to_string(i) + " names a missing entry");
      }
      ev[le[i]] = lv[i];
    }
    for (int64_t e = 0; e < num_entries; ++e) ev[e] += terminal[e];
    EntryValues(entry_values, entry_row, e_prow, e_pslot, e_parent, policy,
                rows, width);
    CheckSize(entry_sum, num_entries, "entry_sum");
    CheckSize(entry_weight, num_entries, "entry_weight");
    double* total = entry_sum.mutable_data();
    double* count = entry_weight.mutable_data();
    for (int64_t e = 0; e < num_entries; ++e) {
      total[e] += avg_weight * ev[e];
      count[e] += avg_weight;
    }
  }
  Doubles row_values =
      ValuesAndRegretUpdate(r_parent_seq, policy, regrets, avg, active,
                            seq_values, own_reach, avg_weight, num_root,
                            width);
  return py::make_tuple(seq_values, row_values);
}

inline void Define(py::module_& m) {
  m.def("cfr_leaf_layout", &LeafLayout, py::arg("leaves"), py::arg("start0"),
        py::arg("count0"), py::arg("start1"), py::arg("count1"),
        py::arg("entry_rows0"), py::arg("entry_rows1"), py::arg("e_seq0"),
        py::arg("e_seq1"), py::arg("head_width"),
        "The leaves' entries in leaf order and, per entry, its query, value "
        "row, input column and sequence: (entries0, entries1, sizes0, "
        "sizes1, entry_query0, entry_query1, value_rows0, value_rows1, "
        "columns0, columns1, seqs0, seqs1).");
  m.def("cfr_leaf_inputs", &LeafInputs, py::arg("root_range0"),
        py::arg("root_range1"), py::arg("r_parent_seq0"), py::arg("policy0"),
        py::arg("width0"), py::arg("r_parent_seq1"), py::arg("policy1"),
        py::arg("width1"), py::arg("leaf_seq0"), py::arg("leaf_seq1"),
        py::arg("heads"), py::arg("entry_query0"), py::arg("entry_query1"),
        py::arg("column0"), py::arg("column1"), py::arg("sizes0"),
        py::arg("sizes1"), py::arg("chance"), py::arg("input_size"),
        "Both players' reaches, the leaves' ranges and a CVPN's inputs for "
        "them: (reach0, reach1, inputs, scale0, scale1, range0, range1).");
  m.def("cfr_network_update", &NetworkUpdate, py::arg("values"),
        py::arg("scale"), py::arg("own_reach"), py::arg("opp_reach"),
        py::arg("avg_weight"), py::arg("entry_query"), py::arg("value_rows"),
        py::arg("unit"), py::arg("leaf_entries"), py::arg("leaf_seqs"),
        py::arg("own_entries"), py::arg("own_seqs"), py::arg("opp_seqs"),
        py::arg("weights"), py::arg("sign"), py::arg("r_parent_seq"),
        py::arg("policy").noconvert(), py::arg("regrets").noconvert(),
        py::arg("avg").noconvert(), py::arg("active"), py::arg("num_root"),
        py::arg("width"), py::arg("num_entries"), py::arg("propagate"),
        py::arg("entry_row"), py::arg("e_prow"), py::arg("e_pslot"),
        py::arg("e_parent"), py::arg("entry_sum").noconvert(),
        py::arg("entry_weight").noconvert(),
        "One player's CFR+ update from a network's leaf values, in place in "
        "policy, regrets, avg, entry_sum and entry_weight; returns (sequence "
        "values, row values).");

  m.def("cvpn_pack_inputs", &PackInputs, py::arg("heads"),
        py::arg("entry_query0"), py::arg("entry_query1"), py::arg("column0"),
        py::arg("column1"), py::arg("range0"), py::arg("range1"),
        py::arg("sizes0"), py::arg("sizes1"), py::arg("chance"),
        py::arg("input_size"),
        "A CVPN's input rows for packed queries and the scales of their "
        "values: (inputs [L, input_size] float32, scale0 [L], scale1 [L]) "
        "(cvpn.CVPNValueFunction.evaluate_packed's numpy path).");
  m.def("cvpn_unpack_values", &UnpackValues, py::arg("values"),
        py::arg("entry_query"), py::arg("rows"), py::arg("unit"),
        py::arg("scale"),
        "values[entry_query, rows] * unit * scale[entry_query] in double.");
  m.def("cfr_fixed_update", &FixedUpdate, py::arg("r_parent_seq"),
        py::arg("policy").noconvert(), py::arg("regrets").noconvert(),
        py::arg("avg").noconvert(), py::arg("active"), py::arg("root_range"),
        py::arg("width"), py::arg("opp_r_parent_seq"), py::arg("opp_policy"),
        py::arg("opp_root_range"), py::arg("opp_width"),
        py::arg("own_entries"), py::arg("opp_seqs"), py::arg("weights"),
        py::arg("sign"), py::arg("e_seq"), py::arg("propagate"),
        py::arg("entry_row"), py::arg("e_prow"), py::arg("e_pslot"),
        py::arg("e_parent"), py::arg("avg_weight"),
        "One player's CFR+ update from fixed history values, in place in "
        "policy, regrets and avg; returns (own reach, opponent reach, "
        "sequence values, row values, entry values).");
  m.def("cfr_regret_matching", &RegretMatching, py::arg("regrets"),
        py::arg("active"), py::arg("policy").noconvert(), py::arg("begin"),
        py::arg("end"),
        "Regret matching over active actions on rows [begin, end), in place "
        "in policy (growing_passes.rematch_rows).");
  m.def("cfr_select", &Select, py::arg("seq_values"), py::arg("row_values"),
        py::arg("num_root"), py::arg("values_width"), py::arg("active"),
        py::arg("visits"), py::arg("pending"), py::arg("prior"),
        py::arg("avg"), py::arg("policy"), py::arg("row"), py::arg("k"),
        py::arg("normaliser"), py::arg("utility_range"), py::arg("c_puct"),
        py::arg("virtual_loss"), py::arg("u"),
        "Samples an action slot from 1/2 PUCT + 1/2 the CFR average "
        "(GTCFR._select), at the uniform u.");
  m.def("cfr_reach", &Reach, py::arg("r_parent_seq"), py::arg("policy"),
        py::arg("root_range"), py::arg("width"),
        "Sequence reaches under policy (growing_passes.reach).");
  m.def("cfr_values", &Values, py::arg("r_parent_seq"), py::arg("policy"),
        py::arg("direct").noconvert(), py::arg("num_root"), py::arg("width"),
        "Sequence values, in place in direct; returns row values "
        "(growing_passes.values).");
  m.def("cfr_entry_values", &EntryValues, py::arg("values").noconvert(),
        py::arg("entry_row"), py::arg("e_prow"), py::arg("e_pslot"),
        py::arg("e_parent"), py::arg("policy"), py::arg("rows"),
        py::arg("width"),
        "Propagates entry values up the tree, in place "
        "(growing_passes.propagate_entry_values).");
  m.def("cfr_regret_update", &RegretUpdate, py::arg("regrets").noconvert(),
        py::arg("avg").noconvert(), py::arg("policy").noconvert(),
        py::arg("active"), py::arg("seq_values"), py::arg("row_values"),
        py::arg("own_reach"), py::arg("weight"), py::arg("num_root"),
        py::arg("rows"), py::arg("width"),
        "CFR+ regrets, linear average and regret matching, in place.");
}

}  // namespace cfr_kernels
}  // namespace open_spiel_sog

#endif  // OPEN_SPIEL_SOG_NATIVE_CFR_KERNELS_H_
