"""A small SGF reader: the main line of a game record, as far as setting up a position needs.

GTP `loadsgf` replays a record up to a move; this module turns the text into plain values and
leaves the replaying to the front-end, which knows the rules (moves out of turn, setup). It reads
SGF FF[1]..FF[4] (https://www.red-bean.com/sgf/):

* the tree's main line only (the first variation at every branch), of the first game of a
  collection (`game_trees` splits a collection into its games);
* the root's `GM` (game type: 1 Go, 2 Othello, 4 Gomoku), `SZ` (`19` or `19:13`), `KM`, `HA`,
  and the players' names `PB` / `PW` and the game comment `GC` (what game records are read for);
* in every node: the moves `B` / `W` (a point, or pass: the empty value, or `tt` on boards up to
  19x19), the setup `AB` / `AW` / `AE` (single points or FF[4] compressed `aa:cc` rectangles) and
  `PL` (the player to move).

Property values may hold escaped brackets; FF[3]-style identifiers with lower-case letters
(`AddBlack`) keep their upper-case letters. Everything else is read over and ignored. Points come
out as the engine's move indices (`y * width + x`, `aa` being the top-left); the pass is
`width * height`. Malformed text is an `SgfError` (a ValueError).
"""
from __future__ import annotations

from dataclasses import dataclass

from saz.engine.games import POINT_GAMES, Game
from saz.engine.games.base import BLACK, WHITE

#: The games the engine plays by their SGF game type (`GameInfo.sgf_game_type`).
_GAME_TYPES: dict[int, type[Game]] = {
    cls.info.sgf_game_type: cls for cls in POINT_GAMES.values()}
_COLORS = {"B": BLACK, "W": WHITE}


class SgfError(ValueError):
    """Text that is not an SGF game record this reader understands."""


@dataclass(frozen=True)
class SgfMove:
    """A move of one colour: a point index, or the pass (`width * height`)."""

    color: int
    move: int


@dataclass(frozen=True)
class SgfNode:
    """What one node of the main line does to the position."""

    move: SgfMove | None = None
    add_black: tuple[int, ...] = ()
    add_white: tuple[int, ...] = ()
    add_empty: tuple[int, ...] = ()
    #: The colour to move after this node (PL), when the record says so.
    to_play: int | None = None

    @property
    def has_setup(self) -> bool:
        return bool(self.add_black or self.add_white or self.add_empty)


@dataclass(frozen=True)
class SgfGame:
    """The main line of a game record."""

    game: str
    width: int
    height: int
    komi: float | None
    handicap: int
    nodes: tuple[SgfNode, ...]
    #: The players' names (PB, PW), the game comment (GC), the result (RE, e.g. "B+3.5",
    #: "W+R", "0") and the rules' name (RU), when the record has them.
    player_black: str | None = None
    player_white: str | None = None
    game_comment: str | None = None
    result: str | None = None
    rules: str | None = None

    @property
    def moves(self) -> int:
        """How many nodes hold a move."""
        return sum(node.move is not None for node in self.nodes)

    @property
    def winner(self) -> int | None:
        """BLACK or WHITE when the result (RE) names a winner ("B+3.5", "W+R"); None for a
        draw, no result or none recorded."""
        result = self.result or ""
        return BLACK if result.startswith("B+") else WHITE if result.startswith("W+") else None

    def color_of(self, player: str) -> int | None:
        """BLACK or WHITE for the player named `player` in PB or PW (Black's if both); None
        when neither names it."""
        return (BLACK if player == self.player_black else
                WHITE if player == self.player_white else None)


def game_trees(text: str) -> list[str]:
    """The text of each game tree of an SGF collection (`(;...)(;...)`, SGF's many games in one
    file), in order, each from its `(` to its `)`: one for a record of a single game. SgfError
    when the text holds no tree, or one is malformed or not closed."""
    reader = _Reader(text)
    trees = []
    while (token := reader.next_token()) is not None:
        if token != "(":
            raise SgfError(f"unexpected {token!r} at offset {reader.pos - 1}: a game tree "
                           "starts with '('")
        start, depth = reader.pos - 1, 1
        while depth:
            token = reader.next_token()
            if token == ";":
                reader.properties()
            elif token in ("(", ")"):
                depth += 1 if token == "(" else -1
            elif token is None:
                raise SgfError("the game tree is not closed: a ')' is missing")
            else:
                raise SgfError(f"unexpected {token!r} at offset {reader.pos - 1}")
        trees.append(text[start:reader.pos])
    if not trees:
        raise SgfError("no game tree: the text holds no '('")
    return trees


