//! The names nearest a misspelled one, for the errors that answer it with "did you mean".

/// The names of `names` nearest `typed`, nearest first (then in their order): those within a
/// third of `typed`'s length in edits (at least one edit), counting a swap of two neighbouring
/// characters as one edit, at most three of them. Case is ignored in counting edits, so a name
/// that differs only in case comes first; only the name itself is never suggested.
///
/// ```
/// use breaker_options::nearest;
///
/// let options = ["threshold", "slow_threshold", "window", "timeout"];
/// assert_eq!(nearest("treshold", options), ["threshold"]);
/// assert_eq!(nearest("windwo", options), ["window"]);
/// assert_eq!(nearest("Threshold", options), ["threshold"]);
/// assert!(nearest("retries", options).is_empty());
/// ```
pub fn nearest<'a>(typed: &str, names: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let exact = typed;
    let typed: Vec<char> = typed.to_lowercase().chars().collect();
    let most = (typed.len() / 3).max(1);
    let mut found: Vec<(usize, usize, &str)> = names
        .into_iter()
        .enumerate()
        .filter_map(|(order, name)| {
            let candidate: Vec<char> = name.to_lowercase().chars().collect();
            let edits = distance(&typed, &candidate, most)?;
            (name != exact).then_some((edits, order, name))
        })
        .collect();
    found.sort_unstable();
    found.dedup_by(|a, b| a.2 == b.2);
    found.into_iter().take(3).map(|(_, _, name)| name).collect()
}

/// The edits between `a` and `b` (insertions, deletions, substitutions and swaps of
/// neighbours), if at most `most`.
fn distance(a: &[char], b: &[char], most: usize) -> Option<usize> {
    if a.len().abs_diff(b.len()) > most {
        return None;
    }
    // Three rows of the table: two back (for swaps), the last, and this one.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut last: Vec<usize> = (0..=b.len()).collect();
    let mut row: Vec<usize> = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        row[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (last[j] + 1).min(row[j - 1] + 1).min(last[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                row[j] = row[j].min(before[j - 2] + 1);
            }
        }
        std::mem::swap(&mut before, &mut last);
        std::mem::swap(&mut last, &mut row);
    }
    let edits = last[b.len()];
    (edits <= most).then_some(edits)
}

/// " (did you mean `x`?)" (or "`x` or `y`"), or nothing when no name is near.
#[cfg(feature = "serde")]
pub(crate) fn did_you_mean(near: &[&str]) -> String {
    match near {
        [] => String::new(),
        [one] => format!(" (did you mean `{one}`?)"),
        [rest @ .., last] => {
            let rest: Vec<String> = rest.iter().map(|n| format!("`{n}`")).collect();
            format!(" (did you mean {} or `{last}`?)", rest.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::nearest;

    #[test]
    fn a_swap_a_missing_letter_and_a_wrong_one_are_one_edit_each() {
        let names = ["shop::charge", "shop::refund", "search::query"];
        assert_eq!(nearest("shpo::charge", names), ["shop::charge"]);
        assert_eq!(nearest("shop::charg", names), ["shop::charge"]);
        assert_eq!(nearest("shop::chargf", names), ["shop::charge"]);
        assert_eq!(
            nearest("SHOP::CHARGE", names),
            ["shop::charge"],
            "names are told apart by case, so a name in the wrong case has the right one nearest"
        );
        assert_eq!(
            nearest("shop::charge", names),
            Vec::<&str>::new(),
            "the same name is no suggestion"
        );
        assert!(nearest("ledger", names).is_empty());
    }

    #[test]
    fn the_nearest_come_first_and_no_more_than_three() {
        let names = ["probe", "probes", "probed", "proves", "prose"];
        let near = nearest("probes", names);
        assert!(near.len() <= 3, "{near:?}");
        assert_eq!(near[0], "probe");
    }
}
