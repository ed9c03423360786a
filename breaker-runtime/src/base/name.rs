//! A breaker's name: free to copy when it is a literal, shared when it is built at run time.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::Arc;

/// The name that identifies a breaker in logs, errors, events and the registry.
///
/// Names from string literals (all names the attribute produces) cost nothing to clone; names
/// built at run time are shared behind an `Arc`.
///
/// ```
/// use breaker_runtime::Name;
///
/// let fixed = Name::from_static("payments");
/// let built = Name::from(format!("tenant-{}", 7));
/// assert_eq!(fixed, "payments");
/// assert_eq!(built.as_str(), "tenant-7");
/// ```
#[derive(Clone)]
pub struct Name(Repr);

#[derive(Clone)]
enum Repr {
    Static(&'static str),
    Shared(Arc<str>),
}

impl Name {
    /// A name from a string literal, usable in `const` and `static` items.
    pub const fn from_static(name: &'static str) -> Self {
        Self(Repr::Static(name))
    }

    /// The name as a string slice.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Static(name) => name,
            Repr::Shared(name) => name,
        }
    }
}

#[cfg(feature = "metrics")]
impl Name {
    /// The name as a `metrics` label value, without copying it.
    pub(crate) fn label(&self) -> metrics::SharedString {
        match &self.0 {
            Repr::Static(name) => metrics::SharedString::const_str(name),
            Repr::Shared(name) => metrics::SharedString::from_shared(Arc::clone(name)),
        }
    }
}

#[cfg(feature = "opentelemetry")]
impl Name {
    /// The name as an OpenTelemetry attribute value, without copying it.
    pub(crate) fn otel_value(&self) -> opentelemetry::StringValue {
        match &self.0 {
            Repr::Static(name) => opentelemetry::StringValue::from(*name),
            Repr::Shared(name) => opentelemetry::StringValue::from(Arc::clone(name)),
        }
    }
}

impl Deref for Name {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for Name {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Name {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl From<&'static str> for Name {
    fn from(name: &'static str) -> Self {
        Self::from_static(name)
    }
}

impl From<String> for Name {
    fn from(name: String) -> Self {
        Self(Repr::Shared(name.into()))
    }
}

impl From<Arc<str>> for Name {
    fn from(name: Arc<str>) -> Self {
        Self(Repr::Shared(name))
    }
}

impl PartialEq for Name {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Name {}

impl PartialEq<str> for Name {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Name {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialOrd for Name {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Name {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl Hash for Name {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}
