//! What the server and its transport exchange: a request as read, and a reply as the
//! server decided it (whole, streamed in timed parts, cut, hung or reset).
//!
//! Guarantee: a [`Reply`] says everything the transport does, timing included, so the
//! transport makes no decision of its own and the determinism boundary stays at
//! [`super::http`].

/// A request as the transport read it.
#[derive(Clone, Debug, Default)]
pub struct Incoming {
    pub method: String,
    /// Path and query (`/v1/messages?beta=true`).
    pub target: String,
    /// Names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Incoming {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// One timed piece of a streamed body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    /// Wait this long before sending it.
    pub delay_ms: u64,
    pub bytes: Vec<u8>,
}

/// How a streamed body ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamEnd {
    /// The final chunk is sent.
    Complete,
    /// The connection is closed without the final chunk: a truncated body.
    Cut,
    /// Nothing more is sent until the client gives up (or the hang limit passes).
    Hang,
}

/// What the transport sends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplyBody {
    Full(Vec<u8>),
    Stream {
        parts: Vec<Part>,
        end: StreamEnd,
    },
    /// Not even the status line: wait until the client gives up.
    Hang,
    /// Close the connection without answering.
    Reset,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: ReplyBody,
}

impl Reply {
    pub(crate) fn json(status: u16, body: Vec<u8>, request_id: &str) -> Reply {
        Reply {
            status,
            headers: vec![
                ("content-type".into(), "application/json".into()),
                ("request-id".into(), request_id.into()),
            ],
            body: ReplyBody::Full(body),
        }
    }
}
