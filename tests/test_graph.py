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
