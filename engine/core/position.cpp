#include "position.hpp"

namespace saz {

uint64_t zobrist_key(uint64_t game_tag, uint64_t index) {
  // splitmix64 over a fixed seed mixed with the tag and index: cheap, well spread, stable.
  uint64_t z = 0x5A2600DULL + game_tag * 0x9E3779B97F4A7C15ULL + (index + 1) * 0xBF58476D1CE4E5B9ULL;
  z = splitmix64_mix(z);
  return z ? z : 1;
}

static uint64_t perft_rec(Position& pos, int depth, uint64_t& plays, std::vector<Moves>& stack) {
  if (depth == 1) return pos.count_legal_moves();
  Moves& moves = stack[depth];
  pos.legal_moves(moves);
  plays += moves.size();
  uint64_t total = 0;
  for (size_t i = 0; i < moves.size(); ++i) {
    pos.play(moves[i]);
    total += perft_rec(pos, depth - 1, plays, stack);
    pos.undo();
  }
  return total;
}

uint64_t Position::perft_walk(int depth, uint64_t& plays) {
  if (depth <= 0) return 1;
  std::vector<Moves> stack(depth + 1);  // one move list per ply, reused across siblings
  return perft_rec(*this, depth, plays, stack);
}

uint64_t perft(Position& pos, int depth, uint64_t& plays) { return pos.perft_walk(depth, plays); }

}  // namespace saz
