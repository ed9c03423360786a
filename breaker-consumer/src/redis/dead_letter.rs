//! Moving a pending entry to the dead letters in one step on the server.

use redis::RedisResult;

use super::RedisStream;

/// Moves one pending entry to the dead letters in one step on the server, so that two
/// consumers never both move it: its fields added to the dead-letter stream (KEYS[2]) with its
/// id under `breaker-original-id`, then the entry acked. Answers 1 when moved; 0 when the
/// entry is not pending in the group (settled by another consumer); -1 when it is pending but
/// was deleted from the stream (trimmed): acked, nothing written; -2 when the stream or the
/// group does not exist (lost with Redis's data).
const DEAD_LETTER: &str = r"
local pending = redis.pcall('XPENDING', KEYS[1], ARGV[1], ARGV[2], ARGV[2], 1)
if type(pending) == 'table' and pending.err then
  if string.sub(pending.err, 1, 7) == 'NOGROUP' then
    return -2
  end
  return pending
end
if #pending == 0 then
  return 0
end
local entry = redis.call('XRANGE', KEYS[1], ARGV[2], ARGV[2])
if #entry > 0 then
  local add = {'XADD', KEYS[2], '*', 'breaker-original-id', ARGV[2]}
  for _, value in ipairs(entry[1][2]) do
    add[#add + 1] = value
  end
  redis.call(unpack(add))
end
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
if #entry == 0 then
  return -1
end
return 1
";

/// What became of an entry sent to the dead letters (the [`DEAD_LETTER`] script's answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DeadLettered {
    /// Written to the dead-letter stream and acked.
    Written,
    /// Not pending in the group: another consumer settled it.
    NotPending,
    /// Pending, but deleted from the stream: acked, nothing written.
    Deleted,
    /// The stream or the group does not exist.
    GroupGone,
}

impl RedisStream {
    /// Moves a pending entry to the dead letters, read from the stream itself.
    pub(super) async fn dead_letter(&self, id: &str) -> RedisResult<DeadLettered> {
        let moved: i64 = redis::cmd("EVAL")
            .arg(DEAD_LETTER)
            .arg(2)
            .arg(&self.stream)
            .arg(&self.dead)
            .arg(&self.group)
            .arg(id)
            .query_async(&mut self.writes.clone())
            .await?;
        Ok(match moved {
            1 => DeadLettered::Written,
            -1 => DeadLettered::Deleted,
            -2 => DeadLettered::GroupGone,
            _ => DeadLettered::NotPending,
        })
    }
}
