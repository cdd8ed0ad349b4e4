# A plain run's time on this H100, an A/B of the slow families with the binary before
# (33d7b48) and after, alternating, and the CUDA probes p32-p34.
set -u
W=$OUT/w; mkdir -p $W
exec > $OUT/plainab.log 2>&1
finish() { tar czf $OUT/plainab.tar.gz -C $OUT w && rm -rf $W; }
trap finish EXIT
rm -f results/*.csv
nvidia-smi --query-gpu=index,name,uuid,clocks.sm,clocks.mem --format=csv
s=$(date +%s%N); timeout 240 .carry/membench run --out $W/plain.csv > $W/plain.txt 2> $W/plain.err; r=$?
echo "plain: exit $r, $(( ($(date +%s%N) - s) / 1000000 )) ms; $(tail -n 1 $W/plain.txt)"
F=reduce/,latency/,hierarchy/window/
for b in membench-old membench membench-old membench; do
  t=$(date +%s%N); timeout 100 .carry/$b run --filter $F --out $W/$b-ab.csv > /dev/null 2> $W/$b-ab.err; r=$?
  echo "$b: exit $r, $(( ($(date +%s%N) - t) / 1000000 )) ms; $(tail -n 1 $W/$b-ab.err)"
done
timeout 200 bash docs/probes/2026-11-27/run.sh $W/probes; echo "probes: exit $?"
