#include "tree.hpp"

#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include "bindings.hpp"

namespace saz {

enum : uint8_t { OPEN = 0, PENDING = 1, SETTLED = 2 };

// The order of an expansion's edges: descending prior; ties by move (the candidates' order).
static bool by_prior(const Edge& a, const Edge& b) {
  return a.prior > b.prior || (a.prior == b.prior && a.move < b.move);
}

// -- building -------------------------------------------------------------------------------------

void Tree::reset(const Position& pos) {
  clear();
  root_pos_ = pos.clone();
  scratch_ = pos.clone();
  root_ = new_node();
}

void Tree::clear() {
  batches_.clear();
  targets_.clear();
  discard();
  root_pos_.reset();
  scratch_.reset();
  full_ = false;
}

void Tree::discard() {
  // Free the old tree off the search's clock: a large tree is thousands of chunks.
  if (nodes_.size() < (int64_t(1) << 16)) {
    nodes_.clear();
    edges_.clear();
    return;
  }
  NodeChunks nodes;
  EdgeChunks edges;
  nodes.swap(nodes_);
  edges.swap(edges_);
  std::thread([n = std::move(nodes), e = std::move(edges)]() mutable {
    n.clear();
    e.clear();
  }).detach();
}

int32_t Tree::new_node() {
  int32_t i = int32_t(nodes_.alloc(1));
  nodes_[i] = Node();
  return i;
}

bool Tree::advance(const std::vector<int32_t>& moves, const Position& pos) {
  if (!root_pos_ || !batches_.empty()) return false;
  int32_t at = root_;
  for (int32_t move : moves) {
    at = child_of(node(at), move);
    if (at < 0) return false;
  }
  if (at != root_) {
    NodeChunks nodes;
    EdgeChunks edges;
    copy_subtree(at, nodes, edges);
    discard();
    nodes_.swap(nodes);
    edges_.swap(edges);
    root_ = 0;
  }
  Node& root = node(root_);
  if (root.state == SETTLED) root.state = OPEN;  // a proven result is still a position to move from
  root_pos_ = pos.clone();
  scratch_ = pos.clone();
  full_ = false;
  targets_.clear();
  return true;
}

int32_t Tree::child_of(const Node& nd, int32_t move) const {
  for (int i = 0; i < nd.tried; ++i)
    if (edges_[nd.edges + i].move == move) return edges_[nd.edges + i].child;
  return -1;
}

void Tree::copy_subtree(int32_t from, NodeChunks& nodes, EdgeChunks& edges) const {
  // Breadth-first: copy each node, then give it a fresh edge block whose children point into
  // the new arrays. The queue pairs an old node with its new index.
  std::vector<std::pair<int32_t, int32_t>> queue;
  int32_t root = int32_t(nodes.alloc(1));
  nodes[root] = node(from);
  queue.emplace_back(from, root);
  for (size_t q = 0; q < queue.size(); ++q) {
    auto [old_i, new_i] = queue[q];
    const Node& old_n = node(old_i);
    if (old_n.edges < 0) continue;
    int32_t block = int32_t(edges.alloc(old_n.num_edges));
    nodes[new_i].edges = block;
    for (int k = 0; k < old_n.num_edges; ++k) {
      Edge e = edges_[old_n.edges + k];
      if (e.child >= 0) {
        int32_t c = int32_t(nodes.alloc(1));
        nodes[c] = node(e.child);
        queue.emplace_back(e.child, c);
        e.child = c;
      }
      edges[block + k] = e;
    }
  }
}

void Tree::sort_more(Node& nd, bool all) {
  const int n = nd.num_edges, from = nd.sorted;
  if (from >= n) return;
  // Chunks double with the children tried, so a much-visited node ends up fully sorted after
  // a few steps and a leaf visited once sorts only its first 8 edges.
  const int to = all ? n : std::min(n, from + std::max(8, int(nd.tried)));
  Edge* e = &edges_[nd.edges];
  if (to < n) std::nth_element(e + from, e + to, e + n, by_prior);
  std::sort(e + from, e + to, by_prior);
  nd.sorted = uint16_t(to);
}

// -- descending -----------------------------------------------------------------------------------

int Tree::select(const Node& parent, bool at_root) const {
  // PUCT over the tried prefix and the first untried edge (the best unvisited one, see the
  // header). A child whose side to move is proven to win (SETTLED at +1) is a proven loss for
  // the parent: another visit could only confirm it, so it is skipped unless all are.
  const int tried = parent.tried;
  const int n_parent = parent.n;
  const double c_sqrt = options_.c_puct * std::sqrt(double(n_parent > 0 ? n_parent : 1));
  const double fpu = (n_parent ? -parent.w / n_parent : 0.0) - options_.fpu_reduction;
  int best_i = -1;
  double best = -1e300;
  if (at_root && options_.forced_playouts_k > 0.0f) {
    // Forced playouts: a visited child below sqrt(k P N) visits is taken first (KataGo).
    for (int i = 0; i < tried; ++i) {
      const Edge& e = edges_[parent.edges + i];
      const Node& child = node(e.child);
      if (child.state == SETTLED && child.exact == 1.0f) continue;
      if (child.n < std::sqrt(double(options_.forced_playouts_k) * e.prior * n_parent)) return i;
    }
  }
  if (tried < parent.num_edges) {
    best_i = tried;
    best = fpu + c_sqrt * edges_[parent.edges + tried].prior;
  }
  for (int i = 0; i < tried; ++i) {
    const Edge& e = edges_[parent.edges + i];
    const Node& child = node(e.child);
    if (child.state == SETTLED && child.exact == 1.0f) continue;
    const int n = child.n;
    double score = (n ? child.w / n : fpu) + c_sqrt * e.prior / (1 + n);
    if (score > best) {
      best = score;
      best_i = i;
    }
  }
  return best_i >= 0 ? best_i : 0;
}

int Tree::next_target(int& edge) const {
  int best = -1;
  for (int t = 0; t < int(targets_.size()); ++t)
    if (targets_[t].second > 0 && (best < 0 || targets_[t].second > targets_[best].second))
      best = t;
  if (best < 0) return -1;
  const Node& r = node(root_);
  edge = 0;  // set_root_targets checked that the move is a root edge
  while (edges_[r.edges + edge].move != targets_[best].first) ++edge;
  return best;
}

bool Tree::room_for_leaf(int64_t edges) const {
  if (nodes_.size() + 1 > options_.max_nodes) return false;
  int64_t extra = (nodes_.needs_chunk(1) ? nodes_.kBytes : 0) +
                  (edges_.needs_chunk(edges) ? edges_.kBytes : 0);
  return extra == 0 || bytes() + extra <= options_.max_bytes;
}

void Tree::candidates(Position& pos) {
  // An unexpanded root gets what `settle` gives every other new node: the forced moves; unless
  // the side to move wins by fours itself, the moves that may stop the opponent's win by fours
  // (any other loses to it); else every move. When nothing stops a threat, every legal move
  // stays: the game is lost, but a move is due.
  if (pos.forced_moves(moves_buf_) && !moves_buf_.empty()) return;
  if (options_.threat_nodes > 0 &&
      pos.prove_threats(options_.threat_nodes, false).status != Solution::SOLVED &&
      pos.threat_defences(moves_buf_, options_.threat_nodes) && !moves_buf_.empty())
    return;
  pos.search_moves(moves_buf_);
}

void Tree::settle(Node& leaf, Position& pos) {
  // The rules' exact knowledge of a new node: the game is over, the side to move wins at once,
  // the endgame solver proves the result, or it is lost because no move stops the opponent's
  // win. The forced moves asked for on the way are the expansion's candidates: asking the rules
  // again would cost Othello's two-ply check and Gomoku's threat scan twice a leaf.
  if (pos.is_over()) {
    int w = pos.winner();
    leaf.state = SETTLED;
    leaf.exact = w == DRAW ? 0.0f : (w == pos.to_move() ? 1.0f : -1.0f);
    return;
  }
  pos.winning_moves(moves_buf_);
  if (!moves_buf_.empty()) {
    leaf.state = SETTLED;
    leaf.exact = 1.0f;
    return;
  }
  // Near the end, the solver's proof replaces the network's guess (Othello's endgame).
  if (options_.solve_empties > 0 && pos.num_empty() <= options_.solve_empties) {
    const Solution s = pos.solve(options_.solve_nodes, false);
    if (s.status == Solution::SOLVED) {
      leaf.state = SETTLED;
      leaf.exact = float(s.value);
      return;
    }
  }
  const bool forced = pos.forced_moves(moves_buf_);
  if (forced) {
    if (moves_buf_.empty()) {
      leaf.state = SETTLED;
      leaf.exact = -1.0f;
    }
    return;
  }
  // Deeper threats (Gomoku): a win by fours, or the opponent's, whose defences are then all the
  // moves worth searching.
  if (options_.threat_nodes > 0) {
    if (pos.prove_threats(options_.threat_nodes, false).status == Solution::SOLVED) {
      leaf.state = SETTLED;
      leaf.exact = 1.0f;
      return;
    }
    if (pos.threat_defences(moves_buf_, options_.threat_nodes)) {
      if (moves_buf_.empty()) {
        leaf.state = SETTLED;
        leaf.exact = -1.0f;
      }
      return;
    }
  }
  pos.search_moves(moves_buf_);  // no threat: every move worth searching is a candidate
}

void Tree::propagate(const std::vector<int32_t>& path) {
  for (size_t k = path.size() - 1; k > 0; --k) {
    const Node& child = node(path[k]);
    Node& parent = node(path[k - 1]);
    if (child.state != SETTLED || parent.state != OPEN) return;
    if (child.exact == -1.0f) {  // the move into `child` wins
      parent.state = SETTLED;
      parent.exact = 1.0f;
      continue;
    }
    if (child.exact != 1.0f || parent.tried < parent.num_edges) return;
    for (int i = 0; i < parent.tried; ++i) {
      const Node& c = node(edges_[parent.edges + i].child);
      if (c.state != SETTLED || c.exact != 1.0f) return;
    }
    parent.state = SETTLED;  // every move loses
    parent.exact = -1.0f;
  }
}

int Tree::root_proven() const {
  if (!root_pos_) return 0;
  const Node& root = node(root_);
  if (root.state == SETTLED && (root.exact == 1.0f || root.exact == -1.0f)) return int(root.exact);
  if (root.edges < 0 || root.state != OPEN) return 0;
  if (root_proven_move() >= 0) return 1;
  if (root.tried < root.num_edges) return 0;
  for (int i = 0; i < root.tried; ++i) {
    const Node& c = node(edges_[root.edges + i].child);
    if (c.state != SETTLED || c.exact != 1.0f) return 0;
  }
  return -1;
}

bool Tree::settle_root_move(int32_t move, float exact) {
  if (!root_expanded() || !batches_.empty()) return false;
  Node& root = node(root_);
  int i = 0;
  while (i < root.num_edges && edges_[root.edges + i].move != move) ++i;
  if (i == root.num_edges) return false;
  if (i >= root.tried) {  // make it the last tried edge, then restore the untried order
    if (!room_for_leaf(0)) return false;
    const int32_t child = new_node();
    Node& r = node(root_);
    std::swap(edges_[r.edges + i], edges_[r.edges + r.tried]);
    edges_[r.edges + r.tried].child = child;
    i = r.tried++;
    std::sort(&edges_[r.edges + r.tried], &edges_[r.edges + r.num_edges], by_prior);
    r.sorted = r.num_edges;
  }
  Node& c = node(edges_[node(root_).edges + i].child);
  c.state = SETTLED;
  c.exact = exact;
  return true;
}

int32_t Tree::root_proven_move() const {
  if (!root_pos_) return -1;
  const Node& root = node(root_);
  if (root.edges < 0) return -1;
  for (int i = 0; i < root.tried; ++i) {
    const Edge& e = edges_[root.edges + i];
    const Node& c = node(e.child);
    if (c.state == SETTLED && c.exact == -1.0f) return e.move;
  }
  return -1;
}

void Tree::backup(const std::vector<int32_t>& path, double value, int vl) {
  // `value` is from the leaf's side to move's view; a node's statistics are from the view of the
  // player who moved into it.
  double v = -value;
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    Node& nd = node(*it);
    nd.n += 1 - vl;
    nd.w += v + vl;
    v = -v;
  }
}

