// Gomoku in the compiled core: freestyle and exact-five on any board from 5x5 to 32x32.
//
// Black moves first; players alternate placing a stone on an empty point, and there is no pass. A
// line of five of one's own stones made by the last move wins (freestyle: six or more too; exact
// five: an overline is just stones and the game goes on); a full board without one is a draw.
//
// The stones are kept three ways, each for one hot path:
//
// * `cells_`, one int8 per point (BLACK 1, WHITE -1, EMPTY 0): the board, read point by point and
//   viewed by Python without a copy (`Gomoku.board`);
// * `empty_`, the empty points in ascending order, which are the legal moves as they stand:
//   `legal_moves` is one copy; play takes its point out (found by a search over at most as many
//   entries as there are stones) and undo puts it back where it was;
// * `lines_`, per colour, per direction, per line of the board (rows, columns, both diagonals) a
//   32-bit mask of that colour's stones along the line (no side exceeds 32 points). The run
//   through a point is two bit scans per direction, which is the whole win test after a move; the
//   points that complete five (`winning_moves`, `forced_moves`) are a few shifts per line; and the
//   windows of five of the threat planes are 5-bit slices of a line.
//
// play and undo touch one cell, a shift of `empty_`, four line masks and an undo record (reserved
// for the whole board at construction, so nothing is allocated while a game is played). Threats
// and tactics are not maintained: they are computed from the line masks when asked.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <nanobind/stl/optional.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "bindings.hpp"

namespace saz {
namespace {

constexpr int kMinSize = 5;
constexpr int kMaxSize = 32;
constexpr int kFive = 5;
constexpr int kDirections = 4;  // (1,0) rows, (0,1) columns, (1,1) diagonals, (-1,1) anti-diagonals
constexpr int kMaxLines = 64;   // per direction: at most 32 + 32 - 1 diagonals
constexpr int kMaxWords = kMaxSize * kMaxSize / 64;  // of a bitboard of the points
constexpr int kFeatures = 10;
// Zobrist tag of the game (the board size is mixed in as well).
constexpr uint64_t kZobristTag = 0x60C0;

// What one board size needs, built once per size and shared by every position of that size.
struct Geometry {
  int width = 0, height = 0, n = 0, words = 0;
  // Per point: its line and its bit along that line, per direction.
  std::vector<std::array<uint8_t, kDirections>> line, bit;
  // Per direction and line: the mask of the line's bits that lie on the board, and the points of
  // the board by bit (-1 off the board).
  uint32_t full[kDirections][kMaxLines] = {};
  int16_t point[kDirections][kMaxLines][kMaxSize];
  // Per direction: the lines that hold at least five points (the only ones a five fits in).
  std::vector<uint8_t> long_lines[kDirections];
  // Zobrist keys: a stone per point, Black's then White's; White to move.
  std::vector<uint64_t> keys[2];
  uint64_t white_key = 0;

  Geometry(int w, int h) : width(w), height(h), n(w * h), words((w * h + 63) / 64) {
    line.resize(n);
    bit.resize(n);
    std::memset(point, -1, sizeof point);
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        const int p = y * w + x;
        const int lines[kDirections] = {y, x, x - y + h - 1, x + y};
        const int bits[kDirections] = {x, y, y, y};
        for (int d = 0; d < kDirections; ++d) {
          line[p][d] = static_cast<uint8_t>(lines[d]);
          bit[p][d] = static_cast<uint8_t>(bits[d]);
          full[d][lines[d]] |= 1u << bits[d];
          point[d][lines[d]][bits[d]] = static_cast<int16_t>(p);
        }
      }
    }
    for (int d = 0; d < kDirections; ++d)
      for (int l = 0; l < kMaxLines; ++l)
        if (__builtin_popcount(full[d][l]) >= kFive) long_lines[d].push_back(static_cast<uint8_t>(l));
    const uint64_t tag = kZobristTag ^ (static_cast<uint64_t>(w) << 24) ^ (static_cast<uint64_t>(h) << 32);
    for (int c = 0; c < 2; ++c) {
      keys[c].resize(n);
      for (int p = 0; p < n; ++p) keys[c][p] = zobrist_key(tag, 2 * static_cast<uint64_t>(p) + c);
    }
    white_key = zobrist_key(tag, 2 * static_cast<uint64_t>(n));
  }
};

