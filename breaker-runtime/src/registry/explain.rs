//! Why a registered breaker's open circuit turned a call away, for the rejection's `Display`.

use crate::base::name::Name;
use crate::outcome::error::ProbeTime;
use crate::registry::registry;

/// The evidence of the opening that ends at `probe`, if the breaker named `name` is registered
/// and still in it: the rule and the window that met it, and the failure it opened on.
pub(super) fn opening_behind(name: &Name, probe: ProbeTime) -> Option<String> {
    let opening = registry().get(name)?.opening_until(probe)?;
    Some(match &opening.last_failure {
        Some(failure) => format!("{opening}; last failure: {failure}"),
        None => opening.to_string(),
    })
}
