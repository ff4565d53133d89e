"""Grading for the course's nbgrader exercises: the checks students' test cells call, and the harness.

Students' notebooks import one thing: ``from autograde.checks import check``.
Everything else is for instructors:

- ``python -m autograde.harness assignments`` -- generate student releases
  into ``_build/grading/release/`` and prove they show no solution or hidden test;
- ``python -m autograde.harness grade DIR`` -- grade ``DIR/<student_id>/<exercise>.ipynb``
  (per-student child processes, timeouts, feedback without hidden tests, ``grades.csv``);
- ``python -m autograde.regenerate_expected`` -- rewrite ``autograde/expected/exNN.json``
  of every exercise from its source notebook's reference solution (``--check``: fail if stale).

Modules, one job each: ``checks`` (registry), ``ex01_checks`` (exercise 1),
``numeric_checks`` (checks of functions of plain numbers), ``ex02_checks`` to
``ex06_checks`` (the specifications of exercises 2-6), ``exNN_cases`` (each
exercise's visible and hidden inputs; ``numeric_cases`` builds those of
exercises 2-4), ``student_code`` (calling and vetting student code),
``simulated`` (the instrumented model and simulated clock), ``expected``
(expected-value files), ``reference`` (the reference solution, read from the
notebook), ``regenerate_expected``, ``harness`` (command line), ``course`` (exercises and
release), ``grading`` (a batch), ``submissions`` (folder layout),
``nbgrader_runner`` (child processes with limits), ``gradebook``,
``feedback`` (hides hidden tests), ``leaks`` (finds solution/hidden text),
``integrity`` (flags code that reaches for the grader), ``nbgrader_settings``.
"""
