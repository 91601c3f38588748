"""Live analysis over GTP: the arguments of Leela Zero's and KataGo's analysis commands, and the
`info` lines they stream.

Sabaki, Lizzie and other GUIs start an analysis with `lz-analyze` or `kata-analyze`, read one line
per snapshot, and stop it by sending anything at all. The formats follow Leela Zero and KataGo's
docs/GTP_Extensions.md:

    lz-analyze [COLOR] [INTERVAL] [interval N] [maxmoves N] [allow|avoid COLOR VERTICES DEPTH]...
    kata-analyze  ... the same, and `ownership true|false`

    info move D4 visits 120 winrate 5432 prior 1234 lcb 5100 order 0 pv D4 Q16 info move ...
    info move D4 visits 120 utility 0.0864 winrate 0.5432 scoreMean 1.5 ... pv D4 Q16 ownership ...

Intervals are in centiseconds. A snapshot is one line holding every move the search has visited,
best first. Values convert from the search's view (a value in [-1, 1] for the side to move) to a
winrate (v + 1) / 2 for the side to move, as both engines report by default; Leela's integers are
10000 times it.

The score fields and the ownership map come from the network's score and ownership heads along
the search's principal variations (`engine/search/ownership.py`), from the side to move's view as
KataGo prints them: ownership is one value per point in [-1, 1], row-major from the top-left
(A19 first on 19x19). A network without the heads reports scores of 0, and `ownership true` is
refused rather than answered with made-up numbers.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from saz.engine.games.base import Game
from saz.engine.search.mcts import MoveInfo, SearchResult
from saz.engine.search.ownership import Estimate
from saz.protocol.vertex import GtpValueError, Vertices, is_color, parse_color

#: Seconds between snapshots when the command names no interval. Leela Zero and KataGo then print
#: nothing until stopped; GUIs always give one, and a person typing the command wants to see some.
DEFAULT_INTERVAL = 1.0
#: The shortest interval: `0` asks for as often as possible, which is once per centisecond here.
MIN_INTERVAL = 0.01


@dataclass(frozen=True)
class MoveFilter:
    """`allow` or `avoid`: moves of one colour, for that colour's moves in the first
    `until_depth` plies of the search."""

    allow: bool
    color: int
    moves: frozenset[int]
    until_depth: int


@dataclass(frozen=True)
class AnalysisRequest:
    """What an analysis command asks for."""

    #: The colour to analyse for; None: the side to move.
    color: int | None = None
    #: Seconds between snapshots.
    interval: float = DEFAULT_INTERVAL
    #: Moves per snapshot at most (KataGo's `maxmoves`); None: all visited moves.
    max_moves: int | None = None
    filters: tuple[MoveFilter, ...] = ()
    #: KataGo's `ownership true`: append the ownership map to each snapshot.
    ownership: bool = False

    def root_moves(self, game: Game) -> list[int] | None:
        """The moves the search may consider at the root, or None for every legal move.

        The search restricts its root only, so a filter counts where it matters most: on the
        first move, when its colour is the side to move. Deeper plies are searched freely."""
        filters = [f for f in self.filters if f.color == game.to_move]
        if not filters:
            return None
        allowed = {int(m) for m in game.legal_moves()}
        allows = [f.moves for f in filters if f.allow]
        if allows:
            allowed &= frozenset().union(*allows)
        for f in filters:
            if not f.allow:
                allowed -= f.moves
        return sorted(allowed)


def parse_analysis(args: Sequence[str], vertices: Vertices, *, kata: bool) -> AnalysisRequest:
    """The request of `lz-analyze` / `kata-analyze` (and the genmove variants) arguments;
    GtpValueError says what does not parse or is not supported."""
    tokens = list(args)
    color: int | None = None
    interval = DEFAULT_INTERVAL
    max_moves: int | None = None
    filters: list[MoveFilter] = []
    ownership = False
    i = 0
    if i < len(tokens) and is_color(tokens[i]):
        color = parse_color(tokens[i])
        i += 1
    if i < len(tokens) and _is_count(tokens[i]):
        interval = _interval(tokens[i])
        i += 1
    while i < len(tokens):
        key = tokens[i].lower()
        if key == "interval":
            interval = _interval(_value(tokens, i, 1))
            i += 2
        elif key == "maxmoves":
            max_moves = _count(_value(tokens, i, 1), "maxmoves", minimum=1)
            i += 2
        elif key in ("allow", "avoid"):
            filters.append(MoveFilter(
                allow=key == "allow",
                color=parse_color(_value(tokens, i, 1)),
                moves=frozenset(vertices.parse(v) for v in _value(tokens, i, 2).split(",") if v),
                until_depth=_count(_value(tokens, i, 3), f"{key} depth", minimum=1)))
            i += 4
        elif key == "ownership" and kata:
            flag = _value(tokens, i, 1).lower()
            if flag not in ("true", "false"):
                raise GtpValueError(f"ownership must be true or false, not {tokens[i + 1]!r}")
            ownership = flag == "true"
            i += 2
        else:
            raise GtpValueError(f"unknown or unsupported analysis option {tokens[i]!r} "
                                "(supported: interval, maxmoves, allow, avoid"
                                + (", ownership)" if kata else ")"))
    return AnalysisRequest(color, interval, max_moves, tuple(filters), ownership)


def _value(tokens: list[str], i: int, offset: int) -> str:
    if i + offset >= len(tokens):
        raise GtpValueError(f"analysis option {tokens[i]!r} is missing a value")
    return tokens[i + offset]


def _is_count(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _count(text: str, name: str, *, minimum: int) -> int:
    if not _is_count(text) or int(text) < minimum:
        raise GtpValueError(f"{name} must be a whole number >= {minimum}, not {text!r}")
    return int(text)


def _interval(text: str) -> float:
    """Seconds from a count of centiseconds."""
    return max(MIN_INTERVAL, _count(text, "interval", minimum=0) / 100.0)


# -- info lines ---------------------------------------------------------------------------------
InfoFormat = Callable[[SearchResult, Vertices, "int | None", "Estimate | None"], str]


def lz_info(result: SearchResult, vertices: Vertices, max_moves: int | None,
            estimate: Estimate | None = None) -> str:
    """One snapshot in Leela Zero's format (empty when no move has a visit yet); a proven
    result shows as a winrate of 10000 or 0, and a solved endgame's margin as `scoreLead`."""
    return _leela_lines(result, vertices, max_moves, _exact_margins(result))


