"""SHA-256 without loading OpenSSL (a leaf module: the standard library only).

``hashlib`` loads OpenSSL (``_hashlib``, ~2 ms of a fresh process). A short
string a command hashes where nothing else needs OpenSSL (an agent's name that is
not a plain file name, for its reservation file: ``hive reserve`` by a person
named ``Test User``) goes through CPython's built-in SHA-256, which gives the
same digest. So do the credentials (``hive/store/credentials.py``): their hash here, and
their comparison by :func:`same_digest`, the one ``hmac`` makes without OpenSSL."""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from collections.abc import Callable

_SHA256: list[Callable[[bytes], object]] = []


def sha256_hex(data: bytes) -> str:
    """The hex SHA-256 digest of ``data`` (``hashlib.sha256(data).hexdigest()``)."""
    if not _SHA256:
        import sys

        loaded = sys.modules.get("hashlib")  # OpenSSL already loaded (credentials): its own
        found = loaded.sha256 if loaded is not None else None
        _SHA256.append(found or builtin_hash(("_sha2", "_sha256"), "sha256"))  # _sha2: 3.12+
    hexdigest: str = _SHA256[0](data).hexdigest()  # type: ignore[attr-defined]
    return hexdigest


def builtin_hash(modules: tuple[str, ...], name: str) -> Callable[..., object]:
    """The constructor ``name`` of the first of CPython's built-in hash ``modules`` this
    Python has (no OpenSSL), else ``hashlib``'s (a Python built without them)."""
    for module in modules:
        try:
            found: Callable[..., object] = getattr(__import__(module), name)
        except (ImportError, AttributeError):
            continue
        return found
    import hashlib

    fallback: Callable[..., object] = getattr(hashlib, name)
    return fallback


def same_digest(given: str, stored: str) -> bool:
    """Whether two hex digests are equal, in a time that does not depend on where they
    differ (what ``hmac.compare_digest`` gives, without importing ``hmac``, which loads
    OpenSSL for it: ~3 ms of the pre-commit hook's process). Like it, text that is not
    ASCII is refused (TypeError); unequal lengths differ at once (the length is no
    secret: a digest's is fixed)."""
    if not (given.isascii() and stored.isascii()):
        raise TypeError("comparing strings with non-ASCII characters is not supported")
    if len(given) != len(stored):
        return False
    difference = 0
    for mine, theirs in zip(given.encode(), stored.encode(), strict=True):  # ASCII: no codec
        difference |= mine ^ theirs
    return difference == 0
