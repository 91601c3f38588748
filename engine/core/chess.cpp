// Chess in the compiled core: the standard 8x8 game and the small boards of the same family,
// Gardner's 5x5 and Los Alamos 6x6, as Fairy-Stockfish defines them.
//
// A position is bitboards over an 8-wide internal layout (bit i = 8 * y + x, y = 0 the top row,
// which is Black's back rank): one per piece type and one per colour, plus a mailbox of piece
// types. A smaller board uses the top-left corner of the layout; its attack tables (built once
// per board size, `Geometry`) stop at its edges, so nothing ever moves off it. The interface's
// squares are y * width + x (`ext`), converted at the edges of the class only.
//
// Move generation is legal, not pseudo-legal: the checkers and pinned pieces are found first,
// a check restricts every move but the king's to the checking line, a pinned piece moves along
// its pin only, a king steps onto squares no enemy attacks with the king itself taken off the
// board (so it does not hide behind itself from a slider), double check leaves the king moves,
// and the rare en passant capture is tested by playing it on the occupancy. Sliding attacks are
// the classical approach: an empty-board ray per direction, cut at its first blocker by a bit
// scan. En passant is remembered only when a capture is legal, so the FEN, the Zobrist hash and
// the repetition count see the same position python-chess does.
//
// The interface's moves: `from * P + to` for every move (queen promotions included; castling is
// the king's two-square step, e1g1), and for underpromotions `P * P + (from_x * 3 + (to_x -
// from_x + 1)) * 3 + (piece - 2)` (knight 2, bishop 3, rook 4), the ranks implied by the side to
// move. The policy index is the move in the side to move's frame (the board flipped for Black).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "bindings.hpp"

namespace saz {
namespace {

enum PieceType : int8_t { NO_PIECE = 0, PAWN = 1, KNIGHT = 2, BISHOP = 3, ROOK = 4, QUEEN = 5, KING = 6 };
constexpr int kWhite = 0, kBlack = 1;  // internal colour indices; White moves first
constexpr int kFeatures = 21;
constexpr uint64_t kZobristTag = 0xC4E55;
constexpr int kMaxMoves = 256;

// Castling rights: bits of `castling_`.
constexpr uint8_t kWhiteKing = 1, kWhiteQueen = 2, kBlackKing = 4, kBlackQueen = 8;

// Why a game ended (`termination()`); the Python layer's Termination names them.
enum Termination : int { ONGOING = 0, CHECKMATE = 1, STALEMATE = 2, REPETITION = 3,
                         FIFTY_MOVES = 4, INSUFFICIENT_MATERIAL = 5 };

inline int lsb(uint64_t b) { return __builtin_ctzll(b); }
inline int msb(uint64_t b) { return 63 - __builtin_clzll(b); }
inline int popcount(uint64_t b) { return __builtin_popcountll(b); }
inline int pop_lsb(uint64_t& b) {
  int s = lsb(b);
  b &= b - 1;
  return s;
}
inline uint64_t bit(int s) { return uint64_t(1) << s; }

// An internal move: from and to (internal squares), the promotion piece, and its kind.
enum MoveKind : int { NORMAL = 0, DOUBLE_STEP = 1, EN_PASSANT = 2, CASTLE = 3 };
using Move = uint32_t;
inline Move make_move(int from, int to, int promo = 0, int kind = NORMAL) {
  return Move(from | (to << 6) | (promo << 12) | (kind << 15));
}
inline int move_from(Move m) { return m & 63; }
inline int move_to(Move m) { return (m >> 6) & 63; }
inline int move_promo(Move m) { return (m >> 12) & 7; }
inline int move_kind(Move m) { return (m >> 15) & 3; }

struct MoveList {
  Move moves[kMaxMoves];
  int size = 0;
  void add(Move m) { moves[size++] = m; }
};

// A rule variant: the board, the start, and the rules that differ.
struct Variant {
  const char* name;
  int width, height;
  const char* start_fen;
  bool double_step;  // pawns may advance two squares from their start rank (and en passant)
  bool castling;
  bool bishops;  // the variant has bishops (Los Alamos has none)
  uint8_t promotions;  // bit per piece type a pawn may promote to
};

constexpr uint8_t kPromoAll = (1 << KNIGHT) | (1 << BISHOP) | (1 << ROOK) | (1 << QUEEN);
constexpr Variant kVariants[] = {
    {"chess", 8, 8, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", true, true, true,
     kPromoAll},
    {"gardner", 5, 5, "rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1", false, false, true, kPromoAll},
    {"losalamos", 6, 6, "rnqknr/pppppp/6/6/PPPPPP/RNQKNR w - - 0 1", false, false, false,
     (1 << KNIGHT) | (1 << ROOK) | (1 << QUEEN)},
};

const Variant& find_variant(const std::string& name) {
  for (const Variant& v : kVariants)
    if (name == v.name) return v;
  std::string known;
  for (const Variant& v : kVariants) known += std::string(known.empty() ? "" : ", ") + v.name;
  throw UnsupportedRule("unknown chess variant '" + name + "'; expected one of " + known);
}

// Directions over the internal layout: N NE E SE S SW W NW (north = towards y = 0). The
// positive ones (E SE S SW) find their first blocker with the lowest bit, the others the highest.
constexpr int kDx[8] = {0, 1, 1, 1, 0, -1, -1, -1};
constexpr int kDy[8] = {-1, -1, 0, 1, 1, 1, 0, -1};
constexpr bool kPositive[8] = {false, false, true, true, true, true, false, false};

// The attack tables of one board size.
struct Geometry {
  int width, height;
  uint64_t board = 0;                 // the squares on the board
  uint64_t knight[64], king[64];
  uint64_t pawn[2][64];               // squares a pawn of each colour attacks
  uint64_t ray[8][64];                // to the edge, the square itself excluded
  uint64_t rook_empty[64], bishop_empty[64];
  uint64_t between[64][64];           // strictly between two aligned squares, else 0
  uint64_t line[64][64];              // the whole line through two aligned squares, else 0
  uint64_t light = 0;                 // the light squares (a square's colour, for bishops)
  int castle_mask[64];                // the castling rights a move from or to the square keeps

