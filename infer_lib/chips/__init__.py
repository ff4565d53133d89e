"""The hardware calculators: memories, chips as systems, the research directions, and what a chip is worth.

Built on ``infer_lib.inputs`` and ``infer_lib.counting``.

- ``memory_tech``      -- memory technologies side by side: SRAM, HBM by generation, LPDDR, GDDR, flash
- ``chip_systems``     -- chips as memory systems; decode over tensor-parallel chips and its synchronisation
- ``hardware_futures`` -- the four hardware research directions as calculators; GPU + SRAM-chip serving
- ``chip_value``       -- judging a chip by tokens per dollar of TCO, per joule and per kg CO2e
- ``economics``        -- growth factors and the demand-supply gap computed from those figures
"""
