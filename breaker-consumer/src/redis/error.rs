//! What goes wrong reading a stream through its group, said in plain words: the consumer logs
//! it, counts it, and reports it as the reason it cannot fetch.

use std::fmt;

use redis::RedisError;

/// What went wrong talking to Redis, with the stream (and group, or entry) it was about.
#[derive(Debug)]
#[non_exhaustive]
pub enum StreamError {
    /// Redis could not be reached: the connection was refused or dropped, or the answer did
    /// not come in time. The consumer tries again with a growing wait.
    Unreachable {
        /// What the source was doing: "reading", "claiming idle entries of", ...
        doing: &'static str,
        /// The stream.
        stream: String,
        /// What the client said.
        source: RedisError,
    },
    /// Redis answered the command with an error.
    Refused {
        /// What the source was doing.
        doing: &'static str,
        /// The stream.
        stream: String,
        /// What Redis said.
        source: RedisError,
    },
    /// The group was gone (Redis lost its data, or the group was destroyed), and creating it
    /// again failed.
    GroupNotRecreated {
        /// The stream.
        stream: String,
        /// The group.
        group: String,
        /// Why the creation failed.
        source: RedisError,
    },
    /// A dead letter asked for an entry of a stream or group that no longer exists: the entry
    /// went with Redis's data. Nothing was written.
    GroupGone {
        /// The stream.
        stream: String,
        /// The group.
        group: String,
        /// The entry's id.
        id: String,
    },
    /// A dead letter asked for an entry no longer pending in the group: another consumer
    /// claimed it and settled it. Nothing was written.
    NotPending {
        /// The stream.
        stream: String,
        /// The group.
        group: String,
        /// The entry's id.
        id: String,
    },
    /// A dead letter asked for an entry deleted from the stream while pending (trimmed):
    /// it was acked, with nothing to write to the dead letters.
    EntryDeleted {
        /// The stream.
        stream: String,
        /// The entry's id.
        id: String,
    },
}

impl StreamError {
    /// `error` while `doing` something to `stream`, sorted into unreachable or refused.
    pub(crate) fn talking(doing: &'static str, stream: &str, source: RedisError) -> StreamError {
        let stream = stream.to_owned();
        if source.is_io_error()
            || source.is_connection_refusal()
            || source.is_connection_dropped()
            || source.is_timeout()
        {
            StreamError::Unreachable {
                doing,
                stream,
                source,
            }
        } else {
            StreamError::Refused {
                doing,
                stream,
                source,
            }
        }
    }
}

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StreamError::Unreachable {
                doing,
                stream,
                source,
            } => write!(
                f,
                "Redis is unreachable while {doing} stream `{stream}`: {source}"
            ),
            StreamError::Refused {
                doing,
                stream,
                source,
            } => write!(
                f,
                "Redis answered with an error while {doing} stream `{stream}`: {source}"
            ),
            StreamError::GroupNotRecreated {
                stream,
                group,
                source,
            } => write!(
                f,
                "the consumer group `{group}` of stream `{stream}` is gone (did Redis lose its \
                 data?) and creating it again failed: {source}"
            ),
            StreamError::GroupGone { stream, group, id } => write!(
                f,
                "entry {id} cannot be dead-lettered: stream `{stream}` or its group `{group}` is \
                 gone (did Redis lose its data?), and the entry with it"
            ),
            StreamError::NotPending { stream, group, id } => write!(
                f,
                "entry {id} cannot be dead-lettered: it is no longer pending in group `{group}` \
                 of stream `{stream}` (another consumer claimed it and settled it)"
            ),
            StreamError::EntryDeleted { stream, id } => write!(
                f,
                "entry {id} cannot be dead-lettered: it was deleted from stream `{stream}` \
                 while pending (trimmed?), so it was acked with nothing to write"
            ),
        }
    }
}

impl std::error::Error for StreamError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StreamError::Unreachable { source, .. }
            | StreamError::Refused { source, .. }
            | StreamError::GroupNotRecreated { source, .. } => Some(source),
            StreamError::GroupGone { .. }
            | StreamError::NotPending { .. }
            | StreamError::EntryDeleted { .. } => None,
        }
    }
}
