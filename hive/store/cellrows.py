"""What the state index keeps of a cell file version (``ParsedCell``), read by the
plain reader (``store/celldoc.py``, no pydantic) when it is sure, else by the model
(``store/cells.py``). Above both, so that neither imports the other."""

from __future__ import annotations

from hive.store.celldoc import parsed, plain_cell
from hive.store.index import ParsedCell, ParseProblem


def parse_for_index(data: bytes, path: str) -> ParsedCell | ParseProblem:
    """Read here when the plain reader is sure (canonical YAML, a cell the model would
    keep as it is), else by the model (``store/cells.py:parse_for_index``, which imports
    pydantic): the same rows either way, much faster for the files hive writes."""
    from hive.store.yamlfast import fast_loads

    try:
        mapping = fast_loads(data.decode("utf-8"))
        cell = plain_cell(mapping)
    except Exception:  # anything unusual: the model decides, and words the problem
        cell = None
    if cell is not None:
        return parsed(cell, mapping)
    from hive.store.cells import parse_for_index as parse_with_model

    return parse_with_model(data, path)
