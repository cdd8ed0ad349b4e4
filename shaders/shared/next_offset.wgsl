// Subgroup offsets 1, 2, 4, .., size / 2, then 1 again.
//
// That is 2^(round mod log2(size)) without a division in the loop.
fn next_offset(offset: u32, subgroup_size: u32) -> u32 {
    return select(offset << 1u, 1u, offset << 1u == subgroup_size);
}
