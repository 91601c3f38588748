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
//
// The endgame solver (`solve`, at the end of the class) searches the same bitboards exactly:
// negamax with alpha-beta, a transposition table, and moves ordered so that cut-offs come early.
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <memory>
#include <utility>
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
// Wipeouts happen to a side with few discs (3 to 14 in our match records); counting to here
// is cheap, flooding is not.
constexpr int kWipeoutDiscs = 16;

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

// What earlier solves proved about positions: bounds on the final margin and the best move,
// by Zobrist hash. Bounded (one slot per index) and kept per thread across solves, so a solve
// of the next move, or of a sibling in the search tree, starts from what the last one proved.
// A slot is kept for the position with more empty points (more work to redo), unless its
// entry dates from an earlier solve.
class SolveTable {
 public:
  struct Entry {
    uint64_t key = 0;
    int16_t lower = 0, upper = 0;  // the margin lies in [lower, upper]
    int16_t move = -1;
    uint8_t empties = 0;
    uint8_t age = 0;
  };

  // This thread's table (16 MiB), made on its first solve.
  static SolveTable& local() {
    thread_local SolveTable table(1 << 20);
    return table;
  }
  void new_solve() { ++age_; }
  // Forget everything (benchmarks time solves from an empty table).
  void clear() { std::fill(slots_.begin(), slots_.end(), Entry{}); }

  const Entry* probe(uint64_t key) const {
    const Entry& e = slots_[key & mask_];
    return e.key == key ? &e : nullptr;
  }
  // Record that the margin is at least `lower` and at most `upper` (intersected with what the
  // slot already knows of the same position).
  void store(uint64_t key, int empties, int lower, int upper, int move) {
    Entry& e = slots_[key & mask_];
    if (e.key == key) {
      lower = std::max<int>(lower, e.lower);
      upper = std::min<int>(upper, e.upper);
    } else if (e.age == age_ && e.empties > empties) {
      return;
    }
    e = Entry{key, int16_t(lower), int16_t(upper), int16_t(move), uint8_t(std::min(empties, 255)),
              age_};
  }

