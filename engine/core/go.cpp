// Go in the compiled core: Tromp-Taylor rules (area scoring, positional superko, no suicide) on
// every board from 2x2 to 25x25, rectangular too.
//
// The search plays, generates moves and takes them back at every node, so the representation is
// chosen for that:
//
// * **Bitboards** of one to ten 64-bit words (a template over the word count, `bits.hpp`): each
//   colour's stones, and per chain its stones and its liberties, so merging chains is an OR,
//   removing a liberty a bit reset and counting liberties a popcount.
// * **Chains.** Every stone knows its chain's root (`root_[p]`, one of the chain's stones); the
//   slots `stones_[root]` and `libs_[root]` hold the chain. A slot means something only while its
//   root's chain is on the board. A move touches the chains around it only.
// * **Undo.** `play` records the scalars and the slot of the chain the stone joins, journals the
//   old liberties of every other chain it changes and the chains it merged or captured; `undo`
//   puts them back and rebuilds the colours' stone sets. Nothing is allocated in steady state.
// * **Legal moves.** Superko aside, an empty point is legal when a neighbour is empty, or is our
//   stone in a chain with another liberty, or when the move captures (the point is the single
//   liberty of an opponent chain in atari): one bitboard dilation plus the capturing points. The
//   chains with one or two liberties are kept as a set of roots (`short_`) for this and for the
//   network's atari planes.
// * **Positional superko.** Earlier positions (stones only) are kept as Zobrist hashes grouped by
//   their number of stones. A move that captures nothing adds one stone, so it can only recreate a
//   position with one stone more than now: the check looks at those only (almost always none).
// * **Chain groups** for the network (`go_group_members`): the chains of encoded positions,
//   found by the same `Grid::for_each_chain` a position set up from stones builds its chains with.
// * **Ladders.** A chain with one or two liberties is read out as KataGo reads its "ladderable"
//   stones: the attacker ataris, the chain extends or captures an attacker's chain in atari
//   beside it, until the chain is taken or has three liberties; within a budget of moves. The
//   reader plays on the position itself with `play`'s own steps and takes every move back, so
//   legality (superko too) is the rules' own and nothing is copied.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "bits.hpp"

namespace saz {
namespace {

constexpr int kMinSize = 2;
constexpr int kMaxSize = 25;
// own, opponent, empty, legal, own_atari, opponent_atari, own_two_liberties,
// opponent_two_liberties, extra, komi (features version 1), then line_1 .. line_4 (version 2),
// then own_ladder, opponent_ladder, ladder_capture (version 3)
constexpr int kFeatures = 17;
constexpr int kLineFeature = 10;    // the plane of line 1; lines 2..kLines follow
constexpr int kLines = 4;           // lines 5 and beyond are all zeros: the centre of any board
constexpr int kLadderFeature = 14;  // own_ladder; opponent_ladder and ladder_capture follow
// Moves one ladder read may play before it gives up and calls the chain out (KataGo's answer
// too: a ladder it cannot finish reading is no ladder). A ladder across a 19x19 board is about
// 70 moves, and reading each atari from the wrong side, which lets the chain out, costs two more
// per step: 1000 reads any real ladder to its end and bounds the odd tangle of counter-ataris.
constexpr int kLadderBudget = 1000;
// The stones an opponent chain in atari must have for its capture to be urgent (see
// urgent_moves): beyond the one- and two-stone captures of ko and of everyday fighting, which the
// network judges.
constexpr int kUrgentStones = 3;
// Moves a ladder must run past the chaser's first atari before a breaker stops it for the search
// to leave that atari out (see broken_ladder_starts): the chain's extension and seven more steps.
// Shorter broken ladders are the network's to judge: GNU Go 3.8 at level 10 plays ataris that run
// up to 13 moves and then break (8 moves in 2,789 of its moves in our 9x9 and 13x13 records), and
// never a longer one.
constexpr int kLadderRun = 15;

// The Zobrist keys of one board size: per point for a black and a white stone, and for White to
// move. They come from the Python layer (engine/games/zobrist.py), so that a position hashes the
// same as it always has; positions of one size share them.
struct Keys {
  std::vector<uint64_t> black, white;
  uint64_t white_to_move = 0;
};

// What placing a stone would do, found before anything changes.
struct Effect {
  int own[4], n_own = 0;          // roots of our chains next to the point
  int enemies[4], n_enemies = 0;  // roots of opponent chains next to it
  int captured[4], n_captured = 0;
  uint64_t stone_hash = 0;
  int count = 0;  // stones on the board after the move
};

// A board size's shape as bitboards and the set operations the rules and the chain groups share:
// one step of dilation, flood fill, and the chains of a set of stones with their liberties.
template <int W>
struct Grid {
  using BB = Bits<W>;
  int width;
  BB full, not_first, not_last;  // every point; those not in the first column, the last column

  Grid(int width, int height) : width(width) {
    for (int p = 0; p < width * height; ++p) {
      full.set(p);
      if (p % width != 0) not_first.set(p);
      if (p % width != width - 1) not_last.set(p);
    }
  }

  // One word at a time, each output word from its input word and the two beside it: the
  // whole-board shifts (Bits::up/down) store a word array and read it back one word off,
  // which defeats store forwarding and made this the hot spot of move generation.
  BB dilate(const BB& m) const {
    const int w = width;  // 2..25, so both shifts below are in 1..63
    BB r;
    for (int i = 0; i < W; ++i) {
      const uint64_t cur = m.w[i];
      const uint64_t prev = i > 0 ? m.w[i - 1] : 0;
      const uint64_t next = i + 1 < W ? m.w[i + 1] : 0;
      const uint64_t left = (cur << 1) | (prev >> 63);   // from the point to the left
      const uint64_t right = (cur >> 1) | (next << 63);  // from the point to the right
      const uint64_t above = (cur << w) | (prev >> (64 - w));
      const uint64_t below = (cur >> w) | (next << (64 - w));
      r.w[i] = (left & not_first.w[i]) | (right & not_last.w[i]) | ((above | below) & full.w[i]);
    }
    return r;
  }
  BB flood(BB region, const BB& within) const {
    while (true) {
      BB grown = region | (dilate(region) & within);
      if (grown == region) return region;
      region = grown;
    }
  }