Collected Tree::collect(int max_leaves, int max_descents, float* x) {
  Collected done;
  full_ = false;
  if (!root_pos_) return done;
  const int vl = options_.virtual_loss;
  const int64_t row = int64_t(root_pos_->num_nodes()) * root_pos_->num_features();
  Position& pos = *scratch_;
  pos.set_planes_read(options_.planes_read);
  Batch batch;
  batch.offsets.push_back(0);
  std::vector<int32_t> path;
  for (int d = 0; d < max_descents && done.leaves < max_leaves; ++d) {
    // With root targets the descent leaves the root by the target with the most visits left.
    int target = -1, target_edge = -1;
    bool spent = false;  // whether this descent took a visit of `target`
    if (!targets_.empty()) {
      target = next_target(target_edge);
      if (target < 0) break;  // every root target is spent
    }
    path.clear();
    int32_t at = root_;
    int played = 0;
    bool created = false;
    bool settled = false;  // settle looked at the new leaf: moves_buf_ holds its candidates
    Node* nd = &node(at);
    nd->n += vl;
    nd->w -= vl;
    path.push_back(at);
    if (nd->edges < 0 && nd->state == OPEN) {
      created = true;  // an unexpanded root is the first leaf
    } else {
      while (nd->state == OPEN && nd->edges >= 0) {
        const bool targeted = at == root_ && target >= 0;
        int i = targeted ? target_edge : select(*nd, at == root_);
        int32_t child;
        int64_t edge_at = nd->edges + i;
        if (i < nd->tried) {
          child = edges_[edge_at].child;
        } else {
          if (!room_for_leaf(pos.max_moves())) {
            full_ = true;
            break;
          }
          if (i > nd->tried) {
            // A target's untried move goes first among the untried ones, the others keeping
            // their order (set_root_targets sorted them all), so the tried stay a prefix.
            Edge* e = &edges_[nd->edges];
            std::rotate(e + nd->tried, e + i, e + i + 1);
            i = nd->tried;
            edge_at = nd->edges + i;
          }
          child = new_node();
          nd = &node(at);  // the chunk table may have grown
          edges_[edge_at].child = child;
          nd->tried += 1;
          if (nd->tried >= nd->sorted) sort_more(*nd);
          created = true;
        }
        if (targeted) {
          --targets_[target].second;
          spent = true;
        }
        pos.play(edges_[edge_at].move);
        ++played;
        at = child;
        nd = &node(at);
        nd->n += vl;
        nd->w -= vl;
        path.push_back(at);
        if (created) {
          settle(*nd, pos);
          settled = true;
          break;
        }
      }
    }
    // A descent that adds no leaf gives back its virtual loss and its moves.
    auto take_back = [&] {
      for (int32_t i : path) {
        node(i).n -= vl;
        node(i).w += vl;
      }
      for (int k = 0; k < played; ++k) pos.undo();
      if (spent) ++targets_[target].second;
    };
    if (full_ && !created) {  // stopped for want of room
      take_back();
      break;
    }
    if (nd->state == SETTLED) {
      backup(path, nd->exact, vl);
      propagate(path);
      ++done.settled;
    } else if (created) {
      if (!settled) candidates(pos);  // an unexpanded root, which no descent settles
      nd->state = PENDING;
      nd->edges = int32_t(edges_.alloc(int64_t(moves_buf_.size())));
      nd->num_edges = uint16_t(moves_buf_.size());
      batch.candidates.insert(batch.candidates.end(), moves_buf_.begin(), moves_buf_.end());
      for (int32_t move : moves_buf_) batch.indices.push_back(pos.policy_index(move));
      batch.offsets.push_back(int32_t(batch.candidates.size()));
      pos.encode(x + row * done.leaves);
      batch.paths.push_back(path);
      ++done.leaves;
    } else {  // the leaf already waits for the network in this or an earlier batch
      take_back();
      ++done.collisions;
      break;
    }
    for (int k = 0; k < played; ++k) pos.undo();
    if (full_) break;
  }
  if (done.leaves) batches_.push_back(std::move(batch));
  return done;
}

