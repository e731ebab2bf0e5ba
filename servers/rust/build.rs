//! Build script: the commit `renard --version` names, as `RENARD_COMMIT` (12 lowercase hex
//! digits, or `unknown`). Taken from the `RENARD_COMMIT` variable when it is set (a release
//! built from a tarball, outside git), else from `git rev-parse HEAD` in this folder; `unknown`
//! when neither gives one. Only the commit enters the binary (no time, no path, no dirty flag),
//! so two builds of the same commit stay identical.

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=RENARD_COMMIT");
    let commit = match std::env::var("RENARD_COMMIT") {
        Ok(given) if !given.is_empty() => short_hex(&given).unwrap_or_else(|| {
            println!("cargo:warning=RENARD_COMMIT={given:?} is not a hexadecimal commit id: using \"unknown\"");
            "unknown".to_string()
        }),
        _ => from_git().unwrap_or_else(|| "unknown".to_string()),
    };
    println!("cargo:rustc-env=RENARD_COMMIT={commit}");
}

/// The first 12 digits of a commit id of at least 12 hexadecimal digits, lowercased.
fn short_hex(id: &str) -> Option<String> {
    let id = id.trim();
    (id.len() >= 12 && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| id[..12].to_ascii_lowercase())
}

/// HEAD's commit, and the files whose change means a new one (so that the script runs again
/// after a commit or a checkout, and only then).
fn from_git() -> Option<String> {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git").args(args).output().ok()?;
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let commit = short_hex(&git(&["rev-parse", "HEAD"])?)?;
    let mut watched =
        vec![git(&["rev-parse", "--git-path", "HEAD"])?, git(&["rev-parse", "--git-path", "packed-refs"])?];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watched.push(git(&["rev-parse", "--git-path", &branch])?);
    }
    // A path that does not exist would make cargo run the script on every build.
    for path in watched.iter().filter(|p| Path::new(p).exists()) {
        println!("cargo:rerun-if-changed={path}");
    }
    Some(commit)
}