const Geometry* geometry(int width, int height) {
  static std::mutex lock;
  static std::map<std::pair<int, int>, std::unique_ptr<Geometry>> cache;
  std::lock_guard<std::mutex> guard(lock);
  auto& slot = cache[{width, height}];
  if (!slot) slot = std::make_unique<Geometry>(width, height);
  return slot.get();
}

// For a window of five points holding `own + 6 * theirs` stones (from the side to move's view):
// bit k (k = 0, 1, 2) when one more own stone there makes 5, 4 or 3 with no opponent stone in
// the window, bit 3 + k the same for the opponent.
struct WindowFlags {
  uint8_t flags[36] = {};
  uint8_t count5[32];
  WindowFlags() {
    for (int own = 0; own <= kFive; ++own)
      for (int theirs = 0; theirs + own <= kFive; ++theirs)
        for (int k = 0; k < 3; ++k) {
          const int length = 5 - k;
          if (theirs == 0 && own + 1 == length) flags[own + 6 * theirs] |= 1 << k;
          if (own == 0 && theirs + 1 == length) flags[own + 6 * theirs] |= 1 << (3 + k);
        }
    for (int m = 0; m < 32; ++m) count5[m] = static_cast<uint8_t>(__builtin_popcount(m));
  }
};
const WindowFlags kWindows;

inline int side(int color) { return color == BLACK ? 0 : 1; }

// The run of set bits of `mask` through bit `b` (which must be set): its lowest bit and length.
inline void run_through(uint64_t mask, int b, int& low, int& length) {
  const int up = __builtin_ctzll(~(mask >> b));          // bits b, b+1, ... set
  const int down = __builtin_clzll(~(mask << (63 - b)));  // bits b, b-1, ... set
  low = b - down + 1;
  length = up + down - 1;
}

class GomokuPosition final : public Position {
 public:
  GomokuPosition(int width, int height, const std::string& rule)
      : Position(width, height), geo_(nullptr) {
    if (width < kMinSize || width > kMaxSize || height < kMinSize || height > kMaxSize)
      throw UnsupportedSize("Gomoku needs a board side from " + std::to_string(kMinSize) + " to " +
                            std::to_string(kMaxSize) + ", got " + std::to_string(width) + "x" +
                            std::to_string(height));
    if (rule == "freestyle") {
      overline_wins_ = true;
    } else if (rule == "exact-five") {
      overline_wins_ = false;
    } else if (rule == "renju") {
      throw UnsupportedRule("the Gomoku rule 'renju' is not supported yet");
    } else {
      throw UnsupportedRule("unknown Gomoku rule '" + rule + "'; expected one of freestyle, exact-five");
    }
    geo_ = geometry(width, height);
    const int n = geo_->n;
    cells_.assign(n, EMPTY);
    empty_.resize(n);
    for (int p = 0; p < n; ++p) empty_[p] = p;
    std::memset(lines_, 0, sizeof lines_);
    history_.reserve(n);
  }

  std::unique_ptr<Position> clone() const override {
    auto copy = std::make_unique<GomokuPosition>(*this);
    copy->history_.reserve(geo_->n);
    return copy;
  }

  int num_features() const override { return kFeatures; }
  int to_move() const override { return to_move_; }
  uint64_t hash() const override { return hash_; }
  int ply() const override { return static_cast<int>(history_.size()); }
  void board(int8_t* out) const override { std::memcpy(out, cells_.data(), cells_.size()); }

  const std::string rule() const { return overline_wins_ ? "freestyle" : "exact-five"; }
  const int8_t* cells() const { return cells_.data(); }

  void legal_moves(Moves& out) const override {
    if (won_dir_ >= 0) {
      out.clear();
      return;
    }
    out.assign(empty_.begin(), empty_.begin() + (geo_->n - stones_));
  }

  bool is_legal(int move) const override {
    return move >= 0 && move < geo_->n && cells_[move] == EMPTY && won_dir_ < 0;
  }

