"""The paged KV cache: block tables, the free queue, reference counts, prefix caching, reservations."""

import random

import pytest

from infer_lib.inputs.hardware import get_chip
from infer_lib.inputs.models import get_model
from infer_lib.serving import AllocStatus, BlockManager, ContiguousReservation, block_hashes, num_kv_blocks


def test_pagedattention_example_alan_turing():
    # The course's example (after vLLM's): 4 tokens per block; "Alan Turing is a | computer scientist
    # and mathematician | renowned" fills logical blocks 0, 1, 2, which map to physical blocks 7, 1, 3,
    # the last holding 1 of its 4 slots. Blocks are allocated one token at a time, as they are generated.
    tokens = "Alan Turing is a computer scientist and mathematician renowned".split()
    manager = BlockManager(8, block_size=4, free_block_order=[7, 1, 3, 0, 2, 4, 5, 6])
    tables = []
    for count in range(1, len(tokens) + 1):
        assert manager.allocate_slots("alan", count)
        tables.append(manager.block_table("alan"))
    assert tables[0] == tables[3] == (7,)  # "Alan" .. "a" share block 7
    assert tables[4] == (7, 1)  # "computer" opens a new block
    assert manager.block_table("alan") == (7, 1, 3)
    assert manager.filled_slots_in_last_block("alan") == 1
    assert manager.num_free_blocks == 5 and manager.num_allocated_blocks == 3


def test_free_returns_blocks_last_first_and_allocation_takes_the_front():
    manager = BlockManager(6, block_size=2)
    assert manager.allocate_slots("a", 5)  # 3 blocks: 0, 1, 2
    assert manager.allocate_slots("b", 2)  # block 3
    manager.free("a")  # queue: 4, 5, then a's blocks last first: 2, 1, 0
    assert manager.allocate_slots("c", 8) and manager.block_table("c") == (4, 5, 2, 1)
    assert manager.num_free_blocks == 1
    manager.check_invariants()


def test_allocation_fails_without_change_when_blocks_run_out():
    manager = BlockManager(4, block_size=16)
    assert manager.allocate_slots(1, 40)  # 3 blocks
    assert not manager.allocate_slots(2, 33)  # needs 3, 1 free
    assert manager.block_table(2) == () and manager.num_free_blocks == 1
    assert not manager.allocate_slots(1, 65)  # growing to 5 blocks: no
    assert manager.block_table(1) == (0, 1, 2)
    assert manager.can_allocate(1) is AllocStatus.OK
    assert manager.can_allocate(2) is AllocStatus.LATER
    assert manager.can_allocate(5) is AllocStatus.NEVER
    assert manager.append_blocks([1]) and not manager.append_blocks([1])
    assert manager.append_blocks([])  # nothing to add
    manager.check_invariants()


def test_block_hashes_chain_the_prefix():
    # Equal blocks after different prefixes must hash differently; equal prefixes hash equally.
    a = block_hashes([1, 2, 3, 4, 9, 9, 9, 9], 4)
    b = block_hashes([5, 6, 7, 8, 9, 9, 9, 9], 4)
    c = block_hashes([1, 2, 3, 4, 9, 9, 9, 9, 1], 4)
    assert len(a) == 2 and a[1] != b[1] and c == a


def test_prefix_caching_shares_blocks_with_reference_counts():
    manager = BlockManager(8, block_size=4, enable_prefix_caching=True)
    prompt = list(range(10))  # 2 full blocks + 2 tokens
    hashes = block_hashes(prompt, 4)
    assert manager.find_cached_blocks(hashes) == []
    assert manager.allocate_slots("first", 10)
    manager.cache_full_blocks("first", hashes)
    shared = manager.find_cached_blocks(hashes)
    assert shared == [0, 1]
    assert manager.allocate_slots("second", 10, shared)  # 2 shared blocks + 1 of its own
    assert manager.block_table("second") == (0, 1, 3)
    assert manager.ref_counts[:4] == [2, 2, 1, 1]
    assert manager.num_allocated_blocks == 4  # not 6: the prefix is stored once
    manager.free("first")
    assert manager.ref_counts[:4] == [1, 1, 0, 1]
    manager.free("second")
    # Freed but still cached: a third request with the same prefix takes blocks 0 and 1 back.
    assert manager.num_free_blocks == 8
    assert manager.find_cached_blocks(hashes) == [0, 1]
    manager.check_invariants()


