"""infer_lib: the small, tested library every chapter of the course imports.

Each module holds one concept and is readable top to bottom:

- ``units``       -- byte and time units used across the book
- ``checks``      -- input validation that names the bad field and the allowed values
- ``models``      -- transformer configurations of real models, each field sourced
- ``hardware``    -- accelerator datasheet numbers, each with its source
- ``accounting``  -- parameter counts and bytes of weights
- ``tokenizer``   -- the word-level tokenizer of the course's tiny model
- ``transformer`` -- a numpy Llama-style decoder that really runs prefill and decode
- ``sampling``    -- greedy and temperature sampling
- ``timing``      -- TTFT and TPOT measured on the reader's machine
- ``plots``       -- pure plotting functions that draw on a matplotlib ``Axes``
- ``widgets``     -- thin ipywidgets wrappers that make sliders work on a static page
"""
