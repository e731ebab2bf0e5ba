//! renard: answers `GET /` with a 302 to a random avatar (spec/SPEC.md).
//!
//! The server as a library, so that the binary (`main.rs`), the tests and the fuzz
//! targets link the same code. From the wire inward: [`listener`] listens (TCP, a Unix
//! socket, or the one systemd passes); [`server`] runs one thread's event loop over [`conns`], the thread's connections; [`conn`] is one connection's state
//! machine; [`request`] parses a head; [`response`] decides and renders the answer, with
//! [`seed`] for seeded choices; [`config`] reads the command line; [`context`] holds what
//! every thread reads and what each thread owns; [`metrics`] counts and shows; [`check`]
//! is `--check`; [`reload`] is SIGHUP; [`notify`] tells systemd how it goes; [`report`] writes the operator's lines; [`users`] turns `--socket-owner` names into ids; [`clock`] is the monotonic clock as an integer.

pub mod check;
pub mod clock;
pub mod config;
pub mod conn;
pub mod conns;
pub mod context;
pub mod listener;
pub mod metrics;
pub mod notify;
pub mod reload;
pub mod report;
pub mod request;
pub mod response;
pub mod seed;
pub mod server;
pub mod stream;
pub mod users;
