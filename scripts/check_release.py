#!/usr/bin/env python3
"""Released Sqitch changes are never edited: checks them against sql/released.sha256.

Once a change sits before a tag in sqitch.plan it may have been deployed by a user,
and Sqitch will never run it again ("Nothing to deploy"). Editing its scripts would
leave every upgraded database with the old code and no word about it. So a released
change is frozen: a later version must come through `sqitch rework` (which copies the
released scripts to NAME@TAG.sql) or through a new change.

    scripts/check_release.py            # exit 1, naming each edited file, if a released change moved
    scripts/check_release.py --record   # after `sqitch tag`: freeze everything up to the newest tag

Standard library only, so CI can run it before anything is installed.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLAN = ROOT / "sqitch.plan"
RECORD = ROOT / "sql" / "released.sha256"
# sqitch.conf: deploy scripts under sql/, revert and verify mirrored under sql/revert, sql/verify
DIRS = {"deploy": ROOT / "sql", "revert": ROOT / "sql" / "revert", "verify": ROOT / "sql" / "verify"}


@dataclass
class Entry:
    line: str  # the plan line as written (its text feeds Sqitch's change ids)
    name: str  # change name, or the tag name without '@'
    is_tag: bool


def read_plan(path: Path = PLAN) -> list[Entry]:
    entries = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith(("%", "#")):
            continue
        first = line.split()[0]
        entries.append(Entry(raw, first.lstrip("@"), first.startswith("@")))
    return entries


def script_path(entries: list[Entry], i: int, kind: str) -> Path:
    """The file Sqitch runs for the change instance at entries[i].

    A change reworked later keeps its earlier instance in NAME@TAG.sql, TAG being the
    first tag between the two instances whose file exists (Sqitch's own rule)."""
    name = entries[i].name
    later = next((j for j in range(i + 1, len(entries)) if not entries[j].is_tag and entries[j].name == name), None)
    if later is not None:
        for e in entries[i + 1 : later]:
            if e.is_tag:
                candidate = DIRS[kind] / f"{name}@{e.name}.sql"
                if candidate.exists():
                    return candidate
    return DIRS[kind] / f"{name}.sql"


def released(entries: list[Entry]) -> tuple[list[tuple[str, Path]], str | None, str]:
    """(key, file) for every script of every change before the newest tag, that tag,
    and a digest of the plan lines up to it."""
    last_tag = max((i for i, e in enumerate(entries) if e.is_tag), default=None)
    if last_tag is None:
        return [], None, ""
    out = []
    for i, e in enumerate(entries[:last_tag]):
        if e.is_tag:
            continue
        release = next(x.name for x in entries[i + 1 :] if x.is_tag)
        for kind in DIRS:
            out.append((f"{kind} {e.name}@{release}", script_path(entries, i, kind)))
    prefix = "\n".join(e.line for e in entries[: last_tag + 1])
    return out, entries[last_tag].name, hashlib.sha256(prefix.encode()).hexdigest()


def digest(path: Path) -> str:
    if not path.exists():
        return "missing"
    return hashlib.sha256(path.read_bytes()).hexdigest()


def record() -> int:
    items, tag, plan_digest = released(read_plan())
    if tag is None:
        print("sqitch.plan has no tag: nothing is released yet", file=sys.stderr)
        return 1
    lines = [
        f"# Frozen scripts of every change up to @{tag}: scripts/check_release.py checks them.",
        f"{plan_digest}  plan up-to @{tag}",
    ]
    lines += [f"{digest(p)}  {key}" for key, p in items]
    RECORD.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"recorded {len(items)} scripts of the changes up to @{tag} in {RECORD.relative_to(ROOT)}")
    return 0


def check() -> int:
    items, tag, plan_digest = released(read_plan())
    if tag is None:
        print("check_release: no tag in sqitch.plan, nothing released")
        return 0
    if not RECORD.exists():
        print(
            f"check_release: {RECORD.relative_to(ROOT)} is missing: run scripts/check_release.py --record after tagging"
        )
        return 1
    recorded = {}
    for line in RECORD.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            sha, key = line.split("  ", 1)
            recorded[key] = sha
    problems = []
    if recorded.get(f"plan up-to @{tag}") is None:
        problems.append(f"@{tag} is the newest tag but it is not recorded: run scripts/check_release.py --record")
    elif recorded[f"plan up-to @{tag}"] != plan_digest:
        problems.append(f"sqitch.plan lines up to @{tag} were edited (released changes and tags are fixed)")
    for key, path in items:
        want = recorded.get(key)
        if want is None:
            continue  # a release newer than the record is reported above
        have = digest(path)
        if have != want:
            what = "is missing" if have == "missing" else "was edited"
            problems.append(
                f"{path.relative_to(ROOT)} {what}: {key.split(' ', 1)[1]} is released; "
                f"use `sqitch rework {key.split(' ', 1)[1].split('@')[0]}` or a new change"
            )
    for p in problems:
        print(f"check_release: {p}")
    if problems:
        return 1
    print(f"check_release: {len(items)} released scripts up to @{tag} unchanged")
    return 0


if __name__ == "__main__":
    sys.exit(record() if sys.argv[1:] == ["--record"] else check())
