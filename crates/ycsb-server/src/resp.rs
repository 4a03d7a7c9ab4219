//! RESP (Redis protocol) serving (work in progress).
