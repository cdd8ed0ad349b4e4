//! Tests of the simulator: the suite's copy shaders against CPU twins, known-answer
//! coalescing traces, lock-step semantics, subgroup operations at several sizes, errors.

use std::collections::HashSet;

use super::exec::{
    Access, BoundBuffer, Kernel, Launch, NoTrace, Request, SimError, Space, Target, run,
};

/// A suite kernel as the GPU gets it (flattened by `build.rs`), with workgroups of
/// `workgroup_size` invocations.
fn suite_kernel(name: &str, workgroup_size: u32) -> Result<Kernel, SimError> {
    let source = crate::suite::shaders::source(name).unwrap_or_else(|| panic!("no kernel {name}"));
    let overrides = [("WORKGROUP_SIZE", f64::from(workgroup_size))];
    Kernel::load(name, source, &overrides)
}

fn words(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_words(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect()
}

#[expect(
    clippy::cast_possible_truncation,
    reason = "test sizes of a few thousand"
)]
fn floats(n: usize, seed: u32) -> Vec<u32> {
    (0..n as u32)
        .map(|i| (i as f32 * 0.5 + seed as f32).to_bits())
        .collect()
}

fn bind(group: u32, binding: u32, data: Vec<u8>) -> BoundBuffer {
    BoundBuffer::buffer(group, binding, data)
}

/// A request copied out of the stream, for tests that look at many.
#[derive(Clone, Debug)]
struct Req {
    workgroup: [u32; 3],
    subgroup: u32,
    space: Space,
    target: Target,
    access: Access,
    bytes: u32,
    lanes: Vec<u32>,
    addresses: Vec<u64>,
}

fn collect(
    kernel: &Kernel,
    bindings: &mut [BoundBuffer],
    launch: &Launch,
) -> Result<Vec<Req>, SimError> {
    let mut out = Vec::new();
    let mut sink = |r: &Request<'_>| {
        out.push(Req {
            workgroup: r.workgroup,
            subgroup: r.subgroup,
            space: r.space,
            target: r.target,
            access: r.access,
            bytes: r.bytes_per_lane,
            lanes: r.lanes.to_vec(),
            addresses: r.addresses.to_vec(),
        })
    };
    run(kernel, bindings, launch, &mut sink)?;
    Ok(out)
}

fn sectors(r: &Req) -> usize {
    // A lane's access may straddle sectors (vec4 at 16 bytes does not, but be exact).
    let mut s = HashSet::new();
    for &a in &r.addresses {
        for byte in [a, a + u64::from(r.bytes) - 1] {
            s.insert(byte / 32);
        }
    }
    s.len()
}

/// Runs `copy_offset` or `copy_stride` (`param` = offset or stride) and returns dst and
/// the trace.
fn run_copy(
    name: &str,
    n: u32,
    param: u32,
    len: usize,
    wg: u32,
) -> anyhow::Result<(Vec<u32>, Vec<u32>, Vec<Req>)> {
    let k = suite_kernel(name, wg)?;
    assert_eq!(k.workgroup_size(), [wg, 1, 1]);
    let src = floats(len, 7);
    let mut b = vec![
        bind(0, 0, words(&[n, param, 0, 0])),
        bind(0, 1, words(&src)),
        bind(0, 2, words(&vec![0xdead_beef; len])),
    ];
    let launch = Launch::all([n.div_ceil(wg), 1, 1], 32);
    let trace = collect(&k, &mut b, &launch)?;
    Ok((src, from_words(&b[2].data), trace))
}

#[test]
fn copy_offset_matches_cpu_twin() -> anyhow::Result<()> {
    for offset in [0u32, 1, 5, 32] {
        let n = 1000;
        let len = (n + offset) as usize;
        let (src, dst, _) = run_copy("copy_offset", n, offset, len, 64)?;
        let mut want = vec![0xdead_beef; len];
        for i in 0..n as usize {
            want[i + offset as usize] = src[i + offset as usize];
        }
        assert_eq!(dst, want, "offset {offset}");
    }
    Ok(())
}

#[test]
fn copy_stride_matches_cpu_twin() -> anyhow::Result<()> {
    for stride in [1u32, 2, 3, 8] {
        let n = 700;
        let len = (n * stride) as usize;
        let (src, dst, _) = run_copy("copy_stride", n, stride, len, 128)?;
        let mut want = vec![0xdead_beef; len];
        for i in 0..n as usize {
            want[i * stride as usize] = src[i * stride as usize];
        }
        assert_eq!(dst, want, "stride {stride}");
    }
    Ok(())
}

