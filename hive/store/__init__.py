"""The .hive/ layout, YAML encoding, ids and the parse cache. Pure: no git, no I/O on repos."""
