"""The board-to-graph encoding: edge list, scatter-free tables and batch assembly agree."""
from __future__ import annotations

import argparse

import numpy as np
import pytest

from saz.engine.games.grid import SizeSyntaxError, grid, parse_size, parse_sizes
from saz.engine.graph import MAX_IN_DEGREE, encode, layout, move_priors
from saz.engine.model_card import MASKED_LOG_PROB

SIZES = [(2, 2), (3, 3), (5, 5), (9, 9), (15, 15), (19, 19), (7, 4), (4, 9)]


@pytest.mark.parametrize("w,h", SIZES)
def test_edge_count(w: int, h: int) -> None:
    n = w * h
    orthogonal = 2 * ((w - 1) * h + w * (h - 1))
    assert layout(w, h).edge_index.shape == (2, orthogonal + 2 * n)


@pytest.mark.parametrize("w,h", SIZES)
def test_tables_aggregate_like_the_edge_list(w: int, h: int) -> None:
    """Summing messages through nbr/hub equals a scatter-add over edge_index (what PyG computes)."""
    lay = layout(w, h)
    rng = np.random.default_rng(w * 100 + h)
    feats = rng.normal(size=(lay.num_nodes, 3))
    src, dst = lay.edge_index
    expected = np.zeros_like(feats)
    np.add.at(expected, dst, feats[src])
    padded = np.vstack([feats, np.zeros((1, 3))])
    got_points = padded[lay.nbr].sum(axis=1)
    got_extra = lay.hub @ feats
    np.testing.assert_allclose(got_points, expected[:-1])
    np.testing.assert_allclose(got_extra[0], expected[-1])


def test_corner_and_edge_neighbours() -> None:
    g = grid(4, 3)  # points: row 0 = 0..3, row 1 = 4..7, row 2 = 8..11
    assert sorted(g.neighbors[0]) == [1, 4]
    assert sorted(g.neighbors[3]) == [2, 7]
    assert sorted(g.neighbors[5]) == [1, 4, 6, 9]
    assert sorted(g.neighbors[11]) == [7, 10]
    assert g.neighbor_table.shape == (12, 4)
    assert g.neighbor_table[0].tolist().count(12) == 2  # two pads on a corner
    assert g.xy(7) == (3, 1) and g.point(3, 1) == 7


def test_nbr_pads_point_at_the_zero_row_and_extra_node_last() -> None:
    lay = layout(3, 3)
    assert lay.nbr.shape == (9, MAX_IN_DEGREE)
    assert (lay.nbr[:, -1] == 9).all()  # every point hears the extra node
    corner = lay.nbr[0].tolist()
    assert corner.count(lay.num_nodes) == 2  # two missing neighbours read the padding row
    assert lay.hub.tolist() == [[1.0] * 9 + [0.0]]


def test_layouts_are_cached_and_read_only() -> None:
    assert layout(9, 9) is layout(9, 9)
    with pytest.raises(ValueError):
        layout(9, 9).nbr[0, 0] = 0


def test_encode_rejects_empty_and_wrong_buffer() -> None:
    with pytest.raises(ValueError):
        encode([])


def test_move_priors_renormalise_over_the_moves_given() -> None:
    log_policy = np.log(np.array([0.5, 0.2, 0.2, 0.1], np.float32))  # 3 points and pass
    priors = move_priors(log_policy, np.array([1, 3]))
    np.testing.assert_allclose(priors, [2 / 3, 1 / 3], rtol=1e-6)


def test_move_priors_stay_exact_with_almost_no_mass_and_uniform_when_all_masked() -> None:
    tiny = np.array([0.0, -200.0, -201.0], np.float32)  # exp(-200) underflows float32
    np.testing.assert_allclose(move_priors(tiny, np.array([1, 2])),
                               [1 / (1 + np.exp(-1)), np.exp(-1) / (1 + np.exp(-1))], rtol=1e-6)
    masked = np.array([0.0, MASKED_LOG_PROB, MASKED_LOG_PROB], np.float32)
    np.testing.assert_allclose(move_priors(masked, np.array([1, 2])), [0.5, 0.5])
    assert move_priors(masked, np.array([], np.int64)).size == 0


# -- board sizes as written ------------------------------------------------------------------------
def test_sizes_read_as_n_or_width_x_height() -> None:
    assert parse_size("9") == (9, 9)
    assert parse_size(" 12X9 ") == (12, 9)  # width first, either case, spaces ignored
    assert parse_sizes("9,15,7x11") == [(9, 9), (15, 15), (7, 11)]


