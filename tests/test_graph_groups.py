"""Per-position groups on the engine side: Go's chains as `GraphLayout.group_members`, the model
contract's optional `group_members` input, the evaluator feeding it, and the refusal of a file of
the retired dense form (`groups [B, R, G, N]`) (issue 65)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from saz.engine.evaluator import Evaluator, ModelError, default_model_path, game_inputs
from saz.engine.games.base import Game
from saz.engine.games.chess import Chess
from saz.engine.games.go import Go
from saz.engine.games.gomoku import Gomoku
from saz.engine.games.othello import Othello
from saz.engine.graph import encode, layout, layout_of
from saz.engine.model_card import (
    DENSE_GROUPS_INPUT,
    GROUP_MEMBERS_INPUT,
    INPUT_NAMES,
    OPSET,
    ModelCard,
    card_path,
    file_digest,
    input_names,
)

# Black to move, so X is `own`: chain A = {1, 5, 6} (lowest point 1, slot 0), chain B = {3, 8}
# (slot 1). Liberties: A {0, 2, 7, 10, 11}, B {2, 4, 7, 9, 13}; points 2 and 7 are shared.
DIAGRAM = """
. X . O .
X X . O .
. . . . .
. . . . .
. . . . .
"""
CHAIN_A, LIBS_A = [1, 5, 6], [0, 2, 7, 10, 11]
CHAIN_B, LIBS_B = [3, 8], [2, 4, 7, 9, 13]


def _x(*games: Game) -> np.ndarray:
    return encode(list(games))


def _table(a_stones: list[int], a_libs: list[int], b_stones: list[int], b_libs: list[int],
           nodes: int) -> np.ndarray:
    """The expected [R=2, G=2, nodes] table of a position with two groups."""
    table = np.zeros((2, 2, nodes), np.float32)
    for slot, (stones, libs) in enumerate([(a_stones, a_libs), (b_stones, b_libs)]):
        table[0, slot, stones] = 1.0
        table[1, slot, libs] = 1.0
    return table


def _dense(members: np.ndarray, roles: int = 2) -> np.ndarray:
    """The memberships `members [B, P, K]` as a dense `[B, roles, G, P + 1]` 0/1 table (G the
    batch's most slots, at least 1; the extra node in none): what the checks below read."""
    rows, points, _ = members.shape
    groups = max(int(members.max()) // roles + 1, 1)
    table = np.zeros((rows, roles, groups, points + 1), np.float32)
    for b, p, k in zip(*np.nonzero(members >= 0), strict=True):
        slot, role = divmod(int(members[b, p, k]), roles)
        table[b, role, slot, p] = 1.0
    return table


def test_the_lattice_games_have_groups_and_chess_does_not() -> None:
    assert Go.group_roles == ("stones", "liberties")
    assert Othello.group_roles == ("own", "opponent", "empty")
    assert Gomoku.group_roles == ("own_stones", "own_empty", "opponent_stones", "opponent_empty")
    assert Chess.group_roles == ()
    with pytest.raises(NotImplementedError, match="Chess has no groups"):
        Chess.group_members(_x(Chess(8)), 8, 8)


def test_go_layouts_know_their_groups_the_others_share_the_lattice() -> None:
    lat = layout(9, 9)
    go = layout(9, 9, Go)
    assert go is layout(9, 9, Go) is layout_of(Go(9)) and go is not lat
    assert go.group_roles == 2 and lat.group_roles == 0 and go.lattice
    assert layout(9, 9, Gomoku) is not lat and layout(9, 9, Gomoku).group_roles == 4
    for name in ("nbr", "hub"):
        np.testing.assert_array_equal(go.tables[name], lat.tables[name])
    with pytest.raises(ValueError, match="has no groups"):
        lat.group_members(_x(Go(9)))


def test_group_members_of_a_hand_made_position() -> None:
    game = Go.from_diagram(DIAGRAM)
    members = layout_of(game).group_members(_x(game))
    assert members.dtype == np.int32 and members.shape[:2] == (1, 25)
    rows = {p: sorted(int(e) for e in members[0, p] if e >= 0) for p in range(25)}
    for p in CHAIN_A:
        assert rows[p] == [0]
    for p in CHAIN_B:
        assert rows[p] == [2]
    assert rows[7] == [1, 3] and rows[2] == [1, 3]  # both chains' liberty
    assert rows[0] == [1] and rows[4] == [3] and rows[24] == []
    for row in members[0]:  # ascending, padding last
        kept = row[row >= 0]
        assert list(kept) == sorted(kept) and (row[len(kept):] == -1).all()


def test_group_members_of_a_chain_its_liberties_and_a_shared_one() -> None:
    game = Go.from_diagram(DIAGRAM)
    lay = layout_of(game)
    table = _dense(lay.group_members(_x(game)))
    assert table.dtype == np.float32 and table.shape == (1, 2, 2, 26)
    np.testing.assert_array_equal(table[0], _table(CHAIN_A, LIBS_A, CHAIN_B, LIBS_B, 26))
    assert (table[..., 25] == 0).all()  # the extra node is in no group
    # White to move: the same chains (numbered by their lowest point), the roles unchanged.
    white = Go.from_diagram(DIAGRAM, to_move=-1)
    np.testing.assert_array_equal(lay.group_members(_x(white)), lay.group_members(_x(game)))


def test_group_members_number_each_positions_groups_from_zero() -> None:
    one = Go.from_diagram(". X . . .\n" + ". . . . .\n" * 4)
    two = Go.from_diagram(DIAGRAM)
    empty = Go(5)
    table = _dense(layout_of(two).group_members(_x(one, two, empty)))
    assert table.shape == (3, 2, 2, 26)
    assert table[0, 0, 0, 1] == 1 and sorted(np.flatnonzero(table[0, 1, 0])) == [0, 2, 6]
    assert not table[0, :, 1].any()  # a slot past the position's own groups
    np.testing.assert_array_equal(table[1], _table(CHAIN_A, LIBS_A, CHAIN_B, LIBS_B, 26))
    assert not table[2].any()


def test_an_empty_board_has_no_groups() -> None:
    members = layout(9, 9, Go).group_members(_x(Go(9), Go(9)))
    assert members.shape == (2, 81, 4) and (members == -1).all()


def test_group_members_of_a_random_19x19_batch_against_the_chains() -> None:
    """Every stone is in exactly its chain's role 0, every empty point a liberty of each
    adjacent chain."""
    rng = np.random.default_rng(1)
    games = []
    for plies in (40, 120, 200):
        game = Go(19)
        game.play_random(plies, rng)
        games.append(game)
    x = _x(*games)
    lay = layout(19, 19, Go)
    table = _dense(lay.group_members(x))
    stones = x[:, :-1, 0] + x[:, :-1, 1] > 0.5
    np.testing.assert_array_equal(table[:, 0].sum(axis=1)[:, :-1], stones)
    np.testing.assert_array_equal(table[:, 1].sum(axis=1)[:, :-1] > 0, ~stones & _beside(stones))
    for b, game in enumerate(games):  # each chain's liberty count is the game's own
        for slot in range(table.shape[2]):
            members = np.flatnonzero(table[b, 0, slot])
            if members.size:
                assert table[b, 1, slot].sum() == game.liberties(int(members[0]))


def _beside(stones: np.ndarray) -> np.ndarray:
    """Points next to a stone, of `[B, 361]` on 19x19."""
    board = stones.reshape(-1, 19, 19)
    near = np.zeros_like(board)
    near[:, 1:] |= board[:, :-1]
    near[:, :-1] |= board[:, 1:]
    near[:, :, 1:] |= board[:, :, :-1]
    near[:, :, :-1] |= board[:, :, 1:]
    return near.reshape(-1, 361)


# -- the contract and the evaluator -----------------------------------------------------------
def test_input_names_and_game_inputs_with_groups() -> None:
    assert input_names() == INPUT_NAMES == game_inputs(Go)
    assert input_names(groups=True) == ("x", "nbr", "hub", GROUP_MEMBERS_INPUT, "mask")
    assert game_inputs(Go, groups=True) == ("x", "nbr", "hub", "group_members", "mask")
    with pytest.raises(ValueError, match="chess has no groups"):
        game_inputs(Chess, groups=True)


def write_groups_network(path: Path, game: type[Game], *, dense: bool = False,
                         members_type: int = 6, rank: int = 3) -> Path:
    """A network declaring x, nbr, hub, group_members, mask whose log_policy is each node's
    number of group memberships (the members' entries counted per point, 0 for the extra node)
    and whose value is the batch row's total: what it was fed, readable from its outputs.
    `members_type` (an onnx TensorProto type, int32 = 6) and `rank` declare the members input
    otherwise than the engine feeds it; `dense`: the retired dense form instead, whose card and
    graph name the input `groups [B, 2, G, N]` float32 (log_policy its sum over roles and
    groups), as an export before the group members wrote it."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    f = game.num_features()
    if dense:
        groups = helper.make_tensor_value_info(DENSE_GROUPS_INPUT, TensorProto.FLOAT,
                                               ["B", 2, "G", "N"])
        counted = [helper.make_node("ReduceSum", [DENSE_GROUPS_INPUT, "ax12"], ["per_node"],
                                    keepdims=0)]
    else:
        shape: list[str | int] = ["B", "P", 4, 1][:rank]
        groups = helper.make_tensor_value_info(GROUP_MEMBERS_INPUT, members_type, shape)
        counted = [
            helper.make_node("Cast", [GROUP_MEMBERS_INPUT], ["members"], to=TensorProto.INT32),
            helper.make_node("GreaterOrEqual", ["members", "zero_i"], ["entry"]),
            helper.make_node("Cast", ["entry"], ["entry_f"], to=TensorProto.FLOAT),
            helper.make_node("ReduceSum", ["entry_f", "ax_entries"], ["per_point"], keepdims=0),
            helper.make_node("Pad", ["per_point", "pad_extra"], ["per_node"]),
        ]
    declared = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "N", f]),
        helper.make_tensor_value_info("nbr", TensorProto.INT64, ["P", 5]),
        helper.make_tensor_value_info("hub", TensorProto.FLOAT, [1, "N"]),
        groups,
        helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["B", "N"]),
    ]
    constants = [numpy_helper.from_array(np.array(list(a), np.int64), name)
                 for name, a in (("ax12", [1, 2]), ("ax1", [1]), ("ax2", [2]),
                                 ("pad_extra", [0, 0, 0, 1]), ("ax_entries", range(2, rank)))]
    constants.append(numpy_helper.from_array(np.float32(0.0), "zero"))
    constants.append(numpy_helper.from_array(np.int32(0), "zero_i"))
    nodes = [
        *counted,
        # x, the mask and the tables read (times zero) so that every input is used.
        helper.make_node("ReduceSum", ["x", "ax2"], ["x_n"], keepdims=0),
        helper.make_node("Cast", ["nbr"], ["nbr_f"], to=TensorProto.FLOAT),
        helper.make_node("ReduceSum", ["nbr_f"], ["nbr_s"], keepdims=0),
        helper.make_node("ReduceSum", ["hub"], ["hub_s"], keepdims=0),
        helper.make_node("Sum", ["x_n", "mask", "nbr_s", "hub_s"], ["rest"]),
        helper.make_node("Mul", ["rest", "zero"], ["rest0"]),
        helper.make_node("Add", ["per_node", "rest0"], ["log_policy"]),
        helper.make_node("ReduceSum", ["log_policy", "ax1"], ["value"], keepdims=0),
    ]
    outputs = [helper.make_tensor_value_info("log_policy", TensorProto.FLOAT, ["B", "N"]),
               helper.make_tensor_value_info("value", TensorProto.FLOAT, ["B"])]
    graph = helper.make_graph(nodes, "groups-test", declared, outputs, initializer=constants)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              ir_version=8)
    onnx.checker.check_model(model)
    data = model.SerializeToString()
    path.write_bytes(data)
    inputs = tuple(i.name for i in declared)
    ModelCard(game=game.name, rules={}, feature_version=game.feature_version,
              feature_names=game.feature_names, network={"hidden": 0, "fake": True},
              opset=OPSET, inputs=inputs, outputs=("log_policy", "value"),
              onnx_bytes=len(data), onnx_sha256=file_digest(data)).save(card_path(path))
    return path


def test_the_evaluator_feeds_groups_to_a_network_that_declares_them(tmp_path: Path) -> None:
    evaluator = Evaluator(write_groups_network(tmp_path / "g.onnx", Go), device="cpu")
    assert evaluator.uses_groups
    games = [Go.from_diagram(DIAGRAM), Go(5)]
    x = _x(*games)
    lay = layout_of(games[0])
    log_policy, value = evaluator.run(x, lay)
    expected = _dense(lay.group_members(x)).sum(axis=(1, 2))
    np.testing.assert_array_equal(log_policy, expected)
    assert log_policy[0, 7] == 2 and log_policy[0, 1] == 1 and log_policy[0, 25] == 0
    np.testing.assert_array_equal(value, [15, 0])  # 3 + 2 stones, 5 + 5 liberty entries
    # A caller's cut board (mcts.crop) comes with the plain lattice's layout: groups still fed.
    np.testing.assert_array_equal(evaluator.run(x, layout(5, 5))[0], log_policy)
    heads = evaluator.run_heads(x, lay, np.ones((2, 26), bool))
    np.testing.assert_array_equal(heads.log_policy, log_policy)
    priors, values = evaluator.evaluate(games)
    assert len(priors) == 2 and values.shape == (2,)


def test_a_groups_network_of_a_game_without_groups_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="chess has no groups"):
        Evaluator(write_groups_network(tmp_path / "g.onnx", Chess), device="cpu")


@pytest.mark.parametrize(("members_type", "rank", "shown"), [
    (7, 3, r"tensor\(int64\) of shape \['B', 'P', 4\]"),
    (6, 4, r"tensor\(int32\) of shape \['B', 'P', 4, 1\]"),
])
def test_a_group_members_input_of_another_type_or_rank_is_refused(
        tmp_path: Path, members_type: int, rank: int, shown: str) -> None:
    path = write_groups_network(tmp_path / "g.onnx", Go, members_type=members_type, rank=rank)
    with pytest.raises(ModelError, match=f"group_members input is {shown}; the engine feeds "
                                         r"int32 \[B, P, K\]"):
        Evaluator(path, device="cpu")


def test_a_file_of_the_dense_group_table_is_refused_and_told_to_re_export(
        tmp_path: Path) -> None:
    """A network exported before the group members (its card and graph name the dense
    `groups [B, R, G, N]` input) is refused by name, never fed the members in its place."""
    path = write_groups_network(tmp_path / "old.onnx", Go, dense=True)
    assert DENSE_GROUPS_INPUT in ModelCard.load(card_path(path)).inputs
    with pytest.raises(ModelError) as refused:
        Evaluator(path, device="cpu")
    message = str(refused.value)
    assert message.startswith(f"{path}: its card states the input 'groups', the dense group "
                              "table of an older export")
    assert "'group_members'" in message and "export the network again from its checkpoint" \
        in message and "saz export" in message


def test_the_shipped_go_model_takes_no_groups_and_still_plays() -> None:
    evaluator = Evaluator(default_model_path("go"), device="cpu", threads=1)
    assert not evaluator.uses_groups
    assert not {GROUP_MEMBERS_INPUT, DENSE_GROUPS_INPUT} & set(evaluator.card.inputs)
    game = Go.from_diagram(DIAGRAM)
    priors, values = evaluator.evaluate([game, Go(5)])
    assert len(priors[0]) == len(game.legal_moves())
    assert abs(float(priors[1].sum()) - 1) < 1e-5 and values.shape == (2,)


def test_the_null_network_bench_can_time_the_group_members(
        capsys: pytest.CaptureFixture[str]) -> None:
    from saz.tools.bench.cli import main

    assert main(["search", "--null-network", "--groups", "--game", "go", "--size", "5",
                 "--visits", "40", "--positions", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# search with a null network taking groups: go 5x5")
    assert "| of which inside it (the group members, if any) |" in out
    assert main(["search", "--null-network", "--groups", "--game", "chess", "--size", "8"]) == 1
    assert "chess has no groups" in capsys.readouterr().err
