"""The reservation glob matcher: examples from the issue, wcmatch agreement, and a
property test of exact intersection against brute-force enumeration of paths."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wcmatch import glob as wc

from hive.domain.globs import (
    glob_matches,
    intersection_witness,
    normalize_pattern,
    patterns_intersect,
)
from hive.errors import InvalidInput, PathOutsideRepository

WC_FLAGS = wc.GLOBSTAR | wc.BRACE | wc.DOTMATCH


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("app/**", "app/models/user.py"),
        ("src/*.py", "src/a*"),
        ("**/*.py", "lib/**"),
        ("src/{a,b}/x.ts", "src/b/*"),
        ("src/[a-c]*.py", "src/b?.py"),
        ("**", "anything/at/all"),
        ("a/**/b", "a/b"),
    ],
)
def test_conflicting_patterns_intersect_in_both_orders(a: str, b: str) -> None:
    assert patterns_intersect(a, b) and patterns_intersect(b, a)
    witness = intersection_witness(a, b)
    assert witness is not None and glob_matches(a, witness) and glob_matches(b, witness)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("src/*.py", "src/sub/a.py"),
        ("src/*.py", "src/*.ts"),
        ("app/**", "app"),
        ("src/[a-c].py", "src/[d-f].py"),
        ("docs/{a,b}.md", "docs/c.md"),
        ("a/*/c", "a/b/d/c"),
    ],
)
def test_disjoint_patterns_do_not_intersect(a: str, b: str) -> None:
    assert not patterns_intersect(a, b) and not patterns_intersect(b, a)
    assert intersection_witness(a, b) is None


@pytest.mark.parametrize(
    ("raw", "normal"),
    [("./src//auth/", "src/auth/**"), ("src/./a.py", "src/a.py"), ("a/b/../c", "a/c")],
)
def test_normalisation(raw: str, normal: str) -> None:
    assert normalize_pattern(raw) == normal


@pytest.mark.parametrize("raw", ["../x", "/etc/passwd", "a/../../b", "C:\\x"])
def test_escaping_patterns_are_refused(raw: str) -> None:
    with pytest.raises(PathOutsideRepository):
        normalize_pattern(raw)


@pytest.mark.parametrize("raw", ["../x", "a/../../b", "src/{a,../../b}"])
def test_a_pattern_leading_out_says_what_to_give(raw: str) -> None:
    with pytest.raises(PathOutsideRepository) as refused:
        normalize_pattern(raw)
    assert refused.value.message == (
        f"pattern {raw!r} points outside the repository; give a path inside it, relative"
        " to its top directory (src/a.py)"
    )


@pytest.mark.parametrize("raw", ["", "src/[a-", "a\x00b"])
def test_malformed_patterns_are_refused(raw: str) -> None:
    with pytest.raises(InvalidInput):
        normalize_pattern(raw)


# ---------------------------------------------------------------- brute force

ALPHABET = "ab."
PIECES = ["a", "b", ".", "*", "?", "**", "[ab]", "[!a]", "{a,b.}", "/"]


def _all_paths(max_segments: int = 3, max_len: int = 2) -> list[str]:
    names = [
        "".join(chars)
        for length in range(1, max_len + 1)
        for chars in itertools.product(ALPHABET, repeat=length)
    ]
    names = [n for n in names if n not in (".", "..")]
    paths: list[str] = []
    for count in range(1, max_segments + 1):
        paths.extend("/".join(parts) for parts in itertools.product(names, repeat=count))
    return paths


PATHS = _all_paths()


def _pattern(pieces: list[str]) -> str | None:
    text = "".join(pieces).strip("/")
    while "//" in text:
        text = text.replace("//", "/")
    if not text or "***" in text or {".", ".."} & set(text.split("/")):
        return None  # "." and ".." are normalised away (tested above), not matched
    return text


patterns = st.lists(st.sampled_from(PIECES), min_size=1, max_size=5).map(_pattern)


@settings(max_examples=300, deadline=None)
@given(patterns)
def test_matching_agrees_with_wcmatch(pattern: str | None) -> None:
    if pattern is None:
        return
    reference = wc.compile(pattern, flags=WC_FLAGS)  # what wc.globmatch compiles per call
    # every path that disagrees (one assertion: a rewritten assert per path cost a third)
    disagree = [path for path in PATHS if glob_matches(pattern, path) != reference.match(path)]
    assert disagree == []


@settings(max_examples=400, deadline=None)
@given(patterns, patterns)
def test_intersection_is_exact_against_enumeration(a: str | None, b: str | None) -> None:
    if a is None or b is None:
        return
    witness = intersection_witness(a, b)
    if witness is not None:
        assert glob_matches(a, witness) and glob_matches(b, witness), witness
        assert intersection_witness(b, a) is not None
        return
    # "No" must be a proof: no enumerated path may match both.
    both = [p for p in PATHS if glob_matches(a, p) and glob_matches(b, p)]
    assert both == [], (a, b, both[:3])


def test_brace_products_are_bounded_not_slow() -> None:
    import time

    started = time.process_time()  # CPU: the work, not the wait for a core
    with pytest.raises(InvalidInput, match="alternatives"):
        patterns_intersect("{a,b}" * 10 + "/x", "{c,d}" * 10 + "/x")
    with pytest.raises(InvalidInput, match="brace alternatives to compare"):
        patterns_intersect("{a,b}" * 6 + "/x", "{c,d}" * 6 + "/x")
    assert time.process_time() - started < 2.0
    assert patterns_intersect("{a,b}" * 3 + "/x", "**/x")


@pytest.mark.parametrize(
    ("raw", "normal"),
    [("{a,b}/../c", "c"), ("a/{b,c/..}/d", "{a/b/d,a/d}"), ("src/{,a}b.py", "src/{,a}b.py")],
)
def test_dot_segments_are_resolved_per_alternative(raw: str, normal: str) -> None:
    assert normalize_pattern(raw) == normal


@pytest.mark.parametrize("raw", ["{a,..}/..", "{,a}/x", "{a,../b}"])
def test_an_escaping_or_absolute_alternative_is_refused(raw: str) -> None:
    with pytest.raises(PathOutsideRepository):
        normalize_pattern(raw)