  // Every chain of the two colours' stones (`stones[0]`, `stones[1]`, disjoint), in the order of
  // their lowest points (row-major), as f(lowest point, colour index, chain, liberties): the
  // liberties are the chain's neighbours in `empty`. The one chain finder of Go: a position set
  // up from stones builds its chains with it, and so do the network's chain groups.
  // The flood is written out so that its last dilation, of the whole chain, gives the liberties.
  template <typename F>
  void for_each_chain(const BB (&stones)[2], const BB& empty, F f) const {
    BB rest = stones[0] | stones[1];
    while (rest.any()) {
      const int r = rest.lowest();
      const int c = stones[0].test(r) ? 0 : 1;
      BB chain = BB::single(r), around;
      while (true) {
        around = dilate(chain);
        const BB grown = chain | (around & stones[c]);
        if (grown == chain) break;
        chain = grown;
      }
      f(r, c, chain, around & empty);
      rest = rest.minus(chain);
    }
  }
};

template <int W>
class GoPosition final : public Position {
 public:
  using BB = Bits<W>;

  GoPosition(int width, int height, const std::vector<int>& black, const std::vector<int>& white,
             int to_move, double komi, std::shared_ptr<const Keys> keys)
      : Position(width, height), komi_(komi), keys_(std::move(keys)), grid_(width, height) {
    const int n = width * height;
    for (int p = 0; p < n; ++p) {
      int x = p % width, y = p / width, k = 0;
      if (x + 1 < width) nbrs_[p][k++] = p + 1;
      if (y + 1 < height) nbrs_[p][k++] = p + width;
      if (x > 0) nbrs_[p][k++] = p - 1;
      if (y > 0) nbrs_[p][k++] = p - width;
      num_nbrs_[p] = k;
      for (int i = 0; i < k; ++i) nbr_mask_[p].set(nbrs_[p][i]);
      const int line = std::min(std::min(x, width - 1 - x), std::min(y, height - 1 - y));
      if (line < kLines) line_[line].set(p);
    }
    color_.assign(n, EMPTY);
    root_.assign(n, 0);
    stones_.assign(n, BB());
    libs_.assign(n, BB());
    for (int p : black) occ_[0].set(p);
    for (int p : white) occ_[1].set(p);
    const BB empty = grid_.full ^ (occ_[0] | occ_[1]);
    grid_.for_each_chain(occ_, empty, [&](int r, int c, const BB& chain, const BB& lib) {
      const int me = c == 0 ? BLACK : WHITE;
      if (!lib.any())
        throw GameError(std::string("the ") + (me == BLACK ? "black" : "white") +
                        " chain at point " + std::to_string(r) + " has no liberty");
      chain.for_each([&](int q) {
        color_[q] = int8_t(me);
        root_[q] = int16_t(r);
      });
      stones_[r] = chain;
      libs_[r] = lib;
      if (lib.count() <= 2) short_.set(r);
    });
    to_move_ = to_move;
    stone_hash_ = 0;
    occ_[0].for_each([&](int p) { stone_hash_ ^= stone_key(BLACK, p); });
    occ_[1].for_each([&](int p) { stone_hash_ ^= stone_key(WHITE, p); });
    num_stones_ = (occ_[0] | occ_[1]).count();
    seen_.assign(n + 2, {});
    seen_[num_stones_].push_back(stone_hash_);
    history_.records.resize(2 * n + 16);
    journal_.reserve(4 * n + 64);
  }

  std::unique_ptr<Position> clone() const override { return std::make_unique<GoPosition>(*this); }
  int num_features() const override { return kFeatures; }
  int to_move() const override { return to_move_; }
  uint64_t hash() const override { return to_move_ == WHITE ? stone_hash_ ^ side_key() : stone_hash_; }
  int ply() const override { return history_.ply; }

  void board(int8_t* out) const override {
    for (int p = 0; p < num_points(); ++p) out[p] = color_[p];
  }

  void legal_moves(Moves& out) const override {
    out.clear();
    if (passes_ >= 2) return;
    legal_points().for_each([&](int p) { out.push_back(p); });
    out.push_back(pass_move());
  }

  int count_legal_moves() const override {
    return passes_ >= 2 ? 0 : legal_points().count() + 1;
  }

  // Every legal move but filling one of our own eyes, running from a working ladder and starting
  // a ladder that a breaker stops.
  // Under area scoring an eye is already our point, so filling it gains nothing and takes a
  // liberty the group may need to live: the network, trained on small boards, does it on large
  // ones until whole groups die (a model trained on 9x9 lost 20 games of 19x19 by the whole board
  // to GNU Go that way). Extending a chain in atari that a ladder captures all the same only
  // gives the opponent more stones (the network, seeing a few steps, plays the local extension
  // whatever lies at the ladder's end): see `doomed_extensions`. Starting a ladder that fails
  // lets the chain out and leaves the chaser cut behind it: see `broken_ladder_starts`. The pass
  // always stays, so a search left with only eyes to fill passes.
  void search_moves(Moves& out) const override {
    out.clear();
    if (passes_ >= 2) return;
    const BB legal = legal_points();
    const BB empty = grid_.full ^ (occ_[0] | occ_[1]);
    // Points whose every neighbour is our stone: no empty and no opponent point next to them.
    const BB surrounded = legal.minus(dilate(empty | occ(-to_move_)));
    GoPosition* self = const_cast<GoPosition*>(this);
    BB unsound = self->doomed_extensions(legal) | self->broken_ladder_starts(legal);
    // When nothing but these is legal, they stay: there is no better move to leave them for.
    if (!legal.minus(unsound).any()) unsound = BB();
    legal.for_each([&](int p) {
      if ((!surrounded.test(p) || !own_eye(p)) && !unsound.test(p)) out.push_back(p);
    });
    out.push_back(pass_move());
  }

