//! The crate's shape, checked on every `cargo test --lib`: it reads `src/`, builds the
//! file-level import graph and fails on
//! - an import circle between files (the files of the circle and the imports that close it),
//! - an import that points up the layers (the order is `src/lib.rs`'s module map, read from
//!   its bullets: the one source of truth),
//! - a file over `MAX_LINES` lines not counting its `#[cfg(test)]` items,
//! - a job that needs more than its file and its registration: the job trait
//!   (`flow/job.rs`) and the TUI's runner (`tui/jobs.rs`) may name no job, and the recipes
//!   in docs/development.md name at most 2 files for a job and 4 for a screen that runs one
//!   (the job's 2 among them),
//! - an I/O engine that needs more than its file and its line: every file of
//!   `bench/exec/engines/` with a row of words is registered once in `ENGINES`, only the
//!   engines make a kind from a row, and the recipe names at most 2 files.
//!
//! An import is any path that names a module of the crate: `use crate::a::b`, grouped
//! `use crate::{a::b, c}`, `super::`, `self::`, a child module by its name, and the same paths
//! written inline in code (`crate::a::f()`). Each points at the deepest module file the path
//! names (`crate::report::run::render_text` is `src/report/run.rs`). A module naming its own
//! submodules (`mod x; pub use x::Y;`) is the module tree, not an import; its submodules'
//! `super::` paths up to it are. Comments, strings and `#[cfg(test)]` items are not read:
//! tests may reach anywhere.
//!
//! What is wrong today and being mended is listed in `KNOWN_*`, and the test checks that each
//! listed exception is still there: when one is mended, the test says to remove it from the
//! list. So the lists only shrink, and anything new fails.
//!
//! Test code only: `lib.rs` declares this module under `#[cfg(test)]`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

/// Lines a file of `src/` may have, its `#[cfg(test)]` items not counted.
const MAX_LINES: usize = 800;

/// Import circles between files that exist today, each by its files (sorted). None since
/// issue 24.
const KNOWN_CIRCLES: &[&[&str]] = &[];

/// Imports that point up the layers today: (importing file, imported file). None.
const KNOWN_UPWARD: &[(&str, &str)] = &[];

/// Files over `MAX_LINES` without their tests today: none (issue 24 split them). Only ever
/// remove one.
const KNOWN_BIG: &[&str] = &[];

/// The job trait and the TUI's runner: generic over jobs, so a new job never edits them.
const JOB_GENERIC: &[&str] = &["src/flow/job.rs", "src/tui/jobs.rs"];

/// The "add" recipes of docs/development.md and the most files each may name: only ever
/// lower one. A screen that runs a job is its file and line and the job's (5 files besides the
/// job before issue 37); an engine is its file and its line in `ENGINES` (3 before issue 37).
const RECIPES: &[(&str, usize)] = &[
    ("### Add a job", 2),
    ("### Add an I/O engine", 2),
    ("### Add a screen that runs a job", 4),
];

/// One file's import of another: the line and the path as written.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Import {
    from: String,
    line: usize,
    to: String,
    path: String,
}

impl std::fmt::Display for Import {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{} imports {} ({})",
            self.from, self.line, self.to, self.path
        )
    }
}

/// A module file: its module path (`["report", "run"]`) and its code with comments, string
/// contents and `#[cfg(test)]` items blanked (line breaks kept, so lines still count).
struct ModuleFile {
    file: String,
    module: Vec<String>,
    code: String,
    lines_without_tests: usize,
}

/// The crate as read: its module files, by module path, and the layers of lib.rs's map.
struct Crate {
    files: BTreeMap<Vec<String>, ModuleFile>,
    layers: Vec<String>,
}

impl Crate {
    /// Reads every `.rs` file under `src` and walks the modules from `lib.rs`.
    fn read(src: &Path) -> Result<Crate, String> {
        let mut sources = BTreeMap::new();
        read_dir(src, src, &mut sources)?;
        Crate::from_sources(&sources)
    }

    /// The crate of `sources` (path under `src/` to text): modules are found from `lib.rs`'s
    /// `mod` declarations down, test-only ones (`#[cfg(test)] mod x;`) left out.
    fn from_sources(sources: &BTreeMap<String, String>) -> Result<Crate, String> {
        let lib = sources.get("lib.rs").ok_or("no src/lib.rs")?;
        let layers = layers_of(lib);
        let mut files = BTreeMap::new();
        let mut todo = vec![(Vec::<String>::new(), "lib.rs".to_string())];
        while let Some((module, file)) = todo.pop() {
            let text = sources
                .get(&file)
                .ok_or_else(|| format!("src/{file} is declared but missing"))?;
            let (code, test_lines) = without_tests(&blank_comments_and_strings(text));
            for child in child_modules(&code) {
                let dir = match module.last() {
                    None => String::new(),
                    Some(_) => {
                        format!("{}/", file.trim_end_matches(".rs").trim_end_matches("/mod"))
                    }
                };
                let flat = format!("{dir}{child}.rs");
                let nested = format!("{dir}{child}/mod.rs");
                let path = if sources.contains_key(&flat) {
                    flat
                } else {
                    nested
                };
                let mut m = module.clone();
                m.push(child);
                todo.push((m, path));
            }
            let lines_without_tests = text.lines().count().saturating_sub(test_lines);
            files.insert(
                module.clone(),
                ModuleFile {
                    file: format!("src/{file}"),
                    module,
                    code,
                    lines_without_tests,
                },
            );
        }
        Ok(Crate { files, layers })
    }

    /// Every import of a file by another, in file and line order.
    fn imports(&self) -> Vec<Import> {
        let mut out = Vec::new();
        for f in self.files.values() {
            for (line, segments) in paths(&f.code) {
                let Some(to) = self.resolve(&f.module, &segments) else {
                    continue;
                };
                // Its own submodules: the module tree, not an import.
                if !to.module.starts_with(&f.module) {
                    out.push(Import {
                        from: f.file.clone(),
                        to: to.file.clone(),
                        line,
                        path: segments.join("::"),
                    });
                }
            }
        }
        out.sort();
        out.dedup();
        merge_lines(out)
    }

    /// The module file a path written in `module` names: the deepest module along it. None
    /// for a path outside the crate (`std::`, a dependency, a local item).
    fn resolve(&self, module: &[String], segments: &[String]) -> Option<&ModuleFile> {
        let mut at: Vec<String> = module.to_vec();
        let mut rest = segments;
        match segments.first().map(String::as_str) {
            Some("crate") => {
                at.clear();
                rest = &segments[1..];
            }
            Some("self") => rest = &segments[1..],
            Some("super") => {
                while rest.first().map(String::as_str) == Some("super") {
                    at.pop()?;
                    rest = &rest[1..];
                }
            }
            Some(first) => {
                // A child module named by itself; anything else is not the crate's.
                let mut child = at.clone();
                child.push(first.to_string());
                if !self.files.contains_key(&child) {
                    return None;
                }
            }
            None => return None,
        }
        for s in rest {
            at.push(s.clone());
            if !self.files.contains_key(&at) {
                at.pop();
                break;
            }
        }
        self.files.get(&at)
    }

