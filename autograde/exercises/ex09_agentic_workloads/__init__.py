"""Exercise 9: its manifest, checks, hidden cases and expected values (never released, never in a sandbox)."""
