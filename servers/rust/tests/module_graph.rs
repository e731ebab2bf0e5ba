//! The crate's modules import one way: no two modules name each other (`crate::a` in b and
//! `crate::b` in a), so each seam has a direction (ARCHITECTURE.md). Doc links count too: a link
//! is a dependency a reader follows.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

/// (module, module it names) for every `crate::NAME` in src/, NAME a module of the crate.
fn edges() -> BTreeSet<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules: BTreeSet<String> =
        fs::read_dir(&src).unwrap().filter_map(|e| e.ok()?.path().file_stem()?.to_str().map(str::to_owned)).collect();
    let mut edges = BTreeSet::new();
    for from in &modules {
        let text = fs::read_to_string(src.join(format!("{from}.rs"))).unwrap();
        for (at, _) in text.match_indices("crate::") {
            let name: String = text[at + 7..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            if modules.contains(&name) && &name != from {
                edges.insert((from.clone(), name));
            }
        }
    }
    edges
}

#[test]
fn no_two_modules_name_each_other() {
    let edges = edges();
    let circles: Vec<_> = edges.iter().filter(|(a, b)| a < b && edges.contains(&(b.clone(), a.clone()))).collect();
    assert!(circles.is_empty(), "modules that name each other: {circles:?}");
}

#[test]
fn the_graph_is_read_at_all() {
    // Guards the test above against a path or parse that finds nothing.
    let edges = edges();
    assert!(edges.contains(&("server".to_owned(), "conns".to_owned())), "{edges:?}");
}
