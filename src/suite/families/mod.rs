//! One module per family of experiments: each declares its experiments, how they
//! expand into cases, their inputs and CPU references, and the classic result they test.

pub mod bank;
pub mod compute;
pub mod constant;
pub mod copy;
pub mod hierarchy;
pub mod latency;
pub mod launch;
pub(crate) mod localmem;
pub mod reduce;
pub mod stencil;
pub mod subgroup;
pub mod transfer;
pub mod transpose;
