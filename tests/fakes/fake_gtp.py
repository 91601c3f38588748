"""A scripted GTP engine for the referee's tests: it answers every command with success and
each genmove with the next answer of its script, whatever the position.

    fake_gtp.py [--log FILE] [--refuse NAME]... ANSWER...

An ANSWER is sent as it is (a vertex, `pass`, `resign`, `Z99`) unless it is one of
    !hang         never answer (the referee must give up on it)
    !crash        exit with status 3 without answering
    !error        answer `? cannot do that`
    !sleep=S:A    wait S seconds, then answer A
Once the script is used up, genmove answers `pass`. `--refuse NAME` fails every command NAME
(`boardsize`: refuse the settings; `play`: refuse the opponent's moves). `--log FILE` appends
every command received, one a line. `known_command` answers true.
"""
from __future__ import annotations

import argparse
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log")
    parser.add_argument("--refuse", action="append", default=[])
    parser.add_argument("answers", nargs="*")
    args = parser.parse_args()
    answers = list(args.answers)
    log = open(args.log, "a", encoding="utf-8") if args.log else None  # noqa: SIM115 (the life of the process)
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        ident = words.pop(0) if words[0].isdigit() else ""
        name = words[0] if words else ""
        if log:
            log.write(" ".join(words) + "\n")
            log.flush()
        ok, text = True, ""
        if name in args.refuse:
            ok, text = False, "refused"
        elif name == "known_command":
            text = "true"
        elif name == "genmove":
            text = answers.pop(0) if answers else "pass"
            if text.startswith("!sleep="):
                seconds, _, text = text[len("!sleep="):].partition(":")
                time.sleep(float(seconds))
            elif text == "!hang":
                time.sleep(3600)
            elif text == "!crash":
                print("fake engine: crashing as scripted", file=sys.stderr, flush=True)
                return 3
            elif text == "!error":
                ok, text = False, "cannot do that"
        sys.stdout.write(f"{'=' if ok else '?'}{ident} {text}\n\n")
        sys.stdout.flush()
        if name == "quit":
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
