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
//   points that complete five (`winning_moves`, `forced_moves`) are a few shifts per line; the
//   windows of five of the threat planes are 5-bit slices of a line; and the shape planes read
//   the eight points around a point along each line (two 8-bit slices, own and blocked) from a
//   table of every such pattern, built once.
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
#include <unordered_map>

#include "bindings.hpp"

namespace saz {
namespace {

constexpr int kMinSize = 5;
constexpr int kMaxSize = 32;
constexpr int kFive = 5;
constexpr int kDirections = 4;  // (1,0) rows, (0,1) columns, (1,1) diagonals, (-1,1) anti-diagonals
constexpr int kMaxLines = 64;   // per direction: at most 32 + 32 - 1 diagonals
constexpr int kMaxWords = kMaxSize * kMaxSize / 64;  // of a bitboard of the points
// own, opponent, empty, six threat planes, the extra node's marker, Black's forbidden points,
// then ten shape planes (features version 4: appended, so version 3's networks read the first 11).
constexpr int kFeatures = 21;
constexpr int kExtraFeature = 9;
constexpr int kForbiddenFeature = 10;
constexpr int kShapeFeature = 11;
constexpr int kShapePlanes = 10;
// How deep a renju forbidden-point test follows "is the three's completing point itself
// forbidden" (RIF): each level adds a stone, and real positions need two or three.
constexpr int kMaxRenjuDepth = 6;
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

enum Rule : int8_t { FREESTYLE, EXACT_FIVE, RENJU };
// Why renju forbids Black a point (NOT_FORBIDDEN: it does not).
enum Forbidden : int8_t { NOT_FORBIDDEN, DOUBLE_THREE, DOUBLE_FOUR, OVERLINE };

inline const char* forbidden_reason(int kind) {
  switch (kind) {
    case DOUBLE_THREE: return "renju forbids Black a double three";
    case DOUBLE_FOUR: return "renju forbids Black a double four";
    case OVERLINE: return "renju forbids Black an overline";
    default: return "";
  }
}

// The run of set bits of `mask` through bit `b` (which must be set): its lowest bit and length.
inline void run_through(uint64_t mask, int b, int& low, int& length) {
  const int up = __builtin_ctzll(~(mask >> b));          // bits b, b+1, ... set
  const int down = __builtin_clzll(~(mask << (63 - b)));  // bits b, b-1, ... set
  low = b - down + 1;
  length = up + down - 1;
}

// What a stone makes along one direction, from the nine points centred on it: the stone, and four
// each side. Classes rank: a five beats an open four beats a four beats an open three.
enum Shape : uint8_t { NO_SHAPE, OPEN_THREE, FOUR, OPEN_FOUR, FIVE };

// Per (own8 | block8 << 8), the eight points around the centre by bit (0..3 the four before it,
// 4..7 the four after; block: an opponent stone or off the board): the Shape a stone of one's own
// on the centre makes. By definition, counting in the nine points (a five through the centre
// always lies within them): FIVE if the centre's run is five or longer; else OPEN_FOUR when two
// or more empty points would each complete a five through the centre, FOUR when one would; else
// OPEN_THREE when one more stone on an empty point would make such an open four. Built once, over
// the 3^8 = 6,561 ways to fill the eight points.
struct ShapeTable {
  uint8_t shape[1 << 16] = {};

  // The run of own stones through the centre (bit 4) of a nine-bit window.
  static int run(uint32_t own9) {
    int low, length;
    run_through(own9, 4, low, length);
    return length;
  }
  // Empty points that would complete a five through the centre.
  static int completions(uint32_t own9, uint32_t empty9) {
    int count = 0;
    for (uint32_t e = empty9; e; e &= e - 1)
      count += run(own9 | (e & -e)) >= kFive;
    return count;
  }
  static Shape classify(uint32_t own9, uint32_t empty9) {
    if (run(own9) >= kFive) return FIVE;
    const int now = completions(own9, empty9);
    if (now >= 2) return OPEN_FOUR;
    if (now == 1) return FOUR;
    for (uint32_t e = empty9; e; e &= e - 1) {
      const uint32_t bit = e & -e;
      if (completions(own9 | bit, empty9 & ~bit) >= 2) return OPEN_THREE;
    }
    return NO_SHAPE;
  }
  static uint32_t nine(uint32_t eight) { return (eight & 0xF) | (eight >> 4 & 0xF) << 5; }

