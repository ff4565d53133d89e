"""Sourced inputs: what every number starts from, and the plumbing every layer shares.

Nothing here computes a result the book states; it holds what the sources say (model configs,
chip datasheets, published figures) and the units and input checks every other layer uses.
It imports nothing from the rest of ``infer_lib``.

- ``units``     -- byte and time units used across the book
- ``checks``    -- input validation that names the bad field and the allowed values
- ``published`` -- published figures the book quotes (prices, papers' results, podcast claims), each sourced
- ``models``    -- transformer configurations of real models, each field sourced; ``from_hf_config``
- ``hardware``  -- accelerator datasheet numbers and interconnect links, each with its source
"""
