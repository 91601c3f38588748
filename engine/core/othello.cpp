// Othello (Reversi) in the compiled core: every even board from 4x4 to 26x26, rectangular too.
//
// A position is two bitboards, the discs of the side to move (`own_`) and of its opponent
// (`opp_`), bit p standing for point p = y * width + x. A board of up to 676 points needs up to 11
// 64-bit words, so the rules are one template over the word count, instantiated for the sizes
// that occur (8x8 fits one word, 10x10 two, 26x26 eleven): one implementation, fast on each.
//
// One shift moves every disc one step at once: `<< 1` along a row, `<< width` along a column,
// `<< width +- 1` along the diagonals. A sideways shift would carry a disc off one side of the
// board and back on at the other; a run of discs to flip never holds an edge column, so runs walk
// only through the opponent's discs off the edge columns (`inner_`), which cannot wrap.
//
// Rules: Black moves first from the four centre discs (White on the centre square's top-left and
// bottom-right). A move places a disc that flips at least one line of opponent discs. A side that
// cannot place a disc passes, and only then; the game ends when neither side can, and the side
// with more discs wins.
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <array>
#include <memory>
#include <vector>

#include "bindings.hpp"
#include "bits.hpp"

namespace saz {
namespace {

constexpr int kMinSize = 4;
constexpr int kMaxSize = 26;
constexpr int kFeatures = 7;  // own, opponent, empty, legal, own_unsafe, opponent_unsafe, extra
constexpr uint64_t kZobristTag = 0x07E1;
constexpr int kMaxPoints = kMaxSize * kMaxSize;
// The most discs a wipeout the search looks for may turn over (winning_moves, forced_moves).
// Wipeouts happen to a side with few discs; counting to here is cheap, flooding is not.
constexpr int kWipeoutDiscs = 12;

// Zobrist keys per point (a point's key does not depend on the board size) and of White to
// move, drawn once at load time: a move XORs table entries rather than recomputing keys.
struct Keys {
  uint64_t black[kMaxPoints], white[kMaxPoints];
  uint64_t flip[kMaxPoints];  // black ^ white: a disc turned over
  uint64_t side;
};
Keys make_keys() {
  Keys k{};
  for (int p = 0; p < kMaxPoints; ++p) {
    k.black[p] = zobrist_key(kZobristTag, 2 * uint64_t(p));
    k.white[p] = zobrist_key(kZobristTag, 2 * uint64_t(p) + 1);
    k.flip[p] = k.black[p] ^ k.white[p];
  }
  k.side = zobrist_key(kZobristTag, 2 * uint64_t(kMaxPoints));
  return k;
}
const Keys kKeys = make_keys();

template <int W>
class OthelloPosition final : public Position {
 public:
  using BB = Bits<W>;

  OthelloPosition(int width, int height, const std::vector<int>& black,
                  const std::vector<int>& white, int to_move)
      : Position(width, height), geo_(std::make_shared<const Geometry>(width, height)) {
    const int n = width * height;
    BB b, wh;
    for (int p : black) b.set(p);
    for (int p : white) wh.set(p);
    to_move_ = to_move;
    own_ = to_move == BLACK ? b : wh;
    opp_ = to_move == BLACK ? wh : b;
    hash_ = to_move == WHITE ? side_key() : 0;
    b.for_each([&](int p) { hash_ ^= key(BLACK, p); });
    wh.for_each([&](int p) { hash_ ^= key(WHITE, p); });
    history_.reserve(n + 16);
  }

  std::unique_ptr<Position> clone() const override {
    auto copy = std::make_unique<OthelloPosition>(*this);
    // A copy's history holds only what it copied: room for a whole game, so that a search
    // walking the copy down and back up never allocates.
    copy->history_.reserve(history_.size() + num_points() + 16);
    return copy;
  }
  int num_features() const override { return kFeatures; }
  int to_move() const override { return to_move_; }
  uint64_t hash() const override { return hash_; }
  int ply() const override { return int(history_.size()); }

  void board(int8_t* out) const override {
    const int n = num_points();
    for (int p = 0; p < n; ++p)
      out[p] = own_.test(p) ? int8_t(to_move_) : opp_.test(p) ? int8_t(-to_move_) : int8_t(0);
  }

  void legal_moves(Moves& out) const override {
    out.clear();
    update_legal();
    legal_.for_each([&](int p) { out.push_back(p); });
    if (pass_legal_) out.push_back(pass_move());
  }

  int count_legal_moves() const override {
    update_legal();
    return legal_.count() + pass_legal_;
  }

  bool is_legal(int move) const override {
    update_legal();
    if (move == pass_move()) return pass_legal_;
    return move >= 0 && move < num_points() && legal_.test(move);
  }