  Geometry(int w, int h) : width(w), height(h) {
    auto on = [&](int x, int y) { return x >= 0 && x < w && y >= 0 && y < h; };
    std::memset(ray, 0, sizeof ray);
    std::memset(between, 0, sizeof between);
    std::memset(line, 0, sizeof line);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const int s = 8 * y + x;
        board |= bit(s);
        // a1 is dark: a1 is (0, h - 1), so light squares have x + (h - 1 - y) odd.
        if ((x + (h - 1 - y)) & 1) light |= bit(s);
        knight[s] = king[s] = pawn[0][s] = pawn[1][s] = 0;
        static const int kn[8][2] = {{1, 2}, {2, 1}, {2, -1}, {1, -2},
                                     {-1, -2}, {-2, -1}, {-2, 1}, {-1, 2}};
        for (auto& d : kn)
          if (on(x + d[0], y + d[1])) knight[s] |= bit(8 * (y + d[1]) + x + d[0]);
        for (int d = 0; d < 8; ++d) {
          if (on(x + kDx[d], y + kDy[d])) king[s] |= bit(8 * (y + kDy[d]) + x + kDx[d]);
          for (int k = 1; on(x + k * kDx[d], y + k * kDy[d]); ++k)
            ray[d][s] |= bit(8 * (y + k * kDy[d]) + x + k * kDx[d]);
        }
        for (int dx : {-1, 1}) {
          if (on(x + dx, y - 1)) pawn[kWhite][s] |= bit(8 * (y - 1) + x + dx);
          if (on(x + dx, y + 1)) pawn[kBlack][s] |= bit(8 * (y + 1) + x + dx);
        }
      }
    for (int s = 0; s < 64; ++s) {
      rook_empty[s] = bishop_empty[s] = 0;
      castle_mask[s] = 15;
      if (!(board & bit(s))) continue;
      for (int d = 0; d < 8; ++d) (d % 2 ? bishop_empty : rook_empty)[s] |= ray[d][s];
      for (int d = 0; d < 8; ++d) {
        uint64_t r = ray[d][s];
        while (r) {
          int t = pop_lsb(r);
          between[s][t] = ray[d][s] & ray[(d + 4) % 8][t];
          line[s][t] = ray[d][s] | ray[(d + 4) % 8][s] | bit(s);
        }
      }
    }
    if (w == 8 && h == 8) {  // the standard game's king and rook squares
      castle_mask[60] = 15 & ~(kWhiteKing | kWhiteQueen);
      castle_mask[63] = 15 & ~kWhiteKing;
      castle_mask[56] = 15 & ~kWhiteQueen;
      castle_mask[4] = 15 & ~(kBlackKing | kBlackQueen);
      castle_mask[7] = 15 & ~kBlackKing;
      castle_mask[0] = 15 & ~kBlackQueen;
    }
  }

  template <int D>
  uint64_t ray_attack(int s, uint64_t occ) const {
    uint64_t a = ray[D][s], b = a & occ;
    if (b) a ^= ray[D][kPositive[D] ? lsb(b) : msb(b)];
    return a;
  }
  uint64_t rook(int s, uint64_t occ) const {
    return ray_attack<0>(s, occ) | ray_attack<2>(s, occ) | ray_attack<4>(s, occ) |
           ray_attack<6>(s, occ);
  }
  uint64_t bishop(int s, uint64_t occ) const {
    return ray_attack<1>(s, occ) | ray_attack<3>(s, occ) | ray_attack<5>(s, occ) |
           ray_attack<7>(s, occ);
  }
};

const Geometry& geometry(int width, int height) {
  static const Geometry g8(8, 8), g5(5, 5), g6(6, 6);
  if (width == 8) return g8;
  if (width == 6) return g6;
  return g5;
}

// Zobrist keys: a piece of each colour and type on each internal square, Black to move,
// the castling rights (a key per combination) and the en passant file.
struct Keys {
  uint64_t piece[2][7][64];
  uint64_t black;
  uint64_t castling[16];
  uint64_t ep[8];
};
Keys make_keys() {
  Keys k{};
  for (int c = 0; c < 2; ++c)
    for (int t = 0; t < 7; ++t)
      for (int s = 0; s < 64; ++s) k.piece[c][t][s] = zobrist_key(kZobristTag, (c * 7 + t) * 64 + s);
  k.black = zobrist_key(kZobristTag, 1000);
  uint64_t rights[4];
  for (int i = 0; i < 4; ++i) rights[i] = zobrist_key(kZobristTag, 1001 + i);
  for (int m = 0; m < 16; ++m) {
    k.castling[m] = 0;
    for (int i = 0; i < 4; ++i)
      if (m & (1 << i)) k.castling[m] ^= rights[i];
  }
  for (int x = 0; x < 8; ++x) k.ep[x] = zobrist_key(kZobristTag, 1010 + x);
  return k;
}
const Keys kKeys = make_keys();

const char kPieceChars[] = " pnbrqk";

class ChessPosition final : public Position {
 public:
  ChessPosition(const Variant& variant, const std::string& fen)
      : Position(variant.width, variant.height), v_(&variant),
        g_(&geometry(variant.width, variant.height)) {
    set_fen(fen);
  }