void Tree::absorb(const float* log_policy, const float* values, int group, float blend) {
  if (batches_.empty()) throw std::logic_error("absorb without a collected batch");
  Batch batch = std::move(batches_.front());
  batches_.pop_front();
  const int stride = root_pos_->policy_size();
  const int vl = options_.virtual_loss;
  std::vector<float> priors, sub;
  for (size_t j = 0; j < batch.paths.size(); ++j) {
    Node& leaf = node(batch.paths[j].back());
    const int32_t* cand = batch.candidates.data() + batch.offsets[j];
    const int32_t* index = batch.indices.data() + batch.offsets[j];
    const int k = batch.offsets[j + 1] - batch.offsets[j];
    const int64_t r = int64_t(j) * group;
    // Softmax of the network's log-policy over the candidates, shifted by their maximum so that
    // it stays exact when the network puts almost no mass on them.
    auto softmax = [&](const float* lp, std::vector<float>& out) {
      out.resize(k);
      float top = -3.0e38f;
      for (int i = 0; i < k; ++i) top = std::max(top, lp[index[i]]);
      float total = 0.0f;
      for (int i = 0; i < k; ++i) total += out[i] = std::exp(lp[index[i]] - top);
      const float scale = 1.0f / total;
      for (int i = 0; i < k; ++i) out[i] *= scale;
    };
    softmax(log_policy + r * stride, priors);
    if (group > 1) {
      std::vector<float> mean(k, 0.0f);
      for (int s = 1; s < group; ++s) {
        softmax(log_policy + (r + s) * stride, sub);
        for (int i = 0; i < k; ++i) mean[i] += sub[i];
      }
      for (int i = 0; i < k; ++i)
        priors[i] = (1.0f - blend) * priors[i] + blend * mean[i] / float(group - 1);
    }
    // Candidates in their order (ascending moves), then the best few sorted to the front.
    for (int i = 0; i < k; ++i) edges_[leaf.edges + i] = Edge{cand[i], float(priors[i]), -1};
    leaf.tried = 0;
    leaf.sorted = 0;
    // The root is sorted in full: it is visited most, and results and noise read its edges.
    sort_more(leaf, batch.paths[j].size() == 1);
    leaf.state = OPEN;
    backup(batch.paths[j], values[r], vl);
  }
}