  // The captures of opponent chains of kUrgentStones stones or more in atari: a swing of that
  // many stones and their points, which the network, trained where such chains seldom fall,
  // may give almost no prior (issue 65's big-group set: a seven-stone capture never visited).
  void urgent_moves(Moves& out) const override {
    out.clear();
    if (passes_ >= 2) return;
    BB captures;
    short_.for_each([&](int r) {
      if (color_[r] == -to_move_ && libs_[r].count() == 1 && stones_[r].count() >= kUrgentStones)
        captures |= libs_[r];
    });
    (captures & legal_points()).for_each([&](int p) { out.push_back(p); });
  }

  bool is_legal(int move) const override {
    if (move == pass_move()) return true;
    Effect e;
    return analyse(move, e) == nullptr;
  }

  void play(int move) override {
    const int n = num_points();
    if (move == n) {
      Record& r = push_record(move);
      r.root = -1;
      ++passes_;
    } else {
      Effect e;
      if (const char* why = analyse(move, e)) throw IllegalMove(move, why);
      place(move, e);
    }
    to_move_ = -to_move_;
    legal_valid_ = false;
  }

  void undo() override {
    if (history_.ply == 0) throw UndoError("no move to undo");
    const Record& r = history_.records[history_.ply - 1];
    const int mover = r.mover;
    if (r.move != num_points()) {
      seen_[num_stones_].pop_back();
      color_[r.move] = EMPTY;
      occ(mover).reset(r.move);
      for (int j = int(journal_.size()) - 1; j >= r.journal; --j) {
        const Slot& s = journal_[j];
        libs_[s.root] = s.libs;
      }
      journal_.resize(r.journal);
      stones_[r.root] = r.root_stones;
      libs_[r.root] = r.root_libs;
      for (int j = r.merged; j < int(merged_.size()); ++j) {
        const int root = merged_[j];
        stones_[root].for_each([&](int q) { root_[q] = int16_t(root); });
      }
      merged_.resize(r.merged);
      BB& theirs = occ(-mover);
      for (int j = r.captured; j < int(captured_.size()); ++j) {
        const int root = captured_[j];
        const BB& chain = stones_[root];
        theirs |= chain;
        chain.for_each([&](int q) {
          color_[q] = int8_t(-mover);
          root_[q] = int16_t(root);
        });
      }
      captured_.resize(r.captured);
    }
    to_move_ = mover;
    passes_ = r.passes;
    stone_hash_ = r.stone_hash;
    num_stones_ = r.num_stones;
    short_ = r.short_roots;
    captures_[0] = r.captures[0];
    captures_[1] = r.captures[1];
    --history_.ply;
    legal_valid_ = false;
  }

  void switch_turn() override {
    to_move_ = -to_move_;
    legal_valid_ = false;
  }

  bool is_over() const override { return passes_ >= 2; }

  int winner() const override {
    const double s = score();
    return s > 0 ? BLACK : s < 0 ? WHITE : DRAW;
  }

  void winning_moves(Moves& out) const override {
    // After the opponent's pass, passing ends the game: a win when the count favours us.
    out.clear();
    if (passes_ == 1 && score() * to_move_ > 0) out.push_back(pass_move());
  }

  void encode(float* out) const override {
    const int n = num_points();
    const int me = to_move_;
    const BB& mine = occ(me);
    const BB& theirs = occ(-me);
    const BB empty = grid_.full ^ (mine | theirs);
    const bool open = passes_ < 2;
    const BB legal = open ? legal_points() : BB();
    BB one, two;  // stones of chains with one liberty, with two
    short_.for_each([&](int r) {
      const int libs = libs_[r].count();
      if (libs == 1) one |= stones_[r];
      else if (libs == 2) two |= stones_[r];
    });
    BB laddered, starts;  // stones a ladder captures; our ataris that start a working ladder
    // The reads play on this position and take every move back (see read_ladders): a const
    // position that changes while it is encoded, so no two threads may share one (none do: each
    // search walks its own copy, and Python holds the GIL). A network of features version 2
    // does not read the ladder planes: no reads, the planes left zero.
    if (planes_read_ > kLadderFeature) const_cast<GoPosition*>(this)->read_ladders(laddered, starts);
    // Zeros everywhere, then a one per member of each plane's set: far fewer writes than a test
    // of every plane at every point.
    std::fill(out, out + (n + 1) * kFeatures, 0.0f);
    auto plane = [&](const BB& set, int f) { set.for_each([&](int p) { out[p * kFeatures + f] = 1.0f; }); };
    plane(mine, 0);
    plane(theirs, 1);
    plane(empty, 2);
    plane(legal, 3);
    plane(mine & one, 4);
    plane(theirs & one, 5);
    plane(mine & two, 6);
    plane(theirs & two, 7);
    for (int line = 0; line < kLines; ++line) plane(line_[line], kLineFeature + line);
    plane(mine & laddered, kLadderFeature);
    plane(theirs & laddered, kLadderFeature + 1);
    plane(starts, kLadderFeature + 2);
    float* extra = out + n * kFeatures;
    extra[3] = open;  // the pass
    extra[8] = 1.0f;
    extra[9] = float(-me * komi_ / n);  // komi helps White: positive when White is to move
  }