#[test]
fn copy_peak_grid_stride_matches_cpu_twin() -> anyhow::Result<()> {
    let k = suite_kernel("copy_peak", 64)?;
    let n = 1000u32; // vec4s; 3 workgroups of 64 walk it in ~6 grid strides
    let src = floats(4 * n as usize + 8, 3);
    let mut b = vec![
        bind(0, 0, words(&[n, 0, 0, 0])),
        bind(0, 1, words(&src)),
        bind(0, 2, words(&vec![0; 4 * n as usize + 8])),
    ];
    run(&k, &mut b, &Launch::all([3, 1, 1], 32), &mut NoTrace)?;
    let dst = from_words(&b[2].data);
    let mut want = vec![0; 4 * n as usize + 8];
    want[..4 * n as usize].copy_from_slice(&src[..4 * n as usize]);
    assert_eq!(dst, want);
    Ok(())
}

fn storage_sectors(trace: &[Req]) -> Vec<usize> {
    trace
        .iter()
        .filter(|r| r.space == Space::Storage)
        .map(sectors)
        .collect()
}

#[test]
fn coalescing_known_answers() -> anyhow::Result<()> {
    let n = 4096;
    for (offset, want) in [(0u32, 4usize), (1, 5), (8, 4), (31, 5)] {
        let (_, _, trace) = run_copy("copy_offset", n, offset, (n + offset) as usize, 256)?;
        let s = storage_sectors(&trace);
        // One read and one write request per subgroup of 32.
        assert_eq!(s.len(), 2 * n as usize / 32);
        assert!(s.iter().all(|&x| x == want), "offset {offset}: {s:?}");
        let r = trace
            .iter()
            .find(|r| r.space == Space::Storage)
            .ok_or_else(|| anyhow::anyhow!("no storage request"))?;
        assert_eq!((r.bytes, r.lanes.len(), r.access), (4, 32, Access::Read));
        assert_eq!(
            r.target,
            Target::Binding {
                group: 0,
                binding: 1
            }
        );
    }
    for (stride, want) in [(1u32, 4usize), (2, 8), (4, 16), (8, 32), (16, 32)] {
        let (_, _, trace) = run_copy("copy_stride", n, stride, (n * stride) as usize, 256)?;
        let s = storage_sectors(&trace);
        assert_eq!(s.len(), 2 * n as usize / 32);
        assert!(s.iter().all(|&x| x == want), "stride {stride}: {s:?}");
    }
    // vec4: one request of 16 bytes per lane, 512 bytes per subgroup = 16 sectors.
    let k = suite_kernel("copy_peak", 256)?;
    let mut b = vec![
        bind(0, 0, words(&[n, 0, 0, 0])),
        bind(0, 1, vec![0; 16 * n as usize]),
        bind(0, 2, vec![0; 16 * n as usize]),
    ];
    let trace = collect(&k, &mut b, &Launch::all([n / 256, 1, 1], 32))?;
    let st: Vec<&Req> = trace.iter().filter(|r| r.space == Space::Storage).collect();
    assert_eq!(st.len(), 2 * n as usize / 32);
    assert!(st.iter().all(|r| r.bytes == 16 && sectors(r) == 16));
    // Program order per subgroup: read src, then write dst.
    let first: Vec<(u32, Access)> = trace
        .iter()
        .filter(|r| r.workgroup == [0, 0, 0] && r.subgroup == 0 && r.space == Space::Storage)
        .map(|r| (r.bytes, r.access))
        .collect();
    assert_eq!(first, vec![(16, Access::Read), (16, Access::Write)]);
    // The uniform `params.n` sits at a fixed address: a constant operand, no request.
    assert!(trace.iter().all(|r| r.space != Space::Uniform));
    Ok(())
}

#[test]
#[expect(
    clippy::cast_possible_truncation,
    reason = "test sizes of a few thousand"
)]
fn window_of_workgroups_keeps_grid_index_math() -> anyhow::Result<()> {
    let k = suite_kernel("copy_offset", 32)?;
    let n = 32 * 12;
    let src = floats(n, 1);
    let mut b = vec![
        bind(0, 0, words(&[n as u32, 0, 0, 0])),
        bind(0, 1, words(&src)),
        bind(0, 2, words(&vec![0; n])),
    ];
    // Grid 4 x 3: workgroups 5..7 are (1,1) and (2,1).
    let launch = Launch {
        num_workgroups: [4, 3, 1],
        subgroup_size: 32,
        workgroups: 5..7,
        costs: Default::default(),
    };
    let trace = collect(&k, &mut b, &launch)?;
    let dst = from_words(&b[2].data);
    for (i, (&d, &s)) in dst.iter().zip(&src).enumerate() {
        let want = if (5 * 32..7 * 32).contains(&i) { s } else { 0 };
        assert_eq!(d, want, "element {i}");
    }
    let wgs: HashSet<[u32; 3]> = trace.iter().map(|r| r.workgroup).collect();
    assert_eq!(wgs, HashSet::from([[1, 1, 0], [2, 1, 0]]));
    Ok(())
}

