"""The policy-value graph network, in two forms that share one state_dict.

The architecture follows "Train on Small, Play the Large" (Ben-Assayag & El-Yaniv, 2021): the
board graph of `saz.engine.graph` goes through GIN layers (each followed by layer normalisation
and ReLU, with a residual connection where the widths match); the node representations of all
layers are concatenated (jumping knowledge) and pass two fully connected layers with batch
normalisation, ReLU and dropout; then a policy head (one logit per node, log-softmax over the
nodes of each graph, the extra node's entry being pass) and a value head (one number per node,
mean over the graph's nodes, tanh). No layer depends on the board size, so one network plays
every size.

Two optional auxiliary heads (KataGo's, `NetConfig.ownership_head` / `score_head`) learn from the
end of each counted game: ownership, one tanh per node (who owns that point at the end, from the
side to move's view; the extra node's entry means nothing), and score, one number per node summed
over the graph's kept nodes (the final margin in points: a sum, because the margin grows with the
board). They are trained for what they teach the shared layers, and the engine shows them.

* `PolicyValueNet` is the training form: torch-geometric `GINConv` on a batch of graphs of any
  sizes (a `batch` vector says which graph each node belongs to).
* `PolicyValueNetExport` is its export twin: the same parameters computed on a batch of positions
  of one board size, `x [B, N, F]`, aggregating neighbours through the layout's padded neighbour
  table and hub row with Gather/MatMul only. Scatter ops would export either slow or wrong
  (docs/ARCHITECTURE.md, "The network and the model contract"), so the lattice's graph has
  none; only the groups' pooling (`PolicyValueGroupsExport`) scatter-adds, as ScatterND with
  reduction add, which onnxruntime runs exactly.

Groups (`NetConfig.group_roles`, from the game's `Game.group_roles`: Go's chains, each with its
stones and its liberties; Gomoku's line segments; Othello's lines) add a pooling over each
position's groups to every GIN layer (the common fate graph of Graepel et al. 2001, as one message
per layer): per group and role the sum of its members' rows, the roles concatenated and mapped by
`groups.{k}` (Linear(R*w -> w), no bias), and the result added to every member's root term, so the
layer computes `MLP(h + m + sum of the neighbours' h)`, where `m` is the sum of the maps of the
groups the node belongs to. A stone thus hears its whole chain, however long, and a liberty the
chains it touches, in one layer. Zero maps compute the lattice network exactly (`add_groups`).

Both accept a node mask (the subgraph sampling of the paper): a masked-out node sends no messages,
takes no part in the policy softmax (its log-probability is `MASKED_LOG_PROB`) and is left out of
the value mean. The extra node is always kept, whatever the mask says.

A game whose moves join two squares (chess) has a graph of its own (`Game.graph_tables`: each
square's lines and knight jumps as typed relations, and a `promo` table) and gets the other
family, `MovePolicyNet`: the same GIN-style layers on relation-typed in-neighbours, a policy over
moves (from-to pairs and underpromotions, bilinear in the squares' embeddings) and a win/draw/loss
value. It is one scatter-free form for training and export. `net_config_for` picks the family
from the game's graph, `build_net` builds it, `export_form` is what the exporter writes.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, ClassVar, NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.nn import GINConv
from torch_geometric.utils import scatter

from saz.engine.games.base import Game
from saz.engine.graph import GraphLayout, layout
from saz.engine.model_card import MASKED_LOG_PROB

#: The network families (`NetConfig.kind`).
KINDS = ("lattice", "moves")


@dataclass(frozen=True)
class NetConfig:
    """The network's shape.

    Defaults, measured on the 2-core development CPU (onnxruntime, one thread, 19x19 in batches
    of 8; docs/BENCHMARKS.md, "Evaluator"): hidden 32 evaluates 4.0k positions/s with 10k
    parameters, hidden 64 1.9k with 39k, hidden 128 0.7k with 151k. Cost grows about linearly
    with the width here, so 64 buys four times the weights of 32 for half the speed, while 128
    would cost another 2.7x: the search on two cores needs the evaluations more than the extra
    capacity (which no trained comparison has measured yet). Three GIN layers are the paper's
    depth: each point sees the points three steps away, and the extra node, joined to every
    point, carries board-wide information in two hops. Dropout 0.1 is light regularisation for
    a net trained on plentiful self-play data.
    """

    #: Input width: the game's `len(feature_names)`.
    num_features: int
    hidden: int = 64
    layers: int = 3
    #: Dropout after each fully connected layer (training only).
    dropout: float = 0.1
    #: The auxiliary heads (module docstring); a network without them exports without their
    #: outputs, as every model before them did.
    ownership_head: bool = False
    score_head: bool = False
    #: The network's family (`KINDS`): "lattice", the GIN of `PolicyValueNet` (a policy over
    #: nodes, a tanh value), or "moves", `MovePolicyNet` (relation-typed in-neighbours, a policy
    #: over moves, a win/draw/loss value). The game's graph decides it (`kind_for`), not the
    #: config file.
    kind: str = "lattice"
    #: "moves" only: the relations of the game's neighbour table `nbr [P, relations * D]`.
    relations: int = 1
    #: The roles of a group's members (`len(Game.group_roles)`, R): 0, no groups (every network
    #: before them); R > 0, each GIN layer pools over the position's groups (module docstring).
    #: `[network] groups = true` sets it from the game (`net_config_for`).
    group_roles: int = 0

    def __post_init__(self) -> None:
        for name in ("num_features", "hidden", "layers", "relations"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"NetConfig.{name} must be a positive integer, got {value!r}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"NetConfig.dropout must be in [0, 1), got {self.dropout!r}")
        for name in ("ownership_head", "score_head"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"NetConfig.{name} must be true or false")
        if self.kind not in KINDS:
            raise ValueError(f"NetConfig.kind must be one of {', '.join(KINDS)}, "
                             f"got {self.kind!r}")
        if self.kind == "moves" and (self.ownership_head or self.score_head):
            raise ValueError("NetConfig: a moves network has no ownership or score head")
        roles = self.group_roles
        if not isinstance(roles, int) or isinstance(roles, bool) or roles < 0:
            raise ValueError(f"NetConfig.group_roles must be a non-negative integer, "
                             f"got {roles!r}")
        if self.kind == "moves" and roles:
            raise ValueError("NetConfig: a moves network has no groups")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> NetConfig:
        """The config saved by `to_dict`; ValueError on unknown or missing keys."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown NetConfig key(s): {', '.join(unknown)}")
        return cls(**data)


