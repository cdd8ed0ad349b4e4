// constant/storage: every invocation folds `r` reads of a 256-word table in a read-only storage buffer (the cached global path), all lanes at the same element (broadcast) or each at its own (divergent).

struct Params {
    // Reads per invocation.
    r: u32,
    // 255: read k is of element (offset + k) & index_mask. From the uniform, so that
    // the compiler cannot prove the reads repeat and hoist them out of the loop.
    index_mask: u32,
}

@group(0) @binding(0)
var<uniform> params: Params;
@group(0) @binding(1)
var<storage, read> table: array<u32>;
@group(0) @binding(2)
var<storage, read_write> dst: array<u32>;

override WORKGROUP_SIZE: u32 = 256;
// Broadcast: every lane reads element k; divergent: lane i reads element i + k.
override DIVERGENT: bool = false;
// Folds the reads into the result in order: odd, so the result depends on every read.
override MIX: u32 = 0x01000193;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) i: u32,
) {
    let offset = select(0u, i, DIVERGENT);
    let r = params.r;
    let index_mask = params.index_mask;
    var acc = 0u;
    for (var k = 0u; k < r; k++) {
        acc = acc * MIX + table[(offset + k) & index_mask];
    }
    dst[wid.x * WORKGROUP_SIZE + i] = acc;
}
