// y = a * x + y over n vec4s of floats: four elements per invocation, one 16-byte
// access per stream as `copy/peak` makes. Beside saxpy.wgsl (one float per
// invocation) it isolates what the width of each access costs.

override WG: u32 = 256u;

struct Params {
    a: f32,
    n: u32,
}

@group(0) @binding(0)
var<uniform> params: Params;
@group(0) @binding(1)
var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(2)
var<storage, read_write> y: array<vec4<f32>>;

@compute @workgroup_size(WG)
fn main(
    @builtin(global_invocation_id) id: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let i = id.y * (groups.x * WG) + id.x;
    if i < params.n {
        y[i] = params.a * x[i] + y[i];
    }
}