  // -- extras for the Python layer ---------------------------------------------------------------
  double komi() const { return komi_; }
  void set_komi(double komi) { komi_ = komi; }
  int passes() const { return passes_; }
  // After two passes, a controller may play on: the passes no longer end the game.
  void resume() {
    passes_ = 0;
    legal_valid_ = false;
  }
  int captures(int color) const { return captures_[color == BLACK ? 0 : 1]; }
  int liberties(int point) const {
    if (point < 0 || point >= num_points())
      throw GameError("point " + std::to_string(point) + " is off the board");
    return color_[point] == EMPTY ? 0 : libs_[root_[point]].count();
  }
  // Whether a ladder captures the chain on `point` (see read_ladders): in atari, its side moving
  // first; with two liberties, the attacker moving first; with more, never.
  bool ladder_captured(int point) {
    if (point < 0 || point >= num_points())
      throw GameError("point " + std::to_string(point) + " is off the board");
    if (color_[point] == EMPTY) throw GameError("point " + std::to_string(point) + " is empty");
    const int libs = libs_[root_[point]].count();
    if (libs > 2) return false;
    const KeepForRead keep(*this);
    int budget = kLadderBudget;
    to_move_ = libs == 1 ? color_[point] : -color_[point];
    return libs == 1 ? !ladder_escapes(point, budget) : ladder_takes(point, budget);
  }
  // Tromp-Taylor areas (black, white): stones plus the empty points that reach only that colour.
  std::tuple<int, int> areas() const {
    const auto [black, white] = owned();
    return {black.count(), white.count()};
  }
  // Who each point counts for under Tromp-Taylor scoring as the position stands: +1 Black,
  // -1 White, 0 neither (an empty point that reaches both colours, or none).
  std::vector<int8_t> owners() const {
    const auto [black, white] = owned();
    std::vector<int8_t> out(num_points(), 0);
    for (int p = 0; p < num_points(); ++p) out[p] = black.test(p) ? 1 : white.test(p) ? -1 : 0;
    return out;
  }
  double score() const {
    auto [b, w] = areas();
    return b - w - komi_;
  }

 private:
  // The points each colour owns by area: its stones plus the empty points that reach only it.
  std::pair<BB, BB> owned() const {
    const BB empty = grid_.full ^ (occ_[0] | occ_[1]);
    const BB reach_b = flood(occ_[0], occ_[0] | empty) & empty;
    const BB reach_w = flood(occ_[1], occ_[1] | empty) & empty;
    return {occ_[0] | reach_b.minus(reach_w), occ_[1] | reach_w.minus(reach_b)};
  }

  // The liberties of a chain before a move changed them (its stones stay as they were).
  struct Slot {
    int root;
    BB libs;
  };
  // What `undo` needs to take one move back: the scalars before it, the chain slot the new
  // stone joined (stones and liberties), and where its entries start in the three stacks.
  // The colours' stone sets are not kept: undo removes the stone and puts back the captured
  // chains, whose slots a capture leaves untouched.
  struct Record {
    int move, mover, passes, num_stones;
    uint64_t stone_hash;
    BB short_roots;
    int captures[2];
    int journal, merged, captured;
    int root;  // the new stone's chain slot (-1 for a pass)
    BB root_stones, root_libs;
  };

  // The moves played: the first `ply` records. The records above are kept for reuse, since a
  // vector zeroes each record it grows by, which cost a quarter of a move; a copy takes the
  // moves played only.
  struct History {
    std::vector<Record> records;
    int ply = 0;
    History() = default;
    History(const History& o) : records(o.records.begin(), o.records.begin() + o.ply), ply(o.ply) {}
    History& operator=(const History&) = delete;
  };

  Record& push_record(int move) {
    std::vector<Record>& records = history_.records;
    if (history_.ply == int(records.size())) records.resize(2 * records.size() + 16);
    Record& r = records[history_.ply++];
    r.move = move;
    r.mover = to_move_;
    r.passes = passes_;
    r.num_stones = num_stones_;
    r.stone_hash = stone_hash_;
    r.short_roots = short_;
    r.captures[0] = captures_[0];
    r.captures[1] = captures_[1];
    r.journal = int(journal_.size());
    r.merged = int(merged_.size());
    r.captured = int(captured_.size());
    return r;
  }

  uint64_t stone_key(int color, int p) const {
    return color == BLACK ? keys_->black[p] : keys_->white[p];
  }
  uint64_t side_key() const { return keys_->white_to_move; }

  const BB& occ(int color) const { return occ_[color == BLACK ? 0 : 1]; }
  BB& occ(int color) { return occ_[color == BLACK ? 0 : 1]; }

  BB dilate(const BB& m) const { return grid_.dilate(m); }
  BB flood(BB region, const BB& within) const { return grid_.flood(region, within); }

  // Why a stone of the side to move on `p` is illegal (nullptr: it is legal, and `e` says what
  // it would do).
  const char* analyse(int p, Effect& e) const {
    if (p < 0 || p >= num_points()) return "off the board";
    if (color_[p] != EMPTY) return "occupied point";
    const int me = to_move_;
    bool breathes = false;
    for (int i = 0; i < num_nbrs_[p]; ++i) {
      const int q = nbrs_[p][i];
      const int c = color_[q];
      if (c == EMPTY) {
        breathes = true;
        continue;
      }
      const int r = root_[q];
      if (c == me) {
        if (std::find(e.own, e.own + e.n_own, r) == e.own + e.n_own) {
          e.own[e.n_own++] = r;
          if (libs_[r].count() > 1) breathes = true;
        }
      } else if (std::find(e.enemies, e.enemies + e.n_enemies, r) == e.enemies + e.n_enemies) {
        e.enemies[e.n_enemies++] = r;
        if (libs_[r].count() == 1) e.captured[e.n_captured++] = r;
      }
    }
    if (!breathes && e.n_captured == 0) return "suicide";
    uint64_t h = stone_hash_ ^ stone_key(me, p);
    int count = num_stones_ + 1;
    for (int i = 0; i < e.n_captured; ++i) {
      const BB& gone = stones_[e.captured[i]];
      count -= gone.count();
      gone.for_each([&](int q) { h ^= stone_key(-me, q); });
    }
    const auto& same = seen_[count];
    if (std::find(same.begin(), same.end(), h) != same.end())
      return "positional superko: the position would repeat";
    e.stone_hash = h;
    e.count = count;
    return nullptr;
  }

