"""What a fresh read process spares itself (docs/performance.md, session 42): ``_sqlite3``
loaded without ``functools``, the object readers only for a commit the state index has
not seen, HEAD's files read without the ``ascii`` codec."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hive.domain.cells import create_cell
from hive.domain.setup import init_hive
from hive.domain.workspace import Workspace
from hive.git.refs import discover, read_head_fast
from tests.conftest import git, make_repo


def _probe(code: str, cwd: Path | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_sqlite_is_loaded_without_functools_which_stays_importable() -> None:
    """The stand-in is gone once ``_sqlite3`` is loaded: ``functools`` imported later is
    the real one, and the statement cache it gave SQLite works (more distinct statements
    than the cache holds, each asked twice)."""
    code = (
        "import sys\n"
        "from hive.store.sqlerrors import sqlite3\n"
        "print(sorted({'functools', 'collections'} & set(sys.modules)))\n"
        "db = sqlite3.connect(':memory:')\n"
        "found = [db.execute(f'SELECT {n} + ?', (n,)).fetchone()[0] for n in range(300)] * 2\n"
        "found += [db.execute(f'SELECT {n} + ?', (n,)).fetchone()[0] for n in range(300)]\n"
        "assert found == [2 * n for n in range(300)] * 3, found[:5]\n"
        "import functools\n"
        "print(functools.reduce(lambda a, b: a + b, [1, 2, 3]), functools.lru_cache.__module__)\n"
    )
    assert _probe(code).splitlines() == ["[]", "6 functools"]


def test_sqlite_loaded_after_functools_is_left_alone() -> None:
    code = (
        "import functools, sys\n"
        "real = functools\n"
        "from hive.store.sqlerrors import sqlite3\n"
        "assert sys.modules['functools'] is real\n"
        "print(sqlite3.connect(':memory:').execute('SELECT 1').fetchone()[0])\n"
    )
    assert _probe(code) == "1"


def test_a_read_of_a_known_commit_loads_no_object_reader(tmp_path: Path) -> None:
    """``hive ready`` on a commit the state index has seen imports neither the loose nor
    the pack reader (nor zlib); on one it has not seen (a new commit by git), it reads
    HEAD's trees with them and answers."""
    repo = make_repo(tmp_path / "repo")
    ws = Workspace(str(repo))
    init_hive(ws)
    create_cell(ws, title="one")
    code = (
        "import io, sys\n"
        "from hive.cli.entry import parse, dispatch\n"
        "sys.stdout = io.TextIOWrapper(io.BytesIO())\n"
        "code = dispatch(parse(['ready', '--json']))\n"
        "sys.stdout = sys.__stdout__\n"
        "readers = ('hive.git.loose', 'hive.git.packfile', 'zlib')\n"
        "print(code, sorted(set(readers) & set(sys.modules)))\n"
    )
    assert _probe(code, repo) == "0 []"  # hive's write remembered its commit
    (repo / "notes.txt").write_text("a commit of git's\n")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-q", "-m", "notes")
    assert _probe(code, repo) == "0 ['hive.git.loose', 'hive.git.packfile', 'zlib']"
    assert _probe(code, repo) == "0 []"  # known now


def test_heads_files_are_read_as_ascii_text(tmp_path: Path) -> None:
    """CRLF or CR line ends are read as text mode reads them; a file that is not ASCII
    is no ref here (the full path reads it), as with the ``ascii`` codec."""
    repo = make_repo(tmp_path / "repo")
    paths = discover(str(repo))
    commit = git(repo, "rev-parse", "HEAD").strip()
    head = Path(paths.git_dir, "HEAD")
    branch = Path(paths.git_dir, "refs", "heads", "main")
    head.write_bytes(b"ref: refs/heads/main\r\n")
    branch.write_bytes(commit.encode() + b"\r")
    found = read_head_fast(paths)
    assert found is not None and (found.ref, found.commit) == ("refs/heads/main", commit)
    head.write_bytes("ref: refs/heads/caf\u00e9\n".encode())
    assert read_head_fast(paths) is None
    head.write_bytes(commit.encode() + b"\n")
    found = read_head_fast(paths)
    assert found is not None and (found.ref, found.commit) == (None, commit)


def test_working_tree_files_are_read_whole_and_a_directory_is_no_edit(tmp_path: Path) -> None:
    """``read_bytes`` (os calls, no file object) reads what ``open().read()`` does, past
    its 64 KiB chunks too; ``edited_on_disk`` calls a directory or a missing file no edit."""
    from hive.git.worktree import blob_sha_of, edited_on_disk, read_bytes

    big = tmp_path / "big"
    big.write_bytes(bytes(range(256)) * 1000 + b"tail")
    assert read_bytes(str(big)) == big.read_bytes()
    assert not edited_on_disk(str(big), blob_sha_of(big.read_bytes()))
    assert edited_on_disk(str(big), blob_sha_of(b"other"))
    for path in (tmp_path, tmp_path / "missing", big / "below"):
        assert not edited_on_disk(str(path), blob_sha_of(b"x"))


def test_a_sqlite_module_wanting_more_of_functools_gets_the_real_one() -> None:
    """A ``_sqlite3`` whose import asks ``functools`` for more than ``lru_cache`` (as a
    later Python's might) fails under the stand-in: it is imported again with the real
    module, and works."""
    code = (
        "import sys\n"
        "class Picky:\n"
        "    tried = 0\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == '_sqlite3':\n"
        "            Picky.tried += 1\n"
        "            found = sys.modules.get('functools')\n"
        "            if found is not None and not hasattr(found, 'reduce'):\n"
        "                raise AttributeError('reduce')  # as a C module's import would\n"
        "        return None\n"
        "sys.meta_path.insert(0, Picky())\n"
        "from hive.store.sqlerrors import sqlite3\n"
        "print(Picky.tried, sqlite3.connect(':memory:').execute('SELECT 2').fetchone()[0])\n"
    )
    assert _probe(code) == "2 2"
