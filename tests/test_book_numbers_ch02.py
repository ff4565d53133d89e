"""Numbers chapter 2 (attention and the FFN) states, read back from the executed page and pinned.

Each expected value is worked out here by hand from the model's published
configuration (the arithmetic is written out) or is a figure its vendor published,
never taken from infer_lib. Totals written as plain numbers were recomputed by hand
from the configurations and agree with the vendors' rounded figures (DeepSeek-V3
671B, gpt-oss 116.83B/5.13B and 20.91B/3.61B, Mixtral 46.7B/12.9B).
"""

import pytest


@pytest.fixture(scope="module")
def chapter2(glued_values):
    return glued_values("chapters/02_attention_ffn")


# --- the tiny model's first layer -------------------------------------------------------------

@pytest.mark.parametrize("key, expected", [
    ("tiny_tokens", 5),          # Is / tomato / a / fruit / ?
    ("tiny_d_model", 64),        # tiny model config: d_model 64, 4 heads, 2 KV heads, ffn_dim 192
    ("tiny_heads", 4),
    ("tiny_kv_heads", 2),
    ("tiny_head_dim", 16),       # 64 / 4
    ("tiny_ffn_dim", 192),
    ("tiny_group", 2),           # 4 query heads / 2 KV heads
    ("tiny_ffn_multiple", 3.0),  # 192 / 64
])
def test_tiny_model_sizes(chapter2, key, expected):
    assert chapter2[key] == pytest.approx(expected)


def test_attention_weight_quoted_is_a_probability_over_the_prompt(chapter2):
    # A trained model's weight: only its range and its token are pinned.
    assert 0 < chapter2["head0_last_top_weight"] <= 1
    assert chapter2["head0_last_top_token"] in ("Is", "tomato", "a", "fruit", "?")


def test_changing_one_token_moves_attention_downstream_and_the_ffn_only_there(chapter2):
    # "tomato" -> "potato" changes position 1 of 5. Causal attention: positions 1, 2, 3, 4 see it;
    # the FFN acts on each row alone: position 1 only.
    assert chapter2["changed_position"] == 1
    assert chapter2["attention_positions_moved"] == 4
    assert chapter2["ffn_positions_moved"] == 1


# --- Llama 3.1 8B, counted by hand ----------------------------------------------------------------

D8, H8, K8, HD8, F8, L8, V8 = 4096, 32, 8, 128, 14_336, 32, 128_256   # Meta's config (sku_list.py, HF config.json)
ATTN8 = D8 * H8 * HD8 + 2 * D8 * K8 * HD8 + H8 * HD8 * D8               # 16,777,216 + 8,388,608 + 16,777,216
FFN8 = 3 * D8 * F8


@pytest.mark.parametrize("key, expected", [
    ("l8_d", D8), ("l8_h", H8), ("l8_k", K8), ("l8_hd", HD8), ("l8_f", F8), ("l8_layers", L8), ("l8_vocab", V8),
    ("l8_attn_layer", 41_943_040),         # = ATTN8, written out
    ("l8_ffn_layer", 176_160_768),         # 3 * 4096 * 14336
    ("l8_total", 8_030_261_248),           # embedding + 32 layers + final norm + LM head ("8B")
    ("l8_vocab_tables", 2 * V8 * D8),      # embedding + untied LM head = 1,050,673,152
    ("l8_vocab_share", 1_050_673_152 / 8_030_261_248),
    ("l8_share", 0.19230769),              # 41,943,040 / (41,943,040 + 176,160,768)
    ("l8_ffn_multiple", 3.5),              # 14336 / 4096
    ("l8_group", 4),                       # 32 / 8
    ("l8_attn_d2", 2.5),                   # (2 + 2/4) D^2
    ("l8_ffn_d2", 10.5),                   # 3 * 3.5 D^2
])
def test_llama_8b_counts(chapter2, key, expected):
    assert chapter2[key] == pytest.approx(expected, rel=1e-6)
    assert ATTN8 == 41_943_040 and FFN8 == 176_160_768


