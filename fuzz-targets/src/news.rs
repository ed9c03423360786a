//! What the fleet reads from Redis that any process with access to it can write: the news of
//! a decision on a breaker.

use breaker_fleet::News;

/// Decodes the input as news; **news it accepts encodes to what decodes to the same news**.
pub fn news(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(news) = News::decode(text) else {
        return;
    };
    let encoded = news.encode();
    assert_eq!(
        News::decode(&encoded).as_ref(),
        Ok(&news),
        "{text:?} encoded as {encoded:?}"
    );
}
