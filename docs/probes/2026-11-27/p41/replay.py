"""p41: the L2 hit share of `hierarchy/shared`'s access order, replayed at chunk level.

Each of 8192 workgroups reads 256 chunks of 4 KiB, chunk (g + pass * step) mod chunks,
step = 0.618 * chunks (as `shaders/hierarchy_shared.wgsl`). The replay runs 1056
workgroups at a time (an H100's 132 SMs x 8), in step pass by pass, as the simulator
replays an in-flight group, through one least-recently-used cache of 50 MiB (the H100's
L2). It prints, per buffer size in MiB, the hit share of a second dispatch after a first
one warmed the cache ("grid"), and that of the simulator's sample ("sample": 26
consecutive workgroups, their share of the cache, run twice), beside the cache's size
over the buffer's. No GPU, no membench: python3 replay.py 32 48 56 64 80 128 256

p43: with MRU_SHARE=e (0 < e < 1) a missed chunk goes in at the least recently used
end, and only a share e of them (drawn with a fixed seed) at the most recently used end:
bimodal insertion. Unset, every chunk goes in at the most recently used end (p41).
With ORDER=stream the grid reads the buffer's chunks in order, again and again (as
p43's cyclic.cu does), in place of `shared`'s order.
"""
import os
import random
import sys
from collections import OrderedDict

CHUNK_BYTES = 4096
CACHE = (50 << 20) // CHUNK_BYTES
WORKGROUPS, PASSES, IN_FLIGHT = 8192, 256, 1056
SAMPLE_START, SAMPLE = 3168, 26


def order(chunks, groups):
    if os.environ.get("ORDER") == "stream":
        for _ in range(len(groups) * PASSES // chunks or 1):
            yield from range(chunks)
        return
    step = int(chunks * 0.618034)
    for start in range(groups.start, groups.stop, IN_FLIGHT):
        batch = range(start, min(start + IN_FLIGHT, groups.stop))
        for p in range(PASSES):
            for g in batch:
                yield (g + p * step) % chunks


MRU_SHARE = float(os.environ.get("MRU_SHARE", "1"))
DRAW = random.Random(1)


def hits(reads, capacity, cache):
    n = 0
    for chunk in reads:
        if chunk in cache:
            cache.move_to_end(chunk)
            n += 1
        else:
            if len(cache) >= capacity:
                cache.popitem(last=False)
            cache[chunk] = True
            if MRU_SHARE < 1 and DRAW.random() >= MRU_SHARE:
                cache.move_to_end(chunk, last=False)
    return n


def second_pass_share(chunks, groups, capacity):
    cache = OrderedDict()
    hits(order(chunks, groups), capacity, cache)
    reads = list(order(chunks, groups))
    return hits(reads, capacity, cache) / len(reads)


for mib in map(int, sys.argv[1:]):
    chunks = (mib << 20) // CHUNK_BYTES
    grid = second_pass_share(chunks, range(WORKGROUPS), CACHE)
    share = min(1.0, SAMPLE * PASSES / chunks)
    sample = range(SAMPLE_START, SAMPLE_START + SAMPLE)
    sampled = second_pass_share(chunks, sample, int(CACHE * share))
    print(f"{mib} MiB: cache/buffer {min(1, CACHE / chunks):.2f}, grid {grid:.3f}, sample {sampled:.3f}", flush=True)