const REVERSE: &str = r"
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
var<workgroup> tile: array<u32, 64>;

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let base = wid.x * 64u;
    tile[lid] = data[base + lid];
    workgroupBarrier();
    data[base + lid] = tile[63u - lid];
}
";

#[test]
fn workgroup_exchange_across_barrier() -> anyhow::Result<()> {
    let k = Kernel::load("reverse", REVERSE, &[])?;
    let v: Vec<u32> = (0..192).map(|i| i * 3 + 1).collect();
    let mut b = vec![bind(0, 0, words(&v))];
    let trace = collect(&k, &mut b, &Launch::all([3, 1, 1], 16))?;
    let got = from_words(&b[0].data);
    for wg in 0..3 {
        for i in 0..64 {
            assert_eq!(got[wg * 64 + i], v[wg * 64 + 63 - i]);
        }
    }
    // Workgroup requests: a store then a load per subgroup of 16; the load is reversed.
    let wg: Vec<&Req> = trace
        .iter()
        .filter(|r| r.space == Space::Workgroup && r.workgroup == [0, 0, 0])
        .collect();
    assert_eq!(wg.len(), 8);
    assert!(wg.iter().all(|r| r.target == Target::Workgroup { var: 0 }));
    assert_eq!(wg[0].access, Access::Write);
    assert_eq!(wg[4].access, Access::Read);
    assert_eq!(wg[4].addresses[0], 63 * 4);
    assert_eq!(k.workgroup_vars(), vec!["tile".to_string()]);
    Ok(())
}

const CONTROL: &str = r"
@group(0) @binding(0) var<storage, read_write> out: array<i32>;

fn f(x: i32) -> i32 {
    if x % 3 == 0 {
        return x * 2;
    }
    return x + 1;
}

@compute @workgroup_size(8, 4)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let id = gid.y * nwg.x * 8u + gid.x;
    let n = i32(id);
    var acc = 0;
    for (var i = 0; i < 100; i++) {
        if i > n {
            break;
        }
        if (i & 1) == 1 {
            continue;
        }
        if i % 4 == 0 {
            acc += f(i);
        } else {
            acc -= i;
        }
        switch i % 5 {
            case 0: {
                acc += 7;
            }
            case 1, 2: {
                acc ^= 3;
            }
            default: {
                acc += 1;
            }
        }
    }
    var j = 0u;
    loop {
        j += 1u;
        if j == 3u {
            continue;
        }
        acc += i32(j) * 10;
        continuing {
            break if j >= id % 7u;
        }
    }
    out[id] = clamp(acc, -1000, 1000) + select(0, 10000, n > 10) + max(n - 60, 0);
}
";

fn control_twin(id: u32) -> i32 {
    let f = |x: i32| if x % 3 == 0 { x * 2 } else { x + 1 };
    let n = id as i32;
    let mut acc = 0i32;
    for i in 0..100 {
        if i > n {
            break;
        }
        if (i & 1) == 1 {
            continue;
        }
        if i % 4 == 0 {
            acc += f(i);
        } else {
            acc -= i;
        }
        match i % 5 {
            0 => acc += 7,
            1 | 2 => acc ^= 3,
            _ => acc += 1,
        }
    }
    let mut j = 0u32;
    loop {
        j += 1;
        if j != 3 {
            acc += j as i32 * 10;
        }
        if j >= id % 7 {
            break;
        }
    }
    acc.clamp(-1000, 1000) + if n > 10 { 10000 } else { 0 } + (n - 60).max(0)
}

#[test]
fn divergent_control_flow_matches_cpu_loop() -> anyhow::Result<()> {
    let k = Kernel::load("control", CONTROL, &[])?;
    assert_eq!(k.workgroup_size(), [8, 4, 1]);
    let mut b = vec![bind(0, 0, vec![0; 4 * 128])];
    // 2 x 2 workgroups of 8 x 4: ids 0..128.
    run(&k, &mut b, &Launch::all([2, 2, 1], 8), &mut NoTrace)?;
    let got = from_words(&b[0].data);
    for id in 0..128u32 {
        assert_eq!(got[id as usize] as i32, control_twin(id), "invocation {id}");
    }
    Ok(())
}

