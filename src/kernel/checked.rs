//! Verification of a user's kernel against the WGSL's own meaning: membench's CPU
//! interpreter runs the kernel on the inputs the GPU gets, and every `read_write`
//! binding the GPU leaves is compared with what the interpreter left — integers bit
//! for bit, floats within [`TOLERANCE`]. The interpreter's trace also counts the
//! distinct bytes the kernel reads and writes: the bytes it must move, where none are
//! declared.

use std::sync::Arc;

use super::reflect::{KernelBinding, Word};
use crate::sim::{BoundBuffer, Kernel, Launch, Request, Target, run};
use crate::suite::Expected;

/// How far a float the GPU computed may be from the interpreter's: relative to the
/// reference, plus an absolute floor for results near zero. GPUs contract `a * b + c`
/// into one rounding and approximate `inverseSqrt`, `exp` and their kind; the
/// interpreter rounds each operation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Tolerance {
    pub relative: f32,
    pub absolute: f32,
}

pub(crate) const TOLERANCE: Tolerance = Tolerance {
    relative: 1e-4,
    absolute: 1e-5,
};

impl std::fmt::Display for Tolerance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "floats within {:e} relative + {:e} absolute, integers exactly",
            self.relative, self.absolute
        )
    }
}

/// What the interpreter made of one dispatch: each read-write binding's words after it
/// (per subgroup size tried), and the distinct bytes read and written.
pub(crate) struct Interpreted {
    /// Per subgroup size tried: (the size, each read-write binding's words in binding
    /// order).
    pub(crate) outputs: Vec<(u32, Vec<Arc<Vec<u32>>>)>,
    pub(crate) read_bytes: u64,
    pub(crate) written_bytes: u64,
}

/// The outputs' lengths, not their words: they may be hundreds of MiB.
impl std::fmt::Debug for Interpreted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let outputs: Vec<(u32, Vec<usize>)> = self
            .outputs
            .iter()
            .map(|(size, outputs)| (*size, outputs.iter().map(|o| o.len()).collect()))
            .collect();
        f.debug_struct("Interpreted")
            .field("output_words_per_subgroup_size", &outputs)
            .field("read_bytes", &self.read_bytes)
            .field("written_bytes", &self.written_bytes)
            .finish()
    }
}

/// Runs `kernel` once over `workgroups` on `inputs` (every binding's words in binding
/// order), at each of `subgroup_sizes`.
pub(crate) fn interpret(
    kernel: &Kernel,
    bindings: &[KernelBinding],
    inputs: &[Arc<Vec<u32>>],
    workgroups: [u32; 3],
    subgroup_sizes: &[u32],
) -> Result<Interpreted, String> {
    let mut interpreted = Interpreted {
        outputs: Vec::new(),
        read_bytes: 0,
        written_bytes: 0,
    };
    for (tried, &subgroup_size) in subgroup_sizes.iter().enumerate() {
        let mut bound: Vec<BoundBuffer> = inputs
            .iter()
            .zip(bindings)
            .map(|(words, binding)| {
                let bytes = bytemuck::cast_slice(words.as_slice()).to_vec();
                BoundBuffer::buffer(binding.slot.group, binding.slot.binding, bytes)
            })
            .collect();
        let launch = Launch::all(workgroups, subgroup_size);
        // The bytes touched are counted on the first run: the others touch the same.
        let mut touched = Touched::new(bindings, inputs);
        let mut sink = |request: &Request<'_>| touched.request(request);
        let result = if tried == 0 {
            run(kernel, &mut bound, &launch, &mut sink)
        } else {
            run(kernel, &mut bound, &launch, &mut crate::sim::NoTrace)
        };
        result.map_err(|e| e.to_string())?;
        if tried == 0 {
            (interpreted.read_bytes, interpreted.written_bytes) = touched.bytes();
        }
        let outputs = bindings
            .iter()
            .zip(&bound)
            .filter(|(b, _)| b.access == super::reflect::BindingAccess::ReadWrite)
            .map(|(_, bound)| Arc::new(bytemuck::pod_collect_to_vec(&bound.data)))
            .collect();
        interpreted.outputs.push((subgroup_size, outputs));
    }
    Ok(interpreted)
}

/// The words each binding's requests touched, read and written.
struct Touched {
    /// Each binding's slot, in the order of `read` and `written`.
    slots: Vec<naga::ResourceBinding>,
    read: Vec<Vec<bool>>,
    written: Vec<Vec<bool>>,
}

impl Touched {
    fn new(bindings: &[KernelBinding], inputs: &[Arc<Vec<u32>>]) -> Touched {
        let words: Vec<Vec<bool>> = inputs.iter().map(|w| vec![false; w.len()]).collect();
        Touched {
            slots: bindings.iter().map(|b| b.slot).collect(),
            read: words.clone(),
            written: words,
        }
    }