@pytest.mark.parametrize("key, expected", [
    ("l70_share", 0.17647059),      # 150,994,944 / (150,994,944 + 704,643,072) per layer
    ("l405_share", 0.17894737),     # 570,425,344 / (570,425,344 + 2,617,245,696) per layer
    # Qwen3-8B: q/k norms add 2 * 128; FFN 3 * 4096 * 12288
    ("q8_share", (ATTN8 + 256) / (ATTN8 + 256 + 3 * 4096 * 12_288)),
    # Qwen3-32B: D 5120, 64 heads of 128 (8192 wide), 8 KV heads, F 25600
    ("q32_share", (2 * 5120 * 8192 + 2 * 5120 * 1024 + 256)
     / (2 * 5120 * 8192 + 2 * 5120 * 1024 + 256 + 3 * 5120 * 25_600)),
    ("dense_share_min", 0.17647059),   # Llama 3.1 70B
    ("dense_share_max", (ATTN8 + 256) / (ATTN8 + 256 + 3 * 4096 * 12_288)),   # Qwen3-8B, 0.2174
    ("podcast_attention_share", 0.20),  # the podcast's rounded figure, quoted
    ("podcast_ffn_share", 0.80),
    ("podcast_ratio", 4.0),
    ("mha_8b_share", 8 / 29),           # 4 D^2 / (4 D^2 + 10.5 D^2)
    ("gpt_like_share", 16_384 / (16_384 + 3 * 10_923)),   # F = round(8 * 4096 / 3) = 10923: ~1/3
])
def test_attention_shares(chapter2, key, expected):
    assert chapter2[key] == pytest.approx(expected, rel=1e-6)


def test_gpt_like_share_is_one_third(chapter2):
    assert chapter2["gpt_like_share"] == pytest.approx(1 / 3, abs=1e-4)


# --- mixture of experts ------------------------------------------------------------------------------

# DeepSeek-V3 (config_671B.json): 61 layers, 3 dense, D 7168, 128 heads, MLA q_lora 1536, kv_lora 512,
# nope 128, rope 64, v 128; dense FFN 18432; 256 routed + 1 shared experts of 2048, 8 per token.
DS_ATTN = (7168 * 1536 + 1536 + 1536 * 128 * 192) + (7168 * 576 + 512) + 512 * 128 * 256 + 128 * 128 * 7168
DS_EXPERT = 3 * 7168 * 2048
DS_DENSE_FFN = 3 * 3 * 7168 * 18_432
DS_ROUTER = 58 * (7168 * 256 + 256)
DS_BODY = 61 * DS_ATTN + DS_DENSE_FFN + 58 * 257 * DS_EXPERT + DS_ROUTER
DS_ACTIVE_BODY = 61 * DS_ATTN + DS_DENSE_FFN + 58 * 9 * DS_EXPERT + DS_ROUTER
# gpt-oss (openai/gpt-oss model.py): D 2880, 64 heads of 64, 8 KV heads, qkv and o biases, one sink per head;
# experts 3 * 2880 * 2880 plus biases (2 * 2880 + 2880); router 2880 x E plus a bias per expert.
OSS_ATTN = 2880 * 4096 + 2 * 2880 * 512 + 4096 * 2880 + (4096 + 1024) + 2880 + 64
OSS_EXPERT = 3 * 2880 * 2880 + 3 * 2880
# Mixtral 8x7B: Llama-8B-like attention (D 4096, 32/8 heads) and 8 experts of 3 * 4096 * 14336, top 2.
MIX_EXPERT = 3 * 4096 * 14_336


@pytest.mark.parametrize("key, expected", [
    ("ds_total_b", 671.0264192),         # recomputed from config_671B.json (README: 671B)
    ("ds_active_b", 37.552297472),       # recomputed, embedding and head included
    ("ds_active_noemb_b", 36.625618432),  # recomputed, without the embedding
    ("ds_official_b", 671.0),            # DeepSeek-V3 README
    ("ds_official_active_b", 36.7),      # DeepSeek-V3 README_WEIGHTS
    ("ds_experts", 256), ("ds_topk", 8), ("ds_shared", 1), ("ds_dense_layers", 3),
    ("ds_share", 61 * DS_ATTN / DS_BODY),
    ("ds_active_share", 61 * DS_ATTN / DS_ACTIVE_BODY),
    ("ds_experts_fraction", 58 * 256 * DS_EXPERT / 671_026_419_200),
    ("ds_routed_fraction_used", 8 / 256),
    ("oss120_total_b", 116.829156672),   # model card Table 1: 116.83B
    ("oss120_active_noemb_b", 5.132849472),  # model card: 5.13B, unembedding counted, embedding not
    ("oss120_active_b", 5.132849472 + 201_088 * 2880 / 1e9),
    ("oss120_official_b", 116.83), ("oss120_official_active_b", 5.13),
    ("oss120_experts", 128), ("oss120_topk", 4),
    ("oss120_share", 36 * OSS_ATTN / (36 * OSS_ATTN + 36 * 128 * OSS_EXPERT + 36 * (2880 * 128 + 128))),
    ("oss120_active_share", 36 * OSS_ATTN / (36 * OSS_ATTN + 36 * 4 * OSS_EXPERT + 36 * (2880 * 128 + 128))),
    ("oss120_embedding_b", 201_088 * 2880 / 1e9),
    ("oss20_total_b", 20.914757184),     # model card: 20.91B
    ("oss20_active_noemb_b", 3.608307264),   # model card: 3.61B
    ("oss20_active_b", 3.608307264 + 201_088 * 2880 / 1e9),
    ("oss20_official_b", 20.91), ("oss20_official_active_b", 3.61),
    ("oss20_experts", 32), ("oss20_topk", 4),
    ("oss20_share", 24 * OSS_ATTN / (24 * OSS_ATTN + 24 * 32 * OSS_EXPERT + 24 * (2880 * 32 + 32))),
    ("oss20_active_share", 24 * OSS_ATTN / (24 * OSS_ATTN + 24 * 4 * OSS_EXPERT + 24 * (2880 * 32 + 32))),
    ("mix_total_b", 46.702792704),       # recomputed from the HF config (published: 46.7B)
    ("mix_active_b", 12.879925248),      # recomputed, embedding included (published: 12.9B)
    ("mix_active_noemb_b", 12.879925248 - 32_000 * 4096 / 1e9),
    ("mix_official_b", 46.7), ("mix_official_active_b", 12.9),
    ("mix_experts", 8), ("mix_topk", 2),
    ("mix_share", 32 * ATTN8 / (32 * ATTN8 + 32 * 8 * MIX_EXPERT + 32 * 4096 * 8)),
    ("mix_active_share", 32 * ATTN8 / (32 * ATTN8 + 32 * 2 * MIX_EXPERT + 32 * 4096 * 8)),
])
def test_moe_counts(chapter2, key, expected):
    assert chapter2[key] == pytest.approx(expected, rel=1e-6)


