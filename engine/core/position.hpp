// The one game interface of the compiled core: what the search tree, perft and the Python `Game`
// layer need from a position. Each game (othello.cpp, gomoku.cpp, go.cpp) implements it.
//
// Conventions (the Python layer's, docs/ARCHITECTURE.md): a move is a point index y * width + x,
// and width * height is the pass (Go; Othello's forced pass), which is also the graph's extra
// node. Colours are BLACK = 1 and WHITE = -1. `play` then `undo` restores the position exactly,
// side to move and hash included, so a caller may walk a line and back on one object.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace saz {

constexpr int BLACK = 1;
constexpr int WHITE = -1;
constexpr int EMPTY = 0;
constexpr int DRAW = 0;

using Moves = std::vector<int32_t>;

// What an exact endgame solve found (`Position::solve`).
struct Solution {
  enum Status : int8_t {
    UNSUPPORTED,  // the game has no solver
    UNKNOWN,      // the node budget ran out first
    SOLVED,
  };
  Status status = UNSUPPORTED;
  // A best move for the side to move (the pass where it must pass); -1 once the game is over.
  int32_t move = -1;
  // The final count under perfect play from the side to move's view (Othello: its discs minus
  // the opponent's); in win/draw/loss mode only its sign, -1, 0 or +1.
  int32_t value = 0;
  // Positions searched, the root included.
  int64_t nodes = 0;
};

// The errors the rules raise; the bindings turn them into the Python GameError subclasses of
// engine/games/errors.py, so a protocol answers them in its own form.
struct GameError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct IllegalMove : GameError {
  IllegalMove(int move, const std::string& reason)
      : GameError("illegal move " + std::to_string(move) + ": " + reason), move(move),
        reason(reason) {}
  int move;
  std::string reason;
};
struct UndoError : GameError {
  using GameError::GameError;
};
struct UnsupportedSize : GameError {
  using GameError::GameError;
};
struct UnsupportedRule : GameError {
  using GameError::GameError;
};

// Fixed pseudo-random 64-bit keys, the same in every process (splitmix64 of a fixed seed, the
// game's tag and the index), so hashes can be compared across runs and in tests.
uint64_t zobrist_key(uint64_t game_tag, uint64_t index);

// splitmix64's finaliser: every bit of `z` moves every output bit (the Zobrist keys' and the
// evaluation cache's row digests' last step).
inline uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

class Position {
 public:
  Position(int width, int height) : width_(width), height_(height) {}
  virtual ~Position() = default;

  // An independent copy, history included.
  virtual std::unique_ptr<Position> clone() const = 0;

  int width() const { return width_; }
  int height() const { return height_; }
  int num_points() const { return width_ * height_; }
  int pass_move() const { return width_ * height_; }
  int num_nodes() const { return width_ * height_ + 1; }

  // Feature planes `encode` writes per node: the network's input width.
  virtual int num_features() const = 0;
  // BLACK or WHITE.
  virtual int to_move() const = 0;
  // Zobrist hash of the position, side to move included.
  virtual uint64_t hash() const = 0;
  // Moves played since the start position (the history `undo` walks back).
  virtual int ply() const = 0;
  // Stones per point into out[num_points]: BLACK, WHITE or EMPTY (chess: colour * piece type).
  virtual void board(int8_t* out) const = 0;

  // The moves the side to move may choose from, ascending (empty once the game is over).
  virtual void legal_moves(Moves& out) const = 0;
  // The legal moves worth a search's visits, ascending: every legal move but those that can
  // only hurt the side that plays them (Go: filling one's own eye). The search expands these;
  // the rules (`legal_moves`, `is_legal`, `play`) still take the others. Default: every one.
  virtual void search_moves(Moves& out) const { legal_moves(out); }
  // Search moves the root should look at whatever the network's prior, ascending: moves whose
  // worth the rules can tell at a glance and a network that sees a few steps may miss (Go: the
  // capture of a large chain in atari). The search lifts their root priors
  // (SearchOptions.urgent_prior). Default: none.
  virtual void urgent_moves(Moves& out) const { out.clear(); }
  // How many moves `legal_moves` would list (perft's last ply counts them in bulk).
  virtual int count_legal_moves() const {
    Moves moves;
    legal_moves(moves);
    return int(moves.size());
  }
  // Whether `play(move)` would accept `move` now (never throws).
  virtual bool is_legal(int move) const = 0;
  // Play `move` for the side to move; IllegalMove leaves the position unchanged.
  virtual void play(int move) = 0;
  // Take back the last move exactly (side to move and hash as they were); UndoError if none.
  virtual void undo() = 0;
  // Give the move to the other colour without a move (not recorded in the history; `undo`
  // restores the state saved by the last `play`, whatever the turn is now).
  virtual void switch_turn() = 0;

