//! A team of threads that runs one closure together, phase after phase, sharing each phase's
//! work units: the batch-1 decode step (`models::llama`, one token through every layer) is one
//! such run, so threads are handed work once per token, not once per operation (about 150
//! operations per token in SmolLM2-135M, each a rayon hand-off when run as separate parallel
//! calls).
//!
//! The calling thread is a member and never waits for another to arrive: the other members are
//! helpers, jobs on a rayon pool of the team's own, that join when they start. A phase's units
//! go out one at a time from a shared counter ([`Member::split`]); a member leaves a phase when
//! every unit handed out is done, whoever did it. A helper that runs late (the machine busy with
//! other work) finds the phases it missed already handed out and skips them, so it never holds
//! the others back (a barrier that waited for every member would: on a busy 2-core machine one
//! cost about 100 µs). Counters are tagged with their phase's number, so a late member cannot
//! take a unit of a later phase for one it missed. A member reads the shared inputs of a phase
//! only after taking one of its units (see [`Member::split`]): until that unit is done nobody
//! can start the next phase, so the inputs stay as the previous phases left them.

use std::cell::Cell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// A team could not be made (the threads could not be started).
#[derive(Debug, thiserror::Error)]
#[error("could not start a team of {threads} threads: {source}")]
pub struct TeamError {
    threads: usize,
    source: rayon::ThreadPoolBuildError,
}

/// Waits spin this many times before they start yielding the CPU.
const SPINS: usize = 2000;

/// Phases whose counters exist at once (a phase reuses the slot of the phase `SLOTS` before it,
/// which is finished by then).
const SLOTS: usize = 4;

/// A counter tagged with its phase: `phase << 32 | count`.
#[repr(align(128))]
#[derive(Default)]
struct Tagged(AtomicU64);

impl Tagged {
    /// Adds one to the count of `phase` (starting it from 0 when the slot holds an earlier
    /// phase) if it is below `limit`: the count before, or `None` (at the limit, or the slot
    /// holds a later phase).
    fn take(&self, phase: u64, limit: u64) -> Option<u64> {
        let mut cur = self.0.load(Ordering::Acquire);
        loop {
            let (tag, n) = (cur >> 32, cur & 0xFFFF_FFFF);
            let n = match tag.cmp(&phase) {
                std::cmp::Ordering::Less => 0,
                std::cmp::Ordering::Equal => n,
                std::cmp::Ordering::Greater => return None,
            };
            if n >= limit {
                return None;
            }
            match self.0.compare_exchange_weak(cur, phase << 32 | (n + 1), Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Some(n),
                Err(now) => cur = now,
            }
        }
    }

    /// Whether the count of `phase` has reached `limit` (or the slot moved on to a later phase).
    fn reached(&self, phase: u64, limit: u64) -> bool {
        let cur = self.0.load(Ordering::Acquire);
        let (tag, n) = (cur >> 32, cur & 0xFFFF_FFFF);
        tag > phase || (tag == phase && n >= limit)
    }
}

/// What the members of one run share.
#[derive(Default)]
struct Shared {
    /// Units handed out, per phase slot.
    next: [Tagged; SLOTS],
    /// Units done, per phase slot.
    done: [Tagged; SLOTS],
    /// A member panicked: the others leave at their next wait (panicking too).
    failed: AtomicBool,
}

/// `threads` threads (the caller and `threads - 1` helpers) that run closures together.
pub struct Team {
    helpers: Option<rayon::ThreadPool>,
    threads: usize,
    /// One run at a time (runs from several threads take turns).
    running: Mutex<()>,
}

