//! The binary's command line as a user meets it: `-h`/`--help` and `-V`/`--version` exit 0
//! on stdout, and the version names the commit the binary was built from.

use std::process::{Command, Output};

fn renard(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_renard")).args(args).env_remove("RENARD_COMMIT").output().expect("renard runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("UTF-8")
}

#[test]
fn help_and_h_print_the_same_usage_and_exit_0() {
    let (long, short) = (renard(&["--help"]), renard(&["-h"]));
    assert_eq!((long.status.code(), short.status.code()), (Some(0), Some(0)));
    assert!(stdout(&long).starts_with("Usage: renard [OPTION]..."), "{}", stdout(&long));
    assert_eq!(long.stdout, short.stdout);
    assert!(long.stderr.is_empty() && short.stderr.is_empty());
}

#[test]
fn version_and_v_print_one_line_with_the_commit_and_exit_0() {
    let (long, short) = (renard(&["--version"]), renard(&["-V"]));
    assert_eq!((long.status.code(), short.status.code()), (Some(0), Some(0)));
    assert_eq!(long.stdout, short.stdout);
    let line = stdout(&long);
    let commit = line
        .strip_prefix(concat!("renard ", env!("CARGO_PKG_VERSION"), " (commit "))
        .and_then(|r| r.strip_suffix(")\n"))
        .expect(&line);
    // Built in a git work tree, the commit is HEAD's as build.rs read it at build time: a
    // commit of this history (HEAD itself, unless another was made since the build).
    let git = |args: &[&str]| Command::new("git").args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output();
    match git(&["rev-parse", "HEAD"]) {
        Ok(head) if head.status.success() => {
            assert!(commit.len() == 12 && commit.bytes().all(|b| b.is_ascii_hexdigit()), "{line}");
            let ancestor = git(&["merge-base", "--is-ancestor", commit, "HEAD"]).unwrap();
            assert!(ancestor.status.success(), "{commit} is not HEAD or one of its ancestors");
        }
        _ => assert_eq!(commit, "unknown"),
    }
}

#[test]
fn a_bad_flag_still_exits_2_with_one_line() {
    let out = renard(&["--count", "0"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "renard: --count: must be an integer from 1 to 1000000 (got \"0\")\n"
    );
}
