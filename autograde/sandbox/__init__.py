"""Where student code runs: one sandbox per submission, the wire to it, and the grader's side of it.

``policy`` (the limits), ``backends`` (what enforces them on this machine),
``cgroup`` (memory and processes of the whole tree), ``protocol`` (the wire,
copied into every sandbox), ``runner`` (the program inside), ``session`` (one
submission's sandbox as the checks see it).
"""
