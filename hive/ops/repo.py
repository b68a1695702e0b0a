"""The repository itself, described once: setting hive up (``init``, the git hook),
keeping it healthy (``doctor``, ``gc``) and exchanging it with remotes and other
trackers (``sync``, ``mail sync``, beads import/export). For people at a shell (and
coordinators), not agent tools: each changes the repository's setup or talks to the
network, and an agent's work needs none of them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from hive.errors import (
    Conflict,
    CorruptFile,
    GitError,
    InvalidInput,
    LockTimeout,
    NotFound,
    NotInitialized,
    PermissionDenied,
)
from hive.models.mail import MailSyncResult
from hive.models.results import (
    BeadsExportResult,
    BeadsImportResult,
    DoctorReport,
    HookResult,
    InitResult,
    PackReport,
    Problem,
    SyncResult,
)
from hive.ops.spec import (
    CLI_ONLY,
    Caller,
    Command,
    NoParams,
    Operation,
    Params,
    declare,
    declared_tool_names,
    progress,
)

if TYPE_CHECKING:
    from hive.domain.workspace import Workspace

REMOTE = (
    "remote name or URL (default: the branch's upstream remote, else the only remote, else origin)"
)
EXCHANGE = (InvalidInput, GitError, LockTimeout, NotInitialized)


class InitParams(Params):
    prefix: str | None = Field(
        default=None, max_length=64, description="id prefix for new cells (default hv)"
    )


def _init(ws: Workspace, a: InitParams) -> InitResult:
    from hive.domain.setup import init_hive

    return init_hive(ws, prefix=a.prefix)


def _doctor(caller: Caller, a: NoParams) -> DoctorReport:
    """The report, with a warning for each tool an agent's ``tools:`` list or the
    ``tools:`` section names that does not exist, and a problem for each agent's
    working directory that is missing (when the config loads: else the report says
    why it does not)."""
    from hive.domain.agents import (
        agent_directory_problems,
        agent_tool_warnings,
        tools_config_warnings,
    )
    from hive.domain.doctor import diagnose
    from hive.errors import CorruptFile

    ws = caller.workspace()
    report = diagnose(ws)
    try:
        known = declared_tool_names()
        unknown = agent_tool_warnings(ws, known) + tools_config_warnings(ws, known)
        directories = agent_directory_problems(ws)
    except CorruptFile:
        unknown = directories = []  # the config does not load: a problem of the report already
    report.warnings += [
        Problem(kind="unknown-tool", message=text, path=".hive/config.yaml") for text in unknown
    ]
    report.problems += [
        Problem(kind="agent-directory", message=text, path=".hive/config.yaml")
        for text in directories
    ]
    return report


def _gc(ws: Workspace, a: NoParams) -> PackReport:
    from hive.domain.maintenance import pack_repository

    return pack_repository(ws)


def _install(ws: Workspace, a: NoParams) -> HookResult:
    from hive.domain.hooks import install_hook

    return install_hook(ws)


def _uninstall(ws: Workspace, a: NoParams) -> HookResult:
    from hive.domain.hooks import uninstall_hook

    return uninstall_hook(ws)


class RemoteParams(Params):
    remote: str | None = Field(default=None, min_length=1, max_length=4096, description=REMOTE)


def _sync(ws: Workspace, a: RemoteParams) -> SyncResult:
    from hive.domain.sync import sync

    return sync(ws, remote=a.remote, progress=progress())


def _mail_sync(ws: Workspace, a: RemoteParams) -> MailSyncResult:
    from hive.domain.mail import sync_mail

    return sync_mail(ws, remote=a.remote)


class ImportParams(Params):
    path: str = Field(
        min_length=1,
        max_length=4096,
        description="a beads JSONL export (or .jsonl.gz; -: standard input)",
    )
    update: bool = Field(
        default=False,
        description="replace cells whose ids already exist when the record's updated_at is"
        " later (a cell edited here since is kept)",
    )
    overwrite: bool = Field(
        default=False,
        description="replace every cell whose id exists with the file's version, even one"
        " edited here since (implies --update)",
    )


def _import(ws: Workspace, a: ImportParams) -> BeadsImportResult:
    from hive.domain.beads import import_beads

    return import_beads(
        ws, path=a.path, update=a.update, overwrite=a.overwrite, progress=progress()
    )


class ExportParams(Params):
    path: str | None = Field(
        default=None, max_length=4096, description="where to write (default or -: stdout)"
    )


def _export(ws: Workspace, a: ExportParams) -> BeadsExportResult:
    from hive.domain.beads import export_beads

    return export_beads(ws, path=None if a.path == "-" else a.path)  # '-': standard output


declare(
    Operation(
        name="hive_init",
        summary="Create .hive/ in this git repository (safe to run again).",
        params=InitParams,
        result=InitResult,
        run=_init,
        writes=True,
        errors=(InvalidInput, GitError, LockTimeout),
        surfaces=CLI_ONLY,
        commands=(Command(("init",)),),
        help="Create .hive/ in this git repository (safe to run again).\n\nIn a clone"
        " whose branch has no hive yet, the settings (.hive/config.yaml) are those of the"
        " hive that 'hive sync' keeps on the remote it syncs with by default (the branch's"
        " upstream remote, else the only one, else origin), when it has one;"
        " 'hive sync' then brings its cells.",
    ),
    Operation(
        name="hive_doctor",
        summary="Find corrupt files, dangling dependencies and cycles.",
        params=NoParams,
        result=DoctorReport,
        session=_doctor,
        writes=False,
        errors=(NotInitialized,),
        surfaces=CLI_ONLY,
        commands=(Command(("doctor",)),),
        help="Find corrupt files, dangling dependencies and cycles; exit 1 if any.\n\nAlso"
        " reports the git object store (loose objects, packs) and warns, with the fix, when"
        " it needs packing (warnings do not change the exit code).",
    ),
    Operation(
        name="hive_gc",
        summary="Pack loose objects and merge packs into one.",
        params=NoParams,
        result=PackReport,
        run=_gc,
        writes=True,
        errors=(GitError,),
        surfaces=CLI_ONLY,
        commands=(Command(("gc",)),),
        help="Pack loose objects and merge packs into one (hive also does this by itself"
        " after writes, as git gc --auto would).",
    ),
    Operation(
        name="hooks_install",
        summary="Install hive's git hooks (chaining existing ones).",
        help="Install hive's git hooks, chaining existing ones: pre-commit and"
        " pre-merge-commit (reservations and valid .hive/ files on git commit and git"
        " merge) and commit-msg (an agent's own commits name it and its cell).",
        params=NoParams,
        result=HookResult,
        run=_install,
        writes=True,
        errors=(InvalidInput, Conflict),
        surfaces=CLI_ONLY,
        commands=(Command(("hooks", "install")),),
    ),
    Operation(
        name="hooks_uninstall",
        summary="Remove hive's git hooks (restores chained ones).",
        params=NoParams,
        result=HookResult,
        run=_uninstall,
        writes=True,
        errors=(Conflict,),
        surfaces=CLI_ONLY,
        commands=(Command(("hooks", "uninstall")),),
    ),
    Operation(
        name="hive_sync",
        summary="Exchange hive's cells, reservations and mail with a remote.",
        params=RemoteParams,
        result=SyncResult,
        run=_sync,
        writes=True,
        errors=EXCHANGE,
        surfaces=CLI_ONLY,
        commands=(Command(("sync",), arguments=("remote",)),),
        help="Exchange hive's cells, reservations and mail with REMOTE: fetch, merge, push."
        "\n\nOnly hive's files and refs change (never your other files or your branch's"
        " code); a push rejected because another clone pushed first is retried after a"
        " fresh fetch.",
    ),
    Operation(
        name="mail_sync",
        summary="Exchange mail with a remote: fetch, merge diverged logs, push.",
        params=RemoteParams,
        result=MailSyncResult,
        run=_mail_sync,
        writes=True,
        errors=EXCHANGE,
        surfaces=CLI_ONLY,
        commands=(Command(("mail", "sync"), arguments=("remote",)),),
    ),
    Operation(
        name="beads_import",
        summary="Import a beads (bd) JSONL export: one cell per record, in one commit.",
        params=ImportParams,
        result=BeadsImportResult,
        run=_import,
        writes=True,
        errors=(InvalidInput, NotFound, CorruptFile, PermissionDenied),
        surfaces=CLI_ONLY,
        commands=(Command(("import", "beads"), arguments=("path",)),),
    ),
    Operation(
        name="beads_export",
        summary="Export every cell as beads (bd) JSONL, to a file or stdout.",
        params=ExportParams,
        result=BeadsExportResult,
        run=_export,
        writes=False,
        errors=(InvalidInput,),
        surfaces=CLI_ONLY,
        commands=(Command(("export", "beads"), arguments=("path",)),),
    ),
)