@pytest.mark.parametrize("text", ["", "x", "9x", "x9", "0", "9x0", "-3", "9x9x9", "9y9", "nine"])
def test_malformed_sizes_are_refused_with_the_text(text: str) -> None:
    with pytest.raises(ValueError, match=f"invalid board size {text!r}"):
        parse_size(text)


def test_a_command_line_reports_the_size_error_itself(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="t")
    parser.add_argument("--sizes", type=parse_sizes)
    with pytest.raises(SystemExit):
        parser.parse_args(["--sizes", "9,1O"])
    assert "argument --sizes: invalid board size '1O': expected N or WxH" in capsys.readouterr().err
    assert issubclass(SizeSyntaxError, ValueError)


# -- chess's graph: lines and jumps in one hop -----------------------------------------------------
CHESS_SIZES = [(5, 5), (6, 6), (8, 8), (6, 5), (10, 10)]


def ray(tables: dict[str, np.ndarray], width: int, height: int, square: int,
        relation: str) -> list[int]:
    """The squares in `relation`'s slots of `square`, padding left out."""
    from saz.engine.games.chess_graph import RELATIONS, slots_per_relation

    d = slots_per_relation(width, height)
    r = RELATIONS.index(relation)
    row = tables["nbr"][square, r * d:(r + 1) * d].tolist()
    return [s for s in row if s != width * height + 1]


@pytest.mark.parametrize("w,h", CHESS_SIZES)
def test_chess_tables_have_the_plans_shapes_and_padding(w: int, h: int) -> None:
    from saz.engine.games.chess_graph import chess_graph_tables

    t = chess_graph_tables(w, h)
    p, d = w * h, max(max(w, h) - 1, 8)
    assert set(t) == {"nbr", "hub", "promo"}
    assert t["nbr"].shape == (p, 10 * d) and t["nbr"].dtype == np.int64
    assert t["hub"].shape == (1, p + 1) and t["hub"].dtype == np.float32
    assert t["promo"].shape == (3 * w, 2) and t["promo"].dtype == np.int64
    assert t["nbr"].min() >= 0 and t["nbr"].max() == p + 1  # num_nodes: the zero row
    assert (t["nbr"][:, 9 * d] == p).all() and (t["nbr"][:, 9 * d + 1:] == p + 1).all()
    assert t["hub"].tolist() == [[1.0] * p + [0.0]]


def test_chess_rays_run_from_the_square_outwards_in_the_side_to_moves_frame() -> None:
    from saz.engine.games.chess_graph import chess_graph_tables

    t = chess_graph_tables(8, 8)
    e4 = 4 * 8 + 4  # file e (x 4), rank 4 (y = 8 - 4)
    assert ray(t, 8, 8, e4, "N") == [28, 20, 12, 4]  # e5 e6 e7 e8: towards row 0
    assert ray(t, 8, 8, e4, "S") == [44, 52, 60]  # e3 e2 e1
    assert ray(t, 8, 8, e4, "E") == [37, 38, 39]
    assert ray(t, 8, 8, e4, "NW") == [27, 18, 9, 0]  # d5 c6 b7 a8
    assert ray(t, 8, 8, 0, "N") == [] and ray(t, 8, 8, 0, "SE") == list(range(9, 64, 9))
    assert sorted(ray(t, 8, 8, 0, "knight")) == [10, 17]  # a8: b6 and c7
    assert len(ray(t, 8, 8, e4, "knight")) == 8


