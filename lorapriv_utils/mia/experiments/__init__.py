"""The experiments that write committed results: the grid, the frontier, the audit, the DP comparison, the
white-box game, the multiplier and the gradient alignment."""