  std::unique_ptr<Position> clone() const override {
    return std::make_unique<ChessPosition>(*this);
  }

  // -- the interface ------------------------------------------------------------------------------
  int num_features() const override { return kFeatures; }
  int to_move() const override { return side_ == kWhite ? WHITE : BLACK; }
  uint64_t hash() const override { return hash_; }
  int ply() const override { return int(history_.size()); }

  void board(int8_t* out) const override {
    for (int s = 0; s < num_points(); ++s) {
      const int i = internal(s);
      const int t = types_[i];
      out[s] = t == NO_PIECE ? 0 : int8_t((colors_[kWhite] & bit(i) ? WHITE : BLACK) * t);
    }
  }

  void legal_moves(Moves& out) const override {
    out.clear();
    MoveList list;
    generate(list);
    if (status(list) != ONGOING) return;
    for (int i = 0; i < list.size; ++i) out.push_back(external(list.moves[i]));
    std::sort(out.begin(), out.end());
  }

  int count_legal_moves() const override {
    MoveList list;
    generate(list);
    return status(list) == ONGOING ? list.size : 0;
  }

  bool is_legal(int move) const override {
    MoveList list;
    generate(list);
    return status(list) == ONGOING && find(move, list) != 0;
  }

  void play(int move) override {
    MoveList list;
    generate(list);
    if (status(list) != ONGOING) throw IllegalMove(move, "the game is over");
    Move m = find(move, list);
    if (!m) throw IllegalMove(move, illegal_reason(move));
    make(m);
  }

  void undo() override {
    if (history_.empty()) throw UndoError("no move to undo");
    unmake();
  }

  void switch_turn() override {
    // A null move: the other side moves, with no en passant capture (it was this side's). Not
    // out of check: the other side would take the king.
    if (checkers()) throw GameError("the side to move is in check: the turn cannot pass");
    if (ep_ >= 0) hash_ ^= kKeys.ep[ep_ & 7];
    ep_ = -1;
    side_ ^= 1;
    hash_ ^= kKeys.black;
  }

  bool is_over() const override { return termination() != ONGOING; }

  int winner() const override {
    // Only checkmate decides a game; every other end is a draw.
    return termination() == CHECKMATE ? (side_ == kWhite ? BLACK : WHITE) : DRAW;
  }

  void winning_moves(Moves& out) const override {
    // Mates in one: among the legal moves, those that give check and leave no reply.
    out.clear();
    MoveList list;
    generate(list);
    if (status(list) != ONGOING) return;
    ChessPosition& self = const_cast<ChessPosition&>(*this);  // restored before returning
    for (int i = 0; i < list.size; ++i) {
      const Move m = list.moves[i];
      if (!gives_check(m)) continue;
      self.make(m);
      MoveList replies;
      self.generate(replies);
      self.unmake();
      if (replies.size == 0) out.push_back(external(m));
    }
    std::sort(out.begin(), out.end());
  }

  int num_empty() const override { return num_points() - popcount(colors_[0] | colors_[1]); }

  int max_moves() const override { return kMaxMoves; }
  int policy_size() const override { return num_points() * num_points() + 9 * width_; }
  int32_t policy_index(int32_t move) const override {
    const int p = num_points();
    if (side_ == kWhite || move < 0 || move >= p * p) return move;
    return flip(move / p) * p + flip(move % p);
  }

  void encode(float* out) const override {
    const int n = num_nodes();
    std::fill(out, out + int64_t(n) * kFeatures, 0.0f);
    const int us = side_, them = side_ ^ 1;
    auto set = [&](uint64_t squares, int plane) {
      while (squares) {
        const int i = pop_lsb(squares);
        out[int64_t(frame(ext(i))) * kFeatures + plane] = 1.0f;
      }
    };
    for (int t = PAWN; t <= KING; ++t) {
      set(pieces_[t] & colors_[us], t - 1);
      set(pieces_[t] & colors_[them], 6 + t - 1);
    }
    if (ep_ >= 0) set(bit(ep_), 12);
    set(castle_rooks(us), 13);
    set(castle_rooks(them), 14);
    const uint64_t occ = colors_[0] | colors_[1];
    set(attacks_of(us, occ), 15);
    set(attacks_of(them, occ), 16);
    set(checkers(), 17);
    float* extra = out + int64_t(n - 1) * kFeatures;
    extra[18] = 1.0f;
    extra[19] = float(halfmove_) / 100.0f;
    extra[20] = std::min(1.0f, float(repetitions()) / 2.0f);
  }

  uint64_t perft_walk(int depth, uint64_t& plays) override {
    // The move tree alone, as published counts are: the draw rules end no line here.
    if (depth <= 0) return 1;
    return perft_rec(depth, plays);
  }

  // -- chess's own ----------------------------------------------------------------------------------
  const Variant& variant() const { return *v_; }

  int termination() const {
    MoveList list;
    generate(list);
    return status(list);
  }

