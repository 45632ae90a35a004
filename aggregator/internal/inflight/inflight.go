// Package inflight keeps what the aggregator knows of the requests it has
// in flight: a Table of ids (what an answer, a cancel and a peer's end race
// for, taken once), and a Request's place at the peer it was relayed to
// (what a cancel racing its sending needs). Neither knows the session: they
// are the mechanisms its state is made of.
package inflight