def parse_sgf(text: str) -> SgfGame:
    """The main line of the first game in `text`; SgfError if it is malformed or not a game of
    Go, Othello or Gomoku."""
    raw = _main_line(text)
    root = raw[0]
    game_type = _number(root, "GM", 1)
    game = _GAME_TYPES.get(game_type)
    if game is None:
        raise SgfError(f"GM[{game_type}] is not a game this engine plays")
    width, height = _size(root, game.info.default_size)
    komi = root.get("KM")
    handicap = _number(root, "HA", 0)
    nodes = tuple(_node(props, width, height) for props in raw)
    return SgfGame(game.name, width, height,
                   _real(komi[0], "KM") if komi else None, handicap, nodes,
                   player_black=_text(root, "PB"), player_white=_text(root, "PW"),
                   game_comment=_text(root, "GC"), result=_text(root, "RE"),
                   rules=_text(root, "RU"))


# -- the tree ---------------------------------------------------------------------------------
_Props = dict[str, list[str]]


@dataclass
class _Tree:
    """A game tree being read: whether its nodes belong to the main line, and what it has read."""

    main_line: bool
    nodes: int = 0
    children: int = 0


def _main_line(text: str) -> list[_Props]:
    """The property lists of the nodes of the first game's main line.

    SGF's grammar is `tree = "(" node+ tree* ")"`; the main line is a tree's nodes followed by
    the main line of its first subtree. Read without recursion: some writers nest every move in
    a subtree of its own, deeper than Python's recursion limit.
    """
    reader = _Reader(text)
    if reader.next_token() != "(":
        raise SgfError("no game tree: the text does not start with '('")
    stack = [_Tree(main_line=True)]
    nodes: list[_Props] = []
    while stack:
        tree = stack[-1]
        token = reader.next_token()
        if token == ";":
            if tree.children:
                raise SgfError(f"a node after a variation at offset {reader.pos - 1}")
            props = reader.properties()
            tree.nodes += 1
            if tree.main_line:
                nodes.append(props)
        elif token == "(" and tree.nodes:
            stack.append(_Tree(main_line=tree.main_line and tree.children == 0))
            tree.children += 1
        elif token == ")" and tree.nodes:
            stack.pop()
        elif token is None:
            raise SgfError("the game tree is not closed: a ')' is missing")
        else:
            raise SgfError(f"unexpected {token!r} at offset {reader.pos - 1}")
    return nodes


class _Reader:
    """A cursor over SGF text: structural characters and the properties of a node."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def _skip_space(self) -> None:
        text, n = self.text, len(self.text)
        while self.pos < n and text[self.pos].isspace():
            self.pos += 1

    def next_token(self) -> str | None:
        """The next non-space character (one of `(`, `)`, `;` in a well-formed tree), or None at
        the end of the text."""
        self._skip_space()
        if self.pos >= len(self.text):
            return None
        self.pos += 1
        return self.text[self.pos - 1]

    def properties(self) -> _Props:
        """The properties of the node whose `;` was just read."""
        text, n = self.text, len(self.text)
        props: _Props = {}
        while True:
            self._skip_space()
            start = self.pos
            while self.pos < n and text[self.pos].isascii() and text[self.pos].isalpha():
                self.pos += 1
            if self.pos == start:
                return props
            # FF[3] allowed lower-case letters in identifiers, to be ignored ("AddBlack" = AB).
            ident = "".join(c for c in text[start:self.pos] if c.isupper())
            values = []
            while True:
                self._skip_space()
                if self.pos >= n or text[self.pos] != "[":
                    break
                values.append(self._value())
            if not values:
                raise SgfError(f"property {text[start:self.pos].strip()!r} has no value")
            if ident:
                props.setdefault(ident, []).extend(values)

    def _value(self) -> str:
        """A bracketed value (the cursor is on its `[`), with escapes removed."""
        text, n = self.text, len(self.text)
        self.pos += 1
        out = []
        while self.pos < n:
            char = text[self.pos]
            self.pos += 1
            if char == "\\":
                if self.pos < n:
                    out.append(text[self.pos])
                    self.pos += 1
            elif char == "]":
                return "".join(out)
            else:
                out.append(char)
        raise SgfError("a property value is not closed: a ']' is missing")


# -- values -----------------------------------------------------------------------------------
def _number(props: _Props, ident: str, default: int) -> int:
    values = props.get(ident)
    if not values:
        return default
    try:
        return int(values[0].strip())
    except ValueError:
        raise SgfError(f"{ident}[{values[0]}] is not a number") from None


def _text(props: _Props, ident: str) -> str | None:
    """A root text property's first value, as read (escapes undone); None without it."""
    values = props.get(ident)
    return values[0] if values else None


