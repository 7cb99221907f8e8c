//! The daemon's errors, typed to the boundary: each becomes a gRPC status of its class
//! ([`Failure`]) here, and nowhere else; `fittokd`'s in-process commands take the exit status
//! from the same class.

use fittok_engine::EngineError;
use fittok_engine::fit::FitError;
use fittok_proto::failure::Failure;
use tonic::Status;

#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Fit(#[from] FitError),
    #[error("{0}")]
    BadRequest(String),
    /// A language model failed or does not answer.
    #[error("{0}")]
    Llm(String),
    #[error("{0}")]
    Internal(String),
}

/// Characters of a status message kept; the rest is cut, with the count said. A message
/// travels in an HTTP/2 header, and one echoing a user's 17,000-character id or path would
/// overflow it and break the connection.
const MAX_MESSAGE_CHARS: usize = 2000;

fn bounded(msg: String) -> String {
    let n = msg.chars().count();
    if n <= MAX_MESSAGE_CHARS {
        return msg;
    }
    let head: String = msg.chars().take(MAX_MESSAGE_CHARS).collect();
    format!("{head}… ({} more characters)", n - MAX_MESSAGE_CHARS)
}

impl ServiceError {
    pub fn failure(&self) -> Failure {
        match self {
            ServiceError::Engine(_) | ServiceError::BadRequest(_) => Failure::BadRequest,
            ServiceError::Fit(FitError::Io { .. } | FitError::NotWritable(_)) => Failure::Failed,
            ServiceError::Fit(FitError::Llm(_)) | ServiceError::Llm(_) => Failure::Llm,
            ServiceError::Fit(_) => Failure::BadRequest,
            ServiceError::Internal(_) => Failure::Failed,
        }
    }

    /// The status a client receives: the class, and the message bounded.
    pub fn status(self) -> Status {
        self.failure().status(bounded(self.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_map_to_readmes_exit_statuses() {
        let disk = ServiceError::Fit(FitError::Io {
            path: "/x".into(),
            source: std::io::Error::other("disk full"),
        });
        assert_eq!(Failure::of(&disk.status()).exit_code(), 5);
        assert_eq!(
            Failure::of(&ServiceError::Llm("refused".into()).status()).exit_code(),
            4
        );
        assert_eq!(
            Failure::of(&ServiceError::BadRequest("no".into()).status()).exit_code(),
            1
        );
    }

    #[test]
    fn long_messages_are_bounded() {
        let s = ServiceError::BadRequest("x".repeat(20_000)).status();
        assert!(s.message().chars().count() < 2100);
        assert!(s.message().ends_with("(18000 more characters)"));
    }
}
