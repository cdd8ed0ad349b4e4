// copy/peak: dst[i] = src[i] over vec4<f32>, one vec4 per invocation or a grid-stride loop; the practical bandwidth ceiling.

struct Params {
    n: u32,
}

#import bind_vec4_f32

override WORKGROUP_SIZE: u32 = 256;

#import workgroup_index

// With one vec4 per invocation the grid covers n and the loop runs once; with a
// grid-stride launch a fixed grid walks the buffer in steps of its own size.
@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let grid = nwg.x * nwg.y * WORKGROUP_SIZE;
    for (var i = workgroup_index(wid, nwg) * WORKGROUP_SIZE + lid; i < params.n; i += grid) {
        dst[i] = src[i];
    }
}
