// v rotated left by one bit: a lane's own term that feeds its high bits into low ones.
fn rotl1(v: u32) -> u32 {
    return (v << 1u) | (v >> 31u);
}