@pytest.mark.parametrize("w,h", CHESS_SIZES)
def test_chess_rays_are_the_queens_lines_and_mirror_each_other(w: int, h: int) -> None:
    """Every square on a line (rank, file, diagonal) is on exactly one ray at its distance, and
    t on ray r of s at slot k means s on the opposite ray of t at slot k; jumps are mutual."""
    from saz.engine.games.chess_graph import RELATIONS, chess_graph_tables

    t = chess_graph_tables(w, h)
    for s in range(w * h):
        sx, sy = s % w, s // w
        on_lines = {q for q in range(w * h) if q != s and (
            q % w == sx or q // w == sy or abs(q % w - sx) == abs(q // w - sy))}
        rays = [ray(t, w, h, s, r) for r in RELATIONS[:8]]
        assert sorted(q for line in rays for q in line) == sorted(on_lines)
        for r, line in enumerate(rays):
            back = (r + 4) % 8
            for k, q in enumerate(line):
                assert max(abs(q % w - sx), abs(q // w - sy)) == k + 1
                assert ray(t, w, h, q, RELATIONS[back])[k] == s
        for q in ray(t, w, h, s, "knight"):
            assert sorted((abs(q % w - sx), abs(q // w - sy))) == [1, 2]
            assert s in ray(t, w, h, q, "knight")


@pytest.mark.parametrize("w", [5, 6, 8])
def test_chess_promo_rows_name_each_underpromotions_from_and_to_squares(w: int) -> None:
    from saz.engine.games.chess_graph import chess_graph_tables

    promo = chess_graph_tables(w, w)["promo"]
    off = w * w + 1
    for from_x in range(w):
        for step in (-1, 0, 1):
            row = promo[from_x * 3 + step + 1].tolist()
            if 0 <= from_x + step < w:
                assert row == [w + from_x, from_x + step]  # row y=1 onto row y=0
            else:
                assert row == [off, off]
    assert promo[0].tolist() == [off, off] and promo[-1].tolist() == [off, off]


@pytest.mark.parametrize("w,h", [(5, 5), (8, 8), (6, 5)])
def test_a_games_own_tables_make_a_layout_whose_edges_they_aggregate(w: int, h: int) -> None:
    from saz.engine.games.chess_graph import chess_graph_tables
    from saz.engine.graph import GraphLayout

    lay = GraphLayout(w, h, chess_graph_tables(w, h))
    assert not lay.lattice and set(lay.tables) == {"nbr", "hub", "promo"}
    assert lay.num_nodes == w * h + 1 and lay.nbr is lay.tables["nbr"]
    with pytest.raises(ValueError):
        lay.tables["promo"][0, 0] = 0
    with pytest.raises(TypeError):
        lay.tables["nbr"] = lay.nbr  # type: ignore[index]
    rng = np.random.default_rng(w * 10 + h)
    feats = rng.normal(size=(lay.num_nodes, 3))
    src, dst = lay.edge_index
    expected = np.zeros_like(feats)
    np.add.at(expected, dst, feats[src])
    padded = np.vstack([feats, np.zeros((1, 3))])
    np.testing.assert_allclose(padded[lay.nbr].sum(axis=1), expected[:-1])
    np.testing.assert_allclose((lay.hub @ feats)[0], expected[-1])


def test_layouts_by_game_share_the_lattice_and_cache_a_games_own() -> None:
    from saz.engine.games.chess_graph import chess_graph_tables
    from saz.engine.games.go import Go
    from saz.engine.games.gomoku import Gomoku
    from saz.engine.graph import layout_of

    class Tabled(Go):  # a game with its own graph, to test the plumbing without chess's rules
        @classmethod
        def graph_tables(cls, width: int, height: int) -> dict[str, np.ndarray] | None:
            return chess_graph_tables(width, height)

    assert layout(9, 9).lattice and layout(9, 9).group_roles == 0
    # A lattice game's layouts know its groups (tests/test_graph_groups.py): its own, still
    # the lattice, cached per game.
    assert layout_of(Go(9)) is layout(9, 9, Go) is not layout(9, 9) and layout(9, 9, Go).lattice
    assert layout(9, 9, Gomoku) is not layout(9, 9, Go) and layout(9, 9, Gomoku).lattice
    own = layout(8, 8, Tabled)
    assert own is layout(8, 8, Tabled) and not own.lattice
    np.testing.assert_array_equal(own.tables["promo"], chess_graph_tables(8, 8)["promo"])


def test_a_layout_refuses_tables_that_do_not_fit_its_board() -> None:
    from saz.engine.games.chess_graph import chess_graph_tables
    from saz.engine.graph import GraphLayout

    tables = chess_graph_tables(5, 5)
    with pytest.raises(ValueError, match="nbr must be int64 \\[36, K\\]"):
        GraphLayout(6, 6, tables)
    with pytest.raises(ValueError, match="graph tables need 'hub'"):
        GraphLayout(5, 5, {"nbr": tables["nbr"]})
    with pytest.raises(KeyError, match="has no table 'promo'"):
        layout(5, 5).table("promo")


def test_lattice_tables_are_todays_bit_for_bit() -> None:
    """The shipped networks read these: the move into tables changed none of them (the
    expected tables are built as before it, from the grid)."""
    for w, h in SIZES:
        lay, g = layout(w, h), grid(w, h)
        n = g.num_points
        nbr = np.full((n, MAX_IN_DEGREE), n + 1, dtype=np.int64)
        nbr[:, :4] = np.where(g.neighbor_table < n, g.neighbor_table, n + 1)
        nbr[:, 4] = n
        np.testing.assert_array_equal(lay.nbr, nbr)
        assert lay.nbr.dtype == np.int64 and lay.hub.dtype == np.float32
        assert set(lay.tables) == {"nbr", "hub"} and lay.lattice
