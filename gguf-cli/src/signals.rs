//! SIGINT and SIGTERM: remove the temporary files of writes in progress, then exit 130 or 143
//! (128 + the signal number, as shells report a process killed by it).

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// Starts a thread that waits for SIGINT and SIGTERM. The handler itself only wakes the thread
/// (signal-hook's self-pipe), so the clean-up runs as ordinary code, not in signal context.
pub fn install() {
    let Ok(mut signals) = Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            gguf_serde::container::remove_temporaries();
            std::process::exit(128 + sig);
        }
    });
}
