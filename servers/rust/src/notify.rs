//! State messages to the service manager (sd_notify(3), systemd's `Type=notify`), sent
//! only when `NOTIFY_SOCKET` names one: `READY=1` once listening, `RELOADING=1` with
//! `MONOTONIC_USEC` and then `READY=1` around a SIGHUP reload, `STOPPING=1` when the drain
//! begins. A message that cannot be sent is dropped: the service manager's trouble must not
//! stop the server.

use sd_notify::NotifyState;
use std::sync::atomic::{AtomicBool, Ordering};

/// Listening: the service is up.
pub fn ready() {
    let _ = sd_notify::notify(&[NotifyState::Ready]);
}

/// A reload begins (systemd 253's `Type=notify-reload` requires the clock reading with it;
/// systemd 252 takes it too).
pub fn reloading() {
    let mut states = vec![NotifyState::Reloading];
    states.extend(NotifyState::monotonic_usec_now().ok());
    let _ = sd_notify::notify(&states);
}

/// The drain begins (SIGTERM or SIGINT): sent once, by the first thread that drains.
pub fn stopping() {
    static SENT: AtomicBool = AtomicBool::new(false);
    if !SENT.swap(true, Ordering::Relaxed) {
        let _ = sd_notify::notify(&[NotifyState::Stopping]);
    }
}
