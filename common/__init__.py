"""The infrastructure every app shares: strict JSON input, NUL-free fields, the API's errors
and their handler, parsers, renderers, permissions, constraints, the body limit, user
patterns on RE2, admin forms, the environment readers of the settings and the websocket
consumer base. It imports no other app of the project (tests/test_house.py checks)."""
