# --adapter all --concurrent, four rounds (the first that does not exit ends it): whether the process exits by itself once every adapter has measured, and where its threads wait if it does not.
# Usage: OUT=DIR bash hang.sh (each round's output goes to DIR/cN.txt).
OUT=${OUT:?set OUT to a directory}
M=membench
F='transfer/upload_imported/size=268435456;chunks=1,transfer/readback_imported/size=268435456;chunks=1,transfer/duplex/size=268435456;chunks=1,transfer/upload_pinned/size=268435456;chunks=1,transfer/readback_pinned/size=268435456;chunks=1'
nvidia-smi -L
for round in 1 2 3 4; do
  s=$(date +%s%N)
  $M run --adapter all --concurrent --filter "$F" --out "/tmp/c$round-{uuid}.csv" > $OUT/c$round.txt 2>&1 &
  pid=$!
  for i in $(seq 1 30); do kill -0 $pid 2>/dev/null || break; sleep 1; done
  if kill -0 $pid 2>/dev/null; then
    echo "round $round: alive after 30 s; $(grep -c 'measurements, 0 failed' $OUT/c$round.txt) adapters finished"
    for t in /proc/$pid/task/*; do echo "$(cat $t/comm) wchan=$(cat $t/wchan) state=$(awk '{print $3}' $t/stat)"; done
    command -v gdb >/dev/null && timeout 60 gdb -p $pid -batch -ex 'thread apply all bt 14' 2>&1 | grep -E '^#|^Thread' | cut -c1-220 | head -200
    command -v gdb >/dev/null || echo "no gdb"
    kill -9 $pid; break
  else
    wait $pid; echo "round $round: exit $? in $(( ($(date +%s%N) - s) / 1000000 )) ms"
  fi
done
