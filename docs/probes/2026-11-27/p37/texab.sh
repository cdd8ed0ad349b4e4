# The CUDA texture twins: tex2D (before) against the integer texel fetch (after), alternating.
set -u
W=$OUT/w; mkdir -p $W
exec > $OUT/texab.log 2>&1
finish() { tar czf $OUT/texab.tar.gz -C $OUT w && rm -rf $W; }
trap finish EXIT
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
F='transpose/naive_texture,transpose/naive_col,stencil/texture,stencil/global_direct'
for i in 1 2; do for b in membench membench-tex; do
  timeout 120 .carry/$b run --api wgpu,cuda --build default,tax-free --filter "$F" --out $W/$b-$i.csv > $W/$b-$i.txt 2> $W/$b-$i.err; echo "$b #$i: exit $?; $(tail -n 1 $W/$b-$i.err)"
done; done
