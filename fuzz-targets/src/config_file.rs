//! The config file, TOML or JSON, as `ConfigFile::load` reads it.

use std::path::PathBuf;
use std::sync::LazyLock;

use breaker_runtime::config_file::ConfigFile;

use crate::endpoint::registered;

/// This process's file, one per format.
static FILES: LazyLock<[PathBuf; 2]> = LazyLock::new(|| {
    let dir = std::env::temp_dir();
    let pid = std::process::id();
    [
        dir.join(format!("breaker-fuzz-{pid}.toml")),
        dir.join(format!("breaker-fuzz-{pid}.json")),
    ]
});

/// Loads the input as a config file: TOML when the first byte is even, JSON when odd. A file
/// may name the registered breakers (`fuzz::a`, `fuzz::b`) and reconfigure them. **Loading
/// never panics**, whatever the file says.
pub fn config_file(data: &[u8]) {
    let [format, text @ ..] = data else {
        return;
    };
    registered();
    let path = &FILES[usize::from(format & 1)];
    if std::fs::write(path, text).is_err() {
        return;
    }
    let _ = ConfigFile::new(path).load();
}