// -- the root -------------------------------------------------------------------------------------

double Tree::root_value() const {
  if (!root_pos_) return 0.0;
  const Node& r = node(root_);
  return r.n ? -r.w / r.n : 0.0;
}

std::vector<ChildStats> Tree::root_children() const {
  std::vector<ChildStats> out;
  if (!root_expanded()) return out;
  const Node& r = node(root_);
  for (int i = 0; i < r.tried; ++i) {
    const Edge& e = edges_[r.edges + i];
    const Node& c = node(e.child);
    if (c.n <= 0) continue;
    out.push_back(ChildStats{e.move, c.n, c.w / c.n, e.prior});
  }
  return out;
}

std::vector<std::pair<int32_t, float>> Tree::root_settled() const {
  std::vector<std::pair<int32_t, float>> out;
  if (!root_expanded()) return out;
  const Node& r = node(root_);
  for (int i = 0; i < r.tried; ++i) {
    const Edge& e = edges_[r.edges + i];
    const Node& c = node(e.child);
    if (c.state == SETTLED) out.emplace_back(e.move, -c.exact);
  }
  return out;
}

void Tree::root_edges(std::vector<int32_t>& moves, std::vector<float>& priors) const {
  moves.clear();
  priors.clear();
  if (!root_expanded()) return;
  const Node& r = node(root_);
  for (int i = 0; i < r.num_edges; ++i) {
    moves.push_back(edges_[r.edges + i].move);
    priors.push_back(edges_[r.edges + i].prior);
  }
}

