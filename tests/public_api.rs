//! The public API of every published crate, held to its committed listing in `api/`: an item
//! added, removed or changed fails here until the listing is written anew and the diff read,
//! as the attribute's pinned expansions are. The listing is `cargo public-api` (nightly's
//! rustdoc JSON) with every feature, blanket impls left out: `BREAKER_BLESS=1 scripts/test -p
//! breaker-tests --test public_api` writes it.

use std::fs;
use std::process::Command;

use breaker_tests::{PUBLISHED, workspace_root as root};

fn listing(crate_name: &str) -> String {
    let output = Command::new("cargo")
        .current_dir(root())
        // The outer `cargo test` set these for itself; the listing's own build must not see them.
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .args([
            "+nightly",
            "public-api",
            "--all-features",
            "--simplified",
            "--color",
            "never",
        ])
        .args(["--target-dir", "target/nightly", "-p", crate_name])
        .output()
        .expect(
            "cargo public-api runs: `cargo install --locked cargo-public-api` (scripts/test does)",
        );
    assert!(
        output.status.success(),
        "cargo public-api -p {crate_name} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("the listing is UTF-8")
}

#[test]
fn every_published_crate_has_the_api_its_listing_says() {
    let bless = std::env::var_os("BREAKER_BLESS").is_some();
    let mut changed = Vec::new();
    for name in PUBLISHED {
        let now = listing(name);
        assert!(
            now.lines().count() >= 3,
            "{name}: the listing is empty, so it checks nothing"
        );
        let path = root().join("api").join(format!("{name}.txt"));
        let committed = fs::read_to_string(&path).unwrap_or_default();
        if now == committed {
            continue;
        }
        if bless {
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, &now).unwrap();
            continue;
        }
        let removed: Vec<_> = committed
            .lines()
            .filter(|l| !now.lines().any(|n| n == *l))
            .collect();
        let added: Vec<_> = now
            .lines()
            .filter(|l| !committed.lines().any(|c| c == *l))
            .collect();
        let list = |items: Vec<&str>| match items.is_empty() {
            true => "(none)".to_owned(),
            false => items.join("\n    "),
        };
        changed.push(format!(
            "{name}: the public API is not api/{name}.txt\n  removed:\n    {}\n  added:\n    {}",
            list(removed),
            list(added)
        ));
    }
    assert!(
        changed.is_empty(),
        "{}\n\nIf the change is meant, write the listings anew with BREAKER_BLESS=1, review the \
         diff, and say it in CHANGELOG.md",
        changed.join("\n\n")
    );
}
