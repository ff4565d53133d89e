"""Grading for the course's nbgrader exercises: the engine, and one folder per exercise.

Students' notebooks import ``from autograde.checks import check`` (and
exercise 1's ``autograde.simulated``). Everything else is for instructors:

- ``python -m autograde.harness assignments`` -- generate student releases
  into ``_build/grading/release/`` and prove they show no solution or hidden test;
- ``python -m autograde.harness grade DIR`` -- grade ``DIR/<student_id>/<exercise>.ipynb``
  (a sandbox per submission, timeouts, feedback without hidden tests, ``grades.csv``);
- ``python -m autograde.regenerate_expected`` -- rewrite every exercise's
  ``expected.json`` from its source notebook's reference solution (``--check``: fail if stale).

The engine, by concern:

- ``sandbox/``: where student code runs (policy, backends, cgroup, the wire
  protocol, the runner inside, the grader's session);
- ``nbgrader_glue/``: nbgrader's settings and the steps the course replaces
  (sandboxed execute, structure repair, feedback without hidden tests), the
  course folders and releases, the gradebook;
- ``batch/``: grading a folder of submissions (layout, per-student grading,
  flags, report);
- ``authoring/``: the reference solution read from the source notebook, and
  the leak lints of releases and feedback;
- ``checking/``: what checks are built from (calling student code safely,
  declarative function specs, expected values) and the registry of the
  exercises' manifests.

The exercises: ``exercises/<name>/`` holds each one's ``manifest.py`` (test
cells, points, checks, how its expected values are built), ``checks.py``,
``cases.py`` (visible and hidden inputs) and ``expected.json``; none of it is
released or visible in a sandbox. See ``autograde/README.md`` for how to add one.
"""
