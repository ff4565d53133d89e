"""Page-side helpers: figures, sliders that work on a static page, images and numbers handed to the prose.

The top layer: it draws what the layers below compute and never computes a number the book states.

- ``plotting``    -- pure functions that draw on a matplotlib ``Axes`` they are given, one module per concept
- ``widgets``     -- thin ipywidgets wrappers that make sliders work on a static page
- ``images``      -- figures as page-ready image bytes: PNG frames, exact palettes, lossless WebP
- ``figure_text`` -- the size of a figure's smallest text, stored in the image for the phone check
- ``glue``        -- ``glue_value``: a computed number handed to the page's prose
"""
