"""Does a Go network know who leads? Its value, score and ownership against GNU Go's estimate.

    # the reference, once (GNU Go's `estimate_score`, about 0.2 s a 19x19 position):
    saz bench judgement --estimator "gnugo --mode gtp --level 10 --chinese-rules" \\
        --records models/records/go-branch19-gen508-vs-gnugo-l1-19x19 --every 20 --max-ply 260 \\
        --estimates /tmp/estimates-19x19.csv
    # then any number of networks, on the same positions, in seconds:
    saz bench judgement --estimates /tmp/estimates-19x19.csv --model models/go.onnx \\
        --model runs/go/models/gen_00508.onnx

    # where each player stands, ply by ply (the players as the records name them):
    saz bench judgement --estimates /tmp/estimates-19x19.csv --player gen508 --max-ply 100

Not a speed measurement. At 19x19 a 20-game match against GNU Go level 1 ends 0-20 or 1-19 for
every generation the Go run has made so far, so a match cannot tell two of them apart; this probe
asks whether their judgement of a position moves (docs/STRENGTH.md, "Training on 19x19 teaches the
judgement"). The positions are every `--every`th ply of the Go games of saz match records
(`records.read_games`); the reference is a GTP engine's estimate of Black's lead in each
(`loadsgf FILE N`, then GNU Go's `estimate_score`), written once to a CSV (game, ply, lead; the
game as `FILE.sgf#N` with the path as given, so run it from where the paths hold), so that judging
networks later needs neither the engine nor its minutes.

For each network the table gives, over the positions where the reference sees a clear lead (more
than `--clear` points), how often the value head sides with the leader (its sign matches; 50% is a
coin) and the mean value it gives the leader (from -1, sure the leader loses, to +1). The two
auxiliary heads each make a lead of their own, the score head's margin and the ownership map's
count (Black's points less White's, less the komi); for each, how often it names the clear leader,
and over every position its correlation with the reference's lead and its mean absolute error in
points. GNU Go's estimate is a heuristic of its own; on the lopsided games saz loses at 19x19 the
final counts bear it out.

`--player NAME` reads the same table for the games' players instead: at each estimated ply, the
player's mean lead (Black's lead, turned round where it played White) with its 95% interval. A
19x19 match against GNU Go cut at a move limit (`saz match --max-plies 100`), estimated after
its last move, tells two generations' openings apart where the games' results (0-20 for each)
cannot, and before the late middle game, where the side that is behind loses its groups one by
one and the final margins spread by hundreds of points (docs/STRENGTH.md).
"""
from __future__ import annotations

import argparse
import csv
import shlex
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from saz.engine.evaluator import Evaluator, ModelError
from saz.engine.games.base import BLACK, Game
from saz.engine.games.capabilities import AreaScored
from saz.engine.graph import encode, layout
from saz.protocol.client_errors import ClientError
from saz.protocol.gtp_client import GtpClient
from saz.tools.match.adapters import resolve_program
from saz.tools.match.records import RecordedGame
from saz.tools.match.replay import Replay
from saz.tools.match.scoring import go_records, parse_score

#: Positions evaluated in one batch.
BATCH = 32
#: Seconds the reference may take to load and estimate one position.
TIMEOUT = 120.0
CSV_FIELDS = ("game", "ply", "black_lead")
NAN = float("nan")


@dataclass(frozen=True)
class Estimate:
    """The reference's estimate of one position: Black's lead after `ply` moves of `game`
    (`RecordedGame.where`: "FILE.sgf#N")."""

    game: str
    ply: int
    black_lead: float


@dataclass(frozen=True)
class HeadJudgement:
    """How one head's lead (Black's, in points) compares with the reference's."""

    #: Of the clear positions, the share where the head's leader is the reference's.
    agrees: float
    #: Pearson correlation with the reference's lead over every position, and the mean absolute
    #: error in points.
    r: float
    error: float


@dataclass(frozen=True)
class Judgement:
    """How a network's heads compare with the reference over a set of positions."""

    positions: int
    #: Positions where the reference sees a lead of more than the clear margin.
    clear: int
    #: Of those, the share where the value's sign is the leader's.
    value_agrees: float
    #: Of those, the mean value from the leader's view.
    leader_value: float
    #: The score head's lead, and the lead its ownership map counts (Black's points owned, less
    #: White's and the komi); None without the head.
    score: HeadJudgement | None
    ownership: HeadJudgement | None