const SUBGROUPS: &str = r"
@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> sums: array<u32>;
@group(0) @binding(2) var<storage, read_write> butterfly: array<u32>;
@group(0) @binding(3) var<storage, read_write> misc: array<vec4<u32>>;

@compute @workgroup_size(128)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(subgroup_size) sgs: u32,
    @builtin(subgroup_invocation_id) sid: u32,
    @builtin(subgroup_id) sg: u32,
    @builtin(num_subgroups) nsg: u32,
) {
    let x = input[gid.x];
    let s = subgroupAdd(x);
    var v = x;
    for (var m = 1u; m < sgs; m = m * 2u) {
        v += subgroupShuffleXor(v, m);
    }
    let odd = subgroupBallot((x & 1u) == 1u);
    let bal = countOneBits(odd.x) + countOneBits(odd.y) + countOneBits(odd.z) + countOneBits(odd.w);
    let first = subgroupBroadcastFirst(x);
    let third = subgroupBroadcast(x, 3u);
    let down = subgroupShuffleDown(x, 1u);
    let scan = subgroupExclusiveAdd(x);
    if sid == 0u {
        sums[gid.x / sgs] = s;
    }
    butterfly[gid.x] = v;
    misc[gid.x] = vec4<u32>(bal + 1000u * (sg + 100u * nsg), first + third, down, scan);
}
";

#[test]
#[expect(
    clippy::cast_possible_truncation,
    reason = "256 lanes and subgroups of at most 128"
)]
fn subgroup_operations_at_several_sizes() -> anyhow::Result<()> {
    let k = Kernel::load("subgroups", SUBGROUPS, &[])?;
    let n = 256usize;
    let input: Vec<u32> = (0..n as u32).map(|i| i * i % 97 + 1).collect();
    for sgs in [4usize, 8, 16, 32, 64, 128] {
        let mut b = vec![
            bind(0, 0, words(&input)),
            bind(0, 1, vec![0; 4 * n]),
            bind(0, 2, vec![0; 4 * n]),
            bind(0, 3, vec![0; 16 * n]),
        ];
        run(
            &k,
            &mut b,
            &Launch::all([2, 1, 1], sgs as u32),
            &mut NoTrace,
        )?;
        let sums = from_words(&b[1].data);
        let fly = from_words(&b[2].data);
        let misc = from_words(&b[3].data);
        for g in 0..n / sgs {
            let lanes = &input[g * sgs..(g + 1) * sgs];
            let total: u32 = lanes.iter().sum();
            assert_eq!(sums[g], total, "subgroup size {sgs}, subgroup {g}");
            let odd = lanes.iter().filter(|&&x| x & 1 == 1).count() as u32;
            let mut prefix = 0;
            for (i, &x) in lanes.iter().enumerate() {
                let gid = g * sgs + i;
                assert_eq!(fly[gid], total, "butterfly, size {sgs}, lane {gid}");
                let sg_in_wg = ((gid % 128) / sgs) as u32;
                let nsg = (128 / sgs) as u32;
                let down = if i + 1 < sgs { lanes[i + 1] } else { x };
                let want = [
                    odd + 1000 * (sg_in_wg + 100 * nsg),
                    lanes[0] + lanes[3],
                    down,
                    prefix,
                ];
                assert_eq!(&misc[4 * gid..4 * gid + 4], &want, "size {sgs}, lane {gid}");
                prefix += x;
            }
        }
    }
    Ok(())
}

const ATOMICS: &str = r"
@group(0) @binding(0) var<storage, read_write> counter: array<atomic<u32>, 2>;
var<workgroup> local_count: atomic<u32>;

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) lid: u32) {
    atomicAdd(&local_count, lid);
    workgroupBarrier();
    if lid == 0u {
        atomicAdd(&counter[0], atomicLoad(&local_count));
    }
    atomicMax(&counter[1], lid);
}
";

#[test]
fn atomics_accumulate_and_trace_as_atomic() -> anyhow::Result<()> {
    let k = Kernel::load("atomics", ATOMICS, &[])?;
    let mut b = vec![bind(0, 0, vec![0; 8])];
    let trace = collect(&k, &mut b, &Launch::all([5, 1, 1], 32))?;
    assert_eq!(from_words(&b[0].data), vec![5 * (63 * 64 / 2), 63]);
    assert!(
        trace
            .iter()
            .any(|r| r.access == Access::Atomic && r.space == Space::Workgroup)
    );
    assert!(
        trace
            .iter()
            .any(|r| r.access == Access::Atomic && r.space == Space::Storage)
    );
    Ok(())
}