impl Team {
    /// A team of `threads` (at least one) threads, counting the caller of [`Team::run`].
    pub fn new(threads: usize) -> Result<Team, TeamError> {
        let threads = threads.max(1);
        let helpers = if threads > 1 {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads - 1)
                .thread_name(|i| format!("tstlab-team-{i}"))
                .build()
                .map_err(|source| TeamError { threads, source })?;
            Some(pool)
        } else {
            None
        };
        Ok(Team { helpers, threads, running: Mutex::new(()) })
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Runs `f` on the calling thread and on every helper, and returns when all have finished.
    /// Every member must make the same [`Member::split`] calls in the same order.
    pub fn run<F: Fn(&Member) + Sync>(&self, f: F) {
        let _turn = self.running.lock().unwrap_or_else(|e| e.into_inner());
        let shared = Shared::default();
        let member = || Member { shared: &shared, phase: Cell::new(0) };
        let guarded = |m: &Member| {
            if let Err(e) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(m))) {
                shared.failed.store(true, Ordering::Release);
                std::panic::resume_unwind(e);
            }
        };
        match &self.helpers {
            None => guarded(&member()),
            Some(pool) => pool.in_place_scope(|s| {
                for _ in 1..self.threads {
                    s.spawn(|_| guarded(&member()));
                }
                guarded(&member());
            }),
        }
    }
}

/// One member of a run.
pub struct Member<'a> {
    shared: &'a Shared,
    /// Phases entered so far.
    phase: Cell<u64>,
}

