// The cases of `limits.txt`, read in one place for the tests that hold the attribute and a
// configuration file to them (each `include!`s this file).

/// Every case of the table: the options as the attribute spells them, and whether they are taken.
fn limit_cases() -> Vec<(&'static str, bool)> {
    let cases: Vec<_> = include_str!("../limits.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|line| {
            let (options, answer) = line.split_once(" => ").expect("`options => answer`");
            match answer {
                "ok" => (options, true),
                "refused" => (options, false),
                other => panic!("unknown answer `{other}` in `{line}`"),
            }
        })
        .collect();
    assert!(cases.len() > 40, "the table was read: {} cases", cases.len());
    cases
}
