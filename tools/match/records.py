"""Match records: the two files `saz match --out PATH` writes, and what every reader reads of them.

    record = MatchRecord.of("models/records/gomoku-lr-gen402-vs-aiwine-15x15")
    summary = read_summary(record)
    for game in read_games([record.games]):
        Replay(game.sgf) ...

A match is recorded as `PATH.sgf`, an SGF collection (SGF's many game trees in one file, which
GoGui and Sabaki open as a list of games) holding every finished game in the order of the games'
numbers, and `PATH.json`, its summary (the command that plays the match again, the engines, the
settings, one entry per finished game, the totals, Elo and SPRT; `tools/match/match.py` says what
each field holds). The summary's `games` list and the collection's trees are in the same order,
so the summary's n-th game is the collection's n-th tree; each tree's root names its game number
too (`GN[first vs second, game N]`). Both files are replaced whole, never half written, after
every game.

A game whose engines speak UCI (chess) is recorded in PGN instead, as chess GUIs, tournament
managers and python-chess read it: `PATH.pgn`, every game one after the other in the order of
their numbers (`tools/match/pgn.py`), beside the same summary (`games_suffix` says which).

An Othello match has its games in GGF as well (`PATH.ggf`, the same games in the same order, one
a line, `protocol/ggf.py`), the format Othello's tools (NBoard, GGS, NTest) read; its `CO` says
what the SGF's game comment says.

A record is named by PATH, `PATH.sgf`, `PATH.pgn`, `PATH.ggf` or `PATH.json` alike. The readers
of games take records, single SGF or GGF files (of one game or many) and folders of them (their
`*.sgf` files, sorted, and the `*.ggf` files without an SGF twin), so a folder of match records
is read as every game of every match in it. A GGF game is read as the SGF game it is
(`ggf_as_sgf`): the same moves (its left-out passes played), players, result and comment.
A game's root comment says how many of its first plies were the match's random opening
(`OPENING_NOTE`), which neither engine chose: `opening_plies` reads it back.

This module imports no torch.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

from saz.engine.games import game_class
from saz.protocol.ggf import (
    GgfGame,
    format_ggf,
    parse_ggf_collection,
    records_game,
    start_game,
    to_game,
)
from saz.protocol.sgf import SgfGame, SgfMove, SgfNode, game_trees, parse_sgf
from saz.protocol.sgf_writer import sgf_result

#: The suffixes of a match record's two files: the games and the summary; PGN's, the games of
#: a game whose engines speak UCI.
GAMES_SUFFIX = ".sgf"
SUMMARY_SUFFIX = ".json"
PGN_SUFFIX = ".pgn"
#: The suffix of an Othello match's games in GGF, beside its SGF.
GGF_SUFFIX = ".ggf"

#: How a record's game comment (GC) says how many of its first plies were the set opening.
OPENING_NOTE = "; the first {} moves are the opening"
_OPENING_NOTE_READ = re.compile(re.escape(OPENING_NOTE).replace(re.escape("{}"), r"(\d+)"))


class RecordError(ValueError):
    """A match record that cannot be read: missing, not a summary, or not SGF games."""


def games_suffix(game: str) -> str:
    """The suffix of the games file of a match of `game` (a registry name): PGN where the
    game's engines speak UCI (chess), SGF otherwise."""
    return PGN_SUFFIX if game_class(game).info.engine_protocol == "uci" else GAMES_SUFFIX


def extra_suffixes(game: str) -> tuple[str, ...]:
    """The suffixes of the other files holding a match's games: GGF for Othello."""
    return (GGF_SUFFIX,) if records_game(game) else ()


@dataclass(frozen=True)
class MatchRecord:
    """Where one match is recorded: `stem` + ".sgf" (the games; `suffix` ".pgn" for chess)
    and `stem` + ".json" (the summary)."""

    stem: PurePath
    #: The games file's suffix (not part of the record's identity: one stem, one record).
    suffix: str = field(default=GAMES_SUFFIX, compare=False)

    @classmethod
    def of(cls, path: str | PurePath, suffix: str = GAMES_SUFFIX) -> MatchRecord:
        """The record named by PATH, PATH.sgf, PATH.pgn, PATH.ggf or PATH.json, its games in
        `suffix`."""
        text = PurePath(path).as_posix()
        for known in (GAMES_SUFFIX, PGN_SUFFIX, GGF_SUFFIX, SUMMARY_SUFFIX):
            if text.endswith(known):
                text = text[:-len(known)]
        return cls(PurePath(text), suffix)

    @property
    def name(self) -> str:
        """The record as a model card's strength table names it: its stem, in the same form
        however it was spelled ("./a/b.json" and "a/b" are one record)."""
        return self.stem.as_posix()

    @property
    def games(self) -> Path:
        return Path(f"{self.stem}{self.suffix}")

    @property
    def summary(self) -> Path:
        return Path(f"{self.stem}{SUMMARY_SUFFIX}")

    def with_suffix(self, suffix: str) -> Path:
        """The record's file of that suffix (`.ggf`: its games in GGF)."""
        return Path(f"{self.stem}{suffix}")


# -- writing --------------------------------------------------------------------------------------
def write_games(record: MatchRecord, trees: Iterable[str], suffix: str | None = None) -> None:
    """The record's collection: the game trees (each as `format_sgf` wrote it; or PGN games,
    as `format_pgn` wrote them; or GGF games with `suffix` GGF_SUFFIX, one a line) one after
    the other, replacing the file whole."""
    path = record.games if suffix is None else record.with_suffix(suffix)
    _replace(path, "".join(trees))


def write_summary(record: MatchRecord, summary: dict[str, Any]) -> None:
    """The record's summary, replacing the file whole."""
    _replace(record.summary, json.dumps(summary, indent=2) + "\n")


