//! The backends a case runs on: [`wgpu`] (any GPU wgpu drives) and, beside it, the
//! simulator ([`crate::sim`]).

pub mod wgpu;