  void play(int move) override {
    const int n = num_points();
    BB flips;
    if (move == n) {
      update_legal();
      if (!pass_legal_)
        throw IllegalMove(move, legal_.any() ? "a pass is legal only when no disc can be placed"
                                             : "the game is over");
    } else {
      if (move < 0 || move > n)
        throw IllegalMove(move, "off the board (points are 0.." + std::to_string(n - 1) +
                                    ", pass is " + std::to_string(n) + ")");
      if (own_.test(move) || opp_.test(move)) throw IllegalMove(move, "the point is occupied");
      flips = flips_of(move);
      if (!flips.any()) {
        update_legal();
        throw IllegalMove(move, legal_.any() || pass_legal_ ? "the disc would flip nothing"
                                                            : "the game is over");
      }
    }
    history_.push_back(Record{own_, opp_, hash_, to_move_});
    uint64_t h = hash_ ^ side_key();
    BB placed;
    if (move != n) {
      placed.set(move);
      h ^= key(to_move_, move);
      flips.for_each([&](int p) { h ^= kKeys.flip[p]; });
    }
    BB new_own = opp_ ^ flips;
    opp_ = own_ | placed | flips;
    own_ = new_own;
    to_move_ = -to_move_;
    hash_ = h;
    legal_valid_ = false;
  }

  void undo() override {
    if (history_.empty()) throw UndoError("no move to undo");
    const Record& r = history_.back();
    own_ = r.own;
    opp_ = r.opp;
    hash_ = r.hash;
    to_move_ = r.to_move;
    history_.pop_back();
    legal_valid_ = false;
  }

  void switch_turn() override {
    std::swap(own_, opp_);
    to_move_ = -to_move_;
    hash_ ^= side_key();
    legal_valid_ = false;
  }

  bool is_over() const override {
    update_legal();
    return !legal_.any() && !pass_legal_;
  }

  int winner() const override {
    int mine = own_.count(), theirs = opp_.count();
    if (mine == theirs) return DRAW;
    return mine > theirs ? to_move_ : -to_move_;
  }

  void winning_moves(Moves& out) const override {
    // A placement that turns over every opponent disc ends the game with the opponent wiped out.
    // On a large open board a network trained on small ones walks into these; knowing them
    // settles such a position in the tree.
    out.clear();
    if (!might_wipe_out(own_, opp_)) return;
    update_legal();
    legal_.for_each([&](int p) {
      if (wipes_out(p, own_, opp_)) out.push_back(p);
    });
  }

  bool forced_moves(Moves& out) const override {
    // The threat is the opponent's wipeout in reply: when some of the side to move's moves
    // allow one, the others are the candidates (none: the position is lost). Two plies of
    // exact knowledge that the search would otherwise need many visits to find on a large open
    // board, where the network steers towards positions with few discs.
    out.clear();
    if (own_.count() + 2 > kWipeoutDiscs) return false;  // a move leaves at least two more
    update_legal();
    bool threat = false;
    auto consider = [&](int move, const BB& own_after, const BB& opp_after) {
      if (can_wipe_out(opp_after, own_after))
        threat = true;
      else
        out.push_back(move);
    };
    legal_.for_each([&](int p) {
      const BB flips = flips_of(p);
      BB placed;
      placed.set(p);
      consider(p, own_ | placed | flips, opp_ ^ flips);
    });
    if (pass_legal_) consider(pass_move(), own_, opp_);
    if (!threat) out.clear();
    return threat;
  }

  void encode(float* out) const override {
    // own / opponent / empty / legal / own_unsafe / opponent_unsafe per point from the side to
    // move's view; the extra row has `legal` for a forced pass and `extra` = 1.
    update_legal();
    const int n = num_points();
    const BB empty = full_ ^ (own_ | opp_);
    const BB own_unsafe = exposed(opp_, own_), opp_unsafe = exposed(own_, opp_);
    // Zeros, then a one per member of each plane: a plane costs its members, not the board.
    std::fill(out, out + (n + 1) * kFeatures, 0.0f);
    const BB* planes[6] = {&own_, &opp_, &empty, &legal_, &own_unsafe, &opp_unsafe};
    for (int f = 0; f < 6; ++f) planes[f]->for_each([&](int p) { out[p * kFeatures + f] = 1.0f; });
    float* extra = out + n * kFeatures;
    extra[3] = pass_legal_;
    extra[6] = 1.0f;
  }

