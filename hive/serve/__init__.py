"""``hive serve``: a local web app for people watching a swarm (board, epics,
reservations, mail, outcomes), live over server-sent events, read-only unless
started with ``--allow-write``."""
