//! Keeping an engine process on the CPU of the job that drives it.
//!
//! Guarantee: pinning changes where processes run, never what they compute: it is
//! applied only to live processes (the worker threads of `turnsim run` and the engine
//! processes they talk to), reaches no trace, request or digest, and when the system
//! refuses it (another OS, a CPU set of one, a failed call) everything runs where the
//! scheduler puts it, as before.
//!
//! Why: a subprocess engine answers every live input before the world goes on, so a
//! run is one round trip per event between two processes that take turns. When the
//! scheduler puts them on different CPUs each turn is a cross-CPU wake-up, and in a
//! virtual machine that is an inter-processor interrupt through the hypervisor: on the
//! two-vCPU machine of benches/README.md ("the pipe, sixth round") a 200-byte echo
//! round trip cost 78–93 µs that way and 3.5 µs with both ends on one CPU. Pinning
//! worker `i` to the `i`-th CPU it may use (cycling when there are more jobs than
//! CPUs) and moving each engine process to its worker's CPU when the worker takes it
//! keeps every turn on one CPU, and the jobs apart from each other.

/// The CPUs the calling thread may run on, in increasing order (empty when unknown).
pub fn allowed_cpus() -> Vec<usize> {
    imp::allowed_cpus()
}

/// Pins the calling thread to the `job`-th of `cpus` (cycling); returns the CPU, or
/// `None` when there is nothing to choose (fewer than two CPUs) or the call failed.
pub fn pin_current_thread(cpus: &[usize], job: usize) -> Option<usize> {
    if cpus.len() < 2 {
        return None;
    }
    let cpu = cpus[job % cpus.len()];
    imp::set_thread(cpu).then_some(cpu)
}

/// Moves process `pid` (its main thread) to the calling thread's CPU when the calling
/// thread is pinned to exactly one; otherwise leaves it alone. Returns whether it
/// moved it.
pub fn follow(pid: u32) -> bool {
    match imp::thread_cpus()[..] {
        [cpu] => imp::set_process(pid, cpu),
        _ => false,
    }
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
mod imp {
    use std::mem::{size_of, zeroed};

    pub(super) fn mask_of(pid: libc::pid_t) -> Option<libc::cpu_set_t> {
        // SAFETY: cpu_set_t is plain bits, so all-zero is a valid value; the kernel
        // writes at most size_of::<cpu_set_t>() bytes into it.
        unsafe {
            let mut set: libc::cpu_set_t = zeroed();
            (libc::sched_getaffinity(pid, size_of::<libc::cpu_set_t>(), &mut set) == 0)
                .then_some(set)
        }
    }

    pub(super) fn cpus_of(set: &libc::cpu_set_t) -> Vec<usize> {
        let bits = 8 * size_of::<libc::cpu_set_t>();
        // SAFETY: CPU_ISSET reads one bit of the set, below its size.
        (0..bits)
            .filter(|&c| unsafe { libc::CPU_ISSET(c, set) })
            .collect()
    }

    fn set(pid: libc::pid_t, cpu: usize) -> bool {
        if cpu >= 8 * size_of::<libc::cpu_set_t>() {
            return false;
        }
        // SAFETY: as in `mask_of`; CPU_SET writes one bit below the set's size (checked
        // above), and the kernel only reads the set.
        unsafe {
            let mut set: libc::cpu_set_t = zeroed();
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(pid, size_of::<libc::cpu_set_t>(), &set) == 0
        }
    }

    pub fn allowed_cpus() -> Vec<usize> {
        thread_cpus()
    }

    /// pid 0: the calling thread.
    pub fn thread_cpus() -> Vec<usize> {
        mask_of(0).map(|s| cpus_of(&s)).unwrap_or_default()
    }

    pub fn set_thread(cpu: usize) -> bool {
        set(0, cpu)
    }

    pub fn set_process(pid: u32, cpu: usize) -> bool {
        match libc::pid_t::try_from(pid) {
            Ok(pid) if pid > 0 => set(pid, cpu),
            _ => false,
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    pub fn allowed_cpus() -> Vec<usize> {
        Vec::new()
    }

    pub fn thread_cpus() -> Vec<usize> {
        Vec::new()
    }

    pub fn set_thread(_cpu: usize) -> bool {
        false
    }

    pub fn set_process(_pid: u32, _cpu: usize) -> bool {
        false
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_thread_runs_on_the_one_cpu_it_was_given_and_a_child_follows_it() {
        let cpus = allowed_cpus();
        if cpus.len() < 2 {
            // Nothing to choose on a one-CPU machine: pinning must decline.
            assert_eq!(pin_current_thread(&cpus, 0), None);
            return;
        }
        let last = *cpus.last().expect("two or more");
        // Started by the unpinned test thread: it may run on every CPU.
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("sleep starts");
        let pid = child.id();
        let before = mask(pid);
        let moved = std::thread::spawn(move || {
            let cpus = allowed_cpus();
            let pinned = pin_current_thread(&cpus, cpus.len() - 1);
            (pinned, imp::thread_cpus(), follow(pid))
        })
        .join()
        .expect("the pinned thread ran");
        let after = mask(pid);
        child.kill().ok();
        child.wait().ok();
        assert_eq!(before, cpus);
        assert_eq!(moved, (Some(last), vec![last], true));
        assert_eq!(after, vec![last]);
    }

    #[test]
    fn an_unpinned_thread_moves_no_process() {
        let cpus = allowed_cpus();
        if cpus.len() < 2 {
            return;
        }
        // A fresh thread inherits the whole set of the test process.
        std::thread::spawn(|| assert!(!follow(std::process::id())))
            .join()
            .expect("ran");
    }

    fn mask(pid: u32) -> Vec<usize> {
        let pid = libc::pid_t::try_from(pid).expect("a pid");
        imp::mask_of(pid)
            .map(|s| imp::cpus_of(&s))
            .expect("the child's mask")
    }
}