  virtual bool is_over() const = 0;
  // BLACK, WHITE or DRAW; only meaningful once `is_over()`.
  virtual int winner() const = 0;

  // Moves that win by force for the side to move, as far as the rules make that cheap to know:
  // at once, or by leaving the opponent only moves that lose at once (the search then scores
  // the position as won). Default: none known.
  virtual void winning_moves(Moves& out) const { out.clear(); }
  // When the opponent threatens to win on its next move: true, with `out` the moves that stop
  // every threat (empty: none can, the position is lost). False when there is no threat or the
  // game cannot tell cheaply: the search then considers every legal move.
  virtual bool forced_moves(Moves& out) const {
    out.clear();
    return false;
  }

  // Empty points on the board: how near the end a game that fills the board is (the search
  // asks before it tries `solve`). Default: counted from `board`.
  virtual int num_empty() const {
    std::vector<int8_t> stones(num_points());
    board(stones.data());
    int empty = 0;
    for (int8_t s : stones) empty += s == EMPTY;
    return empty;
  }
  // Perfect play from here by exhaustive search, within `max_nodes` positions searched: the
  // exact final margin, or with `exact` false only who wins (a null window around 0, faster).
  // `max_seconds` > 0 also stops it, as out of nodes, once that much time has passed (the
  // search's clock; checked every few thousand positions).
  // Default: UNSUPPORTED, for games without a solver (only Othello's endgame has one).
  virtual Solution solve(int64_t max_nodes, bool exact, double max_seconds = 0.0) const {
    return Solution{};
  }

  // Threat-space search (Gomoku): a win for the side to move forced by an unbroken series of
  // threats, fours only (VCF) or with `threes` also threats to make an open or double four
  // (VCT), within `max_nodes` positions: SOLVED with value +1 and the first move; else UNKNOWN
  // (none found, which proves nothing). Plays and undoes on this position, which it restores.
  // Default: UNSUPPORTED.
  virtual Solution prove_threats(int64_t max_nodes, bool threes) { return Solution{}; }
  // When the opponent, were it to move, would win by fours alone (a VCF): true, with `out` the
  // legal moves that may stop it (each tried within `max_nodes` positions in all; an empty list
  // means none does and the position is lost). False when no such win was found: the caller
  // keeps its own candidates. Restores the position.
  virtual bool threat_defences(Moves& out, int64_t max_nodes) {
    out.clear();
    return false;
  }

  // Node features [num_nodes, num_features] row-major from the side to move's view, every entry
  // overwritten: rows 0..num_points-1 are the points, the last row is the extra node.
  virtual void encode(float* out) const = 0;
  // How many planes, from the first, the network reads (a network of an older feature version
  // reads a prefix of them, Game.feature_prefixes). `encode` may write the planes past it as
  // zeros where computing them costs (Go's ladder planes: a ladder read per short chain at
  // every leaf). Every plane by default; clones keep the setting.
  void set_planes_read(int planes) { planes_read_ = planes; }

  // The width of the network's policy and a move's index in it, now (the side to move's frame):
  // a point game's policy is over its nodes and a move is its own index; chess's is over
  // (from, to) pairs and underpromotions, with the board flipped for Black.
  virtual int policy_size() const { return num_nodes(); }
  // The most legal moves a position can have (what the tree reserves for a leaf's edges): one
  // a node for a point game; chess's 218 are more than its 65 nodes.
  virtual int max_moves() const { return num_nodes(); }
  virtual int32_t policy_index(int32_t move) const { return move; }

  // Leaves `depth` plies below (restored before returning), `plays` counting the moves actually
  // played; the default walks legal_moves / play / undo, bulk-counting the last ply. A game may
  // walk its own move representation faster (chess).
  virtual uint64_t perft_walk(int depth, uint64_t& plays);

 protected:
  int width_;
  int height_;
  int planes_read_ = std::numeric_limits<int>::max();
};

// Leaves `depth` plies below `pos` (restored before returning); `plays` counts the moves
// actually played (the last ply is counted in bulk, as perft does).
uint64_t perft(Position& pos, int depth, uint64_t& plays);

}  // namespace saz
