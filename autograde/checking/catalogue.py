"""Every exercise's manifest, found in its folder.

An exercise is known by having ``autograde/exercises/<name>/manifest.py``;
nothing else lists the exercises.
"""

from __future__ import annotations

import importlib
from functools import cache

from autograde.checking.manifest import EXERCISES_DIR, EXERCISES_PACKAGE, ExerciseManifest


@cache
def manifests() -> tuple[ExerciseManifest, ...]:
    """The manifest of every folder of ``autograde/exercises/``, in name order."""
    found = []
    for folder in sorted(EXERCISES_DIR.iterdir()):
        if not (folder / "manifest.py").is_file():
            continue
        manifest = importlib.import_module(f"{EXERCISES_PACKAGE}.{folder.name}.manifest").MANIFEST
        if not isinstance(manifest, ExerciseManifest) or manifest.name != folder.name:
            raise ValueError(f"{folder}/manifest.py must define MANIFEST = ExerciseManifest(name={folder.name!r}, ...)")
        found.append(manifest)
    return tuple(found)


def manifest_of(exercise: str) -> ExerciseManifest:
    """The manifest of ``exercise``; KeyError naming the known ones if there is none."""
    for manifest in manifests():
        if manifest.name == exercise:
            return manifest
    raise KeyError(f"no exercise {exercise!r}; known: {', '.join(m.name for m in manifests())}")
