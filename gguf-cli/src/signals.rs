//! SIGINT, SIGTERM and SIGHUP (the terminal closed): remove the temporary files of writes in
//! progress, then exit 130, 143 or 129 (128 + the signal number, as shells report a process
//! killed by it).

use std::sync::atomic::{AtomicBool, Ordering};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// Set by the signal thread before it removes the temporaries.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Whether a signal is being handled. Once the temporaries are gone, the write in progress fails;
/// the main thread must then not exit with that error first, but leave the exit (and its status
/// 128 + the signal) to the signal thread: [`wait_if_interrupted`].
pub fn wait_if_interrupted() {
    if INTERRUPTED.load(Ordering::SeqCst) {
        loop {
            std::thread::park();
        }
    }
}

/// Starts a thread that waits for SIGINT, SIGTERM and SIGHUP. The handler itself only wakes the thread
/// (signal-hook's self-pipe), so the clean-up runs as ordinary code, not in signal context.
pub fn install() {
    let Ok(mut signals) = Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            INTERRUPTED.store(true, Ordering::SeqCst);
            gguf_serde::container::remove_temporaries();
            std::process::exit(128 + sig);
        }
    });
}