  void place(int p, const Effect& e) {
    const int me = to_move_;
    Record& rec = push_record(p);
    const int first_slot = int(journal_.size());
    const BB empty = grid_.full ^ (occ_[0] | occ_[1]);
    color_[p] = int8_t(me);
    auto is_captured = [&](int r) {
      return std::find(e.captured, e.captured + e.n_captured, r) != e.captured + e.n_captured;
    };
    for (int i = 0; i < e.n_enemies; ++i) {
      const int r = e.enemies[i];
      if (is_captured(r)) continue;
      journal_.push_back(Slot{r, libs_[r]});
      libs_[r].reset(p);
    }
    // The new stone and our chains next to it become one chain, rooted at the largest.
    int root = p;
    if (e.n_own == 1) {
      root = e.own[0];
    } else if (e.n_own > 1) {
      root = e.own[0];
      for (int i = 1; i < e.n_own; ++i)
        if (stones_[e.own[i]].count() > stones_[root].count()) root = e.own[i];
    }
    rec.root = root;
    rec.root_stones = stones_[root];
    rec.root_libs = libs_[root];
    BB chain = BB::single(p), lib = nbr_mask_[p] & empty;
    for (int i = 0; i < e.n_own; ++i) {
      chain |= stones_[e.own[i]];
      lib |= libs_[e.own[i]];
    }
    lib.reset(p);
    stones_[root] = chain;
    libs_[root] = lib;
    root_[p] = int16_t(root);
    for (int i = 0; i < e.n_own; ++i) {
      const int r = e.own[i];
      if (r == root) continue;
      merged_.push_back(r);
      stones_[r].for_each([&](int q) { root_[q] = int16_t(root); });
    }
    // Captured stones leave the board; each becomes a liberty of our chains next to it.
    BB gone;
    for (int i = 0; i < e.n_captured; ++i) {
      const int r = e.captured[i];
      captured_.push_back(r);
      gone |= stones_[r];
    }
    if (e.n_captured) {
      gone.for_each([&](int q) { color_[q] = EMPTY; });
      gone.for_each([&](int q) {
        for (int i = 0; i < num_nbrs_[q]; ++i) {
          const int nb = nbrs_[q][i];
          if (color_[nb] == me) {
            const int r = root_[nb];
            if (!libs_[r].test(q)) {
              journal_.push_back(Slot{r, libs_[r]});
              libs_[r].set(q);
            }
          }
        }
      });
      captures_[me == BLACK ? 0 : 1] += gone.count();
    }
    occ(me).set(p);
    occ(-me) = occ(-me).minus(gone);
    // The chains short of liberties: drop the ones that changed or vanished, re-add changed ones.
    for (int i = 0; i < e.n_own; ++i) short_.reset(e.own[i]);
    for (int i = 0; i < e.n_captured; ++i) short_.reset(e.captured[i]);
    for (int j = first_slot; j < int(journal_.size()); ++j) {
      const int r = journal_[j].root;
      if (libs_[r].count() <= 2) short_.set(r);
      else short_.reset(r);
    }
    if (libs_[root].count() <= 2) short_.set(root);
    else short_.reset(root);
    stone_hash_ = e.stone_hash;
    num_stones_ = e.count;
    seen_[e.count].push_back(e.stone_hash);
    passes_ = 0;
  }

  // Whether `p`, a legal point whose neighbours are all ours, is our eye (the usual test of Go
  // programs' playouts): the opponent holds none of its diagonal points at the edge, at most one
  // inside. Then the diagonals not the opponent's are ours or empty, so every chain around `p`
  // has another liberty or all of them are one chain with `p` its last liberty, whose filling
  // would be suicide: filling an eye never saves a chain in atari.
  bool own_eye(int p) const {
    const int x = p % width_, y = p / width_;
    int theirs = 0, off_board = 0;
    for (int dy = -1; dy <= 1; dy += 2) {
      for (int dx = -1; dx <= 1; dx += 2) {
        const int u = x + dx, v = y + dy;
        if (u < 0 || v < 0 || u >= width_ || v >= height_) ++off_board;
        else if (color_[v * width_ + u] == -to_move_) ++theirs;
      }
    }
    return theirs < (off_board > 0 ? 1 : 2);
  }

  // The legal points (pass not included) for the side to move; cached until the position
  // changes. See the header: one dilation plus the capturing points, then superko.
  BB legal_points() const {
    if (legal_valid_) return legal_;
    const int me = to_move_;
    BB weak;  // our stones in atari: they give no liberty to a stone played next to them
    BB capturing;
    short_.for_each([&](int r) {
      if (libs_[r].count() != 1) return;
      if (color_[r] == me) weak |= stones_[r];
      else capturing |= libs_[r];
    });
    const BB empty = grid_.full ^ (occ_[0] | occ_[1]);
    BB legal = empty & (dilate(empty | occ(me).minus(weak)) | capturing);
    // Positional superko: a non-capturing move adds a stone, so only positions with one stone
    // more can recur; each capturing move is checked in full.
    const int count = num_stones_;
    if (!seen_[count + 1].empty()) {
      for (uint64_t h : seen_[count + 1]) {
        const uint64_t k = h ^ stone_hash_;
        empty.minus(capturing).for_each([&](int p) {
          if (stone_key(me, p) == k) legal.reset(p);
        });
      }
    }
    capturing.for_each([&](int p) {
      Effect e;
      if (analyse(p, e) != nullptr) legal.reset(p);
    });
    legal_ = legal;
    legal_valid_ = true;
    return legal;
  }