  // -- extras for the Python layer ---------------------------------------------------------------
  // The points `move` would turn over, ascending (none if it is no legal placement).
  std::vector<int> flips(int move) const {
    std::vector<int> out;
    if (move < 0 || move >= num_points() || own_.test(move) || opp_.test(move)) return out;
    flips_of(move).for_each([&](int p) { out.push_back(p); });
    return out;
  }
  std::tuple<int, int> disc_count() const {
    int mine = own_.count(), theirs = opp_.count();
    return to_move_ == BLACK ? std::make_tuple(mine, theirs) : std::make_tuple(theirs, mine);
  }
  // (black, white) discs as 64-bit words, lowest first.
  std::tuple<std::vector<uint64_t>, std::vector<uint64_t>> words() const {
    const BB& b = to_move_ == BLACK ? own_ : opp_;
    const BB& wh = to_move_ == BLACK ? opp_ : own_;
    return {std::vector<uint64_t>(b.w.begin(), b.w.end()),
            std::vector<uint64_t>(wh.w.begin(), wh.w.end())};
  }
  // (own discs the opponent could turn over next, opponent discs the side to move can), words.
  std::tuple<std::vector<uint64_t>, std::vector<uint64_t>> unsafe_words() const {
    BB a = exposed(opp_, own_), b = exposed(own_, opp_);
    return {std::vector<uint64_t>(a.w.begin(), a.w.end()),
            std::vector<uint64_t>(b.w.begin(), b.w.end())};
  }

 private:
  struct Record {
    BB own, opp;
    uint64_t hash;
    int to_move;
  };

  static uint64_t key(int color, int p) { return color == BLACK ? kKeys.black[p] : kKeys.white[p]; }
  static uint64_t side_key() { return kKeys.side; }

  // The discs a run may cross along each axis: the opponent's, off the edge columns when the
  // axis has a sideways component.
  BB through(int axis, const BB& opp) const { return axis == 1 ? opp : opp & inner_; }

  // The empty points where the owner of `own` may place a disc: from every own disc at once,
  // step onto adjacent opponent discs and keep stepping through them; an empty point one step
  // past such a run closes a line.
  BB mobility(const BB& own, const BB& opp) const {
    const BB empty = full_ ^ (own | opp);
    BB moves;
    for (int a = 0; a < 4; ++a) {
      // Both directions of the axis in one loop: independent work for the CPU to overlap.
      const int step = geo_->steps[a];
      const BB thr = through(a, opp);
      BB up = own.up(step) & thr, down = own.down(step) & thr;
      while ((up | down).any()) {
        up = up.up(step);
        down = down.down(step);
        moves |= (up | down) & empty;
        up &= thr;
        down &= thr;
      }
    }
    return moves;
  }

  // The opponent discs that `own`'s owner could turn over with its next placement: per axis, a
  // flood from every own disc through opponent discs marks the lines with an own disc behind
  // them, and a flood back from every empty point through those lines keeps the ones with an
  // empty point ahead.
  BB exposed(const BB& own, const BB& opp) const {
    const BB empty = full_ ^ (own | opp);
    BB out;
    for (int a = 0; a < 4; ++a) {
      const int step = geo_->steps[a];
      const BB thr = through(a, opp);
      out |= flood_down(empty, step, flood_up(own, step, thr));
      out |= flood_up(empty, step, flood_down(own, step, thr));
    }
    return out;
  }

  // What a disc of the side to move on the empty point `move` turns over.
  BB flips_of(int move) const { return flips_of(move, own_, opp_); }

  // What a disc of `own`'s owner on the empty point `move` turns over: per direction, a walk
  // through `opp` discs (no further than the board's edge) that ends on an `own` disc.
  BB flips_of(int move, const BB& own, const BB& opp) const {
    const Geometry& g = *geo_;
    const uint8_t* reach = g.reach[move];
    BB out;
    for (int d = 0; d < 8; ++d) {
      // A run needs an opponent disc next to the move and an own disc past it: two steps.
      const int step = g.delta[d], last = reach[d];
      if (last < 2) continue;
      int k = 1, q = move + step;
      while (k < last && opp.test(q)) {
        ++k;
        q += step;
      }
      if (k > 1 && own.test(q))
        for (int r = move + step; r != q; r += step) out.set(r);
    }
    return out;
  }

  // Whether `own`'s owner could turn over every `opp` disc with one placement, as far as a
  // count and a flood per axis tell: no more than kWipeoutDiscs of them (past that a wipeout
  // is too rare to pay for; the interface lets the rules say "can't tell cheaply"), every one
  // exposed.
  bool might_wipe_out(const BB& own, const BB& opp) const {
    return opp.any() && opp.count() <= kWipeoutDiscs && exposed(own, opp) == opp;
  }
  // Whether `own`'s owner, to move, can turn over every `opp` disc with one placement (as far
  // as `might_wipe_out` lets it be known).
  bool can_wipe_out(const BB& own, const BB& opp) const {
    if (!might_wipe_out(own, opp)) return false;
    bool found = false;
    mobility(own, opp).for_each([&](int p) { found = found || wipes_out(p, own, opp); });
    return found;
  }
  bool wipes_out(int move, const BB& own, const BB& opp) const {
    return flips_of(move, own, opp) == opp;
  }

