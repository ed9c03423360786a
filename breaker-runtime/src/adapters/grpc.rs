//! What a gRPC status code says about the server: one table for tonic's `Status` (feature
//! `tonic`) and for the tower layer's gRPC classifier (features `tower` and `http`).

use crate::outcome::classify::Verdict;

/// `CANCELLED`: the caller gave up, which says nothing about the server.
const CANCELLED: i32 = 1;
/// `UNKNOWN`, `DEADLINE_EXCEEDED`, `INTERNAL`, `UNAVAILABLE`: the server is unwell.
const FAILURES: [i32; 4] = [2, 4, 13, 14];

/// The verdict for a gRPC status code: every code not named above (`OK`, `NOT_FOUND`,
/// `INVALID_ARGUMENT`, `PERMISSION_DENIED`, …) is the server answering.
pub(crate) fn verdict(code: i32) -> Verdict {
    if code == CANCELLED {
        Verdict::Ignore
    } else if FAILURES.contains(&code) {
        Verdict::Failure
    } else {
        Verdict::Success
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_server_side_codes_are_failures_and_a_cancelled_call_says_nothing() {
        let failures: Vec<i32> = (0..=16)
            .filter(|&code| verdict(code) == Verdict::Failure)
            .collect();
        assert_eq!(failures, [2, 4, 13, 14]);
        assert_eq!(verdict(1), Verdict::Ignore);
        assert_eq!(verdict(0), Verdict::Success);
        assert_eq!(verdict(5), Verdict::Success, "NOT_FOUND is an answer");
    }
}
