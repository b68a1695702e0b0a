"""The order the suite runs its modules in (tests/conftest.py): slowest first, by the
seconds each took when last measured, so that no slow module is the run's tail."""

from __future__ import annotations

from tests.conftest import estimated_seconds


def test_a_module_not_measured_yet_runs_where_the_median_module_runs() -> None:
    known = {"tests/test_a.py": 9.0, "tests/test_b.py": 4.0, "tests/test_c.py": 0.5}
    seconds = estimated_seconds(known)
    assert seconds("tests/test_b.py") == 4.0  # a measured one: as measured
    assert seconds("tests/test_new.py") == 4.0  # not measured yet: the median
    modules = ["tests/test_new.py", "tests/test_c.py", "tests/test_a.py", "tests/test_b.py"]
    ordered = sorted(modules, key=lambda module: -seconds(module))
    assert ordered == ["tests/test_a.py", "tests/test_new.py", "tests/test_b.py", "tests/test_c.py"]
