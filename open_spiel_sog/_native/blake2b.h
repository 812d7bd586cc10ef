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

// BLAKE2b (RFC 7693), unkeyed, as Python's hashlib.blake2b(data,
// digest_size=n): the history engine's infostate keys are 8-byte digests
// (Digest64), extended step by step, as public_state/infostates.py's
// HistoryKeys makes them (tests/history_engine_test.py holds the two to the
// same digests).

#ifndef OPEN_SPIEL_SOG_NATIVE_BLAKE2B_H_
#define OPEN_SPIEL_SOG_NATIVE_BLAKE2B_H_

#include <cstdint>
#include <cstring>
#include <string>

namespace open_spiel_sog {
namespace blake2b {

inline uint64_t Rotr(uint64_t x, int n) { return (x >> n) | (x << (64 - n)); }

constexpr uint64_t kIv[8] = {
    0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL,
    0xa54ff53a5f1d36f1ULL, 0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL,
    0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL};

constexpr uint8_t kSigma[12][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
    {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
    {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
    {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
    {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3}};

inline void Compress(uint64_t h[8], const uint8_t block[128], uint64_t t,
                     bool last) {
  uint64_t v[16], m[16];
  for (int i = 0; i < 8; ++i) {
    v[i] = h[i];
    v[i + 8] = kIv[i];
  }
  v[12] ^= t;  // (messages here are far below 2^64 bytes)
  if (last) v[14] = ~v[14];
  for (int i = 0; i < 16; ++i) {
    uint64_t w = 0;
    for (int b = 7; b >= 0; --b) w = (w << 8) | block[8 * i + b];
    m[i] = w;
  }
  auto g = [&](int a, int b, int c, int d, uint64_t x, uint64_t y) {
    v[a] = v[a] + v[b] + x;
    v[d] = Rotr(v[d] ^ v[a], 32);
    v[c] = v[c] + v[d];
    v[b] = Rotr(v[b] ^ v[c], 24);
    v[a] = v[a] + v[b] + y;
    v[d] = Rotr(v[d] ^ v[a], 16);
    v[c] = v[c] + v[d];
    v[b] = Rotr(v[b] ^ v[c], 63);
  };
  for (int r = 0; r < 12; ++r) {
    const uint8_t* s = kSigma[r];
    g(0, 4, 8, 12, m[s[0]], m[s[1]]);
    g(1, 5, 9, 13, m[s[2]], m[s[3]]);
    g(2, 6, 10, 14, m[s[4]], m[s[5]]);
    g(3, 7, 11, 15, m[s[6]], m[s[7]]);
    g(0, 5, 10, 15, m[s[8]], m[s[9]]);
    g(1, 6, 11, 12, m[s[10]], m[s[11]]);
    g(2, 7, 8, 13, m[s[12]], m[s[13]]);
    g(3, 4, 9, 14, m[s[14]], m[s[15]]);
  }
  for (int i = 0; i < 8; ++i) h[i] ^= v[i] ^ v[i + 8];
}

// The hex digest of `data` (digest_size bytes, 1..64).
// BLAKE2b of `size` bytes at `data` with a `digest_size`-byte digest (at
// most 64) into h (its first digest_size bytes, little-endian words).
inline void Hash(const uint8_t* p, size_t left, int digest_size,
                 uint64_t h[8]) {
  for (int i = 0; i < 8; ++i) h[i] = kIv[i];
  h[0] ^= 0x01010000ULL ^ static_cast<uint64_t>(digest_size);
  uint64_t t = 0;
  uint8_t block[128];
  while (left > 128) {
    t += 128;
    Compress(h, p, t, false);
    p += 128;
    left -= 128;
  }
  std::memset(block, 0, sizeof(block));
  if (left > 0) std::memcpy(block, p, left);
  t += left;
  Compress(h, block, t, true);
}

inline std::string HexDigest(const std::string& data, int digest_size) {
  uint64_t h[8];
  Hash(reinterpret_cast<const uint8_t*>(data.data()), data.size(),
       digest_size, h);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < digest_size; ++i) {
    const uint8_t byte = static_cast<uint8_t>(h[i / 8] >> (8 * (i % 8)));
    out += hex[byte >> 4];
    out += hex[byte & 15];
  }
  return out;
}

// hashlib.blake2b(data, digest_size=8) as a number: its digest's bytes read
// little-endian (int.from_bytes(digest, "little")).
inline uint64_t Digest64(const std::string& data) {
  uint64_t h[8];
  Hash(reinterpret_cast<const uint8_t*>(data.data()), data.size(), 8, h);
  return h[0];
}

// A Digest64 as hashlib writes the digest: hexdigest(), 16 digits,
// appended to `out`.
inline void AppendHex64(uint64_t x, std::string* out) {
  static const char* hex = "0123456789abcdef";
  char digits[16];
  for (int i = 0; i < 8; ++i) {
    const uint8_t byte = static_cast<uint8_t>(x >> (8 * i));
    digits[2 * i] = hex[byte >> 4];
    digits[2 * i + 1] = hex[byte & 15];
  }
  out->append(digits, 16);
}

inline std::string Hex64(uint64_t x) {
  std::string out;
  AppendHex64(x, &out);
  return out;
}

// Hex64's inverse; false unless `text` is 16 lowercase hex digits.
inline bool ParseHex64(const std::string& text, uint64_t* x) {
  if (text.size() != 16) return false;
  uint64_t out = 0;
  for (int i = 0; i < 8; ++i) {
    uint64_t byte = 0;
    for (int j = 0; j < 2; ++j) {
      const char c = text[2 * i + j];
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f'
                                                    ? c - 'a' + 10 : -1;
      if (d < 0) return false;
      byte = byte * 16 + static_cast<uint64_t>(d);
    }
    out |= byte << (8 * i);
  }
  *x = out;
  return true;
}

}  // namespace blake2b
}  // namespace open_spiel_sog

#endif  // OPEN_SPIEL_SOG_NATIVE_BLAKE2B_H_