impl Member<'_> {
    /// One phase: work unit numbers `0..units`, each to one member (whichever asks first), `f`
    /// called on each with whether it is this member's first unit of the phase; returns when
    /// every unit is done. `f` may read what earlier phases wrote, and should prepare what its
    /// units share (e.g. read shared inputs) on its first unit, not before: a member that takes
    /// no unit (all handed out) reads nothing, while a later phase may already be writing.
    pub fn split(&self, units: usize, mut f: impl FnMut(usize, bool)) {
        let phase = self.phase.get() + 1;
        self.phase.set(phase);
        let s = self.shared;
        let slot = phase as usize % SLOTS;
        let units = units as u64;
        let mut first = true;
        while let Some(u) = s.next[slot].take(phase, units) {
            f(u as usize, first);
            first = false;
            s.done[slot].take(phase, units).expect("a unit is done once");
        }
        let mut spins = 0;
        while units > 0 && !s.done[slot].reached(phase, units) {
            if s.failed.load(Ordering::Acquire) {
                panic!("another member of the team panicked");
            }
            if spins < SPINS {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// A buffer the members of a run write in disjoint parts within a phase and read whole in later
/// phases. It is only reached through raw pointers, so one member's part and another's never
/// alias a reference to the whole.
pub struct SharedBuf<T> {
    ptr: *mut T,
    len: usize,
}

// SAFETY: the buffer owns its values; access across threads is governed by the unsafe methods'
// contracts (parts disjoint within a phase, whole reads in later phases).
unsafe impl<T: Send> Send for SharedBuf<T> {}
// SAFETY: as above.
unsafe impl<T: Send + Sync> Sync for SharedBuf<T> {}

impl<T: Copy + Default> SharedBuf<T> {
    /// `len` default values.
    pub fn new(len: usize) -> SharedBuf<T> {
        let b: Box<[T]> = vec![T::default(); len].into_boxed_slice();
        SharedBuf { len, ptr: Box::into_raw(b) as *mut T }
    }
}

impl<T> SharedBuf<T> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The whole buffer, read-only.
    ///
    /// # Safety
    /// No member writes any part of the buffer while the slice is alive (the writes are in an
    /// earlier phase, finished).
    pub unsafe fn read(&self) -> &[T] {
        // SAFETY: ptr/len describe the live allocation; no writer, by the caller's contract.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// Values `start..start + len`, read-only.
    ///
    /// # Safety
    /// No member writes these values while the slice is alive.
    pub unsafe fn read_part(&self, start: usize, len: usize) -> &[T] {
        assert!(start + len <= self.len, "part {start}+{len} of a buffer of {}", self.len);
        // SAFETY: inside the allocation (asserted); no writer, by the caller's contract.
        unsafe { std::slice::from_raw_parts(self.ptr.add(start), len) }
    }

    /// Values `start..start + len` to write.
    ///
    /// # Safety
    /// No other member reads or writes these values while the slice is alive, and nobody holds
    /// a [`SharedBuf::read`] slice then.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn part(&self, start: usize, len: usize) -> &mut [T] {
        assert!(start + len <= self.len, "part {start}+{len} of a buffer of {}", self.len);
        // SAFETY: inside the allocation (asserted); exclusive by the caller's contract.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(start), len) }
    }

    /// The whole buffer, outside a run.
    pub fn get_mut(&mut self) -> &mut [T] {
        // SAFETY: `&mut self` excludes every other access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<T> Drop for SharedBuf<T> {
    fn drop(&mut self) {
        // SAFETY: made by `Box::into_raw` of a boxed slice of `len` values in `new`.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(self.ptr, self.len)) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// Phases of `units` units each add one to their own values and read the previous phase's:
    /// every unit is done once per phase, and a phase sees all of the previous one's writes.
    fn check_phases(team: &Team, phases: usize, units: usize) {
        let done = SharedBuf::<u32>::new(phases * units);
        let seen = SharedBuf::<u32>::new(phases * units);
        team.run(|m| {
            for p in 0..phases {
                m.split(units, |u, _| {
                    // SAFETY: each unit is handed out once; phase p - 1 is finished.
                    let before = if p > 0 { unsafe { done.read_part((p - 1) * units, units) }.iter().sum::<u32>() } else { units as u32 };
                    let (seen, done) = unsafe { (seen.part(p * units + u, 1), done.part(p * units + u, 1)) };
                    seen[0] = before;
                    done[0] += 1;
                });
            }
        });
        let (mut done, mut seen) = (done, seen);
        assert!(done.get_mut().iter().all(|&v| v == 1), "{} threads: a unit done twice or never", team.threads());
        assert!(seen.get_mut().iter().all(|&v| v == units as u32), "{} threads: a phase did not see all of the previous one", team.threads());
    }

    #[test]
    fn every_unit_is_done_once_and_phases_see_the_earlier_ones() {
        for threads in [1, 2, 3] {
            let team = Team::new(threads).unwrap();
            for _ in 0..20 {
                check_phases(&team, 40, 7);
            }
            check_phases(&team, 3, 0);
            check_phases(&team, 30, 1);
            assert_eq!(team.threads(), threads);
        }
    }

    #[test]
    fn a_member_runs_its_first_unit_flag_once_per_phase() {
        let team = Team::new(2).unwrap();
        let (firsts, units) = (AtomicUsize::new(0), AtomicUsize::new(0));
        team.run(|m| {
            for _ in 0..100 {
                let mut mine = 0;
                m.split(9, |_, first| {
                    units.fetch_add(1, Ordering::Relaxed);
                    if first {
                        mine += 1;
                        firsts.fetch_add(1, Ordering::Relaxed);
                    }
                });
                assert!(mine <= 1);
            }
        });
        assert_eq!(units.load(Ordering::Relaxed), 900);
        assert!((100..=200).contains(&firsts.load(Ordering::Relaxed)));
    }

    #[test]
    fn a_panicking_member_ends_the_run_with_its_panic() {
        let team = Team::new(2).unwrap();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            team.run(|m| {
                m.split(4, |u, _| {
                    if u == 2 {
                        panic!("unit 2 fails");
                    }
                });
                m.split(4, |_, _| {});
            })
        }));
        assert!(r.is_err());
        // The team still works.
        check_phases(&team, 5, 3);
    }

    #[test]
    fn runs_started_from_several_threads_take_turns() {
        let team = Team::new(2).unwrap();
        let count = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..50 {
                        team.run(|m| {
                            for _ in 0..5 {
                                m.split(4, |_, _| {
                                    count.fetch_add(1, Ordering::Relaxed);
                                });
                            }
                        });
                    }
                });
            }
        });
        assert_eq!(count.load(Ordering::Relaxed), 4 * 50 * 5 * 4);
    }
}
