"""nbgrader reads this file at the repository root; the settings live in autograde/nbgrader_settings.py."""
load_subconfig("autograde/nbgrader_config.py")  # noqa: F821 -- injected by traitlets
