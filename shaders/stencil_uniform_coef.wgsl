// stencil/uniform_coef: out[i] = sum over k = 1..4 of c[k] * (in[i + k] - in[i - k]), neighbours outside the array read as 0; the workgroup stages its inputs and a 4-element halo on each side in workgroup memory; the coefficients come from a uniform buffer (the constant path).

struct Params {
    n: u32,
    // c[1..4] as c.x, c.y, c.z, c.w.
    c: vec4<f32>,
}

@group(0) @binding(0)
var<uniform> params: Params;
@group(0) @binding(1)
var<storage, read> src: array<f32>;
@group(0) @binding(2)
var<storage, read_write> dst: array<f32>;

override WORKGROUP_SIZE: u32 = 256;
const RADIUS: u32 = 4;
// The workgroup's inputs with RADIUS neighbours on each side.
var<workgroup> tile: array<f32, WORKGROUP_SIZE + 2 * RADIUS>;

// src[j], or 0 outside the array (an index below 0 has wrapped past n).
fn input(j: u32) -> f32 {
    if j < params.n {
        return src[j];
    }
    return 0.0;
}

// A grid wider than 65535 workgroups is dispatched as rows of nwg.x workgroups.
@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let first = (wid.y * nwg.x + wid.x) * WORKGROUP_SIZE;
    // The 2-D grid's overhang is whole workgroups: leaving early keeps the barrier
    // below in uniform control flow.
    if first >= params.n {
        return;
    }
    let i = first + lid;
    tile[RADIUS + lid] = input(i);
    if lid < RADIUS {
        tile[lid] = input(first - RADIUS + lid);
        tile[RADIUS + WORKGROUP_SIZE + lid] = input(first + WORKGROUP_SIZE + lid);
    }
    workgroupBarrier();
    if i < params.n {
        let centre = RADIUS + lid;
        var sum = 0.0;
        for (var k = 1u; k <= RADIUS; k++) {
            sum += params.c[k - 1u] * (tile[centre + k] - tile[centre - k]);
        }
        dst[i] = sum;
    }
}
