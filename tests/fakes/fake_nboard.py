"""A scripted NBoard engine for the NBoard client's and the referee's tests: it speaks protocol
version 2 as NTest does (`set myname` after `set depth`, `pong N`, `=== MOVE/EVAL/TIME`) and
plays a legal move of the position it was given, or the next answer of its script.

    fake_nboard.py [--log FILE] [--chatty] [--no-pong] ANSWER...

An ANSWER is sent as `=== ANSWER` (a move `F5`, `F5/1.5/0.2`, junk) unless it is one of
    !legal        the position's first legal move (what every `go` plays once the script is
                  used up), as `=== F5/0.50/0.01`
    !hang         never answer (the client must give up on it)
    !crash        exit with status 3 without answering
    !empty        answer `===` with no move
    !sleep=S:A    wait S seconds, then answer A
Before every answer it writes `status thinking`, a `search` line and a line that is no part of
the protocol (NTest writes such lines too). `--no-pong` never answers a ping; `--chatty` writes
to stderr on every command. `--log FILE` appends every command received, one a line.
"""
from __future__ import annotations

import argparse
import sys
import time

from saz.protocol.ggf import move_text, parse_ggf, to_game  # at start: a first `go` is quick


def _first_legal(ggf_text: str | None) -> str:
    """The first legal move (in index order) at the end of the game given, `PA` if none."""
    if ggf_text is None:
        return "PA"
    game = to_game(parse_ggf(ggf_text))
    return move_text(game.width, int(game.legal_moves()[0]))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log")
    parser.add_argument("--chatty", action="store_true")
    parser.add_argument("--no-pong", action="store_true")
    parser.add_argument("answers", nargs="*")
    args = parser.parse_args()
    answers = list(args.answers)
    log = open(args.log, "a", encoding="utf-8") if args.log else None  # noqa: SIM115 (the life of the process)
    game: str | None = None
    moves: list[str] = []

    def say(text: str) -> None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if log:
            log.write(line.rstrip("\n") + "\n")
            log.flush()
        if args.chatty:
            print(f"fake nboard: got {words[0]}", file=sys.stderr, flush=True)
        name = words[0]
        if name == "set" and words[1:2] == ["depth"]:
            say(f"set myname Fake{words[2] if len(words) > 2 else ''}")
        elif name == "set" and words[1:2] == ["game"]:
            game, moves = line.split(None, 2)[2].strip(), []
        elif name == "move" and len(words) > 1:
            moves.append(words[1])
        elif name == "ping" and not args.no_pong:
            say(f"pong {words[1] if len(words) > 1 else ''}".strip())
        elif name == "go":
            answer = answers.pop(0) if answers else "!legal"
            say("status thinking")
            say("search F5 +0.50 0 1")
            say("  1 (60 empty) F5/0.50 an NTest-like aside")
            if answer.startswith("!sleep="):
                seconds, _, answer = answer.removeprefix("!sleep=").partition(":")
                time.sleep(float(seconds))
            if answer == "!hang":
                continue
            if answer == "!crash":
                print("fake nboard: crashing", file=sys.stderr, flush=True)
                return 3
            if answer == "!empty":
                say("===")
            elif answer == "!legal":
                if moves:  # a game moved on by `move` commands: the fake plays from `set game`
                    say("status moves after set game are not followed")
                say(f"=== {_first_legal(game)}/0.50/0.01")
            else:
                say(f"=== {answer}")
            say("status")
        elif name == "quit":
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
