//! `turnsim-core`: the reference turn engine that turnsim's simulator drives.
//!
//! Sans-IO throughout: no module reads a clock, a socket, a disk or a thread. Inputs
//! come in, effects go out, and the caller (a real runtime or the simulator) carries
//! them out, so one seed replays a run exactly. The behaviour is specified in
//! `spec/turn-engine.md`; each module implements one section of it.

pub mod message;

pub use message::*;
