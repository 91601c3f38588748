// Fixed-width bitboards for the games whose boards outgrow one 64-bit word (Othello to 26x26, Go
// to 25x25): bit p stands for point p. The games are templates over the word count W, so each
// board size runs on the fewest words that hold it, with one implementation of the rules.
#pragma once

#include <array>
#include <cstdint>

namespace saz {

template <int W>
struct Bits {
  std::array<uint64_t, W> w{};

  bool any() const {
    uint64_t acc = 0;
    for (int i = 0; i < W; ++i) acc |= w[i];
    return acc != 0;
  }
  int count() const {
    int c = 0;
    for (int i = 0; i < W; ++i) c += __builtin_popcountll(w[i]);
    return c;
  }
  bool test(int p) const { return (w[p >> 6] >> (p & 63)) & 1; }
  void set(int p) { w[p >> 6] |= uint64_t(1) << (p & 63); }
  void reset(int p) { w[p >> 6] &= ~(uint64_t(1) << (p & 63)); }
  static Bits single(int p) {
    Bits r;
    r.set(p);
    return r;
  }
  // The lowest point of a non-empty set.
  int lowest() const {
    for (int i = 0; i < W; ++i)
      if (w[i]) return i * 64 + __builtin_ctzll(w[i]);
    return -1;
  }
  bool operator==(const Bits& o) const { return w == o.w; }
  bool operator!=(const Bits& o) const { return w != o.w; }
  // The points of this set that are not in `o`.
  Bits minus(const Bits& o) const {
    Bits r;
    for (int i = 0; i < W; ++i) r.w[i] = w[i] & ~o.w[i];
    return r;
  }
  Bits operator&(const Bits& o) const {
    Bits r;
    for (int i = 0; i < W; ++i) r.w[i] = w[i] & o.w[i];
    return r;
  }
  Bits operator|(const Bits& o) const {
    Bits r;
    for (int i = 0; i < W; ++i) r.w[i] = w[i] | o.w[i];
    return r;
  }
  Bits operator^(const Bits& o) const {
    Bits r;
    for (int i = 0; i < W; ++i) r.w[i] = w[i] ^ o.w[i];
    return r;
  }
  Bits& operator|=(const Bits& o) {
    for (int i = 0; i < W; ++i) w[i] |= o.w[i];
    return *this;
  }
  Bits& operator&=(const Bits& o) {
    for (int i = 0; i < W; ++i) w[i] &= o.w[i];
    return *this;
  }
  // Shifts by 0 < k < 64 bits towards higher (up) or lower (down) point indices.
  Bits up(int k) const {
    Bits r;
    r.w[0] = w[0] << k;
    for (int i = 1; i < W; ++i) r.w[i] = (w[i] << k) | (w[i - 1] >> (64 - k));
    return r;
  }
  Bits down(int k) const {
    Bits r;
    for (int i = 0; i < W - 1; ++i) r.w[i] = (w[i] >> k) | (w[i + 1] << (64 - k));
    r.w[W - 1] = w[W - 1] >> k;
    return r;
  }
  template <typename F>
  void for_each(F f) const {
    for (int i = 0; i < W; ++i)
      for (uint64_t b = w[i]; b; b &= b - 1) f(i * 64 + __builtin_ctzll(b));
  }
};

// The flood of `seed` shifted step by step through `through` (the seed itself excluded).
template <int W>
inline Bits<W> flood_up(const Bits<W>& seed, int step, const Bits<W>& through) {
  Bits<W> reached, run = seed.up(step) & through;
  while (run.any()) {
    reached |= run;
    run = run.up(step) & through;
  }
  return reached;
}
template <int W>
inline Bits<W> flood_down(const Bits<W>& seed, int step, const Bits<W>& through) {
  Bits<W> reached, run = seed.down(step) & through;
  while (run.any()) {
    reached |= run;
    run = run.down(step) & through;
  }
  return reached;
}

}  // namespace saz