@dataclass(frozen=True)
class Standing:
    """Where a player stands after `ply` moves by the reference's estimate: its mean lead over
    the games it played, with the 95% interval's half-width (a normal approximation of the
    mean; NaN for a single game)."""

    player: str
    ply: int
    games: int
    lead: float
    margin: float


def parse_estimate(text: str) -> float:
    """Black's lead from an `estimate_score` reply, `W+13.2 (upper bound: 23.0, lower: 3.4)`."""
    words = text.split()
    if not words:
        raise ValueError("an empty estimate_score reply")
    return parse_score(words[0])


def sampled_plies(moves: int, every: int, max_ply: int | None, *,
                  finished: bool = True) -> list[int]:
    """Every `every`th ply of a game of `moves` moves (after that many moves), up to `max_ply`,
    stopping before its last move when the game was played out (a finished position has nothing
    left to judge); a game stopped short (`saz match --max-plies`, a resignation) keeps it."""
    end = moves - 1 if finished else moves
    last = end if max_ply is None else min(end, max_ply)
    return list(range(every, last + 1, every))


def played_out(game: RecordedGame) -> bool:
    """Whether the game ended on the board: its last two moves are passes (`SgfMove.move` is
    `width * height` for a pass)."""
    sgf = game.sgf
    moves = [node.move for node in sgf.nodes if node.move is not None]
    return len(moves) >= 2 and all(m.move == sgf.width * sgf.height for m in moves[-2:])


def estimate(reference: GtpClient, games: list[RecordedGame], every: int,
             max_ply: int | None) -> list[Estimate]:
    """The reference's estimate at every sampled ply of every game, each game loaded from a file
    of its own (GTP's `loadsgf` reads a file's first game; `loadsgf FILE N` sets up the
    position before move N)."""
    found = []
    with tempfile.TemporaryDirectory(prefix="saz-judgement-") as folder:
        path = Path(folder) / "game.sgf"
        for game in games:
            path.write_text(game.text, encoding="utf-8")
            for ply in sampled_plies(game.sgf.moves, every, max_ply,
                                     finished=played_out(game)):
                reference.command(f"loadsgf {path} {ply + 1}", timeout=TIMEOUT)
                lead = parse_estimate(reference.command("estimate_score", timeout=TIMEOUT))
                found.append(Estimate(game.where, ply, lead))
            print(f"{game.where}: {len(found)} positions estimated", file=sys.stderr, flush=True)
    return found


def write_estimates(path: Path, estimates: list[Estimate]) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(CSV_FIELDS)
        for e in estimates:
            writer.writerow([e.game, e.ply, f"{e.black_lead:g}"])


def read_estimates(path: Path) -> list[Estimate]:
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    if rows and set(CSV_FIELDS) - set(rows[0]):
        raise ValueError(f"{path}: expected the columns {', '.join(CSV_FIELDS)}")
    return [Estimate(r["game"], int(r["ply"]), float(r["black_lead"])) for r in rows]


def recorded(estimates: Sequence[Estimate]) -> dict[str, RecordedGame]:
    """The Go games of the records the estimates name, by `RecordedGame.where`."""
    files = sorted({e.game.rpartition("#")[0] for e in estimates})
    return {game.where: game for game in go_records([Path(f) for f in files])}


def standings(estimates: Sequence[Estimate], games: Mapping[str, RecordedGame],
              player: str) -> list[Standing]:
    """The player's lead (Black's lead, or White's when it played White) at each estimated ply
    of the games where the record names it as Black or White (SGF's PB and PW, as saz match
    writes them), ply by ply. ValueError for a game `games` does not hold."""
    leads: dict[int, list[float]] = {}
    for e in estimates:
        if e.game not in games:
            raise ValueError(f"no Go game {e.game}")
        color = games[e.game].sgf.color_of(player)
        if color is not None:
            leads.setdefault(e.ply, []).append(e.black_lead if color == BLACK else -e.black_lead)
    found = []
    for ply, values in sorted(leads.items()):
        n = len(values)
        margin = 1.96 * float(np.std(values, ddof=1)) / n ** 0.5 if n > 1 else NAN
        found.append(Standing(player, ply, n, float(np.mean(values)), margin))
    return found


