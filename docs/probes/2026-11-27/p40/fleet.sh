# Usage: OUT=DIR bash fleet.sh (on a host of several GPUs; membench on the PATH).
# p40: is the fleet's copy/offset outlier the GPU or the processes running at once?
# Three rounds of four processes at once (one per GPU, as the campaign), then one round of the four one after another; `membench fleet` on each round.
OUT=${OUT:?set OUT to a directory}
M=membench
F='copy/peak,copy/offset'
nvidia-smi --query-gpu=index,uuid,clocks.sm,clocks.mem --format=csv
n=$(nvidia-smi -L | wc -l)
for round in 1 2 3; do
  d=$OUT/at-once-$round; mkdir -p $d
  for i in $(seq 0 $((n - 1))); do
    timeout 120 $M run --adapter $i --api wgpu --build tax-free --filter "$F" --out "$d/{host}-{uuid}.csv" > /dev/null 2>&1 &
  done
  wait
  echo "== at once, round $round"; timeout 60 $M fleet $d 2>&1 | sed -n '1,12p' | grep -E 'outlier|GPU-|^fleet'
done
d=$OUT/in-turn; mkdir -p $d
for i in $(seq 0 $((n - 1))); do
  timeout 120 $M run --adapter $i --api wgpu --build tax-free --filter "$F" --out "$d/{host}-{uuid}.csv" > /dev/null 2>&1
done
echo "== in turn"; timeout 60 $M fleet $d 2>&1 | sed -n '1,12p' | grep -E 'outlier|GPU-|^fleet'
