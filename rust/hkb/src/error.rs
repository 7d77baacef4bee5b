use std::ffi::CStr;
use std::fmt;

use hkb_sys as sys;

/// A failed libhkb call: the `hkb_status` it returned and the message `hkb_last_error()` gave on
/// the failing thread right after it. Errors this crate detects before calling the library (a
/// length mismatch, a stream of another device) use the closest status and a message of their own.
#[derive(Clone, PartialEq, Eq)]
pub struct Error {
    status: sys::hkb_status,
    message: String,
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error with `status` and `message`.
    pub fn new(status: sys::hkb_status, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }

    /// The C status, one of `hkb_sys::HKB_ERROR_*` (or a value newer than these bindings).
    pub fn status(&self) -> sys::hkb_status {
        self.status
    }

    /// The C name of the status, e.g. `"HKB_ERROR_UNKNOWN_KERNEL"`.
    pub fn status_name(&self) -> &'static str {
        usize::try_from(self.status)
            .ok()
            .and_then(|i| sys::HKB_STATUS_NAMES.get(i).copied())
            .unwrap_or("HKB_ERROR_UNRECOGNISED")
    }

    /// The library's description of the status (`hkb_status_string`).
    pub fn status_string(&self) -> String {
        // SAFETY: hkb_status_string accepts any value and returns a static string or null.
        unsafe { string_from(sys::hkb_status_string(self.status)) }
    }

    /// What the library said went wrong: names what was asked for and what was found.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}): {}",
            self.status_name(),
            self.status,
            self.message
        )
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Error {}

/// Copies a library-owned C string; null reads as empty.
///
/// # Safety
/// `p` is null or points to a NUL-terminated string valid for the duration of the call.
pub(crate) unsafe fn string_from(p: *const std::ffi::c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

/// Turns a status into a `Result`, taking the thread's last-error message at once: it is only
/// valid until this thread's next library call.
pub(crate) fn check(status: sys::hkb_status) -> Result<()> {
    if status == sys::HKB_SUCCESS {
        return Ok(());
    }
    // SAFETY: hkb_last_error returns a thread-local string valid until this thread's next call.
    let message = unsafe { string_from(sys::hkb_last_error()) };
    Err(Error::new(status, message))
}
