"""GTP's Go-only commands: handicap, komi and rules, and the status of stones at the end.

`GoCommands` answers them over the `GtpEngine` that registers them (`gtp_commands.py`). They are
the commands of a game counted by area (`AreaScored`: Go): in any other game each fails with
`<command> is a Go command; the game is <game>`, and `list_commands` still lists them, as a
controller may send them before it chooses the game.

* **Handicap** (GTP v2 section 4.1.1): `fixed_handicap`, `place_free_handicap`
  (`free_handicap_points` chooses where) and `set_free_handicap`, on an empty board before the
  first move.
* **Komi and rules**: `get_komi` (GNU Go's); `kgs-rules`, `kata-get-rules` and `kata-set-rules`
  accept the rule sets that score by area, which saz plays as its own (`AREA_RULE_SETS`), and
  refuse territory scoring.
* **The end of the game**: `final_status_list` gives the stones the network judges dead
  (`GtpEngine.final_ownership`) or alive; `final_score`, which every game answers, is
  `gtp_commands.py`'s.
"""
from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING

import numpy as np

from saz.engine.games import GameError
from saz.engine.games.capabilities import AreaScored
from saz.engine.games.go import fixed_handicap_points
from saz.protocol.gtp_errors import (
    BAD_VERTEX_LIST,
    INVALID_STONES,
    GtpError,
    check_arguments,
    check_empty,
    parse_integer,
    syntax_error,
)
from saz.protocol.vertex import GtpValueError

if TYPE_CHECKING:
    from saz.protocol.gtp_commands import GtpEngine

log = logging.getLogger("saz.gtp")

#: Rule sets a controller may name (KGS's `kgs-rules`, KataGo's presets) that score by area:
#: saz plays them as its own area rules (positional superko, no suicide, no handicap bonus).
AREA_RULE_SETS = frozenset({
    "area", "chinese", "chinese-ogs", "chinese-kgs", "tromp-taylor", "aga", "new-zealand",
    "stone-scoring", "bga",
})
#: Rule sets that score territory, which saz cannot.
TERRITORY_RULE_SETS = frozenset({"japanese", "korean", "territory"})
#: What `kata-get-rules` reports: saz's Go rules in KataGo's terms.
KATA_RULES = {"friendlyPassOk": False, "hasButton": False, "ko": "POSITIONAL",
              "scoring": "AREA", "suicide": False, "tax": "NONE", "whiteHandicapBonus": "0"}


