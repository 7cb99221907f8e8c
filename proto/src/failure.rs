//! What went wrong, in one vocabulary for every boundary: the daemon turns a typed error into
//! a gRPC status carrying its class, and every client turns that status (or its own failure)
//! into the exit status README promises. Defined once, here.

use tonic::Status;
use tonic::metadata::MetadataValue;

/// Exit statuses (README: "Exit status").
pub const EXIT_BAD_REQUEST: i32 = 1;
pub const EXIT_USAGE: i32 = 2;
pub const EXIT_DAEMON: i32 = 3;
pub const EXIT_LLM: i32 = 4;
pub const EXIT_FAILED: i32 = 5;
pub const EXIT_INTERRUPTED: i32 = 130;

/// The status metadata key naming the class.
const CLASS_KEY: &str = "fittok-failure";

/// The class of a failure a request met.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The request cannot be answered as made: a missing path, an unknown id, a bad value.
    BadRequest,
    /// A language model (FIT levels 3–4, written answers) failed or is unreachable.
    Llm,
    /// The daemon could not do what was asked: a file it could not write, an internal error.
    Failed,
    /// The daemon could not be reached or started.
    Daemon,
}

impl Failure {
    pub fn exit_code(self) -> i32 {
        match self {
            Failure::BadRequest => EXIT_BAD_REQUEST,
            Failure::Llm => EXIT_LLM,
            Failure::Failed => EXIT_FAILED,
            Failure::Daemon => EXIT_DAEMON,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Failure::BadRequest => "bad-request",
            Failure::Llm => "llm",
            Failure::Failed => "failed",
            Failure::Daemon => "daemon",
        }
    }

    fn code(self) -> tonic::Code {
        match self {
            Failure::BadRequest => tonic::Code::InvalidArgument,
            Failure::Llm => tonic::Code::FailedPrecondition,
            Failure::Failed => tonic::Code::Internal,
            Failure::Daemon => tonic::Code::Unavailable,
        }
    }

    /// A status of this class with `message`.
    pub fn status(self, message: impl Into<String>) -> Status {
        let mut s = Status::new(self.code(), message.into());
        s.metadata_mut()
            .insert(CLASS_KEY, MetadataValue::from_static(self.name()));
        s
    }

    /// The class of a status: as the daemon named it, else by its code (a transport failure,
    /// an older daemon).
    pub fn of(status: &Status) -> Failure {
        let named = status
            .metadata()
            .get(CLASS_KEY)
            .and_then(|v| v.to_str().ok())
            .and_then(|name| {
                [
                    Failure::BadRequest,
                    Failure::Llm,
                    Failure::Failed,
                    Failure::Daemon,
                ]
                .into_iter()
                .find(|f| f.name() == name)
            });
        named.unwrap_or(match status.code() {
            tonic::Code::InvalidArgument | tonic::Code::NotFound => Failure::BadRequest,
            tonic::Code::Internal | tonic::Code::DataLoss => Failure::Failed,
            _ => Failure::Daemon,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_class_survives_the_status() {
        for f in [
            Failure::BadRequest,
            Failure::Llm,
            Failure::Failed,
            Failure::Daemon,
        ] {
            assert_eq!(Failure::of(&f.status("x")), f);
        }
        assert_eq!(
            Failure::of(&Status::unavailable("connection reset")),
            Failure::Daemon
        );
        assert_eq!(Failure::of(&Status::not_found("gone")), Failure::BadRequest);
    }
}