 private:
  explicit SolveTable(size_t entries) : slots_(entries), mask_(entries - 1) {}
  std::vector<Entry> slots_;
  uint64_t mask_;
  uint8_t age_ = 0;
};

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
  int num_empty() const override { return num_points() - own_.count() - opp_.count(); }

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
    // A placement that turns over every opponent disc ends the game with the opponent wiped
    // out; one after which every reply allows that wins one move later. On a large open board
    // a network trained on small ones walks into both (the greedy player wiped it out three
    // plies after a move the two-ply `forced_moves` could not yet see); knowing them settles
    // such a position in the tree.
    out.clear();
    const bool wipe = might_wipe_out(own_, opp_);
    // A move that leaves the opponent few enough discs to be wiped out later turns over most
    // of them: past twice the bound, no move is looked at, and the check costs a count.
    const bool later = opp_.count() <= 2 * kWipeoutDiscs;
    if (!wipe && !later) return;
    update_legal();
    legal_.for_each([&](int p) {
      const BB flips = flips_of(p);
      if (wipe && flips == opp_) {
        out.push_back(p);
        return;
      }
      const auto [mine, theirs] = placed(own_, opp_, p, flips);
      if (later && every_move_is_wiped_out(theirs, mine)) out.push_back(p);
    });
    if (later && pass_legal_ && every_move_is_wiped_out(opp_, own_)) out.push_back(pass_move());
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
      const auto [mine, theirs] = placed(own_, opp_, p, flips_of(p));
      consider(p, mine, theirs);
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

  // -- the endgame solver ------------------------------------------------------------------------
  Solution solve(int64_t max_nodes, bool exact, double max_seconds = 0.0) const override {
    Solution out;
    out.status = Solution::SOLVED;
    if (is_over()) {
      const int margin = own_.count() - opp_.count();
      out.value = exact ? margin : (margin > 0) - (margin < 0);
      out.nodes = 1;
      return out;
    }
    SolveTable& table = SolveTable::local();
    table.new_solve();
    Solver solver(*this, table, max_nodes, max_seconds);
    try {
      if (!exact) {
        // Win/draw/loss: the window (-1, 1) tells the margin's sign and nothing more.
        solver.root(own_, opp_, hash_, to_move_, -1, 1, out);
        out.value = (out.value > 0) - (out.value < 0);
      } else {
        // The exact margin by null-window probes, each asking "at least t?": a null window
        // cuts off far more than a wide one, and each probe starts from the bounds the table
        // kept from the last. The margin lies in [lo, hi]; `lo` starts below any margin, and
        // only a probe that fails high raises it, to a value its move is proved to reach, so
        // the loop ends with that move. The first probe asks for a win; then the probes walk
        // from the side it proved in steps of 2, and bisect once both sides are bounded. A
        // probe past the margin costs about a whole proof and one short of it little, so few
        // should overshoot: walking took 15-30% fewer nodes than bisecting at 18-20 empty
        // points on 8x8.
        const int below = -num_points() - 1, above = num_points();
        int lo = below, hi = above;
        for (int t = 1; lo < hi;) {
          Solution probe;
          solver.root(own_, opp_, hash_, to_move_, t - 1, t, probe);
          if (probe.value >= t) {
            lo = probe.value;
            out.move = probe.move;
          } else {
            hi = probe.value;
          }
          if (hi == above)
            t = std::min(lo + 2, hi);
          else if (lo == below)
            t = std::max(hi - 1, lo + 1);
          else
            t = lo + (hi - lo + 1) / 2;
        }
        out.value = lo;
      }
    } catch (const typename Solver::OutOfNodes&) {
      out.status = Solution::UNKNOWN;
      out.move = -1;
      out.value = 0;
    }
    out.nodes = solver.nodes();
    return out;
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
    if constexpr (W == 1) {
      // One word: the eight directions side by side for a fixed number of steps (the longest
      // run the board holds), no data-dependent exit: independent work the CPU overlaps.
      const Geometry& g = *geo_;
      const uint64_t o = own.w[0], x = opp.w[0], xi = x & inner_.w[0];
      const uint64_t t[4] = {xi, x, xi, xi};
      uint64_t up[4], down[4];
      for (int a = 0; a < 4; ++a) {
        up[a] = (o << g.steps[a]) & t[a];
        down[a] = (o >> g.steps[a]) & t[a];
      }
      for (int i = 1; i < g.longest_run; ++i)
        for (int a = 0; a < 4; ++a) {
          up[a] |= (up[a] << g.steps[a]) & t[a];
          down[a] |= (down[a] >> g.steps[a]) & t[a];
        }
      uint64_t moves = 0;
      for (int a = 0; a < 4; ++a) moves |= (up[a] << g.steps[a]) | (down[a] >> g.steps[a]);
      BB r;
      r.w[0] = moves & empty.w[0];
      return r;
    }
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

  // The discs of `discs` that no move can turn over again, by a sufficient test: along each
  // axis the disc's line is full (no move lands on it), or a neighbour on the axis is the edge
  // or a stable disc of the same colour (a run to flip would have to turn that one over too).
  // Grown from nothing, so two discs never hold each other up: the corners come first, then
  // what leans on them.
  BB stable(const BB& discs, const BB& empty) const {
    const Geometry& g = *geo_;
    BB settled[4];  // per axis: the points where that axis cannot flip a disc of `discs` yet
    if constexpr (W == 1) {
      // One word: each empty point opens its four lines, two rays each (few near the end).
      constexpr int ahead[4] = {0, 2, 4, 7}, behind[4] = {1, 3, 5, 6};
      uint64_t open[4] = {empty.w[0], empty.w[0], empty.w[0], empty.w[0]};
      for (uint64_t e = empty.w[0]; e; e &= e - 1) {
        const int p = __builtin_ctzll(e);
        for (int a = 0; a < 4; ++a) open[a] |= g.ray[ahead[a]][p] | g.ray[behind[a]][p];
      }
      for (int a = 0; a < 4; ++a) {
        settled[a].w[0] = ~open[a] & g.full.w[0];
        settled[a] |= g.edge_ahead[a] | g.edge_behind[a];
      }
    } else {
      for (int a = 0; a < 4; ++a) {
        // The lines with an empty point: a flood from the empty points along the axis.
        const int step = g.steps[a];
        BB open = empty, grow = empty;
        while (grow.any()) {
          grow = (grow.minus(g.edge_ahead[a]).up(step) | grow.minus(g.edge_behind[a]).down(step))
                     .minus(open);
          open |= grow;
        }
        settled[a] = g.full.minus(open) | g.edge_ahead[a] | g.edge_behind[a];
      }
    }
    BB out;
    for (;;) {
      BB next = discs;
      for (int a = 0; a < 4; ++a)
        next &= settled[a] | out.up(g.steps[a]) | out.down(g.steps[a]);
      if (next == out) return out;
      out = next;
    }
  }

  // The points next to any of `discs`, in the eight directions.
  BB neighbours(const BB& discs) const {
    const Geometry& g = *geo_;
    BB out;
    for (int a = 0; a < 4; ++a)  // no step from a point whose neighbour is off the board
      out |= discs.minus(g.edge_ahead[a]).up(g.steps[a]) |
             discs.minus(g.edge_behind[a]).down(g.steps[a]);
    return out;
  }

  // What a disc of the side to move on the empty point `move` turns over: per direction, a walk
  // through opponent discs (no further than the board's edge) that ends on an own disc.
  BB flips_of(int move) const { return flips_of(own_, opp_, move); }
  BB flips_of(const BB& own, const BB& opp, int move) const {
    const Geometry& g = *geo_;
    if constexpr (W == 1) {
      // One word (boards up to 8x8), the solver's hot path: per direction, the first point of
      // the ray that is not the opponent's ends the run; an own disc there flips the run. The
      // ray ascends from the move in the directions that add to the index, so that point is
      // the ray's lowest non-opponent bit, else its highest.
      const uint64_t mine = own.w[0], theirs = opp.w[0];
      uint64_t out = 0;
      for (int d : {0, 2, 4, 7}) {  // +1, +width, +width+1, +width-1
        const uint64_t ray = g.ray[d][move], stop = ray & ~theirs;
        const uint64_t first = stop & (0 - stop);
        if (first & mine) out |= ray & (first - 1);
      }
      for (int d : {1, 3, 5, 6}) {  // the opposite directions
        const uint64_t ray = g.ray[d][move], stop = ray & ~theirs;
        if (!stop) continue;
        const uint64_t first = uint64_t(1) << (63 - __builtin_clzll(stop));
        if (first & mine) out |= ray & ~(first | (first - 1));
      }
      BB r;
      r.w[0] = out;
      return r;
    }
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
  // Whether `own`'s owner, to move, has a move (a pass when it has no placement) and every
  // one lets `opp`'s owner turn over all its discs in reply: `forced_moves`' lost position,
  // asked of a position not built. False when the game is over there.
  bool every_move_is_wiped_out(const BB& own, const BB& opp) const {
    if (own.count() + 2 > kWipeoutDiscs) return false;  // as in `forced_moves`
    const BB moves = mobility(own, opp);
    if (!moves.any()) return mobility(opp, own).any() && can_wipe_out(opp, own);
    bool lost = true;
    moves.for_each([&](int p) {
      if (!lost) return;
      const auto [mine, theirs] = placed(own, opp, p, flips_of(own, opp, p));
      lost = can_wipe_out(theirs, mine);
    });
    return lost;
  }
  // Both sides after `own`'s owner places a disc at `move`, turning over `flips`: (own, opp).
  static std::pair<BB, BB> placed(const BB& own, const BB& opp, int move, const BB& flips) {
    BB disc;
    disc.set(move);
    return {own | disc | flips, opp ^ flips};
  }
  bool wipes_out(int move, const BB& own, const BB& opp) const {
    return flips_of(own, opp, move) == opp;
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
        if ((x == 0 || x == width - 1) && (y == 0 || y == height - 1)) corners.set(p);
        quadrants[2 * (y >= height / 2) + (x >= width / 2)].set(p);
        // Per axis (steps: right, down, down-right, down-left), the points whose neighbour
        // ahead (`edge_ahead`) or behind (`edge_behind`) is off the board.
        const bool ahead[4] = {x == width - 1, y == height - 1, x == width - 1 || y == height - 1,
                               x == 0 || y == height - 1};
        const bool behind[4] = {x == 0, y == 0, x == 0 || y == 0, x == width - 1 || y == 0};
        for (int a = 0; a < 4; ++a) {
          if (ahead[a]) edge_ahead[a].set(p);
          if (behind[a]) edge_behind[a].set(p);
        }
        const int right = width - 1 - x, left = x, down = height - 1 - y, up = y;
        const int r[8] = {right, left, down, up, std::min(right, down), std::min(left, up),
                          std::min(right, up), std::min(left, down)};
        for (int d = 0; d < 8; ++d) reach[p][d] = uint8_t(r[d]);
        if (width * height <= 64)
          for (int d = 0; d < 8; ++d)
            for (int k = 1; k <= r[d]; ++k)
              ray[d][p] |= uint64_t(1) << (p + k * delta_of(d, width));
      }
      steps = {1, width, width + 1, width - 1};
      longest_run = std::max(width, height) - 2;
      for (int d = 0; d < 8; ++d) delta[d] = delta_of(d, width);
    }
    BB full, inner;               // every point; the points off the first and last column
    BB corners;
    std::array<BB, 4> quadrants;  // the board's quarters: the endgame's parity regions
    std::array<BB, 4> edge_ahead, edge_behind;
    std::array<int, 4> steps{};   // shifts along a row, a column and the two diagonals
    int longest_run = 0;          // opponent discs a line can hold between a move and its end
    std::array<int, 8> delta{};   // the eight directions as point offsets
    uint8_t reach[kMaxPoints][8]; // steps from a point to the board's edge per direction
    uint64_t ray[8][64] = {};     // one word: the points from a point to the edge per direction

    static int delta_of(int d, int width) {
      const int deltas[8] = {1, -1, width, -width, width + 1, -width - 1, 1 - width, width - 1};
      return deltas[d];
    }
  };

  // Exact negamax over (own, opp) bitboards; values are final margins from the side to move's
  // view, discs only (empty points count for nobody), as `winner()` counts them.
  //
  // Near the end (fewer than kOrderedEmpties empty points) a node is cheap and there are many:
  // moves go in a fixed order (an odd quadrant first, then corners), with no table. Above it a
  // node is worth more work: the table's bounds and best move, then the other moves ordered
  // fastest-first, by how few replies they leave the opponent (corner replies counting double),
  // searched with principal-variation null windows, unless the table already proves one of
  // them good enough (an enhanced transposition cut-off). Everywhere, the opponent's stable
  // discs bound the margin and cut off a search that asks for more (`beyond_reach`).
  //
  // Measured on 8x8 with `saz bench solve`: the stability cut-off, down to 2 empty points,
  // halved the nodes of exact solves at 18 empty points; trying the empty points beats move
  // generation below 7; the table and ordering from 7 up beat 5, 6 and 9.
  class Solver {
   public:
    struct OutOfNodes {};
    static constexpr int kOrderedEmpties = 7;

    Solver(const OthelloPosition& pos, SolveTable& table, int64_t max_nodes, double max_seconds)
        : pos_(pos), g_(*pos.geo_), table_(table), max_nodes_(max_nodes),
          timed_(max_seconds > 0.0),
          deadline_(std::chrono::steady_clock::now() +
                    std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                        std::chrono::duration<double>(timed_ ? max_seconds : 0.0))),
          size_key_(zobrist_key(kZobristTag ^ 0x50, uint64_t(pos.width() * 64 + pos.height()))) {}

    int64_t nodes() const { return nodes_; }

    // The best move and the value of the root within (alpha, beta), into `out`.
    void root(const BB& own, const BB& opp, uint64_t hash, int color, int alpha, int beta,
              Solution& out) {
      count_node();
      const int empties = (g_.full ^ (own | opp)).count();
      const BB moves = pos_.mobility(own, opp);
      if (!moves.any()) {  // a forced pass (the game is not over: the caller checked)
        out.move = pos_.pass_move();
        out.value = -search(opp, own, -beta, -alpha, empties, hash ^ kKeys.side, -color, true);
        return;
      }
      const size_t first = order(own, opp, moves, -1);
      const auto [best, move] = best_child(own, opp, first, alpha, beta, empties, hash, color);
      out.move = move;
      out.value = best;
    }

   private:
    static constexpr int kInfinity = 1 << 14;
    struct Candidate {
      BB flips;
      int move;
      int cost;  // the opponent's replies after the move: lower is searched first
    };

    void count_node() {
      if (++nodes_ > max_nodes_) throw OutOfNodes{};
      // The clock every 4096 positions (well under a millisecond): a loaded machine's slower
      // rate cannot make a solve overrun the move's time.
      if (timed_ && (nodes_ & 4095) == 0 && std::chrono::steady_clock::now() > deadline_)
        throw OutOfNodes{};
    }

    // The value of playing `c` from a node with `empties` empty points: a full window for the
    // first move, else a null window that proves the move no better than `alpha`, re-searched
    // with the full window only when it is.
    // The ordered candidates stack_[first..] searched in turn (fail-soft, cut at `beta`), then
    // popped: (the best value, its move).
    std::pair<int, int> best_child(const BB& own, const BB& opp, size_t first, int alpha, int beta,
                                   int empties, uint64_t hash, int color) {
      int best = -kInfinity, best_move = -1;
      for (size_t i = first; i < stack_.size(); ++i) {
        const Candidate c = stack_[i];
        const int v = child(own, opp, c, i == first, std::max(alpha, best), beta, empties, hash,
                            color);
        if (v > best) {
          best = v;
          best_move = c.move;
          if (best >= beta) break;
        }
      }
      stack_.resize(first);
      return {best, best_move};
    }

    int child(const BB& own, const BB& opp, const Candidate& c, bool first, int alpha, int beta,
              int empties, uint64_t hash, int color) {
      const BB next_own = opp ^ c.flips, next_opp = own | c.flips | BB::single(c.move);
      // Only the table needs the hash.
      const uint64_t h = empties - 1 >= kOrderedEmpties ? child_hash(hash, color, c) : 0;
      if (first)
        return -search(next_own, next_opp, -beta, -alpha, empties - 1, h, -color, false);
      int v = -search(next_own, next_opp, -alpha - 1, -alpha, empties - 1, h, -color, false);
      if (v > alpha && v < beta)
        v = -search(next_own, next_opp, -beta, -v, empties - 1, h, -color, false);
      return v;
    }

    // The Zobrist hash after `c`, from the hash before it (as `play` updates it).
    static uint64_t child_hash(uint64_t hash, int color, const Candidate& c) {
      uint64_t h = hash ^ kKeys.side ^ key(color, c.move);
      c.flips.for_each([&](int p) { h ^= kKeys.flip[p]; });
      return h;
    }

    // Push `moves` onto the candidate stack, cheapest first (`hint` before all), and return
    // where they start.
    size_t order(const BB& own, const BB& opp, BB moves, int hint) {
      const size_t first = stack_.size();
      const BB empty = g_.full ^ (own | opp);
      for (BB m = moves; m.any();) {
        const int p = m.lowest();
        m.reset(p);
        const BB flips = pos_.flips_of(own, opp, p);
        const BB mine = own | flips | BB::single(p), theirs = opp ^ flips;
        const BB replies = pos_.mobility(theirs, mine);
        // Fastest first: the opponent's replies (a corner counting double), then the empty
        // points next to the mover's discs (where the opponent may reply later). A corner of
        // one's own helps.
        const int cost =
            p == hint ? -1 << 20
                      : 8 * replies.count() + 8 * (replies & g_.corners).count() +
                            (pos_.neighbours(mine) & empty.minus(BB::single(p))).count() -
                            4 * g_.corners.test(p);
        // Insertion into the sorted tail: a node has few moves.
        stack_.push_back(Candidate{flips, p, cost});
        for (size_t i = stack_.size() - 1; i > first && stack_[i - 1].cost > cost; --i)
          std::swap(stack_[i - 1], stack_[i]);
      }
      return first;
    }

    // The opponent's stable discs are still its own at the end, so the margin is at most
    // n - 2 * stable: true, with that bound, when it is no more than alpha (a cut-off). The
    // stable discs are counted only where enough opponent discs make the cut possible.
    bool beyond_reach(const BB& own, const BB& opp, const BB& empty, int alpha, int& bound) const {
      const int n = pos_.num_points();
      if (alpha < n - 2 * opp.count()) return false;
      bound = n - 2 * pos_.stable(opp, empty).count();
      return bound <= alpha;
    }

    int search(const BB& own, const BB& opp, int alpha, int beta, int empties, uint64_t hash,
               int color, bool passed) {
      if (empties < kOrderedEmpties) return shallow(own, opp, alpha, beta, empties, passed);
      count_node();
      const uint64_t key = hash ^ size_key_;
      int hint = -1;
      if (const SolveTable::Entry* e = table_.probe(key)) {
        if (e->lower >= beta) return e->lower;
        if (e->upper <= alpha) return e->upper;
        if (e->lower == e->upper) return e->lower;
        alpha = std::max<int>(alpha, e->lower);
        beta = std::min<int>(beta, e->upper);
        hint = e->move;
      }
      const BB empty = g_.full ^ (own | opp);
      if (int bound; beyond_reach(own, opp, empty, alpha, bound)) return bound;
      const BB moves = pos_.mobility(own, opp);
      if (!moves.any()) {
        if (passed) return own.count() - opp.count();  // neither side can place: the end
        return -search(opp, own, -beta, -alpha, empties, hash ^ kKeys.side, -color, true);
      }
      const int alpha0 = alpha;
      const size_t first = order(own, opp, moves, hint);
      // Enhanced transposition cut-off: a move the table already proves good enough ends the
      // node before any child is searched.
      if (empties - 1 >= kOrderedEmpties) {
        for (size_t i = first; i < stack_.size(); ++i) {
          const SolveTable::Entry* e =
              table_.probe(child_hash(hash, color, stack_[i]) ^ size_key_);
          if (e && -e->upper >= beta) {
            const int v = -e->upper, move = stack_[i].move;
            stack_.resize(first);
            table_.store(key, empties, v, kInfinity, move);
            return v;
          }
        }
      }
      const auto [best, best_move] =
          best_child(own, opp, first, alpha, beta, empties, hash, color);
      // Fail-soft: below the window `best` is an upper bound, above it a lower bound.
      table_.store(key, empties, best > alpha0 ? best : -kInfinity,
                   best < beta ? best : kInfinity, best_move);
      return best;
    }

    // A node near the end: no table, no hash, moves in parity order.
    int shallow(const BB& own, const BB& opp, int alpha, int beta, int empties, bool passed) {
      const BB empty = g_.full ^ (own | opp);
      if (empties == 1) return last(own, opp, empty.lowest());
      count_node();
      if (int bound; beyond_reach(own, opp, empty, alpha, bound)) return bound;
      // Every empty point is tried (one without flips is skipped): with so few, that costs
      // less than generating the moves. Parity: in a region with an odd number of empty points
      // the side that moves there first usually also moves there last. So odd regions first,
      // and corners first within each.
      BB odd;
      for (const BB& q : g_.quadrants)
        if ((empty & q).count() & 1) odd |= q;
      const BB odd_moves = empty & odd, even_moves = empty.minus(odd);
      const BB groups[4] = {odd_moves & g_.corners, odd_moves.minus(g_.corners),
                            even_moves & g_.corners, even_moves.minus(g_.corners)};
      int best = -kInfinity;
      for (const BB& group : groups) {
        for (BB m = group; m.any();) {
          const int p = m.lowest();
          m.reset(p);
          const BB flips = pos_.flips_of(own, opp, p);
          if (!flips.any()) continue;
          const int v = -shallow(opp ^ flips, own | flips | BB::single(p), -beta,
                                 -std::max(alpha, best), empties - 1, false);
          if (v > best) {
            best = v;
            if (best >= beta) return best;
          }
        }
      }
      if (best == -kInfinity) {  // no placement: pass, or the end if the opponent just passed
        if (passed) return own.count() - opp.count();
        return -shallow(opp, own, -beta, -alpha, empties, true);
      }
      return best;
    }

    // The last empty point `p`: the side to move fills it if it can, else the opponent if it
    // can, else it stays empty; then the count.
    int last(const BB& own, const BB& opp, int p) {
      count_node();
      const int mine = own.count(), theirs = opp.count();
      BB flips = pos_.flips_of(own, opp, p);
      if (flips.any()) {
        const int f = flips.count();
        return (mine + f + 1) - (theirs - f);
      }
      flips = pos_.flips_of(opp, own, p);
      if (flips.any()) {
        const int f = flips.count();
        return (mine - f) - (theirs + f + 1);
      }
      return mine - theirs;
    }

    const OthelloPosition& pos_;
    const Geometry& g_;
    SolveTable& table_;
    const int64_t max_nodes_;
    const bool timed_;
    const std::chrono::steady_clock::time_point deadline_;
    const uint64_t size_key_;  // the board size, mixed into table keys: sizes share the table
    int64_t nodes_ = 0;
    std::vector<Candidate> stack_;  // the candidates of every node on the current line
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
  m.def("clear_solve_table", [] { SolveTable::local().clear(); },
        "Empty this thread's endgame table, which solves otherwise keep and reuse: for timing a "
        "solve from scratch.");
}

}  // namespace saz