#[test]
fn unsupported_construct_is_named() -> anyhow::Result<()> {
    let wgsl = r"
@group(0) @binding(0) var tex: texture_2d<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(1)
fn main() {
    out[0] = f32(textureDimensions(tex).x);
}
";
    let k = Kernel::load("texture_size", wgsl, &[])?;
    let mut b = vec![bind(0, 1, vec![0; 4])];
    let err = run(&k, &mut b, &Launch::all([1, 1, 1], 32), &mut NoTrace)
        .err()
        .ok_or_else(|| anyhow::anyhow!("textureDimensions ran"))?
        .to_string();
    assert!(err.contains("Expression::ImageQuery"), "{err}");
    assert!(err.contains("texture_size"), "{err}");
    Ok(())
}

/// textureLoad of an r32float texture reads the texel at (x, y) of its rows, traced as a
/// storage read of that word; a texture bound as a plain buffer is an error.
#[test]
fn texture_load_reads_the_texel_of_its_row() -> anyhow::Result<()> {
    let wgsl = r"
@group(0) @binding(0) var tex: texture_2d<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(4)
fn main(@builtin(local_invocation_index) i: u32) {
    out[i] = textureLoad(tex, vec2(i % 2u, i / 2u + 1u), 0).x;
}
";
    let k = Kernel::load("texture_read", wgsl, &[])?;
    // Three rows of two texels: 0 1 / 2 3 / 4 5.
    let texels: Vec<u8> = (0..6).flat_map(|v| (v as f32).to_le_bytes()).collect();
    let texture = BoundBuffer {
        texture_width: Some(2),
        ..bind(0, 0, texels.clone())
    };
    let mut b = vec![texture, bind(0, 1, vec![0; 16])];
    let mut trace = Vec::new();
    run(
        &k,
        &mut b,
        &Launch::all([1, 1, 1], 32),
        &mut |r: &Request| {
            if r.access == Access::Read {
                trace.push(r.addresses.to_vec());
            }
        },
    )?;
    let out: Vec<f32> = bytemuck::pod_collect_to_vec(&b[1].data);
    assert_eq!(out, [2.0, 3.0, 4.0, 5.0]);
    assert_eq!(trace, [vec![8, 12, 16, 20]]);
    let mut b = vec![bind(0, 0, texels), bind(0, 1, vec![0; 16])];
    let err = run(&k, &mut b, &Launch::all([1, 1, 1], 32), &mut NoTrace)
        .err()
        .ok_or_else(|| anyhow::anyhow!("a buffer read as a texture"))?
        .to_string();
    assert!(err.contains("bound as a buffer"), "{err}");
    Ok(())
}

#[test]
fn out_of_bounds_is_an_error_naming_the_shader() -> anyhow::Result<()> {
    let k = suite_kernel("copy_offset", 64)?;
    let n = 128u32;
    let mut b = vec![
        bind(0, 0, words(&[n, 1, 0, 0])),
        bind(0, 1, vec![0; 4 * n as usize]), // one element short for offset 1
        bind(0, 2, vec![0; 4 * (n as usize + 1)]),
    ];
    let err = run(&k, &mut b, &Launch::all([2, 1, 1], 32), &mut NoTrace)
        .err()
        .ok_or_else(|| anyhow::anyhow!("out-of-bounds read ran"))?;
    assert!(matches!(err, SimError::OutOfBounds { .. }), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("copy_offset") && msg.contains("`src`"),
        "{msg}"
    );
    // A missing binding and a bad parse are named too.
    let mut none: Vec<BoundBuffer> = Vec::new();
    let err = run(&k, &mut none, &Launch::all([1, 1, 1], 32), &mut NoTrace)
        .err()
        .ok_or_else(|| anyhow::anyhow!("ran without buffers"))?;
    assert!(matches!(err, SimError::MissingBinding { .. }), "{err}");
    assert!(matches!(
        Kernel::load("broken", "fn main( {", &[]),
        Err(SimError::Parse { .. })
    ));
    Ok(())
}

