// transpose without a tile: the row and column copies that bound it, the naive
// transposes, their 4x unrolled and diagonally remapped forms. Which one is chosen
// by override constants, folded before the driver compiles the kernel.
//
// The input is read at `in[iy*nx + ix]` when READ_ROWS (one row of a ny x nx matrix),
// else at `in[ix*ny + iy]` (one column of it, seen as nx x ny); the output likewise
// with WRITE_ROWS. With TEXTURE (transpose_naive_texture) the input is an r32float
// texture holding the same words row by row (nx wide when READ_ROWS, else ny wide),
// read with textureLoad at the texel of that word: the texture path.

struct Params {
    nx: u32,
    ny: u32,
}

@group(0) @binding(0)
var<uniform> params: Params;
@group(0) @binding(1)
#if TEXTURE
var src: texture_2d<f32>;
#else
var<storage, read> src: array<f32>;
#endif
@group(0) @binding(2)
var<storage, read_write> dst: array<f32>;

override WG_X: u32 = 32;
override WG_Y: u32 = 16;
override READ_ROWS: bool = true;
override WRITE_ROWS: bool = true;
// Elements per invocation, WG_X apart along x: the grid is UNROLL times narrower.
override UNROLL: u32 = 1;
// Visit workgroups along diagonals, so that concurrently running workgroups touch
// different DRAM partitions (the partition-camping remedy of older GPUs).
override DIAGONAL: bool = false;

@compute @workgroup_size(WG_X, WG_Y)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    var block = wid.xy;
    if DIAGONAL {
        // The general (any grid shape) form of block_y = wid.x,
        // block_x = (wid.x + wid.y) % nwg.x: a bijection on the grid.
        let linear = wid.x + nwg.x * wid.y;
        block.y = linear % nwg.y;
        block.x = (linear / nwg.y + block.y) % nwg.x;
    }
    let iy = block.y * WG_Y + lid.y;
    let x0 = block.x * WG_X * UNROLL + lid.x;
    for (var k = 0u; k < UNROLL; k++) {
        let ix = x0 + k * WG_X;
        if ix < params.nx && iy < params.ny {
            let row = iy * params.nx + ix;
            let col = ix * params.ny + iy;
#if TEXTURE
            // Word iy*nx + ix is texel (ix, iy) of rows nx wide; ix*ny + iy is (iy, ix).
            let texel = select(vec2(iy, ix), vec2(ix, iy), READ_ROWS);
            dst[select(col, row, WRITE_ROWS)] = textureLoad(src, texel, 0).x;
#else
            dst[select(col, row, WRITE_ROWS)] = src[select(col, row, READ_ROWS)];
#endif
        }
    }
}
