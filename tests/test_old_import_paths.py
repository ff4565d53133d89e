"""Names that moved to a module of their own still import from where earlier notebooks found them."""

import importlib

import pytest

# (old module, name, module that now defines it)
MOVED = [
    ("infer_lib.economics", "DataPoint", "infer_lib.published"),
    ("infer_lib.economics", "GOOGLE_TOKENS_PER_MONTH", "infer_lib.published"),
    ("infer_lib.economics", "PODCAST_TOKEN_GROWTH_CLAIM", "infer_lib.published"),
    ("infer_lib.economics", "PODCAST_LPDDR_CARD_BYTES_PER_S_CLAIM", "infer_lib.published"),
    ("infer_lib.economics", "ANTHROPIC_REVENUE_GROWTH_PER_YEAR", "infer_lib.published"),
    ("infer_lib.economics", "ANTHROPIC_REVENUE_GROWTH_YEARS_RUNNING", "infer_lib.published"),
    ("infer_lib.economics", "COMPUTE_GROWTH_PER_YEAR", "infer_lib.published"),
    ("infer_lib.economics", "FAST_MODE_SPEEDUP", "infer_lib.published"),
    ("infer_lib.economics", "FAST_MODE_PRICE_PER_MTOK", "infer_lib.published"),
    ("infer_lib.economics", "STANDARD_PRICE_PER_MTOK", "infer_lib.published"),
    ("infer_lib.economics", "FAST_MODE_PRICE_MAX_PROMPT_TOKENS", "infer_lib.published"),
    ("infer_lib.economics", "LPDDR5X_MAX_TRANSFERS_PER_S", "infer_lib.published"),
    ("infer_lib.attention", "MLAConfig", "infer_lib.mla"),
    ("infer_lib.attention", "MLAWeights", "infer_lib.mla"),
    ("infer_lib.attention", "MultiHeadLatentAttention", "infer_lib.mla"),
    ("infer_lib.attention", "random_mla_weights", "infer_lib.mla"),
    ("infer_lib.attention", "mla_weight_shapes", "infer_lib.mla"),
    ("infer_lib.widgets", "render_frame_png", "infer_lib.images"),
    ("infer_lib.widgets", "lossless_webp", "infer_lib.images"),
    ("infer_lib.widgets", "IMAGE_FORMATS", "infer_lib.images"),
    ("infer_lib.widgets", "MARGINS_INCHES", "infer_lib.images"),
]


@pytest.mark.parametrize("old_module, name, new_module", MOVED, ids=[f"{old}.{name}" for old, name, _ in MOVED])
def test_old_path_gives_the_same_object(old_module, name, new_module):
    old = getattr(importlib.import_module(old_module), name)
    assert old is getattr(importlib.import_module(new_module), name)


def test_from_import_works_both_ways_round():
    # infer_lib.mla imports infer_lib.attention; the old path must work whichever is imported first.
    from infer_lib.attention import MultiHeadLatentAttention as via_attention
    from infer_lib.mla import MultiHeadLatentAttention

    assert via_attention is MultiHeadLatentAttention


def test_a_name_that_never_existed_still_fails_clearly():
    import infer_lib.attention

    with pytest.raises(AttributeError, match="has no attribute 'MLALayer'"):
        infer_lib.attention.MLALayer  # noqa: B018