    fn request(&mut self, request: &Request<'_>) {
        let Target::Binding { group, binding } = request.target else {
            return;
        };
        let Some(binding) = self
            .slots
            .iter()
            .position(|s| s.group == group && s.binding == binding)
        else {
            return;
        };
        let mark = |sets: &mut Vec<Vec<bool>>| {
            let Some(set) = sets.get_mut(binding) else {
                return;
            };
            for &address in request.addresses {
                let first = crate::host_len(address / 4);
                let last =
                    crate::host_len((address + u64::from(request.bytes_per_lane)).div_ceil(4));
                for word in first..last.min(set.len()) {
                    set[word] = true;
                }
            }
        };
        use crate::sim::Access;
        match request.access {
            Access::Read => mark(&mut self.read),
            Access::Write => mark(&mut self.written),
            Access::Atomic => {
                mark(&mut self.read);
                mark(&mut self.written);
            }
        }
    }

    fn bytes(&self) -> (u64, u64) {
        let count = |sets: &[Vec<bool>]| -> u64 {
            sets.iter()
                .map(|set| 4 * set.iter().filter(|&&w| w).count() as u64)
                .sum()
        };
        (count(&self.read), count(&self.written))
    }
}

/// What binding `bound` must hold: one of `references` (the interpreter's, per
/// subgroup size tried), compared word by word as its layout says.
pub fn expected(bound: &KernelBinding, references: Vec<(u32, Arc<Vec<u32>>)>) -> Expected {
    let bound = bound.clone();
    let words = references.first().map_or(0, |(_, r)| r.len());
    Expected::Rule {
        words,
        rule: Box::new(move |actual| {
            let mut first_error = None;
            for (subgroup_size, reference) in &references {
                match compare(&bound, reference, actual) {
                    Ok(()) => return Ok(()),
                    Err(why) if references.len() > 1 => {
                        first_error.get_or_insert(format!("{why} (subgroup size {subgroup_size})"));
                    }
                    Err(why) => return Err(why),
                }
            }
            Err(first_error.unwrap_or_default())
        }),
    }
}

/// `Ok` where `actual` holds `reference` as `bound`'s layout compares it, else one
/// line: the binding, how many words differ, the first with both values.
pub fn compare(bound: &KernelBinding, reference: &[u32], actual: &[u32]) -> Result<(), String> {
    let mut differing = 0usize;
    let mut first = None;
    for (index, (&e, &a)) in reference.iter().zip(actual).enumerate() {
        let word = bound.word(index);
        if same(word, e, a) {
            continue;
        }
        differing += 1;
        first.get_or_insert((index, word, e, a));
    }
    let Some((index, word, e, a)) = first else {
        return Ok(());
    };
    Err(format!(
        "binding `{}`: {differing} of {} words differ; the first at {}: expected {}, got {} \
         ({TOLERANCE})",
        bound.name,
        reference.len(),
        place(bound, index),
        shown(word, e),
        shown(word, a)
    ))
}

/// What binding `bound` must hold after a second dispatch from the same inputs: `first`,
/// the first dispatch's words, bit for bit (a race shows as a disagreement).
pub fn agreeing(bound: &KernelBinding, first: Arc<Vec<u32>>) -> Expected {
    let bound = bound.clone();
    Expected::Rule {
        words: first.len(),
        rule: Box::new(move |second| disagreement(&bound, &first, second)),
    }
}

/// `Ok` where `second` is `first` word for word, else one line: the binding, how many
/// words differ, the first with both values.
fn disagreement(bound: &KernelBinding, first: &[u32], second: &[u32]) -> Result<(), String> {
    let differing = first.iter().zip(second).filter(|(a, b)| a != b).count();
    let Some((index, (&a, &b))) = first
        .iter()
        .zip(second)
        .enumerate()
        .find(|(_, (a, b))| a != b)
    else {
        return Ok(());
    };
    let word = bound.word(index);
    Err(format!(
        "binding `{}`: two dispatches from the same inputs disagree (a race?): {differing} of \
         {} words differ; the first at {}: {} the first time, {} the second",
        bound.name,
        first.len(),
        place(bound, index),
        shown(word, a),
        shown(word, b)
    ))
}

/// Where word `index` of `bound` is: in its runtime-sized array, the element too.
fn place(bound: &KernelBinding, index: usize) -> String {
    let byte = 4 * index as u64;
    match &bound.tail {
        Some(tail) if byte >= u64::from(bound.fixed_bytes) => {
            let element = (byte - u64::from(bound.fixed_bytes)) / u64::from(tail.stride);
            format!("word {index} (element {element})")
        }
        _ => format!("word {index}"),
    }
}

#[expect(
    clippy::cast_possible_truncation,
    reason = "the low and high halves of a 32-bit word"
)]
fn same(word: Word, e: u32, a: u32) -> bool {
    match word {
        Word::Exact => e == a,
        Word::F32 => close(f32::from_bits(e), f32::from_bits(a)),
        Word::F16x2 => {
            let halves = |w: u32| [f16_to_f32(w as u16), f16_to_f32((w >> 16) as u16)];
            halves(e).iter().zip(halves(a)).all(|(&e, a)| close(e, a))
        }
    }
}

fn close(e: f32, a: f32) -> bool {
    e.to_bits() == a.to_bits()
        || (e.is_nan() && a.is_nan())
        || (a - e).abs() <= TOLERANCE.absolute + TOLERANCE.relative * e.abs()
}

