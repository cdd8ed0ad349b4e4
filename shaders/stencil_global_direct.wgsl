// stencil/global_direct: out[i] = sum over k = 1..4 of c[k] * (in[i + k] - in[i - k]), neighbours outside the array read as 0; every neighbour read straight from storage (no tile), compile-time coefficients as stencil/const_coef.

struct Params {
    n: u32,
}

@group(0) @binding(0)
var<uniform> params: Params;
@group(0) @binding(1)
var<storage, read> src: array<f32>;
@group(0) @binding(2)
var<storage, read_write> dst: array<f32>;

override WORKGROUP_SIZE: u32 = 256;
const RADIUS: u32 = 4;
// c[1..4]: pipeline constants, folded into the code at pipeline creation as WGSL
// `const`s would be; overrides so that the host's values are the only ones.
override C1: f32;
override C2: f32;
override C3: f32;
override C4: f32;

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
    let i = (wid.y * nwg.x + wid.x) * WORKGROUP_SIZE + lid;
    if i < params.n {
        var sum = 0.0;
        for (var k = 1u; k <= RADIUS; k++) {
            sum += vec4(C1, C2, C3, C4)[k - 1u] * (input(i + k) - input(i - k));
        }
        dst[i] = sum;
    }
}