def positions(estimates: list[Estimate]) -> list[Game]:
    """The positions the estimates are of, in their order: each game replayed once, under its
    record's komi and saz's rules (estimates of the same ply share one position, which is only
    read). ValueError for a game its file does not hold or a ply past its end."""
    wanted: dict[str, set[int]] = {}
    for e in estimates:
        wanted.setdefault(e.game, set()).add(e.ply)
    games = recorded(estimates)
    found: dict[tuple[str, int], Game] = {}
    for where, plies in wanted.items():
        if where not in games:
            raise ValueError(f"no Go game {where}")
        replay = Replay(games[where].sgf)
        for turn in replay:
            if turn.ply in plies:
                found[where, turn.ply] = turn.game.copy()
        found[where, len(replay.game.moves)] = replay.game
        beyond = [ply for ply in plies if (where, ply) not in found]
        if beyond:
            raise ValueError(f"{where} has {len(replay.game.moves)} moves, not {min(beyond)}")
    return [found[e.game, e.ply] for e in estimates]


def _agreement(lead: np.ndarray, guess: np.ndarray, sure: np.ndarray) -> float:
    """The share of the clear positions where `guess` names the reference's leader."""
    return float(np.mean(np.sign(guess[sure]) == np.sign(lead[sure]))) if sure.any() else NAN


def _head(lead: np.ndarray, guess: np.ndarray | None, sure: np.ndarray) -> HeadJudgement | None:
    if guess is None:
        return None
    spread = float(np.std(guess)) * float(np.std(lead))
    r = float(np.corrcoef(guess, lead)[0, 1]) if spread > 0 else NAN
    return HeadJudgement(_agreement(lead, guess, sure), r, float(np.mean(np.abs(guess - lead))))


def judge(lead: np.ndarray, value: np.ndarray, score: np.ndarray | None,
          owned: np.ndarray | None, clear: float) -> Judgement:
    """Compare a network's value, score and ownership lead (None without the head) with the
    reference's lead, all from Black's view."""
    sure = np.abs(lead) > clear
    leader_value = float(np.mean(value[sure] * np.sign(lead[sure]))) if sure.any() else NAN
    return Judgement(len(lead), int(sure.sum()), _agreement(lead, value, sure), leader_value,
                     _head(lead, score, sure), _head(lead, owned, sure))