def test_deepseek_attention_per_layer_written_out():
    # q path 48,760,320 + kv down 4,129,280 + kv up 16,777,216 + out 117,440,512
    assert DS_ATTN == 187_107_328
    assert OSS_ATTN == 26_550_144


# --- practice questions ---------------------------------------------------------------------------------

@pytest.mark.parametrize("key, expected", [
    ("p1_num_layers", 24), ("p1_d_model", 2048), ("p1_num_heads", 16), ("p1_num_kv_heads", 2),
    ("p1_head_dim", 128), ("p1_ffn_dim", 5632), ("p1_vocab_size", 50_000),
    ("p1_q_width", 16 * 128), ("p1_kv_width", 2 * 128), ("p1_ffn_multiple", 2.75),   # H Hd, K Hd, F / D
    ("p1_attn_layer", 2 * 2048 * 2048 + 2 * 2048 * 256),          # 9,437,184
    ("p1_ffn_layer", 3 * 2048 * 5632),                            # 34,603,008
    ("p1_norms_layer", 2 * 2048),
    ("p1_layer_total", 9_437_184 + 34_603_008 + 4096),            # 44,044,288
    ("p1_layers_total", 24 * 44_044_288),                         # 1,057,062,912
    ("p1_embedding", 50_000 * 2048),                              # tied: counted once
    ("p1_total", 1_057_062_912 + 102_400_000 + 2048),             # 1,159,464,960
    ("p1_share", 3 / 14),                                         # 2.25 D^2 / (2.25 D^2 + 8.25 D^2)
    ("p2_d", 8192), ("p2_h", 64), ("p2_k", 8), ("p2_hd", 128),
    ("p2_gqa_attn_layer", 150_994_944),                           # 2 * 8192 * 8192 + 2 * 8192 * 1024
    ("p2_mqa_attn_layer", 2 * 8192 * 8192 + 2 * 8192 * 128),      # 136,314,880
    ("p2_ffn_layer", 704_643_072),                                # 3 * 8192 * 28672
    ("p2_gqa_share", 0.17647059),
    ("p2_mqa_share", 136_314_880 / (136_314_880 + 704_643_072)),
    ("p2_gqa_total_b", 70.553706496),                             # recomputed from Meta's config ("70B")
    ("p2_mqa_total_b", (70_553_706_496 - 80 * (150_994_944 - 136_314_880)) / 1e9),
    ("p2_saved_b", 80 * (150_994_944 - 136_314_880) / 1e9),
    ("p2_kv_ratio", 8),
    ("p3_expert", MIX_EXPERT), ("p3_f", 14_336), ("p3_d", 4096), ("p3_layers", 32),
    ("p3_experts_b", 32 * 8 * MIX_EXPERT / 1e9),
    ("p3_rest_b", (46_702_792_704 - 32 * 8 * MIX_EXPERT) / 1e9),
    # one dense model of Mixtral's shape: attention + FFN + norms + embedding and head
    ("p3_dense_b", (32 * (ATTN8 + MIX_EXPERT + 2 * 4096) + 4096 + 2 * 32_000 * 4096) / 1e9),
    ("p3_naive_b", 8 * (32 * (ATTN8 + MIX_EXPERT + 2 * 4096) + 4096 + 2 * 32_000 * 4096) / 1e9),
    ("p3_top1_b", (12_879_925_248 - 32 * MIX_EXPERT) / 1e9),       # one expert fewer per layer
    ("p4_oss_vocab", 201_088), ("p4_oss_d", 2880), ("p4_ds_vocab", 129_280), ("p4_ds_d", 7168),
    ("p4_oss_table_b", 201_088 * 2880 / 1e9),
    ("p4_ds_table_b", 129_280 * 7168 / 1e9),
    ("p4_oss_gap", 201_088 * 2880 / 5_132_849_472),
    ("p4_ds_gap", 129_280 * 7168 / 36_625_618_432),
    ("p4_body_ratio", 36_625_618_432 / 5_132_849_472),
    ("p5_requests", 30), ("p5_decodes", 29), ("p5_prompt", 1000), ("p5_rows", 1029),
])
def test_practice_answers(chapter2, key, expected):
    assert chapter2[key] == pytest.approx(expected, rel=1e-6)


