// constant/uniform, constant/storage: every invocation folds `r` reads of a 256-word table.
//
// All lanes read the same element (broadcast) or each its own (divergent).
//
// The kernels made from this file (see `permutations`): constant_uniform (UNIFORM), the
// table in a uniform buffer (the constant path); constant_storage (STORAGE), in a
// read-only storage buffer (the cached global path).

struct Params {
    // Reads per invocation.
    r: u32,
    // 255: read k is of element (offset + k) & index_mask. From the uniform, so that
    // the compiler cannot prove the reads repeat and hoist them out of the loop.
    index_mask: u32,
#if UNIFORM
    // The table's 256 words, four per 16-byte row (a uniform array's stride).
    table: array<vec4<u32>, 64>,
#endif
}

@group(0) @binding(0)
var<uniform> params: Params;
#if STORAGE
@group(0) @binding(1)
var<storage, read> table: array<u32>;
@group(0) @binding(2)
var<storage, read_write> dst: array<u32>;
#endif
#if UNIFORM
@group(0) @binding(1)
var<storage, read_write> dst: array<u32>;
#endif

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
#if STORAGE
        acc = acc * MIX + table[(offset + k) & index_mask];
#endif
#if UNIFORM
        let e = (offset + k) & index_mask;
        acc = acc * MIX + params.table[e / 4u][e % 4u];
#endif
    }
    dst[wid.x * WORKGROUP_SIZE + i] = acc;
}
