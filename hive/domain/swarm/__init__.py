"""Swarm orchestration: decomposition, completion, learning from outcomes, review."""
