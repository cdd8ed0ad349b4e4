#!/usr/bin/env bash
# Compiles and runs probes p32, p33 and p34, one after another.
# Usage, from the repository root: bash docs/probes/2026-11-27/run.sh OUTDIR
# Writes OUTDIR/pNN.csv (stdout), OUTDIR/pNN.err (compiler and program stderr),
# OUTDIR/pNN.sass (the SASS, where cuobjdump is found) and OUTDIR/smi.txt.
# A probe that fails to build, fails verification or crashes does not stop the others;
# the script exits non-zero if any did.
set -u

out=${1:?usage: run.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
# Binaries go to a scratch folder, not into the repository.
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT

nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,clocks.mem \
    --format=csv > "$out/smi.txt" 2>&1 || true
nvcc --version >> "$out/smi.txt" 2>&1 || true

failed=0
for probe in p32:stencil_texture p33:staged_async p34:persist_window; do
    id=${probe%%:*}
    name=${probe#*:}
    : > "$out/$id.csv"
    if ! nvcc -O3 -arch=sm_90 -o "$build/$name" "$here/$id/$name.cu" > "$out/$id.err" 2>&1; then
        echo "$id: build failed (see $out/$id.err)"
        failed=1
        continue
    fi
    cuobjdump -sass "$build/$name" > "$out/$id.sass" 2>/dev/null || rm -f "$out/$id.sass"
    # Each probe takes well under 20 s; 120 s catches a hang.
    timeout 120 "$build/$name" > "$out/$id.csv" 2>> "$out/$id.err"
    rc=$?
    echo "$id: exit $rc, $(grep -c "^$id," "$out/$id.csv") rows"
    [ "$rc" -eq 0 ] || failed=1
done
exit "$failed"