  void update_legal() const {
    if (legal_valid_) return;
    legal_ = mobility(own_, opp_);
    pass_legal_ = !legal_.any() && mobility(opp_, own_).any();
    legal_valid_ = true;
  }

  // What depends on the board size only, shared by a position's clones.
  struct Geometry {
    Geometry(int width, int height) {
      for (int p = 0; p < width * height; ++p) {
        const int x = p % width, y = p / width;
        full.set(p);
        if (x != 0 && x != width - 1) inner.set(p);
        const int right = width - 1 - x, left = x, down = height - 1 - y, up = y;
        const int r[8] = {right, left, down, up, std::min(right, down), std::min(left, up),
                          std::min(right, up), std::min(left, down)};
        for (int d = 0; d < 8; ++d) reach[p][d] = uint8_t(r[d]);
      }
      steps = {1, width, width + 1, width - 1};
      delta = {1, -1, width, -width, width + 1, -width - 1, 1 - width, width - 1};
    }
    BB full, inner;               // every point; the points off the first and last column
    std::array<int, 4> steps{};   // shifts along a row, a column and the two diagonals
    std::array<int, 8> delta{};   // the eight directions as point offsets
    uint8_t reach[kMaxPoints][8]; // steps from a point to the board's edge per direction
  };

  std::shared_ptr<const Geometry> geo_;
  BB full_ = geo_->full, inner_ = geo_->inner;  // copies: the hot loops read them directly
  BB own_, opp_;
  int to_move_ = BLACK;
  uint64_t hash_ = 0;
  std::vector<Record> history_;
  mutable BB legal_;
  mutable bool pass_legal_ = false;
  mutable bool legal_valid_ = false;
};

// The position for a board, with the fewest words that hold its points.
std::unique_ptr<Position> make_othello(int width, int height, const std::vector<int>& black,
                                       const std::vector<int>& white, int to_move) {
  if (width % 2 || height % 2 || width < kMinSize || width > kMaxSize || height < kMinSize ||
      height > kMaxSize)
    throw UnsupportedSize("Othello needs an even board side from 4 to 26, got " +
                          std::to_string(width) + "x" + std::to_string(height));
  const int n = width * height;
  for (const auto* points : {&black, &white})
    for (int p : *points)
      if (p < 0 || p >= n) throw GameError("a disc off the board: " + std::to_string(p));
  if (to_move != BLACK && to_move != WHITE) throw GameError("to_move must be BLACK or WHITE");
  const int words = (n + 63) / 64;
  switch (words) {
    case 1: return std::make_unique<OthelloPosition<1>>(width, height, black, white, to_move);
    case 2: return std::make_unique<OthelloPosition<2>>(width, height, black, white, to_move);
    case 3: return std::make_unique<OthelloPosition<3>>(width, height, black, white, to_move);
    case 4: return std::make_unique<OthelloPosition<4>>(width, height, black, white, to_move);
    case 5:
    case 6: return std::make_unique<OthelloPosition<6>>(width, height, black, white, to_move);
    case 7:
    case 8: return std::make_unique<OthelloPosition<8>>(width, height, black, white, to_move);
    default: return std::make_unique<OthelloPosition<11>>(width, height, black, white, to_move);
  }
}

template <int W>
void bind_words(nb::module_& m, const char* name) {
  using P = OthelloPosition<W>;
  nb::class_<P, Position>(m, name)
      .def("flips", &P::flips, nb::arg("move"))
      .def("disc_count", &P::disc_count)
      .def("words", &P::words)
      .def("unsafe_words", &P::unsafe_words);
}

}  // namespace

void bind_othello(nb::module_& m) {
  // One class per word count; Python sees them through `new_othello` and the shared methods.
  bind_words<1>(m, "Othello64");
  bind_words<2>(m, "Othello128");
  bind_words<3>(m, "Othello192");
  bind_words<4>(m, "Othello256");
  bind_words<6>(m, "Othello384");
  bind_words<8>(m, "Othello512");
  bind_words<11>(m, "Othello704");
  m.def("new_othello", &make_othello, nb::arg("width"), nb::arg("height"), nb::arg("black"),
        nb::arg("white"), nb::arg("to_move"),
        "An Othello position with these discs (point lists) and side to move; its class holds "
        "the fewest 64-bit words that cover the board.");
}

}  // namespace saz
