"""Grading a folder of submissions: the layout it accepts, one student at a time, the report.

``grading`` (a batch: grade, flag, feedback, export), ``submissions`` (the
folder layout and notebooks that open), ``integrity`` (code that reaches for
the grader, flagged for a person).
"""
