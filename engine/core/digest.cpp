// Digests of encoded rows, the evaluation cache's keys (engine/search/evalcache.py): 128 bits a
// row, a function of its bytes and its shape. Not cryptographic: the rows are the encoder's, no
// adversary picks them, and a digest must cost little beside the network call it may save (SHA-1
// took ~15 us for a 19x19 Go row, a tenth of the search's own work per leaf; this ~1 us).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <cstring>

#include "bindings.hpp"

namespace saz {
namespace {

constexpr uint64_t kP1 = 0x9E3779B185EBCA87ull;
constexpr uint64_t kP2 = 0xC2B2AE3D27D4EB4Full;
constexpr uint64_t kP3 = 0x165667B19E3779F9ull;

inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

// One word into a lane: multiply, rotate, multiply (xxHash64's round), so every input bit
// reaches the lane's high bits and lanes stay independent.
inline uint64_t take(uint64_t lane, uint64_t word) { return rotl(lane + word * kP2, 31) * kP1; }

// Two 64-bit digests of `words` 8-byte words and `tail` bytes after them, seeded by `seed` (the
// row's shape): four lanes over the words in turn, the tail as one more word, then each output
// folds all four lanes with its own weights.
void digest(const unsigned char* data, size_t words, size_t tail, uint64_t seed, uint64_t out[2]) {
  uint64_t lane[4] = {seed + kP1, seed ^ kP2, seed - kP3, ~seed};
  size_t i = 0;
  for (; i + 4 <= words; i += 4) {
    uint64_t w[4];
    std::memcpy(w, data + 8 * i, sizeof w);
    for (int k = 0; k < 4; ++k) lane[k] = take(lane[k], w[k]);
  }
  for (; i < words; ++i) {
    uint64_t w;
    std::memcpy(&w, data + 8 * i, 8);
    lane[i % 4] = take(lane[i % 4], w);
  }
  uint64_t last = 0;
  std::memcpy(&last, data + 8 * words, tail);
  lane[0] = take(lane[0], last ^ tail);
  out[0] = splitmix64_mix(lane[0] ^ rotl(lane[1], 7) ^ rotl(lane[2], 12) ^ rotl(lane[3], 18));
  out[1] = splitmix64_mix(lane[3] ^ rotl(lane[0], 29) ^ rotl(lane[1], 41) ^ rotl(lane[2], 53) ^ kP3);
}

using Rows = nb::ndarray<const float, nb::c_contig, nb::device::cpu>;
using Digests = nb::ndarray<nb::numpy, uint64_t, nb::ndim<2>>;

Digests row_digests(const Rows& x) {
  if (x.ndim() < 2) throw nb::value_error("row_digests needs rows: an array of at least 2 dims");
  const size_t rows = x.shape(0);
  uint64_t seed = 0;
  size_t row_floats = 1;
  for (size_t d = 1; d < x.ndim(); ++d) {
    seed = splitmix64_mix(seed ^ (uint64_t(x.shape(d)) + kP3 * d));
    row_floats *= x.shape(d);
  }
  const size_t bytes = row_floats * sizeof(float);
  auto* out = new uint64_t[rows ? 2 * rows : 2];
  const auto* data = reinterpret_cast<const unsigned char*>(x.data());
  {
    nb::gil_scoped_release release;
    for (size_t r = 0; r < rows; ++r) digest(data + r * bytes, bytes / 8, bytes % 8, seed, out + 2 * r);
  }
  nb::capsule owner(out, [](void* p) noexcept { delete[] static_cast<uint64_t*>(p); });
  return Digests(out, {rows, 2}, owner);
}

}  // namespace

void bind_digest(nb::module_& m) {
  m.def("row_digests", &row_digests, nb::arg("x"),
        "Two 64-bit digests [rows, 2] of each row x[i] of a float32 C-contiguous array, from its "
        "bytes and its shape (x.shape[1:]): the evaluation cache's keys.");
}

}  // namespace saz
