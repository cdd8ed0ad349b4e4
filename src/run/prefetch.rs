//! The next case's data, made beside the measurement of this one on half the cores.

use std::sync::OnceLock;
use std::thread::{Scope, ScopedJoinHandle};

use crate::suite::{Case, CaseData};

/// A case's data for its backends: `None` where every backend skips it, an error where
/// making it failed.
pub(super) type Data = std::result::Result<Option<CaseData>, String>;

/// Makes each case's data, the next one's beside the measurement of this one where
/// enabled.
pub(super) struct Prefetch<'scope, 'env> {
    scope: &'scope Scope<'scope, 'env>,
    enabled: bool,
    next: Option<ScopedJoinHandle<'scope, CaseData>>,
}

impl<'scope, 'env> Prefetch<'scope, 'env> {
    pub(super) fn new(scope: &'scope Scope<'scope, 'env>, enabled: bool) -> Self {
        Prefetch {
            scope,
            enabled,
            next: None,
        }
    }

    /// The data of `case` where `runs` (a backend measures it): made beside the case
    /// before it, or now. `next`'s data is started beside this case's measurement.
    pub(super) fn data(&mut self, case: &Case, runs: bool, next: Option<&'scope Case>) -> Data {
        let made = self.next.take();
        if self.enabled {
            self.next = next
                .filter(|next| next.skip.is_none())
                .map(|next| self.scope.spawn(|| in_data_pool(next)));
        }
        if !runs {
            return Ok(None);
        }
        match made {
            Some(thread) => thread
                .join()
                .map(Some)
                .map_err(|_| "a case's data panicked".to_owned()),
            None => Ok(Some((case.data)())),
        }
    }
}

/// `case`'s data, made on [`data_pool`]'s threads.
fn in_data_pool(case: &Case) -> CaseData {
    match data_pool() {
        Some(pool) => pool.install(|| (case.data)()),
        None => (case.data)(),
    }
}

/// Half the cores, for the next case's data, apart from rayon's global pool, which the
/// measured case's uploads and comparisons use. With one pool a case's first upload took
/// longer than the same upload for the next build; apart, the families that move the
/// most data ran faster (docs/method.md, What a run costs).
fn data_pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads((rayon::current_num_threads() / 2).max(1))
            .thread_name(|i| format!("membench-data-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}
