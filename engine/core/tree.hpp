// The search tree of the batched PUCT search, as flat arrays with a byte budget.
//
// A node holds statistics, its expansion (a block of edges: move, prior, child) and nothing else:
// never a position. The tree keeps one position, the root's, and walks a scratch copy of it down
// each descent and back up again (play / undo), encoding a new leaf into the caller's batch buffer
// on the way. Children are created on first visit. An expansion's edges are sorted by descending
// prior, and an unvisited child's PUCT score is the same first-play value for all of them, so the
// visited children are always a prefix (`tried` long) and selection scans that prefix plus one
// candidate, never the whole board.
//
// Sorting a whole expansion would cost more than the rest of a leaf's work at 19x19 (hundreds of
// moves, most never tried), so an expansion sorts only its best few edges (`Node::sorted`) and
// sorts further, a chunk at a time, when the tried children reach the end of that prefix.
//
// Values: `Node::w` sums results from the view of the player who moved *into* the node, so a
// parent reads `w / n` of a child directly as that move's value for itself.
//
// Nodes and edges live in fixed-size chunks, so the bytes the tree holds are known exactly and
// grow a chunk at a time; the tree refuses to grow past its budget (`full()`), and the search then
// stops growing it and answers from what it has.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "position.hpp"

namespace saz {

struct Edge {
  int32_t move;
  float prior;
  int32_t child;  // node index, -1 until the move is first visited
};

struct Node {
  double w = 0.0;      // sum of values from the view of the player who moved into this node
  int32_t n = 0;       // visits, virtual ones included while a descent is in flight
  int32_t edges = -1;  // index of the first edge; -1 until expanded
  uint16_t num_edges = 0;
  uint16_t tried = 0;   // edges[0..tried) have children
  uint16_t sorted = 0;  // edges[0..sorted) are in descending order of prior, and none after
                        // them has a higher prior: the order is extended as children are tried
  uint8_t state = 0;    // OPEN, PENDING (awaiting the network) or SETTLED (value exact)
  float exact = 0.0f;  // when SETTLED: the value for the side to move at this node
};

// Storage in fixed chunks: indices stay valid as it grows, and its size is counted in bytes.
template <typename T, int kShift>
class Chunks {
 public:
  static constexpr int64_t kSize = int64_t(1) << kShift;
  static constexpr int64_t kBytes = kSize * int64_t(sizeof(T));

  T& operator[](int64_t i) { return chunks_[i >> kShift][i & (kSize - 1)]; }
  const T& operator[](int64_t i) const { return chunks_[i >> kShift][i & (kSize - 1)]; }
  int64_t size() const { return used_; }
  int64_t bytes() const { return int64_t(chunks_.size()) * kBytes; }
  // Whether `alloc(count)` would need a new chunk.
  bool needs_chunk(int64_t count) const { return start_of(count) + count > capacity(); }
  // The index of `count` new contiguous items (within one chunk; the tail of the last chunk is
  // skipped when they do not fit in it).
  int64_t alloc(int64_t count) {
    int64_t at = start_of(count);
    if (at + count > capacity()) chunks_.emplace_back(new T[kSize]);
    used_ = at + count;
    return at;
  }
  void clear() {
    chunks_.clear();
    used_ = 0;
  }
  void swap(Chunks& other) {
    chunks_.swap(other.chunks_);
    std::swap(used_, other.used_);
  }

 private:
  int64_t capacity() const { return int64_t(chunks_.size()) * kSize; }
  int64_t start_of(int64_t count) const {
    int64_t offset = used_ & (kSize - 1);
    return offset != 0 && offset + count > kSize ? used_ - offset + kSize : used_;
  }

