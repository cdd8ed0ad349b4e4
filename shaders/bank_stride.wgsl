// bank/stride: a u32 tile in workgroup memory read with lane l at word (l * stride) mod WORDS.
//
// The tile is flat, written once, then read `r` times: gcd(stride, 32)-way bank
// conflicts.

struct Params {
    // Reads per invocation.
    r: u32,
    // 31: read k XORs every lane's word with `k & shift_mask`, which permutes the banks
    // and keeps the ways. From the uniform, so that the compiler cannot prove the
    // shifts repeat and hoist reads out of the loop.
    shift_mask: u32,
    stride: u32,
}

@group(0) @binding(0)
var<uniform> params: Params;
@group(0) @binding(1)
var<storage, read> src: array<u32>;
@group(0) @binding(2)
var<storage, read_write> dst: array<u32>;

// Words of the tile, one invocation each; a multiple of the 32 banks.
override WORDS: u32 = 1024;
// Folds the reads into the result in order: odd, so the result depends on every read.
override MIX: u32 = 0x01000193;

var<workgroup> tile: array<u32, WORDS>;

@compute @workgroup_size(WORDS)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) l: u32,
) {
    let g = wid.x * WORDS + l;
    tile[l] = src[g];
    workgroupBarrier();
    let word = l * params.stride % WORDS;
    let r = params.r;
    let shift_mask = params.shift_mask;
    var acc = 0u;
    for (var k = 0u; k < r; k++) {
        acc = acc * MIX + tile[word ^ (k & shift_mask)];
    }
    dst[g] = acc;
}