void Tree::set_root_priors(const std::vector<float>& priors) {
  if (!root_expanded()) throw std::logic_error("the root is not expanded");
  Node& r = node(root_);
  if (int(priors.size()) != r.num_edges) throw std::invalid_argument("one prior per root edge");
  for (int i = 0; i < r.num_edges; ++i) edges_[r.edges + i].prior = priors[i];
  // The untried edges back in descending order of prior (ties: by move).
  std::sort(&edges_[r.edges + r.tried], &edges_[r.edges + r.num_edges], by_prior);
  r.sorted = r.num_edges;
}

void Tree::restrict_root(const std::vector<int32_t>& allowed) {
  if (!root_expanded()) return;
  Node& r = node(root_);
  if (r.tried > 0) return;
  std::vector<Edge> kept;
  double total = 0.0;
  for (int i = 0; i < r.num_edges; ++i) {
    const Edge& e = edges_[r.edges + i];
    if (std::find(allowed.begin(), allowed.end(), e.move) != allowed.end()) {
      kept.push_back(e);
      total += e.prior;
    }
  }
  if (kept.empty()) return;  // the rules forced other moves: keep them rather than have none
  targets_.clear();  // they may name moves no longer there
  for (size_t i = 0; i < kept.size(); ++i) {
    kept[i].prior = total > 0 ? float(kept[i].prior / total) : 1.0f / kept.size();
    edges_[r.edges + i] = kept[i];
  }
  r.num_edges = uint16_t(kept.size());
  std::sort(&edges_[r.edges], &edges_[r.edges + r.num_edges], by_prior);
  r.sorted = r.num_edges;
}

