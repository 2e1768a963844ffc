#!/usr/bin/env python
"""Django's command-line utility for Agent Studio (the same as `studio` or `python -m
studio` from an installed wheel: studio.cli)."""

from __future__ import annotations

from studio.cli import main

if __name__ == "__main__":
    main()
