"""Search parameters: one frozen value object that front-ends and the trainer fill in."""
from __future__ import annotations

import argparse
from dataclasses import dataclass


@dataclass(frozen=True)
class SubgraphSampling:
    """The paper's subgraph-sampled priors: at a new leaf, also evaluate `count` random sub-boards
    of the position in the same batch and blend their policies into the prior.

    A sub-board is a random axis-aligned window whose side is a fraction in
    [`min_fraction`, `max_fraction`] of the board's side (at least `min_side` points); the network
    sees only the window's points and the extra node. The prior becomes
    `(1 - blend) * full + blend * mean(sub-board policies)`, each sub-board policy being spread
    over the legal moves it covers.
    """

    count: int = 0
    min_fraction: float = 0.5
    max_fraction: float = 0.8
    min_side: int = 5
    blend: float = 0.25

    def __post_init__(self) -> None:
        if self.count < 0:
            raise ValueError("subgraph count must be >= 0")
        if not 0.0 < self.min_fraction <= self.max_fraction <= 1.0:
            raise ValueError("subgraph fractions must satisfy 0 < min <= max <= 1")
        if not 0.0 <= self.blend <= 1.0:
            raise ValueError("subgraph blend must be in [0, 1]")

    @property
    def enabled(self) -> bool:
        return self.count > 0 and self.blend > 0.0


