# CUDA device_copy alone, and after the persist cases, twice each, alternating.
set -u
W=$OUT/w; mkdir -p $W
exec > $OUT/dcopy.log 2>&1
finish() { tar czf $OUT/dcopy.tar.gz -C $OUT w && rm -rf $W; }
trap finish EXIT
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
for i in 1 2; do
  timeout 60 .carry/membench run --api cuda --filter 'transfer/device_copy/size=268435456' --out $W/alone-$i.csv > $W/alone-$i.txt 2>&1; echo "alone $i: $?"; grep device_copy $W/alone-$i.txt | head -2
  timeout 90 .carry/membench run --api cuda --filter 'hierarchy/persist,transfer/device_copy/size=268435456' --out $W/after-$i.csv > $W/after-$i.txt 2>&1; echo "after persist $i: $?"; grep device_copy $W/after-$i.txt | head -2
  timeout 90 .carry/membench run --api cuda --filter 'hierarchy/shared/footprint=1073741824,transfer/device_copy/size=268435456' --out $W/aftershared-$i.csv > $W/aftershared-$i.txt 2>&1; echo "after shared $i: $?"; grep device_copy $W/aftershared-$i.txt | head -2
done
