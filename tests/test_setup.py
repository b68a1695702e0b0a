"""Setting hive up as a user does: scripts/setup.sh reuses an up-to-date .venv, and a
wheel built from this repository installs into a fresh virtualenv and runs."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.cputime import run_counted

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str, cwd: Path = ROOT, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(args), cwd=cwd, capture_output=True, text=True, check=False, timeout=timeout
    )


def test_setup_leaves_an_up_to_date_venv_alone_and_the_demo_starts_at_once() -> None:
    if not (ROOT / ".venv" / ".hive-setup").exists():
        pytest.skip("no .venv made by scripts/setup.sh here")
    first = run("bash", "scripts/setup.sh")  # up to date: nothing to install
    assert first.returncode == 0, first.stderr
    # the seconds are CPU seconds (tests/cputime.py): the work, not the wait for a core
    again, seconds = run_counted(["bash", "scripts/setup.sh"], cwd=ROOT)
    assert again.returncode == 0 and seconds < 2.0, (again.stderr, seconds)
    assert "installing" not in again.stderr  # nothing reinstalled, nothing said
    demo, seconds = run_counted(["bash", "scripts/demo.sh", "--help"], cwd=ROOT)
    assert demo.returncode == 0, demo.stderr  # setup, then `hive demo`
    assert "scratch repository" in demo.stdout
    assert seconds < 4.0


def test_the_readme_s_wheel_build_leaves_git_status_clean() -> None:
    """The README's `python3 -m pip wheel --no-deps -w dist .` left `?? dist/` in `git
    status` of the clone (build/ and *.egg-info were ignored, dist/ was not)."""
    made = ("dist/hive-0.1.0-py3-none-any.whl", "build/lib/hive/__init__.py", "hive.egg-info/")
    checked = run("git", "check-ignore", "--no-index", *made)
    assert checked.stdout.split() == list(made), checked


def test_a_built_wheel_installs_into_a_fresh_venv_and_runs(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    built = run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), ".")
    if built.returncode != 0 and "satisfies the requirement setuptools" in built.stderr:
        pytest.skip("building a wheel needs setuptools from the package index (offline?)")
    assert built.returncode == 0, built.stderr
    (wheel,) = dist.glob("hive-*.whl")
    packed = set(zipfile.ZipFile(wheel).namelist())
    for asset in [*ROOT.glob("hive/serve/static/*"), *ROOT.glob("hive/serve/templates/*")]:
        assert asset.relative_to(ROOT).as_posix() in packed  # hive serve's pages and files
    venv = tmp_path / "fresh"
    assert run(sys.executable, "-m", "venv", "--without-pip", str(venv)).returncode == 0
    python = venv / "bin" / "python"
    site = run(str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    fresh_site = Path(site.stdout.strip())
    installed = run(
        sys.executable,
        "-m",
        "pip",
        "--python",
        str(python),
        "install",
        "--no-deps",
        "-q",
        str(wheel),
    )
    assert installed.returncode == 0, installed.stderr
    # hive's dependencies come from this environment (a path entry, not its .pth files, so
    # this checkout's editable hive stays out): the hive that runs is the wheel's.
    (fresh_site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    version = run(str(venv / "bin" / "hive"), "--version", cwd=tmp_path)
    assert version.returncode == 0, version.stderr
    assert version.stdout.startswith("hive ")
    where = run(str(python), "-c", "import hive; print(hive.__file__)", cwd=tmp_path)
    assert where.stdout.startswith(str(fresh_site))
    repo = tmp_path / "repo"
    repo.mkdir()
    assert run("git", "init", "-q", cwd=repo).returncode == 0
    env_run = subprocess.run(
        [str(venv / "bin" / "hive"), "init"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "GIT_AUTHOR_NAME": "u", "GIT_AUTHOR_EMAIL": "u@x"},
    )
    assert env_run.returncode == 0, env_run.stderr
    assert (repo / ".hive" / "config.yaml").is_file()
    _wheel_serves_its_assets(venv / "bin" / "hive", repo)


def _wheel_serves_its_assets(hive: Path, repo: Path) -> None:
    """The installed wheel's 'hive serve' answers the board and every file under
    /static/ with the bytes of this checkout's assets (nothing to build)."""
    import json
    import urllib.request

    server = subprocess.Popen(
        [str(hive), "--json", "serve", "--port", "0"],
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert server.stdout is not None
        url = json.loads(server.stdout.readline())["url"]
        with urllib.request.urlopen(url, timeout=30) as page:
            assert page.status == 200 and "/static/hive.js" in page.read().decode()
        for asset in (ROOT / "hive" / "serve" / "static").iterdir():
            with urllib.request.urlopen(f"{url}static/{asset.name}", timeout=30) as answer:
                assert answer.status == 200 and answer.read() == asset.read_bytes(), asset
    finally:
        server.terminate()
        server.wait(timeout=120)


def test_setup_without_a_package_index_says_it_needs_the_network(tmp_path: Path) -> None:
    """Offline, scripts/setup.sh ended with pip's 'No matching distribution found for
    setuptools>=68' and 'could not install hive': nothing said the first setup downloads
    hive's dependencies and needs the network (or an index pip is configured for)."""
    clone = tmp_path / "clone"
    (clone / "scripts").mkdir(parents=True)
    for name in ("pyproject.toml", "scripts/setup.sh"):
        (clone / name).write_text((ROOT / name).read_text())
    # A .venv whose pip is the base Python's: no ensurepip to wait for, and no index to
    # install anything from (nothing is installed: the build needs setuptools first).
    venv = run(
        sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", ".venv", cwd=clone
    )
    assert venv.returncode == 0, venv.stderr
    empty = tmp_path / "no-wheels"
    empty.mkdir()
    offline = {
        **os.environ,
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(empty),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    setup = subprocess.run(
        ["bash", "scripts/setup.sh"], cwd=clone, env=offline, capture_output=True, text=True
    )
    assert setup.returncode == 1, setup.stderr
    said = " ".join(setup.stderr.split())
    assert "setup failed: could not install hive into .venv" in said
    assert "from PyPI (or the index pip is configured for), so it needs the network" in said
    assert not (clone / ".venv" / ".hive-setup").exists()  # a later run tries again