def _gin_mlp(width_in: int, hidden: int) -> nn.Sequential:
    """The MLP inside a GIN layer (two linear layers, as in the GIN paper)."""
    return nn.Sequential(nn.Linear(width_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden))


class _GINWeights(nn.Module):
    """A GIN layer's parameters under GINConv's state_dict keys (`nn.*`, `eps`), without its
    scatter-based message passing: the export twin aggregates by itself."""

    def __init__(self, mlp: nn.Module) -> None:
        super().__init__()
        self.nn = mlp
        self.register_buffer("eps", torch.zeros(1))


class _Network(nn.Module):
    """Everything but the message passing: the parameters and the per-node computations the two
    forms share, so that they cannot drift apart."""

    def __init__(self, config: NetConfig, convs: Sequence[nn.Module]) -> None:
        super().__init__()
        self.config = config
        h, n_layers = config.hidden, config.layers
        self.convs = nn.ModuleList(convs)
        # Per layer, the map of a group's pooled roles to what each member adds to its root
        # term (absent without groups, so older state_dicts load unchanged).
        roles = config.group_roles
        self.groups = nn.ModuleList(nn.Linear(roles * w_in, w_in, bias=False)
                                    for w_in, _ in self._mlp_widths(config)) if roles else None
        self.norms = nn.ModuleList(nn.LayerNorm(h) for _ in range(n_layers))
        # Residual only where input and output widths match (not around the first layer, unless
        # the game happens to have `hidden` features).
        self._residual = tuple(w_in == w_out for w_in, w_out in self._mlp_widths(config))
        self.fc1 = nn.Linear(h * n_layers, h)
        self.bn1 = nn.BatchNorm1d(h)
        self.fc2 = nn.Linear(h, h)
        self.bn2 = nn.BatchNorm1d(h)
        self.drop = nn.Dropout(config.dropout)
        self.policy = nn.Linear(h, 1)
        self.value = nn.Linear(h, 1)
        self.ownership = nn.Linear(h, 1) if config.ownership_head else None
        self.score = nn.Linear(h, 1) if config.score_head else None

    @staticmethod
    def _mlp_widths(config: NetConfig) -> list[tuple[int, int]]:
        return [(config.num_features if k == 0 else config.hidden, config.hidden)
                for k in range(config.layers)]

    def _with_groups(self, k: int, h: Tensor, groups: Tensor, num_groups: int) -> Tensor:
        """Layer k's root term `h + m` from the node rows `h [M, w]` and the batch's group
        incidences `groups [3, I]` (node, group, role; `GraphBatch.groups`): each group's
        members summed per role (one scatter-add into `[num_groups * R, w]`, the roles
        concatenated per group), mapped by `groups.{k}`, and each node given the maps of its
        groups (one gather, one scatter-add into `h`). Both forms compute it, the twin on the
        incidences of its members input (`member_incidences`), so they cannot drift apart; in
        ONNX each index_add is a ScatterND with reduction add."""
        assert self.groups is not None
        node, group, role = groups
        r, width = self.config.group_roles, h.shape[1]
        # index_select, not h[node]: Gather in ONNX, as the lattice's aggregation (not GatherND).
        pooled = h.new_zeros(num_groups * r, width).index_add(0, group * r + role,
                                                              h.index_select(0, node))
        mapped = self.groups[k](pooled.reshape(num_groups, r * width))
        return h.index_add(0, node, mapped.index_select(0, group))

    def _finish_layer(self, k: int, h_in: Tensor, conv_out: Tensor) -> Tensor:
        """Layer k's output from its GIN output: layer norm, ReLU, residual."""
        h = torch.relu(self.norms[k](conv_out))
        return h + h_in if self._residual[k] else h

    def _heads(self, jk: Tensor) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None]:
        """Per-node policy logit, value, ownership logit and score from the jumping-knowledge
        rows `[M, hidden*layers]` (the last two None without their heads)."""
        h = self.drop(torch.relu(self.bn1(self.fc1(jk))))
        h = self.drop(torch.relu(self.bn2(self.fc2(h))))
        ownership = None if self.ownership is None else self.ownership(h).squeeze(-1)
        score = None if self.score is None else self.score(h).squeeze(-1)
        return self.policy(h).squeeze(-1), self.value(h).squeeze(-1), ownership, score

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())


