//! Names resolved through the tree's own modules (CONTRACT.md section 15.1): `from .cli import
//! sys` in `shop/pricing.py` is `sys` when `shop/cli.py` binds `sys` by an import, so
//! `sys.modules` there is what it is; `import shop.cli as c; c.sys.argv` alike, and a name a
//! module star-imports is looked up in the module it comes from. Modules are read from the
//! judged tree, once each, and at most [`MAX_MODULES`] of them.

use std::collections::{HashMap, HashSet};

use super::super::error::CliError;
use super::super::git::blobs;
use super::python;
use super::source;

/// At most this many of the tree's modules are read to resolve names.
const MAX_MODULES: usize = 256;
/// Each up to this many bytes.
const MAX_MODULE_BYTES: usize = 8 << 20;
/// A name is followed through at most this many modules.
const MAX_HOPS: usize = 16;

/// What a module binds by its imports, its targets made absolute.
#[derive(Debug, Default)]
struct Bound {
    map: HashMap<String, String>,
    stars: Vec<String>,
}

/// The tree's Python modules, read on demand.
pub struct Modules {
    tree: String,
    /// Every Python file of the tree.
    files: HashSet<String>,
    read: HashMap<String, Option<Bound>>,
}

impl Modules {
    /// The modules of `tree`, whose files are `paths`.
    pub fn new(tree: &str, paths: impl IntoIterator<Item = String>) -> Self {
        Modules {
            tree: tree.to_owned(),
            files: paths
                .into_iter()
                .filter(|p| p.ends_with(".py") || p.ends_with(".pyi"))
                .collect(),
            read: HashMap::new(),
        }
    }

    /// What `path` (a dotted name as `file` writes it, relative or not) resolves to through
    /// the tree's modules: itself when no tree module binds its parts, else each path it may
    /// be (a star import may bring it from more than one module).
    pub fn resolve(&mut self, path: &str, file: &str) -> Result<Vec<String>, CliError> {
        let roots = self.roots(file);
        let mut out = Vec::new();
        let mut pending = vec![(self.absolute(path, file), 0usize)];
        let mut seen = HashSet::new();
        while let Some((p, hops)) = pending.pop() {
            if !seen.insert(p.clone()) || seen.len() > 64 {
                continue;
            }
            let next = if hops < MAX_HOPS {
                self.step(&p, &roots)?
            } else {
                Vec::new()
            };
            if next.is_empty() {
                out.push(p);
            } else {
                pending.extend(next.into_iter().map(|n| (n, hops + 1)));
            }
        }
        Ok(out)
    }

    /// One step: the longest prefix of `path` that is a tree module, and what that module binds
    /// the next part to (nothing when it binds nothing by an import).
    fn step(&mut self, path: &str, roots: &[String]) -> Result<Vec<String>, CliError> {
        let segments: Vec<&str> = path.split('.').collect();
        let Some((k, file)) = (1..segments.len())
            .rev()
            .find_map(|k| Some((k, self.file_of(&segments.get(..k)?.join("."), roots)?)))
        else {
            return Ok(Vec::new());
        };
        let Some((name, rest)) = segments.get(k..).and_then(|s| s.split_first()) else {
            return Ok(Vec::new());
        };
        let name = *name;
        let tail = |target: &str| {
            std::iter::once(target)
                .chain(rest.iter().copied())
                .collect::<Vec<_>>()
                .join(".")
        };
        let Some(bound) = self.bound(&file)? else {
            return Ok(Vec::new());
        };
        if let Some(target) = bound.map.get(name) {
            return Ok(vec![tail(target)]);
        }
        Ok(bound
            .stars
            .iter()
            .map(|star| tail(&format!("{star}.{name}")))
            .collect())
    }

    /// What `file` binds, read once.
    fn bound(&mut self, file: &str) -> Result<Option<&Bound>, CliError> {
        if !self.read.contains_key(file) {
            let bound = if self.read.len() >= MAX_MODULES {
                None
            } else {
                let raw = blobs(&self.tree, &[file], MAX_MODULE_BYTES)?
                    .into_iter()
                    .next()
                    .flatten();
                raw.and_then(|raw| {
                    let source = source::python(&raw).ok()?;
                    let mut parser = tree_sitter::Parser::new();
                    parser
                        .set_language(&tree_sitter_python::LANGUAGE.into())
                        .ok()?;
                    let tree = parser.parse(&source.text, None)?;
                    let imports = python::imports(&source.text, tree.root_node());
                    Some(Bound {
                        map: imports
                            .map
                            .iter()
                            .map(|(k, v)| (k.clone(), self.absolute(v, file)))
                            .collect(),
                        stars: imports
                            .stars
                            .iter()
                            .map(|s| self.absolute(s, file))
                            .collect(),
                    })
                })
            };
            self.read.insert(file.to_owned(), bound);
        }
        Ok(self.read.get(file).and_then(Option::as_ref))
    }

