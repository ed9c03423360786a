#![deny(warnings)]

use std::fmt::Debug;
use std::io;

use breaker_runtime::{BreakerError, IsFailure};

#[derive(Debug, IsFailure)]
#[allow(dead_code)]
enum PayError {
    Unavailable,
    #[breaker(failure)]
    GatewayTimeout {
        after_ms: u64,
    },
    #[breaker(healthy)]
    Declined(String),
    #[breaker(ignore)]
    Cancelled,
    #[breaker(transparent)]
    Io(io::Error),
    #[breaker(transparent)]
    Nested {
        source: BreakerError,
    },
}

#[derive(Debug, IsFailure)]
#[breaker(default = "healthy")]
enum LookupError {
    NotFound,
    Forbidden,
    #[breaker(failure)]
    Down,
    #[breaker(ignore)]
    Skipped,
}

#[derive(Debug, IsFailure)]
#[breaker(default = "ignore")]
enum Noise {
    Dropped,
    #[breaker(failure)]
    Lost,
}

#[derive(Debug, IsFailure)]
enum Wrapper<E: Debug, T = ()> {
    #[breaker(transparent)]
    Inner(E),
    #[breaker(healthy)]
    Value(T),
    Other,
}

#[derive(Debug, IsFailure)]
enum Bounded<'a, E>
where
    E: Debug,
{
    #[breaker(transparent)]
    Borrowed(&'a E),
    #[breaker(healthy)]
    Empty,
}

#[derive(Debug, IsFailure)]
struct Outage;

#[derive(Debug, IsFailure)]
#[breaker(healthy)]
struct Answer {
    #[allow(dead_code)]
    code: u16,
}

#[derive(Debug, IsFailure)]
#[breaker(ignore)]
struct Skip(#[allow(dead_code)] u8);

#[derive(Debug, IsFailure)]
#[breaker(transparent)]
struct Context(io::Error);

#[derive(Debug, IsFailure)]
#[breaker(transparent)]
struct NamedContext<E> {
    inner: E,
}

#[derive(Debug, IsFailure)]
#[breaker(default = "healthy")]
struct DefaultOnStruct;

#[derive(Debug, IsFailure)]
enum Empty {}

fn classified<T: IsFailure>(_: Option<&T>) {}

fn main() {
    assert!(PayError::Unavailable.is_failure());
    assert!(PayError::GatewayTimeout { after_ms: 1 }.is_failure());
    assert!(!PayError::Declined(String::new()).is_failure());
    assert!(PayError::Cancelled.is_ignored());
    assert!(!PayError::Io(io::ErrorKind::NotFound.into()).is_failure());
    assert!(PayError::Io(io::ErrorKind::ConnectionReset.into()).is_failure());

    assert!(!LookupError::NotFound.is_failure() && !LookupError::Forbidden.is_failure());
    assert!(LookupError::Down.is_failure() && LookupError::Skipped.is_ignored());
    assert!(Noise::Dropped.is_ignored() && Noise::Lost.is_failure());

    assert!(Wrapper::<Outage>::Inner(Outage).is_failure());
    assert!(!Wrapper::<Outage, u8>::Value(1).is_failure());
    assert!(Wrapper::<Outage>::Other.is_failure());
    assert!(Bounded::Borrowed(&Outage).is_failure());
    assert!(!Bounded::<Outage>::Empty.is_failure());

    assert!(Outage.is_failure());
    assert!(!Answer { code: 404 }.is_failure());
    assert!(Skip(0).is_ignored());
    assert!(Context(io::ErrorKind::TimedOut.into()).is_failure());
    assert!(
        !NamedContext {
            inner: Answer { code: 1 }
        }
        .is_failure()
    );
    assert!(!DefaultOnStruct.is_failure());
    classified::<Empty>(None);

    let result: Result<u32, PayError> = Err(PayError::Cancelled);
    assert!(result.is_ignored());
}
