//! Input data: varied, non-zero words from one hash, and uniform parameter words.

use rayon::prelude::*;

/// Varied, non-zero f32 data in [1, 2), as bit patterns: a cheap integer hash of the index and seed,
/// so no two neighbours are equal and no value is zero, NaN or the poison word.
pub fn f32_data(len: usize, seed: u64) -> Vec<u32> {
    // 23 random mantissa bits under the exponent of 1.0.
    (0..len)
        .into_par_iter()
        .map(|i| 0x3F80_0000 | (mix(i, seed) as u32 & 0x007F_FFFF))
        .collect()
}

/// A 64-bit hash of an index and a seed (splitmix64's finaliser): the one source of
/// varied input data in the suite.
pub fn mix(i: usize, seed: u64) -> u64 {
    let mut x = (i as u64) ^ seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The 32-bit words of a `#[repr(C)]` parameter struct, as a uniform buffer holds them.
pub fn words<P: bytemuck::Pod>(params: P) -> Vec<u32> {
    bytemuck::cast_slice(&[params]).to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::POISON;

    #[test]
    fn data_is_varied_and_never_zero_or_poison() {
        let data = f32_data(1 << 17, 7);
        assert!(
            data.iter()
                .all(|&v| (1.0..2.0).contains(&f32::from_bits(v)))
        );
        assert!(data.windows(2).filter(|w| w[0] == w[1]).count() < 4);
        assert!(data.iter().all(|&v| v != POISON));
        assert_ne!(f32_data(16, 1), f32_data(16, 2));
    }
}
