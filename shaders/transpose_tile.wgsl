// transpose through a tile in workgroup memory: rows of the ny x nx input are read
// coalesced into the tile, and after a barrier the tile's columns are written as
// coalesced rows of the nx x ny output.
//
// The tile is TILE_X = WG_X * TILES_X columns by TILE_Y = WG_Y * ROWS rows, each row
// padded by PAD words: with PAD = 0 and 32-word rows, the column read hits one bank
// once per tile row it covers; padding (one word for tiles of 32 rows, more for
// shorter ones) spreads it across all banks.

struct Params {
    nx: u32,
    ny: u32,
}

@group(0) @binding(0)
var<uniform> params: Params;
@group(0) @binding(1)
var<storage, read> src: array<f32>;
@group(0) @binding(2)
var<storage, read_write> dst: array<f32>;

override WG_X: u32 = 32;
override WG_Y: u32 = 16;
// Tiles side by side along x per workgroup (2 in the unrolled variant).
override TILES_X: u32 = 1;
// Rows of the tile each invocation moves.
override ROWS: u32 = 1;
override PAD: u32 = 0;
// TILE_Y * (TILE_X + PAD), set by the host: array sizes take a single override.
override TILE_WORDS: u32 = 512;

var<workgroup> tile: array<f32, TILE_WORDS>;

@compute @workgroup_size(WG_X, WG_Y)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(local_invocation_index) t: u32,
) {
    let tile_x = WG_X * TILES_X;
    let tile_y = WG_Y * ROWS;
    let stride = tile_x + PAD;
    let x0 = wid.x * tile_x;
    let y0 = wid.y * tile_y;
    for (var r = 0u; r < ROWS; r++) {
        for (var j = 0u; j < TILES_X; j++) {
            let tx = lid.x + j * WG_X;
            let ty = lid.y + r * WG_Y;
            let ix = x0 + tx;
            let iy = y0 + ty;
            if ix < params.nx && iy < params.ny {
                tile[ty * stride + tx] = src[iy * params.nx + ix];
            }
        }
    }
    workgroupBarrier();
    // The output block is TILE_X rows of TILE_Y: consecutive invocations take
    // consecutive elements of its rows, so writes stay coalesced.
    for (var m = 0u; m < ROWS * TILES_X; m++) {
        let e = t + m * WG_X * WG_Y;
        let c = e % tile_y;
        let r = e / tile_y;
        let ox = y0 + c;
        let oy = x0 + r;
        if ox < params.ny && oy < params.nx {
            dst[oy * params.ny + ox] = tile[c * stride + r];
        }
    }
}