  std::vector<std::unique_ptr<T[]>> chunks_;
  int64_t used_ = 0;
};

using NodeChunks = Chunks<Node, 15>;
using EdgeChunks = Chunks<Edge, 16>;

struct TreeOptions {
  float c_puct = 1.5f;
  float fpu_reduction = 0.2f;
  int virtual_loss = 1;
  // KataGo's forced playouts at the root (self-play): a root child that has been visited gets
  // at least sqrt(k * prior * root visits) visits. 0: off (play).
  float forced_playouts_k = 0.0f;
  int64_t max_bytes = int64_t(1) << 30;
  int64_t max_nodes = 2000000;
  // A new leaf with at most this many empty points is solved exactly (who wins, at most
  // `solve_nodes` positions searched) where the game has a solver, and settled at +1, 0 or -1
  // when that succeeds. 0: off.
  int solve_empties = 0;
  int64_t solve_nodes = 100000;
  // Where the game has a threat-space search (Gomoku): a new leaf whose side to move wins by
  // fours (VCF, within this many positions) is settled at +1; one whose opponent would is
  // expanded over the moves that may stop it only, and settled at -1 when none does. 0: off.
  int64_t threat_nodes = 0;
  // The planes the network reads, from the first (Position::set_planes_read): the leaves'
  // rows leave the others zero where they cost to compute. Every plane by default.
  int planes_read = std::numeric_limits<int>::max();
};

// What one collect did.
struct Collected {
  int leaves = 0;      // new leaves encoded for the network
  int settled = 0;     // descents the rules settled, backed up at once
  int collisions = 0;  // descents that met a leaf already waiting for the network
};

// One root move's statistics, for results and analysis.
struct ChildStats {
  int32_t move;
  int32_t visits;
  double value;  // mean value for the side to move at the root
  float prior;
};

class Tree {
 public:
  explicit Tree(const TreeOptions& options) : options_(options) {}

  const TreeOptions& options() const { return options_; }
  void set_options(const TreeOptions& options) { options_ = options; }

  // Start afresh at `pos` (copied).
  void reset(const Position& pos);
  // Forget the tree and its root (a large tree is freed on a thread of its own).
  void clear();
  // Move the root down along `moves` (each a tried child in turn) and make `pos` (copied) its
  // position, keeping that subtree and freeing the rest; false (tree unchanged) when a move has
  // no child. Must not be called with batches in flight.
  bool advance(const std::vector<int32_t>& moves, const Position& pos);
  bool has_root() const { return static_cast<bool>(root_pos_); }

  // Descend until `max_leaves` new leaves wait for the network (or `max_descents` descents were
  // made, or a descent meets a leaf already waiting, or the tree is full), encoding each new leaf
  // into `x` (rows of [num_nodes * num_features] floats). The leaves form one batch, answered by
  // `absorb` in the order batches were collected. An empty batch is not queued.
  Collected collect(int max_leaves, int max_descents, float* x);
  // The network's answer for the oldest batch: `log_policy` [leaves * group, policy_size] (a
  // candidate's logit at its policy index, `Position::policy_index` at the leaf), `values`
  // [leaves * group]; rows j * group + 1 .. j * group + group - 1 are sub-board evaluations of leaf
  // j blended into its priors with weight `blend`.
  void absorb(const float* log_policy, const float* values, int group, float blend);
  int pending_batches() const { return int(batches_.size()); }

  // The root: statistics and the edit points the search needs.
  bool root_expanded() const { return root_pos_ && node(root_).edges >= 0; }
  int32_t root_visits() const { return root_pos_ ? node(root_).n : 0; }
  // The root's value for its side to move (0 when unvisited).
  double root_value() const;
  std::vector<ChildStats> root_children() const;
  // (move, value for the root's side to move) of the root's tried children whose result is
  // proven (settled by the rules, the endgame solver or the proofs below them).
  std::vector<std::pair<int32_t, float>> root_settled() const;
  // Root candidates in edge order (moves and priors), and replacing the priors (e.g. after
  // noise), restoring the order invariant for the untried ones.
  void root_edges(std::vector<int32_t>& moves, std::vector<float>& priors) const;
  void set_root_priors(const std::vector<float>& priors);
  // Keep only `allowed` moves at a freshly expanded root (renormalised); none allowed: unchanged.
  void restrict_root(const std::vector<int32_t>& allowed);
  // Root targets (a Gumbel root's sequential halving): the next descents leave the root by
  // `moves` only, each at most `visits` more times, the move with the most visits left first
  // (ties: the first listed), and collect descends no further once every target is spent. A
  // descent taken back (a collision, a full tree) gives its visit back. Empty: PUCT at the root
  // again. Forgotten when the root changes (reset, advance, clear, restrict_root).
  void set_root_targets(const std::vector<int32_t>& moves, const std::vector<int32_t>& visits);
  // (move, visits left) of each root target, in the order they were set.
  const std::vector<std::pair<int32_t, int32_t>>& root_targets() const { return targets_; }
  // +1 / -1 when the root's result is proven (a child settled as lost for its side to move, or
  // every child settled as won for it), 0 otherwise; and a proven winning root move (-1: none).
  int root_proven() const;
  int32_t root_proven_move() const;
  // Settle the root's child for `move` at `exact` (its side to move's value), creating the
  // child when the move was not tried yet: an outside proof (the threat search's) that the
  // search then respects. False when `move` is not a root candidate.
  bool settle_root_move(int32_t move, float exact);
  // The most visited line below the root's child for `move` (not including it).
  std::vector<int32_t> principal_variation(int32_t move, int limit) const;