def test_cached_blocks_are_evicted_when_reallocated():
    manager = BlockManager(3, block_size=2, enable_prefix_caching=True)
    hashes = block_hashes([1, 2, 3, 4], 2)
    assert manager.allocate_slots("a", 4)
    manager.cache_full_blocks("a", hashes)
    manager.free("a")  # queue: 2, then 1, 0 (last block first)
    assert manager.allocate_slots("b", 4)  # takes 2 and 1: block 1 held a's second block
    assert manager.block_table("b") == (2, 1)
    assert manager.find_cached_blocks(hashes) == [0]  # only the first block survives
    manager.check_invariants()


def test_random_operations_keep_invariants_against_a_naive_model():
    # A naive model: a dict of tables and a plain list for the free queue (with linear removal).
    rng = random.Random(3)
    for trial in range(30):
        num_blocks, block_size = rng.randint(4, 40), rng.choice([1, 2, 4])
        caching = trial % 2 == 0
        manager = BlockManager(num_blocks, block_size, enable_prefix_caching=caching)
        naive_free, naive_tables, naive_refs = list(range(num_blocks)), {}, [0] * num_blocks
        prompts = {}
        for step in range(200):
            live = list(naive_tables)
            action = rng.random()
            if action < 0.45:
                rid = f"r{trial}-{step}"
                prompt = [rng.randint(0, 2)] * rng.randint(1, 12)  # few distinct prompts: many hits
                hashes = block_hashes(prompt, block_size)
                cached = manager.find_cached_blocks(hashes)
                while cached and len(cached) * block_size > len(prompt) - 1:
                    cached.pop()
                new = -(-len(prompt) // block_size) - len(cached)
                revived = [b for b in cached if naive_refs[b] == 0]
                ok = manager.allocate_slots(rid, len(prompt), cached)
                assert ok == (new + len(revived) <= len(naive_free) - 0)
                if ok:
                    for b in revived:
                        naive_free.remove(b)
                    taken = []
                    while len(taken) < new:
                        taken.append(naive_free.pop(0))
                    naive_tables[rid] = list(cached) + taken
                    for b in naive_tables[rid]:
                        naive_refs[b] += 1
                    manager.cache_full_blocks(rid, hashes)
                    prompts[rid] = len(prompt)
            elif action < 0.75 and live:
                rid = rng.choice(live)
                ok = manager.append_blocks([rid])
                assert ok == bool(naive_free)
                if ok:
                    block = naive_free.pop(0)
                    naive_tables[rid].append(block)
                    naive_refs[block] += 1
            elif live:
                rid = rng.choice(live)
                manager.free(rid)
                for b in reversed(naive_tables.pop(rid)):
                    naive_refs[b] -= 1
                    if naive_refs[b] == 0:
                        naive_free.append(b)
            for rid, table in naive_tables.items():
                assert manager.block_table(rid) == tuple(table)
            assert manager.ref_counts == naive_refs
            assert manager.num_free_blocks == len(naive_free)
            manager.check_invariants()


def test_num_kv_blocks_from_memory():
    # Llama 3.1 8B on one H100 (81,559 MiB as nvidia-smi reports it, x 0.9): 77.0 GB - 16.06 GB of BF16
    # weights, over 16 tokens x 131,072 bytes (2 x 32 layers x 8 heads x 128 x 2 bytes): 29,043 blocks.
    expected = int((81_559 * 2**20 * 0.9 - 8_030_261_248 * 2) // (16 * 131_072))
    assert expected == 29_043
    assert num_kv_blocks(get_model("Llama 3.1 8B"), get_chip("H100 SXM")) == expected
    with pytest.raises(ValueError, match="raise tensor_parallel_size"):
        num_kv_blocks(get_model("Llama 3.1 405B"), get_chip("H100 SXM"))
    assert num_kv_blocks(get_model("Llama 3.1 405B"), get_chip("H100 SXM"), tensor_parallel_size=16) > 0


def test_contiguous_reservation():
    cache = ContiguousReservation(100)
    assert cache.reserve("a", 60) and not cache.reserve("b", 41) and cache.reserve("b", 40)
    assert cache.num_free_tokens == 0
    cache.free("a")
    assert cache.num_free_tokens == 60
    with pytest.raises(ValueError, match="already holds"):
        cache.reserve("b", 1)
    with pytest.raises(KeyError, match="holds no reservation"):
        cache.free("a")


def test_bad_arguments_name_the_field():
    with pytest.raises(ValueError, match="free_block_order must list each block id 0..3"):
        BlockManager(4, free_block_order=[0, 1, 2, 2])
    with pytest.raises(ValueError, match="num_blocks"):
        BlockManager(0)
    manager = BlockManager(4)
    with pytest.raises(KeyError, match="holds no blocks"):
        manager.free("nobody")