class NetOutput(NamedTuple):
    """What `PolicyValueNet` computes for a batch of graphs."""

    log_policy: Tensor  # [total_nodes]
    value: Tensor  # [num_graphs], in [-1, 1]
    #: Pre-tanh ownership `[total_nodes]` (the loss wants the logit); None without the head.
    ownership_logit: Tensor | None
    #: Final margin `[num_graphs]` in points; None without the head.
    score: Tensor | None


class GraphBatch(NamedTuple):
    """A torch-geometric style batch in `PolicyValueNet.forward`'s argument order: `net(*batch)`."""

    x: Tensor  # [total_nodes, F] float32
    edge_index: Tensor  # [2, total_edges] int64
    batch: Tensor  # [total_nodes] int64, graph of each node (ascending)
    mask: Tensor | None  # [total_nodes] bool, True = kept; None = every node kept
    num_graphs: int
    #: The group incidences `[3, M]` int64: per membership the node's index in the batch, its
    #: group's index in the batch (0..num_groups-1, position after position) and its role;
    #: None without groups.
    groups: Tensor | None = None
    num_groups: int = 0


def collate(xs: Sequence[np.ndarray], layouts: Sequence[GraphLayout],
            masks: Sequence[np.ndarray] | None = None, *, groups: bool = False) -> GraphBatch:
    """One batch from positions of any sizes: `xs[i]` is `[layouts[i].num_nodes, F]` (a row of
    `graph.encode`), `masks[i]` (optional) `[num_nodes]`, nonzero = kept. `groups`: with the
    positions' group incidences (`GraphLayout.group_members`: the layouts must be a game's with
    groups, `graph.layout(w, h, game)`), which a network with `group_roles` reads."""
    if len(xs) != len(layouts) or (masks is not None and len(masks) != len(xs)):
        raise ValueError("collate needs one layout (and one mask, if any) per position")
    if not xs:
        raise ValueError("collate needs at least one position")
    sizes = [lay.num_nodes for lay in layouts]
    for x, n in zip(xs, sizes, strict=True):
        if x.shape[0] != n:
            raise ValueError(f"a position with {x.shape[0]} nodes does not fit a layout of {n}")
    offsets = np.cumsum([0, *sizes[:-1]])
    edge_index = np.concatenate(
        [lay.edge_index + off for lay, off in zip(layouts, offsets, strict=True)], axis=1)
    batch = np.repeat(np.arange(len(xs)), sizes)
    mask = None if masks is None else torch.from_numpy(np.concatenate(masks) != 0)
    members, num_groups = (group_incidences(xs, layouts, offsets) if groups else (None, 0))
    return GraphBatch(torch.from_numpy(np.concatenate(xs).astype(np.float32, copy=False)),
                      torch.from_numpy(edge_index), torch.from_numpy(batch), mask, len(xs),
                      None if members is None else torch.from_numpy(members), num_groups)


