//! Sessions on several adapters measuring case by case at the same time (`membench run
//! --concurrent`): a barrier whose parties may leave. A party that has measured its last
//! case, or failed, or panicked leaves, and the others go on without it instead of
//! waiting for it for ever.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// The meeting point of a fixed number of parties.
#[derive(Debug)]
pub(crate) struct Lockstep {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Debug)]
struct State {
    /// Parties that have not left.
    parties: usize,
    /// Parties waiting in this round.
    arrived: usize,
    /// Rounds completed: a waiter is released when it changes.
    round: u64,
    /// The parties that met in the last round completed.
    met: usize,
}

/// One party's place in a [`Lockstep`]: it leaves when dropped, if not before.
#[derive(Debug)]
pub struct Party<'l> {
    lockstep: &'l Lockstep,
    left: AtomicBool,
}

impl Lockstep {
    pub(crate) fn new(parties: usize) -> Self {
        Lockstep {
            state: Mutex::new(State {
                parties,
                arrived: 0,
                round: 0,
                met: 0,
            }),
            changed: Condvar::new(),
        }
    }

    /// The places of the `parties` of [`Lockstep::new`], one for each.
    pub(crate) fn parties(&self) -> Vec<Party<'_>> {
        (0..self.lock().parties)
            .map(|_| Party {
                lockstep: self,
                left: AtomicBool::new(false),
            })
            .collect()
    }

    /// The state; a party that panicked holding it leaves it consistent (every change
    /// is a single assignment), so a poisoned lock is taken as it is.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Ends the round if every party still in has arrived.
    fn release_if_complete(&self, state: &mut State) {
        if state.arrived > 0 && state.arrived >= state.parties {
            state.met = state.arrived;
            state.arrived = 0;
            state.round += 1;
            self.changed.notify_all();
        }
    }
}

impl Party<'_> {
    /// Waits until every party that has not left is waiting too (at once if it is
    /// the last one, or alone), and says how many met, this one included: fewer than
    /// the lockstep's parties once some have left. (No round completes while this
    /// party waits in it, so the count read is that of its own round.)
    pub fn wait(&self) -> usize {
        if self.left.load(Ordering::SeqCst) {
            return 1;
        }
        let lockstep = self.lockstep;
        let mut state = lockstep.lock();
        state.arrived += 1;
        let round = state.round;
        lockstep.release_if_complete(&mut state);
        while state.round == round {
            state = lockstep
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        state.met
    }

    /// Stops taking part: the others no longer wait for this party. Once; later calls
    /// and [`Party::wait`] do nothing.
    pub fn leave(&self) {
        if self.left.swap(true, Ordering::SeqCst) {
            return;
        }
        let lockstep = self.lockstep;
        let mut state = lockstep.lock();
        state.parties -= 1;
        lockstep.release_if_complete(&mut state);
    }
}

impl Drop for Party<'_> {
    fn drop(&mut self) {
        self.leave();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn parties_meet_every_round_and_one_that_leaves_holds_nobody() {
        let lockstep = Lockstep::new(3);
        // Rounds each party has passed; at a meeting, no party is a round ahead of
        // one still in.
        let passed: Vec<AtomicUsize> = (0..3).map(|_| AtomicUsize::new(0)).collect();
        std::thread::scope(|scope| {
            for (index, party) in lockstep.parties().into_iter().enumerate() {
                let passed = &passed;
                scope.spawn(move || {
                    // Party 2 leaves after one round, by being dropped.
                    let rounds = if index == 2 { 1 } else { 20 };
                    for round in 0..rounds {
                        let met = party.wait();
                        assert_eq!(met, if round == 0 { 3 } else { 2 });
                        for other in passed.iter().take(2) {
                            assert!(other.load(Ordering::SeqCst) >= round);
                        }
                        passed[index].fetch_add(1, Ordering::SeqCst);
                    }
                });
            }
        });
        let passed: Vec<usize> = passed.iter().map(|p| p.load(Ordering::SeqCst)).collect();
        assert_eq!(passed, [20, 20, 1]);
    }

    #[test]
    fn a_party_alone_or_gone_does_not_wait() {
        let lockstep = Lockstep::new(2);
        let mut parties = lockstep.parties();
        let last = parties.pop().unwrap();
        drop(parties);
        assert_eq!(last.wait(), 1);
        last.leave();
        assert_eq!(last.wait(), 1);
        last.leave();
        assert_eq!(lockstep.lock().parties, 0);
    }
}
