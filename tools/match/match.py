"""`saz match`: engine-vs-engine matches of Go, Othello, Gomoku or chess, refereed, with Elo
and SPRT.

    saz match --game go --size 9 --games 10 --tc move=2 --random-plies 4 --out runs/m1 \\
        --engine greedy="saz gtp --player greedy" \\
        --engine gnugo="gnugo --mode gtp --level 1 --chinese-rules --capture-all-dead"
    saz match --game chess --games 40 --tc 10+0.1 --openings book.epd --out runs/c1 \\
        --engine saz="saz uci" --engine sf=stockfish --option "sf:Skill Level=0"

Engines are subprocesses speaking GTP (Go, Othello), the Gomocup protocol (Gomoku) or UCI
(chess); each game starts them afresh (`tools/match/adapters.py`), and
`tools/match/referee.py` referees it. Colours alternate: game 2k has the first engine as the
side that moves first (Black; White in chess), game 2k+1 the second, both from the k-th
opening. `--option ENGINE:NAME=VALUE` gives a UCI engine an option (`setoption`: Skill Level,
UCI_LimitStrength, UCI_Elo, Threads, Hash), once per option; `UCI_Variant` is set from the
board (`--size 5` Gardner, `--size 6` Los Alamos, or `--variant`). `--protocol ENGINE=nboard`
has an Othello engine spoken to in the NBoard protocol (NTest, Edax) instead of GTP; such an
engine takes the options `depth` (`set depth N`) and `contempt`:

    saz match --game othello --games 40 --tc move=1 --random-plies 2 --out runs/ntest4 \
        --engine saz="saz gtp --game othello" --engine ntest="ntest x" \
        --protocol ntest=nboard --option ntest:depth=4

**Openings.** `--random-plies P` opens every pair of games with P uniformly random legal moves
(no passes; drawn with `--seed`, so a match can be replayed). `--openings FILE` reads one
opening per line: the moves from Black's first, in the game's GTP vertices (Go and Gomoku `D4`,
columns without I and row 1 at the bottom; Othello `d3`, from the top-left), separated by spaces
or commas; `pass` where Go passes or Othello must; `#` starts a comment; blank lines are
skipped; chess's moves are UCI's (`e2e4`, `e7e8q`). A chess openings file may also be EPD
(`FILE.epd`: a position a line, the four FEN fields and optionally the counters or `hmvc`/`fmvn`)
or PGN (`FILE.pgn`: each game's FEN tag, if any, and its main line). The openings are used in
turn, again from the first when the games outnumber them.

**Output.** A line per game and the first engine's running record (W-L-D), its Elo difference
with the 95% interval (`tools/match/elo.py`), and the SPRT's log-likelihood ratio with `--sprt`. The
match stops starting games once the SPRT decides. With `--out PATH`, the match record
(`tools/match/records.py`): `PATH.sgf`, an SGF collection of every game in the order of their
numbers (chess: `PATH.pgn`, every game in PGN, `tools/match/pgn.py`; Othello also `PATH.ggf`,
the same games in GGF, `protocol/ggf.py`), and `PATH.json`, the
summary (the command that plays the match again, engines, settings,
each game's result, reason and time, totals, Elo, SPRT), both rewritten after every game.
With `--card MODEL.json` as well, the match's row (opponent, board, W-L-D, Elo, ...) is recorded
in that model card's strength table when the match ends (`tools/match/strength.py`; the first engine
is the model's). Exit status 0; 2 for a mistake in the match (a bad option, a card that cannot
be loaded or is another game's, an engine missing or refusing the settings).

This module imports no torch: matches start in a fraction of a second.
"""
from __future__ import annotations