/// `cargo test --release --lib sim::tests::speed -- --ignored --nocapture`
#[test]
#[ignore = "timing; run in release"]
fn speed_of_a_million_invocation_copy() -> anyhow::Result<()> {
    let k = suite_kernel("copy_offset", 256)?;
    let n = 4096 * 256u32;
    let mut b = vec![
        bind(0, 0, words(&[n, 0, 0, 0])),
        bind(0, 1, vec![1; 4 * n as usize]),
        bind(0, 2, vec![0; 4 * n as usize]),
    ];
    let launch = Launch::all([4096, 1, 1], 32);
    // Each twice: the first pass also pays for first-touching the buffers.
    for (label, traced) in [
        ("no-op sink", false),
        ("no-op sink", false),
        ("counting sink", true),
        ("counting sink", true),
    ] {
        let t = std::time::Instant::now();
        let mut count = 0u64;
        let mut counter = |r: &Request<'_>| count += r.addresses.len() as u64;
        let stats = if traced {
            run(&k, &mut b, &launch, &mut counter)?
        } else {
            run(&k, &mut b, &launch, &mut NoTrace)?
        };
        let s = t.elapsed().as_secs_f64();
        println!(
            "{label}: {:.1} ms for {} invocations, {} lane-ops, {:.2} ns per lane-op, {} requests",
            s * 1e3,
            n,
            stats.lane_ops,
            s * 1e9 / stats.lane_ops as f64,
            stats.requests,
        );
        assert!(s < 2.0, "{label}: {s} s");
    }
    assert_eq!(b[2].data, b[1].data);
    Ok(())
}

const STRUCTS: &str = r"
struct Item {
    a: vec3<f32>,
    b: f32,
    c: vec2<u32>,
}

@group(0) @binding(0) var<storage, read> items: array<Item>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
var<private> scale: f32 = 2.0;

fn add_to(p: ptr<function, f32>, x: f32) {
    *p = *p + x;
}

@compute @workgroup_size(32)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let n = arrayLength(&items);
    if gid.x >= n {
        return;
    }
    let it = items[gid.x];
    var acc = 0.0;
    add_to(&acc, dot(it.a, vec3<f32>(1.0, 2.0, 3.0)));
    add_to(&acc, it.b * scale);
    var table = array<f32, 4>(10.0, 20.0, 30.0, 40.0);
    acc += table[it.c.x % 4u] + f32(it.c.y);
    out[gid.x] = acc;
}
";

#[test]
#[expect(clippy::cast_possible_truncation, reason = "40 items")]
fn structs_pointers_private_and_leaf_split() -> anyhow::Result<()> {
    let k = Kernel::load("structs", STRUCTS, &[])?;
    let n = 40usize; // 2 workgroups of 32, the second one partly past the end
    let mut items = Vec::new();
    for i in 0..n as u32 {
        // Item: a at 0 (12 B), b at 12, c at 16 (8 B); 32-byte stride.
        let a = [i as f32, 0.25 * i as f32, 1.5];
        let b = 3.0 + i as f32;
        items.extend(a.map(f32::to_bits));
        items.extend([b.to_bits(), i * 7, i / 3, 0, 0]);
    }
    let mut bd = vec![bind(0, 0, words(&items)), bind(0, 1, vec![0; 4 * 64])];
    let trace = collect(&k, &mut bd, &Launch::all([2, 1, 1], 32))?;
    let out = from_words(&bd[1].data);
    let table = [10.0f32, 20.0, 30.0, 40.0];
    for i in 0..64usize {
        let want = if i < n {
            let (a0, a1, a2) = (i as f32, 0.25 * i as f32, 1.5f32);
            let mut acc = 0.0f32;
            acc += a0 * 1.0 + a1 * 2.0 + a2 * 3.0;
            acc += (3.0 + i as f32) * 2.0;
            acc += table[(i * 7) % 4] + (i / 3) as f32;
            acc.to_bits()
        } else {
            0
        };
        assert_eq!(out[i], want, "item {i}");
    }
    // The struct load is split into its leaves, in layout order, per subgroup.
    let reads = |space: Space| -> Vec<(u32, u64, usize)> {
        trace
            .iter()
            .filter(|r| r.access == Access::Read && r.workgroup == [1, 0, 0])
            .filter(|r| r.space == space)
            .map(|r| (r.bytes, r.addresses[0], r.lanes.len()))
            .collect()
    };
    assert_eq!(
        reads(Space::Storage),
        vec![(12, 32 * 32, 8), (4, 32 * 32 + 12, 8), (8, 32 * 32 + 16, 8)]
    );
    // The table indexed by data lives in local memory, interleaved by invocation:
    // word `it.c.x % 4` of invocation 32 (the first of workgroup 1) of 64.
    let c_x = 32 * 7 % 4;
    assert_eq!(reads(Space::Local), vec![(4, 4 * (c_x * 64 + 32), 8)]);
    // The pointer argument's `*p` is the caller's register, not local memory.
    assert!(
        trace
            .iter()
            .all(|r| r.space != Space::Local || r.bytes == 4)
    );
    Ok(())
}