@dataclass(frozen=True)
class SearchOptions:
    """How the PUCT search explores. The defaults are for play; the trainer adds noise."""

    #: Exploration constant of PUCT: Q + c_puct * P * sqrt(N_parent) / (1 + N_child).
    c_puct: float = 1.5
    #: First-play urgency: an unvisited child's Q is the parent's Q minus this (Leela-style).
    fpu_reduction: float = 0.25
    #: Leaves collected per evaluator call (distinct thanks to virtual loss).
    batch_size: int = 16
    #: Evaluate batches on worker threads while the next is collected (see mcts.py).
    pipeline: bool = True
    #: Batches in flight at once with pipelining, each evaluated on its own thread: 1 keeps a
    #: CPU's network busy (the tree's work per leaf is microseconds); a GPU may want more.
    search_threads: int = 1
    #: Virtual visits (each counted as a loss) that a descent leaves on its path until backed up.
    virtual_loss: int = 1
    #: Dirichlet noise at the root (AlphaZero self-play): alpha is scaled by the number of legal
    #: moves as alpha_scale / moves, which keeps noise comparable across board sizes.
    dirichlet_epsilon: float = 0.0
    dirichlet_alpha_scale: float = 10.0
    #: KataGo's forced playouts at the root (self-play): a visited root move gets at least
    #: sqrt(k * prior * root visits) visits, so noise-favoured moves are explored enough to be
    #: judged; their excess is pruned from the policy target (`prune_policy_target`). 0: off.
    forced_playouts_k: float = 0.0
    #: The least root prior of the game's urgent moves (`Game.urgent_moves`: Go's capture of a
    #: chain of three stones or more in atari), so that the search looks at them early and their
    #: value, not a network's near-zero prior, decides. 0: off.
    urgent_prior: float = 0.1
    #: Tree nodes kept at most; the search stops adding when it is reached.
    max_nodes: int = 50_000_000
    #: Bytes the search tree may hold (`--max-memory`): at the budget the search stops growing
    #: it and answers from what it has. 1 GiB holds tens of millions of visits at 19x19.
    max_tree_bytes: int = 1 << 30
    #: Bytes the whole process may use (Gomocup's `INFO max_memory`); None: no limit. The tree's
    #: budget then shrinks to what the limit leaves (`MCTS.tree_budget`).
    memory_limit: int | None = None
    #: Bytes of network answers the search keeps by position (`EvalCache`, KataGo's NN cache):
    #: a position reached again, by another move order or in a later search, costs no network
    #: call. 0: off. Unused under a `memory_limit`, where the tree has every byte
    #: (`MCTS._cache_budget`).
    eval_cache_bytes: int = 64 << 20
    #: Near the end of a game that has an exact solver (Othello). None ("auto", the default):
    #: the endgame planner (`engine/search/endgame.py`) decides from the solver's measured rate
    #: and the move's time: the root is solved (win/draw/loss, then the exact margin) when the
    #: estimate fits in a share of the move's time (without a clock, in about a second), and a
    #: new leaf when its solve costs about one network evaluation; proofs travel up the tree.
    #: A number N fixes the threshold instead: a new leaf with at most N empty points is solved
    #: (who wins, within `solve_nodes` positions) and settled at +1 / 0 / -1, a root that near
    #: the end is solved exactly (within `solve_root_nodes`) and its best move played as
    #: decided; the clock does not stop those budgets. 0: off (self-play's searches).
    solve_empties: int | None = None
    solve_nodes: int = 100_000
    solve_root_nodes: int = 5_000_000
    #: Where the game has a threat-space search (Gomoku): at every new leaf, a win by fours
    #: (VCF) within `threat_nodes` positions settles it at +1, and when the opponent would win
    #: by fours only the moves that may stop it are searched (none: settled at -1). At the
    #: root, a win by fours and threes (VCT) within `threat_root_nodes` is played at once.
    #: 0: off. Measured in docs/BENCHMARKS.md ("Gomoku threat-space search").
    threat_nodes: int = 1_000
    threat_root_nodes: int = 200_000
    #: Under a clock, the root's own VCT may search further than `threat_root_nodes`: up to this
    #: many positions within a quarter of the move's time. The wins the search let go in its
    #: 20x20 games against AIWine took 0.5M to 1M positions to prove; a clock that plans for the
    #: mean game leaves most of its time unspent there. Without a clock (a visit cap, analysis) the
    #: root's budget stands, so self-play is unchanged. 0: `threat_root_nodes` always.
    threat_win_nodes: int = 1_000_000
    #: When the opponent, were it to move, would win by threats, the root's guard screens the
    #: network's favourites at a quarter of `threat_root_nodes` each; after the search, the move
    #: it would play is checked again at four times `threat_root_nodes` (under a clock, at most
    #: half the time left before the hard limit), and a refuted one is replaced by the next, up
    #: to this many moves. 0: off. The moves saz played where AIWine then won by threats were
    #: refuted at 50,000 to 500,000 positions, past the screen; on 114 such positions the move
    #: played held in 45 with this check and 26 without.
    threat_confirm_moves: int = 4
    #: Where the game says only part of the board bears on a position (`Game.focus_masks`:
    #: Gomoku's points within a five's reach of its stones, lone ones aside), each leaf is
    #: evaluated on that window, at least this many points a side, as on a board that size.
    #: 0: the whole board always.
    focus_side: int = 12
    subgraphs: SubgraphSampling = SubgraphSampling()
    #: Seed of the search's own random numbers (noise, subgraph windows); None: from the OS.
    seed: int | None = None

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        if self.search_threads < 1:
            raise ValueError("search_threads must be >= 1")
        if self.virtual_loss < 0:
            raise ValueError("virtual_loss must be >= 0")
        if not 0.0 <= self.dirichlet_epsilon <= 1.0:
            raise ValueError("dirichlet_epsilon must be in [0, 1]")
        if self.c_puct <= 0:
            raise ValueError("c_puct must be > 0")
        if self.forced_playouts_k < 0:
            raise ValueError("forced_playouts_k must be >= 0")
        if not 0.0 <= self.urgent_prior <= 1.0:
            raise ValueError("urgent_prior must be in [0, 1] (0: off)")
        if self.memory_limit is not None and self.memory_limit <= 0:
            raise ValueError("memory_limit must be > 0 (None: no limit)")
        if self.max_tree_bytes <= 0:
            raise ValueError("max_tree_bytes must be > 0")
        if self.eval_cache_bytes < 0:
            raise ValueError("eval_cache_bytes must be >= 0 (0: off)")
        if self.solve_empties is not None and self.solve_empties < 0:
            raise ValueError("solve_empties must be >= 0 (0: off; None: auto)")
        if self.solve_nodes < 1 or self.solve_root_nodes < 1:
            raise ValueError("solve_nodes and solve_root_nodes must be >= 1")
        if self.threat_nodes < 0 or self.threat_root_nodes < 0:
            raise ValueError("threat_nodes and threat_root_nodes must be >= 0 (0: off)")
        if self.threat_win_nodes < 0:
            raise ValueError("threat_win_nodes must be >= 0 (0: threat_root_nodes)")
        if self.focus_side < 0:
            raise ValueError("focus_side must be >= 0 (0: off)")
        if self.threat_confirm_moves < 0:
            raise ValueError("threat_confirm_moves must be >= 0 (0: off)")


