//! Crate-wide error type: every message names the file, line or element and what is wrong.

use std::path::PathBuf;

/// Errors from mesh input, validation, the GPU layer and the solvers.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An I/O failure on a named file.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A malformed input file; `line` is 1-based when known (0 = unknown / binary offset given in msg).
    #[error("{}", fmt_parse(path, *line, msg))]
    Parse {
        path: PathBuf,
        line: usize,
        msg: String,
    },
    /// A mesh that parsed but is not valid (names the element or vertex).
    #[error("invalid mesh{}: {msg}", fmt_origin(origin))]
    InvalidMesh {
        origin: Option<PathBuf>,
        msg: String,
    },
    /// Anything the GPU layer refuses (no adapter, limits exceeded, shader errors).
    #[error("GPU: {0}")]
    Gpu(String),
    /// Invalid user input that is not a file (CLI values, case parameters).
    #[error("{0}")]
    Invalid(String),
    /// A run that had to stop (blew up, stalled); says where. Its outputs so far are kept.
    #[error("{0}")]
    Run(String),
    /// A run stopped by SIGINT/SIGTERM at a step boundary; says where and what it wrote.
    #[error("{0}")]
    Interrupted(String),
}

fn fmt_parse(path: &std::path::Path, line: usize, msg: &str) -> String {
    if line > 0 {
        format!("{}:{}: {}", path.display(), line, msg)
    } else {
        format!("{}: {}", path.display(), msg)
    }
}

fn fmt_origin(origin: &Option<PathBuf>) -> String {
    origin
        .as_ref()
        .map(|p| format!(" {}", p.display()))
        .unwrap_or_default()
}

impl Error {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
    pub fn parse(path: impl Into<PathBuf>, line: usize, msg: impl Into<String>) -> Self {
        Error::Parse {
            path: path.into(),
            line,
            msg: msg.into(),
        }
    }
    pub fn invalid_mesh(msg: impl Into<String>) -> Self {
        Error::InvalidMesh {
            origin: None,
            msg: msg.into(),
        }
    }
    /// Attach the originating file to a mesh validation error.
    pub fn with_origin(self, path: &std::path::Path) -> Self {
        match self {
            Error::InvalidMesh { origin: None, msg } => Error::InvalidMesh {
                origin: Some(path.to_path_buf()),
                msg,
            },
            other => other,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