class GoCommands:
    """The handlers of GTP's Go-only commands, over the `GtpEngine` whose table holds them."""

    def __init__(self, gtp: GtpEngine) -> None:
        self._gtp = gtp

    def _go(self, command: str) -> AreaScored:
        """The game, which `command` needs to be counted by area (Go)."""
        game = self._gtp.game
        if not isinstance(game, AreaScored):
            raise GtpError(f"{command} is a Go command; the game is {game.name}")
        return game

    # -- handicap ---------------------------------------------------------------------------------
    def fixed_handicap(self, args: tuple[str, ...]) -> str:
        stones = self._handicap_count(args, "fixed_handicap STONES")
        game = self._go("fixed_handicap").copy()
        try:
            points = game.place_fixed_handicap(stones)
        except GameError:
            raise GtpError(INVALID_STONES) from None
        self._gtp.engine.replace_game(game)
        return " ".join(map(self._gtp.vertices.format, points))

    def place_free_handicap(self, args: tuple[str, ...]) -> str:
        stones = self._handicap_count(args, "place_free_handicap STONES")
        game = self._go("place_free_handicap").copy()
        if not 2 <= stones < game.num_points:
            raise GtpError(INVALID_STONES)
        points = free_handicap_points(game.width, game.height, stones)
        game.place_free_handicap(points)
        self._gtp.engine.replace_game(game)
        return " ".join(map(self._gtp.vertices.format, points))

    def set_free_handicap(self, args: tuple[str, ...]) -> str:
        go = self._go("set_free_handicap")
        check_empty(go)
        try:
            points = [self._gtp.vertices.parse(text) for text in args]
        except GtpValueError:
            raise GtpError(BAD_VERTEX_LIST) from None
        game = go.copy()
        if game.pass_move in points:
            raise GtpError(BAD_VERTEX_LIST)
        try:
            game.place_free_handicap(points)
        except GameError:
            raise GtpError(BAD_VERTEX_LIST) from None
        self._gtp.engine.replace_game(game)
        return ""

    def _handicap_count(self, args: tuple[str, ...], usage: str) -> int:
        game = self._go(usage.split()[0])
        check_arguments(args, 1, usage)
        stones = parse_integer(args[0], "number of stones")
        check_empty(game)
        return stones

    # -- komi and rules ---------------------------------------------------------------------------
    def get_komi(self, args: tuple[str, ...]) -> str:
        """GNU Go's: the komi of the game."""
        return f"{self._go('get_komi').komi:g}"

    def kgs_rules(self, args: tuple[str, ...]) -> str:
        """KGS's `kgs-rules chinese|aga|new_zealand|japanese`: the rule sets that score by area
        are played as saz's area rules (`AREA_RULE_SETS`); Japanese scores territory, which saz
        does not."""
        check_arguments(args, 1, "kgs-rules RULES")
        self._area_rules(args[0].lower().replace("_", "-"))
        return ""

    def kata_get_rules(self, args: tuple[str, ...]) -> str:
        """KataGo's: the rules saz plays, as KataGo describes rules (JSON)."""
        self._go("kata-get-rules")
        return json.dumps(KATA_RULES, separators=(",", ":"))

    def kata_set_rules(self, args: tuple[str, ...]) -> str:
        """KataGo's `kata-set-rules NAME|JSON`: accepted for rules that score by area, which
        saz plays as its own (`kata-get-rules` shows them); territory scoring is refused."""
        if not args:
            raise syntax_error("usage: kata-set-rules RULES (a name or KataGo's JSON)")
        text = " ".join(args)
        if text.startswith("{"):
            try:
                rules = json.loads(text)
            except json.JSONDecodeError as exc:
                raise syntax_error(f"rules are not JSON: {exc.msg}") from None
            if not isinstance(rules, dict):
                raise syntax_error("rules JSON must be an object")
            scoring = str(rules.get("scoring", "AREA")).upper()
            self._area_rules("area" if scoring == "AREA" else scoring.lower())
        else:
            self._area_rules(text.lower())
        return ""

    def _area_rules(self, name: str) -> None:
        """Accept the rule set `name` if saz plays it (area scoring), else GtpError."""
        self._go("rules")
        if name in TERRITORY_RULE_SETS:
            raise GtpError(f"{name} rules score territory; saz plays area scoring only "
                           f"(Tromp-Taylor without suicide, positional superko)")
        if name not in AREA_RULE_SETS:
            raise GtpError(f"unknown rules {name!r}; saz plays area scoring: "
                           f"{', '.join(sorted(AREA_RULE_SETS))}")
        log.info("rules %s: played with area scoring, positional superko, no suicide", name)

    # -- the end of the game ----------------------------------------------------------------------
    def final_status_list(self, args: tuple[str, ...]) -> str:
        """The stones of a status, one per line. Dead stones are the chains the network's
        ownership (along a short search's PV, `Engine.final_ownership`) gives to the other
        colour; every other stone is alive. Seki is not told apart (empty). Without an
        ownership head every stone is alive, as Tromp-Taylor counts them."""
        game = self._go("final_status_list")
        check_arguments(args, 1, "final_status_list alive|dead|seki")
        status = args[0].lower()
        if status not in ("alive", "dead", "seki"):
            raise syntax_error(f"unknown status {args[0]!r}")
        if status == "seki":
            return ""
        ownership = self._gtp.final_ownership()
        dead = set() if ownership is None else set(game.dead_stones(ownership))
        stones = [int(p) for p in np.flatnonzero(game.board)]
        chosen = [p for p in stones if (p in dead) == (status == "dead")]
        return "\n".join(self._gtp.vertices.format(p) for p in chosen)


def free_handicap_points(width: int, height: int, stones: int) -> list[int]:
    """Where `place_free_handicap` puts `stones` black stones: the fixed handicap points as far
    as the board has them (GTP's own choice), then one by one the point farthest (in king moves)
    from every stone placed, preferring points off the edge up to the handicap line and then
    the top-left."""
    points: list[int] = []
    if width == height:
        for count in range(min(stones, 9), 1, -1):
            try:
                points = fixed_handicap_points(width, count)
                break
            except GameError:
                continue
    xs, ys = np.arange(width * height) % width, np.arange(width * height) // width
    handicap_line = 3 if min(width, height) >= 13 else 2
    line = np.minimum(np.minimum(xs, ys), np.minimum(width - 1 - xs, height - 1 - ys))
    preference = np.minimum(line, handicap_line)
    distance = np.full(width * height, width + height)

    def place(p: int) -> None:
        nonlocal distance
        distance = np.minimum(distance, np.maximum(abs(xs - xs[p]), abs(ys - ys[p])))

    for p in points:
        place(p)
    while len(points) < stones:
        # Distance first, then preference (< handicap_line + 1); argmax takes the lowest index
        # among ties. A placed point has distance 0 and so loses to every free one.
        p = int(np.argmax(distance * (handicap_line + 1) + preference))
        points.append(p)
        place(p)
    return points
