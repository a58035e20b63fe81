//! Ctrl-C during `turnsim run`: the first SIGINT asks the run to stop, the second
//! ends the process at once.
//!
//! Guarantee: the handler only stores to an atomic (and, the second time, calls
//! `_exit`), both async-signal-safe, so it cannot deadlock or corrupt the state of
//! the thread it interrupts. The flag is read by the CLI's stop condition between
//! seeds and never by a simulated world, so a seed's run is the same whether or not a
//! Ctrl-C arrives while it runs; what changes is only which seeds are started.
//!
//! Why `unsafe` here: std has no way to install a signal handler; `sigaction` from
//! libc is the one call that does, and it is made once, from the main thread, before
//! any worker starts.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// 128 + SIGINT, what a shell reports for a process ended by Ctrl-C.
const EXIT_ON_SECOND: i32 = 130;

extern "C" fn on_sigint(_: libc::c_int) {
    if INTERRUPTED.swap(true, Ordering::SeqCst) {
        // SAFETY: _exit is async-signal-safe and takes no pointer.
        unsafe { libc::_exit(EXIT_ON_SECOND) }
    }
}

/// Installs the SIGINT handler. Returns false (and the default disposition stays,
/// so Ctrl-C still ends the process) if the kernel refuses it.
pub fn install() -> bool {
    // SAFETY: a zeroed sigaction is a valid value (empty mask, no flags); the handler
    // is an `extern "C" fn(c_int)` that only touches an atomic and calls `_exit`, and
    // the pointers passed to sigemptyset and sigaction point at live locals.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigint as *const () as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut()) == 0
    }
}

/// True once a SIGINT arrived.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}