    /// The tree file that is module `dotted` under one of `roots`.
    fn file_of(&self, dotted: &str, roots: &[String]) -> Option<String> {
        let rel = dotted.replace('.', "/");
        roots.iter().find_map(|root| {
            [
                format!("{root}{rel}.py"),
                format!("{root}{rel}/__init__.py"),
            ]
            .into_iter()
            .find(|f| self.files.contains(f))
        })
    }

    /// The package `file` is in (its directories up to the top one holding an `__init__.py`)
    /// and the root that package lies in (`""` for the tree's root, or `src/`).
    fn package_of(&self, file: &str) -> (String, Vec<String>) {
        let mut dirs: Vec<&str> = file.split('/').collect();
        dirs.pop();
        let mut top = dirs.len();
        while top > 0
            && self.files.contains(&format!(
                "{}/__init__.py",
                dirs.get(..top).unwrap_or_default().join("/")
            ))
        {
            top -= 1;
        }
        let (outer, inner) = dirs.split_at(top);
        if top == dirs.len() {
            // No `__init__.py`: a namespace package (or a plain directory), its path from the
            // tree's root.
            return (
                String::new(),
                dirs.iter().map(|d| (*d).to_owned()).collect(),
            );
        }
        let root = match top {
            0 => String::new(),
            _ => format!("{}/", outer.join("/")),
        };
        (root, inner.iter().map(|d| (*d).to_owned()).collect())
    }

    /// Where a file's absolute imports are looked for: its own package's root, the tree's root
    /// and `src/`.
    fn roots(&self, file: &str) -> Vec<String> {
        let mut roots = vec![self.package_of(file).0, String::new(), "src/".to_owned()];
        roots.dedup();
        roots
    }

    /// `path` as `file` writes it, absolute: `.cli.sys` in `shop/pricing.py` is
    /// `shop.cli.sys`, `..x` one package up.
    fn absolute(&self, path: &str, file: &str) -> String {
        let dots = path.chars().take_while(|c| *c == '.').count();
        if dots == 0 {
            return path.to_owned();
        }
        let (_, mut package) = self.package_of(file);
        for _ in 1..dots {
            package.pop();
        }
        let rest = &path[dots..];
        if !rest.is_empty() {
            package.push(rest.to_owned());
        }
        package.join(".")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn modules(files: &[&str]) -> Modules {
        Modules::new("HEAD", files.iter().map(|f| (*f).to_owned()))
    }

    #[test]
    fn relative_paths_are_made_absolute_by_the_package() {
        let m = modules(&[
            "shop/__init__.py",
            "shop/pricing.py",
            "shop/cli.py",
            "shop/sub/__init__.py",
            "shop/sub/x.py",
            "src/pkg/__init__.py",
            "src/pkg/a.py",
            "tools/run.py",
        ]);
        assert_eq!(m.absolute(".cli.sys", "shop/pricing.py"), "shop.cli.sys");
        assert_eq!(m.absolute(".cli", "shop/__init__.py"), "shop.cli");
        assert_eq!(m.absolute("..cli", "shop/sub/x.py"), "shop.cli");
        assert_eq!(m.absolute(".a", "src/pkg/__init__.py"), "pkg.a");
        assert_eq!(m.absolute("os.path", "shop/pricing.py"), "os.path");
        assert_eq!(m.absolute(".helper", "tools/run.py"), "tools.helper");
        assert_eq!(m.package_of("src/pkg/a.py").0, "src/");
        assert_eq!(
            m.file_of("shop.cli", &m.roots("shop/pricing.py"))
                .as_deref(),
            Some("shop/cli.py")
        );
        assert_eq!(
            m.file_of("pkg.a", &m.roots("src/pkg/a.py")).as_deref(),
            Some("src/pkg/a.py")
        );
        assert_eq!(m.file_of("os", &m.roots("shop/pricing.py")), None);
    }
}
