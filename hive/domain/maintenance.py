"""The object store: how healthy it is (``hive doctor``) and packing it (``hive gc``).

hive packs loose objects by itself after writes, as ``git gc --auto`` would
(``hive/git/packing.py``). These functions report on the store and pack it on
request, whatever the thresholds.
"""

from __future__ import annotations

import os

from hive.domain.workspace import Workspace
from hive.errors import GitError
from hive.git import packing
from hive.models.results import ObjectStoreHealth, PackReport

FIX = "run 'hive gc' (or 'git gc') to pack them"


def object_store_health(ws: Workspace) -> ObjectStoreHealth:
    """Loose objects and packs, counted exactly, with a warning (and its fix) for each
    way the store is unhealthy."""
    repo = ws.git
    stats = packing.store_stats(repo)
    config = packing.gc_config(repo)
    failure = _last_failure(repo.paths.hive_state_dir)
    # a precious-objects repository is never packed: no fix to offer (hive gc says why)
    warnings = [] if packing.precious(repo) else _packing_wanted(stats, config)
    if failure is not None:
        warnings.append(f"the last automatic packing failed ({failure}): run 'hive gc'")
    return ObjectStoreHealth(
        loose_objects=stats.loose_objects,
        loose_size=stats.loose_bytes,
        loose_estimate=stats.estimate,
        packs=stats.packs,
        kept_packs=stats.kept_packs,
        pack_size=stats.pack_bytes,
        garbage=stats.garbage,
        gc_auto=config.auto,
        gc_auto_pack_limit=config.pack_limit,
        last_failure=failure,
        warnings=warnings,
    )


def _packing_wanted(stats: packing.StoreStats, config: packing.GcConfig) -> list[str]:
    """A warning, with its fix, for too many loose objects or packs."""
    warnings: list[str] = []
    limit = config.auto if config.auto > 0 else packing.DEFAULT_GC_AUTO
    if stats.loose_objects > limit:
        why = (
            f"more than gc.auto={config.auto}"
            if config.auto > 0
            else "gc.auto=0 turns automatic packing off"
        )
        warnings.append(f"{stats.loose_objects} loose objects ({why}): {FIX}")
    if 0 < config.pack_limit < stats.packs - stats.kept_packs:
        warnings.append(
            f"{stats.packs - stats.kept_packs} packs (more than gc.autoPackLimit="
            f"{config.pack_limit}): run 'hive gc' to merge them"
        )
    return warnings


def _last_failure(state_dir: str) -> str | None:
    try:
        with open(os.path.join(state_dir, "gc.log"), encoding="utf-8") as handle:
            text = handle.read().strip()
    except OSError:
        return None
    return text or None


def pack_repository(ws: Workspace) -> PackReport:
    """Pack every loose object and merge all packs into one (``.keep`` packs stay)."""
    try:
        outcome = packing.pack_objects(ws.git, merge_packs=True, pack_limit=1)
    except (OSError, ValueError) as exc:
        raise GitError(f"packing failed ({exc}); no object was removed") from exc
    if outcome.skipped is None:
        packing.clear_failure(ws.git)
    return PackReport(
        packed=outcome.packed,
        removed_loose=outcome.removed_loose,
        merged_packs=outcome.merged_packs,
        new_packs=outcome.new_packs,
        seconds=round(outcome.seconds, 3),
        skipped=outcome.skipped,
        store=object_store_health(ws),
    )
