"""PUCT Monte Carlo tree search and the time manager."""