import argparse
import math
import shlex
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from saz.engine.games import BLACK, DRAW, GAME_NAMES, WHITE, GameError, game_class
from saz.engine.games.grid import parse_size
from saz.engine.model_card import ModelCardError
from saz.protocol.ggf import GgfClock, format_clock, format_ggf, from_game, records_game
from saz.protocol.sgf_writer import SgfInfo, format_sgf
from saz.protocol.vertex import GtpValueError, vertices_for
from saz.tools.match.adapters import EngineSpec, GameSetup, SetupRefused, uci_variant
from saz.tools.match.elo import Record, Sprt, Verdict, estimate
from saz.tools.match.pgn import (
    PgnOpening,
    format_pgn,
    notation,
    read_epd_openings,
    read_pgn_openings,
)
from saz.tools.match.records import (
    GGF_SUFFIX,
    OPENING_NOTE,
    PGN_SUFFIX,
    MatchRecord,
    extra_suffixes,
    games_suffix,
    write_games,
    write_summary,
)
from saz.tools.match.referee import GameRecord, Reason, new_position, play_game
from saz.tools.match.strength import StrengthError, load_card, read_record, record_rows
from saz.tools.match.time_control import MatchTimeControl, MatchTimeControlError


class MatchError(Exception):
    """A match that cannot be played as asked (exit status 2)."""


#: An opening: the moves from the usual start, or (from an EPD or PGN file) a start position
#: and the moves from there.
Opening = tuple[int, ...] | PgnOpening


def _moves_and_start(opening: Opening) -> tuple[tuple[int, ...], str | None]:
    if isinstance(opening, PgnOpening):
        return opening.moves, opening.fen
    return opening, None


# -- openings -------------------------------------------------------------------------------------
def read_openings(lines: Sequence[str], setup: GameSetup) -> list[Opening]:
    """The openings of an openings file's lines (module docstring); MatchError naming the line
    of a move that is no vertex, is illegal, or ends the game."""
    parse: Callable[[Any, str], int]
    if setup.protocol == "uci":
        def parse(game: Any, word: str) -> int:
            return notation(game).parse_uci(word)
    else:
        vertices = vertices_for(setup.game, setup.width, setup.height)

        def parse(game: Any, word: str) -> int:
            return vertices.parse(word)
    openings: list[Opening] = []
    for number, line in enumerate(lines, 1):
        words = line.split("#", 1)[0].replace(",", " ").split()
        if not words:
            continue
        game = new_position(setup)
        for word in words:
            try:
                game.play(parse(game, word))
            except (GtpValueError, GameError) as exc:
                raise MatchError(f"openings line {number}: {word}: {exc}") from None
        if game.is_over():
            raise MatchError(f"openings line {number}: the opening ends the game")
        openings.append(tuple(game.moves))
    if not openings:
        raise MatchError("the openings file has no opening")
    return openings


