"""How nbgrader runs the course: its settings, its autograde and feedback steps as the course replaces them, the gradebook.

``settings`` (the one place for nbgrader's options), ``course`` (the course
folders and the student releases), ``commands`` (an nbgrader command as a child
process with limits), ``autograde_step`` (autograde one student in-process),
``sandboxed_execute`` (the execute step: student code in a sandbox, checks
outside), ``repair`` (a submission put back on its release's skeleton),
``feedback`` (hidden tests kept out of feedback), ``gradebook``.
"""