  // Visits of the node that `moves` lead to from the root (-1: no such node).
  int32_t visits_at(const std::vector<int32_t>& moves) const;
  // What is wrong with the tree's invariants (empty: nothing), for tests: every expanded node's
  // visits are its own evaluation plus its children's, no virtual loss is left, the visited
  // children are a prefix and the unvisited ones are in descending order of prior.
  std::string validate() const;

  int64_t num_nodes() const { return nodes_.size(); }
  int64_t bytes() const { return nodes_.bytes() + edges_.bytes(); }
  // Whether the last collect stopped because the next leaf would not fit the budget.
  bool full() const { return full_; }
  const Position* root_position() const { return root_pos_.get(); }

 private:
  Node& node(int64_t i) { return nodes_[i]; }
  const Node& node(int64_t i) const { return nodes_[i]; }
  int select(const Node& parent, bool at_root) const;
  // The root target with the most visits left (-1: all spent) and its edge's index at the root.
  int next_target(int& edge) const;
  bool room_for_leaf(int64_t edges) const;
  int32_t new_node();
  // Empty the tree, freeing a large one on a thread of its own.
  void discard();
  // Into `moves_buf_`, the candidates of an expansion: the moves the rules force, when they
  // name any, else every legal move.
  void candidates(Position& pos);
  // The rules' exact knowledge of a new leaf (see tree.cpp). A leaf it leaves open has its
  // expansion's candidates in `moves_buf_`, as `candidates` would put them.
  void settle(Node& leaf, Position& pos);
  void backup(const std::vector<int32_t>& path, double value, int vl);
  // MCTS-solver: after the last node of `path` was settled, settle its ancestors that this
  // proves: a node with a child lost for its side to move is won; one whose every move leads
  // to a child won for its side to move is lost.
  void propagate(const std::vector<int32_t>& path);
  // Extend `nd`'s sorted prefix of edges by a chunk, or to the end (ties: the lower move first).
  void sort_more(Node& nd, bool all = false);
  void copy_subtree(int32_t from, NodeChunks& nodes, EdgeChunks& edges) const;
  // The child of `nd` reached by `move` (-1: none tried).
  int32_t child_of(const Node& nd, int32_t move) const;

  struct Batch {
    std::vector<std::vector<int32_t>> paths;
    std::vector<int32_t> candidates;   // every leaf's candidate moves, concatenated
    std::vector<int32_t> indices;      // each candidate's policy index (at its leaf)
    std::vector<int32_t> offsets;      // leaf j's candidates: [offsets[j], offsets[j + 1])
  };

  TreeOptions options_;
  NodeChunks nodes_;
  EdgeChunks edges_;
  int32_t root_ = 0;
  std::unique_ptr<Position> root_pos_;
  std::unique_ptr<Position> scratch_;
  std::deque<Batch> batches_;
  bool full_ = false;
  Moves moves_buf_;
  std::vector<std::pair<int32_t, int32_t>> targets_;  // (root move, visits left)
};

}  // namespace saz
