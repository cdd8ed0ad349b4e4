# p42: where the L2's speed on a small shared buffer comes from. Nsight Compute counts,
# for hierarchy/shared_l1_bypass (CUDA, loads __ldcg: the L1 bypassed), the sectors the
# L1s get back from the crossbar, those the L2 request coalescer (LRC) passes on, and
# those the L2 slices look up, with the kernel's time. Run from the repository root on
# the GPU machine with a release membench at $1 (default target/release/membench).
M=${1:-target/release/membench}
N=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
[ -n "$N" ] || { echo "no ncu"; exit 1; }
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
met=gpu__time_duration.sum,l1tex__m_xbar2l1tex_read_sectors_mem_lg_op_ld.sum,lrc__lrc2xbar_sectors_op_read.sum,lrc__lrc2xbar_sectors_op_read_coalescing_none.sum,lts__t_sectors_op_read.sum
for f in 1048576 2097152 4194304 16777216 67108864; do
  echo "== footprint=$f"
  timeout 60 $N --metrics $met -k regex:'^hierarchy_shared' --launch-skip 1 --launch-count 1 --csv \
    $M run --api cuda --build default --filter "hierarchy/shared_l1_bypass/footprint=$f" --samples 10 --out /tmp/p42.csv 2>&1 |
    grep -E '"(gpu__|lrc__|lts__|l1tex__)' | awk -F'","' '{print $(NF-2)" "$NF}' | tr -d '"'
done
