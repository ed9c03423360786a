use std::fmt;

use super::*;

#[derive(Debug)]
enum Downstream {
    Unavailable,
    Declined,
    Wrapped(Inner),
}

#[derive(Debug)]
struct Inner;

impl fmt::Display for Inner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("inner")
    }
}
impl Error for Inner {}

impl fmt::Display for Downstream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

impl Error for Downstream {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            Downstream::Wrapped(inner) => Some(inner),
            _ => None,
        }
    }
}

impl IsFailure for Downstream {
    fn is_failure(&self) -> bool {
        !matches!(self, Downstream::Declined)
    }
}

fn rules(count_permanent: bool) -> Rules {
    Rules {
        count_permanent,
        count_panics: false,
        excluded: Vec::new(),
    }
}

fn ending(
    rules: &Rules,
    answer: Result<Handled, Failure<Downstream>>,
    cancelled: bool,
) -> (Verdict, Settlement) {
    let ending = rules.ending(&answer, cancelled);
    (ending.verdict, ending.settlement)
}

#[test]
fn done_is_a_success_and_acked_skipped_is_acked_and_not_recorded() {
    let rules = rules(false);
    assert_eq!(
        ending(&rules, Ok(Handled::Done), false),
        (Verdict::Success, Settlement::Ack)
    );
    assert_eq!(
        ending(&rules, Ok(Handled::Skipped), false),
        (Verdict::Ignore, Settlement::Ack)
    );
    // A handler that finished although its token fired settles normally.
    assert_eq!(
        ending(&rules, Ok(Handled::Done), true),
        (Verdict::Success, Settlement::Ack)
    );
}

#[test]
fn an_error_goes_back_and_counts_as_its_is_failure_says() {
    let rules = rules(false);
    assert_eq!(
        ending(&rules, Err(Downstream::Unavailable.into()), false),
        (Verdict::Failure, Settlement::Retry)
    );
    assert_eq!(
        ending(&rules, Err(Downstream::Declined.into()), false),
        (Verdict::Success, Settlement::Retry)
    );
}

#[test]
fn an_error_after_cancellation_is_not_recorded_and_goes_back() {
    assert_eq!(
        ending(&rules(true), Err(Downstream::Unavailable.into()), true),
        (Verdict::Ignore, Settlement::Retry)
    );
    assert_eq!(
        ending(
            &rules(true),
            Err(Failure::Permanent(Downstream::Unavailable)),
            true
        ),
        (Verdict::Ignore, Settlement::Retry)
    );
}

#[test]
fn a_permanent_failure_is_dead_lettered_and_counts_only_when_asked() {
    let poison = || Err(Failure::Permanent(Downstream::Unavailable));
    assert_eq!(
        ending(&rules(false), poison(), false),
        (Verdict::Ignore, Settlement::DeadLetter)
    );
    assert_eq!(
        ending(&rules(true), poison(), false),
        (Verdict::Failure, Settlement::DeadLetter)
    );
}

#[test]
fn an_excluded_type_anywhere_in_the_chain_is_not_recorded() {
    let rules = Rules {
        count_permanent: false,
        count_panics: false,
        excluded: vec![|error| error.is::<Inner>()],
    };
    assert_eq!(
        ending(&rules, Err(Downstream::Wrapped(Inner).into()), false),
        (Verdict::Ignore, Settlement::Retry)
    );
    assert_eq!(
        ending(&rules, Err(Downstream::Unavailable.into()), false),
        (Verdict::Failure, Settlement::Retry)
    );
}

#[test]
fn a_panic_is_poison_by_default_and_a_failure_that_goes_back_if_counted() {
    let mut rules = Rules {
        count_permanent: false,
        count_panics: false,
        excluded: Vec::new(),
    };
    let ending = rules.panicked();
    assert_eq!(
        (ending.verdict, ending.settlement),
        (Verdict::Ignore, Settlement::DeadLetter)
    );
    rules.count_panics = true;
    let ending = rules.panicked();
    assert_eq!(
        (ending.verdict, ending.settlement),
        (Verdict::Failure, Settlement::Retry)
    );
}