def sabaki_info(result: SearchResult, vertices: Vertices, max_moves: int | None,
                estimate: Estimate | None = None) -> str:
    """One snapshot for Sabaki's own `analyze`: Leela Zero's fields (Sabaki reads the winrate
    of any command not named kata-* as an integer per 10,000) and, where the network has a
    score head, KataGo's `scoreLead`, which Sabaki shows as the lead and plots."""
    return _leela_lines(result, vertices, max_moves, _leads(result, estimate))


def _leads(result: SearchResult, estimate: Estimate | None) -> Mapping[int, float]:
    """Score leads per root move: the score head's, and for a move the endgame solver chose its
    exact final margin (each solved move's, `MoveInfo.exact_score`), which outranks any
    estimate."""
    leads = dict(estimate.score_leads) if estimate is not None else {}
    leads.update(_exact_margins(result))
    return leads


def _exact_margins(result: SearchResult) -> dict[int, float]:
    """The exact final margins the endgame solver found: per root move (`MoveInfo.exact_score`)
    and the chosen move's (`SearchResult.exact_score`)."""
    margins = {m.move: m.exact_score for m in result.moves if m.exact_score is not None}
    if result.exact_score is not None:
        margins[result.best_move] = result.exact_score
    return margins


def _leela_lines(result: SearchResult, vertices: Vertices, max_moves: int | None,
                 leads: Mapping[int, float]) -> str:
    """Leela Zero's info lines, with `scoreLead` before the PV for the moves in `leads`."""
    return " ".join(
        f"info move {vertices.format(m.move)} visits {m.visits} "
        f"winrate {_per_10000(_winrate(m.value))} prior {_per_10000(m.prior)} "
        f"lcb {_per_10000(_winrate(m.lcb))} order {order} "
        + (f"scoreLead {leads[m.move]:.6g} " if m.move in leads else "")
        + f"pv {_pv(m, vertices)}"
        for order, m in enumerate(_shown(result, max_moves)))


def kata_info(result: SearchResult, vertices: Vertices, max_moves: int | None,
              estimate: Estimate | None = None) -> str:
    """One snapshot in KataGo's format (empty when no move has a visit yet). Utility is the
    search's value itself; scoreLead (and scoreMean, scoreSelfplay) the score head's lead along
    the move's PV, 0 without the head; scoreStdev is not estimated (0). With an `estimate`
    holding ownership, the `ownership` map follows the moves."""
    leads = _leads(result, estimate)
    infos = []
    for order, m in enumerate(_shown(result, max_moves)):
        lead = f"{leads.get(m.move, 0.0):.6g}"
        infos.append(
            f"info move {vertices.format(m.move)} visits {m.visits} utility {m.value:.6g} "
            f"winrate {_winrate(m.value):.6g} scoreMean {lead} scoreStdev 0 scoreLead {lead} "
            f"scoreSelfplay {lead} prior {m.prior:.6g} lcb {_winrate(m.lcb):.6g} "
            f"utilityLcb {m.lcb:.6g} order {order} pv {_pv(m, vertices)}")
    if not infos:
        return ""
    if estimate is not None and estimate.ownership is not None:
        infos.append("ownership " + " ".join(f"{v:.6g}" for v in estimate.ownership.tolist()))
    return " ".join(infos)


def _shown(result: SearchResult, max_moves: int | None) -> Sequence[MoveInfo]:
    """The moves with visits, best first (the search's order), at most `max_moves`."""
    moves = [m for m in result.moves if m.visits > 0]
    return moves if max_moves is None else moves[:max_moves]


def _winrate(value: float) -> float:
    """The winrate in [0, 1] of a value in [-1, 1] (a bound below -1 reads as 0)."""
    return min(1.0, max(0.0, (value + 1.0) / 2.0))


def _per_10000(fraction: float) -> int:
    return round(10000 * fraction)


def _pv(info: MoveInfo, vertices: Vertices) -> str:
    return " ".join(vertices.format(m) for m in info.pv)
