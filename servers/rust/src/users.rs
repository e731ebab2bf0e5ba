//! User and group names to ids, for `--socket-owner`, read from /etc/passwd and /etc/group.
//!
//! Not the C library's `getpwnam_r`: renard is linked statically, and a static glibc
//! cannot load the name-service modules (the test build crashed in `getpwnam_r` for an
//! unknown name); musl reads these same two files. A name made of digits only that is not
//! in the file is taken as the id itself, as chown(1) does.

use std::path::Path;

/// The id of user `name` (or `name` as a number), if there is one.
pub fn uid(name: &str) -> Option<u32> {
    lookup(Path::new("/etc/passwd"), name)
}

/// The id of group `name` (or `name` as a number), if there is one.
pub fn gid(name: &str) -> Option<u32> {
    lookup(Path::new("/etc/group"), name)
}

/// `name`'s id in `file`, lines `name:password:id:...`; else `name` as a decimal id.
fn lookup(file: &Path, name: &str) -> Option<u32> {
    if name.is_empty() {
        return None;
    }
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let found = text.lines().find_map(|line| {
        let mut fields = line.split(':');
        (fields.next() == Some(name)).then(|| fields.nth(1)?.parse().ok())?
    });
    found.or_else(|| if name.bytes().all(|b| b.is_ascii_digit()) { name.parse().ok() } else { None })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_is_user_and_group_zero() {
        assert_eq!((uid("root"), gid("root")), (Some(0), Some(0)))
    }
    #[test]
    fn numbers_are_ids() {
        assert_eq!((uid("65534"), gid("4242")), (Some(65534), Some(4242)))
    }
    #[test]
    fn unknown_names_have_no_id() {
        assert_eq!(
            (uid("no-such-user-here"), gid("no-such-group-here"), uid(""), uid("99999999999")),
            (None, None, None, None)
        )
    }
    #[test]
    fn a_line_is_name_password_id() {
        let file = std::env::temp_dir().join(format!("renard-users-{}", std::process::id()));
        std::fs::write(&file, "# comment\nbroken\nwww-data:x:33:33::/var/www:/usr/sbin/nologin\n42:x:7:7\n").unwrap();
        assert_eq!((lookup(&file, "www-data"), lookup(&file, "42"), lookup(&file, "www")), (Some(33), Some(7), None));
        std::fs::remove_file(file).unwrap();
    }
}
