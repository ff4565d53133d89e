"""Finding the sandboxes' cgroups while other graders on the same machine create and remove theirs.

Found while grading the threat catalogue beside another batch: the recursive
walk that looked for orphaned cgroups failed when the other grader removed a
cgroup the walk was inside, so a sandbox could not start and a student's
notebook failed for the grader's reason. Fast, on a folder laid out like
``/sys/fs/cgroup`` (v1 controllers and v2 groups).
"""

from __future__ import annotations

import os
from pathlib import Path

from autograde.sandbox import cgroup


def _layout(base: Path) -> dict[str, Path]:
    paths = {
        "v2_alive": base / f"grading-sandbox-s-{os.getpid()}-1",
        "v1_orphan": base / "memory" / "grading-sandbox-s-999999999-2",
        "v1_alive": base / "pids" / f"grading-sandbox-s-{os.getpid()}-3",
        "other": base / "memory" / "system.slice",
    }
    for path in paths.values():
        path.mkdir(parents=True)
    (base / "cgroup.procs").write_text("")
    return paths


def test_sandbox_cgroups_are_found_at_the_top_and_under_each_controller(tmp_path):
    paths = _layout(tmp_path)
    found = set(cgroup.sandbox_cgroups(tmp_path))
    assert found == {paths["v2_alive"], paths["v1_orphan"], paths["v1_alive"]}


def test_only_the_cgroups_of_graders_that_are_gone_are_removed(tmp_path):
    paths = _layout(tmp_path)
    cgroup._remove_orphaned_cgroups(tmp_path)
    assert not paths["v1_orphan"].exists()
    assert paths["v2_alive"].exists() and paths["v1_alive"].exists() and paths["other"].exists()


def test_a_cgroup_removed_by_another_grader_while_listing_is_skipped(tmp_path, monkeypatch):
    paths = _layout(tmp_path)
    vanishing = paths["v1_orphan"].parent
    listed = Path.iterdir

    def iterdir(folder: Path):
        if folder == vanishing:
            raise FileNotFoundError(2, "No such file or directory", str(folder))
        return listed(folder)

    monkeypatch.setattr(Path, "iterdir", iterdir)
    assert set(cgroup.sandbox_cgroups(tmp_path)) == {paths["v2_alive"], paths["v1_alive"]}
    cgroup._remove_orphaned_cgroups(tmp_path)  # no error
