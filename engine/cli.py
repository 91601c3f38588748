"""The `saz` command: one entry point whose subcommands are imported only when used.

Dispatch is lazy on purpose: `saz gtp` must start in a fraction of a second and never import
torch, while `saz train` needs it. Each subcommand is a module path whose `main(argv) -> int`
receives the arguments after the subcommand's name. The table names tools' modules as strings
only, so the engine still never imports the trainer.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Sequence

#: subcommand -> (module, one-line help). Order is the order of `saz --help`.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "gtp": ("saz.protocol.gtp", "run the engine over GTP v2 (Go, Othello, Gomoku)"),
    "gomocup": ("saz.protocol.gomocup",
                "run the engine over the Gomocup protocol (also: pbrain-saz)"),
    "uci": ("saz.protocol.uci", "run the engine over UCI (chess, Gardner 5x5, Los Alamos 6x6)"),
    "nboard": ("saz.protocol.nboard", "run the engine over the NBoard protocol (Othello)"),
    "perft": ("saz.engine.perft", "count leaf positions of the move tree (rules check and speed)"),
    "solve": ("saz.protocol.solve", "perfect play from an endgame position (Othello)"),
    "bench": ("saz.tools.bench.cli", "benchmarks: network, search, protocols, memory, self-play"),
    "export": ("saz.tools.train.export",
               "export a training checkpoint to ONNX with its model card"),
    "train": ("saz.tools.train.run", "AlphaZero self-play training on small boards"),
    "average": ("saz.tools.train.average", "average a run's checkpoints or models (SWA)"),
    "optimize": ("saz.tools.train.optimize",
                 "rewrite an exported model to evaluate faster (int8, summed gathers)"),
    "evaluate": ("saz.tools.train.evaluate", "a training run's generations against fixed anchors"),
    "match": ("saz.tools.match.match", "engine-vs-engine matches with Elo and SPRT"),
    "seeds": ("saz.tools.match.seeds", "mean score and standard error over repeats with seeds"),
    "card": ("saz.tools.match.strength", "a model card's strength table; record matches in it"),
    "scoring": ("saz.tools.match.scoring", "final_score against GNU Go's over Go game records"),
}


#: Third-party packages that only the training extra installs.
_TRAIN_PACKAGES = {"torch", "torch_geometric", "onnx", "onnxscript", "tqdm", "matplotlib"}


def available() -> dict[str, str]:
    """The subcommands this installation has (a later release may add modules to the table)."""
    return {name: text for name, (module, text) in SUBCOMMANDS.items()
            if importlib.util.find_spec(module) is not None}


def _usage() -> str:
    commands = available()
    width = max(map(len, commands))
    lines = ["usage: saz COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {name:<{width}}  {text}" for name, text in commands.items()]
    lines += ["", "Run 'saz COMMAND --help' for a command's options."]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(_usage())
        return 0
    name, rest = args[0], args[1:]
    if name not in available():
        print(f"saz: unknown command {name!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    try:
        module = importlib.import_module(SUBCOMMANDS[name][0])
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in _TRAIN_PACKAGES:
            raise
        print(f"saz {name}: needs the training extra ({exc.name} is missing): "
              "pip install 'saz[train]'", file=sys.stderr)
        return 2
    return int(module.main(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
