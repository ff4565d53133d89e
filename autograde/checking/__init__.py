"""What the exercises' checks are built from: calling student code safely, declarative function specs, expected values.
"""
