# p38: L1 counters per request of hierarchy/window (7 of 8 workgroups' vec4 requests 16 bytes off a line) and constant/storage (scalar 128-byte reads off a line), CUDA twins, if Nsight Compute is here and may read the counters.
N=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/nsight-compute*/ncu 2>/dev/null | head -1)
echo "ncu: ${N:-none}"
[ -n "$N" ] || exit 0
met=l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_lg_cmd_read.sum,l1tex__t_sector_hit_rate.pct,l1tex__data_pipe_lsu_wavefronts_mem_lg_cmd_read.sum.pct_of_peak_sustained_elapsed,sm__cycles_elapsed.avg,l1tex__throughput.avg.pct_of_peak_sustained_elapsed
for k in hierarchy_window:hierarchy/window/footprint=65536 constant:constant/storage/read=divergent; do
  echo "== ${k#*:}"
  timeout 50 $N --metrics $met -k regex:"^${k%%:*}\$" --launch-count 2 --csv membench run --api cuda --build default --filter "${k#*:}" --samples 10 --out /tmp/ncu-run.csv 2>&1 | grep -v '^==PROF==' | tail -40
done
