"""A scripted UCI engine for the UCI client's and the referee's tests: it takes every command,
answers `uci` with its id and options, `isready` with `readyok`, and each `go` with the next
answer of its script, whatever the position.

    fake_uci.py [--log FILE] [--variants V,...] [--no-uciok] [--chatty] ANSWER...

An ANSWER is sent as `bestmove ANSWER` (a move, `e7e8q`, `z9z9`, `(none)`) unless it is one of
    !hang         never answer (the client must give up on it)
    !crash        exit with status 3 without answering
    !empty        answer `bestmove` with no move
    !sleep=S:A    wait S seconds, then answer A
Once the script is used up, `go` answers `bestmove 0000`. Every answer comes after an `info`
line. The options: Hash (spin), Skill Level (spin 0..20), Ponder (check), UCI_Variant (combo
of --variants, default chess) when --variants is given. `--no-uciok` never ends the `uci`
answer; `--chatty` writes to stderr on every command and a junk line to stdout before each
answer. `--log FILE` appends every command received, one a line.
"""
from __future__ import annotations

import argparse
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log")
    parser.add_argument("--variants")
    parser.add_argument("--no-uciok", action="store_true")
    parser.add_argument("--chatty", action="store_true")
    parser.add_argument("answers", nargs="*")
    args = parser.parse_args()
    answers = list(args.answers)
    log = open(args.log, "a", encoding="utf-8") if args.log else None  # noqa: SIM115 (the life of the process)

    def say(text: str) -> None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if log:
            log.write(" ".join(words) + "\n")
            log.flush()
        if args.chatty:
            print(f"fake uci: got {words[0]}", file=sys.stderr, flush=True)
        name = words[0]
        if name == "uci":
            say("id name Fake UCI")
            say("id author saz tests")
            say("option name Hash type spin default 16 min 1 max 1024")
            say("option name Skill Level type spin default 20 min 0 max 20")
            say("option name Ponder type check default false")
            if args.variants:
                choices = " ".join(f"var {v}" for v in args.variants.split(","))
                say(f"option name UCI_Variant type combo default chess {choices}")
            if not args.no_uciok:
                say("uciok")
        elif name == "isready":
            say("readyok")
        elif name == "go":
            text = answers.pop(0) if answers else "0000"
            if text.startswith("!sleep="):
                seconds, _, text = text[len("!sleep="):].partition(":")
                time.sleep(float(seconds))
            if text == "!hang":
                time.sleep(3600)
            elif text == "!crash":
                print("fake uci: crashing as scripted", file=sys.stderr, flush=True)
                return 3
            if args.chatty:
                say("this line is no UCI")
            say("info depth 1 score cp 0 nodes 1 pv " + ("" if text.startswith("!") else text))
            say("bestmove" if text == "!empty" else f"bestmove {text}")
        elif name == "quit":
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
