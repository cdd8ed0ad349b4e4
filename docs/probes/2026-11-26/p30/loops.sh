# Loop-hint A/B/C on the tax-free build, alternating twice, beside the CUDA twins.
set -u
M=$PWD/.carry/membench
W=$OUT/w; mkdir -p $W
exec > $OUT/loops.log 2>&1
finish() { tar czf $OUT/loops.tar.gz -C $OUT w && rm -rf $W; }
trap finish EXIT
F=reduce,bank,subgroup,stencil,transpose,localmem,latency,constant
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.mem --format=csv
s=$(date +%s); timeout 120 $M run --api cuda --build default,rolled --filter $F --out $W/cuda.csv > $W/cuda.txt 2>&1; echo "cuda: $? $(( $(date +%s) - s )) s"
for i in 1 2; do for v in every constant partial4; do
  s=$(date +%s); MEMBENCH_PROBE_LOOPS=$v timeout 100 $M run --api wgpu --build tax-free --filter $F --out $W/$v-$i.csv > $W/$v-$i.txt 2>&1; echo "$v-$i: $? $(( $(date +%s) - s )) s"; tail -n 1 $W/$v-$i.txt
done; done
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu --format=csv