void Tree::set_root_targets(const std::vector<int32_t>& moves,
                            const std::vector<int32_t>& visits) {
  if (moves.size() != visits.size())
    throw std::invalid_argument("one visit count per root target");
  if (moves.empty()) {
    targets_.clear();
    return;
  }
  if (!root_expanded()) throw std::logic_error("the root is not expanded");
  Node& r = node(root_);
  std::vector<std::pair<int32_t, int32_t>> targets;
  for (size_t t = 0; t < moves.size(); ++t) {
    int i = 0;
    while (i < r.num_edges && edges_[r.edges + i].move != moves[t]) ++i;
    if (i == r.num_edges) throw std::invalid_argument("a root target is not a root move");
    if (visits[t] < 0) throw std::invalid_argument("a root target's visits must be >= 0");
    for (const auto& [move, _] : targets)
      if (move == moves[t]) throw std::invalid_argument("a root target is named twice");
    targets.emplace_back(moves[t], visits[t]);
  }
  sort_more(r, true);  // an untried target is rotated into place: the order must be whole
  targets_ = std::move(targets);
}

std::vector<int32_t> Tree::principal_variation(int32_t move, int limit) const {
  std::vector<int32_t> line;
  if (!root_expanded()) return line;
  int32_t at = child_of(node(root_), move);
  while (at >= 0 && int(line.size()) < limit) {
    const Node& nd = node(at);
    int32_t best = -1, best_move = -1, best_n = 0;
    for (int i = 0; i < nd.tried; ++i) {
      const Edge& e = edges_[nd.edges + i];
      if (node(e.child).n > best_n) {
        best_n = node(e.child).n;
        best = e.child;
        best_move = e.move;
      }
    }
    if (best < 0) break;
    line.push_back(best_move);
    at = best;
  }
  return line;
}