    /// A file's layer: the place of its top module in lib.rs's map; lib.rs is above them all.
    fn layer(&self, file: &str) -> Option<usize> {
        let f = self.files.values().find(|f| f.file == file)?;
        match f.module.first() {
            None => Some(self.layers.len()),
            Some(top) => self.layers.iter().position(|l| l == top),
        }
    }
}

/// One import per file, target and line: the paths of a `use` line that names several items
/// of one module are written as one (`super::shared::{mbps, ms}`).
fn merge_lines(imports: Vec<Import>) -> Vec<Import> {
    let mut out: Vec<Import> = Vec::new();
    let mut names: Vec<Vec<String>> = Vec::new();
    for i in imports {
        match out.last() {
            Some(last) if (&last.from, &last.to, last.line) == (&i.from, &i.to, i.line) => {
                names.last_mut().expect("one per import").push(i.path);
            }
            _ => {
                names.push(vec![i.path.clone()]);
                out.push(i);
            }
        }
    }
    for (import, paths) in out.iter_mut().zip(names) {
        if paths.len() < 2 {
            continue;
        }
        let split: Vec<Vec<&str>> = paths.iter().map(|p| p.split("::").collect()).collect();
        let mut common = 0;
        while split
            .iter()
            .all(|s| s.len() > common + 1 && s[common] == split[0][common])
        {
            common += 1;
        }
        let tails: Vec<String> = split.iter().map(|s| s[common..].join("::")).collect();
        import.path = format!(
            "{}::{{{}}}",
            split[0][..common].join("::"),
            tails.join(", ")
        );
    }
    out
}

fn read_dir(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.is_dir() {
            read_dir(root, &path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let rel = path.strip_prefix(root).map_err(|e| e.to_string())?;
            out.insert(rel.to_string_lossy().into_owned(), text);
        }
    }
    Ok(())
}

/// The layers, bottom up, from lib.rs's module map: in each `//! - ` bullet, in order, the
/// backticked names that lib.rs declares as modules.
fn layers_of(lib: &str) -> Vec<String> {
    let code = blank_comments_and_strings(lib);
    let declared = child_modules(&without_tests(&code).0);
    let mut bullets = Vec::new();
    let mut current: Option<String> = None;
    for line in lib.lines() {
        let Some(doc) = line.trim_start().strip_prefix("//!") else {
            continue;
        };
        let doc = doc.trim();
        if let Some(item) = doc.strip_prefix("- ") {
            bullets.extend(current.take());
            current = Some(item.to_string());
        } else if doc.is_empty() {
            bullets.extend(current.take());
        } else if let Some(c) = current.as_mut() {
            c.push(' ');
            c.push_str(doc);
        }
    }
    bullets.extend(current);
    let mut layers: Vec<String> = Vec::new();
    for b in bullets {
        for name in b.split('`').skip(1).step_by(2) {
            if declared.iter().any(|d| d == name) && !layers.iter().any(|l| l == name) {
                layers.push(name.to_string());
            }
        }
    }
    layers
}