  ShapeTable() {
    for (int code = 0; code < 6561; ++code) {  // base 3: 0 empty, 1 own, 2 blocked
      uint32_t own = 0, block = 0;
      for (int i = 0, c = code; i < 8; ++i, c /= 3) {
        if (c % 3 == 1) own |= 1u << i;
        if (c % 3 == 2) block |= 1u << i;
      }
      const uint32_t own9 = nine(own) | 1u << 4, empty9 = 0x1FF & ~own9 & ~nine(block);
      shape[own | block << 8] = classify(own9, empty9);
    }
  }
};
const ShapeTable kShapes;

// The eight points around bit b of a line as ShapeTable's index half: bits b-4..b-1 then
// b+1..b+4 of `mask`, with `outside` (0 or 1 bits) for the points before the line's bit 0.
inline uint32_t around(uint64_t mask, int b, uint32_t outside) {
  const uint32_t nine = static_cast<uint32_t>((mask << 4 | outside) >> b) & 0x1FF;
  return (nine & 0xF) | (nine >> 5) << 4;
}

// Shape planes, by bit: for the side to move, then (bits 5..9) the opponent, on an empty point:
// an open four (or five) in some direction, fours in two directions, a four in one and an open
// three in another, an open three, open threes in two directions.
constexpr int kShapeBits = 5;
inline uint16_t shape_bits(const uint8_t (&by_direction)[kDirections]) {
  int fours = 0, threes = 0;
  bool open_four = false;
  for (const uint8_t shape : by_direction) {
    fours += shape >= FOUR;
    threes += shape == OPEN_THREE;
    open_four |= shape >= OPEN_FOUR;
  }
  return static_cast<uint16_t>(open_four | (fours >= 2) << 1 | (fours >= 1 && threes >= 1) << 2 |
                               (threes >= 1) << 3 | (threes >= 2) << 4);
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
      rule_ = FREESTYLE;
    } else if (rule == "exact-five") {
      rule_ = EXACT_FIVE;
    } else if (rule == "renju") {
      rule_ = RENJU;
    } else {
      throw UnsupportedRule("unknown Gomoku rule '" + rule +
                            "'; expected one of freestyle, exact-five, renju");
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

  const std::string rule() const {
    return rule_ == FREESTYLE ? "freestyle" : rule_ == EXACT_FIVE ? "exact-five" : "renju";
  }
  const int8_t* cells() const { return cells_.data(); }

  void legal_moves(Moves& out) const override {
    out.clear();
    if (won_dir_ >= 0) return;
    const int32_t* empty = empty_.data();
    const int count = geo_->n - stones_;
    if (!black_restricted()) {
      out.assign(empty, empty + count);
      return;
    }
    for (int i = 0; i < count; ++i)
      if (!forbidden_kind(empty[i], 0)) out.push_back(empty[i]);
  }

  bool is_legal(int move) const override {
    return move >= 0 && move < geo_->n && cells_[move] == EMPTY && won_dir_ < 0 &&
           !(black_restricted() && forbidden_kind(move, 0));
  }

  void play(int move) override {
    const int n = geo_->n;
    if (move < 0 || move >= n) throw IllegalMove(move, move == n ? "Gomoku has no pass" : "off the board");
    if (won_dir_ >= 0) throw IllegalMove(move, "the game is over");
    if (cells_[move] != EMPTY) throw IllegalMove(move, "the point is occupied");
    if (black_restricted())
      if (const int kind = forbidden_kind(move, 0)) throw IllegalMove(move, forbidden_reason(kind));
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

  // Over at a five, on a full board, and (renju) when every empty point is forbidden to Black,
  // which is a draw: nobody can move.
  bool is_over() const override {
    return won_dir_ >= 0 || stones_ == geo_->n || (black_restricted() && !black_can_move());
  }
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
    if (black_restricted())  // a block on a forbidden point is no block (a five never is)
      out.erase(std::remove_if(out.begin(), out.end(), [&](int p) { return forbidden_kind(p, 0); }),
                out.end());
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
      row[kExtraFeature] = 0.0f;
      row[kForbiddenFeature] = 0.0f;
      const unsigned shapes = f ? shape_flags(p, f) : 0;  // no flags: a stone, or nothing near
      for (int k = 0; k < kShapePlanes; ++k) row[kShapeFeature + k] = static_cast<float>(shapes >> k & 1);
    }
    if (rule_ == RENJU) {
      const int count = n - stones_;
      for (int i = 0; i < count; ++i)
        if (forbidden_kind(empty_[i], 0))
          out[static_cast<size_t>(empty_[i]) * kFeatures + kForbiddenFeature] = 1.0f;
    }
    float* extra = out + static_cast<size_t>(n) * kFeatures;
    for (int k = 0; k < kFeatures; ++k) extra[k] = 0.0f;
    extra[kExtraFeature] = 1.0f;
  }

