// hierarchy/staged_*: each workgroup stages tiles of the buffer in workgroup memory and sums them.
//
// Tiles are of WORKGROUP_SIZE elements, STAGES of them in flight; each tile is read back
// in reverse order, and the workgroup writes the wrapping sum of what it read.
//
// Workgroup g takes tiles g, g + groups, … of the buffer (a grid-stride loop over
// tiles). With STAGES = 2 it loads the next tile into the other slot before it sums the
// current one (double buffering). Each invocation sums the element another invocation
// staged (lid → WORKGROUP_SIZE − 1 − lid), so the staging through workgroup memory is
// needed. Elements are u32, vec2<u32> (VEC2) or vec4<u32> (VEC4).
#if ASYNC
//
// hierarchy/staged_async_* is this kernel with its CUDA twin's staging asynchronous
// (`cp.async`, global to shared without registers). WebGPU has no asynchronous copy,
// so wgpu skips it; the simulator predicts it as this synchronous staging.
#endif

struct Params {
    // Tiles of WORKGROUP_SIZE elements in the buffer.
    tiles: u32,
}

@group(0) @binding(0)
var<uniform> params: Params;
@group(0) @binding(1)
var<storage, read> src: array<Elem>;
@group(0) @binding(2)
var<storage, read_write> sums: array<u32>;

override WORKGROUP_SIZE: u32 = 256;
// Tiles in flight: 1 (load, barrier, sum) or 2 (double buffering).
override STAGES: u32 = 1;
// STAGES × WORKGROUP_SIZE, set from Rust: the slots of the staged tiles.
override TILE_ELEMS: u32 = 256;

#if VEC4
alias Elem = vec4<u32>;

fn fold(v: Elem) -> u32 {
    return v.x + v.y + v.z + v.w;
}
#else
#if VEC2
alias Elem = vec2<u32>;

fn fold(v: Elem) -> u32 {
    return v.x + v.y;
}
#else
alias Elem = u32;

fn fold(v: Elem) -> u32 {
    return v;
}
#endif
#endif

var<workgroup> tile: array<Elem, TILE_ELEMS>;

#import workgroup_index
#import workgroup_sum

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let group = workgroup_index(wid, nwg);
    let groups = nwg.x * nwg.y;
    // Stage the first STAGES − 1 tiles.
    var ahead = group;
    for (var slot = 0u; slot + 1u < STAGES; slot++) {
        if ahead < params.tiles {
            tile[slot * WORKGROUP_SIZE + lid] = src[ahead * WORKGROUP_SIZE + lid];
        }
        ahead += groups;
    }
    var acc = 0u;
    var slot = 0u;
    for (var current = group; current < params.tiles; current += groups) {
        // The tile STAGES − 1 ahead, into the slot summed last round.
        let into = (slot + STAGES - 1u) % STAGES;
        if ahead < params.tiles {
            tile[into * WORKGROUP_SIZE + lid] = src[ahead * WORKGROUP_SIZE + lid];
        }
        ahead += groups;
        workgroupBarrier();
        acc += fold(tile[slot * WORKGROUP_SIZE + WORKGROUP_SIZE - 1u - lid]);
        // Summed before the slot is staged again.
        workgroupBarrier();
        slot = (slot + 1u) % STAGES;
    }
    let sum = workgroup_sum(lid, acc);
    if lid == 0u {
        sums[group] = sum;
    }
}
