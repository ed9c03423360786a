//! What the registry's pages show of each published crate, checked from this tree: the
//! manifests' metadata, both licences inside each package, and the packaged READMEs' links,
//! which must work from the registry's page (absolute, or to a file the package carries).
//! `scripts/check-package` packages the crates themselves and builds from the packages.

use std::fs;
use std::path::Path;

use breaker_tests::{PUBLISHED, workspace_root as root};

fn manifest(path: &Path) -> toml::Table {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.parse()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn workspace() -> toml::Table {
    manifest(&root().join("Cargo.toml"))
}

/// A member's `[package]`, read once, with the `[workspace.package]` it inherits from.
struct Package {
    table: toml::Table,
    inherited: toml::Table,
}

impl Package {
    fn read(member: &str, workspace: &toml::Table) -> Package {
        let manifest = manifest(&root().join(member).join("Cargo.toml"));
        Package {
            table: manifest["package"].as_table().expect("[package]").clone(),
            inherited: workspace["workspace"]["package"]
                .as_table()
                .unwrap()
                .clone(),
        }
    }

    /// A field's value, read through `field.workspace = true` when it is inherited.
    fn field(&self, key: &str) -> Option<toml::Value> {
        let value = self.table.get(key)?;
        let inherited = value
            .as_table()
            .and_then(|t| t.get("workspace"))
            .and_then(toml::Value::as_bool)
            == Some(true);
        if inherited {
            self.inherited.get(key).cloned()
        } else {
            Some(value.clone())
        }
    }

    fn publish(&self) -> Option<bool> {
        self.table.get("publish").and_then(toml::Value::as_bool)
    }
}

#[test]
fn every_published_manifest_says_what_the_registry_shows() {
    let workspace = workspace();
    for name in PUBLISHED {
        let package = Package::read(name, &workspace);
        for key in [
            "description",
            "license",
            "repository",
            "documentation",
            "readme",
        ] {
            let value = package
                .field(key)
                .unwrap_or_else(|| panic!("{name}: no `{key}`"));
            let text = value
                .as_str()
                .unwrap_or_else(|| panic!("{name}: `{key}` is not a string"));
            assert!(!text.trim().is_empty(), "{name}: `{key}` is empty");
        }
        assert_eq!(
            package.field("license").unwrap().as_str(),
            Some("MIT OR Apache-2.0"),
            "{name}"
        );
        assert_eq!(
            package.field("documentation").unwrap().as_str(),
            Some(format!("https://docs.rs/{name}").as_str()),
            "{name}"
        );
        for key in ["keywords", "categories"] {
            let list = package
                .field(key)
                .unwrap_or_else(|| panic!("{name}: no `{key}`"));
            let list = list
                .as_array()
                .unwrap_or_else(|| panic!("{name}: `{key}` is not a list"));
            assert!(!list.is_empty(), "{name}: `{key}` is empty");
            if key == "keywords" {
                // The registry's own rules: at most five, each at most 20 characters.
                assert!(list.len() <= 5, "{name}: more than five keywords");
                for keyword in list {
                    let keyword = keyword.as_str().unwrap();
                    assert!(
                        keyword.len() <= 20,
                        "{name}: keyword `{keyword}` is too long"
                    );
                }
            }
        }
        assert_ne!(
            package.publish(),
            Some(false),
            "{name} is for users: it must be publishable"
        );
    }
}

#[test]
fn only_the_published_crates_can_be_published() {
    let workspace = workspace();
    let members = workspace["workspace"]["members"].as_array().unwrap();
    for member in members {
        let package = Package::read(member.as_str().unwrap(), &workspace);
        let name = package.table["name"].as_str().unwrap();
        if PUBLISHED.contains(&name) {
            continue;
        }
        assert_eq!(
            package.publish(),
            Some(false),
            "{name} is not for users: `publish = false` keeps it off the registry"
        );
    }
}

#[test]
fn every_package_carries_both_licences() {
    for licence in ["LICENSE-MIT", "LICENSE-APACHE"] {
        let text = fs::read_to_string(root().join(licence)).expect(licence);
        for name in PUBLISHED {
            let packaged = fs::read_to_string(root().join(name).join(licence))
                .unwrap_or_else(|e| panic!("{name}/{licence}: {e}"));
            assert_eq!(packaged, text, "{name}/{licence} is the repository's");
        }
    }
}

/// The targets of a markdown text's inline links, `[text](target)`, outside code.
fn links(markdown: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after.find(')').unwrap_or(after.len());
            found.push(after[..end].to_owned());
            rest = &after[end..];
        }
    }
    found
}

/// A heading's anchor as the repository's host writes it: lower case, spaces as hyphens,
/// punctuation dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn anchors(markdown: &str) -> Vec<String> {
    markdown
        .lines()
        .filter(|line| line.starts_with('#'))
        .map(|line| anchor(line.trim_start_matches('#')))
        .collect()
}

#[test]
fn the_packaged_readmes_links_work_from_the_registrys_page() {
    let workspace = workspace();
    let repository = workspace["workspace"]["package"]["repository"]
        .as_str()
        .expect("[workspace.package] repository");
    let blob = format!("{repository}/blob/main/");
    for name in PUBLISHED {
        let readme = Package::read(name, &workspace).field("readme").unwrap();
        let readme = root().join(name).join(readme.as_str().unwrap());
        let text =
            fs::read_to_string(&readme).unwrap_or_else(|e| panic!("{}: {e}", readme.display()));
        let found = links(&text);
        assert!(
            !found.is_empty(),
            "{name}'s README links nothing: the check would check nothing"
        );
        for link in found {
            if let Some(path) = link.strip_prefix(&blob) {
                // A link into the repository: the file must be in this tree, and its anchor in it.
                let (path, fragment) = path.split_once('#').unwrap_or((path, ""));
                let target = root().join(path);
                assert!(
                    target.is_file(),
                    "{name}'s README: {link}: no {path} in the repository"
                );
                if !fragment.is_empty() {
                    let target_text = fs::read_to_string(&target).unwrap();
                    assert!(
                        anchors(&target_text).iter().any(|a| a == fragment),
                        "{name}'s README: {link}: {path} has no heading `#{fragment}`"
                    );
                }
            } else if link.starts_with("https://") {
                // Another site (docs.rs, the registry): not this test's to fetch.
            } else {
                // Relative: the registry shows it against the package, so the file must be in it.
                assert!(
                    !link.starts_with("..") && !link.starts_with('#'),
                    "{name}'s README: `{link}` leaves the package; write it absolute"
                );
                let target = root().join(name).join(&link);
                assert!(
                    target.is_file(),
                    "{name}'s README: `{link}` is not a file of the package"
                );
            }
        }
    }
}

#[test]
fn the_link_reader_finds_what_it_must() {
    assert_eq!(
        links("see [a](https://x/y) and [b](docs/c.md#d)\n```\n[no](code)\n```\n"),
        ["https://x/y", "docs/c.md#d"]
    );
    assert_eq!(
        anchor(" Changing a live breaker's options"),
        "changing-a-live-breakers-options"
    );
    assert_eq!(
        anchor(" Proposed options: `breaker-replay suggest`"),
        "proposed-options-breaker-replay-suggest"
    );
}