  // -- ladders ---------------------------------------------------------------------------------
  // A ladder read, KataGo's (Board::searchIsLadderCaptured): the attacker plays either liberty
  // of a chain with two; the chain, in atari, plays its liberty or captures an attacker's chain
  // in atari beside it. The chain is taken with one liberty at the attacker's turn, and out with
  // three, or with two at its own turn (a capture that gave it room). Moves are tried in point
  // order; each costs one of `budget`, and a read that runs out calls the chain out. The moves are
  // played on this position by `play`'s steps and taken back by `undo`, so a read leaves the
  // position as it found it (the legal-move cache aside: the callers keep it with KeepForRead).

  // What a ladder read changes and must give back on the position it reads: the side to move
  // (a read sets whose turn it is) and the legal-move cache (each move it plays and takes back
  // clears it, though the position after the read is the one cached). Restored on scope exit.
  struct KeepForRead {
    GoPosition& pos;
    const int to_move;
    const BB legal;
    const bool valid;
    explicit KeepForRead(GoPosition& p)
        : pos(p), to_move(p.to_move_), legal(p.legal_), valid(p.legal_valid_) {}
    ~KeepForRead() {
      pos.to_move_ = to_move;
      pos.legal_ = legal;
      pos.legal_valid_ = valid;
    }
  };

  // The side to move plays `p` if the rules allow it (superko included): a reader's move.
  bool ladder_step(int p, int& budget) {
    Effect e;
    if (analyse(p, e) != nullptr) return false;
    place(p, e);
    to_move_ = -to_move_;
    legal_valid_ = false;
    --budget;
    return true;
  }

  // Whether one of `moves` that the side to move may play makes `holds()` true, each read from
  // the position after it and taken back: one ply of the ladder reader's search.
  // Each move read counts into the read's depth, and the deepest line read into `ladder_reach_`:
  // how far the ladder ran (see broken_ladder_starts).
  template <class Holds>
  bool ladder_some(BB moves, int& budget, Holds&& holds) {
    for (BB rest = moves; rest.any();) {
      const int p = rest.lowest();
      rest.reset(p);
      if (!ladder_step(p, budget)) continue;
      ladder_reach_ = std::max(ladder_reach_, ++ladder_depth_);
      const bool yes = holds();
      --ladder_depth_;
      undo();
      if (yes) return true;
    }
    return false;
  }

  // The attacker (the opponent of the chain on `stone`) to move: whether its ataris take it.
  bool ladder_takes(int stone, int& budget) {
    const BB libs = libs_[root_[stone]];
    const int count = libs.count();
    if (count <= 1) return true;
    if (count >= 3 || budget <= 0) return false;
    return ladder_some(libs, budget, [&] { return !ladder_escapes(stone, budget); });
  }

  // The chain on `stone` to move, in atari: whether it gets out by running (its liberty) or by
  // capturing an attacker's chain in atari beside it.
  bool ladder_escapes(int stone, int& budget) {
    const int root = root_[stone];
    if (libs_[root].count() >= 2 || budget <= 0) return true;
    BB moves = libs_[root];
    const BB around = dilate(stones_[root]);
    const int attacker = -color_[root];
    short_.for_each([&](int r) {
      if (color_[r] == attacker && libs_[r].count() == 1 && (stones_[r] & around).any())
        moves |= libs_[r];
    });
    return ladder_some(moves, budget, [&] { return !ladder_takes(stone, budget); });
  }

  // The ladder planes' sets (see encode): into `laddered` the stones of every chain with one or
  // two liberties that a ladder captures, the attacker being the side that moves next for that
  // chain whoever is to move (in atari: the chain's side first; two liberties: the attacker
  // first); into `starts` our ataris on the opponent's two-liberty chains that capture by ladder.
  // Each read has its own budget.
  void read_ladders(BB& laddered, BB& starts) {
    const KeepForRead keep(*this);
    const int mover = to_move_;
    const BB roots = short_;  // the reads change short_ as they go, and restore it
    roots.for_each([&](int r) {
      const int color = color_[r];
      int budget = kLadderBudget;
      if (libs_[r].count() == 1) {
        to_move_ = color;
        if (!ladder_escapes(r, budget)) laddered |= stones_[r];
        return;
      }
      to_move_ = -color;
      if (color == mover) {
        if (ladder_takes(r, budget)) laddered |= stones_[r];
        return;
      }
      // The opponent's chain: which of our two ataris works, each read on its own budget.
      bool taken = false;
      for (BB rest = libs_[r]; rest.any();) {
        const int p = rest.lowest();
        rest.reset(p);
        budget = kLadderBudget;
        if (!ladder_step(p, budget)) continue;
        if (!ladder_escapes(r, budget)) {
          starts.set(p);
          taken = true;
        }
        undo();
      }
      if (taken) laddered |= stones_[r];
    });
  }

  // Our extensions that run into a working ladder, among the `legal` points: each liberty of our
  // chains in atari where the stone captures nothing and leaves the chain (the stone's, with
  // whatever it joins) to a ladder: one liberty, or two and the opponent's ataris take it. A
  // capture stays (it is the other way out of a ladder, and the reader counts it so).
  BB doomed_extensions(const BB& legal) {
    BB runs;
    short_.for_each([&](int r) {
      if (color_[r] == to_move_ && libs_[r].count() == 1) runs |= libs_[r];
    });
    runs &= legal;
    if (!runs.any()) return runs;
    const KeepForRead keep(*this);
    BB doomed;
    runs.for_each([&](int p) {
      Effect e;
      if (analyse(p, e) != nullptr || e.n_captured > 0) return;
      int budget = kLadderBudget;
      place(p, e);
      to_move_ = -to_move_;
      if (ladder_takes(p, budget)) doomed.set(p);
      undo();
    });
    return doomed;
  }

