// Package share runs one server process for many sessions of one user
// (--share): a holder process keeps the shared servers, and each session
// reaches them over a Unix socket in a directory only the user can enter.
//
// The files, by job:
//   - dir.go: the socket directory, checked before every use;
//   - header.go: the one line a session writes first on a connection, and
//     the key under which the holder pools servers;
//   - holder.go: the holder process: it listens, keeps one pool per
//     config entry, and exits when it holds nothing;
//   - peer.go, roots.go: a session's connection at the holder, until it is
//     given a process of its pool (by its probe, its initialize, its roots);
//   - mux.go: one server process shared by sessions (the protocol rules),
//     mux_session.go what a session sends it, mux_server.go what the
//     server sends;
//   - dial.go: the session side: connect, starting the holder if needed;
//     dial_replay.go its way back after the holder ended;
//     client_started.go how it looks like a started process to the
//     aggregator.
//
// # The wire
//
// One Unix-socket connection per (session, server). The session writes
// one header line (JSON, see [Header]); the holder answers one line (see
// [Ack]); after that the connection carries exactly what the server's
// stdio would: newline-delimited JSON-RPC. The holder ends a connection
// with one notification of its own, [ClosingMethod], which the session
// side takes in and never passes on.
//
// Nothing in this package writes to os.Stdout or exits the program; the
// holder logs through the logger it is given.
package share