  // `termination()` given the legal moves: checkmate first (a mate on the hundredth halfmove
  // is a mate), then the draws in python-chess's order: insufficient material (which no mate
  // can follow), stalemate, the fifty-move rule and threefold repetition.
  int status(const MoveList& list) const {
    if (list.size == 0 && checkers()) return CHECKMATE;
    if (insufficient_material()) return INSUFFICIENT_MATERIAL;
    if (list.size == 0) return STALEMATE;
    if (halfmove_ >= 100) return FIFTY_MOVES;
    if (repetitions() >= 2) return REPETITION;
    return ONGOING;
  }

  bool in_check() const { return checkers() != 0; }
  int halfmove_clock() const { return halfmove_; }
  int fullmove_number() const { return fullmove_; }
  // How often the position occurred before (the same side to move, pieces, rights and legal
  // en passant), within the moves since the last capture or pawn move.
  int repetitions() const {
    int count = 0;
    const int n = int(history_.size());
    for (int k = n - 2; k >= 0 && n - k <= halfmove_; k -= 2)
      if (history_[k].hash == hash_) ++count;
    return count;
  }

  std::string fen() const {
    std::string out;
    for (int y = 0; y < height_; ++y) {
      int empty = 0;
      for (int x = 0; x < width_; ++x) {
        const int i = 8 * y + x, t = types_[i];
        if (t == NO_PIECE) {
          ++empty;
          continue;
        }
        if (empty) out += char('0' + empty);
        empty = 0;
        const char c = kPieceChars[t];
        out += colors_[kWhite] & bit(i) ? char(c - 'a' + 'A') : c;
      }
      if (empty) out += char('0' + empty);
      if (y + 1 < height_) out += '/';
    }
    out += side_ == kWhite ? " w " : " b ";
    std::string rights;
    if (castling_ & kWhiteKing) rights += 'K';
    if (castling_ & kWhiteQueen) rights += 'Q';
    if (castling_ & kBlackKing) rights += 'k';
    if (castling_ & kBlackQueen) rights += 'q';
    out += rights.empty() ? "-" : rights;
    out += ' ';
    out += ep_ >= 0 ? square_name(ep_) : "-";
    out += ' ' + std::to_string(halfmove_) + ' ' + std::to_string(fullmove_);
    return out;
  }

 private:
  struct State {
    Move move;
    int8_t captured;
    uint8_t castling;
    int8_t ep;
    int16_t halfmove;
    uint64_t hash;
  };

  // -- squares ------------------------------------------------------------------------------------
  int internal(int s) const { return (s / width_) * 8 + s % width_; }
  int ext(int i) const { return (i >> 3) * width_ + (i & 7); }
  int flip(int s) const { return (height_ - 1 - s / width_) * width_ + s % width_; }
  // A square's row in the side to move's frame.
  int frame(int s) const { return side_ == kWhite ? s : flip(s); }
  std::string square_name(int i) const {
    return std::string(1, char('a' + (i & 7))) + std::to_string(height_ - (i >> 3));
  }

  int32_t external(Move m) const {
    const int p = num_points(), from = move_from(m), to = move_to(m), promo = move_promo(m);
    if (promo && promo != QUEEN) {
      const int fx = from & 7, tx = to & 7;
      return p * p + (fx * 3 + (tx - fx + 1)) * 3 + (promo - KNIGHT);
    }
    return ext(from) * p + ext(to);
  }

  // The legal internal move that `move` names (0: none; no legal move is 0, since a1a1 is no move).
  Move find(int move, const MoveList& list) const {
    const int p = num_points();
    if (move < 0 || move >= p * p + 9 * width_) return 0;
    int from, to, promo;
    if (move < p * p) {
      from = internal(move / p);
      to = internal(move % p);
      promo = 0;  // a pawn reaching the last rank: the queen
    } else {
      const int j = (move - p * p) / 3, fx = j / 3, tx = fx + j % 3 - 1;
      promo = (move - p * p) % 3 + KNIGHT;
      if (tx < 0 || tx >= width_) return 0;
      const int fy = side_ == kWhite ? 1 : height_ - 2, ty = side_ == kWhite ? 0 : height_ - 1;
      from = 8 * fy + fx;
      to = 8 * ty + tx;
    }
    for (int i = 0; i < list.size; ++i) {
      const Move m = list.moves[i];
      if (move_from(m) != from || move_to(m) != to) continue;
      const int mp = move_promo(m);
      if (mp == (promo ? promo : (mp ? QUEEN : 0))) return m;
    }
    return 0;
  }

  std::string illegal_reason(int move) const {
    const int p = num_points();
    if (move < 0 || move >= p * p + 9 * width_) return "not a chess move on this board";
    if (move < p * p) {
      const int from = internal(move / p);
      if (!(colors_[side_] & bit(from)))
        return "no " + std::string(side_ == kWhite ? "white" : "black") + " piece on " +
               square_name(from);
      return "the " + std::string(side_ == kWhite ? "white" : "black") + " piece on " +
             square_name(from) + " cannot move to " + square_name(internal(move % p)) +
             (checkers() ? " (in check)" : "");
    }
    return "no such promotion";
  }

