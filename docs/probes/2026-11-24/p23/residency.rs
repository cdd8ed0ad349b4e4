//! Probe: the most workgroups resident at once, per width, on the Vulkan adapter.
//! Each workgroup counts itself in on entry and out after a long chain of dependent
//! loads; the peak of the live count over the SM count is the residency per SM.
use wgpu::util::DeviceExt;

const WGSL: &str = r#"
@group(0) @binding(0) var<storage, read_write> counters: array<atomic<u32>, 2>;
@group(0) @binding(1) var<storage, read> next: array<u32>;
@group(0) @binding(2) var<storage, read_write> sink: array<u32>;
override WG: u32 = 128;
override ITERS: u32 = 400;
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    if lid == 0u {
        let live = atomicAdd(&counters[0], 1u) + 1u;
        atomicMax(&counters[1], live);
    }
    var x = (wid.x * WG + lid) & 1048575u;
    for (var k = 0u; k < ITERS; k++) {
        x = next[x];
    }
    sink[wid.x * WG + lid] = x;
    workgroupBarrier();
    if lid == 0u {
        atomicSub(&counters[0], 1u);
    }
}
"#;

fn main() {
    let sms: u32 = std::env::var("SMS").ok().and_then(|s| s.parse().ok()).unwrap_or(132);
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default())).expect("adapter");
    println!("adapter: {:?}", adapter.get_info().name);
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        required_limits: adapter.limits(),
        ..Default::default()
    }))
    .expect("device");
    let module = unsafe {
        device.create_shader_module_trusted(
            wgpu::ShaderModuleDescriptor { label: None, source: wgpu::ShaderSource::Wgsl(WGSL.into()) },
            wgpu::ShaderRuntimeChecks::unchecked(),
        )
    };
    let n = 1u32 << 20;
    let next: Vec<u32> = (0..n).map(|i| i.wrapping_mul(1664525).wrapping_add(1013904223) & (n - 1)).collect();
    let next = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: None,
        contents: bytemuck::cast_slice(&next),
        usage: wgpu::BufferUsages::STORAGE,
    });
    let groups = sms * 48;
    let sink = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: u64::from(groups) * 1024 * 4,
        usage: wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
    for wg in [64u32, 128, 256, 512, 1024] {
        for iters in [400u32, 40] {
            let counters = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: None,
                contents: bytemuck::cast_slice(&[0u32, 0]),
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            });
            let read = device.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size: 8,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: None,
                layout: None,
                module: &module,
                entry_point: Some("main"),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants: &[("WG", f64::from(wg)), ("ITERS", f64::from(iters))],
                    zero_initialize_workgroup_memory: false,
                },
                cache: None,
            });
            let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &pipeline.get_bind_group_layout(0),
                entries: &[
                    wgpu::BindGroupEntry { binding: 0, resource: counters.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 1, resource: next.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 2, resource: sink.as_entire_binding() },
                ],
            });
            let mut encoder = device.create_command_encoder(&Default::default());
            {
                let mut pass = encoder.begin_compute_pass(&Default::default());
                pass.set_pipeline(&pipeline);
                pass.set_bind_group(0, &bind, &[]);
                pass.dispatch_workgroups(groups, 1, 1);
            }
            encoder.copy_buffer_to_buffer(&counters, 0, &read, 0, 8);
            queue.submit([encoder.finish()]);
            read.map_async(wgpu::MapMode::Read, .., |r| r.expect("map"));
            device.poll(wgpu::PollType::wait_indefinitely()).expect("poll");
            let words: Vec<u32> = bytemuck::cast_slice(&read.get_mapped_range(..).expect("range")).to_vec();
            println!(
                "vulkan wg={wg} iters={iters} groups={groups} live_after={} peak={} per_sm={:.2} invocations_per_sm={:.0}",
                words[0],
                words[1],
                f64::from(words[1]) / f64::from(sms),
                f64::from(words[1]) * f64::from(wg) / f64::from(sms)
            );
        }
    }
}
