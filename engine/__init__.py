"""The saz engine: game rules, graph encoding, evaluator and search. Never imports torch."""