  void play(int move) override {
    const int n = geo_->n;
    if (move < 0 || move >= n) throw IllegalMove(move, move == n ? "Gomoku has no pass" : "off the board");
    if (won_dir_ >= 0) throw IllegalMove(move, "the game is over");
    if (cells_[move] != EMPTY) throw IllegalMove(move, "the point is occupied");
    const int color = to_move_;
    history_.push_back({move, static_cast<int8_t>(color), hash_, 0});
    place(move, color, history_.back().slot);
    hash_ ^= geo_->keys[side(color)][move] ^ geo_->white_key;
    to_move_ = -color;
    if (++count_[side(color)] >= kFive) won_dir_ = winning_direction(move, color);
  }

  void undo() override {
    if (history_.empty()) throw UndoError("no move to undo");
    const Record rec = history_.back();
    history_.pop_back();
    remove(rec.move, rec.color, rec.slot);
    --count_[side(rec.color)];
    hash_ = rec.hash;
    to_move_ = rec.color;
    won_dir_ = -1;  // only the last move can have won: the game ends with it
  }

  void switch_turn() override {
    to_move_ = -to_move_;
    hash_ ^= geo_->white_key;
  }

  bool is_over() const override { return won_dir_ >= 0 || stones_ == geo_->n; }
  int winner() const override {
    if (won_dir_ >= 0) return cells_[history_.back().move];
    return DRAW;
  }

  void winning_moves(Moves& out) const override {
    out.clear();
    if (is_over()) return;
    uint64_t wins[kMaxWords];
    if (win_points(to_move_, wins)) append_points(wins, out);
  }

  bool forced_moves(Moves& out) const override {
    out.clear();
    if (is_over()) return false;
    uint64_t threats[kMaxWords], moves[kMaxWords];
    const int count = win_points(-to_move_, threats);
    if (count == 0) return false;
    win_points(to_move_, moves);  // a win that comes first
    if (count == 1)  // a stone there blocks it; two or more cannot all be blocked
      for (int w = 0; w < geo_->words; ++w) moves[w] |= threats[w];
    append_points(moves, out);
    return true;
  }

  void encode(float* out) const override {
    const int n = geo_->n;
    uint8_t flags[kMaxSize * kMaxSize];
    threat_flags(flags);
    const int me = to_move_;
    for (int p = 0; p < n; ++p) {
      float* row = out + static_cast<size_t>(p) * kFeatures;
      const int v = cells_[p];
      const unsigned f = flags[p];
      row[0] = v == me;
      row[1] = v == -me;
      row[2] = v == EMPTY;
      for (int k = 0; k < 6; ++k) row[3 + k] = static_cast<float>(f >> k & 1);
      row[9] = 0.0f;
    }
    float* extra = out + static_cast<size_t>(n) * kFeatures;
    for (int k = 0; k < kFeatures; ++k) extra[k] = 0.0f;
    extra[kFeatures - 1] = 1.0f;
  }

  // Per point (0/1 by bit, six bits): whether a stone of the side to move on this empty point
  // would make five, four or three in some window of five points in a row that holds no
  // opponent stone, then the same for the opponent. Zero on occupied points.
  void threat_flags(uint8_t* flags) const {
    const Geometry& g = *geo_;
    std::memset(flags, 0, g.n);
    const int me = side(to_move_), them = 1 - me;
    for (int d = 0; d < kDirections; ++d) {
      for (const uint8_t l : g.long_lines[d]) {
        const uint32_t own = lines_[me][d][l], opp = lines_[them][d][l];
        if (__builtin_popcount(own | opp) < 2) continue;  // every flag needs two stones
        const uint32_t full = g.full[d][l];
        const int low = __builtin_ctz(full), high = 31 - __builtin_clz(full);
        const int16_t* points = g.point[d][l];
        for (int s = low; s + kFive - 1 <= high; ++s) {
          const uint8_t f =
              kWindows.flags[kWindows.count5[own >> s & 31] + 6 * kWindows.count5[opp >> s & 31]];
          if (!f) continue;
          for (int j = 0; j < kFive; ++j) flags[points[s + j]] |= f;
        }
      }
    }
    for (int p = 0; p < g.n; ++p)
      if (cells_[p] != EMPTY) flags[p] = 0;
  }