  // -- attacks -------------------------------------------------------------------------------------
  // Whether `by`'s pieces in `mask` attack square `s` with occupancy `occ`.
  bool attacked(int s, int by, uint64_t occ, uint64_t mask) const {
    const uint64_t them = colors_[by] & mask;
    if (g_->pawn[by ^ 1][s] & pieces_[PAWN] & them) return true;
    if (g_->knight[s] & pieces_[KNIGHT] & them) return true;
    if (g_->king[s] & pieces_[KING] & them) return true;
    const uint64_t rq = (pieces_[ROOK] | pieces_[QUEEN]) & them;
    if (rq && (g_->rook(s, occ) & rq)) return true;
    const uint64_t bq = (pieces_[BISHOP] | pieces_[QUEEN]) & them;
    return bq && (g_->bishop(s, occ) & bq);
  }

  uint64_t attackers(int s, int by, uint64_t occ) const {
    const uint64_t them = colors_[by];
    return ((g_->pawn[by ^ 1][s] & pieces_[PAWN]) | (g_->knight[s] & pieces_[KNIGHT]) |
            (g_->king[s] & pieces_[KING]) |
            (g_->rook(s, occ) & (pieces_[ROOK] | pieces_[QUEEN])) |
            (g_->bishop(s, occ) & (pieces_[BISHOP] | pieces_[QUEEN]))) &
           them;
  }

  int king_square(int c) const { return lsb(pieces_[KING] & colors_[c]); }

  uint64_t checkers() const {
    return attackers(king_square(side_), side_ ^ 1, colors_[0] | colors_[1]);
  }

  // Every square `c`'s pieces attack.
  uint64_t attacks_of(int c, uint64_t occ) const {
    uint64_t out = 0, b = colors_[c] & ~pieces_[PAWN];
    while (b) {
      const int s = pop_lsb(b);
      switch (types_[s]) {
        case KNIGHT: out |= g_->knight[s]; break;
        case BISHOP: out |= g_->bishop(s, occ); break;
        case ROOK: out |= g_->rook(s, occ); break;
        case QUEEN: out |= g_->rook(s, occ) | g_->bishop(s, occ); break;
        case KING: out |= g_->king[s]; break;
        default: break;
      }
    }
    b = colors_[c] & pieces_[PAWN];
    while (b) out |= g_->pawn[c][pop_lsb(b)];
    return out;
  }

  // The rook squares that may still castle for colour `c` (internal).
  uint64_t castle_rooks(int c) const {
    uint64_t out = 0;
    if (c == kWhite) {
      if (castling_ & kWhiteKing) out |= bit(63);
      if (castling_ & kWhiteQueen) out |= bit(56);
    } else {
      if (castling_ & kBlackKing) out |= bit(7);
      if (castling_ & kBlackQueen) out |= bit(0);
    }
    return out;
  }

  bool insufficient_material() const {
    if (pieces_[PAWN] | pieces_[ROOK] | pieces_[QUEEN]) return false;
    const uint64_t minors = pieces_[KNIGHT] | pieces_[BISHOP];
    if (popcount(minors) <= 1) return true;
    if (pieces_[KNIGHT]) return false;
    return !(pieces_[BISHOP] & g_->light) || !(pieces_[BISHOP] & ~g_->light);
  }

  // Whether the opponent's pawn taking en passant onto `target` (its pawn from `from`, the
  // captured pawn on `captured`) leaves its own king safe. `mover` is the side that captures.
  bool en_passant_safe(int mover, int from, int target, int captured) const {
    const uint64_t occ = ((colors_[0] | colors_[1]) ^ bit(from) ^ bit(captured)) | bit(target);
    return !attacked(king_square(mover), mover ^ 1, occ, ~bit(captured));
  }

  // -- move generation --------------------------------------------------------------------------------
  void add_pawn_moves(MoveList& list, int from, uint64_t targets, int last_rank_y) const {
    while (targets) {
      const int to = pop_lsb(targets);
      if ((to >> 3) == last_rank_y) {
        for (int t = QUEEN; t >= KNIGHT; --t)
          if (v_->promotions & (1 << t)) list.add(make_move(from, to, t));
      } else {
        list.add(make_move(from, to));
      }
    }
  }

