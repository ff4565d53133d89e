"""nbgrader settings of the course, loaded by the root ``nbgrader_config.py``.

The course root is the folder above this file, so a copy of the course
(exercises/, nbgrader_config.py, autograde/nbgrader_config.py) elsewhere
grades into its own ``_build/grading`` and never touches this checkout's.
"""

from pathlib import Path

from autograde.nbgrader_glue.settings import apply_settings

apply_settings(get_config(), course_root=Path(__file__).resolve().parent.parent)  # noqa: F821 -- injected by traitlets