#[expect(
    clippy::cast_possible_truncation,
    reason = "the low and high halves of a 32-bit word"
)]
fn shown(word: Word, bits: u32) -> String {
    match word {
        Word::Exact => format!("{bits} ({bits:#010x})"),
        Word::F32 => format!("{}", f32::from_bits(bits)),
        Word::F16x2 => format!(
            "({}, {})",
            f16_to_f32(bits as u16),
            f16_to_f32((bits >> 16) as u16)
        ),
    }
}

/// An IEEE half's value.
pub(crate) fn f16_to_f32(half: u16) -> f32 {
    let sign = if half & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exponent = i32::from((half >> 10) & 0x1F);
    let mantissa = f32::from(half & 0x3FF);
    sign * match exponent {
        0 => mantissa * 2f32.powi(-24),
        31 if mantissa == 0.0 => f32::INFINITY,
        31 => f32::NAN,
        _ => (1.0 + mantissa / 1024.0) * 2f32.powi(exponent - 15),
    }
}

/// The half nearest below `value` in magnitude (truncated): inputs, not results.
#[expect(
    clippy::cast_possible_truncation,
    reason = "the exponent cast is in 1..=30, the arms before it take the rest"
)]
pub(crate) fn f32_to_f16(value: f32) -> u16 {
    let bits = value.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exponent = ((bits >> 23) & 0xFF) as i32 - 127 + 15;
    let mantissa = ((bits >> 13) & 0x3FF) as u16;
    match exponent {
        e if e <= 0 => sign,
        e if e >= 31 => sign | 0x7C00,
        e => sign | ((e as u16) << 10) | mantissa,
    }
}

#[cfg(test)]
mod tests {
    use super::super::reflect::{BindingAccess, Tail};
    use super::*;

    #[test]
    fn two_dispatches_that_disagree_name_the_binding_the_index_and_both_values() {
        let first = Arc::new(vec![0, 1.5f32.to_bits(), 2.0f32.to_bits()]);
        let Expected::Rule { words, rule } = agreeing(&floats(), Arc::clone(&first)) else {
            panic!("a rule");
        };
        assert_eq!(words, 3);
        assert_eq!(rule(&first), Ok(()));
        // Within the interpreter's tolerance, yet not the same: a disagreement.
        let second = [0, 1.5f32.to_bits(), 2.000_001f32.to_bits()];
        assert_eq!(
            rule(&second),
            Err(
                "binding `y`: two dispatches from the same inputs disagree (a race?): 1 of 3 \
                 words differ; the first at word 2 (element 1): 2 the first time, 2.000001 the \
                 second"
                    .to_owned()
            )
        );
    }

    #[test]
    fn debug_shows_the_outputs_lengths_not_their_words() {
        let interpreted = Interpreted {
            outputs: vec![(32, vec![Arc::new(vec![7u32; 1000]), Arc::new(vec![0; 3])])],
            read_bytes: 4000,
            written_bytes: 12,
        };
        assert_eq!(
            format!("{interpreted:?}"),
            "Interpreted { output_words_per_subgroup_size: [(32, [1000, 3])], \
             read_bytes: 4000, written_bytes: 12 }"
        );
    }

    fn floats() -> KernelBinding {
        KernelBinding {
            name: "y".to_owned(),
            slot: naga::ResourceBinding {
                group: 0,
                binding: 1,
            },
            access: BindingAccess::ReadWrite,
            fixed_bytes: 4,
            words: vec![Word::Exact],
            tail: Some(Tail {
                stride: 4,
                words: vec![Word::F32],
            }),
            fields: Vec::new(),
        }
    }

    #[test]
    fn a_mismatch_names_the_binding_the_first_index_and_both_values() {
        let reference = [7, 1.0f32.to_bits(), 2.0f32.to_bits(), 3.0f32.to_bits()];
        let mut actual = reference;
        actual[2] = 2.5f32.to_bits();
        actual[3] = 9.0f32.to_bits();
        let error = compare(&floats(), &reference, &actual).unwrap_err();
        assert_eq!(
            error,
            "binding `y`: 2 of 4 words differ; the first at word 2 (element 1): expected 2, \
             got 2.5 (floats within 1e-4 relative + 1e-5 absolute, integers exactly)"
        );
        actual = reference;
        actual[0] = 8;
        let error = compare(&floats(), &reference, &actual).unwrap_err();
        assert!(
            error.contains("word 0: expected 7 (0x00000007), got 8"),
            "{error}"
        );
    }

    #[test]
    fn floats_within_the_tolerance_pass_and_integers_must_be_exact() {
        let reference = [7, 1.0f32.to_bits()];
        let close = [7, 1.00001f32.to_bits()];
        assert_eq!(compare(&floats(), &reference, &close), Ok(()));
        let far = [7, 1.001f32.to_bits()];
        assert!(compare(&floats(), &reference, &far).is_err());
    }

    #[test]
    fn halves_convert_both_ways() {
        for value in [0.0f32, 1.0, -0.5, 0.099_975_586, 1024.0] {
            assert_eq!(f16_to_f32(f32_to_f16(value)), value, "{value}");
        }
    }
}