  void generate(MoveList& list) const {
    list.size = 0;
    const int us = side_, them = us ^ 1;
    const uint64_t own = colors_[us], opp = colors_[them], occ = own | opp;
    const int ksq = king_square(us);
    const uint64_t check = attackers(ksq, them, occ);
    // King steps: onto squares no enemy attacks once the king has left its square.
    {
      uint64_t to = g_->king[ksq] & ~own & ~pieces_[KING];
      const uint64_t occ_k = occ ^ bit(ksq);
      while (to) {
        const int t = pop_lsb(to);
        if (!attacked(t, them, occ_k, ~uint64_t(0))) list.add(make_move(ksq, t));
      }
    }
    if (check & (check - 1)) return;  // double check: only the king moves
    uint64_t target = g_->board & ~own & ~pieces_[KING];  // no king is ever taken
    if (check) target &= g_->between[ksq][lsb(check)] | check;
    // Pinned pieces: own pieces alone between the king and an enemy slider.
    uint64_t pinned = 0;
    {
      uint64_t snipers =
          ((g_->rook_empty[ksq] & (pieces_[ROOK] | pieces_[QUEEN])) |
           (g_->bishop_empty[ksq] & (pieces_[BISHOP] | pieces_[QUEEN]))) & opp;
      while (snipers) {
        const int s = pop_lsb(snipers);
        const uint64_t b = g_->between[ksq][s] & occ;
        if (b && !(b & (b - 1)) && (b & own)) pinned |= b;
      }
    }
    auto allowed = [&](int from) {
      return pinned & bit(from) ? g_->line[ksq][from] : ~uint64_t(0);
    };
    // Knights (a pinned knight never moves).
    for (uint64_t b = pieces_[KNIGHT] & own & ~pinned; b;) {
      const int from = pop_lsb(b);
      for (uint64_t to = g_->knight[from] & target; to;) list.add(make_move(from, pop_lsb(to)));
    }
    for (uint64_t b = (pieces_[BISHOP] | pieces_[QUEEN]) & own; b;) {
      const int from = pop_lsb(b);
      for (uint64_t to = g_->bishop(from, occ) & target & allowed(from); to;)
        list.add(make_move(from, pop_lsb(to)));
    }
    for (uint64_t b = (pieces_[ROOK] | pieces_[QUEEN]) & own; b;) {
      const int from = pop_lsb(b);
      for (uint64_t to = g_->rook(from, occ) & target & allowed(from); to;)
        list.add(make_move(from, pop_lsb(to)));
    }
    // Pawns.
    const int forward = us == kWhite ? -8 : 8;
    const int last_y = us == kWhite ? 0 : height_ - 1;
    const int start_y = us == kWhite ? height_ - 2 : 1;
    for (uint64_t b = pieces_[PAWN] & own; b;) {
      const int from = pop_lsb(b);
      const uint64_t ok = target & allowed(from);
      const int one = from + forward;  // always on the board: no pawn stands on its last rank
      if (!(occ & bit(one))) {
        add_pawn_moves(list, from, bit(one) & ok, last_y);
        if (v_->double_step && (from >> 3) == start_y) {
          const int two = one + forward;
          if (!(occ & bit(two)) && (ok & bit(two)))
            list.add(make_move(from, two, 0, DOUBLE_STEP));
        }
      }
      add_pawn_moves(list, from, g_->pawn[us][from] & opp & ok, last_y);
      if (ep_ >= 0 && (g_->pawn[us][from] & bit(ep_)) &&
          en_passant_safe(us, from, ep_, ep_ - forward))
        list.add(make_move(from, ep_, 0, EN_PASSANT));
    }
    // Castling: the king not in check, the squares between king and rook empty, and the
    // squares the king crosses or lands on not attacked.
    if (castling_ && !check) {
      const int row = us == kWhite ? 56 : 0;
      const uint8_t kside = us == kWhite ? kWhiteKing : kBlackKing;
      const uint8_t qside = us == kWhite ? kWhiteQueen : kBlackQueen;
      if ((castling_ & kside) && !(occ & (bit(row + 5) | bit(row + 6))) &&
          !attacked(row + 5, them, occ, ~uint64_t(0)) &&
          !attacked(row + 6, them, occ, ~uint64_t(0)))
        list.add(make_move(row + 4, row + 6, 0, CASTLE));
      if ((castling_ & qside) && !(occ & (bit(row + 1) | bit(row + 2) | bit(row + 3))) &&
          !attacked(row + 3, them, occ, ~uint64_t(0)) &&
          !attacked(row + 2, them, occ, ~uint64_t(0)))
        list.add(make_move(row + 4, row + 2, 0, CASTLE));
    }
  }

  // Whether the legal move `m` checks the opponent's king (played and taken back).
  bool gives_check(Move m) const {
    ChessPosition& self = const_cast<ChessPosition&>(*this);
    self.make(m);
    const bool check = checkers() != 0;
    self.unmake();
    return check;
  }

  // -- making moves -------------------------------------------------------------------------------------
  void put(int c, int t, int s) {
    pieces_[t] |= bit(s);
    colors_[c] |= bit(s);
    types_[s] = int8_t(t);
    hash_ ^= kKeys.piece[c][t][s];
  }
  void remove(int c, int t, int s) {
    pieces_[t] &= ~bit(s);
    colors_[c] &= ~bit(s);
    types_[s] = NO_PIECE;
    hash_ ^= kKeys.piece[c][t][s];
  }

  void set_ep(int target) {
    if (ep_ >= 0) hash_ ^= kKeys.ep[ep_ & 7];
    ep_ = int8_t(target);
    if (ep_ >= 0) hash_ ^= kKeys.ep[ep_ & 7];
  }

  void make(Move m) {
    const int us = side_, them = us ^ 1;
    const int from = move_from(m), to = move_to(m), kind = move_kind(m), promo = move_promo(m);
    const int piece = types_[from];
    int captured = kind == EN_PASSANT ? PAWN : types_[to];
    history_.push_back(State{m, int8_t(captured), castling_, ep_, int16_t(halfmove_), hash_});
    if (kind == EN_PASSANT) {
      remove(them, PAWN, to + (us == kWhite ? 8 : -8));
    } else if (captured) {
      remove(them, captured, to);
    }
    remove(us, piece, from);
    put(us, promo ? promo : piece, to);
    if (kind == CASTLE) {
      const int row = from & ~7;
      if (to > from) {
        remove(us, ROOK, row + 7);
        put(us, ROOK, row + 5);
      } else {
        remove(us, ROOK, row);
        put(us, ROOK, row + 3);
      }
    }
    const uint8_t rights = castling_ & g_->castle_mask[from] & g_->castle_mask[to];
    if (rights != castling_) {
      hash_ ^= kKeys.castling[castling_] ^ kKeys.castling[rights];
      castling_ = rights;
    }
    halfmove_ = piece == PAWN || captured ? 0 : halfmove_ + 1;
    if (us == kBlack) ++fullmove_;
    side_ = them;
    hash_ ^= kKeys.black;
    // En passant only when the opponent can legally take.
    int ep = -1;
    if (kind == DOUBLE_STEP) {
      const int target = (from + to) / 2;
      for (uint64_t b = g_->pawn[us][target] & pieces_[PAWN] & colors_[them]; b;) {
        if (en_passant_safe(them, pop_lsb(b), target, to)) {
          ep = target;
          break;
        }
      }
    }
    set_ep(ep);
  }

