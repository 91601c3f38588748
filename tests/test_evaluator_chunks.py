"""`Evaluator(chunk_nodes=N)`: a batch of more than N nodes runs in calls of at most N nodes, with
the answers of one call (the shipped Go model, random-play positions, with and without masks),
and `saz gtp --chunk-nodes N` reaches the engine's evaluator."""
from __future__ import annotations

import numpy as np
import pytest

from saz.engine.evaluator import Evaluator, default_model_path
from saz.engine.games import game_class
from saz.engine.graph import encode, layout
from saz.protocol.engine_options import add_engine_arguments, engine_config
from saz.tools.train.optimize import random_positions

GO = default_model_path("go")


@pytest.mark.parametrize(("size", "chunk_nodes"), [(9, 200), (19, 362), (19, 1000)])
def test_chunked_calls_answer_as_one_call(size: int, chunk_nodes: int) -> None:
    whole = Evaluator(GO, device="cpu", threads=1)
    chunked = Evaluator(GO, device="cpu", threads=1, chunk_nodes=chunk_nodes)
    game = game_class("go")
    lay = layout(size, size, game)
    x = encode(random_positions(game, size, 7, np.random.default_rng(size)))
    assert chunked.chunk_step(len(x), lay.num_nodes) == max(1, chunk_nodes // lay.num_nodes)
    mask = np.random.default_rng(0).random(x.shape[:2]) < 0.7
    for m in (None, mask):
        heads = chunked.run_heads(x, lay, m)
        assert heads.ownership is not None and heads.score is not None
        for ours, theirs in zip(chunked.run_heads(x, lay, m), whole.run_heads(x, lay, m),
                                strict=True):
            assert (ours is None) == (theirs is None)  # the Go model has no wdl head
            if ours is None or theirs is None:
                continue
            assert ours.shape == theirs.shape
            np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)
        for ours, theirs in zip(chunked.run(x, lay, m), whole.run(x, lay, m), strict=True):
            np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)
    priors, values = chunked.evaluate(random_positions(game, size, 5, np.random.default_rng(1)))
    assert len(priors) == 5 and values.shape == (5,)


def test_chunk_step_only_when_the_batch_is_larger() -> None:
    evaluator = Evaluator(GO, device="cpu", chunk_nodes=1024)
    assert evaluator.chunk_step(12, 82) is None  # 984 nodes: one call
    assert evaluator.chunk_step(13, 82) == 12
    assert evaluator.chunk_step(16, 362) == 2
    assert evaluator.chunk_step(4, 2000) == 1  # a position a call at least
    assert Evaluator(GO, device="cpu").chunk_step(1000, 362) is None
    with pytest.raises(ValueError, match="chunk_nodes must be positive"):
        Evaluator(GO, device="cpu", chunk_nodes=0)


def test_the_command_line_option_reaches_the_config() -> None:
    import argparse

    from saz.engine.search.options import add_search_arguments

    parser = argparse.ArgumentParser()
    add_engine_arguments(parser)
    add_search_arguments(parser)
    config = engine_config(parser, parser.parse_args(["--chunk-nodes", "1024"]), game="go")
    assert config.chunk_nodes == 1024
    assert engine_config(parser, parser.parse_args([]), game="go").chunk_nodes is None
    with pytest.raises(SystemExit):
        engine_config(parser, parser.parse_args(["--chunk-nodes", "0"]), game="go")