  // The shape planes of the empty point p (by bit, see shape_bits): what a stone of the side to
  // move, then of the opponent, would make there along each direction. `threats` are p's threat
  // flags (threat_flags): every shape makes at least a three in some window of five, so a side
  // without one there has no shape to look up, which spares most points of the board.
  unsigned shape_flags(int p, unsigned threats) const {
    const Geometry& g = *geo_;
    const int me = side(to_move_);
    unsigned bits = 0;
    for (int s = 0; s < 2; ++s) {
      if (!(threats >> (3 * s) & 7)) continue;
      const int own = s == 0 ? me : 1 - me;
      uint8_t by_direction[kDirections];
      for (int d = 0; d < kDirections; ++d) {
        const int l = g.line[p][d], b = g.bit[p][d];
        const uint64_t block = lines_[1 - own][d][l] | ~static_cast<uint64_t>(g.full[d][l]);
        by_direction[d] = kShapes.shape[around(lines_[own][d][l], b, 0) |
                                        around(block, b, 0xF) << 8];
      }
      bits |= static_cast<unsigned>(shape_bits(by_direction)) << (kShapeBits * s);
    }
    return bits;
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

  // -- renju: Black's forbidden points (RIF) ------------------------------------------------------

  // Whether the side to move is Black under renju, whose moves the forbidden points restrict.
  bool black_restricted() const { return rule_ == RENJU && to_move_ == BLACK; }

  // Why renju forbids Black the empty point p now (NOT_FORBIDDEN under other rules).
  int forbidden(int p) const {
    if (p < 0 || p >= geo_->n || cells_[p] != EMPTY)
      throw IllegalMove(p, "not an empty point of the board");
    return rule_ == RENJU ? forbidden_kind(p, 0) : NOT_FORBIDDEN;
  }

 private:
  // The RIF test for a Black stone on the empty point p, from the line masks alone (so that it
  // can recurse with stones placed for a moment). A five is never forbidden, whatever else the
  // stone makes; otherwise an overline, two fours (a straight four counts once; two fours may
  // share a line) or two real threes are. A three is real when a Black stone on some point of
  // its line makes a straight four through p, with both ends making exactly five, and that
  // point is not itself forbidden (tested with p placed, `depth` levels deep at most).
  int forbidden_kind(int p, int depth) const {
    const Geometry& g = *geo_;
    // Cheap filter first: every forbidden shape needs two directions with two more Black stones
    // within four points of p, or one direction with three (an overline, a four-four in a line).
    int busy = 0;
    bool crowded = false;
    for (int d = 0; d < kDirections; ++d) {
      const int b = g.bit[p][d];
      const uint64_t near = (uint64_t{0x1FF} << b) >> 4;  // bits b-4 .. b+4
      const int stones = __builtin_popcountll(uint64_t{lines_[0][d][g.line[p][d]]} & near);
      busy += stones >= 2;
      crowded |= stones >= 3;
    }
    if (busy < 2 && !crowded) return NOT_FORBIDDEN;
    set_bit(0, p);
    int kind = NOT_FORBIDDEN, fours = 0, threes = 0;
    bool five = false, overline = false;
    uint32_t four_bits[kDirections];
    for (int d = 0; d < kDirections; ++d) {
      int low, length;
      run_through(lines_[0][d][g.line[p][d]], g.bit[p][d], low, length);
      five |= length == kFive;
      overline |= length > kFive;
    }
    if (!five) {
      if (overline) {
        kind = OVERLINE;
      } else {
        for (int d = 0; d < kDirections; ++d) {
          const uint32_t f = four_bits[d] = five_bits_through(BLACK, d, p);
          int k = __builtin_popcount(f);
          if (k == 2 && (f >> (__builtin_ctz(f) + kFive) & 1)) k = 1;  // a straight four
          fours += k;
        }
        if (fours >= 2) {
          kind = DOUBLE_FOUR;
        } else if (depth < kMaxRenjuDepth) {
          for (int d = 0; d < kDirections && threes < 2; ++d)
            if (!four_bits[d] && real_three(p, d, depth)) ++threes;
          if (threes >= 2) kind = DOUBLE_THREE;
        }
      }
    }
    clear_bit(0, p);
    return kind;
  }

  // With a Black stone on p (placed): whether one more Black stone along direction d makes a
  // straight four through p whose completing point is not forbidden.
  bool real_three(int p, int d, int depth) const {
    const Geometry& g = *geo_;
    const int l = g.line[p][d], b = g.bit[p][d];
    const uint32_t own = lines_[0][d][l], occupied = own | lines_[1][d][l], full = g.full[d][l];
    for (int x = std::max(0, b - 3); x <= std::min(31, b + 3); ++x) {
      if (!(full >> x & 1) || (occupied >> x & 1)) continue;
      const uint64_t with = uint64_t{own} | uint64_t{1} << x;
      const uint64_t open = uint64_t{full} & ~(uint64_t{occupied} | uint64_t{1} << x);
      bool straight = false;
      for (int s = std::max(std::max(b, x) - 3, 1); s <= std::min(b, x) && !straight; ++s) {
        if ((with >> s & 0xF) != 0xF) continue;                      // four in a row s..s+3
        if (!(open >> (s - 1) & 1) || !(open >> (s + 4) & 1)) continue;  // both ends open
        if ((s >= 2 && (with >> (s - 2) & 1)) || (with >> (s + 5) & 1)) continue;  // exactly five
        straight = true;
      }
      if (straight && !forbidden_kind(g.point[d][l][x], depth + 1)) return true;
    }
    return false;
  }

  // Whether Black has a move that is not forbidden (stops at the first).
  bool black_can_move() const {
    const int count = geo_->n - stones_;
    for (int i = 0; i < count; ++i)
      if (!forbidden_kind(empty_[i], 0)) return true;
    return false;
  }

  // With a stone of `color` on p (placed): the bits of p's line in direction d where one more
  // stone of `color` would make a winning run through p.
  uint32_t five_bits_through(int color, int d, int p) const {
    const Geometry& g = *geo_;
    const int c = side(color), l = g.line[p][d], b = g.bit[p][d];
    const uint32_t own = lines_[c][d][l];
    const uint32_t open = g.full[d][l] & ~(own | lines_[1 - c][d][l]);
    uint32_t found = 0;
    for (int x = std::max(0, b - 4); x <= std::min(31, b + 4); ++x) {
      if (!(open >> x & 1)) continue;
      int low, length;
      run_through(uint64_t{own} | uint64_t{1} << x, x, low, length);
      if (wins(length, color) && low <= b && b < low + length) found |= 1u << x;
    }
    return found;
  }

  void set_bit(int c, int p) const {
    for (int d = 0; d < kDirections; ++d) lines_[c][d][geo_->line[p][d]] |= 1u << geo_->bit[p][d];
  }
  void clear_bit(int c, int p) const {
    for (int d = 0; d < kDirections; ++d) lines_[c][d][geo_->line[p][d]] &= ~(1u << geo_->bit[p][d]);
  }

 public:

  // -- threat-space search -----------------------------------------------------------------------
  //
  // A win forced by an unbroken series of threats, in the spirit of Allis's threat-space search:
  // the attacker (the side to move at the start) plays only fours (VCF), or also moves that make
  // a winning threat next move (VCT: a three, or a four-three in waiting), and the defender plays
  // every answer that could matter. Against a four that is the one block (none, under renju, if
  // it is forbidden to Black); against a threat to make an open four or a double four, it is
  // every point of those fours (the threatening point and the points that would complete five)
  // and every four of the defender's own, which must be answered first. Any other defence leaves
  // the threat standing while the defender has no four, so the search is sound: a win it reports
  // is a win. A transposition table keeps each position's result, and a node budget bounds it.

  Solution prove_threats(int64_t max_nodes, bool threes) override {
    Solution out;
    out.status = Solution::UNKNOWN;
    if (is_over()) return out;
    ThreatSearch search(*this, max_nodes);
    // Fours alone first, then one more three at a time: short wins are found cheaply, and what
    // a shallower pass proved lost stays in the table for the next.
    bool win = search.attack(kVcfDepth, 0);
    for (int t = 1; threes && !win && !search.exhausted && t <= kVctThrees; ++t)
      win = search.attack(kVctDepth, t);
    out.nodes = search.nodes;
    if (win) {
      out.status = Solution::SOLVED;
      out.value = 1;
      out.move = search.table.at(hash_).move;
    }
    return out;
  }

  bool threat_defences(Moves& out, int64_t max_nodes) override {
    out.clear();
    if (is_over()) return false;
    // The opponent's VCF as if it were to move: the line it would play, for the defences.
    std::vector<int32_t> line;
    int64_t spent = 0;
    {
      switch_turn();
      ThreatSearch search(*this, max_nodes);
      const bool win = search.attack(kVcfDepth, 0);
      spent = search.nodes;
      if (win) search.line(line);
      switch_turn();
      if (!win) return false;
    }
    // Candidates: the line's points; the points whose stone would turn one of our forced
    // replies into a four or a five (on the replies' lines, within four); our own fours.
    const Geometry& g = *geo_;
    std::vector<uint8_t> candidate(g.n, 0);
    for (size_t i = 0; i < line.size(); ++i) {
      const int q = line[i];
      candidate[q] = 1;
      if (i % 2 == 1)  // a reply of ours
        for (int d = 0; d < kDirections; ++d) {
          const int l = g.line[q][d], b = g.bit[q][d];
          for (int x = std::max(0, b - 4); x <= std::min(31, b + 4); ++x)
            if (g.point[d][l][x] >= 0) candidate[g.point[d][l][x]] = 1;
        }
    }
    Moves fours;
    four_moves(to_move_, fours);
    for (int q : fours) candidate[q] = 1;
    // Each legal candidate is kept unless the opponent still wins by fours after it.
    for (int q = 0; q < g.n; ++q) {
      if (!candidate[q] || !is_legal(q)) continue;
      bool refuted = false;
      if (spent < max_nodes) {
        play(q);
        ThreatSearch search(*this, max_nodes - spent);
        refuted = search.attack(kVcfDepth, 0);
        spent += search.nodes;
        undo();
      }
      if (!refuted) out.push_back(q);
    }
    return true;
  }

 private:
  static constexpr int kVcfDepth = 40;   // attacker moves of a VCF
  static constexpr int kVctDepth = 16;   // attacker moves of a VCT ...
  static constexpr int kVctThrees = 4;   // ... of which at most this many are not fours

  // Into `out`, the legal moves of `color` that make a four (a point where it would then win).
  void four_moves(int color, Moves& out) const { threat_moves(color, 3, out); }

  // Into `out`, the legal moves of `color` (the side to move, or not) that leave a window of
  // five along a line holding `stones + 1` of its stones and none of the other colour's, and
  // (for fours) a real point of five: the candidates of the search's attacking moves.
  void threat_moves(int color, int stones, Moves& out) const {
    const Geometry& g = *geo_;
    out.clear();
    const int c = side(color);
    if (count_[c] < stones) return;
    uint64_t seen[kMaxWords] = {};
    for (int d = 0; d < kDirections; ++d) {
      for (const uint8_t l : g.long_lines[d]) {
        const uint32_t own = lines_[c][d][l], opp = lines_[1 - c][d][l];
        if (__builtin_popcount(own) < stones) continue;
        const uint32_t full = g.full[d][l];
        const int low = __builtin_ctz(full), high = 31 - __builtin_clz(full);
        for (int s = low; s + kFive - 1 <= high; ++s) {
          if ((opp >> s & 31) || kWindows.count5[own >> s & 31] != stones) continue;
          for (uint32_t free = ~own >> s & 31; free; free &= free - 1) {
            const int p = g.point[d][l][s + __builtin_ctz(free)];
            seen[p >> 6] |= uint64_t{1} << (p & 63);
          }
        }
      }
    }
    for (int w = 0; w < g.words; ++w)
      for (uint64_t bits = seen[w]; bits; bits &= bits - 1) {
        const int p = w * 64 + __builtin_ctzll(bits);
        if (color == BLACK && rule_ == RENJU && forbidden_kind(p, 0)) continue;
        if (stones == 3) {  // a four must leave a point of five (not, say, an exact-five overline)
          set_bit(c, p);
          bool four = false;
          for (int d = 0; d < kDirections && !four; ++d) four = five_bits_through(color, d, p) != 0;
          clear_bit(c, p);
          if (!four) continue;
        }
        out.push_back(p);
      }
  }

  // The points of every winning threat of `color` (a legal point where its stone would leave
  // two points of five or more), together with those points of five, into `out`: the points
  // the other side must take one of to stop them all.
  void threat_points(int color, Moves& out) const {
    Moves fours;
    four_moves(color, fours);
    const Geometry& g = *geo_;
    const int c = side(color);
    uint64_t points[kMaxWords] = {};
    for (int p : fours) {
      set_bit(c, p);
      uint64_t fives[kMaxWords] = {};
      int count = 0;
      for (int d = 0; d < kDirections; ++d)
        for (uint32_t f = five_bits_through(color, d, p); f; f &= f - 1) {
          const int q = g.point[d][g.line[p][d]][__builtin_ctz(f)];
          if (!(fives[q >> 6] >> (q & 63) & 1)) ++count;
          fives[q >> 6] |= uint64_t{1} << (q & 63);
        }
      clear_bit(c, p);
      if (count < 2) continue;
      points[p >> 6] |= uint64_t{1} << (p & 63);
      for (int w = 0; w < g.words; ++w) points[w] |= fives[w];
    }
    out.clear();
    append_points(points, out);
  }

  // In how many of p's directions a stone of `color` on the empty point p leaves a point where
  // one more stone would make two points of five (an open four or a double four): 0 when the
  // move threatens nothing, 2 for a double three.
  int threats_made(int color, int p) const {
    const Geometry& g = *geo_;
    const int c = side(color);
    set_bit(c, p);
    int made = 0;
    for (int d = 0; d < kDirections; ++d) {
      const int l = g.line[p][d], b = g.bit[p][d];
      const uint32_t open = g.full[d][l] & ~(lines_[0][d][l] | lines_[1][d][l]);
      bool found = false;
      for (int x = std::max(0, b - 4); x <= std::min(31, b + 4) && !found; ++x) {
        if (!(open >> x & 1)) continue;
        const int q = g.point[d][l][x];
        set_bit(c, q);
        int fives = 0;
        for (int e = 0; e < kDirections && fives < 2; ++e)
          fives += __builtin_popcount(five_bits_through(color, e, q));
        clear_bit(c, q);
        found = fives >= 2 && !(color == BLACK && rule_ == RENJU && forbidden_kind(q, 0));
      }
      made += found;
    }
    clear_bit(c, p);
    return made;
  }

  // One threat-space search for the side to move at its start (the attacker); see above.
  struct ThreatSearch {
    struct Entry {
      int8_t win;       // 1: proven win, 0: no win found within the depth and threes below
      int8_t depth, threes;
      int32_t move;     // the winning move
    };
    GomokuPosition& pos;
    int64_t max_nodes;
    int64_t nodes = 0;
    bool exhausted = false;
    std::unordered_map<uint64_t, Entry> table;

    ThreatSearch(GomokuPosition& p, int64_t budget) : pos(p), max_nodes(budget) {}

    bool spend() {
      if (++nodes > max_nodes) exhausted = true;
      return !exhausted;
    }

    // The attacker to move: a win within `depth` moves of its own, `threes` of them not fours.
    bool attack(int depth, int threes) {
      if (!spend() || pos.is_over()) return false;  // the defender's reply made five
      const int me = pos.to_move_;
      uint64_t bits[kMaxWords];
      if (pos.win_points(me, bits)) {
        Moves wins;
        pos.append_points(bits, wins);
        table[pos.hash_] = {1, int8_t(depth), int8_t(threes), wins[0]};
        return true;
      }
      if (depth <= 0) return false;
      auto it = table.find(pos.hash_);
      if (it != table.end() &&
          (it->second.win || (it->second.depth >= depth && it->second.threes >= threes)))
        return it->second.win;
      Moves moves;
      const int blocks = pos.win_points(-me, bits);
      if (blocks >= 2) return false;
      if (blocks == 1) {  // the defender has a four: block it, and hope the block threatens
        pos.append_points(bits, moves);
        if (!pos.is_legal(moves[0])) return false;
      } else {
        pos.four_moves(me, moves);
        if (threes > 0) {
          // Threes, those that make the most threats at once first (a double three wins).
          Moves more;
          pos.threat_moves(me, 2, more);
          std::vector<std::pair<int, int>> ranked;
          for (int m : more)
            if (std::find(moves.begin(), moves.end(), m) == moves.end())
              if (const int k = pos.threats_made(me, m)) ranked.emplace_back(-k, m);
          std::stable_sort(ranked.begin(), ranked.end());
          for (const auto& [k, m] : ranked) moves.push_back(m);
        }
      }
      for (int m : moves) {
        pos.play(m);
        const bool win = defend(depth - 1, threes);
        pos.undo();
        if (win) {
          table[pos.hash_] = {1, int8_t(depth), int8_t(threes), m};
          return true;
        }
        if (exhausted) return false;
      }
      table[pos.hash_] = {0, int8_t(depth), int8_t(threes), -1};
      return false;
    }

    // The defender to move after an attacking move: whether every answer still loses.
    bool defend(int depth, int threes) {
      if (!spend()) return false;
      if (pos.is_over()) return pos.winner() == -pos.to_move_;  // the attacker made five
      const int me = pos.to_move_, attacker = -me;
      uint64_t bits[kMaxWords];
      if (pos.win_points(me, bits)) return false;  // the defender wins first
      Moves answers;
      const int fives = pos.win_points(attacker, bits);
      if (fives >= 2) return true;
      if (fives == 1) {
        pos.append_points(bits, answers);
        if (!pos.is_legal(answers[0])) return true;  // renju: Black may not block there
      } else {
        if (threes <= 0) return false;
        pos.threat_points(attacker, answers);
        if (answers.empty()) return false;  // no threat: the attacker lost the initiative
        --threes;
        Moves fours;
        pos.four_moves(me, fours);
        for (int m : fours)
          if (std::find(answers.begin(), answers.end(), m) == answers.end()) answers.push_back(m);
      }
      for (int m : answers) {
        if (!pos.is_legal(m)) continue;
        pos.play(m);
        const bool win = attack(depth, threes);
        pos.undo();
        if (!win) return false;
      }
      return true;
    }

    // The proven line from the start: attacker's move, the forced reply, ... and at the end
    // the points of five (a VCF's line is unique: every reply is forced).
    void line(std::vector<int32_t>& out) {
      out.clear();
      int played = 0;
      for (int step = 0; step < 2 * kVcfDepth + 2; ++step) {
        auto it = table.find(pos.hash_);
        if (it == table.end() || !it->second.win || pos.is_over()) break;
        const int m = it->second.move;
        out.push_back(m);
        pos.play(m);
        ++played;
        if (pos.is_over()) break;
        uint64_t bits[kMaxWords];
        Moves fives;
        pos.win_points(-pos.to_move_, bits);
        pos.append_points(bits, fives);
        if (fives.size() != 1 || !pos.is_legal(fives[0])) {  // no single forced block: the end
          out.insert(out.end(), fives.begin(), fives.end());
          break;
        }
        out.push_back(fives[0]);
        pos.play(fives[0]);
        ++played;
      }
      for (; played > 0; --played) pos.undo();
    }
  };

 public:

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

  // Whether a run of `length` stones of `color` wins: five always; an overline under freestyle,
  // and under renju for White only (Black's is forbidden).
  bool wins(int length, int color) const {
    return length == kFive ||
           (length > kFive && (rule_ == FREESTYLE || (rule_ == RENJU && color == WHITE)));
  }

  // The first direction (rows, columns, diagonals, anti-diagonals) in which the stone of `color`
  // on `p` stands in a winning run, or -1.
  int winning_direction(int p, int color) const {
    const auto& mine = lines_[side(color)];
    for (int d = 0; d < kDirections; ++d) {
      int low, length;
      run_through(mine[d][geo_->line[p][d]], geo_->bit[p][d], low, length);
      if (wins(length, color)) return d;
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
      if (wins(length, color)) return true;
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
          if (rule_ != FREESTYLE && !wins_at(p, color)) continue;
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
  Rule rule_ = FREESTYLE;
  int to_move_ = BLACK;
  int stones_ = 0;
  int count_[2] = {0, 0};
  int won_dir_ = -1;  // the direction of the winning run of the last move; -1 while nobody has won
  uint64_t hash_ = 0;
  std::vector<int8_t> cells_;
  // The empty points, ascending, in the first n - stones_ entries: the legal moves as they are.
  std::vector<int32_t> empty_;
  // Mutable: a renju forbidden-point test puts stones on the lines for a moment (the point, then
  // the points that would complete its threes) and takes them off again before it returns.
  mutable uint32_t lines_[2][kDirections][kMaxLines];
  std::vector<Record> history_;
};

}  // namespace

void bind_gomoku(nb::module_& m) {
  using Cells = nb::ndarray<nb::numpy, const int8_t, nb::ndim<1>>;
  nb::class_<GomokuPosition, Position>(
      m, "GomokuPosition",
      "Gomoku under freestyle, exact-five or renju rules on a width x height board (5..32 a side).")
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
      .def("forbidden", &GomokuPosition::forbidden, nb::arg("move"),
           "Why renju forbids Black the empty point: 0 not, 1 double three, 2 double four, "
           "3 overline (always 0 under the other rules).")
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
           "[num_points, 6] 0/1 threat planes (see encode), as a new uint8 array.")
      .def("shapes",
           [](const GomokuPosition& p) {
             const size_t n = p.num_points();
             auto* data = new uint8_t[n * kShapePlanes]();
             uint8_t flags[kMaxSize * kMaxSize];
             p.threat_flags(flags);  // zero on the stones
             for (size_t i = 0; i < n; ++i) {
               if (!flags[i]) continue;
               const unsigned bits = p.shape_flags(static_cast<int>(i), flags[i]);
               for (int k = 0; k < kShapePlanes; ++k) data[i * kShapePlanes + k] = bits >> k & 1;
             }
             nb::capsule owner(data, [](void* q) noexcept { delete[] static_cast<uint8_t*>(q); });
             return nb::ndarray<nb::numpy, uint8_t, nb::ndim<2>>(data, {n, size_t{kShapePlanes}},
                                                                 owner);
           },
           "[num_points, 10] 0/1 shape planes (see encode), as a new uint8 array.");
}

}  // namespace saz