  void unmake() {
    const State st = history_.back();
    history_.pop_back();
    const Move m = st.move;
    const int them = side_, us = them ^ 1;
    const int from = move_from(m), to = move_to(m), kind = move_kind(m), promo = move_promo(m);
    const int moved = promo ? PAWN : types_[to];
    remove(us, types_[to], to);
    put(us, moved, from);
    if (kind == EN_PASSANT) {
      put(them, PAWN, to + (us == kWhite ? 8 : -8));
    } else if (st.captured) {
      put(them, st.captured, to);
    }
    if (kind == CASTLE) {
      const int row = from & ~7;
      if (to > from) {
        remove(us, ROOK, row + 5);
        put(us, ROOK, row + 7);
      } else {
        remove(us, ROOK, row + 3);
        put(us, ROOK, row);
      }
    }
    if (us == kBlack) --fullmove_;
    side_ = us;
    castling_ = st.castling;
    ep_ = st.ep;
    halfmove_ = st.halfmove;
    hash_ = st.hash;
  }

  uint64_t perft_rec(int depth, uint64_t& plays) {
    MoveList list;
    generate(list);
    if (depth == 1) return list.size;
    plays += list.size;
    uint64_t total = 0;
    for (int i = 0; i < list.size; ++i) {
      make(list.moves[i]);
      total += perft_rec(depth - 1, plays);
      unmake();
    }
    return total;
  }

  // -- FEN ------------------------------------------------------------------------------------------
  [[noreturn]] void bad_fen(const std::string& fen, const std::string& why) const {
    throw GameError("invalid " + std::string(v_->name) + " FEN '" + fen + "': " + why);
  }

