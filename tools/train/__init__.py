"""Training: AlphaZero self-play, the learner, the network and its export (torch and
torch-geometric)."""
