"""A scripted Gomocup brain for the referee's tests: OK to START, and to each BEGIN, TURN or
BOARD ... DONE the next answer of its script, whatever the position.

    fake_pbrain.py [--log FILE] [--refuse-start] ANSWER...

An ANSWER is sent as it is (`x,y`, or anything else) unless it is one of
    !hang   never answer
    !crash  exit with status 3 without answering
Once the script is used up the brain answers `ERROR no more moves`. `--refuse-start` answers
START with `ERROR unsupported size`. `--log FILE` appends every line received.
"""
from __future__ import annotations

import argparse
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log")
    parser.add_argument("--refuse-start", action="store_true")
    parser.add_argument("answers", nargs="*")
    args = parser.parse_args()
    answers = list(args.answers)
    log = open(args.log, "a", encoding="utf-8") if args.log else None  # noqa: SIM115 (the life of the process)
    in_board = False
    for line in sys.stdin:
        line = line.strip()
        if log:
            log.write(line + "\n")
            log.flush()
        word = line.split(" ", 1)[0].upper()
        if in_board:
            in_board = word != "DONE"
            if in_board:
                continue
        elif word == "BOARD":
            in_board = True
            continue
        if word in ("START", "RECTSTART"):
            reply = "ERROR unsupported size" if args.refuse_start else "OK"
        elif word in ("BEGIN", "TURN", "DONE"):
            reply = answers.pop(0) if answers else "ERROR no more moves"
            if reply == "!hang":
                time.sleep(3600)
            elif reply == "!crash":
                return 3
        elif word == "END":
            return 0
        else:  # INFO and the rest: no answer
            continue
        sys.stdout.write(reply + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
