//! SPEC section 2: `#[derive(IsFailure)]`, every mark and the container default.

use breaker_runtime::{IsFailure, Verdict};

#[derive(Debug, IsFailure)]
#[allow(dead_code)] // the fields are there to show the marks work on every variant shape
enum PayError {
    Unavailable,
    #[breaker(failure)]
    Timeout {
        after_ms: u64,
    },
    #[breaker(healthy)]
    Declined(String),
    #[breaker(ignore)]
    Cancelled,
    #[breaker(transparent)]
    Io(std::io::Error),
    #[breaker(transparent)]
    Nested {
        source: Inner,
    },
}

#[derive(Debug, IsFailure)]
#[breaker(default = "healthy")]
enum Inner {
    NotFound,
    #[breaker(failure)]
    Overloaded,
    #[breaker(ignore)]
    Skipped,
}

#[test]
fn every_variant_is_a_failure_unless_marked() {
    assert_eq!(Verdict::of(&PayError::Unavailable), Verdict::Failure);
    assert_eq!(
        Verdict::of(&PayError::Timeout { after_ms: 5 }),
        Verdict::Failure
    );
}

#[test]
fn healthy_is_a_success_and_ignore_records_nothing() {
    assert_eq!(
        Verdict::of(&PayError::Declined("card".into())),
        Verdict::Success
    );
    assert_eq!(Verdict::of(&PayError::Cancelled), Verdict::Ignore);
}

#[test]
fn transparent_asks_the_one_field() {
    assert_eq!(
        Verdict::of(&PayError::Io(std::io::ErrorKind::NotFound.into())),
        Verdict::Success
    );
    assert_eq!(
        Verdict::of(&PayError::Io(std::io::ErrorKind::ConnectionReset.into())),
        Verdict::Failure
    );
    assert_eq!(
        Verdict::of(&PayError::Nested {
            source: Inner::Skipped
        }),
        Verdict::Ignore
    );
    assert_eq!(
        Verdict::of(&PayError::Nested {
            source: Inner::Overloaded
        }),
        Verdict::Failure
    );
}

#[test]
fn the_container_default_flips_unmarked_variants() {
    assert_eq!(Verdict::of(&Inner::NotFound), Verdict::Success);
    assert_eq!(Verdict::of(&Inner::Overloaded), Verdict::Failure);
}

#[test]
fn result_of_a_derived_error_classifies_through_it() {
    let declined: Result<(), PayError> = Err(PayError::Declined("card".into()));
    let down: Result<(), PayError> = Err(PayError::Unavailable);
    assert_eq!(Verdict::of(&declined), Verdict::Success);
    assert_eq!(Verdict::of(&down), Verdict::Failure);
}

#[derive(IsFailure)]
struct Outage;

#[derive(IsFailure)]
#[breaker(default = "healthy")]
struct Refusal {
    _reason: String,
}

#[derive(IsFailure)]
#[breaker(default = "ignore")]
struct Noise(#[allow(dead_code)] u8);

#[derive(IsFailure)]
#[breaker(transparent)]
struct Wrapped(std::io::Error);

#[test]
fn structs_derive_it_with_the_same_container_attributes() {
    assert_eq!(Verdict::of(&Outage), Verdict::Failure);
    assert_eq!(
        Verdict::of(&Refusal {
            _reason: "no".into()
        }),
        Verdict::Success
    );
    assert_eq!(Verdict::of(&Noise(1)), Verdict::Ignore);
    assert_eq!(
        Verdict::of(&Wrapped(std::io::ErrorKind::TimedOut.into())),
        Verdict::Failure
    );
}

#[derive(Debug, IsFailure)]
enum Generic<E> {
    #[breaker(transparent)]
    Upstream(E),
    #[breaker(healthy)]
    Empty,
}

#[test]
fn generics_are_bounded_where_a_field_is_asked() {
    assert_eq!(
        Verdict::of(&Generic::Upstream(Inner::Overloaded)),
        Verdict::Failure
    );
    assert_eq!(Verdict::of(&Generic::<Inner>::Empty), Verdict::Success);
    assert!(Generic::Upstream(PayError::Cancelled).is_ignored());
}

#[derive(IsFailure)]
enum Never {}

#[test]
fn an_empty_enum_derives_it_too() {
    fn classifiable<T: IsFailure>() {}
    classifiable::<Never>();
}