/// Predicted GB/s of each of `experiment`'s cases at a 2048 × 2048 matrix (16 MiB, far
/// beyond a 1 MiB L2), by param.
fn transpose_gbps(
    experiment: &crate::suite::Experiment,
    device: &super::device::DeviceModel,
) -> anyhow::Result<Vec<(String, f64)>> {
    let sizing = crate::suite::Sizing {
        matrix: Some((2048, 2048)),
        ..crate::suite::Sizing::nominal(false)
    };
    (experiment.cases)(&sizing)
        .iter()
        .map(|case| {
            let p = crate::backend::sim::predict(experiment, case, device)?;
            Ok((case.params.to_string(), p.effective_gbps))
        })
        .collect()
}

#[test]
fn pascal_transpose_reads_columns_faster_and_thin_blocks_win() -> anyhow::Result<()> {
    // On Pascal the read-only input is cached in the L1/texture caches, so a column
    // read is fetched once per sector and its other warps hit; a column write is one
    // partial sector per lane merged in the L2. Reading columns and writing rows wins,
    // as the CUDA texts measured.
    use crate::suite::families::transpose::{NAIVE_COL, NAIVE_ROW};
    let pascal = super::device::preset("gtx1050ti").copied();
    let pascal = pascal.ok_or_else(|| anyhow::anyhow!("no gtx1050ti preset"))?;
    let col = transpose_gbps(&NAIVE_COL, &pascal)?;
    let row = transpose_gbps(&NAIVE_ROW, &pascal)?;
    let at = |cases: &[(String, f64)], block: &str| {
        cases
            .iter()
            .find(|(p, _)| p.ends_with(&format!("block={block}")))
            .map(|&(_, g)| g)
            .ok_or_else(|| anyhow::anyhow!("no block={block} in {cases:?}"))
    };
    assert!(
        at(&col, "32x16")? > 1.5 * at(&row, "32x16")?,
        "{col:?} {row:?}"
    );
    // A 32 × 32 workgroup pushes 32 column reads of 32 lines each through its SM's
    // L1 before its last load leaves: thinner workgroups wait less.
    assert!(at(&col, "32x8")? > 1.05 * at(&col, "32x32")?, "{col:?}");
    Ok(())
}

const ISSUE_SKEW: &str = r"
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
override WG: u32 = 64;
var<workgroup> tile: array<u32, 1024>;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32) {
    tile[lid] = lid * 3u + 1u;
    workgroupBarrier();
    data[lid] = tile[WG - 1u - lid] + 5u;
}
";

/// The critical path of one workgroup of `wg` invocations in subgroups of 32, on an
/// SM of 4 schedulers at 0.25 GHz: one instruction per ns.
fn skewed_critical_ns(wg: u32) -> anyhow::Result<(f64, u64)> {
    let k = Kernel::load("issue_skew", ISSUE_SKEW, &[("WG", f64::from(wg))])?;
    let mut b = vec![bind(0, 0, words(&vec![0; wg as usize]))];
    let mut launch = Launch::all([1, 1, 1], 32);
    launch.costs.schedulers = 4.0;
    launch.costs.clock_ghz = 0.25;
    let stats = run(&k, &mut b, &launch, &mut NoTrace)?;
    Ok((stats.critical_ns, stats.warp_ops))
}

#[test]
fn subgroups_beyond_the_schedulers_delay_barriers_and_the_end() -> anyhow::Result<()> {
    // Up to one subgroup per scheduler issues side by side: nothing waits.
    assert_eq!(skewed_critical_ns(128)?.0, 0.0);
    // 16 subgroups: the last issues each instruction 12 turns after the first.
    let (critical_ns, warp_ops) = skewed_critical_ns(512)?;
    assert_eq!(critical_ns, (warp_ops / 16 * 12) as f64);
    Ok(())
}

/// `compute_f32` or `compute_int` with `fmas` multiply-adds per element, workgroups of
/// 64, over `vec4s` vec4s.
fn compute_bindings(vec4s: u32, a: u32, b: u32) -> Vec<BoundBuffer> {
    vec![
        bind(0, 0, words(&[vec4s, a, b, 0])),
        bind(0, 1, words(&floats(4 * vec4s as usize, 1))),
        bind(0, 2, vec![0; 16 * vec4s as usize]),
    ]
}

