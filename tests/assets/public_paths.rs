//! The integration tests reach the crate as a user of the library would: as
//! `disktriage::<module>::<Item>` (an item's own path after that, `TestName::SeqRead`, is
//! fine), never through the files below a top module (`disktriage::bench::exec::session::
//! start`). Each top module re-exports what a user needs (see its "library's surface"
//! block), so the files below it can move without breaking a user or a test. This test reads
//! every `.rs` file under `tests/` and names each path that goes deeper.

use std::fs;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `dir`, symbolic links not followed (the captured sysfs trees under
/// `tests/fixtures` are full of links that lead back up).
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir).unwrap().map(|e| e.unwrap()).collect();
    entries.sort_by_key(|e| e.path());
    for entry in entries {
        let kind = entry.file_type().unwrap();
        let path = entry.path();
        if kind.is_dir() {
            rust_files(&path, out);
        } else if kind.is_file() && path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// True when `name` is a file (or folder) below the top module `top` in `src/`, i.e. a path
/// through it leads past the module's surface.
fn is_submodule(top: &str, name: &str) -> bool {
    let dir = repo().join("src").join(top);
    dir.join(format!("{name}.rs")).is_file() || dir.join(name).is_dir()
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The identifier that starts `s`, if any.
fn ident(s: &str) -> &str {
    &s[..s.find(|c: char| !is_ident(c)).unwrap_or(s.len())]
}

/// Where `word` starts in `text` as a whole path start: not inside a longer name and not the
/// tail of another path (`x::word`).
fn path_starts<'a>(text: &'a str, word: &'a str) -> impl Iterator<Item = usize> + 'a {
    text.match_indices(word).map(|(i, _)| i).filter(move |&i| {
        let before = &text[..i];
        let after = &text[i + word.len()..];
        !before.ends_with(is_ident) && !before.ends_with(':') && after.starts_with("::")
    })
}

/// The elements of the `{...}` group that opens `s`, each trimmed (nested groups kept whole).
fn group_elements(s: &str) -> Vec<&str> {
    let mut depth = 0;
    let mut start = 1;
    let mut out = Vec::new();
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' | ',' if depth == 1 => {
                out.push(s[start..i].trim());
                start = i + 1;
                if c == '}' {
                    break;
                }
            }
            '}' => depth -= 1,
            _ => {}
        }
    }
    out.retain(|e| !e.is_empty());
    out
}

/// The paths in `source` that go below a top module of the crate: `disktriage::top::sub...`
/// where `sub` is a file or folder of `src/top/` (also inside a `use disktriage::top::{..}`
/// group), and `top::sub...` after `use disktriage::top;`. Line comments are skipped.
fn deep_paths(source: &str, is_submodule: &dyn Fn(&str, &str) -> bool) -> Vec<String> {
    let code: String = source
        .lines()
        .map(|l| l.find("//").map_or(l, |i| &l[..i]))
        .collect::<Vec<_>>()
        .join("\n");
    let mut found = Vec::new();
    let mut check = |top: &str, rest: &str| {
        // `rest` follows `top::`: one name, or a group of them.
        let seconds = if rest.starts_with('{') {
            group_elements(rest)
        } else {
            vec![rest]
        };
        for second in seconds {
            let name = ident(second);
            if !name.is_empty() && is_submodule(top, name) {
                let shown: String = second
                    .chars()
                    .take_while(|&c| is_ident(c) || c == ':')
                    .collect();
                found.push(format!("{top}::{}", shown.trim_end_matches(':')));
            }
        }
    };
    let mut tops_by_name = Vec::new();
    for i in path_starts(&code, "disktriage") {
        let after = &code[i + "disktriage::".len()..];
        let top = ident(after);
        let rest = &after[top.len()..];
        if top.is_empty() {
            continue;
        }
        match rest.strip_prefix("::") {
            Some(rest) => check(top, rest),
            None if code[..i].trim_end().ends_with("use") && rest.starts_with(';') => {
                tops_by_name.push(top.to_string());
            }
            None => {}
        }
    }
    for top in &tops_by_name {
        for i in path_starts(&code, top) {
            check(top, &code[i + top.len() + 2..]);
        }
    }
    found
        .into_iter()
        .map(|p| format!("disktriage::{p}"))
        .collect()
}

#[test]
fn tests_reach_the_crate_through_its_top_modules_only() {
    let mut files = Vec::new();
    rust_files(&repo().join("tests"), &mut files);
    // Every test binary's files are read, not a directory that happens to be empty.
    assert!(files.len() > 30, "{files:?}");
    let mut deep = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).unwrap();
        for path in deep_paths(&text, &is_submodule) {
            let name = file.strip_prefix(repo()).unwrap().display();
            deep.push(format!("{name}: {path}"));
        }
    }
    assert!(
        deep.is_empty(),
        "paths below a top module (re-export the item in src/<module>.rs and use \
         disktriage::<module>::<Item>):\n{}",
        deep.join("\n")
    );
}

/// The scanner finds each kind of deep path and leaves the allowed ones alone, with a made-up
/// set of submodules (so this holds whatever `src/` looks like).
#[test]
fn the_scanner_names_every_form_of_a_deep_path() {
    let sub = |top: &str, name: &str| top == "bench" && matches!(name, "exec" | "plan");
    let source = "
        use krate::bench::exec::session::start;
        use krate::bench::{plan::TestName, RunReport};
        use krate::bench;
        use krate::bench::TestName;   // krate::bench::plan::in_a_comment
        fn f() {
            let t = krate::bench::TestName::SeqRead;
            krate::bench::exec::probe::choose();
            bench::plan::params::x();
            bench::start_session();
            not_krate::bench::exec::y();
        }
    "
    // Spelt `krate` here so that this file does not fail the test above.
    .replace("krate::", "disktriage::");
    assert_eq!(
        deep_paths(&source, &sub),
        [
            "krate::bench::exec::session::start",
            "krate::bench::plan::TestName",
            "krate::bench::exec::probe::choose",
            "krate::bench::plan::params::x",
        ]
        .map(|p| p.replace("krate::", "disktriage::"))
    );
}
