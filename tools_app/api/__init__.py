"""DRF views of tools_app, one module per area (tools.py, runs.py, ...)."""
