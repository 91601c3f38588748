"""Matches: the referee, engine adapters, Elo and the strength tables."""
