// transpose through a padded 32 x 32 tile, moving vec4s: each invocation reads four
// consecutive elements of an input row and writes four consecutive elements of an
// output row, so every global access is 16 bytes wide and several are in flight.
// Rows of the ny x nx input and of the nx x ny output are whole vec4s (nx and ny
// multiples of 4).
//
// Tile row stride 33: a subgroup storing element k of its vec4s covers words
// ty*33 + 4*tx + k, and one reading a tile column covers (4*cx + k)*33 + r; both land
// on 32 distinct banks.

struct Params {
    nx: u32,
    ny: u32,
}

@group(0) @binding(0)
var<uniform> params: Params;
@group(0) @binding(1)
var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(2)
var<storage, read_write> dst: array<vec4<f32>>;

const TILE: u32 = 32;
const STRIDE: u32 = TILE + 1;
// vec4s per tile row.
const WG_X: u32 = TILE / 4;
// Tile rows per pass of the workgroup; each invocation moves TILE / WG_Y of them.
override WG_Y: u32 = 8;

var<workgroup> tile: array<f32, TILE * STRIDE>;

@compute @workgroup_size(WG_X, WG_Y)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    let x0 = wid.x * TILE;
    let y0 = wid.y * TILE;
    let ix = x0 + 4 * lid.x;
    for (var ty = lid.y; ty < TILE; ty += WG_Y) {
        let iy = y0 + ty;
        if ix < params.nx && iy < params.ny {
            let v = src[(iy * params.nx + ix) / 4];
            let base = ty * STRIDE + 4 * lid.x;
            tile[base] = v.x;
            tile[base + 1] = v.y;
            tile[base + 2] = v.z;
            tile[base + 3] = v.w;
        }
    }
    workgroupBarrier();
    // Output row r of the block is tile column r; this invocation writes its
    // elements c..c+3, which are tile rows c..c+3.
    let c = 4 * lid.x;
    let ox = y0 + c;
    for (var r = lid.y; r < TILE; r += WG_Y) {
        let oy = x0 + r;
        if ox < params.ny && oy < params.nx {
            let v = vec4(
                tile[c * STRIDE + r],
                tile[(c + 1) * STRIDE + r],
                tile[(c + 2) * STRIDE + r],
                tile[(c + 3) * STRIDE + r],
            );
            dst[(oy * params.ny + ox) / 4] = v;
        }
    }
}
