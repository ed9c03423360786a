//! Where a member stands with the fleet's meeting place.

use std::fmt;

/// Where a member stands with the fleet's meeting place: what
/// [`Fleet::connection`](crate::Fleet::connection) tells as it changes, and
/// [`Stats::connection`](crate::Stats::connection) now.
///
/// In every state but [`Connected`](Connection::Connected) each breaker acts on its own, with
/// what is left of a fleet break: no call ever waits on the fleet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Connection {
    /// Joined, and no call to the meeting place has answered yet: the member's first call
    /// goes out at once, and again at every flush until one answers. Not a fault: a member
    /// is here for the first moments after [`Fleet::start`](crate::Fleet::start) (a round
    /// trip to Redis), and for as long as the place is down when it joins.
    #[default]
    Connecting,
    /// The meeting place answers: the member shares the fleet's window, decisions and probe.
    Connected,
    /// It answered before and does not now (down, or no answer within a second): the member
    /// tries again at every flush and catches up on the fleet's decisions when it answers.
    Disconnected,
    /// The member left, by [`Fleet::leave`](crate::Fleet::leave) or by being dropped.
    Left,
}

impl Connection {
    /// Whether the member reaches the fleet now.
    pub fn is_connected(self) -> bool {
        self == Connection::Connected
    }
}

impl fmt::Display for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Connection::Connecting => "connecting",
            Connection::Connected => "connected",
            Connection::Disconnected => "disconnected",
            Connection::Left => "left",
        })
    }
}