int32_t Tree::visits_at(const std::vector<int32_t>& moves) const {
  if (!root_pos_) return -1;
  int32_t at = root_;
  for (int32_t move : moves) {
    at = child_of(node(at), move);
    if (at < 0) return -1;
  }
  return node(at).n;
}

std::string Tree::validate() const {
  if (!root_pos_) return "";
  std::vector<int32_t> stack{root_};
  while (!stack.empty()) {
    int32_t at = stack.back();
    stack.pop_back();
    const Node& nd = node(at);
    std::string where = "node " + std::to_string(at) + ": ";
    if (nd.n < 0) return where + "negative visits";
    if (nd.state == PENDING) return where + "still waits for the network";
    if (nd.state != OPEN || nd.edges < 0) continue;
    if (nd.tried > nd.num_edges) return where + "more tried edges than edges";
    if (nd.tried >= nd.sorted && nd.sorted < nd.num_edges)
      return where + "the next untried edge is not sorted yet";
    int64_t children = 0;
    for (int i = 0; i < nd.num_edges; ++i) {
      const Edge& e = edges_[nd.edges + i];
      if ((i < nd.tried) != (e.child >= 0)) return where + "visited children are not a prefix";
      if (i > nd.tried && i < nd.sorted && e.prior > edges_[nd.edges + i - 1].prior)
        return where + "untried moves are not in descending order of prior";
      if (i >= nd.sorted && nd.sorted > 0 && e.prior > edges_[nd.edges + nd.sorted - 1].prior)
        return where + "an unsorted move has a higher prior than the sorted ones";
      if (e.child >= 0) {
        children += node(e.child).n;
        stack.push_back(e.child);
      }
    }
    if (nd.n != 1 + children)
      return where + std::to_string(nd.n) + " visits, children " + std::to_string(children);
  }
  return "";
}

// -- bindings -------------------------------------------------------------------------------------

using Batch3 = nb::ndarray<float, nb::ndim<3>, nb::c_contig, nb::device::cpu>;
using Rows2 = nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using Values1 = nb::ndarray<const float, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