#[test]
fn multiply_adds_are_counted_per_lane_and_component_by_pipe() -> anyhow::Result<()> {
    let fmas = 16u32;
    let vec4s = 128u32;
    for (name, f32_pipe) in [("compute_f32", true), ("compute_int", false)] {
        let source = crate::suite::shaders::source(name).unwrap();
        let overrides = [("WORKGROUP_SIZE", 64.0), ("FMAS", f64::from(fmas))];
        let kernel = Kernel::load(name, source, &overrides)?;
        let mut b = compute_bindings(vec4s, (-1.0f32).to_bits(), 3.0f32.to_bits());
        let stats = run(&kernel, &mut b, &Launch::all([2, 1, 1], 32), &mut NoTrace)?;
        // Each lane's vec4 takes `fmas` multiply-adds on each of its four components.
        let per_vec4 = 4 * u64::from(fmas);
        let lanes = u64::from(vec4s);
        if f32_pipe {
            assert_eq!(stats.multiply_adds.f32, lanes * per_vec4);
            // The workgroup's index (`wid.y * nwg.x`): two built-ins, one multiply.
            assert_eq!(stats.multiply_adds.int, lanes);
        } else {
            assert_eq!(stats.multiply_adds.f32, 0);
            assert_eq!(stats.multiply_adds.int, lanes * per_vec4 + lanes);
        }
    }
    // A multiply by a constant is shifts and adds, not the integer pipe's.
    let shifted = "
        @group(0) @binding(0) var<storage, read_write> out: array<u32>;
        @compute @workgroup_size(32)
        fn main(@builtin(local_invocation_index) l: u32) { out[l] = l * 12u; }";
    let kernel = Kernel::load("shifted", shifted, &[])?;
    let mut b = vec![bind(0, 0, vec![0; 128])];
    let stats = run(&kernel, &mut b, &Launch::all([1, 1, 1], 32), &mut NoTrace)?;
    assert_eq!(stats.multiply_adds, super::exec::MultiplyAdds::default());
    Ok(())
}

#[test]
fn the_compute_sweep_turns_from_memory_to_the_multiply_add_pipes() -> anyhow::Result<()> {
    use crate::suite::families::compute::Element;
    use crate::suite::{Key, Sizing};
    let h100 = *super::device::preset("h100").unwrap();
    for element in [Element::F32, Element::Int] {
        let experiment = element.experiment();
        let cases = (experiment.cases)(&Sizing::nominal(true));
        let at = |fmas: u64| {
            let case = cases
                .iter()
                .find(|c| c.params.number(Key::Rounds) == Some(fmas));
            crate::backend::sim::predict(experiment, case.unwrap(), &h100)
        };
        assert_ne!(at(1)?.bound, super::model::Bound::Issue, "{element:?}");
        let many = at(1024)?;
        assert_eq!(many.bound, super::model::Bound::Issue, "{element:?}");
        // Every element's 1024 multiply-adds at the pipe's rate, whole chip.
        let (per_clock, term) = match element {
            Element::F32 => (h100.f32_fma_per_clock, many.terms.f32_fma),
            _ => (h100.int_mad_per_clock, many.terms.int_mad),
        };
        let elements = cases[0].bytes / 8;
        let expected_s = (elements * 1024) as f64 / (per_clock * 132.0 * h100.clock_ghz * 1e9);
        assert!(
            (term / expected_s - 1.0).abs() < 0.01,
            "{element:?}: {term} vs {expected_s}"
        );
        assert_eq!(many.time_s, term, "{element:?}");
    }
    Ok(())
}

const ROW_SUM: &str = r"
@group(0) @binding(0) var<uniform> n: vec4<u32>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(32)
fn main(@builtin(local_invocation_index) row: u32) {
    var sum = 0.0;
    for (var i = 0u; i < LIMIT; i++) {
        sum += x[row * 64u + i];
    }
    y[row] = sum;
}
";

/// The dependent storage rounds on the critical path of one subgroup that sums rows
/// of 64 floats, its loop bounded by `limit`: a constant or a uniform.
fn row_sum_rounds(limit: &str) -> anyhow::Result<u64> {
    let k = Kernel::load("row_sum", &ROW_SUM.replace("LIMIT", limit), &[])?;
    let mut b = vec![
        bind(0, 0, words(&[64, 0, 0, 0])),
        bind(0, 1, words(&floats(32 * 64, 1))),
        bind(0, 2, vec![0; 4 * 32]),
    ];
    let mut launch = Launch::all([1, 1, 1], 32);
    launch.costs.global_ns = 100.0;
    Ok(run(&k, &mut b, &launch, &mut NoTrace)?.critical_rounds)
}

#[test]
fn a_loop_with_a_run_time_trip_count_overlaps_its_loads_as_an_unrolled_one() -> anyhow::Result<()> {
    // Both loops wait for the first iteration's load (run before the interpreter knows
    // the loop's form); the rest issue at once. Waiting for each load instead, as a
    // rolled loop does, moved held-out figures of `simulate --validate` by up to 4.4
    // points (docs/simulator.md, The layer norm at 2^17 rows).
    assert_eq!(row_sum_rounds("64u")?, 2);
    assert_eq!(row_sum_rounds("n.x")?, 2);
    Ok(())
}
