#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| breaker_fuzz_targets::consumer(data));
