"""DRF views of agents_core, one module per area (agents.py, threads.py, ...)."""