def group_incidences(xs: Sequence[np.ndarray], layouts: Sequence[GraphLayout],
                     offsets: np.ndarray) -> tuple[np.ndarray, int]:
    """The group incidences `[3, M]` int64 (node, group, role; `GraphBatch.groups`) of
    positions whose nodes start at `offsets` in the batch, and the batch's number of groups.
    One `group_members` call per layout (the positions of one board size together)."""
    by_layout: dict[GraphLayout, list[int]] = {}
    for i, lay in enumerate(layouts):
        by_layout.setdefault(lay, []).append(i)
    roles = {lay.group_roles for lay in by_layout}
    if len(roles) != 1 or 0 in roles:
        raise ValueError("collate with groups needs layouts of one game with groups "
                         f"(graph.layout(w, h, game)), whose roles agree; got {sorted(roles)}")
    (r,) = roles
    # Per position: (its index in the batch, local points, slots, roles).
    found: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    for lay, positions in by_layout.items():
        x = np.ascontiguousarray(np.stack([xs[i] for i in positions]), dtype=np.float32)
        table = lay.group_members(x)  # [B, P, K]: slot * R + role, -1 padding
        which, point, column = np.nonzero(table >= 0)
        entries = table[which, point, column].astype(np.int64)
        found.append((np.asarray(positions, np.int64)[which], point.astype(np.int64),
                      entries // r, entries % r))
    position, point, slot, role = (np.concatenate(parts) for parts in zip(*found, strict=True))
    counts = np.zeros(len(xs), np.int64)
    np.maximum.at(counts, position, slot + 1)
    group_start = np.cumsum(counts) - counts
    node = np.asarray(offsets, np.int64)[position] + point
    members = np.stack([node, group_start[position] + slot, role])
    order = np.argsort(node, kind="stable")  # batch order: position after position
    return np.ascontiguousarray(members[:, order]), int(counts.sum())


class PolicyValueNet(_Network):
    """The training form: torch-geometric GINConv over a batch of graphs of any sizes.

    Nodes are ordered as `collate` (and torch-geometric's `Batch`) orders them: graph after graph,
    each graph's extra node last.
    """

    def __init__(self, config: NetConfig) -> None:
        super().__init__(config, [GINConv(_gin_mlp(i, o)) for i, o in self._mlp_widths(config)])

    def forward(self, x: Tensor, edge_index: Tensor, batch: Tensor, mask: Tensor | None = None,
                num_graphs: int | None = None, groups: Tensor | None = None,
                num_groups: int = 0) -> NetOutput:
        """Returns `NetOutput` (log_policy `[total_nodes]`, value `[num_graphs]`, and the
        auxiliary heads' outputs).

        `mask` (`[total_nodes]`, nonzero = kept) removes nodes as described in the module
        docstring; the head runs on kept nodes only, so batch normalisation's training statistics
        never see a dropped node. `groups`, `num_groups`: the batch's group incidences
        (`GraphBatch`), which a network with `group_roles` needs and one without refuses.
        """
        if groups is None and self.groups is not None:
            raise ValueError("this network pools over groups: collate its batch with groups=True")
        if groups is not None and self.groups is None:
            raise ValueError("this network has no groups: collate its batch without them")
        if num_graphs is None:
            num_graphs = int(batch[-1]) + 1
        keep = None
        if mask is not None:
            keep = mask.bool() | _last_node_of_each_graph(batch)
            edge_index = edge_index[:, keep[edge_index[0]]]  # dropped nodes send nothing
            if groups is not None:  # nor are they members (the extra node never is one)
                groups = groups[:, keep[groups[0]]]
        hs = []
        h = x
        for k, conv in enumerate(self.convs):
            # GINConv adds its second input to the neighbours' sum: the groups' message joins
            # the root term, `MLP(h + m + agg)`.
            root = h if groups is None else self._with_groups(k, h, groups, num_groups)
            h = self._finish_layer(k, h, conv((h, root), edge_index))
            hs.append(h)
        jk = torch.cat(hs, dim=-1)
        kept_batch = batch if keep is None else batch[keep]
        logits, values, owner_logits, scores = self._heads(jk if keep is None else jk[keep])
        log_policy = _segment_log_softmax(logits, kept_batch, num_graphs)
        value = torch.tanh(scatter(values, kept_batch, 0, dim_size=num_graphs, reduce="mean"))
        score = None if scores is None else scatter(scores, kept_batch, 0, dim_size=num_graphs,
                                                    reduce="sum")
        if keep is not None:
            log_policy = torch.full_like(x[:, 0], MASKED_LOG_PROB).masked_scatter(keep, log_policy)
            if owner_logits is not None:
                owner_logits = torch.zeros_like(x[:, 0]).masked_scatter(keep, owner_logits)
        return NetOutput(log_policy, value, owner_logits, score)


class PolicyValueNetExport(_Network):
    """The export twin: `PolicyValueNet`'s parameters on positions of one board size, scatter-free.

    Inputs are the ONNX contract (`saz.engine.model_card.INPUT_NAMES`): `x [B, N, F]`, the layout's
    `nbr [N-1, K]` (padded with index N, which reads a zero row) and `hub [1, N]`, and
    `mask [B, N]` float (nonzero = kept). Outputs `log_policy [B, N]` and `value [B]`, then
    `ownership [B, N]` in [-1, 1] (0 at masked nodes) and `score [B]` where the network has those
    heads. A network with groups has the twin `PolicyValueGroupsExport`, which also takes the
    batch's group members (`from_net` picks the class).
    """

    #: The graph tables `forward` takes after `x`, in order (the ONNX inputs between x and mask).
    TABLES: ClassVar[tuple[str, ...]] = ("nbr", "hub")
    #: Whether `forward` takes the batch's `group_members [B, N-1, K]` after the tables.
    GROUPS: ClassVar[bool] = False

    def __init__(self, config: NetConfig) -> None:
        if bool(config.group_roles) != self.GROUPS:
            raise ValueError(f"{type(self).__name__} is the twin of a network "
                             f"{'with' if self.GROUPS else 'without'} groups; "
                             "PolicyValueNetExport.from_net picks the right one")
        super().__init__(config, [_GINWeights(_gin_mlp(i, o)) for i, o in self._mlp_widths(config)])

    @classmethod
    def from_net(cls, net: PolicyValueNet) -> PolicyValueNetExport:
        """The twin of a training network, in eval mode (strict: every key must match): a
        `PolicyValueGroupsExport` for a network with groups."""
        # GINConv's eps is a buffer fixed at 0 (GIN-0: PolicyValueNet never trains it), which the
        # twin relies on to skip the (1 + eps) scaling.
        if any(float(conv.get_buffer("eps")) != 0.0 for conv in net.convs):
            raise ValueError("the export twin computes GIN-0 layers; this network has eps != 0")
        kind = PolicyValueGroupsExport if net.config.group_roles else PolicyValueNetExport
        twin = kind(net.config)
        twin.load_state_dict(net.state_dict(), strict=True)
        return twin.eval()

    def forward(self, x: Tensor, nbr: Tensor, hub: Tensor, mask: Tensor) -> tuple[Tensor, ...]:
        return self._compute(x, nbr, hub, None, mask)

    def _compute(self, x: Tensor, nbr: Tensor, hub: Tensor, members: Tensor | None,
                 mask: Tensor) -> tuple[Tensor, ...]:
        """The outputs (class docstring); `members [B, N-1, K]` where the network has groups."""
        b, n = x.shape[0], x.shape[1]
        kept = torch.cat([mask[:, :-1] != 0, torch.ones_like(mask[:, -1:], dtype=torch.bool)],
                         dim=1)
        m = kept.to(x.dtype).reshape(b * n, 1)
        # Node rows stay 2-D `[B*N, C]` so that every linear layer exports as one Gemm; only the
        # aggregation views them per position. The neighbour sum is unrolled over the table's
        # columns (K = MAX_IN_DEGREE, fixed at export): K Gather+Add ran ~10% faster in
        # onnxruntime than one Gather and a ReduceSum over K, and faster than a sum over a
        # transposed table at batch 1 (19x19, hidden 64, one thread).
        columns = [nbr[:, j] for j in range(nbr.shape[1])]
        # The members as the training form's incidences: computed once, read by every layer.
        groups = None if members is None else member_incidences(members, self.config.group_roles)
        hs = []
        h = x.reshape(b * n, -1) * m  # a dropped node's zero row is all it sends
        for k, conv in enumerate(self.convs):
            per_position = h.reshape(b, n, -1)
            padded = F.pad(per_position, (0, 0, 0, 1))  # row N: the zero row padding reads
            from_points = padded.index_select(1, columns[0])
            for column in columns[1:]:
                from_points = from_points + padded.index_select(1, column)
            agg = torch.cat([from_points, torch.matmul(hub, per_position)], dim=1)
            root = h if groups is None else self._with_groups(k, h, *groups)
            mlp = conv.get_submodule("nn")
            h = self._finish_layer(k, h, mlp(root + agg.reshape(b * n, -1))) * m  # GIN-0
            hs.append(h)
        logits, values, owner_logits, scores = self._heads(torch.cat(hs, dim=-1))
        logits = torch.where(kept, logits.reshape(b, n), MASKED_LOG_PROB)
        log_policy = torch.where(kept, torch.log_softmax(logits, dim=1), MASKED_LOG_PROB)
        kept_f = m.reshape(b, n)
        value = torch.tanh((values.reshape(b, n) * kept_f).sum(1) / kept_f.sum(1))
        outputs: tuple[Tensor, ...] = (log_policy, value)
        if owner_logits is not None:
            outputs += (torch.tanh(owner_logits.reshape(b, n)) * kept_f,)
        if scores is not None:
            outputs += ((scores.reshape(b, n) * kept_f).sum(1),)
        return outputs


def member_incidences(members: Tensor, roles: int) -> tuple[Tensor, int]:
    """The group incidences `[3, I]` int64 (node, group, role; `GraphBatch.groups`) and the
    number of groups of a batch of one board size from its `members [B, N-1, K]` (int32 or
    int64, entries `slot * roles + role`, -1 padding; `GraphLayout.group_members`), node
    `b*N + p` (the extra node, the last of each position, is in none), group `b*G + slot`,
    G the batch's most groups (`B*G` groups in all, a position's unused slots pooling
    nothing). Only the entries are kept (NonZero): a 19x19 middle game has ~1.3 a point of
    the K = 4 columns, and the padding would cost as much gathering and scattering as them."""
    b, points, k = members.shape
    flat = members.reshape(-1).to(torch.int64)
    at = torch.nonzero(flat >= 0).squeeze(1)  # [I]: (b*P + p)*K + column, ascending
    entry = flat[at]
    # Every index here is non-negative: truncating division is floor division.
    point = torch.div(at, k, rounding_mode="trunc")  # b*P + p
    position = torch.div(point, points, rounding_mode="trunc")
    # G (0: none). item(), not int(): tracing makes it a size read from the data (an unbacked
    # symbol, ReduceMax in ONNX), where int() would have to guard on its value.
    slots = torch.div(flat.max() + roles, roles, rounding_mode="trunc").item()
    assert isinstance(slots, int | torch.SymInt)
    torch._check(slots >= 0)
    group = position * slots + torch.div(entry, roles, rounding_mode="trunc")
    return torch.stack([point + position, group, entry % roles]), b * slots


class PolicyValueGroupsExport(PolicyValueNetExport):
    """The export twin of a network with groups: `forward(x, nbr, hub, group_members, mask)`,
    where `group_members [B, N-1, K]` int32 holds each point's groups as the core gives them
    (`GraphLayout.group_members`: entries `slot * R + role`, ascending, -1 padding), the ONNX
    input `model_card.GROUP_MEMBERS_INPUT`."""

    GROUPS: ClassVar[bool] = True

    def forward(self, x: Tensor, nbr: Tensor, hub: Tensor,  # type: ignore[override]
                group_members: Tensor, mask: Tensor) -> tuple[Tensor, ...]:
        return self._compute(x, nbr, hub, group_members, mask)


class MoveOutput(NamedTuple):
    """What `MovePolicyNet.predict` computes for a batch of positions of one board size."""

    log_policy: Tensor  # [B, policy_size]: P*P from-to moves, then 9W underpromotions
    value: Tensor  # [B], p_win - p_loss
    wdl_logit: Tensor  # [B, 3]: win, draw, loss for the side to move (the loss wants logits)


class MovePolicyNet(nn.Module):
    """The network of a game whose moves join two squares (chess): the same GNN family, on the
    relation-typed graph of `GraphLayout` (`nbr [P, R*D]`, `hub [1, N]`, `promo [3W, 2]`).

    One form serves training and export: it runs on the dense tables of one board size
    (the learner groups positions by size), with Gather, MatMul and Linear only.

    * An input embedding (F -> hidden), then `layers` GIN-style layers, each `h + ReLU(LN(MLP(
      h + agg)))`. A point's `agg` is a linear map of its in-neighbours summed per relation:
      h at `nbr` (index N reads a zero row) is `[B, P, R, D, hidden]`, summed over D, the R sums
      concatenated. The extra node's `agg` is a linear map of the mean of the points
      (`hub @ h / hub @ 1`: a mean, so that it means the same on every board).
    * Policy over moves: a from-to move's logit is `q_from . k_to / sqrt(hidden)` (the P*P
      block, row from, column to); an underpromotion's `q^piece_from . k_to / sqrt(hidden)`
      for piece knight, bishop, rook, from the `promo` table's (from, to) squares (index
      `P*P + j*3 + piece`; an off-board entry `(N, N)` is `MASKED_LOG_PROB`); log-softmax over
      all `P*P + 9W`.
    * Value: win/draw/loss logits (Lc0's) from the mean of the points and the extra node;
      `value = p_win - p_loss`.

    Nothing depends on the board size: the tables carry it. `mask [B, N]` (nonzero = kept, the
    extra node always is) removes squares as in `PolicyValueNet`: a dropped square sends
    nothing, every move from or to it is `MASKED_LOG_PROB`, and it is left out of the mean.
    """

    #: The graph tables `forward` takes after `x`, in order (the ONNX inputs between x and mask).
    TABLES: ClassVar[tuple[str, ...]] = ("nbr", "hub", "promo")

    def __init__(self, config: NetConfig) -> None:
        super().__init__()
        if config.kind != "moves":
            raise ValueError(f"MovePolicyNet is the 'moves' network, not {config.kind!r}")
        self.config = config
        h, r = config.hidden, config.relations
        self.embed = nn.Linear(config.num_features, h)
        self.relation = nn.ModuleList(nn.Linear(r * h, h) for _ in range(config.layers))
        self.hub = nn.ModuleList(nn.Linear(h, h) for _ in range(config.layers))
        self.mlps = nn.ModuleList(_gin_mlp(h, h) for _ in range(config.layers))
        self.norms = nn.ModuleList(nn.LayerNorm(h) for _ in range(config.layers))
        self.query = nn.Linear(h, h)
        self.key = nn.Linear(h, h)
        #: One query per underpromotion piece (knight, bishop, rook), concatenated.
        self.promotion = nn.Linear(h, UNDERPROMOTIONS * h)
        self.value_fc = nn.Linear(2 * h, h)
        self.drop = nn.Dropout(config.dropout)
        self.wdl = nn.Linear(h, 3)

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def forward(self, x: Tensor, nbr: Tensor, hub: Tensor, promo: Tensor,
                mask: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """The ONNX contract's outputs: `log_policy [B, P*P + 9W]`, `value [B]` and `wdl [B, 3]`
        (probabilities: win, draw, loss)."""
        out = self.predict(x, nbr, hub, promo, mask)
        return out.log_policy, out.value, torch.softmax(out.wdl_logit, dim=-1)

    def predict(self, x: Tensor, nbr: Tensor, hub: Tensor, promo: Tensor,
                mask: Tensor | None = None) -> MoveOutput:
        """`MoveOutput` for `x [B, N, F]` on one board size's tables (`mask` None: all kept)."""
        b, n = x.shape[0], x.shape[1]
        p = n - 1
        hidden = self.config.hidden
        if mask is None:
            kept = torch.ones((b, n), dtype=torch.bool, device=x.device)
        else:
            kept = torch.cat([mask[:, :-1] != 0, torch.ones_like(mask[:, -1:], dtype=torch.bool)],
                             dim=1)
        m = kept.to(x.dtype).unsqueeze(-1)  # [B, N, 1]
        columns = nbr.reshape(-1)
        hub_count = torch.matmul(hub, m).clamp(min=1.0)  # [B, 1, 1]: kept points
        h = self.embed(x) * m
        for k in range(self.config.layers):
            padded = F.pad(h, (0, 0, 0, 1))  # row N: the zero row the padding reads
            rays = padded.index_select(1, columns).reshape(b, p, self.config.relations, -1,
                                                           hidden)
            from_points = self.relation[k](rays.sum(dim=3).reshape(b, p, -1))
            from_all = self.hub[k](torch.matmul(hub, h) / hub_count)
            z = h + torch.cat([from_points, from_all], dim=1)
            h = (h + torch.relu(self.norms[k](self.mlps[k](z)))) * m

        points, kept_points = h[:, :p], kept[:, :p]
        scale = 1.0 / math.sqrt(hidden)
        query, key = self.query(points), self.key(points)
        pairs = torch.matmul(query, key.transpose(1, 2)) * scale  # [B, P, P]: from, to
        pair_kept = kept_points.unsqueeze(2) & kept_points.unsqueeze(1)
        # Underpromotions: the promo table's (from, to) squares, (N, N) off the board.
        padded = F.pad(h, (0, 0, 0, 1))
        froms, tos = promo[:, 0], promo[:, 1]
        queries = self.promotion(padded.index_select(1, froms))  # [B, 3W, 3*hidden]
        queries = queries.reshape(b, -1, UNDERPROMOTIONS, hidden)
        keys = self.key(padded.index_select(1, tos)).unsqueeze(2)  # [B, 3W, 1, hidden]
        promotions = (queries * keys).sum(-1) * scale  # [B, 3W, 3]
        padded_kept = F.pad(m.squeeze(-1), (0, 1))  # the off-board index N is never kept
        promo_kept = (padded_kept.index_select(1, froms) * padded_kept.index_select(1, tos)) > 0
        promo_kept = promo_kept.unsqueeze(2).expand(-1, -1, UNDERPROMOTIONS)
        logits = torch.cat([pairs.reshape(b, -1), promotions.reshape(b, -1)], dim=1)
        valid = torch.cat([pair_kept.reshape(b, -1), promo_kept.reshape(b, -1)], dim=1)
        logits = torch.where(valid, logits, MASKED_LOG_PROB)
        log_policy = torch.where(valid, torch.log_softmax(logits, dim=1), MASKED_LOG_PROB)

        m_points = m[:, :p]
        pooled = (points * m_points).sum(1) / m_points.sum(1).clamp(min=1.0)
        v = self.drop(torch.relu(self.value_fc(torch.cat([pooled, h[:, p]], dim=-1))))
        wdl_logit = self.wdl(v)
        wdl = torch.softmax(wdl_logit, dim=-1)
        return MoveOutput(log_policy, wdl[:, 0] - wdl[:, 2], wdl_logit)


#: Underpromotion pieces a `promo` entry has a logit for: knight, bishop, rook.
UNDERPROMOTIONS = 3

#: Either family's network (`build_net`).
Network = PolicyValueNet | MovePolicyNet


def build_net(config: NetConfig) -> Network:
    """The network of `config.kind`, freshly initialised (train mode)."""
    return MovePolicyNet(config) if config.kind == "moves" else PolicyValueNet(config)


#: What the exporter writes and the torch runtime runs: the scatter-free form of either family.
ExportForm = PolicyValueNetExport | MovePolicyNet


def export_form(net: Network) -> ExportForm:
    """The scatter-free computation of `net` in eval mode: the lattice network's twin, a moves
    network itself (one form serves both)."""
    if isinstance(net, MovePolicyNet):
        twin = MovePolicyNet(net.config)
        twin.load_state_dict(net.state_dict(), strict=True)
        return twin.eval()
    return PolicyValueNetExport.from_net(net)


#: The graph table only a policy over moves reads: a game whose graph has it gets a
#: `MovePolicyNet`.
MOVES_TABLE = "promo"


def net_config_for(game: type[Game], **network: Any) -> NetConfig:
    """The NetConfig of `game`'s network with the `[network]` keywords (hidden, layers, ...):
    the game's graph (`Game.graph_tables`) decides the family and its relations, never a
    config file. `groups=True` asks for the game's groups (`group_roles` from
    `Game.group_roles`); ValueError for a game that has none."""
    if "kind" in network or "relations" in network or "group_roles" in network:
        raise ValueError("the network's kind and relations come from the game's graph, its "
                         "group roles from the game ([network] groups = true)")
    groups = network.pop("groups", False)
    if not isinstance(groups, bool):
        raise ValueError(f"[network] groups must be true or false, got {groups!r}")
    if groups and not game.group_roles:
        raise ValueError(f"[network] groups: {game.name} has no groups (its Game.group_roles "
                         "are empty)")
    roles = len(game.group_roles) if groups else 0
    size = game.info.default_size
    lay = layout(size, size, game)
    if MOVES_TABLE not in lay.tables:
        return NetConfig(num_features=game.num_features(), group_roles=roles, **network)
    return NetConfig(num_features=game.num_features(), kind="moves",
                     relations=relations_of(lay.nbr, lay.num_points), group_roles=roles,
                     **network)


def relations_of(nbr: np.ndarray, num_points: int) -> int:
    """R of a relation-typed table `nbr [P, R*D]`: the extra node (index `num_points`) is slot 0
    of the last relation (docs/ARCHITECTURE.md), the one column it fills, so that column is
    `(R-1)*D`. ValueError for a table that is not laid out so."""
    columns = np.flatnonzero((nbr == num_points).all(axis=0))
    total = nbr.shape[1]
    if len(columns) != 1 or total % (total - int(columns[0])):
        raise ValueError(f"a neighbour table of {total} columns whose extra node fills columns "
                         f"{columns.tolist()} is not R relations of D slots")
    return total // (total - int(columns[0]))


def deepen(trained: Mapping[str, Tensor], trained_config: NetConfig,
           fresh: Mapping[str, Tensor], config: NetConfig) -> dict[str, Tensor]:
    """A trained network's weights in a deeper one that computes exactly the same function.

    KataGo grows its networks over a run; a run here keeps no replay buffer across machines to
    train a bigger network from scratch on, so it grows the one it has. The `config` network
    (`fresh`: its initial weights) has more GIN layers than `trained_config` and is otherwise
    the same. Its first layers and its heads take the trained weights; the new layers, appended
    after the last, keep their fresh weights, and the columns of `fc1` that read them (the
    jumping-knowledge concatenation is layer after layer) start at zero. So the new layers change
    nothing until training moves those columns, and then they widen what every point sees by a
    step each. A moves network (`MovePolicyNet`, no jumping knowledge) starts its new layers'
    layer norms at zero instead, which makes each an identity. ValueError when `config` is not
    `trained_config` with more layers.
    """
    if replace(config, layers=trained_config.layers) != trained_config:
        raise ValueError(f"only the number of layers may change, not {trained_config} "
                         f"to {config}")
    if config.layers <= trained_config.layers:
        raise ValueError(f"a network grows only deeper: {trained_config.layers} layers "
                         f"cannot become {config.layers}")
    state = {name: tensor.clone() for name, tensor in fresh.items()}
    for name, tensor in trained.items():
        if name != "fc1.weight":
            state[name] = tensor.clone()
    if config.kind == "moves":
        # A moves layer adds ReLU(LN(...)) to its input: with the norm's gain and bias at zero
        # it adds nothing, and the gain's gradient is not zero, so it comes alive.
        for k in range(trained_config.layers, config.layers):
            state[f"norms.{k}.weight"].zero_()
            state[f"norms.{k}.bias"].zero_()
        return state
    old_width = trained["fc1.weight"].shape[1]
    fc1 = torch.zeros_like(state["fc1.weight"])
    fc1[:, :old_width] = trained["fc1.weight"]
    state["fc1.weight"] = fc1
    return state


def add_groups(trained: Mapping[str, Tensor], trained_config: NetConfig,
               group_roles: int) -> tuple[dict[str, Tensor], NetConfig]:
    """A trained lattice network's weights in one with groups (`group_roles` roles) that
    computes exactly the same function.

    The comparison the groups were built for is a trained lattice network against the same
    network given its groups, not against one trained afresh (the run has no buffer to train
    it on again). Each layer's map `groups.{k}` starts at zero, so every group's message is zero
    and each layer computes what it did. The layer is linear in its weight, so the gradient of
    a zero weight is not zero (it is the pooled rows times the message's gradient) and training
    brings the groups in. Returns the weights and the config with `group_roles`. ValueError for
    a network that has groups already, or a moves network.
    """
    if trained_config.group_roles:
        raise ValueError(f"the network has {trained_config.group_roles} group roles already")
    if group_roles < 1:
        raise ValueError(f"a network with groups has at least one role, not {group_roles}")
    config = replace(trained_config, group_roles=group_roles)  # validates (no moves network)
    state = {name: tensor.clone() for name, tensor in trained.items()}
    for k, (w_in, _) in enumerate(_Network._mlp_widths(config)):
        like = trained[f"convs.{k}.nn.0.weight"]
        state[f"groups.{k}.weight"] = like.new_zeros(w_in, group_roles * w_in)
    return state, config


#: The one weight that reads the input planes: the first linear layer of the first GIN layer.
INPUT_WEIGHT = "convs.0.nn.0.weight"
#: The same in a moves network: its input embedding.
MOVES_INPUT_WEIGHT = "embed.weight"
#: The first layer's groups map (a network with groups), which pools and sends input planes.
FIRST_GROUPS_WEIGHT = "groups.0.weight"


def widen_inputs(trained: Mapping[str, Tensor], trained_config: NetConfig,
                 num_features: int) -> tuple[dict[str, Tensor], NetConfig]:
    """A trained network's weights for `num_features` input planes, computing exactly the same
    function: the game appended planes to its features (`Game.feature_prefixes`), so the first
    `trained_config.num_features` planes mean what they meant and the new ones come after.

    Only the first GIN layer (a moves network: its embedding) reads the input; its weight gains
    zero columns for the new planes, which therefore change nothing until training moves them.
    Returns the weights and the widened config. ValueError when the network would lose planes,
    or when its first layer is residual (a network whose input width equals its hidden width
    adds the input itself).
    """
    old = trained_config.num_features
    if num_features <= old:
        raise ValueError(f"a network's input only widens: {old} planes cannot become "
                         f"{num_features}")
    first_in, first_out = _Network._mlp_widths(trained_config)[0]
    moves = trained_config.kind == "moves"
    if first_in == first_out and not moves:  # what makes a layer residual (`_Network._residual`)
        raise ValueError(f"the first layer adds its {old} input planes to its output "
                         "(residual): new planes cannot come in silently")
    state = {name: tensor.clone() for name, tensor in trained.items()}
    name = MOVES_INPUT_WEIGHT if moves else INPUT_WEIGHT
    weight = trained[name]
    state[name] = torch.cat([weight, weight.new_zeros(weight.shape[0],
                                                              num_features - old)], dim=1)
    roles = trained_config.group_roles
    if roles:
        # The first layer's groups map reads and writes planes: its old block per role in the
        # wider one, zero for the new planes in and out.
        first = trained[FIRST_GROUPS_WEIGHT]
        wide = first.new_zeros(num_features, roles * num_features)
        for r in range(roles):
            wide[:old, r * num_features:r * num_features + old] = first[:, r * old:(r + 1) * old]
        state[FIRST_GROUPS_WEIGHT] = wide
    return state, replace(trained_config, num_features=num_features)


def _last_node_of_each_graph(batch: Tensor) -> Tensor:
    """Bool `[total_nodes]`: True at each graph's last node, its extra node."""
    last = torch.ones_like(batch, dtype=torch.bool)
    last[:-1] = batch[1:] != batch[:-1]
    return last


def _segment_log_softmax(logits: Tensor, batch: Tensor, num_graphs: int) -> Tensor:
    """log_softmax of `logits` within each graph of `batch`."""
    top = scatter(logits.detach(), batch, 0, dim_size=num_graphs, reduce="max")
    shifted = logits - top[batch]
    log_total = scatter(shifted.exp(), batch, 0, dim_size=num_graphs, reduce="sum").log()
    return shifted - log_total[batch]
