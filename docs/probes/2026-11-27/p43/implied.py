"""p43: the L2 hit share a measured `hierarchy/shared` row implies, from its bandwidth.

A row past the L2 reads a share h of its bytes at the L2's rate and the rest at DRAM's,
so 1/g = h/l2 + (1 - h)/dram. l2 is the median of `shared` from 8 to 32 MiB (past the
coalescer's small sizes, inside the L2), dram is `dram_read` at 1 GiB, both of the same
api and build. Prints, per size from 32 MiB, g, h and the L2's size over the buffer's.
No GPU: python3 implied.py ../../../../results/nvidia-h100-80gb-hbm3-539de1f2-vulkan.csv
"""
import csv
import statistics
import sys

L2_BYTES = 50 << 20  # the H100's, as CUDA reports it (52 428 800)
path, api, build = sys.argv[1], "wgpu", "tax-free"
rows = [
    r
    for r in csv.DictReader(open(path))
    if r["family"] == "hierarchy" and r["api"] == api and r["build"] == build
]
shared = sorted(
    (int(r["param"].split("footprint=")[1]), float(r["gbps_median"]))
    for r in rows
    if r["variant"] == "shared" and r["status"] == "ok"
)
dram = next(float(r["gbps_median"]) for r in rows if r["variant"] == "dram_read")
l2 = statistics.median(g for b, g in shared if 8 << 20 <= b <= 32 << 20)
print(f"{api}/{build}: L2 {l2:.0f} GB/s, DRAM read {dram:.0f} GB/s")
for size, gbps in shared:
    if size >= 32 << 20:
        h = (1 / dram - 1 / gbps) / (1 / dram - 1 / l2)
        print(f"{size / 2**20:7.1f} MiB: {gbps:6.0f} GB/s, hit share {h:.3f}, L2/buffer {min(1, L2_BYTES / size):.3f}")
