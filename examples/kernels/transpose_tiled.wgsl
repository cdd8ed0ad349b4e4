// out = transpose(in) for an R x C matrix of floats through a 32 x 32 tile in workgroup
// memory, padded by one word per row: rows read and written coalesced, no bank
// conflicts on the column read.

struct Shape {
    rows: u32,
    cols: u32,
}

@group(0) @binding(0)
var<uniform> shape: Shape;
@group(0) @binding(1)
var<storage, read> input: array<f32>;
@group(0) @binding(2)
var<storage, read_write> output: array<f32>;

const TILE: u32 = 32u;
var<workgroup> tile: array<array<f32, 33>, 32>;

// Each invocation moves TILE / 8 elements: 32 x 8 invocations per 32 x 32 tile.
@compute @workgroup_size(32, 8)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    let col = wid.x * TILE + lid.x;
    for (var k = 0u; k < TILE; k += 8u) {
        let row = wid.y * TILE + lid.y + k;
        if row < shape.rows && col < shape.cols {
            tile[lid.y + k][lid.x] = input[row * shape.cols + col];
        }
    }
    workgroupBarrier();
    let out_col = wid.y * TILE + lid.x;
    for (var k = 0u; k < TILE; k += 8u) {
        let out_row = wid.x * TILE + lid.y + k;
        if out_row < shape.cols && out_col < shape.rows {
            output[out_row * shape.rows + out_col] = tile[lid.x][lid.y + k];
        }
    }
}