def _replace(path: Path, text: str) -> None:
    """`path` holds `text`: written beside, then renamed, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


# -- reading --------------------------------------------------------------------------------------
def read_summary(record: MatchRecord | str | PurePath) -> dict[str, Any]:
    """The summary of a match record (named by PATH, PATH.sgf or PATH.json); RecordError naming
    the file when it is missing or not a JSON object."""
    path = (record if isinstance(record, MatchRecord) else MatchRecord.of(record)).summary
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RecordError(f"{path}: cannot read the match summary: {exc}") from None
    if not isinstance(summary, dict):
        raise RecordError(f"{path}: not a match summary (a JSON object)")
    return summary


@dataclass(frozen=True)
class RecordedGame:
    """One game of a record: the file it is in, its place there (from 1), its main line, and
    the text of its game tree (a single-game SGF record of its own)."""

    source: Path
    number: int
    sgf: SgfGame
    text: str

    @property
    def where(self) -> str:
        """The game as the readers' tables name it: "FILE.sgf#N" (or "FILE.ggf#N")."""
        return f"{self.source.as_posix()}#{self.number}"


def record_files(paths: Sequence[str | PurePath]) -> list[Path]:
    """The SGF and GGF files that `paths` name, in order: each a record (PATH, PATH.sgf,
    PATH.ggf or PATH.json: its SGF, else its GGF), an SGF or GGF file, or a folder (its `*.sgf`
    files and the `*.ggf` files without an SGF twin, sorted); RecordError for a path that is
    none."""
    files: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found = set(path.glob(f"*{GAMES_SUFFIX}"))
            found |= {ggf for ggf in path.glob(f"*{GGF_SUFFIX}")
                      if not ggf.with_suffix(GAMES_SUFFIX).is_file()}
            files += sorted(found)
        elif path.suffix in (GAMES_SUFFIX, GGF_SUFFIX) and path.is_file():
            files.append(path)
        elif MatchRecord.of(path).games.is_file():
            files.append(MatchRecord.of(path).games)
        elif MatchRecord.of(path).with_suffix(GGF_SUFFIX).is_file():
            files.append(MatchRecord.of(path).with_suffix(GGF_SUFFIX))
        else:
            raise RecordError(f"{path}: no SGF or GGF games there (a match record PATH.sgf, "
                              "an SGF or GGF file or a folder of them)")
    return files


def read_games(paths: Sequence[str | PurePath]) -> Iterator[RecordedGame]:
    """Every game in the files `paths` name (`record_files`), in order. A game with setup
    stones (`AB`, `AW`, `AE`; a GGF game from another start than the usual) is refused with
    RecordError: `saz match` never writes them, and the readers replay the moves from the empty
    board. Malformed SGF is an SgfError, malformed GGF a GgfError (both ValueErrors)."""
    for path in record_files(paths):
        text = path.read_text(encoding="utf-8")
        if path.suffix == GGF_SUFFIX:
            for number, ggf in enumerate(parse_ggf_collection(text), 1):
                yield RecordedGame(path, number, ggf_as_sgf(ggf, f"{path}#{number}"),
                                   format_ggf(ggf))
            continue
        for number, tree in enumerate(game_trees(text), 1):
            sgf = parse_sgf(tree)
            if any(node.has_setup for node in sgf.nodes):
                raise RecordError(f"{path}#{number}: setup stones are not supported")
            yield RecordedGame(path, number, sgf, tree)


def ggf_as_sgf(ggf: GgfGame, where: str = "GGF game") -> SgfGame:
    """The SGF game a GGF game is: its moves replayed (a pass it leaves out is played; GgfError
    on an illegal move), PB/PW, CO as the game comment and RE as SGF's (`ggf_result`).
    RecordError for a game from another start than the usual one."""
    usual = type(start_game(ggf))(ggf.size)
    start = start_game(ggf)
    board, to_move = start.start_position()
    usual_board, usual_to_move = usual.start_position()
    if to_move != usual_to_move or (board != usual_board).any():
        raise RecordError(f"{where}: a game from a set-up start (BO) is not supported")
    game = to_game(ggf)
    nodes = tuple(SgfNode(move=SgfMove(color, move))
                  for move, color in zip(game.moves, game.colors()))
    tags = ggf.tags
    result = ggf_result(tags.get("RE", ""))
    if game.is_over() and result is not None and not result.endswith(("+T", "+R")):
        # GGF's RE gives the empty squares to the winner (GGS's count); SGF's, as saz match
        # writes it, is the game's own score, which the finished game says.
        result = sgf_result(game)
    return SgfGame("othello", ggf.size, ggf.size, None, 0, nodes, tags.get("PB"), tags.get("PW"),
                   tags.get("CO"), result)


def ggf_result(text: str) -> str | None:
    """SGF's RE of a GGF result: Black's disc margin (`+12`, `-2.000`) as `B+12` / `W+2` / `0`,
    with `:t` (time) `B+T` / `W+T` and `:r` (resignation; `saz match` writes it for every
    forfeit) `B+R` / `W+R`; None for `?` or what is no result."""
    value, _, how = text.strip().partition(":")
    try:
        margin = float(value)
    except ValueError:
        return None
    if margin == 0:
        return "0"
    side = "B" if margin > 0 else "W"
    suffix = {"t": "T", "r": "R"}.get(how.strip().lower())
    return f"{side}+{suffix}" if suffix else f"{side}+{abs(margin):g}"


def opening_plies(game_comment: str | None) -> int:
    """How many first plies of a game `saz match` recorded were the opening, which neither
    engine chose (0 when its game comment says none were)."""
    found = _OPENING_NOTE_READ.search(game_comment or "")
    return int(found.group(1)) if found else 0
