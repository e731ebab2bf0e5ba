//! SIGHUP (SPEC §8): read the configuration again (the `--config` file, the images of
//! `--count-from`) and answer new requests with its N and template. The listen address,
//! threads, limits and timeouts stay as started; open connections are kept. A reload that
//! fails changes nothing and prints one line.

use crate::config::Config;
use crate::context::Service;
use std::io::Read;
use std::os::unix::net::UnixStream;
use std::sync::Arc;

/// Reload with `config`, the configuration read again: Ok is the line saying what changed,
/// Err the line saying why nothing did (each printed by the caller).
pub fn reload(svc: &Service, config: Result<Config, String>) -> Result<String, String> {
    let config = config.map_err(|line| {
        let reason = line.strip_prefix("renard: ").unwrap_or(&line);
        format!("renard: reload failed, nothing changed: {reason}")
    })?;
    let old = svc.content().1;
    let line = crate::report::reload_line(old.count, &old.location, &config, &svc.config);
    svc.replace_content(&config);
    Ok(line)
}

/// Reload on every SIGHUP, in a thread of its own: `read_again` reads the configuration
/// as at start (the same flags and variables). The thread blocks on the signal's pipe and
/// ends with the process.
pub fn on_sighup(
    svc: Arc<Service>,
    read_again: impl Fn() -> Result<Config, String> + Send + 'static,
) -> std::io::Result<()> {
    let (mut reader, writer) = UnixStream::pair()?;
    signal_hook::low_level::pipe::register(signal_hook::consts::SIGHUP, writer)?;
    std::thread::Builder::new().name("reload".into()).stack_size(256 * 1024).spawn(move || {
        // Signals that came while a reload ran are one byte each: one reload for them all.
        let mut bytes = [0u8; 64];
        loop {
            match reader.read(&mut bytes) {
                Ok(0) => return, // the write end is gone: no more signals
                Ok(_) => {
                    crate::notify::reloading();
                    match reload(&svc, read_again()) {
                        Ok(line) | Err(line) => eprintln!("{line}"),
                    }
                    crate::notify::ready(); // a failed reload leaves the service as it was: ready
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{self, Command};
    use crate::context::Scratch;

    fn config(args: &[&str]) -> Result<Config, String> {
        match config::parse(args.iter().map(Into::into), |_| None, 1)? {
            Command::Serve(config) => Ok(config),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn threads_take_the_new_count_and_template_at_their_next_wake() {
        let svc = Service::new(config(&["--count", "3"]).unwrap());
        let mut s = Scratch::new(&svc, 1);
        let line = reload(&svc, config(&["--count", "7", "--location", "/x/{n}"])).unwrap();
        assert!(line.starts_with("renard: reloaded: N 3 -> 7, location "), "{line}");
        assert_eq!(s.count, 3);
        s.follow(&svc);
        assert_eq!((s.count, s.content.count), (7, 7));
        let mut head = Vec::new();
        s.content.redirects.write_head(&mut head, 7);
        assert_eq!(head, b"HTTP/1.1 302 Found\r\nLocation: /x/7\r\n");
    }

    #[test]
    fn failed_reload_changes_nothing_and_names_the_source() {
        let svc = Service::new(config(&["--count", "3"]).unwrap());
        let line = reload(&svc, config(&["--count", "0"])).unwrap_err();
        assert_eq!(
            line,
            "renard: reload failed, nothing changed: --count: must be an integer from 1 to 1000000 (got \"0\")"
        );
        assert_eq!((svc.generation(), svc.content().1.count), (0, 3));
    }
}