# -- the front-ends' command line ------------------------------------------------------------------
def add_search_arguments(parser: argparse.ArgumentParser, *,
                         max_memory: int = SearchOptions.max_tree_bytes) -> None:
    """The search options `saz gtp`, `pbrain-saz` and `saz uci` take; `max_memory` is
    `--max-memory`'s default (`saz uci`'s is its Hash option's)."""
    parser.add_argument("--c-puct", type=float, default=SearchOptions.c_puct, metavar="C",
                        help="PUCT's exploration constant: higher spreads the visits over more "
                             f"moves (default {SearchOptions.c_puct})")
    parser.add_argument("--fpu-reduction", type=float, default=SearchOptions.fpu_reduction,
                        metavar="R", help="an unvisited move is valued at its parent's value "
                                          "less R: higher keeps the search on the moves already "
                                          f"tried (default {SearchOptions.fpu_reduction})")
    parser.add_argument("--batch-size", type=int, default=SearchOptions.batch_size, metavar="N",
                        help="leaves sent to the network at once: larger feeds a GPU, smaller "
                             "spends a CPU's visits on fewer guesses (default "
                             f"{SearchOptions.batch_size})")
    parser.add_argument("--urgent-prior", type=float, default=SearchOptions.urgent_prior,
                        metavar="P", help="the least root prior of the moves the rules call "
                                          "urgent (Go: capturing three stones or more in "
                                          "atari), so that the search looks at them (default "
                                          f"{SearchOptions.urgent_prior}; 0: off)")
    parser.add_argument("--subgraphs", type=int, default=0, metavar="K",
                        help="also evaluate K random sub-boards of every new leaf and blend their "
                             "policy into its prior (the paper's subgraph sampling; default 0: "
                             "off, see docs/STRENGTH.md)")
    parser.add_argument("--search-threads", type=int, default=SearchOptions.search_threads,
                        metavar="N", help="batches the search keeps in flight, each on its own "
                                          "network thread (default 1; more can feed a GPU)")
    parser.add_argument("--max-memory", type=parse_bytes, default=max_memory,
                        metavar="BYTES", help="the most memory the search tree may hold, e.g. "
                                              f"512M or 2G (default {size_text(max_memory)}); "
                                              "at it the search stops growing the tree and "
                                              "answers from what it has")
    parser.add_argument("--eval-cache", type=_cache_bytes, default=SearchOptions.eval_cache_bytes,
                        metavar="BYTES", help="network answers kept by position, so that a "
                                              "position met again costs no network call, e.g. "
                                              "256M (default 64M; 0: off; off under Gomocup's "
                                              "INFO max_memory)")
    parser.add_argument("--solve-empties", type=_solve_empties, default=None,
                        metavar="N|auto", help="where the game has an exact endgame solver "
                                               "(Othello): auto (the default) solves when the "
                                               "measured solver rate says it fits the move's "
                                               "time (about 1 s without a clock); N solves "
                                               "positions with at most N empty points, in the "
                                               "tree and at the root; 0: off")
    parser.add_argument("--threat-nodes", type=int, default=SearchOptions.threat_nodes,
                        metavar="N", help="Gomoku: the positions a threat-space search (wins by "
                                          "fours) may visit at each new leaf of the tree (default "
                                          f"{SearchOptions.threat_nodes}; 0: off)")
    parser.add_argument("--threat-root-nodes", type=int,
                        default=SearchOptions.threat_root_nodes, metavar="N",
                        help="Gomoku: the positions a threat-space search (wins by fours and "
                             "threes) may visit at the root before the tree is searched "
                             f"(default {SearchOptions.threat_root_nodes}; 0: off)")
    parser.add_argument("--threat-win-nodes", type=int, default=SearchOptions.threat_win_nodes,
                        metavar="N", help="Gomoku, under a clock: the positions the root's "
                                          "search for its own win by threats may visit, within "
                                          "a quarter of the move's time (default "
                                          f"{SearchOptions.threat_win_nodes}; 0: as "
                                          "--threat-root-nodes)")
    parser.add_argument("--threat-confirm-moves", type=int,
                        default=SearchOptions.threat_confirm_moves, metavar="N",
                        help="Gomoku: when the opponent threatens to win by threats, check the "
                             "move the search would play with a deeper threat search, and up to "
                             f"N in all (default {SearchOptions.threat_confirm_moves}; 0: off)")
    parser.add_argument("--focus-side", type=int, default=SearchOptions.focus_side, metavar="N",
                        help="Gomoku: the network sees each position's window round its stones "
                             "(a five's reach), at least N points a side, as a board that size "
                             f"(default {SearchOptions.focus_side}; 0: the whole board)")
    parser.add_argument("--subgraph-blend", type=float, default=SubgraphSampling.blend,
                        metavar="B", help="the sub-boards' share of the prior (default "
                                          f"{SubgraphSampling.blend})")