  // Our ataris that start a ladder a breaker stops, among the `legal` points: on an opponent
  // chain with two liberties, an atari that captures nothing, ataris no other chain and joins no
  // chain of ours in atari (a move that does only the atari), after which the chain runs at least
  // kLadderRun moves down the ladder and gets out, the read finished within its budget. Such an
  // atari drives the chain along to the breaker and leaves the chaser's stones behind it cut:
  // the network, seeing a few steps, plays it as if the ladder worked (issue 65's ladder set).
  // A short run (the chain connects out at once or after a few steps) stays.
  BB broken_ladder_starts(const BB& legal) {
    BB chased;
    short_.for_each([&](int r) {
      if (color_[r] == -to_move_ && libs_[r].count() == 2) chased |= libs_[r];
    });
    chased &= legal;
    BB broken;
    if (!chased.any()) return broken;
    const KeepForRead keep(*this);
    const int mover = to_move_;
    chased.for_each([&](int p) {
      Effect e;
      if (analyse(p, e) != nullptr || e.n_captured > 0) return;
      for (int k = 0; k < e.n_own; ++k)
        if (libs_[e.own[k]].count() == 1) return;  // it saves a chain of ours as well
      int target = -1, ataris = 0;
      for (int k = 0; k < e.n_enemies; ++k) {
        const int r = e.enemies[k];
        if (libs_[r].count() == 2) {
          target = r;
          ++ataris;
        }
      }
      if (ataris != 1) return;  // a double atari is more than a ladder
      int budget = kLadderBudget;
      place(p, e);
      to_move_ = -mover;
      ladder_depth_ = ladder_reach_ = 0;
      const bool out = ladder_escapes(target, budget);
      if (out && budget > 0 && ladder_reach_ >= kLadderRun) broken.set(p);
      undo();
    });
    return broken;
  }

