"""Units used across the book: decimal and binary byte multiples, and time.

Decimal units (GB, TB) follow datasheets; binary units (KiB, GiB) follow memory
allocators. The book always says which one it uses. Introduced in ch-prefill-decode.
"""

KB = 1e3
MB = 1e6
GB = 1e9
TB = 1e12
KiB = 1024
MiB = 1024**2
GiB = 1024**3
TiB = 1024**4

TERA = 1e12
PETA = 1e15

MS_PER_S = 1e3
US_PER_S = 1e6
