"""Writes of agents_core, one module per area (agents.py, runs.py, threads.py, ...)."""
