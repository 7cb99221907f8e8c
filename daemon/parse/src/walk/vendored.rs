//! Libraries a Python project keeps a copy of inside its own package (`requests/packages/urllib3`,
//! `pip/_vendor/…` — the latter by name, see [`super::SKIPPED_DIRS`]). Their code is not the
//! project's: its fixes never go there (requests' `packages/README.rst`: "changes … must be made
//! in them and submitted as separate pull requests to those libraries"), yet their words match
//! questions about the project (requests' `urllib3` answered title-only questions about
//! connection pools and headers with `OrderedDict` and the vendored connection pool).
//!
//! A project versions itself once, at its top package. A package nested inside another one that
//! assigns a `__version__` of its own is a separately released library copied in: it is skipped
//! as vendored, with everything under it. A pkgutil or pkg_resources namespace package is not one
//! project's package (its subpackages are released separately), so its children are not counted.

use std::collections::HashSet;
use std::io::Read;
use std::path::Path;

use super::{Listed, Listing, SkipReason};

/// How much of an `__init__.py` is read for its version and namespace lines: they come first
/// (urllib3's `__version__` is on line 30).
const INIT_READ_BYTES: u64 = 16 * 1024;

/// Moves every file under a vendored Python package from `listing.files` to `listing.skipped`.
pub(super) fn drop_vendored_packages(root: &Path, listing: &mut Listing) {
    let packages: HashSet<&str> = listing
        .files
        .iter()
        .filter_map(|f| f.path.strip_suffix("/__init__.py"))
        .collect();
    let mut vendored: Vec<String> = packages
        .iter()
        .filter(|dir| {
            // Its own `__init__.py` first: most packages have no version, and the parent's is
            // read only for those that do (the listing runs on every update).
            dir.rsplit_once('/').is_some_and(|(parent, _)| {
                packages.contains(parent)
                    && assigns_version(&init_text(root, dir))
                    && !is_namespace(&init_text(root, parent))
            })
        })
        .map(|dir| format!("{dir}/"))
        .collect();
    if vendored.is_empty() {
        return;
    }
    vendored.sort();
    let (dropped, kept): (Vec<Listed>, Vec<Listed>) = std::mem::take(&mut listing.files)
        .into_iter()
        .partition(|f| vendored.iter().any(|dir| f.path.starts_with(dir.as_str())));
    tracing::debug!(packages = ?vendored, files = dropped.len(), "vendored packages skipped");
    listing.files = kept;
    listing.skipped.extend(
        dropped
            .into_iter()
            .map(|f| (f.path, Some(f.lang), SkipReason::Vendored)),
    );
}

/// The start of the `__init__.py` of package `dir` (empty when it cannot be read).
fn init_text(root: &Path, dir: &str) -> String {
    let mut bytes = Vec::new();
    if let Ok(file) = std::fs::File::open(root.join(dir).join("__init__.py")) {
        let _ = file.take(INIT_READ_BYTES).read_to_end(&mut bytes);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Whether a module assigns `__version__` at its top level (`__version__ = "1.2"`, also with
/// an annotation); an import of the project's version (`from .version import __version__`)
/// is not a version of its own.
fn assigns_version(text: &str) -> bool {
    text.lines().any(|line| {
        line.strip_prefix("__version__").is_some_and(|rest| {
            let rest = rest.trim_start();
            (rest.starts_with('=') && !rest.starts_with("==")) || rest.starts_with(':')
        })
    })
}

/// Whether a package's `__init__.py` declares a pkgutil or pkg_resources namespace.
fn is_namespace(text: &str) -> bool {
    text.contains("extend_path(") || text.contains("declare_namespace(")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_of_its_own_is_an_assignment_at_the_top_level() {
        for own in [
            "__version__ = '1.10.2'\n",
            "\"\"\"Doc.\"\"\"\n__version__: str = \"2.0\"\n",
            "__author__ = 'x'\n__version__='dev'\n",
        ] {
            assert!(assigns_version(own), "{own:?}");
        }
        for not_own in [
            "from .version import __version__\n",
            "def v():\n    __version__ = '1'\n",
            "__version__ == '1'\n",
            "__version_info__ = (1, 2)\n",
            "",
        ] {
            assert!(!assigns_version(not_own), "{not_own:?}");
        }
    }

    #[test]
    fn a_namespace_package_says_so_in_its_init() {
        assert!(is_namespace(
            "__path__ = __import__('pkgutil').extend_path(__path__, __name__)\n"
        ));
        assert!(is_namespace(
            "__import__('pkg_resources').declare_namespace(__name__)\n"
        ));
        assert!(!is_namespace("from .core import run\n"));
    }
}
