//! A case made ready to dispatch: its pipeline compiled, its inputs uploaded, its
//! outputs poisoned and all of them bound; and one compute pass of it encoded.

use super::GpuContext;
use super::pipelines::{Pipeline, describe_pipeline};
use crate::error::{Error, Result};
use crate::suite::{Buffer, Case, Dispatch, Experiment, WgpuBuild, Words, check_inputs};

/// A case ready to dispatch: pipeline, bound buffers and grid.
#[derive(Debug)]
pub struct BoundKernel {
    pub(super) pipeline: wgpu::ComputePipeline,
    /// One per group, in group order.
    pub(super) bind_groups: Vec<wgpu::BindGroup>,
    /// Each bound resource's group and binding (see [`crate::suite::Case::slots`]).
    pub(super) slots: Vec<naga::ResourceBinding>,
    pub(super) workgroups: [u32; 3],
    pub(super) outputs: Vec<wgpu::Buffer>,
    /// What each binding is bound to, in order: the launch clock binds the same inputs
    /// beside outputs of its own.
    pub(super) bound: Vec<BoundResource>,
    /// How the clock issues the timed dispatches.
    pub(super) dispatch: Dispatch,
}

impl BoundKernel {
    /// A kernel over buffers its caller owns (and checks).
    pub fn new(
        pipeline: wgpu::ComputePipeline,
        bind_group: wgpu::BindGroup,
        workgroups: [u32; 3],
    ) -> Self {
        BoundKernel {
            pipeline,
            bind_groups: vec![bind_group],
            slots: Vec::new(),
            workgroups,
            outputs: Vec::new(),
            bound: Vec::new(),
            dispatch: Dispatch::Pass,
        }
    }

    /// One compute pass of `dispatches` back-to-back dispatches, optionally with
    /// timestamps at its beginning and end.
    pub(crate) fn encode_pass(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        timestamp_writes: Option<wgpu::ComputePassTimestampWrites>,
        dispatches: u32,
    ) {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: None,
            timestamp_writes,
        });
        pass.set_pipeline(&self.pipeline);
        set_bind_groups(&mut pass, &self.bind_groups);
        let [x, y, z] = self.workgroups;
        for _ in 0..dispatches {
            pass.dispatch_workgroups(x, y, z);
        }
    }
}

/// Sets `groups` (one per group, in order) on `pass`.
pub(super) fn set_bind_groups(pass: &mut wgpu::ComputePass<'_>, groups: &[wgpu::BindGroup]) {
    for (index, group) in (0u32..).zip(groups) {
        pass.set_bind_group(index, group, &[]);
    }
}

/// What one binding of a case is bound to.
#[derive(Clone, Debug)]
pub(super) enum BoundResource {
    Buffer(wgpu::Buffer),
    /// An output: written by the kernel, verified.
    Output(wgpu::Buffer),
    /// The view a `texture_2d<f32>` binding reads; it keeps its texture alive.
    Texture(wgpu::TextureView),
}

/// The words of an input not given (refused by [`check_inputs`] first).
static NONE: Words = Words::Held(Vec::new());

impl GpuContext {
    /// Builds the case's pipeline and buffers: `inputs` uploaded, outputs poisoned.
    pub fn build(
        &self,
        experiment: &Experiment,
        case: &Case,
        build: WgpuBuild,
        inputs: &[Words],
    ) -> Result<BoundKernel> {
        let pipeline = describe_pipeline(experiment, case, build)?;
        let limit = self
            .limits
            .max_storage_buffer_binding_size
            .min(self.limits.max_buffer_size);
        let bound_as_buffer = |b: &&Buffer| !matches!(b, Buffer::Texture { .. });
        if let Some(buffer) = case
            .buffers
            .iter()
            .filter(bound_as_buffer)
            .find(|b| b.len_bytes() > limit)
        {
            return Err(Error::SizeLimit {
                what: "a buffer",
                requested: buffer.len_bytes(),
                limit,
            });
        }
        let kernel = self.assemble(&pipeline, inputs, case.workgroups)?;
        Ok(BoundKernel {
            dispatch: case.dispatch,
            ..kernel
        })
    }