/// `text` with every comment and the inside of every string and character literal turned
/// into spaces; line breaks stay where they were.
fn blank_comments_and_strings(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, ch: char| out.push(if ch == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < c.len() {
        let at = |k: usize| c.get(k).copied().unwrap_or('\0');
        if at(i) == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if at(i) == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < c.len() {
                if at(i) == '/' && at(i + 1) == '*' {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if at(i) == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
        } else if let Some(quote) = raw_string_quote(&c, i) {
            // A raw string: r"..", r#".."#, br"..": it ends at a quote and as many #.
            let hashes = quote - i - if at(i) == 'b' { 2 } else { 1 };
            out.extend(&c[i..=quote]);
            i = quote + 1;
            while i < c.len() {
                if c[i] == '"' && (1..=hashes).all(|h| at(i + h) == '#') {
                    out.extend(&c[i..=i + hashes]);
                    i += hashes + 1;
                    break;
                }
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if at(i) == '"' {
            i = blank_quoted(&c, i, &mut out);
        } else if at(i) == '\'' && (at(i + 1) == '\\' || (at(i + 1) != '\'' && at(i + 2) == '\'')) {
            // A character literal ('a', '\n', '\u{1F600}'); a lifetime ('a) has no closing quote.
            i = blank_quoted(&c, i, &mut out);
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// A string or character literal opening at `c[i]`, its inside blanked (escapes skipped) onto
/// `out`; returns the index after its closing quote.
fn blank_quoted(c: &[char], mut i: usize, out: &mut String) -> usize {
    let quote = c[i];
    out.push(quote);
    i += 1;
    while i < c.len() && c[i] != quote {
        if c[i] == '\\' {
            out.push(' ');
            i += 1;
        }
        if let Some(&ch) = c.get(i) {
            out.push(if ch == '\n' { '\n' } else { ' ' });
            i += 1;
        }
    }
    out.push(quote);
    i + 1
}

/// Where the opening quote of a raw string starting at `i` is (`r"`, `r#"`, `br"`), if one
/// starts there.
fn raw_string_quote(c: &[char], i: usize) -> Option<usize> {
    let before = i.checked_sub(1).and_then(|b| c.get(b)).copied();
    if before.is_some_and(is_ident) {
        return None;
    }
    let mut k = i;
    if c.get(k) == Some(&'b') {
        k += 1;
    }
    if c.get(k) != Some(&'r') {
        return None;
    }
    k += 1;
    while c.get(k) == Some(&'#') {
        k += 1;
    }
    (c.get(k) == Some(&'"')).then_some(k)
}

fn is_ident(ch: char) -> bool {
    ch.is_alphanumeric() || ch == '_'
}

/// `code` (comments and strings blanked) with every `#[cfg(test)]` item blanked, and how
/// many lines those items spanned.
fn without_tests(code: &str) -> (String, usize) {
    let mut c: Vec<char> = code.chars().collect();
    let mut test_lines = 0;
    let mut i = 0;
    while i < c.len() {
        let Some(after) = cfg_test_at(&c, i) else {
            i += 1;
            continue;
        };
        // The item: further attributes, then up to its `;` or its closing brace.
        let mut k = after;
        let mut depth = 0usize;
        while k < c.len() {
            match c[k] {
                '(' | '[' => depth += 1,
                ')' | ']' => depth = depth.saturating_sub(1),
                ';' if depth == 0 => break,
                // The end of the block around an item without `;` or body (a field, an arm):
                // stop before it.
                '}' if depth == 0 => {
                    k = k.saturating_sub(1);
                    break;
                }
                '{' if depth == 0 => {
                    let mut braces = 0usize;
                    while k < c.len() {
                        match c[k] {
                            '{' => braces += 1,
                            '}' => {
                                braces -= 1;
                                if braces == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                        k += 1;
                    }
                    break;
                }
                _ => {}
            }
            k += 1;
        }
        let end = k.min(c.len().saturating_sub(1));
        test_lines += c[i..=end].iter().filter(|&&ch| ch == '\n').count() + 1;
        for ch in &mut c[i..=end] {
            if *ch != '\n' {
                *ch = ' ';
            }
        }
        i = end + 1;
    }
    (c.into_iter().collect(), test_lines)
}

/// The index after `#[cfg(test)]` when it starts at `i` (spaces allowed between tokens).
fn cfg_test_at(c: &[char], i: usize) -> Option<usize> {
    let mut k = i;
    for token in ["#", "[", "cfg", "(", "test", ")", "]"] {
        while c.get(k).is_some_and(|ch| ch.is_whitespace()) && k > i {
            k += 1;
        }
        for t in token.chars() {
            if c.get(k) != Some(&t) {
                return None;
            }
            k += 1;
        }
    }
    Some(k)
}

/// The modules a file declares with `mod name;` (test-only ones are blanked already).
fn child_modules(code: &str) -> Vec<String> {
    let tokens = tokens(code);
    let mut out = Vec::new();
    for w in tokens.windows(3) {
        if w[0].1 == "mod" && w[2].1 == ";" && w[1].1.chars().all(is_ident) {
            out.push(w[1].1.clone());
        }
    }
    out
}

/// The code's tokens with their lines: identifiers, `::`, and single punctuation.
fn tokens(code: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut line = 1;
    let c: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if is_ident(ch) {
            let start = i;
            while i < c.len() && is_ident(c[i]) {
                i += 1;
            }
            out.push((line, c[start..i].iter().collect()));
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            out.push((line, "::".to_string()));
            i += 2;
        } else {
            out.push((line, ch.to_string()));
            i += 1;
        }
    }
    out
}

/// Every path in the code, with its line: the trees of `use` declarations expanded
/// (`use a::{b, c::d}` is `a::b` and `a::c::d`), and every other `x::y` written inline.
fn paths(code: &str) -> Vec<(usize, Vec<String>)> {
    let t = tokens(code);
    let mut out = Vec::new();
    let mut i = 0;
    while i < t.len() {
        if t[i].1 == "use" && (i == 0 || t[i - 1].1 != "::") {
            let mut k = i + 1;
            if t.get(k).is_some_and(|x| x.1 == "::") {
                // `use ::dep::x`: outside the crate.
                while k < t.len() && t[k].1 != ";" {
                    k += 1;
                }
                i = k;
                continue;
            }
            use_tree(&t, &mut k, &[], &mut out);
            i = k;
            continue;
        }
        // An inline path: identifier (`::` identifier)+, not the tail of a longer one.
        let starts = t[i].1.chars().all(is_ident)
            && t.get(i + 1).is_some_and(|x| x.1 == "::")
            && (i == 0 || t[i - 1].1 != "::");
        if !starts {
            i += 1;
            continue;
        }
        let line = t[i].0;
        let mut segments = vec![t[i].1.clone()];
        let mut k = i + 1;
        while k + 1 < t.len() && t[k].1 == "::" && t[k + 1].1.chars().all(is_ident) {
            segments.push(t[k + 1].1.clone());
            k += 2;
        }
        out.push((line, segments));
        i = k;
    }
    out
}

/// One use tree from `t[*k]`, under `prefix`; leaves `*k` after it (at `,`, `}` or `;`).
fn use_tree(
    t: &[(usize, String)],
    k: &mut usize,
    prefix: &[String],
    out: &mut Vec<(usize, Vec<String>)>,
) {
    let mut path = prefix.to_vec();
    let mut line = t.get(*k).map_or(0, |x| x.0);
    while let Some((l, tok)) = t.get(*k) {
        match tok.as_str() {
            "{" => {
                *k += 1;
                loop {
                    match t.get(*k).map(|x| x.1.as_str()) {
                        Some("}") => {
                            *k += 1;
                            break;
                        }
                        Some(",") => *k += 1,
                        None => return,
                        Some(_) => {
                            // A tree that ends without a closing brace (a `;`, or `use` not
                            // starting a declaration: `impl Trait + use<>`) must not stall.
                            let at = *k;
                            use_tree(t, k, &path, out);
                            if *k == at {
                                *k += 1;
                            }
                        }
                    }
                }
                return;
            }
            "::" => *k += 1,
            "*" => {
                *k += 1;
                out.push((line, path));
                return;
            }
            "as" => {
                // `as name`: the name is not part of the path.
                *k += 2;
            }
            "," | "}" | ";" => {
                if !path.is_empty() {
                    out.push((line, path));
                }
                return;
            }
            "self" if path.len() == prefix.len() && !prefix.is_empty() => {
                // `use a::{self, b}`: `self` is `a`.
                line = *l;
                *k += 1;
            }
            word if word.chars().all(is_ident) => {
                if path.len() == prefix.len() {
                    line = *l;
                }
                path.push(word.to_string());
                *k += 1;
            }
            _ => {
                *k += 1;
            }
        }
    }
}

/// The circles of the graph: its strongly connected parts of more than one file, each
/// sorted (Tarjan's algorithm).
fn circles(imports: &[Import]) -> Vec<Vec<String>> {
    let mut next: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for i in imports {
        next.entry(&i.from).or_default().insert(&i.to);
        next.entry(&i.to).or_default();
    }
    struct Walk<'a> {
        next: &'a BTreeMap<&'a str, BTreeSet<&'a str>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on_stack.insert(v);
            let next = self.next;
            for &w in next.get(v).into_iter().flatten() {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(lw);
                } else if self.on_stack.contains(w) {
                    let iw = self.index[w];
                    let lv = self.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[v] == self.index[v] {
                let mut part = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    part.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if part.len() > 1 {
                    part.sort();
                    self.found.push(part);
                }
            }
        }
    }
    let mut walk = Walk {
        next: &next,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for &v in next.keys() {
        if !walk.index.contains_key(v) {
            walk.visit(v);
        }
    }
    walk.found.sort();
    walk.found
}

/// What today's exceptions are, so the check can hold them to it.
struct Known<'a> {
    circles: &'a [&'a [&'a str]],
    upward: &'a [(&'a str, &'a str)],
    big: &'a [&'a str],
}

/// Everything wrong with the crate's shape beyond `known`, and every exception in `known`
/// that is gone; empty when the shape holds.
fn check(krate: &Crate, known: &Known) -> Vec<String> {
    let mut failures = Vec::new();
    let imports = krate.imports();
    for top in krate.files.keys().filter(|m| m.len() == 1) {
        if !krate.layers.contains(&top[0]) {
            failures.push(format!(
                "module `{}` is not in src/lib.rs's module map: add it to the bullets, at its \
                 layer",
                top[0]
            ));
        }
    }

    let found = circles(&imports);
    for circle in &found {
        if known.circles.iter().any(|k| k.iter().eq(circle.iter())) {
            continue;
        }
        let mut s = format!(
            "import circle between {} files: {}\n",
            circle.len(),
            circle.join(", ")
        );
        s.push_str("  the imports among them (break one of these):\n");
        for i in imports
            .iter()
            .filter(|i| circle.contains(&i.from) && circle.contains(&i.to))
        {
            let _ = writeln!(s, "    {i}");
        }
        failures.push(s);
    }
    for k in known.circles {
        if !found.iter().any(|c| k.iter().eq(c.iter())) {
            failures.push(format!(
                "the known circle [{}] is not there any more (as listed): remove it from the \
                 list KNOWN_CIRCLES in src/shape.rs{}",
                k.join(", "),
                if found.is_empty() {
                    String::new()
                } else {
                    format!("; the circles there are now: {found:?}")
                }
            ));
        }
    }

    let mut upward = BTreeSet::new();
    for i in &imports {
        let (Some(from), Some(to)) = (krate.layer(&i.from), krate.layer(&i.to)) else {
            continue;
        };
        if to > from && !i.from.ends_with("src/lib.rs") {
            upward.insert((i.from.as_str(), i.to.as_str()));
            if !known.upward.contains(&(i.from.as_str(), i.to.as_str())) {
                failures.push(format!(
                    "import up the layers (src/lib.rs's module map: {}): {i}",
                    krate.layers.join(" < ")
                ));
            }
        }
    }
    for k in known.upward {
        if !upward.contains(k) {
            failures.push(format!(
                "the known upward import {} -> {} is not there any more: remove it from the list \
                 KNOWN_UPWARD in src/shape.rs",
                k.0, k.1
            ));
        }
    }

    for f in krate.files.values() {
        let big = f.lines_without_tests > MAX_LINES;
        let listed = known.big.contains(&f.file.as_str());
        if big && !listed {
            failures.push(format!(
                "{} has {} lines without its tests, more than {MAX_LINES}: split it",
                f.file, f.lines_without_tests
            ));
        } else if listed && !big {
            failures.push(format!(
                "{} has {} lines without its tests now: remove it from the list KNOWN_BIG in \
                 src/shape.rs",
                f.file, f.lines_without_tests
            ));
        }
    }
    for k in known.big {
        if !krate.files.values().any(|f| f.file == *k) {
            failures.push(format!(
                "{k} is gone: remove it from the list KNOWN_BIG in src/shape.rs"
            ));
        }
    }
    failures
}

/// The files of `flow/` that hold a job (`impl Job for` or `impl job::Job for`).
fn jobs(krate: &Crate) -> Vec<String> {
    krate
        .files
        .values()
        .filter(|f| f.module.first().is_some_and(|m| m == "flow"))
        .filter(|f| {
            let code: String = f.code.split_whitespace().collect::<Vec<_>>().join(" ");
            code.contains("impl Job for") || code.contains("job::Job for")
        })
        .map(|f| f.file.clone())
        .collect()
}

/// A job must be only its file and its registration: the trait's file and the runner import
/// no other file of `flow/` (no list of jobs to add a line to).
fn job_failures(krate: &Crate) -> Vec<String> {
    krate
        .imports()
        .into_iter()
        .filter(|i| JOB_GENERIC.contains(&i.from.as_str()))
        .filter(|i| i.to.starts_with("src/flow/") && !JOB_GENERIC.contains(&i.to.as_str()))
        .map(|i| {
            format!("{i}: the job trait and the runner name no job (a job is its file and its `pub mod` line)")
        })
        .collect()
}

/// The files a recipe of docs/development.md names (backticked `src/...` paths, each once)
/// and the section's text; None when the heading is missing.
fn recipe_files(doc: &str, heading: &str) -> Option<Vec<String>> {
    let start = doc.lines().position(|l| l.trim_end() == heading)?;
    let mut files: Vec<String> = Vec::new();
    for line in doc.lines().skip(start + 1) {
        if line.starts_with("#") {
            break;
        }
        for quoted in line.split('`').skip(1).step_by(2) {
            let path = quoted.split_whitespace().next().unwrap_or("");
            if path.starts_with("src/") && path.ends_with(".rs") && !files.iter().any(|f| f == path)
            {
                files.push(path.to_string());
            }
        }
    }
    Some(files)
}

/// Each recipe names at most its count of files, and every file it names exists (a name
/// with `<...>` is the new file itself).
fn recipe_failures(doc: &str, exists: &dyn Fn(&str) -> bool) -> Vec<String> {
    let mut failures = Vec::new();
    for (heading, most) in RECIPES {
        let Some(files) = recipe_files(doc, heading) else {
            failures.push(format!("docs/development.md has no section `{heading}`"));
            continue;
        };
        if files.len() > *most || files.is_empty() {
            failures.push(format!(
                "`{heading}` in docs/development.md names {} files, {files:?}: at most {most}",
                files.len()
            ));
        }
        for f in files.iter().filter(|f| !f.contains('<') && !exists(f)) {
            failures.push(format!("`{heading}` names {f}, which does not exist"));
        }
    }
    failures
}

#[test]
fn the_crate_keeps_its_shape() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let krate = Crate::read(&src).expect("src/ reads");
    let failures = check(
        &krate,
        &Known {
            circles: KNOWN_CIRCLES,
            upward: KNOWN_UPWARD,
            big: KNOWN_BIG,
        },
    );
    let mut failures = failures;
    failures.extend(job_failures(&krate));
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/development.md")).expect("the doc reads");
    failures.extend(recipe_failures(&doc, &|f| root.join(f).is_file()));
    assert!(
        failures.is_empty(),
        "the crate's shape (src/shape.rs):\n\n{}",
        failures.join("\n")
    );
}

/// The crate as it is, read from `src/`, as sources to change.
fn real_sources() -> BTreeMap<String, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut sources = BTreeMap::new();
    read_dir(&src, &src, &mut sources).expect("src/ reads");
    sources
}

#[test]
fn the_screen_importing_cli_code_is_an_import_up_the_layers() {
    let mut sources = real_sources();
    let executor = sources["tui/executor.rs"].clone();
    sources.insert(
        "tui/executor.rs".into(),
        format!("use crate::commands::scan::scan;\n{executor}"),
    );
    let app = sources["app.rs"].clone();
    sources.insert("app.rs".into(), format!("use crate::cli::Cli;\n{app}"));
    let krate = Crate::from_sources(&sources).expect("the crate reads");
    let failures = check(&krate, &NOTHING_KNOWN);
    for (from, to) in [
        ("src/tui/executor.rs:1 imports src/commands/scan.rs", "tui"),
        ("src/app.rs:1 imports src/cli.rs", "app"),
    ] {
        assert!(
            failures
                .iter()
                .any(|f| f.starts_with("import up the layers") && f.contains(from)),
            "{to} may not use CLI code: {failures:#?}"
        );
    }
}

#[test]
fn a_new_job_is_its_file_and_its_registration() {
    let before = real_sources();
    let (mut sources, changed) = with_fake(false);
    assert_eq!(changed, ["src/flow.rs", "src/flow/fake.rs"]);
    let krate = Crate::from_sources(&sources).expect("the crate reads");
    assert!(jobs(&krate).contains(&"src/flow/fake.rs".to_string()));
    assert_eq!(check(&krate, &NOTHING_KNOWN), Vec::<String>::new());
    assert_eq!(job_failures(&krate), Vec::<String>::new());
    // Every job the crate has is found, and the runner naming one fails.
    let real = jobs(&Crate::from_sources(&before).expect("the crate reads"));
    for job in [
        "src/flow/scan.rs",
        "src/flow/triage.rs",
        "src/flow/flushcheck.rs",
    ] {
        assert!(real.iter().any(|j| j == job), "{job} not found in {real:?}");
    }
    let runner = format!("use crate::flow::fake::Fake;\n{}", sources["tui/jobs.rs"]);
    sources.insert("tui/jobs.rs".into(), runner);
    let krate = Crate::from_sources(&sources).expect("the crate reads");
    let failures = job_failures(&krate);
    assert_eq!(failures.len(), 1, "{failures:#?}");
    assert!(failures[0].starts_with("src/tui/jobs.rs:1 imports src/flow/fake.rs"));
}

/// A fake job with its order, as `src/flow/<job>.rs` (the recipes' example).
const FAKE_JOB: &str = "//! A fake job.\nuse super::job::{Job, JobContext, JobEnv, Order};\n\
pub const NAME: &str = \"fake\";\n#[derive(Debug, Clone, PartialEq)]\npub struct Fake;\n\
impl Order for Fake {\n    type Job = Fake;\n    fn job(self, _: &JobEnv) -> Fake {\n        \
self\n    }\n}\nimpl Job for Fake {\n    type Msg = ();\n    type Output = ();\n    fn name(&self) -> &'static str {\n        \
NAME\n    }\n    fn cannot_start(&self, _: &std::io::Error) {}\n    fn run(self, ctx: \
&JobContext<'_, ()>) {\n        ctx.send(());\n    }\n}\n";

/// A fake screen that runs the fake job: starts it from a key, stops it on leaving, takes
/// its messages through its `ScreenDef`.
const FAKE_SCREEN: &str = "//! A fake screen that runs the fake job.\nuse ratatui::Frame;\n\
use ratatui::crossterm::event::KeyCode;\nuse ratatui::layout::Rect;\n\
use super::super::keys::{Action, Binding};\nuse super::super::App;\n\
use super::{JobHook, ScreenDef};\nuse crate::event::{Cmd, JobMsg, JobOrder};\n\
use crate::flow::fake::{self as job, Fake};\n\
#[derive(Debug, Clone, PartialEq, Default)]\npub struct FakeScreen {\n    pub heard: usize,\n}\n\
const KEYS: &[Binding] = &[];\npub const SCREEN: ScreenDef = ScreenDef {\n    title: \"Fake\",\n    \
keys: KEYS,\n    act,\n    works_now: |_, _| true,\n    draw,\n    leave,\n    job: \
Some(JobHook {\n        name: job::NAME,\n        on_msg,\n    }),\n};\n\
fn act(_: &mut App, _: Action, _: KeyCode) -> Vec<Cmd> {\n    \
vec![Cmd::StartJob(JobOrder::new(Fake))]\n}\nfn leave(_: &mut App) -> Vec<Cmd> {\n    \
vec![Cmd::StopJob(job::NAME)]\n}\nfn on_msg(app: &mut App, msg: JobMsg) -> Vec<Cmd> {\n    \
if msg.take::<()>().is_ok() {\n        app.screens.fake.heard += 1;\n    }\n    Vec::new()\n}\n\
fn draw(_: &App, _: &mut Frame, _: Rect) {}\n";

/// The real crate with the fake job (and the fake screen that runs it, when `screen`) added as
/// the recipes say, and the files that changed.
fn with_fake(screen: bool) -> (BTreeMap<String, String>, Vec<String>) {
    let mut sources = real_sources();
    let before = sources.clone();
    sources.insert("flow/fake.rs".into(), FAKE_JOB.into());
    let flow = sources["flow.rs"].replace("pub mod job;", "pub mod fake;\npub mod job;");
    sources.insert("flow.rs".into(), flow);
    if screen {
        sources.insert("app/screens/fake.rs".into(), FAKE_SCREEN.into());
        let registry = sources["app/screens.rs"]
            .replace("pub mod flush;", "pub mod fake;\npub mod flush;")
            .replace(
                "Flush { flush: flush::FlushScreen } => flush::SCREEN,",
                "Flush { flush: flush::FlushScreen } => flush::SCREEN,\n    \
                 Fake { fake: fake::FakeScreen } => fake::SCREEN,",
            );
        sources.insert("app/screens.rs".into(), registry);
    }
    let changed = sources
        .iter()
        .filter(|(k, v)| before.get(*k) != Some(*v))
        .map(|(k, _)| format!("src/{k}"))
        .collect();
    (sources, changed)
}

#[test]
fn a_new_screen_that_runs_a_job_is_the_files_its_recipe_names() {
    let (sources, changed) = with_fake(true);
    assert_eq!(
        changed,
        [
            "src/app/screens.rs",
            "src/app/screens/fake.rs",
            "src/flow.rs",
            "src/flow/fake.rs"
        ]
    );
    // Each change is one line, besides the new files.
    let real = real_sources();
    for (file, lines) in [("flow.rs", 1), ("app/screens.rs", 2)] {
        let added = sources[file].lines().count() - real[file].lines().count();
        assert_eq!(added, lines, "{file}");
    }
    let krate = Crate::from_sources(&sources).expect("the crate reads");
    assert_eq!(check(&krate, &NOTHING_KNOWN), Vec::<String>::new());
    assert_eq!(job_failures(&krate), Vec::<String>::new());
    // The recipe names exactly these files, the new ones by their placeholders.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/development.md")).expect("the doc reads");
    let named: BTreeSet<String> = recipe_files(&doc, "### Add a screen that runs a job")
        .expect("the recipe is in the doc")
        .into_iter()
        .map(|f| f.replace("<screen>", "fake").replace("<job>", "fake"))
        .collect();
    assert_eq!(named, changed.into_iter().collect::<BTreeSet<_>>());
}

#[test]
fn a_recipe_that_names_too_many_files_or_a_missing_one_fails() {
    let doc = "# Dev\n\n### Add a job\n\nOne file, `src/flow/<job>.rs`, and a line in \
               `src/flow.rs`.\n\n### Add a screen that runs a job\n\n`src/a.rs`, `src/b.rs` \
               (`src/a.rs` again), `src/c.rs`, `src/d.rs`.\n\n### Add an I/O engine\n\n\
               `src/x/<name>.rs` and a line in `src/x.rs`.\n\n### Other\n\n`src/e.rs`\n";
    let all = |_: &str| true;
    assert_eq!(recipe_failures(doc, &all), Vec::<String>::new());
    assert_eq!(
        recipe_files(doc, "### Add a job").unwrap(),
        ["src/flow/<job>.rs", "src/flow.rs"]
    );
    let more = doc.replace("`src/d.rs`.", "`src/d.rs`, `src/f.rs`, `src/g.rs`.");
    let failures = recipe_failures(&more, &all);
    assert_eq!(failures.len(), 1, "{failures:#?}");
    assert!(failures[0].contains("names 6 files"));
    // An engine that needs a third file fails too.
    let third = doc.replace("`src/x.rs`.", "`src/x.rs` and `src/y.rs`.");
    let failures = recipe_failures(&third, &all);
    assert_eq!(failures.len(), 1, "{failures:#?}");
    assert!(failures[0].starts_with("`### Add an I/O engine` in docs/development.md names 3"));
    let none = |_: &str| false;
    let failures = recipe_failures(doc, &none);
    assert_eq!(failures.len(), 6, "{failures:#?}");
    assert!(recipe_failures("# Dev\n", &all).len() == 3);
}

/// A crate of three layers, `low` under `high` under `top`, for the checker's own tests:
/// `low/a.rs` and `low/b.rs` import each other, `low.rs` and `low/b.rs` reach up into `high`,
/// `top` down into `low`; what is in a comment, a string or a `#[cfg(test)]` item does not
/// count.
fn fixture() -> BTreeMap<String, String> {
    let files = [
        (
            "lib.rs",
            "//! A fixture.\n//!\n//! - `low`: the bottom, with `a` and `b`.\n//! - `high`: above \
             it,\n//!   uses `low`.\n//! - `top`: uses both.\n\npub mod high;\npub mod low;\npub \
             mod top;\n#[cfg(test)]\nmod checks;\n",
        ),
        (
            "low.rs",
            "//! Low: see `crate::high::Thing` (a comment).\npub mod a;\npub mod b;\n\npub const \
             S: &str = \"crate::high::VALUE\";\npub fn up() -> u8 {\n    crate::high::VALUE\n}\n",
        ),
        (
            "low/a.rs",
            "use super::b::{BEE, Bee};\npub struct Ay(Bee);\npub const A: u8 = BEE;\n",
        ),
        (
            "low/b.rs",
            "use crate::{high, low::a::Ay};\npub struct Bee;\npub const BEE: u8 = 0;\nfn f(_: Ay) -> char {\n    '{'\n}\n\
             #[cfg(test)]\nmod tests {\n    use crate::high::VALUE;\n}\n",
        ),
        ("high.rs", "pub const VALUE: u8 = 1;\n"),
        (
            "top.rs",
            "use crate::low::{self, a::Ay};\npub fn g() -> &'static str {\n    low::S\n}\npub struct \
             T {\n    #[cfg(test)]\n    pub probe: u8\n}\npub fn h() -> u8 {\n    \
             crate::high::VALUE\n}\n",
        ),
        ("checks.rs", "use crate::high::VALUE;\nuse crate::low::a;\n"),
    ];
    files
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

const NOTHING_KNOWN: Known = Known {
    circles: &[],
    upward: &[],
    big: &[],
};

#[test]
fn the_checker_reads_every_kind_of_path_and_nothing_else() {
    let krate = Crate::from_sources(&fixture()).expect("the fixture reads");
    assert_eq!(krate.layers, ["low", "high", "top"]);
    let found: Vec<String> = krate.imports().iter().map(ToString::to_string).collect();
    assert_eq!(
        found,
        [
            "src/low.rs:7 imports src/high.rs (crate::high::VALUE)",
            "src/low/a.rs:1 imports src/low/b.rs (super::b::{BEE, Bee})",
            "src/low/b.rs:1 imports src/high.rs (crate::high)",
            "src/low/b.rs:1 imports src/low/a.rs (crate::low::a::Ay)",
            "src/top.rs:1 imports src/low.rs (crate::low)",
            "src/top.rs:1 imports src/low/a.rs (crate::low::a::Ay)",
            "src/top.rs:10 imports src/high.rs (crate::high::VALUE)",
        ]
    );
}

#[test]
fn an_injected_circle_fails_naming_its_files_and_imports() {
    let krate = Crate::from_sources(&fixture()).expect("the fixture reads");
    let failures = check(&krate, &NOTHING_KNOWN).join("\n");
    assert!(
        failures.contains("import circle between 2 files: src/low/a.rs, src/low/b.rs"),
        "{failures}"
    );
    assert!(
        failures.contains("src/low/a.rs:1 imports src/low/b.rs (super::b::{BEE, Bee})"),
        "{failures}"
    );
    assert!(
        failures.contains("src/low/b.rs:1 imports src/low/a.rs (crate::low::a::Ay)"),
        "{failures}"
    );
}

#[test]
fn an_import_up_the_layers_fails_with_its_line_and_down_is_fine() {
    let krate = Crate::from_sources(&fixture()).expect("the fixture reads");
    let failures = check(&krate, &NOTHING_KNOWN);
    let upward: Vec<&String> = failures
        .iter()
        .filter(|f| f.starts_with("import up the layers"))
        .collect();
    assert_eq!(upward.len(), 2, "{failures:#?}");
    assert!(upward[0].ends_with("src/low.rs:7 imports src/high.rs (crate::high::VALUE)"));
    assert!(upward[1].ends_with("src/low/b.rs:1 imports src/high.rs (crate::high)"));
}

#[test]
fn known_exceptions_pass_and_a_mended_one_must_leave_the_list() {
    let krate = Crate::from_sources(&fixture()).expect("the fixture reads");
    let as_today = Known {
        circles: &[&["src/low/a.rs", "src/low/b.rs"]],
        upward: &[
            ("src/low.rs", "src/high.rs"),
            ("src/low/b.rs", "src/high.rs"),
        ],
        big: &[],
    };
    assert_eq!(check(&krate, &as_today), Vec::<String>::new());

    let stale = Known {
        circles: &[
            &["src/low/a.rs", "src/low/b.rs"],
            &["src/high.rs", "src/low.rs"],
        ],
        upward: &[
            ("src/low.rs", "src/high.rs"),
            ("src/low/b.rs", "src/high.rs"),
            ("src/low/a.rs", "src/high.rs"),
        ],
        big: &["src/low.rs", "src/gone.rs"],
    };
    let failures = check(&krate, &stale);
    assert_eq!(failures.len(), 4, "{failures:#?}");
    assert!(
        failures
            .iter()
            .all(|f| f.contains("remove it from the list"))
    );
}

#[test]
fn a_big_file_fails_and_its_tests_do_not_count() {
    let mut sources = fixture();
    let code = "pub fn f() {}\n".repeat(MAX_LINES);
    let tests = format!(
        "#[cfg(test)]\nmod tests {{\n{}}}\n",
        "    // a test\n".repeat(300)
    );
    sources.insert("high.rs".into(), format!("{code}{tests}"));
    let krate = Crate::from_sources(&sources).expect("the fixture reads");
    assert_eq!(
        check(&krate, &NOTHING_KNOWN)
            .iter()
            .filter(|f| f.contains("split it"))
            .count(),
        0
    );

    sources.insert(
        "high.rs".into(),
        format!("{code}pub fn one_more() {{}}\n{tests}"),
    );
    let krate = Crate::from_sources(&sources).expect("the fixture reads");
    let failures = check(&krate, &NOTHING_KNOWN);
    assert!(
        failures.contains(&format!(
            "src/high.rs has {} lines without its tests, more than {MAX_LINES}: split it",
            MAX_LINES + 1
        )),
        "{failures:#?}"
    );
}

#[test]
fn a_module_missing_from_the_map_fails() {
    let mut sources = fixture();
    let lib = sources["lib.rs"].replace("pub mod low;", "pub mod low;\npub mod stray;");
    sources.insert("lib.rs".into(), lib);
    sources.insert("stray.rs".into(), String::new());
    let krate = Crate::from_sources(&sources).expect("the fixture reads");
    assert!(
        check(&krate, &NOTHING_KNOWN)
            .iter()
            .any(|f| f.starts_with("module `stray` is not in src/lib.rs's module map"))
    );
}

/// The recipes in docs/development.md name files that exist (`<name>` stands for the new
/// file: its folder must exist).
#[test]
fn the_recipes_name_files_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/development.md")).expect("the doc reads");
    for recipe in [
        "### Add a test family",
        "### Add an I/O engine",
        "### Add an export format",
    ] {
        let start = doc.find(recipe).expect("the recipe is in the doc") + recipe.len();
        let text = &doc[start..];
        let text = &text[..text.find("\n### ").unwrap_or(text.len())];
        // The code spans that are paths under src/.
        let files: Vec<&str> = text
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|s| s.starts_with("src/"))
            .collect();
        assert!(files.len() >= 2, "{recipe} names {files:?}");
        for file in files {
            let path = root.join(file.split('<').next().unwrap_or(file));
            assert!(path.exists(), "{recipe} names {file}, which does not exist");
        }
    }
}

/// "Add a dialog" is one file and one line (`docs/development.md`): every file under
/// `src/app/dialogs/` is registered once in `dialogs!` (`src/app/dialogs.rs`), and no other
/// file dispatches on a dialog (a `match`, `if let` or `let`-`else` pattern naming its
/// `Overlay` variant); opening one (building its variant) is the opener's business.
fn dialog_recipe(krate: &Crate) -> Vec<String> {
    let at = |m: &[&str]| m.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let Some(registry) = krate.files.get(&at(&["app", "dialogs"])) else {
        return vec!["src/app/dialogs.rs, the dialogs' registry, is missing".into()];
    };
    let dialogs: Vec<&ModuleFile> = krate
        .files
        .values()
        .filter(|f| f.module.len() == 3 && f.module[..2] == at(&["app", "dialogs"]))
        .collect();
    let mut failures = Vec::new();
    let mut variants = Vec::new();
    for f in &dialogs {
        let line = format!("=> {}::DIALOG,", f.module[2]);
        let lines: Vec<&str> = registry
            .code
            .lines()
            .filter(|l| l.contains(&line))
            .collect();
        match lines.as_slice() {
            [one] => variants.push(one.trim().split(|c| !is_ident(c)).next().unwrap_or("")),
            _ => failures.push(format!(
                "{} is registered {} times in `dialogs!` (src/app/dialogs.rs): once, as \
                 `Variant(State) {line}`",
                f.file,
                lines.len()
            )),
        }
    }
    let registered = registry
        .code
        .lines()
        .filter(|l| l.contains("::DIALOG,"))
        .count();
    if registered != dialogs.len() {
        failures.push(format!(
            "`dialogs!` has {registered} lines for {} files under src/app/dialogs/",
            dialogs.len()
        ));
    }
    for f in krate.files.values() {
        if f.module.starts_with(&at(&["app", "dialogs"])) {
            continue;
        }
        for variant in &variants {
            let word = format!("Overlay::{variant}");
            for (i, _) in f.code.match_indices(&word) {
                let rest = &f.code[i + word.len()..];
                if !rest.starts_with(is_ident) && ends_a_pattern(rest) {
                    failures.push(format!(
                        "{}:{} dispatches on the dialog {word}: what it does belongs in its \
                         file under src/app/dialogs/",
                        f.file,
                        f.code[..i].lines().count().max(1)
                    ));
                }
            }
        }
    }
    failures
}

/// Is `rest`, the text after `Overlay::Variant`, the end of a pattern: the variant's group,
/// closing parentheses, then `=>`, `|`, `if` or a `let`'s `=`?
fn ends_a_pattern(rest: &str) -> bool {
    let mut rest = rest.trim_start();
    if rest.starts_with(['(', '{']) {
        let mut depth = 0;
        for (i, c) in rest.char_indices() {
            match c {
                '(' | '{' | '[' => depth += 1,
                ')' | '}' | ']' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                rest = &rest[i + 1..];
                break;
            }
        }
    }
    let rest = rest.trim_start_matches(|c: char| c == ')' || c.is_whitespace());
    rest.starts_with("=>")
        || (rest.starts_with('|') && !rest.starts_with("||"))
        || rest.starts_with("if ")
        || (rest.starts_with('=') && !rest.starts_with("=="))
}

#[test]
fn a_dialog_is_one_file_and_one_line() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let krate = Crate::read(&src).expect("src/ reads");
    let failures = dialog_recipe(&krate);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn an_unregistered_dialog_and_a_dispatch_outside_its_file_fail() {
    let sources: BTreeMap<String, String> = [
        ("lib.rs", "//! - `app`: all.\npub mod app;\n"),
        ("app.rs", "pub mod dialogs;\npub mod other;\n"),
        (
            "app/dialogs.rs",
            "pub mod one;\npub mod two;\ndialogs! {\n    One(one::One) => one::DIALOG,\n}\n",
        ),
        ("app/dialogs/one.rs", "pub struct One;\n"),
        ("app/dialogs/two.rs", "pub struct Two;\n"),
        (
            "app/other.rs",
            "fn open() -> Option<Overlay> {\n    Some(Overlay::One(One {}))\n}\nfn key(o: \
             Overlay) -> u8 {\n    match o {\n        Overlay::One(_) => 1,\n    }\n}\n",
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let krate = Crate::from_sources(&sources).expect("the fixture reads");
    assert_eq!(
        dialog_recipe(&krate),
        [
            "src/app/dialogs/two.rs is registered 0 times in `dialogs!` (src/app/dialogs.rs): \
             once, as `Variant(State) => two::DIALOG,`",
            "`dialogs!` has 1 lines for 2 files under src/app/dialogs/",
            "src/app/other.rs:6 dispatches on the dialog Overlay::One: what it does belongs in \
             its file under src/app/dialogs/",
        ]
    );
}

/// The engines' registration, `src/bench/exec/engines.rs`, whose folder holds their files.
const ENGINE_REGISTRY: &[&str] = &["bench", "exec", "engines"];

/// "Add an I/O engine" is its file and its line (docs/development.md): every file of
/// `src/bench/exec/engines/` with a row of words (`const ROW: EngineRow`) has one line in
/// `ENGINES`, `register(&<file>::ROW, …)`, and the table no other; and only the engines and
/// the plan's `auto` make a kind from a row (`EngineKind::of`), so every kind the crate holds
/// is `auto` or a registered engine's and `engines::for_kind` finds it.
fn engine_recipe(krate: &Crate) -> Vec<String> {
    let at = |m: &[&str]| m.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let Some(registry) = krate.files.get(&at(ENGINE_REGISTRY)) else {
        return vec!["src/bench/exec/engines.rs, the engines' registration, is missing".into()];
    };
    let squeezed = |code: &str| code.split_whitespace().collect::<Vec<_>>().join(" ");
    let engines: Vec<&ModuleFile> = krate
        .files
        .values()
        .filter(|f| f.module.len() == 4 && f.module[..3] == at(ENGINE_REGISTRY))
        .filter(|f| squeezed(&f.code).contains("const ROW: EngineRow"))
        .collect();
    let mut failures = Vec::new();
    let lines = |needle: &str| {
        registry
            .code
            .lines()
            .filter(|l| l.split_whitespace().collect::<String>().contains(needle))
            .count()
    };
    for f in &engines {
        let line = format!("register(&{}::ROW,", f.module[3]);
        let found = lines(&line);
        if found != 1 {
            failures.push(format!(
                "{} is registered {found} times in `ENGINES` (src/bench/exec/engines.rs): once, \
                 as `{line} &{}::YourEngine),`",
                f.file, f.module[3]
            ));
        }
    }
    let registered = lines("register(&");
    if registered != engines.len() {
        failures.push(format!(
            "`ENGINES` has {registered} lines for {} engine files under src/bench/exec/engines/",
            engines.len()
        ));
    }
    for f in krate.files.values() {
        if f.module.starts_with(&at(ENGINE_REGISTRY))
            || f.module == at(&["bench", "plan", "engine_kind"])
        {
            continue;
        }
        let code = squeezed(&f.code).replace(" :: ", "::");
        if code.contains("EngineKind::of(") {
            failures.push(format!(
                "{} makes an engine kind from a row (`EngineKind::of`): only an engine's file \
                 does, for its registered row; take the kind from `engines::ALL` or the \
                 engine",
                f.file
            ));
        }
    }
    failures
}

#[test]
fn every_engine_file_is_registered_once() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let krate = Crate::read(&src).expect("src/ reads");
    let failures = engine_recipe(&krate);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // It sees today's engines: each one's line taken out fails.
    for engine in ["io_uring", "threads"] {
        let mut sources = real_sources();
        let registry = sources["bench/exec/engines.rs"]
            .lines()
            .filter(|l| !l.contains(&format!("register(&{engine}::ROW")))
            .collect::<Vec<_>>()
            .join("\n");
        sources.insert("bench/exec/engines.rs".into(), registry);
        let krate = Crate::from_sources(&sources).expect("the crate reads");
        let failures = engine_recipe(&krate);
        assert!(
            failures.iter().any(|f| f.starts_with(&format!(
                "src/bench/exec/engines/{engine}.rs is registered 0 times"
            ))),
            "{failures:#?}"
        );
    }
}

/// A fake engine, as `src/bench/exec/engines/<name>.rs` (the recipe's example): its row and
/// its `IoEngine`.
const FAKE_ENGINE: &str = "//! A fake engine.\nuse crate::bench::exec::engine::{EngineThread, \
IoEngine, WorkerCtx};\nuse crate::bench::plan::Job;\n\
use crate::bench::plan::engine_kind::{EngineKind, EngineRow, IoShape};\n\
pub const ROW: EngineRow = EngineRow {\n    arg: \"fake\",\n    name: \"fake\",\n    help: \
\"a fake engine\",\n    shape: IoShape::Ring,\n};\npub struct Fake;\nimpl IoEngine for Fake {\n    \
fn kind(&self) -> EngineKind {\n        EngineKind::of(&ROW)\n    }\n    fn threads_per_worker(\
&self, _: &Job) -> u32 {\n        1\n    }\n    fn may_fix_buffers(&self) -> bool {\n        \
false\n    }\n    fn open_thread(&self, _: &WorkerCtx, _: u32) -> Result<Box<dyn EngineThread>, \
String> {\n        Err(\"fake\".into())\n    }\n}\n";

/// The real crate with the fake engine added as the recipe says (its line in `ENGINES` only
/// when `register`), and the files that changed.
fn with_fake_engine(register: bool) -> (BTreeMap<String, String>, Vec<String>) {
    let mut sources = real_sources();
    let before = sources.clone();
    sources.insert("bench/exec/engines/fake.rs".into(), FAKE_ENGINE.into());
    let mut registry = sources["bench/exec/engines.rs"]
        .replace("pub mod directory;", "pub mod directory;\npub mod fake;");
    if register {
        registry = registry.replace(
            "    register(&threads::ROW, &threads::Threads),\n",
            "    register(&threads::ROW, &threads::Threads),\n    register(&fake::ROW, &fake::Fake),\n",
        );
    }
    sources.insert("bench/exec/engines.rs".into(), registry);
    let changed = sources
        .iter()
        .filter(|(k, v)| before.get(*k) != Some(*v))
        .map(|(k, _)| format!("src/{k}"))
        .collect();
    (sources, changed)
}

#[test]
fn a_new_engine_is_its_file_and_its_line() {
    let (sources, changed) = with_fake_engine(true);
    assert_eq!(
        changed,
        [
            "src/bench/exec/engines.rs",
            "src/bench/exec/engines/fake.rs"
        ]
    );
    // Its `pub mod` line and its line in `ENGINES`, besides the new file.
    let real = real_sources();
    let file = "bench/exec/engines.rs";
    assert_eq!(
        sources[file].lines().count() - real[file].lines().count(),
        2
    );
    let krate = Crate::from_sources(&sources).expect("the crate reads");
    assert_eq!(check(&krate, &NOTHING_KNOWN), Vec::<String>::new());
    assert_eq!(engine_recipe(&krate), Vec::<String>::new());
    // The recipe names exactly these files, the new one by its placeholder.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/development.md")).expect("the doc reads");
    let named: BTreeSet<String> = recipe_files(&doc, "### Add an I/O engine")
        .expect("the recipe is in the doc")
        .into_iter()
        .map(|f| f.replace("<name>", "fake"))
        .collect();
    assert_eq!(named, changed.into_iter().collect::<BTreeSet<_>>());
}

#[test]
fn an_unregistered_engine_and_a_kind_made_elsewhere_fail() {
    let (mut sources, _) = with_fake_engine(false);
    let fio = format!(
        "const FAKE: crate::bench::plan::params::EngineKind =\n    \
         crate::bench::plan::params::EngineKind::of(&crate::bench::exec::engines::fake::ROW);\n{}",
        sources["report/run/fio.rs"]
    );
    sources.insert("report/run/fio.rs".into(), fio);
    let krate = Crate::from_sources(&sources).expect("the crate reads");
    assert_eq!(
        engine_recipe(&krate),
        [
            "src/bench/exec/engines/fake.rs is registered 0 times in `ENGINES` \
             (src/bench/exec/engines.rs): once, as `register(&fake::ROW, &fake::YourEngine),`",
            "`ENGINES` has 2 lines for 3 engine files under src/bench/exec/engines/",
            "src/report/run/fio.rs makes an engine kind from a row (`EngineKind::of`): only an \
             engine's file does, for its registered row; take the kind from `engines::ALL` or \
             the engine",
        ]
    );
}
