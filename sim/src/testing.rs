//! Internals this crate's own integration tests, benches and examples reach into
//! (feature `testing`, off by default; the self dev-dependency and `benches/` switch it
//! on). **Unstable**: nothing here is part of the library's API, and any of it may
//! change or go with any release. A user embedding the simulator names the façade at
//! the crate root and the public modules (`check`, `cli`, `conventions`, `drive`,
//! `exit`, `serve`, `stdio_engine`) instead.
//!
//! Guarantee: this module only re-exports; it adds no behaviour, so a test that goes
//! through it checks exactly the code the simulator runs. Each submodule mirrors the
//! internal module of the same path, which is why a test's import reads
//! `turnsim::testing::serve::sse::WireEvent` for the crate's `serve::sse::WireEvent`.
//! Why it exists at all: these tests pin wire formats and checker behaviour at a finer
//! grain than the façade shows (golden SSE frames, one checker fed one event), and
//! moving 30-odd test files into the crate would put test code in the library's build.

/// The checkers and the events they judge.
pub mod checkers {
    pub use crate::checkers::*;
}

/// Seed-range parsing shared by `run` and the examples.
pub mod cliargs {
    pub use crate::cliargs::*;
}

/// The scripted provider's fixed texts and refusal rule.
pub mod provider {
    pub use crate::provider::*;
}

/// The simulator's exit codes and their mapping from a run's summary.
pub mod report {
    pub use crate::report::*;
}

/// Timeline pictures of runs.
pub mod timeline {
    pub use crate::timeline::*;
}

/// The simulated world's lower-level entry point (`run` with a `RunSpec`).
pub mod world {
    pub use crate::world::*;
}

/// The shrinker's printed story of a shrunk scenario.
pub mod shrink {
    /// See [`crate::shrink`].
    pub mod story {
        pub use crate::shrink::story::*;
    }
}

/// Transcript readers and writers below `check`'s façade.
pub mod check {
    pub use crate::check::*;
    /// Claude Code session files.
    pub mod claude_jsonl {
        pub use crate::check::claude_jsonl::*;
    }
    /// Writing a simulated request for `check` to read.
    pub mod export {
        pub use crate::check::export::*;
    }
    /// Rendering findings and `check`'s exit code.
    pub mod report {
        pub use crate::check::report::*;
    }
    /// Items read from a transcript.
    pub mod source {
        pub use crate::check::source::*;
    }
    /// Anthropic SSE streams inside recordings.
    pub mod sse {
        pub use crate::check::sse::*;
    }
    /// VCR cassettes.
    pub mod vcr {
        pub use crate::check::vcr::*;
    }
}

/// The OpenAI wire formats `serve` speaks.
pub mod openai {
    pub use crate::openai::*;
    /// API error bodies.
    pub mod api_error {
        pub use crate::openai::api_error::*;
    }
    /// Chat Completions requests.
    pub mod chat_request {
        pub use crate::openai::chat_request::*;
    }
    /// Chat Completions streams.
    pub mod chat_stream {
        pub use crate::openai::chat_stream::*;
    }
    /// The model list.
    pub mod models {
        pub use crate::openai::models::*;
    }
    /// The neutral conversation both OpenAI APIs are read into.
    pub mod neutral {
        pub use crate::openai::neutral::*;
    }
    /// Replies in the neutral form.
    pub mod reply {
        pub use crate::openai::reply::*;
    }
    /// Responses API requests.
    pub mod responses_request {
        pub use crate::openai::responses_request::*;
    }
    /// Responses API streams.
    pub mod responses_stream {
        pub use crate::openai::responses_stream::*;
    }
    /// SSE framing.
    pub mod sse {
        pub use crate::openai::sse::*;
    }
}

/// The loopback provider below `serve`'s façade.
pub mod serve {
    pub use crate::serve::*;
    /// The HTTP server.
    #[cfg(feature = "serve")]
    pub mod http {
        pub use crate::serve::http::*;
    }
    /// Recorded exchanges on disk.
    pub mod record {
        pub use crate::serve::record::*;
    }
    /// A recording judged again.
    pub mod recheck {
        pub use crate::serve::recheck::*;
    }
    /// Serve scripts.
    pub mod script {
        pub use crate::serve::script::*;
    }
    /// Anthropic SSE framing.
    pub mod sse {
        pub use crate::serve::sse::*;
    }
    /// The tool ledger.
    pub mod tools {
        pub use crate::serve::tools::*;
    }
    /// The verdict on a served session.
    pub mod verdict {
        pub use crate::serve::verdict::*;
    }
}

/// `drive`'s profiles, observations and reports.
#[cfg(feature = "drive")]
pub mod drive {
    pub use crate::drive::*;
    /// What a driven client was seen doing.
    pub mod observe {
        pub use crate::drive::observe::*;
    }
    /// The client profiles.
    pub mod profiles {
        pub use crate::drive::profiles::*;
    }
    /// A driven run's report.
    pub mod report {
        pub use crate::drive::report::*;
    }
    /// A driven run's schedule and files.
    pub mod run {
        pub use crate::drive::run::*;
    }
}