def search_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> SearchOptions:
    """The `SearchOptions` of parsed `add_search_arguments` arguments; a bad value is the
    parser's error (exit status 2, the reason on stderr)."""
    try:
        return SearchOptions(c_puct=args.c_puct, fpu_reduction=args.fpu_reduction,
                             batch_size=args.batch_size, urgent_prior=args.urgent_prior,
                             max_tree_bytes=args.max_memory, search_threads=args.search_threads,
                             eval_cache_bytes=args.eval_cache,
                             solve_empties=args.solve_empties,
                             threat_nodes=args.threat_nodes,
                             threat_root_nodes=args.threat_root_nodes,
                             threat_win_nodes=args.threat_win_nodes,
                             threat_confirm_moves=args.threat_confirm_moves,
                             focus_side=args.focus_side,
                             subgraphs=SubgraphSampling(count=args.subgraphs,
                                                        blend=args.subgraph_blend))
    except ValueError as exc:
        parser.error(str(exc))


_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_bytes(text: str) -> int:
    """'1G' -> 1073741824, '512M', '300000000': a positive size in bytes (binary units, an
    optional trailing B); argparse's type for `--max-memory`."""
    value = text.strip().upper().removesuffix("B").removesuffix("I")
    unit = value[-1:] if value[-1:] in _UNITS else ""
    try:
        number = float(value[:len(value) - len(unit)])
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"invalid size {text!r}: expected bytes or a number with K, M, G") from None
    size = int(number * _UNITS[unit])
    if size <= 0:
        raise argparse.ArgumentTypeError(f"invalid size {text!r}: must be positive")
    return size


def size_text(size: int) -> str:
    """A size in bytes as `parse_bytes` reads it, in the largest unit that divides it: 1G, 256M,
    1000."""
    for unit in ("T", "G", "M", "K"):
        if size > 0 and size % _UNITS[unit] == 0:
            return f"{size // _UNITS[unit]}{unit}"
    return str(size)


def _solve_empties(text: str) -> int | None:
    """`auto` (None: the endgame planner decides) or a count of empty points >= 0:
    argparse's type for `--solve-empties`."""
    if text.strip().lower() == "auto":
        return None
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"invalid value {text!r}: expected auto or a number of empty points") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"invalid value {text!r}: must be >= 0 (0: off)")
    return value


def _cache_bytes(text: str) -> int:
    """`parse_bytes`, or 0 (off): argparse's type for `--eval-cache`."""
    return 0 if text.strip() == "0" else parse_bytes(text)