    /// Compiles a pipeline and creates its buffers: `inputs` uploaded, outputs
    /// poisoned.
    pub(super) fn assemble(
        &self,
        pipeline: &Pipeline,
        inputs: &[Words],
        workgroups: [u32; 3],
    ) -> Result<BoundKernel> {
        check_inputs(pipeline.buffers, inputs)
            .map_err(|why| Error::Gpu(format!("{}: {why}", pipeline.label)))?;
        self.scoped(|| {
            let compiled = self.pipeline(pipeline)?;
            let mut inputs = inputs.iter();
            let mut bound = Vec::new();
            let mut outputs = Vec::new();
            for (binding, buffer) in pipeline.buffers.iter().enumerate() {
                let label = format!("{}.{binding}", pipeline.label);
                let created = match buffer {
                    Buffer::Uniform(words) => BoundResource::Buffer(self.upload(
                        &label,
                        wgpu::BufferUsages::UNIFORM,
                        words,
                    )?),
                    Buffer::Input(_) => {
                        let words = inputs.next().unwrap_or(&NONE);
                        let usage = wgpu::BufferUsages::STORAGE;
                        BoundResource::Buffer(self.upload_words(&label, usage, words)?)
                    }
                    Buffer::Texture { width, height } => {
                        let words = inputs.next().unwrap_or(&NONE);
                        let texture = self.upload_texture(&label, (*width, *height), words)?;
                        BoundResource::Texture(texture.create_view(&Default::default()))
                    }
                    Buffer::InOut(_) => {
                        let words = inputs.next().unwrap_or(&NONE);
                        // COPY_SRC: read back for verification, as an output is.
                        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
                        let output = self.upload_words(&label, usage, words)?;
                        outputs.push(output.clone());
                        BoundResource::Buffer(output)
                    }
                    Buffer::Output(words) => {
                        let output = self.poisoned(&label, *words)?;
                        outputs.push(output.clone());
                        BoundResource::Output(output)
                    }
                };
                bound.push(created);
            }
            let bind_groups = self.bind(pipeline.label, pipeline.slots, &compiled, &bound);
            Ok(BoundKernel {
                pipeline: compiled,
                bind_groups,
                slots: pipeline.slots.to_vec(),
                workgroups,
                outputs,
                bound,
                dispatch: Dispatch::Pass,
            })
        })?
    }

    /// The bind groups of `compiled` over `bound`, one per group: each buffer at its
    /// slot (see [`crate::suite::Case::slots`]).
    pub(super) fn bind(
        &self,
        label: &str,
        slots: &[naga::ResourceBinding],
        compiled: &wgpu::ComputePipeline,
        bound: &[BoundResource],
    ) -> Vec<wgpu::BindGroup> {
        (0..crate::suite::groups(slots, bound.len()))
            .map(|group| {
                let entries: Vec<wgpu::BindGroupEntry> = bound
                    .iter()
                    .enumerate()
                    .map(|(index, bound)| (crate::suite::slot(slots, index), bound))
                    .filter(|(slot, _)| slot.group == group)
                    .map(|(slot, bound)| wgpu::BindGroupEntry {
                        binding: slot.binding,
                        resource: match bound {
                            BoundResource::Buffer(buffer) | BoundResource::Output(buffer) => {
                                buffer.as_entire_binding()
                            }
                            BoundResource::Texture(view) => {
                                wgpu::BindingResource::TextureView(view)
                            }
                        },
                    })
                    .collect();
                self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some(label),
                    layout: &compiled.get_bind_group_layout(group),
                    entries: &entries,
                })
            })
            .collect()
    }

    /// Dispatches the kernel once and waits for it.
    pub(super) fn dispatch_once(&self, kernel: &BoundKernel) -> Result<()> {
        let mut encoder = self.device.create_command_encoder(&Default::default());
        kernel.encode_pass(&mut encoder, None, 1);
        self.submit_and_wait(encoder.finish())
    }
}
