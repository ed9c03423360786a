//! Every committed input of every fuzz target, replayed on stable: the seeds (`fuzz/seeds`,
//! real inputs), the corpora (`fuzz/corpus`, minimized) and what the fuzzers found
//! (`fuzz/regressions`, each input named after the finding its fix holds).

use std::path::Path;

use breaker_fuzz_targets::TARGETS;

#[test]
fn every_committed_input_of_every_target_passes() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
    for (target, run) in TARGETS {
        let mut replayed = 0;
        for folder in ["seeds", "corpus", "regressions"] {
            let Ok(inputs) = std::fs::read_dir(fuzz.join(folder).join(target)) else {
                continue;
            };
            for input in inputs {
                let path = input.unwrap().path();
                let data = std::fs::read(&path).unwrap();
                run(&data);
                replayed += 1;
            }
        }
        assert!(replayed > 0, "{target}: no committed input");
    }
}