def read_opening_file(path: Path, setup: GameSetup) -> list[Opening]:
    """The openings of a file: EPD (`.epd`) or PGN (`.pgn`) positions for a game that sets
    positions up from FEN (chess), else one opening a line (`read_openings`); MatchError when
    it cannot be read or holds none."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise MatchError(f"cannot read the openings: {exc}") from None
    suffix = path.suffix.lower()
    if suffix not in (".epd", ".pgn"):
        return read_openings(text.splitlines(), setup)
    if setup.protocol != "uci":
        raise MatchError(f"{path}: {suffix} openings are chess positions, not {setup.game}")

    def start(fen: str | None) -> Any:
        return new_position(setup, (), fen)
    try:
        found: list[Opening] = list(read_epd_openings(text.splitlines(), start)
                                    if suffix == ".epd" else read_pgn_openings(text, start))
    except GameError as exc:
        raise MatchError(f"{path}: {exc}") from None
    if not found:
        raise MatchError(f"{path}: the openings file has no opening")
    return found


def random_openings(setup: GameSetup, plies: int, count: int, seed: int) -> list[Opening]:
    """`count` openings of `plies` uniformly random legal moves each (`Game.play_random`: passes
    excluded but Othello's forced pass, none of which ends the game). Opening k depends on
    (seed, k) only."""
    openings: list[Opening] = []
    for index in range(count):
        game = new_position(setup)
        if game.play_random(plies, np.random.default_rng([seed, index])) < plies:
            raise MatchError(f"no {plies}-move opening leaves a game to play")
        openings.append(tuple(game.moves))
    return openings


# -- the schedule ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Pairing:
    """One scheduled game: its number (from 1), the engines by colour, its opening's moves and
    the position they start from (a FEN; None: the usual start)."""

    number: int
    black: EngineSpec
    white: EngineSpec
    opening: tuple[int, ...]
    start: str | None = None


def schedule(first: EngineSpec, second: EngineSpec, games: int,
             openings: Sequence[Opening], first_mover: int = BLACK) -> list[Pairing]:
    """Games 2k and 2k+1 (from 0) play opening k mod len(openings), `first` as the colour
    `first_mover` (the game's: Black, White in chess) in the former and as the other in the
    latter."""
    pairings = []
    for index in range(games):
        moves, start = _moves_and_start(openings[(index // 2) % len(openings)])
        leading, following = (first, second) if index % 2 == 0 else (second, first)
        black, white = (leading, following) if first_mover == BLACK else (following, leading)
        pairings.append(Pairing(index + 1, black, white, moves, start))
    return pairings


# -- the match ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MatchConfig:
    """Everything a match is played with."""

    setup: GameSetup
    first: EngineSpec
    second: EngineSpec
    games: int
    openings: tuple[Opening, ...] = ((),)
    margin: float = 0.5
    max_plies: int | None = None
    sprt: Sprt | None = None
    concurrency: int = 1
    out: Path | None = None
    #: How the openings were made, for the summary: "none", "random 4 plies, seed 0", a file.
    opening_source: str = "none"
    #: The command line that plays the match again ("saz match ..."), for the summary; None for
    #: a match configured in code.
    command: str | None = None


@dataclass
class Standings:
    """The games so far and the first engine's record."""

    config: MatchConfig
    #: (game number, record), in the order the games ended.
    results: list[tuple[int, GameRecord]] = field(default_factory=list)
    record: Record = field(default_factory=Record)

    def add(self, number: int, game: GameRecord) -> None:
        self.results.append((number, game))
        self.record = self.record.plus(game.points_of(self.config.first.name))

    @property
    def verdict(self) -> Verdict:
        sprt = self.config.sprt
        return Verdict.CONTINUE if sprt is None else sprt.verdict(self.record)

    def line(self) -> str:
        """The running record: W-L-D, Elo [95%], and the SPRT's state."""
        config = self.config
        text = (f"{config.first.name} vs {config.second.name}: {self.record} (W-L-D), "
                f"Elo {estimate(self.record)}")
        if config.sprt is not None:
            sprt = config.sprt
            text += (f", LLR {sprt.llr(self.record):+.2f} ({sprt.lower_bound:+.2f}, "
                     f"{sprt.upper_bound:+.2f})")
            if self.verdict is not Verdict.CONTINUE:
                text += f": {self.verdict.value} accepted"
        return text


def game_line(number: int, total: int, game: GameRecord) -> str:
    """One finished game, as printed: the side that moves first in the game first."""
    width = len(str(total))
    plies = len(game.game.moves)
    detail = f" ({game.detail})" if game.detail else ""
    sides = f"{game.black} (B) - {game.white} (W)"
    if _first_mover(game) == WHITE:
        sides = f"{game.white} (W) - {game.black} (B)"
    return (f"game {number:>{width}}/{total}: {sides}: "
            f"{game.result} by {game.reason.value}, {plies} moves{detail}")


def _first_mover(game: GameRecord) -> int:
    """The colour that moves first in the game's usual start (a set-up start may differ)."""
    played = game.game
    return type(played)(played.width, played.height).to_move


def run_match(config: MatchConfig, on_game: Callable[[int, GameRecord, Standings], None]
              = lambda number, game, standings: None) -> Standings:
    """Play the match, `config.concurrency` games at a time, calling `on_game` as each ends
    (from this thread, in the order they end); no game starts once the SPRT has decided.
    SetupRefused (after the games in progress end) when an engine refuses the settings."""
    first_mover = new_position(config.setup).to_move
    pending: Iterator[Pairing] = iter(schedule(config.first, config.second, config.games,
                                               config.openings, first_mover))
    standings = Standings(config)
    trees: dict[int, str] = {}  # the finished games' SGF (or PGN), by number
    ggf_games: dict[int, str] = {}  # and their GGF (Othello), by number
    refused: SetupRefused | None = None
    with ThreadPoolExecutor(config.concurrency, thread_name_prefix="saz-match") as pool:
        running: dict[Future[GameRecord], Pairing] = {}

        def start_next() -> None:
            pairing = next(pending, None)
            if pairing is not None:
                running[pool.submit(play_game, config.setup, pairing.black, pairing.white,
                                    pairing.opening, margin=config.margin,
                                    max_plies=config.max_plies,
                                    start=pairing.start)] = pairing

        for _ in range(config.concurrency):
            start_next()
        while running:
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                pairing = running.pop(future)
                try:
                    game = future.result()
                except SetupRefused as exc:
                    refused = exc
                    continue
                standings.add(pairing.number, game)
                if config.out is not None:
                    trees[pairing.number] = game_text(config, pairing.number, game)
                    if GGF_SUFFIX in extra_suffixes(config.setup.game):
                        ggf_games[pairing.number] = game_ggf(config, pairing.number, game)
                    write_record(config, standings, trees, ggf_games)
                on_game(pairing.number, game, standings)
                if refused is None and standings.verdict is Verdict.CONTINUE:
                    start_next()
    if refused is not None:
        raise refused
    return standings


# -- the record ----------------------------------------------------------------------------------
def game_text(config: MatchConfig, number: int, game: GameRecord) -> str:
    """The record of one game in the match's format: PGN for chess, else SGF."""
    if games_suffix(config.setup.game) == PGN_SUFFIX:
        return game_pgn(config, number, game)
    return game_sgf(config, number, game)


#: PGN's Termination tag of each way a game ends (the standard's values).
_PGN_TERMINATION = {Reason.TIME: "time forfeit", Reason.ILLEGAL: "rules infraction",
                    Reason.CRASH: "abandoned", Reason.MOVE_LIMIT: "adjudication"}


def game_pgn(config: MatchConfig, number: int, game: GameRecord) -> str:
    """The PGN record of one game of the match: the Seven Tag Roster, the start position and
    variant where needed, the time control, how it ended (Termination, and in words before the
    result), each engine move's score and time as cutechess writes them (`{+0.31/12 0.52s}`)."""
    setup = config.setup
    control = setup.time_control
    time_control = (f"{control.base:g}+{control.increment:g}" if control.has_game_clock
                    else f"1/{control.per_move:g}")
    tags = {"Event": f"{config.first.name} vs {config.second.name}", "Site": "?",
            "Date": date.today().strftime("%Y.%m.%d"), "Round": str(number),
            "White": game.white, "Black": game.black, "Result": game.result,
            "TimeControl": time_control,
            "Termination": _PGN_TERMINATION.get(game.reason, "normal"),
            "PlyCount": str(len(game.game.moves)), "Annotator": f"saz:{_version()}"}
    comments: dict[int, str] = {}
    for ply, seconds in game.move_seconds.items():
        comments[ply] = " ".join(filter(None, [game.move_notes.get(ply, ""), f"{seconds:.2f}s"]))
    if game.opening_plies:
        comments[game.opening_plies - 1] = "end of the opening"
    variant = uci_variant(setup)
    return format_pgn(game.game, tags, variant=variant,
                      usual_start=notation(new_position(setup)).fen(), comments=comments,
                      comment=_ending(game))


def _ending(game: GameRecord) -> str:
    """How a game ended, in words, as PGN's last comment: "White mates", "Draw by stalemate",
    the referee's detail of a forfeit."""
    names = {WHITE: "White", BLACK: "Black"}
    if game.reason is Reason.CHECKMATE:
        return f"{names[game.winner]} mates"
    if game.winner == DRAW:
        return f"Draw by {game.reason.value}" + (f": {game.detail}" if game.detail else "")
    return f"{names[game.winner]} wins by {game.reason.value}" + (
        f": {game.detail}" if game.detail else "")


def game_sgf(config: MatchConfig, number: int, game: GameRecord) -> str:
    """The SGF record of one game of the match."""
    setup = config.setup
    control = setup.time_control
    overtime = ", ".join(
        ([f"Fischer +{control.increment:g} s per move"] if control.has_game_clock else [])
        + ([f"at most {control.per_move:g} s per move"] if control.per_move is not None else []))
    comment = f"{game.result} by {game.reason.value}" + (f": {game.detail}" if game.detail
                                                          else "")
    if game.opening_plies:
        comment += OPENING_NOTE.format(game.opening_plies)
    info = SgfInfo(
        black=game.black, white=game.white, result=game.result,
        rules=game.game.rules_text,
        day=date.today(), main_time=control.base,
        overtime=overtime, name=f"{config.first.name} vs {config.second.name}, game {number}",
        comment=comment, application=f"saz:{_version()}",
        move_comments={game.opening_plies - 1: "end of the opening"}
        if game.opening_plies else {})
    return format_sgf(game.game, info)


def game_ggf(config: MatchConfig, number: int, game: GameRecord) -> str:
    """The GGF record of one game of an Othello match, one line: the players, the date, the
    result (`ggf_result`), the game clock (TI, where the match has one), every move with the
    seconds it took and its engine's evaluation where one was given, and in CO what the SGF's
    game comment says (the game's number, how it ended, the opening's length)."""
    control = config.setup.time_control
    comment = (f"{config.first.name} vs {config.second.name}, game {number}: {game.result} "
               f"by {game.reason.value}" + (f": {game.detail}" if game.detail else ""))
    if control.per_move is not None:
        comment += f"; at most {control.per_move:g} s per move"
    if game.opening_plies:
        comment += OPENING_NOTE.format(game.opening_plies)
    tags = {"PC": f"saz:{_version()}",
            "DT": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S GMT"),
            "PB": game.black, "PW": game.white, "RE": ggf_result(game)}
    if control.has_game_clock:
        tags["TI"] = format_clock(GgfClock(control.base, control.increment))
    tags["CO"] = " ".join(comment.replace("[", "(").replace("]", ")").split())  # one line
    plies = len(game.game.moves)
    evals = [_eval(game.move_notes.get(ply, "")) for ply in range(plies)]
    times = [game.move_seconds.get(ply) for ply in range(plies)]
    seconds = [None if taken is None else round(taken, 2) for taken in times]
    return format_ggf(from_game(game.game, tags, evals=evals, seconds=seconds)) + "\n"


def ggf_result(game: GameRecord) -> str:
    """GGF's RE: Black's disc margin, the empty squares going to the winner as GGS counts them
    (`+12`, `-2`, `0`); a game lost on time or forfeited (resignation, an illegal move, a crash)
    as a wipe-out, the whole board's margin with `:t` (time) or `:r` (the others)."""
    played = game.game
    if game.reason in (Reason.TIME, Reason.RESIGN, Reason.ILLEGAL, Reason.CRASH):
        sign = 0 if game.winner == DRAW else (1 if game.winner == BLACK else -1)
        suffix = ":t" if game.reason is Reason.TIME else ":r"
        return f"{sign * played.num_points:+d}{suffix}"
    margin = int(played.score() or 0)
    margin += played.num_empty if margin > 0 else -played.num_empty if margin < 0 else 0
    return f"{margin:+d}" if margin else "0"


def _eval(note: str) -> float | None:
    """An engine's evaluation from its move note (an NBoard engine's `+1.50`), if it is one."""
    try:
        value = float(note)
    except ValueError:
        return None
    return round(value, 2) if math.isfinite(value) else None


def write_record(config: MatchConfig, standings: Standings, trees: Mapping[int, str],
                 ggf_games: Mapping[int, str] | None = None) -> None:
    """The match record so far at `config.out` (`tools/match/records.py`): the collection of
    the finished games' `trees` (by game number), in the order of their numbers, and of an
    Othello match's `ggf_games` likewise, then the summary, whose `games` are in the same
    order."""
    assert config.out is not None
    record = MatchRecord.of(config.out, games_suffix(config.setup.game))
    write_games(record, (trees[number] for number in sorted(trees)))
    if ggf_games:
        write_games(record, (ggf_games[number] for number in sorted(ggf_games)), GGF_SUFFIX)
    write_summary(record, summary(config, standings))


def summary(config: MatchConfig, standings: Standings) -> dict[str, Any]:
    """The machine-readable record of the match so far (the record's PATH.json); its `games`
    in the order of their numbers, as the collection holds them."""
    setup, record = config.setup, standings.record
    first, second = config.first.name, config.second.name
    games = []
    starts = {p.number: p.start for p in schedule(config.first, config.second, config.games,
                                                  config.openings)}
    for number, game in sorted(standings.results, key=lambda result: result[0]):
        games.append({
            "game": number, "black": game.black, "white": game.white,
            "result": game.result, "winner": game.winner_name, "reason": game.reason.value,
            "detail": game.detail, "moves": len(game.game.moves),
            "opening_plies": game.opening_plies,
            **({"start": starts[number]} if starts.get(number) else {}),
            "seconds": {"black": round(game.seconds[BLACK], 3),
                        "white": round(game.seconds[WHITE], 3)},
            "slowest_move": {"black": round(game.slowest[BLACK], 3),
                             "white": round(game.slowest[WHITE], 3)}})
    out: dict[str, Any] = {
        "command": config.command,
        "engines": {first: config.first.command, second: config.second.command},
        **({"options": {spec.name: dict(spec.options) for spec in (config.first, config.second)
                        if spec.options}}
           if config.first.options or config.second.options else {}),
        **({"protocols": {spec.name: spec.protocol for spec in (config.first, config.second)
                          if spec.protocol}}
           if config.first.protocol or config.second.protocol else {}),
        "settings": {"game": setup.game, "width": setup.width, "height": setup.height,
                     "rules": setup.rules, "time_control": str(setup.time_control),
                     "time_margin": config.margin, "games": config.games,
                     "openings": config.opening_source, "concurrency": config.concurrency,
                     "max_plies": config.max_plies},
        "games": games,
        "totals": {first: _counts(record), second: _counts(record.reversed())},
    }
    if record.games:
        elo = estimate(record)
        out["elo"] = {"engine": first, "opponent": second, "elo": _finite(elo.elo),
                      "lower": _finite(elo.lower), "upper": _finite(elo.upper),
                      "confidence": elo.confidence, "text": str(elo)}
    if config.sprt is not None:
        sprt = config.sprt
        out["sprt"] = {"elo0": sprt.elo0, "elo1": sprt.elo1, "alpha": sprt.alpha,
                       "beta": sprt.beta, "llr": round(sprt.llr(record), 4),
                       "lower_bound": round(sprt.lower_bound, 4),
                       "upper_bound": round(sprt.upper_bound, 4),
                       "verdict": standings.verdict.value}
    return out


def _counts(record: Record) -> dict[str, int]:
    return {"wins": record.wins, "losses": record.losses, "draws": record.draws}


def _finite(value: float) -> float | None:
    """JSON has no infinity: an unbounded Elo is null (the `text` field says which way)."""
    return round(value, 1) if math.isfinite(value) else None


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("saz")
    except metadata.PackageNotFoundError:
        return "unknown"


# -- the command line -----------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="saz match",
        description="Play two engines against each other (GTP for Go and Othello, Gomocup for "
                    "Gomoku, UCI for chess), refereed move by move, with Elo, its 95%% interval "
                    "and an SPRT.",
        epilog="Time controls: BASE+INC (Fischer seconds, e.g. 5+0.1), move=SECONDS (e.g. "
               "move=2), or both (60+0,move=1, Gomocup's match and turn limits). Openings file: "
               "one opening a line, moves in GTP vertices (Go, Gomoku D4; Othello d3 from the "
               "top-left) or UCI (chess e2e4), 'pass' where needed, '#' comments; for chess also "
               "FILE.epd (a position a line) or FILE.pgn (each game's start and main line). "
               "Engines restart every game.")
    parser.add_argument("--game", choices=GAME_NAMES, required=True)
    parser.add_argument("--size", type=parse_size, metavar="N|WxH",
                        help="the board (default: go 19, othello 8, gomoku 15, chess 8; chess 5 "
                             "is Gardner's, 6 Los Alamos)")
    parser.add_argument("--engine", action="append", required=True, metavar="NAME=COMMAND",
                        help="a contestant, twice: its name and the command line that starts "
                             "it (programs are also looked for in /usr/games)")
    parser.add_argument("--option", action="append", default=[], metavar="ENGINE:NAME=VALUE",
                        help="an option for the engine called ENGINE: UCI's (setoption), e.g. "
                             "'sf:Skill Level=0', or NBoard's depth and contempt, e.g. "
                             "'ntest:depth=4'; once per option")
    parser.add_argument("--protocol", action="append", default=[], metavar="ENGINE=PROTOCOL",
                        help="the protocol the engine called ENGINE speaks where it is not its "
                             "game's: nboard for an Othello engine such as NTest or Edax")
    parser.add_argument("--games", type=int, default=2, metavar="K",
                        help="games to play (default 2: one opening, both colours)")
    parser.add_argument("--tc", default="move=5", metavar="TC",
                        help="time control: BASE+INC, move=SECONDS or both (default move=5)")
    parser.add_argument("--time-margin", type=float, default=0.5, metavar="S",
                        help="seconds past the limit that are forgiven (default 0.5)")
    openings = parser.add_mutually_exclusive_group()
    openings.add_argument("--openings", type=Path, metavar="FILE",
                          help="openings, one a line, each played with both colours")
    openings.add_argument("--random-plies", type=int, default=0, metavar="P",
                          help="open each pair of games with P random legal moves")
    parser.add_argument("--seed", type=int, default=0, help="of the random openings")
    parser.add_argument("--komi", type=float, default=7.5, help="Go's komi (default 7.5)")
    parser.add_argument("--rule", choices=("freestyle", "exact-five", "renju"), default="freestyle",
                        help="Gomoku's rule (default freestyle)")
    parser.add_argument("--variant", help="chess's variant (chess, gardner, losalamos; default: "
                                          "the board's)")
    parser.add_argument("--max-plies", type=int, metavar="N",
                        help="adjudicate a game after N moves: Go by the area score, else a "
                             "draw (default 4 per point, chess 8 per square)")
    parser.add_argument("--sprt", metavar="ELO0,ELO1",
                        help="test elo=ELO0 against elo=ELO1 (the first engine's), stopping "
                             "when decided")
    parser.add_argument("--alpha", type=float, default=0.05, help="SPRT's alpha (0.05)")
    parser.add_argument("--beta", type=float, default=0.05, help="SPRT's beta (0.05)")
    parser.add_argument("--concurrency", type=int, default=1, metavar="C",
                        help="games played at once (default 1)")
    parser.add_argument("--out", type=Path, metavar="PATH",
                        help="record the match: every game in PATH.sgf (an SGF collection; "
                             "chess PATH.pgn; Othello also PATH.ggf), the summary in PATH.json")
    parser.add_argument("--card", type=Path, metavar="MODEL.json",
                        help="when the match ends, record its row in this model card's strength "
                             "table (the first engine plays the model; needs --out)")
    return parser


def _for_engine(first: EngineSpec, second: EngineSpec, flag: str, text: str, separator: str,
                form: str, apply: Callable[[EngineSpec, str], EngineSpec]
                ) -> tuple[EngineSpec, EngineSpec]:
    """The two engines after `flag`'s `text` (`ENGINE<separator>REST`) gave REST to the one it
    names through `apply`; MatchError when it names neither."""
    name, found, rest = text.partition(separator)
    if not found or name not in (first.name, second.name):
        raise MatchError(f"{flag} {text!r}: write {form}, ENGINE one of "
                         f"{first.name!r}, {second.name!r}")
    if name == first.name:
        return apply(first, rest), second
    return first, apply(second, rest)


def config_from_args(args: argparse.Namespace, command: str | None = None) -> MatchConfig:
    """The match the parsed options describe, `command` the line that gave them; MatchError (or
    ValueError) when they do not."""
    if len(args.engine) != 2:
        raise MatchError(f"a match needs two --engine NAME=COMMAND, got {len(args.engine)}")
    first, second = (EngineSpec.parse(text) for text in args.engine)
    if first.name == second.name:
        raise MatchError(f"the engines need different names, both are {first.name!r}")
    for text in args.option:
        first, second = _for_engine(first, second, "--option", text, ":", "ENGINE:NAME=VALUE",
                                    EngineSpec.with_option)
    for text in args.protocol:
        first, second = _for_engine(first, second, "--protocol", text, "=", "ENGINE=PROTOCOL",
                                    EngineSpec.with_protocol)
    for name, value, least in (("--games", args.games, 1), ("--concurrency", args.concurrency, 1),
                               ("--random-plies", args.random_plies, 0)):
        if value < least:
            raise MatchError(f"{name} must be at least {least}")
    if args.max_plies is not None and args.max_plies < 1:
        raise MatchError("--max-plies must be at least 1")
    game = game_class(args.game)
    width, height = args.size or (game.info.default_size,) * 2
    # --komi and --rule, as far as the game's rules take them (Go: komi; Gomoku: rule).
    chosen: dict[str, Any] = {"komi": args.komi, "rule": args.rule, "variant": args.variant}
    rules = {name: chosen[name] for name in game.info.rule_options}
    setup = GameSetup(args.game, width, height, MatchTimeControl.parse(args.tc), rules)
    try:
        new_position(setup)
        if setup.protocol == "gtp":
            vertices_for(setup.game, width, height)
    except (GameError, GtpValueError) as exc:
        raise MatchError(str(exc)) from None
    for spec in (first, second):
        protocol = spec.protocol_in(setup)
        if spec.protocol not in (None, setup.protocol, "nboard"):
            raise MatchError(f"--protocol: {spec.name} cannot speak {spec.protocol} in "
                             f"{setup.game} (its engines speak {setup.protocol}; Othello's "
                             "also nboard)")
        if protocol == "nboard" and not records_game(setup.game):
            raise MatchError(f"--protocol: NBoard engines play Othello, not {setup.game}")
        if spec.options and protocol not in ("uci", "nboard"):
            raise MatchError(f"--option: {spec.name} speaks {protocol}, which has no engine "
                             "options")
    pairs = (args.games + 1) // 2
    openings: list[Opening]
    if args.openings is not None:
        openings = read_opening_file(args.openings, setup)
        source = str(args.openings)
    elif args.random_plies:
        openings = random_openings(setup, args.random_plies, pairs, args.seed)
        source = f"random {args.random_plies} plies, seed {args.seed}"
    else:
        openings, source = [()], "none"
    sprt = None
    if args.sprt is not None:
        try:
            elo0, elo1 = (float(v) for v in args.sprt.split(","))
        except ValueError:
            raise MatchError(f"--sprt {args.sprt!r}: write ELO0,ELO1, e.g. 0,50") from None
        sprt = Sprt(elo0, elo1, args.alpha, args.beta)
    return MatchConfig(setup, first, second, args.games, tuple(openings), args.time_margin,
                       args.max_plies, sprt, args.concurrency, args.out, source, command)


def main(argv: Sequence[str] | None = None, *, stdout: TextIO | None = None) -> int:
    """`saz match ARGS`; the exit status."""
    out = stdout or sys.stdout
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        config = config_from_args(args, "saz match " + shlex.join(argv))
        if args.card is not None:
            if config.out is None:
                raise MatchError("--card needs --out: the card's row names the match record")
            load_card(args.card, config.setup.game)  # a bad card is refused before any game
    except (MatchError, MatchTimeControlError, ValueError) as exc:  # ModelCardError is one too
        parser.error(str(exc))
    lock = threading.Lock()

    def report(number: int, game: GameRecord, standings: Standings) -> None:
        with lock:
            print(game_line(number, config.games, game), file=out)
            print(f"  {standings.line()}", file=out, flush=True)

    setup = config.setup
    print(f"{config.first.name} vs {config.second.name}: {config.games} games of {setup.game} "
          f"{setup.width}x{setup.height}, {setup.time_control}, openings: "
          f"{config.opening_source}", file=out, flush=True)
    try:
        standings = run_match(config, report)
    except SetupRefused as exc:
        print(f"saz match: {exc}", file=sys.stderr)
        return 2
    if config.sprt is not None and standings.verdict is not Verdict.CONTINUE:
        print(f"SPRT: {standings.verdict.value} accepted after {standings.record.games} games",
              file=out)
    if config.out is not None:
        record = MatchRecord.of(config.out, games_suffix(setup.game))
        also = "".join(f" and {record.with_suffix(suffix)}"
                       for suffix in extra_suffixes(setup.game))
        print(f"games in {record.games}{also}, summary in {record.summary}", file=out)
    if args.card is not None:
        assert config.out is not None
        try:  # from the summary just written, as `saz card --add` would
            row = read_record(config.out)
            record_rows(args.card, [row])
        except (ModelCardError, StrengthError) as exc:
            print(f"saz match: the games are recorded, the card is not: {exc}", file=sys.stderr)
            return 2
        print(f"recorded in {args.card}: {row.opponent} {row.board} {row.wld} (W-L-D), "
              f"Elo {row.elo}", file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
