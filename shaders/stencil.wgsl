// stencil: out[i] = sum over k = 1..4 of c[k] * (in[i + k] - in[i - k]).
//
// Neighbours outside the array read as 0.
//
// The kernels made from this file (see `permutations`): with TILE, the workgroup stages
// its inputs and a 4-element halo on each side in workgroup memory, and the
// coefficients come from a uniform buffer (stencil_uniform_coef, UNIFORM_COEF: the
// constant path), from a read-only storage buffer (stencil_storage_coef, STORAGE_COEF:
// the cached global path) or are compile-time constants (stencil_const_coef,
// CONST_COEF); without TILE, stencil_global_direct reads every neighbour straight from
// storage, with compile-time coefficients, and stencil_texture (TEXTURE) reads them
// with textureLoad from an r32float texture TEXTURE_WIDTH texels wide that holds the
// input row by row: neighbours i ± k are texels on the same row but where a row ends.

struct Params {
    n: u32,
#if UNIFORM_COEF
    // c[1..4] as c.x, c.y, c.z, c.w.
    c: vec4<f32>,
#endif
}

@group(0) @binding(0)
var<uniform> params: Params;
#if STORAGE_COEF
@group(0) @binding(1)
var<storage, read> coefficients: array<f32, RADIUS>;
@group(0) @binding(2)
var<storage, read> src: array<f32>;
@group(0) @binding(3)
var<storage, read_write> dst: array<f32>;
#else
#if TEXTURE
@group(0) @binding(1)
var src: texture_2d<f32>;
#else
@group(0) @binding(1)
var<storage, read> src: array<f32>;
#endif
@group(0) @binding(2)
var<storage, read_write> dst: array<f32>;
#endif

override WORKGROUP_SIZE: u32 = 256;
const RADIUS: u32 = 4;
#if CONST_COEF
// c[1..4]: pipeline constants, folded into the code at pipeline creation as WGSL
// `const`s would be; overrides so that the host's values are the only ones.
override C1: f32;
override C2: f32;
override C3: f32;
override C4: f32;
#endif
#if TEXTURE
// Texels per row of the texture.
override TEXTURE_WIDTH: u32;
#endif
#if TILE

// The workgroup's inputs with RADIUS neighbours on each side.
var<workgroup> tile: array<f32, WORKGROUP_SIZE + 2 * RADIUS>;
#endif

// src[j], or 0 outside the array (an index below 0 has wrapped past n).
fn input(j: u32) -> f32 {
    if j < params.n {
#if TEXTURE
        return textureLoad(src, vec2(j % TEXTURE_WIDTH, j / TEXTURE_WIDTH), 0).x;
#else
        return src[j];
#endif
    }
    return 0.0;
}

#import workgroup_index

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
#if TILE
    let first = workgroup_index(wid, nwg) * WORKGROUP_SIZE;
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
#if UNIFORM_COEF
            sum += params.c[k - 1u] * (tile[centre + k] - tile[centre - k]);
#endif
#if STORAGE_COEF
            sum += coefficients[k - 1u] * (tile[centre + k] - tile[centre - k]);
#endif
#if CONST_COEF
            sum += vec4(C1, C2, C3, C4)[k - 1u] * (tile[centre + k] - tile[centre - k]);
#endif
        }
        dst[i] = sum;
    }
#else
    let i = workgroup_index(wid, nwg) * WORKGROUP_SIZE + lid;
    if i < params.n {
        var sum = 0.0;
        for (var k = 1u; k <= RADIUS; k++) {
            sum += vec4(C1, C2, C3, C4)[k - 1u] * (input(i + k) - input(i - k));
        }
        dst[i] = sum;
    }
#endif
}