# --- Qwen3-32B's wide query heads, and practice questions 5-8 -------------------------------------------

Q32_ATTN = 2 * 5120 * 8192 + 2 * 5120 * 1024 + 256   # W_q, W_o 5120 x 8192; W_k, W_v 5120 x 1024; q/k norms
Q32_FFN = 3 * 5120 * 25_600


@pytest.mark.parametrize("key, expected", [
    ("q32_d", 5120), ("q32_h", 64), ("q32_hd", 128), ("q32_k", 8),
    ("q32_q_width", 8192), ("q32_q_over_d", 1.6),                 # 64 * 128 = 8192 = 1.6 * 5120
    ("q32_ffn_multiple", 5.0),                                    # 25,600 / 5120
    ("q32_narrow_hd", 80),                                        # 5120 / 64
    # heads of 80: W_q, W_o 5120 x 5120, W_k, W_v 5120 x 640, q/k norms 2 * 80
    ("q32_narrow_share", (2 * 5120 * 5120 + 2 * 5120 * 640 + 160)
     / (2 * 5120 * 5120 + 2 * 5120 * 640 + 160 + Q32_FFN)),
    # MHA on Llama 3.1 8B's shape with F = 5 D: 4 D^2 / (4 D^2 + 15 D^2)
    ("q32_mha_share_at_f", 4 / 19),
    # 5. 1029 rows through one Llama 3.1 8B layer's weights (41,943,040 + 176,160,768)
    ("p5_layer_weights", 218_103_808),
    ("p5_layer_gflops", 2 * 1029 * 218_103_808 / 1e9),
    # 6. 2 FLOPs per weight against 4 * 32 * 128 FLOPs per cached token
    ("p6_q_width", 4096),
    ("p6_weight_flops_m", 2 * 218_103_808 / 1e6),
    ("p6_core_flops_per_token", 16_384),
    ("p6_crossover", 2 * 218_103_808 / 16_384),                   # 26,624 tokens
    # 7. 32 heads x 8192^2 FP32 scores; 2 x 8192 x 8 x 128 BF16 keys and values
    ("p7_tokens", 8192),
    ("p7_scores_per_layer", 32 * 8192**2),
    ("p7_gib_per_layer", 32 * 8192**2 * 4 / 2**30),                # 8 GiB
    ("p7_kv_mib_per_layer", 2 * 8192 * 8 * 128 * 2 / 2**20),        # 32 MiB
    # 8. DeepSeek-V3, FP8: 36,625,618,432 active weights without the embedding, 671,026,419,200 stored
    ("p8_read_gb", 36.625618432),
    ("p8_stored_gb", 671.0264192),
    ("p8_read_share", 36.625618432 / 671.0264192),
    ("p8_dense_ratio", 671.0264192 / 36.625618432),
])
def test_wide_heads_and_later_practice_answers(chapter2, key, expected):
    assert chapter2[key] == pytest.approx(expected, rel=1e-6)


def test_qwen3_32b_is_not_on_the_mha_line(chapter2):
    # The figure's point: Qwen3-32B's share is near MHA's at its FFN width but is its own, and the text says
    # both with one decimal, so they must print differently.
    assert chapter2["q32_share"] == pytest.approx(Q32_ATTN / (Q32_ATTN + Q32_FFN), rel=1e-9)
    assert f"{chapter2['q32_share']:.1%}" != f"{chapter2['q32_mha_share_at_f']:.1%}"
    assert chapter2["q32_narrow_share"] < chapter2["q32_share"]