void bind_tree(nb::module_& m) {
  nb::class_<TreeOptions>(m, "TreeOptions", "The tree's search constants and limits.")
      .def(nb::init<>())
      .def_rw("c_puct", &TreeOptions::c_puct)
      .def_rw("fpu_reduction", &TreeOptions::fpu_reduction)
      .def_rw("virtual_loss", &TreeOptions::virtual_loss)
      .def_rw("forced_playouts_k", &TreeOptions::forced_playouts_k)
      .def_rw("max_bytes", &TreeOptions::max_bytes)
      .def_rw("max_nodes", &TreeOptions::max_nodes)
      .def_rw("solve_empties", &TreeOptions::solve_empties)
      .def_rw("solve_nodes", &TreeOptions::solve_nodes)
      .def_rw("threat_nodes", &TreeOptions::threat_nodes)
      .def_rw("planes_read", &TreeOptions::planes_read);

  nb::class_<Tree>(m, "Tree", "The search tree as flat arrays with a byte budget (tree.hpp).")
      .def(nb::init<const TreeOptions&>(), nb::arg("options"))
      .def_prop_rw("options", &Tree::options, &Tree::set_options)
      .def("reset", &Tree::reset, nb::arg("position"))
      .def("advance", &Tree::advance, nb::arg("moves"), nb::arg("position"))
      .def("clear", &Tree::clear)
      .def_prop_ro("has_root", &Tree::has_root)
      .def(
          "collect",
          [](Tree& t, int max_leaves, int max_descents, Batch3 x) {
            const Position* pos = t.root_position();
            if (!pos) throw nb::value_error("the tree has no root: call reset() first");
            if (x.shape(0) < size_t(max_leaves) || x.shape(1) != size_t(pos->num_nodes()) ||
                x.shape(2) != size_t(pos->num_features()))
              throw nb::value_error("collect needs x of shape [>= max_leaves, num_nodes, features]");
            Collected c;
            {
              nb::gil_scoped_release release;
              c = t.collect(max_leaves, max_descents, x.data());
            }
            return std::make_tuple(c.leaves, c.settled, c.collisions);
          },
          nb::arg("max_leaves"), nb::arg("max_descents"), nb::arg("x"),
          "(leaves, settled, collisions): new leaves encoded into x[:leaves], as one batch.")
      .def(
          "absorb",
          [](Tree& t, Rows2 log_policy, Values1 values, int group, float blend) {
            if (!t.root_position()) throw nb::value_error("the tree has no root: call reset() first");
            if (log_policy.shape(0) != values.shape(0) ||
                log_policy.shape(1) != size_t(t.root_position()->policy_size()))
              throw nb::value_error(
                  "absorb needs log_policy [rows, policy_size] and values [rows]");
            nb::gil_scoped_release release;
            t.absorb(log_policy.data(), values.data(), group, blend);
          },
          nb::arg("log_policy"), nb::arg("values"), nb::arg("group") = 1, nb::arg("blend") = 0.0f)
      .def_prop_ro("pending_batches", &Tree::pending_batches)
      .def_prop_ro("root_expanded", &Tree::root_expanded)
      .def_prop_ro("root_visits", &Tree::root_visits)
      .def_prop_ro("root_value", &Tree::root_value)
      .def_prop_ro("root_proven", &Tree::root_proven,
                   "+1 / -1 when the root's result is proven by settled children, else 0.")
      .def("settle_root_move", &Tree::settle_root_move, nb::arg("move"), nb::arg("exact"),
           "Settle the root's child for `move` at `exact` (its side to move's value).")
      .def_prop_ro("root_proven_move", &Tree::root_proven_move,
                   "A root move proven to win (its child settled as lost), -1 when none.")
      .def("root_children",
           [](const Tree& t) {
             std::vector<std::tuple<int, int, double, float>> out;
             for (const ChildStats& c : t.root_children())
               out.emplace_back(c.move, c.visits, c.value, c.prior);
             return out;
           },
           "[(move, visits, value for the root's side to move, prior)] of the visited moves.")
      .def("root_settled", &Tree::root_settled,
           "[(move, proven value for the root's side to move)] of the root's settled children.")
      .def("root_edges",
           [](const Tree& t) {
             std::vector<int32_t> moves;
             std::vector<float> priors;
             t.root_edges(moves, priors);
             return std::make_pair(moves, priors);
           })
      .def("set_root_priors", &Tree::set_root_priors, nb::arg("priors"))
      .def("restrict_root", &Tree::restrict_root, nb::arg("allowed"))
      .def("set_root_targets", &Tree::set_root_targets, nb::arg("moves"), nb::arg("visits"),
           "The next descents leave the root by `moves` only, each at most `visits` more "
           "times, the most left first; collect stops once all are spent. Empty: PUCT.")
      .def("root_targets", &Tree::root_targets,
           "[(move, visits left)] of the root targets, in the order they were set.")
      .def("principal_variation", &Tree::principal_variation, nb::arg("move"),
           nb::arg("limit") = 32)
      .def("visits_at", &Tree::visits_at, nb::arg("moves"))
      .def("validate", &Tree::validate)
      .def_prop_ro("num_nodes", &Tree::num_nodes)
      .def_prop_ro("bytes", &Tree::bytes)
      .def_prop_ro("full", &Tree::full);
}

}  // namespace saz
