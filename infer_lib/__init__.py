"""infer_lib: the small, tested library every chapter of the course imports.

Its folders are its layers. Each layer imports only the layers above it in this list,
so a module's path says what it may rely on:

- ``inputs``      -- sourced inputs: units, input checks, published figures, model configs, chip datasheets
- ``counting``    -- counting and bounds: parameters, FLOPs and bytes of each operation, the roofline
- ``numpy_model`` -- the numpy model that really runs: tokenizer, layers, attention, caches, sampling, timing
- ``speculation`` -- speculative decoding: exact verification, its cost under load, drafters on the numpy model
- ``chips``       -- the hardware calculators: memory technologies, chips as systems, what a chip is worth
- ``serving``     -- the serving simulator: ``simulator`` (the engine), ``workloads``, ``kv_retention``, ``results``
- ``page``        -- page-side helpers: ``plotting``, sliders, images, numbers glued into the prose

Each layer's own docstring lists its modules. After ``import infer_lib as il``, a module
is reachable by its short name as well as by its path: ``il.roofline`` is
``infer_lib.counting.roofline``, ``il.plotting`` is ``infer_lib.page.plotting``. The
functions most pages start from are here too: ``il.get_model``, ``il.get_chip``,
``il.kv_cache_bytes``, ``il.num_params``, ``il.num_active_params``,
``il.decode_step_time_s``, ``il.prefill_time_s``, ``il.from_hf_config``.
"""

import importlib
from types import ModuleType

from infer_lib.counting.accounting import kv_cache_bytes, num_active_params, num_params
from infer_lib.counting.roofline import decode_step_time_s, prefill_time_s
from infer_lib.inputs.hardware import get_chip
from infer_lib.inputs.models import from_hf_config, get_model

#: Each layer package, bottom to top, and the modules it holds (``serving`` has subpackages of its own).
LAYERS: dict[str, tuple[str, ...]] = {
    "inputs": ("units", "checks", "published", "models", "hardware"),
    "counting": ("accounting", "shapes", "costs", "roofline", "energy"),
    "numpy_model": ("tokenizer", "layers", "attention", "mla", "cache", "transformer", "transformer_weights",
                    "sampling", "timing", "cpu_roofline"),
    "speculation": ("speculative", "speculative_cost", "drafters"),
    "chips": ("memory_tech", "chip_systems", "hardware_futures", "chip_value", "economics"),
    "serving": ("simulator", "workloads", "kv_retention", "results"),
    "page": ("plotting", "widgets", "images", "figure_text", "glue"),
}

#: Short name -> the module's full path, for every module of a layer but serving's (``il.serving.x`` has its own).
SHORT_NAMES: dict[str, str] = {
    module: f"infer_lib.{layer}.{module}"
    for layer, modules in LAYERS.items() if layer != "serving"
    for module in modules
}

__all__ = [
    "LAYERS",
    "SHORT_NAMES",
    "decode_step_time_s",
    "from_hf_config",
    "get_chip",
    "get_model",
    "kv_cache_bytes",
    "num_active_params",
    "num_params",
    "prefill_time_s",
]


def __getattr__(name: str) -> ModuleType:
    """Import a layer or a module by its short name on first use: ``il.roofline``, ``il.serving``, ``il.plotting``.

    The numeric core above is imported eagerly; plotting, widgets and the numpy model
    (which pull in matplotlib and ipywidgets) only when a page touches them.
    """
    if name in LAYERS:
        return importlib.import_module(f"infer_lib.{name}")
    if name in SHORT_NAMES:
        return importlib.import_module(SHORT_NAMES[name])
    raise AttributeError(f"module 'infer_lib' has no attribute or module {name!r}; its modules by layer are in "
                         "infer_lib.LAYERS")
