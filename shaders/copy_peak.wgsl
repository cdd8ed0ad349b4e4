// copy/peak: dst[i] = src[i] over vec4<f32>, one vec4 per invocation or a grid-stride loop; the practical bandwidth ceiling.

struct Params {
    n: u32,
}

@group(0) @binding(0)
var<uniform> params: Params;
@group(0) @binding(1)
var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(2)
var<storage, read_write> dst: array<vec4<f32>>;

override WORKGROUP_SIZE: u32 = 256;

// With one vec4 per invocation the grid covers n and the loop runs once; with a
// grid-stride launch a fixed grid walks the buffer in steps of its own size.
@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let grid = nwg.x * nwg.y * WORKGROUP_SIZE;
    for (var i = (wid.y * nwg.x + wid.x) * WORKGROUP_SIZE + lid; i < params.n; i += grid) {
        dst[i] = src[i];
    }
}