  double komi_;
  std::shared_ptr<const Keys> keys_;
  Grid<W> grid_;
  // The points of the first kLines lines from the edge. A GIN layer sees one step further, so
  // the network can tell how far the edge is only within its depth; these planes tell every
  // point, on 19x19 as on the 9x9 boards it trained on.
  BB line_[kLines];
  int nbrs_[kMaxSize * kMaxSize][4];
  int num_nbrs_[kMaxSize * kMaxSize];
  BB nbr_mask_[kMaxSize * kMaxSize];
  std::vector<int8_t> color_;
  std::vector<int16_t> root_;
  std::vector<BB> stones_, libs_;
  BB occ_[2];  // black, white
  BB short_;   // roots of the chains with one or two liberties
  int to_move_ = BLACK;
  int passes_ = 0;
  int captures_[2] = {0, 0};  // stones captured by black, by white
  uint64_t stone_hash_ = 0;
  int num_stones_ = 0;
  std::vector<std::vector<uint64_t>> seen_;  // earlier positions' stone hashes by stone count
  History history_;
  std::vector<Slot> journal_;
  std::vector<int> merged_, captured_;
  mutable BB legal_;
  mutable bool legal_valid_ = false;
  // A ladder read's depth in moves, and the deepest it has gone (see ladder_some).
  int ladder_depth_ = 0, ladder_reach_ = 0;
};

// UnsupportedSize (a ValueError in Python) unless both sides are 2..25.
void check_size(int width, int height) {
  if (width < kMinSize || width > kMaxSize || height < kMinSize || height > kMaxSize)
    throw UnsupportedSize("Go board " + std::to_string(width) + "x" + std::to_string(height) +
                          " is not supported: each side must be 2..25");
}

// The 64-bit words of the bitboards for `n` points: the fewest of the widths instantiated.
int words_for(int n) {
  const int need = (n + 63) / 64;
  return need <= 2 ? need : need <= 4 ? 4 : need <= 6 ? 6 : 10;
}

std::unique_ptr<Position> make_go(int width, int height, const std::vector<int>& black,
                                  const std::vector<int>& white, int to_move, double komi,
                                  const std::vector<uint64_t>& black_keys,
                                  const std::vector<uint64_t>& white_keys,
                                  uint64_t white_to_move_key) {
  check_size(width, height);
  const int n = width * height;
  for (const auto* points : {&black, &white})
    for (int p : *points)
      if (p < 0 || p >= n) throw GameError("a stone off the board: " + std::to_string(p));
  if (to_move != BLACK && to_move != WHITE) throw GameError("to_move must be BLACK or WHITE");
  if (int(black_keys.size()) != n || int(white_keys.size()) != n)
    throw GameError("Go needs one Zobrist key per point and colour");
  auto keys = std::make_shared<Keys>(Keys{black_keys, white_keys, white_to_move_key});
  switch (words_for(n)) {
    case 1: return std::make_unique<GoPosition<1>>(width, height, black, white, to_move, komi, keys);
    case 2: return std::make_unique<GoPosition<2>>(width, height, black, white, to_move, komi, keys);
    case 4: return std::make_unique<GoPosition<4>>(width, height, black, white, to_move, komi, keys);
    case 6: return std::make_unique<GoPosition<6>>(width, height, black, white, to_move, komi, keys);
    default:
      return std::make_unique<GoPosition<10>>(width, height, black, white, to_move, komi, keys);
  }
}

// The chain groups of `batch` encoded positions (rows [n + 1, features], planes 0 and 1 the side
// to move's and the opponent's stones) into `out` [batch, n, 4]: see go_group_members below.
// Returns -1, or the first point b * n + p that holds stones of both colours.
template <int W>
int64_t group_members(const float* x, size_t batch, int width, int height, size_t features,
                      int32_t* out) {
  using BB = Bits<W>;
  const Grid<W> grid(width, height);
  const size_t n = size_t(width) * height;
  uint8_t filled[kMaxSize * kMaxSize];  // entries written so far in each empty point's row
  for (size_t b = 0; b < batch; ++b) {
    const float* rows = x + b * (n + 1) * features;
    BB stones[2];
    for (size_t p = 0; p < n; ++p) {
      const float* row = rows + p * features;
      stones[0].w[p >> 6] |= uint64_t(row[0] > 0.5f) << (p & 63);
      stones[1].w[p >> 6] |= uint64_t(row[1] > 0.5f) << (p & 63);
    }
    const BB both = stones[0] & stones[1];
    if (both.any()) return int64_t(b * n) + both.lowest();
    int32_t* o = out + b * n * 4;
    std::fill(o, o + 4 * n, -1);
    std::fill(filled, filled + n, uint8_t(0));
    // Chains come by lowest point, so slots ascend and each row's entries come out sorted.
    int32_t slot = 0;
    grid.for_each_chain(stones, grid.full ^ (stones[0] | stones[1]),
                        [&](int, int, const BB& chain, const BB& libs) {
                          chain.for_each([&](int q) { o[4 * q] = 2 * slot; });
                          libs.for_each([&](int q) { o[4 * q + filled[q]++] = 2 * slot + 1; });
                          ++slot;
                        });
  }
  return -1;
}

using Planes = nb::ndarray<const float, nb::ndim<3>, nb::c_contig, nb::device::cpu>;
using Members = nb::ndarray<nb::numpy, int32_t, nb::ndim<3>>;

Members go_group_members(Planes x, int width, int height) {
  check_size(width, height);
  const size_t n = size_t(width) * height, batch = x.shape(0), features = x.shape(2);
  if (x.shape(1) != n + 1)
    throw nb::value_error(("go_group_members: x has " + std::to_string(x.shape(1)) +
                           " nodes, a " + std::to_string(width) + "x" + std::to_string(height) +
                           " board has width * height + 1 = " + std::to_string(n + 1))
                              .c_str());
  if (features < 2)
    throw nb::value_error(("go_group_members: x has " + std::to_string(features) +
                           " features, it needs planes 0 (own) and 1 (opponent)")
                              .c_str());
  auto* data = new int32_t[std::max<size_t>(batch * n * 4, 1)];
  nb::capsule owner(data, [](void* q) noexcept { delete[] static_cast<int32_t*>(q); });
  int64_t both;
  {
    nb::gil_scoped_release release;
    const float* in = x.data();
    switch (words_for(int(n))) {
      case 1: both = group_members<1>(in, batch, width, height, features, data); break;
      case 2: both = group_members<2>(in, batch, width, height, features, data); break;
      case 4: both = group_members<4>(in, batch, width, height, features, data); break;
      case 6: both = group_members<6>(in, batch, width, height, features, data); break;
      default: both = group_members<10>(in, batch, width, height, features, data); break;
    }
  }
  if (both >= 0)
    throw nb::value_error(("go_group_members: position " + std::to_string(both / int64_t(n)) +
                           ", point " + std::to_string(both % int64_t(n)) +
                           " has both an own and an opponent stone (planes 0 and 1 > 0.5)")
                              .c_str());
  return Members(data, {batch, n, 4}, owner);
}

template <int W>
void bind_words(nb::module_& m, const char* name) {
  using P = GoPosition<W>;
  nb::class_<P, Position>(m, name)
      .def_prop_rw("komi", &P::komi, &P::set_komi)
      .def_prop_ro("passes", &P::passes)
      .def("resume", &P::resume)
      .def("captures", &P::captures, nb::arg("color"))
      .def("liberties", &P::liberties, nb::arg("point"))
      .def("ladder_captured", &P::ladder_captured, nb::arg("point"),
           "Whether a ladder captures the chain on `point`: in atari, its side moving first; with "
           "two liberties, the attacker moving first; with more, False. GameError for an empty "
           "point or one off the board.")
      .def("areas", &P::areas)
      .def("owners", &P::owners)
      .def("score", &P::score);
}

}  // namespace

void bind_go(nb::module_& m) {
  bind_words<1>(m, "Go64");
  bind_words<2>(m, "Go128");
  bind_words<4>(m, "Go256");
  bind_words<6>(m, "Go384");
  bind_words<10>(m, "Go640");
  m.def("new_go", &make_go, nb::arg("width"), nb::arg("height"), nb::arg("black"),
        nb::arg("white"), nb::arg("to_move"), nb::arg("komi"), nb::arg("black_keys"),
        nb::arg("white_keys"), nb::arg("white_to_move_key"),
        "A Go position with these stones (point lists), side to move, komi and Zobrist keys; its "
        "class holds the fewest 64-bit words that cover the board. GameError for a chain "
        "without liberty.");
  m.def("go_group_members", &go_group_members, nb::arg("x"), nb::arg("width"), nb::arg("height"),
        "The chain groups of encoded Go positions x [B, width*height + 1, F] (F >= 2; plane 0 "
        "own stones, 1 opponent stones, > 0.5 a stone) as int32 [B, width*height, 4]: per point "
        "its entries slot * 2 + role, ascending, padded with -1. A stone: its chain's slot, role "
        "0. An empty point: role 1 for each chain it is a liberty of. The slots of a position "
        "are 0..G-1, its chains by lowest point. ValueError for bad shapes or sizes.");
}

}  // namespace saz