  // Whether a stone of `color` on the empty point `move` would win under this rule.
  bool wins_if_played(int move, int color) const {
    if (move < 0 || move >= geo_->n || cells_[move] != EMPTY)
      throw IllegalMove(move, "not an empty point of the board");
    if (color != BLACK && color != WHITE)
      throw std::invalid_argument("color must be BLACK (1) or WHITE (-1), got " + std::to_string(color));
    return wins_at(move, color);
  }

  // The points of the winning run, ascending; empty unless the game was won.
  std::vector<int> winning_line() const {
    std::vector<int> out;
    if (won_dir_ < 0) return out;
    const Record& last = history_.back();
    const int d = won_dir_;
    const int l = geo_->line[last.move][d];
    int low, length;
    run_through(lines_[side(last.color)][d][l], geo_->bit[last.move][d], low, length);
    for (int b = low; b < low + length; ++b) out.push_back(geo_->point[d][l][b]);
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  struct Record {
    int32_t move;
    int8_t color;
    uint64_t hash;  // before the move, side to move included
    int32_t slot;   // where the move stood in `empty_`
  };

  // Put a stone of `color` on the empty point `p`; `slot` gets where `p` stood in `empty_`.
  void place(int p, int color, int32_t& slot) {
    int32_t* empty = empty_.data();
    const int count = geo_->n - stones_;
    // p is the (p - stones below p)-th empty point: search only the stones' worth of candidates.
    const int32_t* at = std::lower_bound(empty + std::max(0, p - stones_), empty + std::min(p, count - 1) + 1, p);
    slot = static_cast<int32_t>(at - empty);
    std::memmove(empty + slot, empty + slot + 1, sizeof(int32_t) * (count - slot - 1));
    cells_[p] = static_cast<int8_t>(color);
    ++stones_;
    uint32_t(&mine)[kDirections][kMaxLines] = lines_[side(color)];
    const auto& line = geo_->line[p];
    const auto& bit = geo_->bit[p];
    for (int d = 0; d < kDirections; ++d) mine[d][line[d]] |= 1u << bit[d];
  }

  void remove(int p, int color, int32_t slot) {
    int32_t* empty = empty_.data();
    const int count = geo_->n - stones_;
    std::memmove(empty + slot + 1, empty + slot, sizeof(int32_t) * (count - slot));
    empty[slot] = p;
    cells_[p] = EMPTY;
    --stones_;
    uint32_t(&mine)[kDirections][kMaxLines] = lines_[side(color)];
    const auto& line = geo_->line[p];
    const auto& bit = geo_->bit[p];
    for (int d = 0; d < kDirections; ++d) mine[d][line[d]] &= ~(1u << bit[d]);
  }

  bool wins(int length) const { return length == kFive || (length > kFive && overline_wins_); }

  // The first direction (rows, columns, diagonals, anti-diagonals) in which the stone of `color`
  // on `p` stands in a winning run, or -1.
  int winning_direction(int p, int color) const {
    const auto& mine = lines_[side(color)];
    for (int d = 0; d < kDirections; ++d) {
      int low, length;
      run_through(mine[d][geo_->line[p][d]], geo_->bit[p][d], low, length);
      if (wins(length)) return d;
    }
    return -1;
  }

  // Whether a stone of `color` on the empty point `p` would stand in a winning run.
  bool wins_at(int p, int color) const {
    const auto& mine = lines_[side(color)];
    for (int d = 0; d < kDirections; ++d) {
      int low, length;
      const int b = geo_->bit[p][d];
      run_through(mine[d][geo_->line[p][d]] | (1u << b), b, low, length);
      if (wins(length)) return true;
    }
    return false;
  }

  // The empty points where a stone of `color` wins now, as a bitboard into found[words]; returns
  // how many. Per line, the points whose other four stones of some window of five along it are
  // all `color`'s (four ahead, three ahead and one behind, ..., four behind), which the rule then
  // decides (an exact-five overline does not win).
  int win_points(int color, uint64_t* found) const {
    const Geometry& g = *geo_;
    std::memset(found, 0, sizeof(uint64_t) * g.words);
    const int c = side(color);
    if (count_[c] < kFive - 1) return 0;
    int count = 0;
    for (int d = 0; d < kDirections; ++d) {
      for (const uint8_t l : g.long_lines[d]) {
        const uint64_t own = lines_[c][d][l];
        if (__builtin_popcountll(own) < kFive - 1) continue;
        const uint64_t a1 = own >> 1, a2 = a1 & own >> 2, a3 = a2 & own >> 3, a4 = a3 & own >> 4;
        const uint64_t b1 = own << 1, b2 = b1 & own << 2, b3 = b2 & own << 3, b4 = b3 & own << 4;
        uint64_t points = (a4 | (a3 & b1) | (a2 & b2) | (a1 & b3) | b4) & g.full[d][l] &
                          ~(own | lines_[1 - c][d][l]);
        for (; points; points &= points - 1) {
          const int p = g.point[d][l][__builtin_ctzll(points)];
          const uint64_t bit = uint64_t{1} << (p & 63);
          if (found[p >> 6] & bit) continue;  // found along another direction already
          if (!overline_wins_ && !wins_at(p, color)) continue;
          found[p >> 6] |= bit;
          ++count;
        }
      }
    }
    return count;
  }

  // The points of a bitboard, ascending, appended to `out`.
  void append_points(const uint64_t* points, Moves& out) const {
    for (int w = 0; w < geo_->words; ++w)
      for (uint64_t bits = points[w]; bits; bits &= bits - 1) out.push_back(w * 64 + __builtin_ctzll(bits));
  }

  const Geometry* geo_;
  bool overline_wins_ = true;
  int to_move_ = BLACK;
  int stones_ = 0;
  int count_[2] = {0, 0};
  int won_dir_ = -1;  // the direction of the winning run of the last move; -1 while nobody has won
  uint64_t hash_ = 0;
  std::vector<int8_t> cells_;
  // The empty points, ascending, in the first n - stones_ entries: the legal moves as they are.
  std::vector<int32_t> empty_;
  uint32_t lines_[2][kDirections][kMaxLines];
  std::vector<Record> history_;
};

}  // namespace

