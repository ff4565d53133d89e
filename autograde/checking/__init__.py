"""What the exercises' checks are built from, and the registry that finds the exercises.

``student_code`` (calling student code safely and vetting what it returns),
``numeric_checks`` and ``numeric_cases`` (declarative checks of functions of
plain numbers, and their expected values), ``expected`` (expected-value
files), ``manifest`` (what an exercise's manifest declares), ``registry``
(every manifest, and every named check they declare).
"""