  void set_fen(const std::string& fen) {
    std::istringstream in(fen);
    std::vector<std::string> fields;
    for (std::string f; in >> f;) fields.push_back(f);
    if (fields.size() < 4 || fields.size() > 6)
      bad_fen(fen, "expected 4 to 6 fields (board, side, castling, en passant, halfmove clock, "
                   "move number), got " + std::to_string(fields.size()));
    std::memset(pieces_, 0, sizeof pieces_);
    colors_[0] = colors_[1] = 0;
    std::memset(types_, 0, sizeof types_);
    hash_ = 0;
    history_.clear();
    // The board: rows from the top, separated by '/'.
    int y = 0, x = 0;
    for (char ch : fields[0]) {
      if (ch == '/') {
        if (x != width_)
          bad_fen(fen, "row " + std::to_string(y + 1) + " has " + std::to_string(x) +
                           " squares, not " + std::to_string(width_));
        ++y;
        x = 0;
        if (y >= height_) bad_fen(fen, "more than " + std::to_string(height_) + " rows");
        continue;
      }
      if (ch >= '1' && ch <= '9') {
        x += ch - '0';
        if (x > width_)
          bad_fen(fen, "row " + std::to_string(y + 1) + " is longer than " +
                           std::to_string(width_) + " squares");
        continue;
      }
      const char* p = std::strchr(kPieceChars + 1, ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
      if (!p || ch == 0) bad_fen(fen, std::string("unknown piece '") + ch + "'");
      if (x >= width_)
        bad_fen(fen, "row " + std::to_string(y + 1) + " is longer than " +
                         std::to_string(width_) + " squares");
      const int t = int(p - kPieceChars);
      if (t == BISHOP && !v_->bishops) bad_fen(fen, std::string(v_->name) + " has no bishops");
      put(ch >= 'A' && ch <= 'Z' ? kWhite : kBlack, t, 8 * y + x);
      ++x;
    }
    if (y != height_ - 1 || x != width_)
      bad_fen(fen, "the board needs " + std::to_string(height_) + " rows of " +
                       std::to_string(width_) + " squares");
    for (int c = 0; c < 2; ++c) {
      const char* name = c == kWhite ? "white" : "black";
      const int kings = popcount(pieces_[KING] & colors_[c]);
      if (kings != 1)
        bad_fen(fen, std::string(kings ? "more than one " : "no ") + name + " king");
      if (popcount(pieces_[PAWN] & colors_[c]) > width_)
        bad_fen(fen, std::string("more than ") + std::to_string(width_) + " " + name + " pawns");
      if (popcount(colors_[c]) > 2 * width_)
        bad_fen(fen, std::string("more than ") + std::to_string(2 * width_) + " " + name +
                         " pieces");
    }
    const uint64_t back_ranks = (uint64_t(0xFF) | (uint64_t(0xFF) << (8 * (height_ - 1))));
    if (pieces_[PAWN] & back_ranks) bad_fen(fen, "a pawn on the first or last rank");
    // The side to move.
    if (fields[1] == "w") side_ = kWhite;
    else if (fields[1] == "b") side_ = kBlack;
    else bad_fen(fen, "the side to move must be 'w' or 'b', not '" + fields[1] + "'");
    if (side_ == kBlack) hash_ ^= kKeys.black;
    // Castling rights: K Q k q, each with its king and rook at home.
    castling_ = 0;
    if (fields[2] != "-") {
      for (char ch : fields[2]) {
        uint8_t right;
        int king, rook;
        switch (ch) {
          case 'K': right = kWhiteKing; king = 60; rook = 63; break;
          case 'Q': right = kWhiteQueen; king = 60; rook = 56; break;
          case 'k': right = kBlackKing; king = 4; rook = 7; break;
          case 'q': right = kBlackQueen; king = 4; rook = 0; break;
          default: bad_fen(fen, std::string("unknown castling right '") + ch + "'");
        }
        if (!v_->castling) bad_fen(fen, std::string(v_->name) + " has no castling");
        if (castling_ & right) bad_fen(fen, std::string("castling right '") + ch + "' twice");
        const int c = ch >= 'a' ? kBlack : kWhite;
        if (!(pieces_[KING] & colors_[c] & bit(king)) || !(pieces_[ROOK] & colors_[c] & bit(rook)))
          bad_fen(fen, std::string("castling right '") + ch + "' needs the king on " +
                           square_name(king) + " and a rook on " + square_name(rook));
        castling_ |= right;
      }
    }
    hash_ ^= kKeys.castling[castling_];
    // En passant: the square a pawn just skipped, kept only when a capture onto it is legal.
    ep_ = -1;
    if (fields[3] != "-") {
      const std::string& e = fields[3];
      const int ex = e.size() == 2 ? e[0] - 'a' : -1, rank = e.size() == 2 ? e[1] - '0' : -1;
      if (ex < 0 || ex >= width_ || rank < 1 || rank > height_)
        bad_fen(fen, "the en passant square '" + e + "' is not a square");
      if (!v_->double_step) bad_fen(fen, std::string(v_->name) + " has no en passant");
      const int target = 8 * (height_ - rank) + ex;
      const int pushed = target + (side_ == kWhite ? 8 : -8);  // the pawn that advanced two
      const int origin = target - (side_ == kWhite ? 8 : -8);
      if ((target >> 3) != (side_ == kWhite ? 2 : height_ - 3) ||
          !(pieces_[PAWN] & colors_[side_ ^ 1] & bit(pushed)) || types_[target] ||
          types_[origin])
        bad_fen(fen, "the en passant square '" + e + "' is not behind a pawn that just "
                     "advanced two squares");
      for (uint64_t b = g_->pawn[side_ ^ 1][target] & pieces_[PAWN] & colors_[side_]; b;)
        if (en_passant_safe(side_, pop_lsb(b), target, pushed)) {
          set_ep(target);
          break;
        }
    }
    halfmove_ = 0;
    fullmove_ = 1;
    auto number = [&](const std::string& text, const char* what) {
      if (text.empty() || text.size() > 6 ||
          text.find_first_not_of("0123456789") != std::string::npos)
        bad_fen(fen, std::string("the ") + what + " must be a whole number, not '" + text + "'");
      return std::stoi(text);
    };
    if (fields.size() > 4) halfmove_ = number(fields[4], "halfmove clock");
    if (fields.size() > 5) fullmove_ = std::max(1, number(fields[5], "move number"));
    if (attackers(king_square(side_ ^ 1), side_, colors_[0] | colors_[1]))
      bad_fen(fen, "the side not to move is in check");
  }

  const Variant* v_;
  const Geometry* g_;
  uint64_t pieces_[7];  // by piece type (index 0 unused)
  uint64_t colors_[2];  // by colour (kWhite, kBlack)
  int8_t types_[64];    // the piece type on each internal square
  int side_ = kWhite;
  uint8_t castling_ = 0;
  int8_t ep_ = -1;      // the en passant target when a capture onto it is legal, else -1
  int halfmove_ = 0;
  int fullmove_ = 1;
  uint64_t hash_ = 0;
  std::vector<State> history_;
};

std::unique_ptr<ChessPosition> make_chess(const std::string& variant,
                                          const std::optional<std::string>& fen) {
  const Variant& v = find_variant(variant);
  return std::make_unique<ChessPosition>(v, fen ? *fen : std::string(v.start_fen));
}

}  // namespace

void bind_chess(nb::module_& m) {
  nb::class_<ChessPosition, Position>(
      m, "ChessPosition",
      "Chess (8x8) or a small board of its family (Gardner 5x5, Los Alamos 6x6): chess.cpp.")
      .def_prop_ro("variant", [](const ChessPosition& p) { return std::string(p.variant().name); })
      .def("fen", &ChessPosition::fen, "The position as FEN (en passant only when legal).")
      .def("termination", &ChessPosition::termination,
           "Why the game ended: 0 not over, 1 checkmate, 2 stalemate, 3 threefold repetition, "
           "4 fifty-move rule, 5 insufficient material.")
      .def("in_check", &ChessPosition::in_check)
      .def_prop_ro("halfmove_clock", &ChessPosition::halfmove_clock)
      .def_prop_ro("fullmove_number", &ChessPosition::fullmove_number)
      .def_prop_ro("repetitions", &ChessPosition::repetitions,
                   "How often this position occurred before (since the last capture or pawn "
                   "move).");
  m.def("new_chess", &make_chess, nb::arg("variant") = "chess", nb::arg("fen") = nb::none(),
        "A chess position of the variant ('chess', 'gardner', 'losalamos') from a FEN, or its "
        "start position; GameError for an impossible FEN.");
}

}  // namespace saz