void bind_gomoku(nb::module_& m) {
  using Cells = nb::ndarray<nb::numpy, const int8_t, nb::ndim<1>>;
  nb::class_<GomokuPosition, Position>(
      m, "GomokuPosition",
      "Gomoku under freestyle or exact-five rules on a width x height board (5..32 a side).")
      .def(nb::init<int, int, const std::string&>(), nb::arg("width"), nb::arg("height"),
           nb::arg("rule") = "freestyle")
      .def_prop_ro("rule", &GomokuPosition::rule)
      .def("cells",
           [](const GomokuPosition& p) {
             return Cells(p.cells(), {static_cast<size_t>(p.num_points())}, nb::handle());
           },
           nb::rv_policy::reference_internal,
           "The stones as a read-only int8 view that follows the position (no copy).")
      .def("wins_if_played", &GomokuPosition::wins_if_played, nb::arg("move"), nb::arg("color"))
      .def("winning_line",
           [](const GomokuPosition& p) -> std::optional<std::vector<int>> {
             std::vector<int> line = p.winning_line();
             if (line.empty()) return std::nullopt;
             return line;
           })
      .def("threats",
           [](const GomokuPosition& p) {
             const size_t n = p.num_points();
             uint8_t flags[kMaxSize * kMaxSize];
             p.threat_flags(flags);
             auto* data = new uint8_t[n * 6];
             for (size_t i = 0; i < n; ++i)
               for (int k = 0; k < 6; ++k) data[i * 6 + k] = flags[i] >> k & 1;
             nb::capsule owner(data, [](void* q) noexcept { delete[] static_cast<uint8_t*>(q); });
             return nb::ndarray<nb::numpy, uint8_t, nb::ndim<2>>(data, {n, 6}, owner);
           },
           "[num_points, 6] 0/1 threat planes (see encode), as a new uint8 array.");
}

}  // namespace saz