def _real(text: str, ident: str) -> float:
    try:
        return float(text.strip())
    except ValueError:
        raise SgfError(f"{ident}[{text}] is not a number") from None


def _size(props: _Props, default: int) -> tuple[int, int]:
    """SZ as (width, height): `SZ[19]` or the rectangular `SZ[19:13]` (columns:rows)."""
    values = props.get("SZ")
    if not values:
        return default, default
    parts = values[0].split(":")
    try:
        sides = [int(part.strip()) for part in parts]
    except ValueError:
        raise SgfError(f"SZ[{values[0]}] is not a board size") from None
    if len(sides) == 1:
        sides *= 2
    if len(sides) != 2 or min(sides) < 1 or max(sides) > 52:
        raise SgfError(f"SZ[{values[0]}] is not a board size SGF can address")
    return sides[0], sides[1]


def _coordinate(char: str) -> int:
    """An SGF coordinate letter: a..z are 0..25, A..Z are 26..51."""
    if "a" <= char <= "z":
        return ord(char) - ord("a")
    if "A" <= char <= "Z":
        return ord(char) - ord("A") + 26
    raise SgfError(f"{char!r} is not an SGF coordinate")


def _point(text: str, width: int, height: int) -> int:
    """The move index of a two-letter point (column, then row from the top)."""
    if len(text) != 2:
        raise SgfError(f"[{text}] is not a point")
    x, y = _coordinate(text[0]), _coordinate(text[1])
    if x >= width or y >= height:
        raise SgfError(f"[{text}] is off the {width}x{height} board")
    return y * width + x


def _points(values: list[str], width: int, height: int) -> tuple[int, ...]:
    """A list of points, each a point or a compressed `aa:cc` rectangle (FF[4])."""
    out: list[int] = []
    for value in values:
        text = value.strip()
        if ":" in text:
            first, last = (_point(part, width, height) for part in text.split(":", 1))
            y0, x0 = divmod(first, width)
            y1, x1 = divmod(last, width)
            out.extend(y * width + x for y in range(min(y0, y1), max(y0, y1) + 1)
                       for x in range(min(x0, x1), max(x0, x1) + 1))
        else:
            out.append(_point(text, width, height))
    return tuple(out)


def _move(text: str, width: int, height: int) -> int:
    """A move value: a point, or the pass (empty, or `tt` on boards up to 19x19)."""
    text = text.strip()
    if not text or (text == "tt" and width <= 19 and height <= 19):
        return width * height
    return _point(text, width, height)


def _node(props: _Props, width: int, height: int) -> SgfNode:
    moves = [(_COLORS[c], props[c]) for c in "BW" if c in props]
    if len(moves) > 1:
        raise SgfError("a node with both a black and a white move")
    move = None
    if moves:
        color, values = moves[0]
        move = SgfMove(color, _move(values[0], width, height))
    to_play = None
    if "PL" in props:
        player = props["PL"][0].strip().upper()[:1]
        if player not in _COLORS:
            raise SgfError(f"PL[{props['PL'][0]}] is not a colour")
        to_play = _COLORS[player]
    return SgfNode(move, _points(props.get("AB", []), width, height),
                   _points(props.get("AW", []), width, height),
                   _points(props.get("AE", []), width, height), to_play)
