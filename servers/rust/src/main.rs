//! renard: answers `GET /` with a 302 to a random avatar (spec/SPEC.md).
//!
//! `main` reads as the story: configuration (or `--check`), listeners, signal pipes, the
//! SIGHUP reload, one event loop per thread (thread 0 is the main thread), exit 0 once
//! every loop has shut down.

use renard::context::Service;
use renard::listener::{self, Listener};
use renard::{check, config, notify, reload, server};
use std::process::exit;
use std::sync::Arc;

fn main() {
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    let read_config = move || config::parse(std::env::args_os().skip(1), |name| std::env::var_os(name), cpus);
    let config = match read_config() {
        Ok(config::Command::Serve(config)) => config,
        Ok(config::Command::Help) => {
            print!("{}", config::USAGE);
            exit(0);
        }
        Ok(config::Command::Check { addr, path }) => match check::check(addr, &path) {
            Ok(()) => exit(0),
            Err(reason) => {
                eprintln!("renard: --check: http://{addr}{}: {reason}", path.escape_ascii());
                exit(1);
            }
        },
        Ok(config::Command::Version) => {
            println!("{}", config::VERSION);
            exit(0);
        }
        Err(line) => {
            eprintln!("{line}");
            exit(2);
        }
    };
    raise_descriptor_limit();

    // One listener per thread: the socket systemd passed, else SO_REUSEPORT sockets on the
    // port the first one got, or descriptors of the one Unix socket.
    // SAFETY: no other thread has been started yet.
    let passed = unsafe { listener::from_service_manager(config.threads) };
    let listening = passed
        .and_then(|passed| match passed {
            Some(listening) => Ok(listening),
            None => listener::bind(&config.listen, config.socket_mode, config.socket_owner.as_ref(), config.threads),
        })
        .unwrap_or_else(|failure| {
            eprintln!("{}", failure.line);
            exit(failure.status);
        });

    // SIGTERM/SIGINT write a byte to one pipe per thread (self-pipe, via signal-hook).
    let mut signal_readers = Vec::with_capacity(config.threads);
    for _ in 0..config.threads {
        let (reader, writer) = std::os::unix::net::UnixStream::pair().unwrap_or_else(|e| fatal("signal pipe", e));
        reader.set_nonblocking(true).unwrap_or_else(|e| fatal("signal pipe", e));
        for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
            let writer = writer.try_clone().unwrap_or_else(|e| fatal("signal pipe", e));
            signal_hook::low_level::pipe::register(signal, writer).unwrap_or_else(|e| fatal("signal handler", e));
        }
        signal_readers.push(mio::net::UnixStream::from_std(reader));
    }

    let shared = Arc::new(Service::new(config));
    // SIGHUP reads the same flags and variables again, and the files they name (SPEC §8).
    let read_again = move || match read_config()? {
        config::Command::Serve(config) => Ok(config),
        _ => Err("renard: the command line changed".to_string()),
    };
    reload::on_sighup(shared.clone(), read_again).unwrap_or_else(|e| fatal("SIGHUP handler", e));
    eprintln!("listening on {}", listening.shown);
    notify::ready();

    let failed = serve(&shared, listening.listeners, signal_readers);
    if let Some(file) = &listening.file {
        file.remove_if_ours();
    }
    exit(i32::from(failed));
}

/// Run one event loop per listener, the first on this thread; true when one failed.
fn serve(shared: &Arc<Service>, listeners: Vec<Listener>, signals: Vec<mio::net::UnixStream>) -> bool {
    let mut loops = listeners.into_iter().zip(signals);
    let (main_listener, main_signal) = loops.next().expect("at least one thread");
    let workers: Vec<_> = loops
        .map(|(listener, signal)| {
            let shared = shared.clone();
            std::thread::Builder::new()
                .stack_size(256 * 1024)
                .spawn(move || server::run(&shared, listener, signal))
                .unwrap_or_else(|e| fatal("thread", e))
        })
        .collect();
    let mut failed = server::run(shared, main_listener, main_signal).is_err();
    for worker in workers {
        failed |= !matches!(worker.join(), Ok(Ok(())));
    }
    failed
}

/// One line on stderr, exit 1: a resource the server needs could not be had.
fn fatal(what: &str, e: impl std::fmt::Display) -> ! {
    eprintln!("renard: {what}: {e}");
    exit(1);
}

/// Lift the soft descriptor limit to the hard one, so that --max-connections can be met.
fn raise_descriptor_limit() {
    // SAFETY: getrlimit/setrlimit only read/write the struct passed by pointer.
    unsafe {
        let mut limit = std::mem::zeroed::<libc::rlimit>();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}
