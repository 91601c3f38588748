// The Python module saz.engine._core: the Position interface every game shares, perft, and each
// game's and the tree's own bindings (bound in their translation units).
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/tuple.h>

#include <optional>
#include <tuple>

#include "bindings.hpp"

namespace saz {
namespace {

// Raise the Python GameError subclass (engine/games/errors.py) that matches a C++ rule error.
void translate_errors(const std::exception_ptr& p, void*) {
  nb::module_ errors = nb::module_::import_("saz.engine.games.errors");
  try {
    std::rethrow_exception(p);
  } catch (const IllegalMove& e) {
    nb::object err = errors.attr("IllegalMoveError")(e.move, e.reason);
    PyErr_SetObject(err.type().ptr(), err.ptr());
  } catch (const UndoError& e) {
    PyErr_SetString(errors.attr("UndoError").ptr(), e.what());
  } catch (const UnsupportedSize& e) {
    PyErr_SetString(errors.attr("UnsupportedSizeError").ptr(), e.what());
  } catch (const UnsupportedRule& e) {
    PyErr_SetString(errors.attr("UnsupportedRuleError").ptr(), e.what());
  } catch (const GameError& e) {
    PyErr_SetString(errors.attr("GameError").ptr(), e.what());
  }
}

using FloatRows = nb::ndarray<float, nb::ndim<2>, nb::c_contig, nb::device::cpu>;

// Run one of the position's searches (`solve`, `prove_threats`) without the GIL and return its
// Solution as the bindings give it: (status, move, value, nodes).
template <typename Search>
std::tuple<int, int32_t, int32_t, int64_t> searched(Search&& search) {
  Solution s;
  {
    nb::gil_scoped_release release;
    s = search();
  }
  return std::make_tuple(int(s.status), s.move, s.value, s.nodes);
}

void check_rows(const Position& pos, const FloatRows& out) {
  if (out.shape(0) != static_cast<size_t>(pos.num_nodes()) ||
      out.shape(1) != static_cast<size_t>(pos.num_features()))
    throw nb::value_error("encode needs a float32 C-contiguous array [num_nodes, num_features]");
}

}  // namespace
}  // namespace saz

NB_MODULE(_core, m) {
  using namespace saz;
  m.doc() = "saz's compiled core: the rules, Zobrist hashing, feature encoding and search tree.";
  nb::register_exception_translator(translate_errors);
  // Objects still referenced from reference cycles when the interpreter exits (an engine and
  // the positions and tree it holds) are not freed by Python's shutdown; nanobind would list
  // them on stderr, which a Gomocup brain or GTP engine must keep to its own log lines.
  nb::set_leak_warnings(false);

  nb::class_<Position>(m, "Position",
                       "A position and its history under one game's rules (see position.hpp).")
      .def_prop_ro("width", &Position::width)
      .def_prop_ro("height", &Position::height)
      .def_prop_ro("num_points", &Position::num_points)
      .def_prop_ro("num_features", &Position::num_features)
      .def_prop_ro("to_move", &Position::to_move)
      .def_prop_ro("hash", &Position::hash)
      .def_prop_ro("ply", &Position::ply)
      .def_prop_ro("num_empty", &Position::num_empty)
      .def("board",
           [](const Position& p) {
             auto* data = new int8_t[p.num_points()];
             p.board(data);
             nb::capsule owner(data, [](void* q) noexcept { delete[] static_cast<int8_t*>(q); });
             return nb::ndarray<nb::numpy, int8_t, nb::ndim<1>>(
                 data, {static_cast<size_t>(p.num_points())}, owner);
           },
           "Stones per point as a new int8 array (BLACK 1, WHITE -1, EMPTY 0).")
      .def("legal_moves",
           [](const Position& p) {
             Moves moves;
             p.legal_moves(moves);
             return to_numpy(moves);
           })
      .def("search_moves",
           [](const Position& p) {
             Moves moves;
             p.search_moves(moves);
             return to_numpy(moves);
           })
      .def("urgent_moves",
           [](const Position& p) {
             Moves moves;
             p.urgent_moves(moves);
             return to_numpy(moves);
           })
      .def("is_legal", &Position::is_legal, nb::arg("move"))
      .def("play", &Position::play, nb::arg("move"))
      .def("undo", &Position::undo)
      .def("switch_turn", &Position::switch_turn)
      .def("is_over", &Position::is_over)
      .def("winner", &Position::winner)
      .def("winning_moves",
           [](const Position& p) {
             Moves moves;
             p.winning_moves(moves);
             return std::vector<int>(moves.begin(), moves.end());
           })
      .def("forced_moves",
           [](const Position& p) -> std::optional<std::vector<int>> {
             Moves moves;
             if (!p.forced_moves(moves)) return std::nullopt;
             return std::vector<int>(moves.begin(), moves.end());
           })
      .def("encode",
           [](const Position& p, FloatRows out) {
             check_rows(p, out);
             p.encode(out.data());
           },
           nb::arg("out"))
      .def_prop_ro("policy_size", &Position::policy_size,
                   "The network's policy width: num_nodes, or chess's move pairs.")
      .def("policy_indices",
           [](const Position& p, nb::ndarray<const int32_t, nb::ndim<1>, nb::c_contig> moves) {
             const size_t n = moves.shape(0);
             auto* data = new int32_t[n ? n : 1];
             for (size_t i = 0; i < n; ++i) data[i] = p.policy_index(moves(i));
             nb::capsule owner(data, [](void* q) noexcept { delete[] static_cast<int32_t*>(q); });
             return nb::ndarray<nb::numpy, int32_t, nb::ndim<1>>(data, {n}, owner);
           },
           nb::arg("moves"),
           "Each move's index in the policy (side to move's frame), as a new int32 array.")
      .def("clone", &Position::clone)
      .def("perft",
           [](Position& p, int depth) {
             uint64_t plays = 0, leaves;
             {
               nb::gil_scoped_release release;
               leaves = perft(p, depth, plays);
             }
             return std::make_tuple(leaves, plays);
           },
           nb::arg("depth"), "(leaves, moves played) `depth` plies below; the position is restored.")
      .def("solve",
           [](const Position& p, int64_t max_nodes, bool exact, double max_seconds) {
             return searched([&] { return p.solve(max_nodes, exact, max_seconds); });
           },
           nb::arg("max_nodes"), nb::arg("exact") = true, nb::arg("max_seconds") = 0.0,
           "(status, move, value, nodes) of an exact endgame solve (position.hpp's Solution; "
           "status 0: the game has no solver, 1: out of nodes or past max_seconds > 0, 2: "
           "solved).")
      .def("prove_threats",
           [](Position& p, int64_t max_nodes, bool threes) {
             return searched([&] { return p.prove_threats(max_nodes, threes); });
           },
           nb::arg("max_nodes"), nb::arg("threes") = true,
           "(status, move, value, nodes) of a threat-space search for a forced win (status 0: "
           "the game has none, 1: no win found, 2: proven win by `move`); the position is "
           "restored.")
      .def("threat_defences",
           [](Position& p, int64_t max_nodes) -> std::optional<std::vector<int>> {
             Moves moves;
             bool threat;
             {
               nb::gil_scoped_release release;
               threat = p.threat_defences(moves, max_nodes);
             }
             if (!threat) return std::nullopt;
             return std::vector<int>(moves.begin(), moves.end());
           },
           nb::arg("max_nodes"),
           "None when the opponent has no win by fours found; else the moves that may stop it "
           "(empty: none does).");

  bind_othello(m);
  bind_gomoku(m);
  bind_go(m);
  bind_chess(m);
  bind_tree(m);
  bind_digest(m);
}