def evaluate(evaluator: Evaluator, games: list[Game]
             ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Per position, from Black's view: the value, the score head's lead and the ownership
    map's (each None without its head)."""
    values = np.empty(len(games), np.float32)
    scores = np.empty(len(games), np.float32) if evaluator.has_score else None
    owned = np.empty(len(games), np.float32) if evaluator.has_ownership else None
    by_size: dict[tuple[int, int], list[int]] = {}
    for i, game in enumerate(games):
        by_size.setdefault((game.width, game.height), []).append(i)
    for (width, height), indices in by_size.items():
        points = width * height
        for start in range(0, len(indices), BATCH):
            chunk = indices[start:start + BATCH]
            batch = [games[i] for i in chunk]
            _, value, ownership, score = evaluator.run_aux(
                encode(batch), layout(width, height, type(batch[0])))
            side = np.array([1.0 if g.to_move == BLACK else -1.0 for g in batch], np.float32)
            komi = np.array([g.komi if isinstance(g, AreaScored) else 0.0 for g in batch],
                            np.float32)
            values[chunk] = value * side
            if scores is not None and score is not None:
                scores[chunk] = score * side
            if owned is not None and ownership is not None:  # the extra node's entry is not a point
                owned[chunk] = ownership[:, :points].sum(axis=1) * side - komi
    return values, scores, owned


def run(args: argparse.Namespace) -> int:
    if args.estimator is not None:
        if not args.records:
            raise SystemExit("saz bench judgement: --estimator needs --records")
        try:
            recorded = go_records(args.records)
            command = shlex.split(args.estimator)
            command[0] = resolve_program(command[0])  # Debian's gnugo lives in /usr/games
            with GtpClient(command) as reference:
                found = estimate(reference, recorded, args.every, args.max_ply)
        except (ClientError, ValueError, OSError) as exc:
            raise SystemExit(f"saz bench judgement: the estimator failed: {exc}") from None
        write_estimates(args.estimates, found)
        print(f"{len(found)} estimates written to {args.estimates}", file=sys.stderr)
    if not args.model and not args.player:
        return 0
    try:
        estimates = [e for e in read_estimates(args.estimates)
                     if args.max_ply is None or e.ply <= args.max_ply]
        if args.player:
            print_standings(estimates, args.player)
        if not args.model:
            return 0
        games = positions(estimates)
    except (OSError, ValueError) as exc:  # a missing or malformed table, a game it names
        raise SystemExit(f"saz bench judgement: {exc}") from None
    if not estimates:
        raise SystemExit(f"saz bench judgement: no positions in {args.estimates}")
    lead = np.array([e.black_lead for e in estimates], np.float32)
    print(f"| model | positions | lead > {args.clear:g} | value sides with the leader | "
          f"mean value for the leader | score head: sides with the leader, r, error | "
          f"ownership: sides with the leader, r, error |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for model in args.model:
        try:  # the records' game: a model of another is refused by its card
            evaluator = Evaluator(model, device="cpu", threads=args.threads,
                                  game=games[0].name)
        except ModelError as exc:
            raise SystemExit(f"saz bench judgement: {exc}") from None
        value, score, owned = evaluate(evaluator, games)
        j = judge(lead, value, score, owned, args.clear)
        print(f"| {model} | {j.positions} | {j.clear} | {100 * j.value_agrees:.1f}% | "
              f"{j.leader_value:+.2f} | {_cell(j.score)} | {_cell(j.ownership)} |")
    return 0


def print_standings(estimates: Sequence[Estimate], players: Sequence[str]) -> None:
    """The players' standings as a Markdown table; ValueError for a player in none of the
    games."""
    games = recorded(estimates)
    rows = []
    for player in players:
        found = standings(estimates, games, player)
        if not found:
            raise ValueError(f"{player!r} is neither Black nor White in the estimated games")
        rows += found
    print("| player | ply | games | lead by the reference [95%] |")
    print("|---|---:|---:|---:|")
    for r in rows:
        print(f"| {r.player} | {r.ply} | {r.games} | {r.lead:+.1f} "
              f"[{r.lead - r.margin:+.1f}, {r.lead + r.margin:+.1f}] |")


def _cell(head: HeadJudgement | None) -> str:
    if head is None:
        return ""
    return f"{100 * head.agrees:.1f}%, {head.r:.2f}, {head.error:.1f}"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "judgement", help="how well Go networks judge who is ahead, against GNU Go's score "
                          "estimates (a probe, not a timing)",
        description="Compare Go networks' value, score and ownership with a reference "
                    "engine's estimate of the score, over positions of saz match records.")
    p.add_argument("--estimates", type=Path, required=True,
                   help="the reference's estimates (CSV: game, ply, black_lead); written "
                        "when --estimator is given, else read")
    p.add_argument("--estimator", default=None,
                   help="a GTP engine that answers loadsgf and estimate_score (GNU Go), to "
                        "estimate the positions of --records and write --estimates")
    p.add_argument("--records", type=Path, action="append", default=[],
                   help="match records (PATH or PATH.sgf), SGF files or folders of them, for "
                        "--estimator; repeatable")
    p.add_argument("--every", type=int, default=20,
                   help="estimate every Nth ply of each game (default 20)")
    p.add_argument("--max-ply", type=int, default=None,
                   help="only positions up to this ply (when estimating and when judging)")
    p.add_argument("--model", action="append", default=[],
                   help="an exported Go model to judge (repeat to compare several)")
    p.add_argument("--player", action="append", default=[],
                   help="also print where this player (a name of the records' PB/PW) stands "
                        "at each estimated ply: its mean lead with a 95%% interval; "
                        "repeatable")
    p.add_argument("--clear", type=float, default=5.0,
                   help="the lead, in points, above which the reference's leader is taken as "
                        "clear (default 5)")
    p.add_argument("--threads", type=int, default=1, help="onnxruntime threads (default 1)")
    p.set_defaults(handler=run)
